"""Decisions judges take without the reference: used by the exercise folders' judges, which both kits run.

Each takes the student's data and the expected values (computed live from the reference, or read from the kit's
stored vectors) and returns a message key or a Verdict, so both kinds of check say the same thing.
"""

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import largest_difference, same, same_gradient
from autograder.checking.probing import EDITS, PROJECTIONS, InputChange

__all__ = [
    "PADDING_MISCONCEPTIONS", "argument_changed", "causal_mask_verdict",
    "causal_weights_problem", "copied_weights_problem", "first_wrong_head", "fit_divisor", "fitted_fill",
    "gradient_problem", "hidden_keys", "located_fault", "mask_family", "module_gradient_problem", "no_gradient",
    "returned_weights", "wrapper_structure_problem",
]

PADDING_MISCONCEPTIONS = {"padding_mask.ignored": "padding_ignored", "padding_mask.inverted": "padding_inverted",
                          "padding_mask.query_axis": "padding_query_axis"}


def no_gradient(how: str, error: Mapping[str, Any] | None = None) -> Verdict:
    """The verdict for gradients that do not flow back to a function's input (`how`: probing.gradient_of's status,
    `error`: the exception backward raised, as probing.describe_exception gives it). Named gradient_cut only where
    the probe found the output cut from the input's graph (no gradient at all); a backward that raised or gave
    non-finite numbers proves no cut."""
    if how == "no_gradient":
        return Verdict(False, "function.no_gradient", misconception="gradient_cut", evidence=Evidence.FACT)
    if how in ("raised", "call_raised"):
        error = error or {}
        # The phase is where it raised: the call itself, given an input of a graph, or backward() after it.
        return Verdict(False, "function.backward_raised" if how == "raised" else "function.call_raised_in_graph",
                       {"type": str(error.get("type") or "an exception"),
                        "detail": " ".join(str(error.get("message", "")).split())[:160]})
    return Verdict(False, "function.gradient_not_finite")


# What a call changed of a tensor it was handed (probing.InputChange's kind) -> the end of the message that says so:
# argument.<end>, or argument.part_<end> for a tensor the argument holds ("mha.out_proj.weight": a module's weight).
_ARGUMENT_CHANGE_ENDS = {"values": "values_changed", "layout": "layout_changed", "metadata": "metadata_changed",
                         "written": "written"}


def argument_changed(changes: Sequence[InputChange] | None, caller: str, handed: Collection[str],
                     mistake: str | None = "input_edited_in_place") -> Verdict | None:
    """The verdict for the first tensor argument a call changed (probing.arguments_changes: every tensor the probe
    handed it, `handed` their names; "mha.out_proj.weight" a tensor the argument mha holds), None when it left them
    all alone. `caller` is how the message names the code ("forward", a function's name). Other values or another
    layout are read from the caller's tensor after the call, a fact: named `mistake` (where the exercise lists it;
    None names nothing); a tensor written with the same values, or whose class, dtype, device or requires_grad changed,
    names nothing."""
    for change in changes or ():
        kind, argument = change.get("change"), change.get("argument")
        if argument not in handed or kind not in _ARGUMENT_CHANGE_ENDS:
            continue  # not a name or kind the probe writes: nothing read from it
        owner, _, part = str(argument).partition(".")
        differ, size = _count(change.get("differ")), _count(change.get("size"))
        if kind == "values" and not 0 < differ <= size:
            continue  # no count the probe writes: no sentence made of it
        before, after = _shape(change.get("shape_before")), _shape(change.get("shape_after"))
        fields = {"caller": caller, "argument": owner, "part": part, "differ": differ, "size": size,
                  "shape_before": before, "shape_after": after}
        end = _ARGUMENT_CHANGE_ENDS[str(kind)]
        if kind == "layout" and before != after:
            end = "reshaped"
        edited = kind in EDITS and mistake is not None
        return Verdict(False, f"argument.{'part_' if part else ''}{end}", fields,
                       misconception=mistake if edited else None, evidence=Evidence.FACT if edited else None)
    return None


def _count(value: object) -> int:
    """A count of the record as the int it is; anything else (the record is the child's, read as data) is 0."""
    return value if type(value) is int else 0


def _shape(value: object) -> tuple[int, ...]:
    """A shape of the record as a tuple of ints; anything else is ()."""
    if not isinstance(value, list | tuple) or not all(type(size) is int for size in value):
        return ()
    return tuple(value)


def gradient_problem(got: torch.Tensor | None, expected: torch.Tensor, message_key: str = "function.gradient_wrong",
                     misconception: str = "gradient_cut", own_slope: bool | None = None) -> Verdict | None:
    """None when the gradient that reached a function's input (`got`, probing.gradient_of's, for the upstream mix of
    probing.gradient_weights) is the reference's (`expected`, computed by the judge's side from the case, never read
    from the child); else the verdict. Only for a function whose values are right. A gradient of its own proves a
    step computed where autograd does not record (detached, .data, gradients off, NumPy) only where it is not the
    slope of the function's own values (`own_slope` False: probing.gradient_is_own_slope); where it is, or that could
    not be read, autograd may have followed every step of a function flat where the notes' is not (a clamp past its
    bound): that is said, and no mistake named."""
    if same_gradient(got, expected):
        return None
    if own_slope is not False:
        return Verdict(False, "function.gradient_own_slope_other")
    return Verdict(False, message_key, misconception=misconception, evidence=Evidence.FACT)


def module_gradient_problem(backward: Mapping[str, Any], reference: Mapping[str, Any]) -> Verdict | None:
    """None when one backward pass through a module (probing.module_gradients) gave its input and every parameter the
    reference's gradients (`reference`: variants.reference_gradients with the same weights and mix); else the verdict.
    A gradient that reached nothing counts as zeros (a bias the softmax cancels gets about 0 either way); a parameter
    the module lacks is the structure check's to count. Only for a module whose output is right. A wrong gradient
    proves a step of forward computed where autograd does not record only where it is not the slope of the module's
    own outputs (probing.module_own_slopes wrote False): the first such one, the input before the parameters by name,
    is named. Where none is proven (each is the module's own slope, or could not be read), autograd may have
    followed a forward flat where the notes' is not (a clamp the inputs reach): that is said of the first wrong one,
    and no mistake named."""
    wrong: list[tuple[str, dict[str, Any], object]] = []
    expected = reference["input"]
    if expected is not None and not same_gradient(_or_zeros(backward.get("input"), expected), expected):
        wrong.append(("module.input_gradient", {}, backward.get("input_own_slope")))
    got, slopes = backward["parameters"], backward.get("own_slopes")
    slopes = slopes if isinstance(slopes, Mapping) else {}
    for name, expected in sorted(reference["parameters"].items()):
        if name in backward["state"] and not same_gradient(_or_zeros(got.get(name), expected), expected):
            key = "module.gradient" if name in got else "module.no_gradient"
            wrong.append((key, {"name": name}, slopes.get(name)))
    for key, fields, own_slope in wrong:
        if own_slope is False:
            return Verdict(False, key if key == "module.no_gradient" else f"{key}_wrong", fields,
                           misconception="forward_step_detached", evidence=Evidence.FACT)
    if not wrong:
        return None
    key, fields, _ = wrong[0]
    return Verdict(False, "module.input_gradient_own_slope" if key == "module.input_gradient"
                   else "module.gradient_own_slope", fields)


def _or_zeros(gradient: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like) if gradient is None else gradient


def _first_index(flags: torch.Tensor) -> tuple[int, ...]:
    """The index (tuple) of the first True in a bool tensor."""
    return tuple(int(i) for i in flags.nonzero()[0])


def _first_mask_error(got: torch.Tensor, expected: torch.Tensor) -> tuple[str, dict[str, int]]:
    """(message key, fields) naming the first query/key pair the mask gets wrong, 1-based like the notes' x^(i)."""
    query, key = (int(i) for i in (got != expected).nonzero()[0])
    if expected[query, key]:
        return "mask.lets_see", {"query": query, "key": key}
    return "mask.hides", {"query": query, "key": key}


def causal_weights_problem(got: torch.Tensor, expected: torch.Tensor,
                           future: torch.Tensor) -> tuple[str, dict[str, int]] | None:
    """(message key, 1-based fields) of the first property causal weights break, or None when they are right.

    `future` is True where a query must not see a key (the causal mask of expected's last two axes).
    """
    nan_rows = torch.isnan(got).any(dim=-1)
    if nan_rows.any():
        return "causal_weights.nan", {"query": _first_index(nan_rows)[-1]}
    infinite = torch.isinf(got)
    if infinite.any():
        # Masked scores returned as they are (-inf above the diagonal): not weights at all, whatever the positions.
        first = _first_index(infinite.any(dim=-1))[-1]
        return "causal_weights.infinite", {"count": int(infinite.sum()), "query": first}
    leaks = (got != 0) & future
    if leaks.any():
        *_, query, key = _first_index(leaks)
        return "causal_weights.future", {"query": query, "key": key}
    off_rows = (got.to(torch.float64).sum(dim=-1) - 1).abs() > 1e-4
    if off_rows.any():
        return "causal_weights.row_sum", {"query": _first_index(off_rows)[-1]}
    if not same(got, expected):
        *_, query, key = cast(tuple[int, ...], largest_difference(got, expected)[1])  # None only for another shape
        return "causal_weights.values", {"query": query, "key": key}
    return None


def wrapper_structure_problem(data: Mapping[str, Any], case: Mapping[str, Any],
                              names: Collection[str]) -> Verdict | None:
    """A Verdict when the heads are not num_heads separate, registered CausalAttention modules; else None.

    `names` holds the wrapper's parameter and buffer names (heads.0.W_query.weight, ...).
    """
    kind = data.get("heads_type")
    if kind in ("list", "tuple"):
        return Verdict(False, "mha_wrapper.heads_not_registered", misconception="heads_plain_list",
                       evidence=Evidence.FACT)  # the probe read the type of `heads`
    if kind != "ModuleList":
        return Verdict(False, "mha_wrapper.no_heads")
    if data["distinct_heads"] < data["head_count"]:
        return Verdict(False, "mha_wrapper.heads_shared", misconception="heads_shared",
                       evidence=Evidence.FACT)  # the probe counted the distinct head objects
    if data["head_count"] != case["num_heads"]:
        return Verdict(False, "mha_wrapper.head_count", {"got": data["head_count"], "expected": case["num_heads"]})
    for i in range(case["num_heads"]):
        missing = [layer for layer in PROJECTIONS if f"heads.{i}.{layer}.weight" not in names]
        if missing:
            return Verdict(False, "mha_wrapper.head_layers", {"head": i, "names": ", ".join(missing)})
    if ("heads.0.W_query.bias" in names) != case["qkv_bias"]:
        # The heads' layers were read: a bias where none was asked or none where one was, the very fact the
        # module contract names (qkv_bias not followed), so one cause across the two checks (issue 58).
        return Verdict(False, "mha_wrapper.qkv_bias", misconception="qkv_bias_ignored", evidence=Evidence.FACT)
    return None


def first_wrong_head(got_heads: Sequence[torch.Tensor] | None, expected_heads: Sequence[torch.Tensor]) -> int | None:
    """The index of the first head whose own output is wrong; None when all are right or they cannot be told."""
    if got_heads is None or len(got_heads) != len(expected_heads):
        return None
    for index, (got, expected) in enumerate(zip(got_heads, expected_heads, strict=True)):
        if not same(got, expected):
            return index
    return None


def copied_weights_problem(state: Mapping[str, torch.Tensor], weights: Mapping[str, torch.Tensor]) -> Verdict | None:
    """A Verdict naming the first tensor of nn.MultiheadAttention that does not hold our weights; else None."""
    stacked = state.get("in_proj_weight")
    if stacked is None:
        return Verdict(False, "torch_equivalence.no_in_proj")
    blocks = [weights[f"{layer}.weight"] for layer in PROJECTIONS]
    expected = torch.cat(blocks)
    if not same(stacked, expected):
        if any(same(stacked, torch.cat(order)) for order in itertools.permutations(blocks)):
            # Another order of the three blocks reproduces the stacked weights.
            return Verdict(False, "torch_equivalence.in_proj_order", misconception="in_proj_order",
                           evidence=Evidence.VARIANT)
        if same(stacked, torch.cat([block.T for block in blocks])):
            return Verdict(False, "torch_equivalence.in_proj_transposed")
        if stacked.shape == expected.shape:
            # Read block by block from their tensor: which projections' rows differ, not all three where one does.
            rows = stacked.split([block.shape[0] for block in blocks])
            differ = [layer for layer, got, block in zip(PROJECTIONS, rows, blocks, strict=True)
                      if not same(got, block)]
            if len(differ) < len(blocks):
                key = "torch_equivalence.in_proj_block" if len(differ) == 1 else "torch_equivalence.in_proj_blocks"
                return Verdict(False, key, {"layers": " and ".join(differ)})
        return Verdict(False, "torch_equivalence.in_proj_weight")
    biases = [weights.get(f"{layer}.bias", torch.zeros_like(weights[f"{layer}.weight"][:, 0])) for layer in PROJECTIONS]
    stacked_bias = state.get("in_proj_bias")
    if stacked_bias is None or state.get("out_proj.bias") is None:
        return Verdict(False, "torch_equivalence.no_bias")
    if not same(stacked_bias, torch.cat(biases)):
        if any(same(stacked_bias, torch.cat(order)) for order in itertools.permutations(biases)):
            return Verdict(False, "torch_equivalence.in_proj_order", misconception="in_proj_order",
                           evidence=Evidence.VARIANT)
        return Verdict(False, "torch_equivalence.in_proj_bias")
    out_weight = state.get("out_proj.weight")
    if not same(out_weight, weights["out_proj.weight"]):
        if same(out_weight, weights["out_proj.weight"].T):
            # Read from their object: the source's values are there, in the other layout (issue 58).
            return Verdict(False, "torch_equivalence.out_proj_transposed")
        return Verdict(False, "torch_equivalence.out_proj", {"part": "weight"})
    if not same(state["out_proj.bias"], weights["out_proj.bias"]):
        return Verdict(False, "torch_equivalence.out_proj", {"part": "bias"})
    return None


def mask_family(hidden: torch.Tensor) -> str | None:
    """The misconception a wrong causal mask shows by its own entries, or None when no family fits.

    `hidden` is (..., num_tokens, num_tokens) bool, True where a query cannot see a key (a leading axis counts a key
    hidden only where it is hidden in every matrix). The family is read from which entries are wrong, not from
    equality to one way of writing it: the diagonal hidden as well and nothing else wrong is "also hides the
    diagonal"; the future shown and the whole past hidden (a transposed mask: tril where triu was meant, with or
    without the diagonal) is "hides the past instead of the future".
    """
    if hidden.dim() < 2 or hidden.shape[-1] != hidden.shape[-2] or hidden.shape[-1] < 2:
        return None
    hidden = hidden.reshape(-1, *hidden.shape[-2:]).all(dim=0)
    ones = torch.ones_like(hidden)
    future, past, diagonal = torch.triu(ones, diagonal=1), torch.tril(ones, diagonal=-1), torch.eye(
        hidden.shape[-1], dtype=torch.bool)
    wrongly_hidden, wrongly_shown = hidden & ~future, future & ~hidden
    if not wrongly_shown.any() and wrongly_hidden.any() and not (wrongly_hidden & ~diagonal).any():
        return "mask_includes_diagonal"
    if torch.equal(wrongly_shown, future) and torch.equal(hidden & ~diagonal, past):
        return "mask_inverted"
    return None


def hidden_keys(weights: torch.Tensor) -> torch.Tensor:
    """True where attention weights show a key was hidden: an exact zero, or a row the mask emptied (NaN)."""
    return (weights == 0) | torch.isnan(weights).any(dim=-1, keepdim=True)


def causal_mask_verdict(got: torch.Tensor, expected: torch.Tensor, num_tokens: int) -> Verdict:
    """The causal_mask judge's decision: shape, then bool dtype, then values; a wrong mask is named by the family
    its own entries show (mask_family)."""
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       expected=expected, got=got, input_sizes={"num_tokens": num_tokens})
    if got.dtype != torch.bool:
        return Verdict(False, "mask.dtype", {"dtype": str(got.dtype)}, expected=expected, got=got,
                       input_sizes={"num_tokens": num_tokens}, heatmap=True)
    if torch.equal(got, expected):
        return Verdict(True)
    family = mask_family(got)  # read from the student's own mask: which entries it hides
    return Verdict(False, *_first_mask_error(got, expected), misconception=family,
                   evidence=Evidence.FACT if family else None, expected=expected, got=got,
                   input_sizes={"num_tokens": num_tokens}, heatmap=True)


# ---------------------------------------------------------------------------------------------
# Localising a wrong attention output: which stage first differs, and the scale a student used


FIT_TOLERANCE = 1e-3  # relative residual under which the student's weights are a softmax of the scores at one scale


def fit_divisor(weights: torch.Tensor, raw_scores: torch.Tensor) -> float | None:
    """The number the student divided the scores by, fitted from their attention weights, or None.

    `weights` (what their dropout layer received) and `raw_scores` (queries @ keys^T, unscaled) have the same
    shape. Within a row, log w_ij - log w_ik = (s_ij - s_ik) / divisor for every visible key: one least-squares
    fit over every row with two or more visible keys; None where the weights are no softmax of the scores at any
    single scale (a mask or a softmax axis of its own, dropout before the softmax, ...).
    """
    weights, raw_scores = weights.double(), raw_scores.double()
    if weights.shape != raw_scores.shape or not torch.isfinite(weights).all() or (weights < 0).any():
        return None
    visible = weights > 1e-12
    if ((visible.sum(dim=-1) < 2).all()):
        return None
    log_weights = torch.where(visible, weights.clamp_min(1e-300).log(), 0.0)
    counts = visible.sum(dim=-1, keepdim=True).clamp_min(1)
    y = torch.where(visible, log_weights - log_weights.sum(dim=-1, keepdim=True) / counts, 0.0)
    scores = torch.where(visible, raw_scores, 0.0)
    z = torch.where(visible, scores - scores.sum(dim=-1, keepdim=True) / counts, 0.0)
    spread = float((z * z).sum())
    if spread == 0.0:
        return None
    inverse = float((y * z).sum()) / spread
    residual = float(((y - inverse * z) ** 2).sum()) ** 0.5 / max(float((y * y).sum()) ** 0.5, 1e-12)
    if inverse <= 0 or residual > FIT_TOLERANCE:
        return None
    return 1.0 / inverse


def located_fault(seen_weights: torch.Tensor | None, expected: Mapping[str, Any], *, scaled_by: str,
                  sizes: Mapping[str, int], after_key: str, seen_merged: torch.Tensor | None = None,
                  notebook_sizes: Collection[int] = (), weights_alone: torch.Tensor | None = None) -> Verdict | None:
    """For a wrong output no catalogued mistake explains: the first stage that differs, as a Verdict, or None when
    the student's weights were not seen (no dropout layer called). `expected` gives `attention_weights` (the right
    attention weights) and `raw_scores` (unscaled, shaped like them); `scaled_by` names the size in `sizes` whose
    square root the scores must be divided by; `after_key` is the message for right weights and a wrong output,
    refined by `seen_merged` (what out_proj received) where a module has one: right merged heads put the fault at
    out_proj or after it, wrong ones between the weights and out_proj. A divisor that is the square root of one of
    `notebook_sizes` (the notebook's own example sizes) and of none of this call's was read from the notebook."""
    if seen_weights is None:
        return None
    want = expected["attention_weights"]
    if seen_weights.shape == want.shape and same(seen_weights, want):
        if seen_merged is None:
            return Verdict(False, after_key)
        merged_right = same(seen_merged, expected["merged"])
        return Verdict(False, "attention.after_out_proj" if merged_right else "attention.before_out_proj")
    mixed = weights_alone is not None and not (weights_alone.shape == seen_weights[:1].shape
                                               and same(weights_alone, seen_weights[:1]))
    divisor = None if mixed else fit_divisor(seen_weights, expected["raw_scores"])
    right = sizes[scaled_by] ** 0.5
    if divisor is not None and abs(divisor - right) > 1e-3 * right:
        fields = {"divisor": divisor, "expected": right, "size": scaled_by}
        form = _divisor_form(divisor, sizes)
        if form is None:
            # The square root of a size of the notebook's example that none of the call's sizes gives: read from a
            # notebook variable (its d_k), not from the keys. Any other value: the expression itself is wrong.
            squared = divisor * divisor
            from_notebook = any(abs(squared - size) <= 1e-3 * size for size in notebook_sizes)
            named = "size_from_notebook" if from_notebook else "scale_wrong_value"
            # The scale fitted from the student's own weights reproduces them (residual under FIT_TOLERANCE).
            return Verdict(False, "attention.scaled_by_value", fields, misconception=named, evidence=Evidence.VARIANT)
        return Verdict(False, "attention.scaled_by_form", {**fields, "form": form}, misconception="scale_wrong_value",
                       evidence=Evidence.VARIANT)
    if seen_weights.shape != want.shape:
        return None
    wrong_queries = (~torch.isclose(seen_weights, want, rtol=1e-4, atol=1e-6, equal_nan=True)).any(dim=-1)
    wrong_queries = wrong_queries.reshape(-1, wrong_queries.shape[-1]).any(dim=0)  # (num_tokens,)
    if not wrong_queries.any():
        return None
    return Verdict(False, "attention.weights_differ", {"query": _first_index(wrong_queries)[0]})


def fitted_fill(weights: torch.Tensor, raw_scores: torch.Tensor, divisor: float,
                padded: torch.Tensor) -> float | None:
    """The score the student's padded keys were given, in the units of the unscaled scores, fitted from their
    attention weights; None when it cannot be read (padding got no weight, or no single value explains it).

    Within a row, log w_j - s_j / divisor is the same for every real visible key (minus the log of the row's
    normaliser), so each padded key's weight gives the score it was filled with. `padded`: True for padded keys,
    broadcastable to the weights.
    """
    weights, scaled = weights.double(), raw_scores.double() / divisor
    if weights.shape != scaled.shape or not torch.isfinite(weights).all():
        return None
    visible = weights > 1e-12
    real, pad = visible & ~padded, visible & padded
    rows = real.any(dim=-1, keepdim=True) & pad.any(dim=-1, keepdim=True)
    if not rows.any():
        return None
    log_weights = weights.clamp_min(1e-300).log()
    offset = torch.where(real, log_weights - scaled, 0.0).sum(dim=-1, keepdim=True) / real.sum(dim=-1, keepdim=True)
    fills = ((log_weights - offset) * divisor)[pad & rows]
    spread = float(fills.std()) if fills.numel() > 1 else 0.0
    if spread > 1e-3 * max(1.0, float(fills.abs().mean())):
        return None
    return round(float(fills.mean()), 3) + 0.0  # scores are O(1): float noise below 1e-3 is a fill of 0


def returned_weights(got: object, expected: Mapping[str, Any]) -> Verdict | None:
    """A Verdict when the output is the attention weights themselves (forward stopped one step early), else None."""
    weights = expected["attention_weights"]
    if isinstance(got, torch.Tensor) and got.shape == weights.shape and same(got, weights):
        return Verdict(False, "attention.returned_weights", {"got_shape": tuple(got.shape)})
    return None


def _divisor_form(divisor: float, sizes: Mapping[str, int]) -> str | None:
    """The expression of the sizes a fitted divisor equals ("head_dim / 2"), or None. `sizes`: {name: value}."""
    forms = {"1 (no scaling)": 1.0}
    for name, size in sizes.items():
        forms.update({f"√{name}": size**0.5, name: float(size), f"{name} / 2": size / 2, f"2·{name}": 2.0 * size,
                      f"2·√{name}": 2 * size**0.5})
    for form, value in forms.items():
        if abs(divisor - value) <= 1e-3 * value:
            return form
    return None
