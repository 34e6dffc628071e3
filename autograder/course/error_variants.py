"""The reference with one mistake that raises: what a named exception is reproduced with.

A mistake is named from an exception only when its variant, run by the check's own probe on the same case, raises
the same error (autograder.checking.reproduction). Each variant is the reference written as the notebooks have the
learner write it (the book's forward pass, 3-D scores for CausalAttention, 4-D for MultiHeadAttention), with one
knob turned; a mistake that learners spell in two ways that fail differently (masked_fill and masked_fill_) has a
variant per spelling. Value mistakes that never raise are autograder.course.variants's.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import torch
from torch import Tensor, nn

from attnkit import solutions
from autograder.checking.case_memo import remembered
from autograder.checking.reproduction import RaisedError, VariantError
from autograder.checking.tensor_trace import probe_with_raised_operands
from autograder.course.shared.inputs import notes_batch

__all__ = ["Knobs", "causal_attention_with", "exercise_errors", "variant_errors"]

# `module` below is the reference's module (attnkit.solutions, untyped), with its layers and buffer.
Namespace = Mapping[str, Any]  # what a probe receives: the notebook's names, here the variant's
Probe = Callable[[Namespace, Any], Any]


@dataclass(frozen=True)
class Knobs:
    """One way of getting the forward pass wrong (the defaults are the reference).

    keys_transposed: "last_two" (right), or "T" (`keys.T`, which reverses every axis of a batched tensor).
    mask_truncated: False uses the whole (context_length, context_length) buffer on shorter inputs.
    mask_in_place: masked_fill_ instead of masked_fill (the two fail with different messages).
    projection: "layer" (right), "matrix" (`x @ layer.weight`) or "module" (`x @ layer`, the notes' v1 line kept
        for a v2 whose weights are layers).
    head_dim: "floor" (right: d_out // num_heads), or "true_division" (d_out / num_heads, a float).
    merge: "contiguous" (right), or "view" (a view straight after the transpose).
    split: "transpose" (right), or "view_only" (a view straight to (b, num_heads, num_tokens, head_dim), no
        transpose: the split_without_transpose mistake, which raises on an input whose memory is not in its order).
    padding_batch: None (right: the input's own batch size in the padding mask's view), or a batch size read from
        the notebook (its example batch's).
    first_projection: the layer applied first ("W_key" in the book's v2 and CausalAttention, "W_query" in its
        MultiHeadAttention; None keeps that order). Any order is right, and a projection that raises raises on the
        first layer applied: its operands' values tell which one.
    """

    keys_transposed: str = "last_two"
    mask_truncated: bool = True
    mask_in_place: bool = False
    projection: str = "layer"
    head_dim: str = "floor"
    merge: str = "contiguous"
    split: str = "transpose"
    padding_batch: int | None = None
    first_projection: str | None = None


def projected(layer: nn.Linear, x: Tensor, knobs: Knobs) -> Tensor:
    if knobs.projection == "matrix":
        return x @ layer.weight
    if knobs.projection == "module":
        return x @ layer  # type: ignore[operator]  # the mistake: raises TypeError
    return layer(x)  # type: ignore[no-any-return]


def projections(module: Any, x: Tensor, knobs: Knobs, book_order: tuple[str, ...]) -> dict[str, Tensor]:
    """Each projection layer's output by the layer's name, applied in the book's order or with
    knobs.first_projection first."""
    first = knobs.first_projection
    order = book_order if first is None else (first, *(name for name in book_order if name != first))
    return {name: projected(getattr(module, name), x, knobs) for name in order}


def masked(scores: Tensor, mask: Tensor, num_tokens: int, knobs: Knobs) -> Tensor:
    """The scores with the future filled with -inf; `mask` is the module's (context_length, context_length) buffer."""
    future = mask.bool()[:num_tokens, :num_tokens] if knobs.mask_truncated else mask.bool()
    if knobs.mask_in_place:
        return scores.masked_fill_(future, -torch.inf)
    return scores.masked_fill(future, -torch.inf)


def self_attention_v2_forward(module: Any, x: Tensor, knobs: Knobs) -> Tensor:
    """SelfAttention_v2.forward as notebook 02 has it written (one sequence, no mask), with `knobs`."""
    projected_by = projections(module, x, knobs, KEYS_FIRST)
    queries, keys, values = (projected_by[name] for name in QUERY_KEY_VALUE)  # each (num_tokens, d_out)
    attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ values


def causal_forward(module: Any, x: Tensor, knobs: Knobs) -> Tensor:
    """CausalAttention.forward as notebook 03 has it written, with `knobs`."""
    b, num_tokens, d_in = x.shape
    projected_by = projections(module, x, knobs, KEYS_FIRST)
    queries, keys, values = (projected_by[name] for name in QUERY_KEY_VALUE)  # each (b, num_tokens, d_out)
    transposed = keys.T if knobs.keys_transposed == "T" else keys.transpose(1, 2)
    attn_scores = masked(queries @ transposed, module.mask, num_tokens, knobs)  # (b, num_tokens, num_tokens)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    attn_weights = module.dropout(attn_weights)
    return attn_weights @ values  # type: ignore[no-any-return]


def split(x: Tensor, num_heads: int, knobs: Knobs) -> Tensor:
    """split_heads as notebook 04 has it written: (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim)."""
    b, num_tokens, d_out = x.shape
    head_dim: Any = d_out / num_heads if knobs.head_dim == "true_division" else d_out // num_heads
    if knobs.split == "view_only":
        return x.view(b, num_heads, num_tokens, head_dim)
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


def merge(x: Tensor, knobs: Knobs) -> Tensor:
    """merge_heads as notebook 04 has it written: (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, d_out)."""
    b, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)
    if knobs.merge != "view":
        x = x.contiguous()
    return x.view(b, num_tokens, num_heads * head_dim)


def multi_head_forward(module: Any, x: Tensor, attention_mask: Tensor | None, knobs: Knobs) -> Tensor:
    """MultiHeadAttention.forward as notebook 04 has it written (heads split in the forward pass), with `knobs`."""
    b, num_tokens, d_in = x.shape
    num_heads = module.num_heads
    projected_by = projections(module, x, knobs, QUERY_KEY_VALUE)
    # each (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim)
    queries, keys, values = (split(projected_by[name], num_heads, knobs) for name in QUERY_KEY_VALUE)
    attn_scores = queries @ keys.transpose(2, 3)
    if attention_mask is not None:
        padded_keys = (attention_mask == 0).view(knobs.padding_batch or b, 1, 1, num_tokens)
        attn_scores = attn_scores.masked_fill(padded_keys, torch.finfo(attn_scores.dtype).min)
    attn_scores = masked(attn_scores, module.mask, num_tokens, knobs)
    attn_weights = module.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
    return module.out_proj(merge(attn_weights @ values, knobs))  # type: ignore[no-any-return]


def self_attention_v2_with(knobs: Knobs) -> type[nn.Module]:
    """The reference SelfAttention_v2 with `knobs` in forward."""
    class SelfAttention_v2(solutions.SelfAttention_v2):  # type: ignore[misc]  # noqa: N801 - the notebook's name
        def forward(self, x: Tensor) -> Tensor:
            return self_attention_v2_forward(self, x, knobs)

    return SelfAttention_v2


def causal_attention_with(knobs: Knobs) -> type[nn.Module]:
    """The reference CausalAttention (its constructor, so its weights and buffer) with `knobs` in forward."""
    class CausalAttention(solutions.CausalAttention):  # type: ignore[misc]
        def forward(self, x: Tensor) -> Tensor:
            return causal_forward(self, x, knobs)

    return CausalAttention


def multi_head_attention_with(knobs: Knobs) -> type[nn.Module]:
    """The reference MultiHeadAttention with `knobs` in forward."""
    class MultiHeadAttention(solutions.MultiHeadAttention):  # type: ignore[misc]
        def forward(self, x: Tensor, attention_mask: Tensor | None = None) -> Tensor:
            return multi_head_forward(self, x, attention_mask, knobs)

    return MultiHeadAttention


def split_heads_with(knobs: Knobs) -> Callable[[Tensor, int], Tensor]:
    def split_heads(x: Tensor, num_heads: int) -> Tensor:
        return split(x, num_heads, knobs)
    return split_heads


def merge_heads_with(knobs: Knobs) -> Callable[[Tensor], Tensor]:
    def merge_heads(x: Tensor) -> Tensor:
        return merge(x, knobs)
    return merge_heads


QUERY_KEY_VALUE = ("W_query", "W_key", "W_value")  # the book's MultiHeadAttention applies its layers in this order
KEYS_FIRST = ("W_key", "W_query", "W_value")  # its SelfAttention_v2 and CausalAttention in this one
# x @ layer.weight raises on the first layer a forward applies: a variant per layer the learner may apply first.
AS_MATRIX = tuple(Knobs(projection="matrix", first_projection=name) for name in QUERY_KEY_VALUE)

Variant = tuple[str, Namespace]  # (the mistake's id, the namespace its probe runs on)

NOTEBOOK_BATCH = len(notes_batch())  # the notebooks' example batch: the size a learner may read instead of the input's
NOT_TRUNCATED = (Knobs(mask_truncated=False), Knobs(mask_truncated=False, mask_in_place=True))


def _causal(mistake: str, knobs: Knobs) -> Variant:
    return mistake, MappingProxyType({"CausalAttention": causal_attention_with(knobs)})


def _multi_head(mistake: str, knobs: Knobs) -> Variant:
    return mistake, MappingProxyType({"MultiHeadAttention": multi_head_attention_with(knobs)})


def softmax_stable_without_keepdim(keep_max: bool, keep_sum: bool) -> Callable[..., Tensor]:
    """The notes' stable softmax with the maximum or the sum reduced without keepdim (each spelling fails on its own
    sizes: the reduced tensor broadcasts along the wrong axis, or not at all)."""
    def softmax_stable(x: Tensor, dim: int = -1) -> Tensor:
        shifted = torch.exp(x - x.max(dim=dim, keepdim=keep_max).values)
        return shifted / shifted.sum(dim=dim, keepdim=keep_sum)
    return softmax_stable


# Each exercise's raising variants, by exercise id; the namespace holds the exercise's names (Exercise.names).
ERROR_VARIANTS: Mapping[str, tuple[Variant, ...]] = MappingProxyType({
    "self_attention_v2": tuple(("linear_as_matrix", MappingProxyType({"SelfAttention_v2": self_attention_v2_with(
        knobs)})) for knobs in (*AS_MATRIX, Knobs(projection="module"))),
    "causal_attention": (
        _causal("transpose_batched", Knobs(keys_transposed="T")),
        *(_causal("mask_not_truncated", knobs) for knobs in NOT_TRUNCATED),
        *(_causal("linear_as_matrix", knobs) for knobs in AS_MATRIX),
    ),
    # One class, two exercises: the forward pass and its padding mask.
    **dict.fromkeys(("multi_head_attention", "padding_mask"), (
        _multi_head("head_dim_float", Knobs(head_dim="true_division")),
        _multi_head("view_after_transpose", Knobs(merge="view")),
        *(_multi_head("mask_not_truncated", knobs) for knobs in NOT_TRUNCATED),
        *(_multi_head("linear_as_matrix", knobs) for knobs in AS_MATRIX),
        _multi_head("size_from_notebook", Knobs(padding_batch=NOTEBOOK_BATCH)),
    )),
    "softmax_stable": tuple(("missing_keepdim", MappingProxyType({"softmax_stable": softmax_stable_without_keepdim(
        keep_max, keep_sum)})) for keep_max, keep_sum in ((False, False), (True, False), (False, True))),
    "split_heads": (("head_dim_float", MappingProxyType({"split_heads": split_heads_with(Knobs(
        head_dim="true_division"))})),
                    # The notes' view kept and the transpose left out: refused on an input whose memory is not in
                    # the (b, num_tokens, d_out) order (12w's wz-sh-01), as the learner's is.
                    ("split_without_transpose", MappingProxyType({"split_heads": split_heads_with(Knobs(
                        split="view_only"))}))),
    "merge_heads": (("view_after_transpose", MappingProxyType({"merge_heads": merge_heads_with(Knobs(
        merge="view"))})),),
})


def variant_errors(probe: Probe, case: Any, variants: Sequence[Variant]) -> tuple[VariantError, ...]:
    """The error each variant raises when `probe` runs it on `case` (a variant that raises nothing gives none)."""
    raised = []
    for mistake, namespace in variants:
        data = probe_with_raised_operands(probe, namespace, case)  # the shapes its error's op read, as the learner's
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            raised.append(VariantError(mistake, RaisedError.of(data["error"])))
    return tuple(raised)


def exercise_errors(exercise: str, probe: Probe, case: Any) -> Callable[[], list[list[str]]]:
    """For Expectations.computed: the errors of the exercise's raising variants on `case` in their plain form (the
    student kit stores them), computed when asked."""
    return lambda: remembered("errors", exercise, (probe,), case, lambda: [
        raised.plain() for raised in variant_errors(probe, case, ERROR_VARIANTS.get(exercise, ()))])
