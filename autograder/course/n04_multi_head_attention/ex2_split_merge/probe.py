"""Probes of split_heads and merge_heads: run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import (
    describe_exception,
    gradient_is_own_slope,
    gradient_of,
    gradient_weights,
    input_changes,
    lookup,
    plain,
    rand,
)
from autograder.course.shared.inputs import DTYPES
from autograder.course.shared.records import Namespace

__all__ = [
    "HEAD_DTYPES", "HeadsCase", "HeadsRecord", "merge_input", "probe_merge", "probe_split", "round_trip_source",
    "split_input",
]

# Splitting and merging only move numbers: every float dtype a model runs in is allowed.
HEAD_DTYPES = {**DTYPES, "float16": torch.float16, "bfloat16": torch.bfloat16}


class HeadsCase(TypedDict):
    """split_heads / merge_heads: the layout of the input in memory, its sizes and dtype, and whether it is a leaf
    that requires grad (a parameter-like tensor: nothing may be written into it, and the output stays in its graph)."""

    layout: str  # arange | random | transposed | sliced | expanded | attention | split | strided
    seed: int
    batch: int
    num_tokens: int
    num_heads: int
    head_dim: int
    dtype: str
    leaf: NotRequired[bool]


class HeadsRecord(TypedDict):
    """split_heads or merge_heads: the result, what the call changed of its input (probing.input_changes), whether
    gradients flow back to it (probing.gradient_of's status) and the gradient that reached it."""

    out: Tensor
    input_change: str
    gradient: str
    input_gradient: NotRequired[Tensor]  # when "ok": the judge compares it with the reference's
    gradient_is_own_slope: NotRequired[bool]  # probing.gradient_is_own_slope, where it could be read
    gradient_error: NotRequired[dict[str, Any]]  # what backward raised, when "raised"


def split_input(case: HeadsCase) -> torch.Tensor:
    b, num_tokens, dtype = case["batch"], case["num_tokens"], HEAD_DTYPES[case["dtype"]]
    d_out = case["num_heads"] * case["head_dim"]
    seed, layout = case["seed"], case["layout"]
    if layout == "arange":
        return torch.arange(b * num_tokens * d_out, dtype=dtype).view(b, num_tokens, d_out)
    if layout == "transposed":
        return rand(seed, b, d_out, num_tokens, dtype=dtype).transpose(1, 2)
    if layout == "sliced":
        return rand(seed, b, num_tokens, 2 * d_out, dtype=dtype)[..., ::2]
    if layout == "expanded":
        return rand(seed, 1, num_tokens, d_out, dtype=dtype).expand(b, num_tokens, d_out)
    return rand(seed, b, num_tokens, d_out, dtype=dtype)


def _probed(function: Callable[[Tensor], Any], x: Tensor, case: HeadsCase) -> HeadsRecord:
    """The call on x, as the case hands it over: a leaf that requires grad (the call itself then shows whether the
    output stays in its graph), or a tensor of no graph (gradients tried on a copy in a graph)."""
    if case.get("leaf"):
        leaf = x.detach().requires_grad_(True)  # the same memory layout, now a leaf of its own graph
        out, change = input_changes(leaf, function)
        status, error, gradient = _leaf_gradient(out, leaf)
    else:
        out, change = input_changes(x, function)
        status, error, gradient = gradient_of(function, x)
    record: HeadsRecord = {"out": plain(out), "input_change": change, "gradient": status}
    if gradient is not None:
        record["input_gradient"] = gradient
        own = gradient_is_own_slope(function, x, gradient)
        if own is not None:
            record["gradient_is_own_slope"] = own
    if error is not None:
        record["gradient_error"] = error
    return record


def _leaf_gradient(out: object, leaf: Tensor) -> tuple[str, dict[str, Any] | None, Tensor | None]:
    """gradient_of's status, error and gradient for an output computed from `leaf` itself."""
    if not isinstance(out, Tensor) or not out.requires_grad:
        return "no_gradient", None, None
    try:
        (out * gradient_weights(out.shape).to(out.dtype)).sum().backward()
    except Exception as exc:  # noqa: BLE001 - an output autograd cannot go back through is the finding
        return "raised", describe_exception(exc), None
    if leaf.grad is None:
        return "no_gradient", None, None
    if not bool(torch.isfinite(leaf.grad).all()):
        return "not_finite", None, None
    return "ok", None, plain(leaf.grad)


def probe_split(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    split_heads = lookup(namespace, "split_heads")
    return _probed(lambda x: split_heads(x, case["num_heads"]), split_input(case), case)


def merge_input(case: HeadsCase) -> torch.Tensor:
    """(b, num_heads, num_tokens, head_dim) input of merge_heads, laid out in memory as the case says.

    "attention": attn_weights @ values, contiguous as a forward pass produces it, so transposing it
    makes it non-contiguous; "split": a split of a (b, num_tokens, d_out) tensor, the round trip;
    "strided": a slice whose transpose is non-contiguous too.
    """
    b, num_heads, num_tokens, head_dim = (case[k] for k in ("batch", "num_heads", "num_tokens", "head_dim"))
    dtype, seed, layout = HEAD_DTYPES[case["dtype"]], case["seed"], case["layout"]
    if layout == "arange":
        return torch.arange(b * num_heads * num_tokens * head_dim, dtype=dtype).view(b, num_heads, num_tokens, head_dim)
    if layout == "split":
        return round_trip_source(case).view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    if layout == "strided":
        return rand(seed, b, num_heads, num_tokens, 2 * head_dim, dtype=dtype)[..., ::2]
    queries, keys, values = (
        rand(seed + i, b, num_tokens, num_heads * head_dim, dtype=dtype).view(b, num_tokens, num_heads, head_dim)
        .transpose(1, 2)
        for i in range(3)
    )
    attn_weights = torch.softmax(queries @ keys.transpose(2, 3) / head_dim**0.5, dim=-1)
    return attn_weights @ values


def round_trip_source(case: HeadsCase) -> Tensor:
    d_out = case["num_heads"] * case["head_dim"]
    return rand(case["seed"], case["batch"], case["num_tokens"], d_out, dtype=HEAD_DTYPES[case["dtype"]])


def probe_merge(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    merge_heads = lookup(namespace, "merge_heads")
    return _probed(merge_heads, merge_input(case), case)
