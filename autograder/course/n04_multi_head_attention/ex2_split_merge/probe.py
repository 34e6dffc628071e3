"""Probes of split_heads and merge_heads: run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

from typing import TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import (
    gradient_flow,
    input_unchanged,
    lookup,
    plain,
    rand,
)
from autograder.course.shared.inputs import DTYPES
from autograder.course.shared.records import Namespace


class HeadsCase(TypedDict):
    """split_heads / merge_heads: the layout of the input in memory and its sizes."""

    layout: str  # arange | random | transposed | sliced | expanded | attention | split | strided
    seed: int
    batch: int
    num_tokens: int
    num_heads: int
    head_dim: int
    dtype: str


class HeadsRecord(TypedDict):
    """split_heads or merge_heads: the result and whether the input was left as it was."""

    out: Tensor
    input_kept: bool
    gradient: str  # probing.gradient_flow


def split_input(case: HeadsCase) -> torch.Tensor:
    b, num_tokens, dtype = case["batch"], case["num_tokens"], DTYPES[case["dtype"]]
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


def probe_split(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    split_heads = lookup(namespace, "split_heads")
    out, kept = input_unchanged(split_input(case), lambda x: split_heads(x, case["num_heads"]))
    return {"out": plain(out), "input_kept": kept,
            "gradient": gradient_flow(lambda x: split_heads(x, case["num_heads"]), split_input(case))[0]}


def merge_input(case: HeadsCase) -> torch.Tensor:
    """(b, num_heads, num_tokens, head_dim) input of merge_heads, laid out in memory as the case says.

    "attention": attn_weights @ values, contiguous as a forward pass produces it, so transposing it
    makes it non-contiguous; "split": a split of a (b, num_tokens, d_out) tensor, the round trip;
    "strided": a slice whose transpose is non-contiguous too.
    """
    b, num_heads, num_tokens, head_dim = (case[k] for k in ("batch", "num_heads", "num_tokens", "head_dim"))
    dtype, seed, layout = DTYPES[case["dtype"]], case["seed"], case["layout"]
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
    return rand(case["seed"], case["batch"], case["num_tokens"], d_out, dtype=DTYPES[case["dtype"]])


def probe_merge(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    merge_heads = lookup(namespace, "merge_heads")
    out, kept = input_unchanged(merge_input(case), merge_heads)
    return {"out": plain(out), "input_kept": kept, "gradient": gradient_flow(merge_heads, merge_input(case))[0]}
