"""Probes of CausalAttention: run the student's objects on a case and return plain data. Imports no reference, judge
or declaration: the grading child holds it."""

from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import (
    EDITS,
    PROJECTIONS,
    ProbeError,
    input_changes,
    kept_if_raised,
    layer_inputs,
    lookup,
    plain,
    rand,
    seeded,
    state_of,
)
from autograder.checking.torch_recorders import call_watched, forbidden_calls
from autograder.course.shared.inputs import ATTENTION_FUNCTIONS, DTYPES, notes_batch
from autograder.course.shared.loading import load_case_weights
from autograder.course.shared.records import Namespace, State
from autograder.course.shared.wide import wide_input

__all__ = ["CausalCase", "CausalForwardRecord", "attention_input", "probe_forward"]


class CausalCase(TypedDict):
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    qkv_bias: bool
    dtype: str
    input: NotRequired[str]  # notes: the notes' batch and call
    seed: NotRequired[int]
    init_seed: NotRequired[int]
    load_weights: NotRequired[dict[str, Any]]
    wide: NotRequired[bool]  # the wide input (autograder.course.shared.wide) instead of values in [-1, 1)


class CausalForwardRecord(TypedDict, total=False):
    output: Tensor
    state: State
    transpose_batched: bool
    forbidden: list[str]
    weights_seen: Tensor  # what self.dropout received: the attention weights, when forward applies it there
    input_kept: bool  # forward left the caller's x as it was
    # What self.dropout received for sample 0 run alone (a batch of one), on a batch whose samples are all the same:
    # there a fit of the weights cannot tell a wrong scale from samples mixed (keys summed over the batch double the
    # scores of two copies); a sample run alone can.
    weights_alone: Tensor


NOTES_CAUSAL_SEED = 123  # ... and CausalAttention(3, 2, 6, 0.0) under this one



def attention_input(case: CausalCase) -> torch.Tensor:
    """(batch, num_tokens, d_in): the notes' sentence twice (torch.stack((inputs, inputs))), or random values."""
    if case.get("input") == "notes":
        return notes_batch()
    if case.get("wide"):
        return wide_input(case["seed"], case["batch"], case["num_tokens"], case["d_in"], DTYPES[case["dtype"]])
    return rand(case["seed"], case["batch"], case["num_tokens"], case["d_in"], dtype=DTYPES[case["dtype"]])


def build_module(namespace: Namespace, case: CausalCase, dropout: float = 0.0) -> torch.nn.Module:
    """The student's CausalAttention, built as the book does, under the case's seed, in the case's dtype."""
    causal_attention = lookup(namespace, "CausalAttention")
    with seeded(case.get("init_seed", NOTES_CAUSAL_SEED)):
        if case.get("input") == "notes":  # exactly the notes' call, so their printed numbers can be compared
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout)
        else:
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout,
                                      qkv_bias=case["qkv_bias"])
    return load_case_weights(module.to(DTYPES[case["dtype"]]), case)


def projection_state(module: torch.nn.Module) -> State:
    """W_query/W_key/W_value weights (and biases) as plain tensors; a clear error when a layer is missing."""
    state = state_of(module)
    for name in PROJECTIONS:
        if f"{name}.weight" not in state:
            raise ProbeError("causal_attention.missing_layer", name=name)
    return {key: value for key, value in state.items() if key.split(".")[0] in PROJECTIONS}


def probe_forward(namespace: Namespace, case: CausalCase) -> CausalForwardRecord:
    module = build_module(namespace, case)
    state = projection_state(module)
    x = attention_input(case)
    with kept_if_raised(state=state), layer_inputs(module, "dropout") as seen:
        (output, watch), change = input_changes(x, lambda handed: call_watched(module, handed))
    data: CausalForwardRecord = {"output": plain(output), "state": state, "transpose_batched": watch.batched_transpose,
                                 "forbidden": forbidden_calls(watch.names, ATTENTION_FUNCTIONS),
                                 "input_kept": change not in EDITS}
    if "dropout" in seen:
        data["weights_seen"] = seen["dropout"]
        if x.shape[0] > 1 and all(torch.equal(sample, x[0]) for sample in x[1:]):
            try:
                with layer_inputs(module, "dropout") as alone:
                    module(attention_input(case)[:1])
            except Exception:  # noqa: BLE001 - the batch's own call decides the verdict; this one only adds evidence
                alone = {}
            if "dropout" in alone:
                data["weights_alone"] = alone["dropout"]
    return data
