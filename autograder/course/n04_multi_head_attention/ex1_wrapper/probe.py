"""Probes of MultiHeadAttentionWrapper and the two-dimensional wrapper (book exercise 3.2): run the student's objects on
a case and return plain data. Imports no reference, judge or declaration: the grading child holds it."""

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor, nn

from autograder.checking.probing import (
    PROJECTIONS,
    head_outputs,
    lookup,
    plain,
    rand,
    seeded,
    state_of,
)
from autograder.course.shared.inputs import DTYPES, notes_batch
from autograder.course.shared.loading import load_case_weights
from autograder.course.shared.records import Namespace, State
from autograder.course.shared.wide import wide_input

__all__ = [
    "MHA_LAYERS", "MultiHeadCase", "TwoDimensionalCase", "TwoDimensionalRecord", "WrapperRecord", "attention_input",
    "probe_two_dimensional", "probe_wrapper", "raised_by",
]


class MultiHeadCase(TypedDict):
    """The wrapper and MultiHeadAttention: sizes, seed, and for the heads checks which head or how many more."""

    seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    num_heads: int
    qkv_bias: bool
    dtype: str
    input: NotRequired[str]
    attention_mask: NotRequired[list[list[int]]]  # (batch, num_tokens): 1 a real token, 0 padding
    kind: NotRequired[str]  # heads | vectorised (multi_head_attention.heads)
    head: NotRequired[int]
    more_heads: NotRequired[int]
    load_weights: NotRequired[dict[str, Any]]
    wide: NotRequired[bool]  # the wide input (autograder.course.shared.wide) instead of values in [-1, 1)


class TwoDimensionalCase(TypedDict):
    """Book exercise 3.2: the sizes the student's builder is called with."""

    d_in: int
    context_length: int
    dropout: float
    seed: int


class WrapperRecord(TypedDict):
    heads_type: str
    head_count: NotRequired[int]
    distinct_heads: NotRequired[int]
    out: NotRequired[Tensor]
    state: NotRequired[State]
    head_outputs: NotRequired[list[Tensor] | None]


class TwoDimensionalRecord(TypedDict, total=False):
    """What the builder of book exercise 3.2 returned: its class and its heads' sizes."""

    type: str
    head_count: int
    head_in_features: list[int]
    head_out_features: list[int]
    head_value_features: list[int]  # each head's W_value width: its context vectors' (W_query's may differ)
    head_dropout: list[float]
    head_context_length: list[int]
    parameter_dtypes: list[str]


MHA_LAYERS = (*PROJECTIONS, "out_proj")


def attention_input(case: MultiHeadCase) -> torch.Tensor:
    """The (batch, num_tokens, d_in) input of an attention case: the notes' batch or a seeded random one."""
    if case.get("input") == "notes":
        return notes_batch()
    # seed + 1: the module's weights come from torch.manual_seed(seed), the same stream as rand(seed).
    if case.get("wide"):
        return wide_input(case["seed"] + 1, case["batch"], case["num_tokens"], case["d_in"], DTYPES[case["dtype"]])
    return rand(case["seed"] + 1, case["batch"], case["num_tokens"], case["d_in"], dtype=DTYPES[case["dtype"]])


def probe_wrapper(namespace: Namespace, case: MultiHeadCase) -> WrapperRecord:
    wrapper_class = lookup(namespace, "MultiHeadAttentionWrapper")
    with seeded(case["seed"]):
        wrapper = wrapper_class(case["d_in"], case["d_out"], case["context_length"], 0.0,
                                num_heads=case["num_heads"], qkv_bias=case["qkv_bias"])
    heads = getattr(wrapper, "heads", None)
    if not isinstance(heads, nn.ModuleList):
        # Unregistered heads miss .to(dtype) and crash later: the structure alone decides.
        return {"heads_type": type(heads).__name__}
    wrapper = load_case_weights(wrapper.to(DTYPES[case["dtype"]]), case)
    x = attention_input(case)
    state = state_of(wrapper)  # before the call: expected values come from the weights it started with
    return {"heads_type": type(heads).__name__, "head_count": len(heads),
            "distinct_heads": len({id(head) for head in heads}), "out": plain(wrapper(x)), "state": state,
            "head_outputs": head_outputs(heads, x)}


def raised_by(function: Callable[[Any], Any], argument: Any) -> str | None:
    """The name of the exception function(argument) raised, or None: here raising is the right answer."""
    try:
        function(argument)
    except Exception as exc:  # noqa: BLE001 - which exception it was is the answer being checked
        return type(exc).__name__
    return None


def probe_two_dimensional(namespace: Namespace, case: TwoDimensionalCase) -> TwoDimensionalRecord:
    """Build the student's exercise-3.2 wrapper and read its heads' sizes (its output is exercise 04-1's to get
    right)."""
    build = lookup(namespace, "two_dimensional_wrapper")
    with seeded(case["seed"]):
        wrapper = build(case["d_in"], case["context_length"], case["dropout"])
    record: TwoDimensionalRecord = {"type": type(wrapper).__name__}
    heads = getattr(wrapper, "heads", None)
    if not isinstance(wrapper, nn.Module) or not isinstance(heads, nn.ModuleList):
        return record
    record["head_count"] = len(heads)
    # Each size is read only when every head has the layer: a head of another kind leaves it out of the record.
    queries = [layer for head in heads if isinstance(layer := getattr(head, "W_query", None), nn.Linear)]
    if len(queries) == len(heads):
        record["head_in_features"] = [layer.in_features for layer in queries]
        record["head_out_features"] = [layer.out_features for layer in queries]
    values = [layer for head in heads if isinstance(layer := getattr(head, "W_value", None), nn.Linear)]
    if len(values) == len(heads):
        record["head_value_features"] = [layer.out_features for layer in values]
    dropouts = [layer for head in heads if isinstance(layer := getattr(head, "dropout", None), nn.Dropout)]
    if len(dropouts) == len(heads):
        record["head_dropout"] = [float(layer.p) for layer in dropouts]
    masks = [mask for head in heads
             if isinstance(mask := getattr(head, "mask", None), torch.Tensor) and mask.dim() == 2]
    if len(masks) == len(heads):
        record["head_context_length"] = [mask.shape[-1] for mask in masks]
    # The notebook's next cell runs the wrapper on its own batch, in the default dtype: a wrapper built in another
    # one raises there (a matmul of float32 inputs by float64 weights).
    record["parameter_dtypes"] = sorted({str(value.dtype).removeprefix("torch.") for value in wrapper.parameters()})
    return record
