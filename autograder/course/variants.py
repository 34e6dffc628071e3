"""A functional form of (causal, multi-head) attention with one knob per family of mistakes.

`attention(x, weights)` with default knobs is the reference forward pass of SelfAttention_v1/v2,
CausalAttention, each head of MultiHeadAttentionWrapper and MultiHeadAttention. Each knob is one family
of mistakes, and its values cover that family completely:

    softmax_axis  the axis of the (batch, heads, queries, keys) scores the softmax runs over
    scale         what the scores are divided by: sqrt(head_dim), nothing, sqrt(d_in), sqrt(d_out), or
                  sqrt(head_dim) applied to the weights after the softmax; head_dim itself (d_k, or its root
                  twice), num_tokens or its root (SCALES)
    fill          what the hidden scores are filled with: -inf, or a finite number (0, -10, ...: fitted from the
                  student's weights by mask_fill_variants)
    mask          which entries the causal mask hides: the future, the future and the diagonal, the past, the
                  past and the diagonal, nothing (masked_fill's result thrown away)
    mask_stage    before the softmax, or zeroed after it without renormalising
    split_how     (b, T, d_out) -> heads: view + transpose, a view straight to the head shape, or features
                  grouped head_dim first
    merge_how     heads -> (b, T, d_out): transpose + reshape, a reshape without the transpose, features
                  grouped head_dim first, or heads stacked along the token axis
    swap_qk, use_out_proj, linear_untransposed: query/key swapped, no output projection, x @ W.weight
    only          the projection a split or x @ W.weight mistake touches: queries, keys or values alone (a student
                  who writes the three lines apart may get one of them wrong); None for all three
    padding_axis, padding_after_causal: the attention_mask broadcast over the keys (right) or the queries, and filled
                  before the causal mask or after it (both right for the keys)

Judges run these with the student's own weights and inputs: `attention_variants` returns the output of
every single-knob mistake, and a misconception is named only when one of them reproduces the student's.
Dropout, bias and buffer mistakes do not change an eval-mode output with the student's weights: the
module contract (autograder.course.module_contract) recognises those.
"""

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal, overload

import torch
from torch import Tensor

from autograder.checking.departure import step as declared_step

__all__ = [
    "ATTENTION_MISCONCEPTIONS", "ATTENTION_MISTAKES", "attention", "attention_steps", "attention_variants",
    "mask_fill_variants", "mask_for", "merge", "raw_scores", "reference_gradients", "split",
]

Weights = Mapping[str, Tensor]  # W_query/W_key/W_value(/out_proj).weight|bias -> tensor
PROJECTION_ROLES = {"queries": "W_query", "keys": "W_key", "values": "W_value"}  # what `only` names -> the layer

SOFTMAX_AXES = {"keys": 3, "queries": 2, "heads": 1, "batch": 0}  # axes of (batch, heads, queries, keys)
MASKS = ("future", "with_diagonal", "inverted", "inverted_with_diagonal", "none")
SCALES = ("head_dim", "d_out", "d_in", "none", "after_softmax", "d_k", "num_tokens", "num_tokens_root")
MASK_KNOBS = frozenset({"mask", "mask_stage", "fill"})  # knobs that only mean something with a causal mask


def mask_for(kind: str, num_tokens: int) -> Tensor:
    """True where attention is blocked, for each way of writing the mask."""
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    if kind == "future":
        return torch.triu(ones, diagonal=1)
    if kind == "with_diagonal":
        return torch.triu(ones, diagonal=0)
    if kind == "inverted":
        return torch.tril(ones, diagonal=-1)
    if kind == "inverted_with_diagonal":  # tril where triu was meant: the past and the token itself hidden
        return torch.tril(ones, diagonal=0)
    if kind == "none":
        return torch.zeros_like(ones)
    raise ValueError(f"unknown mask kind {kind!r}; known: {MASKS}")


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return torch.nn.functional.linear(x, weight, bias)


def split(x: Tensor, num_heads: int, how: str = "transpose") -> Tensor:
    """(b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim), or one of the split mistakes."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    if how == "view_only":  # the memory order of (b, T, H, hd) read as (b, H, T, hd)
        return x.reshape(b, num_heads, num_tokens, head_dim)
    if how == "head_dim_first":  # features grouped (head_dim, num_heads): head h takes every num_heads-th one
        return x.reshape(b, num_tokens, head_dim, num_heads).permute(0, 3, 1, 2)
    if how != "transpose":
        raise ValueError(f"unknown split {how!r}")
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


def merge(x: Tensor, how: str = "transpose") -> Tensor:
    """(b, num_heads, num_tokens, head_dim) -> (b, num_tokens, d_out), or one of the merge mistakes."""
    b, num_heads, num_tokens, head_dim = x.shape
    if how == "no_transpose":
        return x.reshape(b, num_tokens, num_heads * head_dim)
    if how == "token_axis":
        return x.reshape(b, num_heads * num_tokens, head_dim)
    if how == "head_dim_first":
        return x.permute(0, 2, 3, 1).reshape(b, num_tokens, num_heads * head_dim)
    if how != "transpose":
        raise ValueError(f"unknown merge {how!r}")
    return x.transpose(1, 2).reshape(b, num_tokens, num_heads * head_dim)


@overload
def attention(
    x: Tensor,
    weights: Weights,
    *,
    num_heads: int = 1,
    causal: bool = True,
    attention_mask: Tensor | None = None,
    padding_axis: str = "keys",
    padding_after_causal: bool = False,
    scale: str = "head_dim",
    softmax_axis: str = "keys",
    mask: str = "future",
    mask_stage: str = "before_softmax",
    fill: float = -torch.inf,
    swap_qk: bool = False,
    split_how: str = "transpose",
    merge_how: str = "transpose",
    use_out_proj: bool = True,
    linear_untransposed: bool = False,
    only: str | None = None,
    return_weights: Literal[False] = False,
) -> Tensor: ...


@overload
def attention(
    x: Tensor,
    weights: Weights,
    *,
    num_heads: int = 1,
    causal: bool = True,
    attention_mask: Tensor | None = None,
    padding_axis: str = "keys",
    padding_after_causal: bool = False,
    scale: str = "head_dim",
    softmax_axis: str = "keys",
    mask: str = "future",
    mask_stage: str = "before_softmax",
    fill: float = -torch.inf,
    swap_qk: bool = False,
    split_how: str = "transpose",
    merge_how: str = "transpose",
    use_out_proj: bool = True,
    linear_untransposed: bool = False,
    only: str | None = None,
    return_weights: Literal[True],
) -> tuple[Tensor, Tensor]: ...


def attention(
    x: Tensor,
    weights: Weights,
    *,
    num_heads: int = 1,
    causal: bool = True,
    attention_mask: Tensor | None = None,
    padding_axis: str = "keys",
    padding_after_causal: bool = False,
    scale: str = "head_dim",
    softmax_axis: str = "keys",
    mask: str = "future",
    mask_stage: str = "before_softmax",
    fill: float = -torch.inf,
    swap_qk: bool = False,
    split_how: str = "transpose",
    merge_how: str = "transpose",
    use_out_proj: bool = True,
    linear_untransposed: bool = False,
    only: str | None = None,
    return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Reference attention with knobs. `weights` maps W_query/W_key/W_value(/out_proj).weight|bias to tensors.

    x is (b, num_tokens, d_in) or (num_tokens, d_in); the output has the matching rank. With
    return_weights, also returns the (b, num_heads, num_tokens, num_tokens) attention weights.
    """
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(0)
    b, num_tokens, d_in = x.shape

    if only is not None and only not in PROJECTION_ROLES:
        raise ValueError(f"unknown projection {only!r}; known: {tuple(PROJECTION_ROLES)}")

    def touched(name: str) -> bool:
        return only is None or PROJECTION_ROLES[only] == name

    def project(name: str) -> Tensor:
        weight, bias = weights[f"{name}.weight"], weights.get(f"{name}.bias")
        if linear_untransposed and touched(name):
            # x @ W.weight: only runs when d_in == d_out, and then silently uses W instead of W.T.
            return x @ weight + (bias if bias is not None else 0)
        return linear(x, weight, bias)

    queries, keys, values = project("W_query"), project("W_key"), project("W_value")  # (b, num_tokens, d_out)
    d_out = queries.shape[-1]
    queries, keys, values = (split(t, num_heads, split_how if touched(name) else "transpose")
                             for name, t in zip(PROJECTION_ROLES.values(), (queries, keys, values), strict=True))
    if swap_qk:
        queries, keys = keys, queries
    scores = queries @ keys.transpose(-2, -1)  # (b, num_heads, num_tokens, num_tokens)

    padded = None
    if attention_mask is not None:  # hides padded keys; on the query axis (a mistake) it hides padded queries' rows
        shape = (b, 1, 1, num_tokens) if padding_axis == "keys" else (b, 1, num_tokens, 1)
        padded = (attention_mask == 0).view(*shape)
    if padded is not None and not padding_after_causal:
        scores = scores.masked_fill(padded, torch.finfo(scores.dtype).min)
    blocked = mask_for(mask, num_tokens) if causal else None
    if blocked is not None and mask_stage == "before_softmax":
        scores = scores.masked_fill(blocked, fill)
    if padded is not None and padding_after_causal:
        scores = scores.masked_fill(padded, torch.finfo(scores.dtype).min)

    head_dim = keys.shape[-1]
    divisor = scale_divisor(scale, head_dim=head_dim, d_out=d_out, d_in=d_in, num_tokens=num_tokens)
    attn_weights = torch.softmax(scores / divisor, dim=SOFTMAX_AXES[softmax_axis])
    if scale == "after_softmax":
        attn_weights = attn_weights / head_dim**0.5
    if blocked is not None and mask_stage == "after_softmax_no_renorm":
        attn_weights = attn_weights.masked_fill(blocked, 0.0)

    context = merge(attn_weights @ values, merge_how)  # (b, num_tokens, d_out)
    if use_out_proj and "out_proj.weight" in weights:
        context = linear(context, weights["out_proj.weight"], weights.get("out_proj.bias"))
    if unbatched:
        context, attn_weights = context[0], attn_weights[0]
    return (context, attn_weights) if return_weights else context


def scale_divisor(scale: str, *, head_dim: int, d_out: int, d_in: int, num_tokens: int) -> float:
    """What the scores are divided by for a value of the scale knob (1 where the scale goes elsewhere)."""
    roots = {"head_dim": head_dim, "d_out": d_out, "d_in": d_in, "num_tokens_root": num_tokens}
    if scale in roots:
        return float(roots[scale]) ** 0.5
    # d_k: the key size itself, what dividing by its root twice (queries and scores, or the scores twice) gives too.
    whole = {"d_k": head_dim, "num_tokens": num_tokens, "none": 1, "after_softmax": 1}
    if scale not in whole:
        raise ValueError(f"unknown scale {scale!r}; known: {SCALES}")
    return float(whole[scale])


def raw_scores(x: Tensor, weights: Weights, *, num_heads: int = 1) -> Tensor:
    """queries @ keys^T per head, unscaled and unmasked: (b, num_heads, num_tokens, num_tokens)."""
    x = x.unsqueeze(0) if x.dim() == 2 else x
    queries = split(linear(x, weights["W_query.weight"], weights.get("W_query.bias")), num_heads)
    keys = split(linear(x, weights["W_key.weight"], weights.get("W_key.bias")), num_heads)
    return queries @ keys.transpose(-2, -1)


# Every single-knob mistake `attention` can make, with the misconception it stands for. A family's values are
# all here: a student's softmax over any wrong axis, any wrong scale, any wrong mask is reproduced.
ATTENTION_MISTAKES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("missing_scaling", {"scale": "none"}),
    ("scale_by_d_out", {"scale": "d_out"}),
    ("scale_by_d_in", {"scale": "d_in"}),
    ("scale_after_softmax", {"scale": "after_softmax"}),
    ("scale_by_d_k", {"scale": "d_k"}),
    ("scale_by_num_tokens", {"scale": "num_tokens"}),
    ("scale_by_num_tokens", {"scale": "num_tokens_root"}),
    ("softmax_wrong_dim", {"softmax_axis": "queries"}),
    ("softmax_wrong_dim", {"softmax_axis": "heads"}),
    ("softmax_wrong_dim", {"softmax_axis": "batch"}),
    ("mask_includes_diagonal", {"mask": "with_diagonal"}),
    ("mask_inverted", {"mask": "inverted"}),
    ("mask_inverted", {"mask": "inverted_with_diagonal"}),
    ("mask_after_softmax_no_renorm", {"mask_stage": "after_softmax_no_renorm"}),
    ("masked_fill_result_dropped", {"mask": "none"}),
    ("query_key_swapped", {"swap_qk": True}),
    ("split_without_transpose", {"split_how": "view_only"}),
    ("split_wrong_axes", {"split_how": "head_dim_first"}),
    # The same mistakes on one projection alone: the three lines are written apart, and one of them may be wrong.
    *(("split_without_transpose", {"split_how": "view_only", "only": role}) for role in PROJECTION_ROLES),
    *(("split_wrong_axes", {"split_how": "head_dim_first", "only": role}) for role in PROJECTION_ROLES),
    *(("linear_as_matrix", {"linear_untransposed": True, "only": role}) for role in PROJECTION_ROLES),
    # A scale on one projection needs no variant of its own: on the queries or the keys it gives the right scores,
    # and on the values it is scale_after_softmax (weights / root @ values = weights @ (values / root)).
    # Heads interleaved: split and merged along the same wrong axis, so the merge undoes the split's order but each
    # head attended over every num_heads-th feature.
    ("split_wrong_axes", {"split_how": "head_dim_first", "merge_how": "head_dim_first"}),
    ("merge_without_transpose", {"merge_how": "no_transpose"}),
    ("merge_wrong_axes", {"merge_how": "head_dim_first"}),
    ("heads_on_token_axis", {"merge_how": "token_axis"}),
    ("missing_out_proj", {"use_out_proj": False}),
    ("linear_as_matrix", {"linear_untransposed": True}),
)
ATTENTION_MISCONCEPTIONS = tuple(dict.fromkeys(misconception for misconception, _ in ATTENTION_MISTAKES))


def attention_variants(x: Tensor, weights: Weights, mistakes: Collection[str] | None = None,
                       **base_knobs: Any) -> list[tuple[str, Tensor]]:
    """[(misconception, wrong output)] for each single-knob mistake in `mistakes` (default: all) that runs here. Two
    of them may give one output on an input (dividing by d_k and by num_tokens where they are equal): the judges
    name neither there (autograder.checking.compare.reproducing)."""
    variants: list[tuple[str, Tensor]] = []
    for misconception, knobs in ATTENTION_MISTAKES:
        if mistakes is not None and misconception not in mistakes:
            continue
        if not base_knobs.get("causal", True) and MASK_KNOBS & knobs.keys():
            continue  # a mask mistake needs a mask
        try:
            variants.append((misconception, attention(x, weights, **{**base_knobs, **knobs})))
        except (RuntimeError, ValueError, KeyError):
            continue  # this mistake cannot run on this shape (e.g. x @ W.weight with d_in != d_out)
    return variants


# Finite fills a student writes for the hidden scores: named by the value when one of them (or the value fitted from
# the student's own weights) reproduces their output and -inf does not.
COMMON_FILLS = (0.0, -1.0, -10.0, -100.0, -1000.0, -1e4)


def mask_fill_variants(x: Tensor, weights: Weights, fitted: float | None = None,
                       **base_knobs: Any) -> list[tuple[float, Tensor]]:
    """[(fill, output)] of the reference with the hidden scores filled with each common finite value and `fitted`
    (the value fitted from the student's weights, autograder.checking.judging.fitted_fill), when given."""
    fills = list(COMMON_FILLS)
    if fitted is not None and math.isfinite(fitted) and fitted not in fills:
        fills.append(fitted)
    return [(fill, attention(x, weights, **{**base_knobs, "fill": fill})) for fill in fills]


def attention_steps(x: Tensor, weights: Weights, *, num_heads: int = 1, causal: bool = True,
                    attention_mask: Tensor | None = None) -> list[list[Any]]:
    """The reference's forward pass as the notes' named steps (autograder.checking.departure.step), each with its
    value on every route the notes teach: the scores scaled before or after the mask is filled in, the mask filled
    before the softmax or (optional) the renormalised route that zeroes the weights after it. Its last step is
    `attention(x, weights, ...)` with default knobs (tests/test_departure.py). Each step is declared in the case's
    own layout, the one the learner's tensors have and rung 1 shows: without the batch axis for an unbatched input,
    without the head axis for one head (a learner reads "dimension 1" of their (6, 6) weights, never "dimension 3" of
    the reference's (1, 1, 6, 6))."""
    unbatched = x.dim() == 2
    x = x.unsqueeze(0) if unbatched else x

    def step(step_id: str, *values: Tensor, axes: Sequence[tuple[str, int]] = (), **flags: bool) -> list[Any]:
        return declared_step(step_id, *(_case_layout(value, unbatched, num_heads) for value in values), axes=axes,
                             **flags)

    b, num_tokens, _d_in = x.shape
    projected = {role: linear(x, weights[f"{name}.weight"], weights.get(f"{name}.bias"))
                 for role, name in PROJECTION_ROLES.items()}
    steps = [step(role, value) for role, value in projected.items()]
    heads = {role: split(value, num_heads) for role, value in projected.items()}
    head_axes = [("batch", b), ("heads", num_heads), ("tokens", num_tokens)]
    if num_heads > 1:  # (an unbatched case's batch of one is no axis: a size of 1 is anywhere)
        steps += [step(f"split_{role}", value, ordered=True, axes=(*head_axes, ("features", value.shape[-1])))
                  for role, value in heads.items()]
    scores = heads["queries"] @ heads["keys"].transpose(-2, -1)
    root = heads["keys"].shape[-1] ** 0.5
    masked = scores
    if attention_mask is not None:
        padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
        masked = masked.masked_fill(padded, torch.finfo(scores.dtype).min)
    if causal:
        masked = masked.masked_fill(mask_for("future", num_tokens), -torch.inf)
    steps += [step("scores", scores), step("scaled_scores", scores / root, masked / root)]
    if causal or attention_mask is not None:
        steps.append(step("masked_scores", masked, masked / root, optional=True))
    attn_weights = torch.softmax(masked / root, dim=-1)
    context = attn_weights @ heads["values"]
    steps += [step("weights", attn_weights), step("context_vectors", context)]
    context = merge(context)  # (b, num_tokens, d_out): with one head, only the head axis goes
    if num_heads > 1:
        steps.append(step("merged", context, ordered=True, axes=(
            ("batch", b), ("tokens", num_tokens), ("heads", num_heads), ("features", context.shape[-1] // num_heads))))
    if "out_proj.weight" in weights:
        context = linear(context, weights["out_proj.weight"], weights.get("out_proj.bias"))
        steps.append(step("out_proj", context))
    return steps


def _case_layout(value: Tensor, unbatched: bool, num_heads: int) -> Tensor:
    """A step's value in the case's layout: a (b, heads, tokens, ·) step loses its head axis when there is one head,
    any step its batch axis when the input had none."""
    if value.dim() == 4 and num_heads == 1:
        value = value.squeeze(1)
    return value.squeeze(0) if unbatched and value.dim() >= 3 else value


def reference_gradients(forward: Callable[[Tensor, Mapping[str, Tensor]], Tensor], state: Mapping[str, Tensor],
                        aliases: Mapping[str, str], x: Tensor,
                        mix: Callable[[Tensor], Tensor]) -> dict[str, Any]:
    """What the reference gives with a module's own parameters, read before its call (`state`, by the module's
    names; `aliases` names another's parameter object, so a module repeated under two names is one set of weights),
    on the input x: `forward(x, parameters)`'s output, and the gradients of the input and of each parameter for the
    upstream `mix(output)`, as probing.module_gradients takes them from the student's module."""
    leaves = {name: value.detach().clone().requires_grad_(True) for name, value in state.items() if name not in aliases}
    tied = {name: leaves[aliases.get(name, name)] for name in state}
    source = x.detach().clone().requires_grad_(True)
    output = forward(source, tied)
    (output * mix(output).to(output.dtype)).sum().backward()
    return {"output": output.detach(), "input": source.grad,
            "parameters": {name: leaf.grad for name, leaf in tied.items() if leaf.grad is not None}}
