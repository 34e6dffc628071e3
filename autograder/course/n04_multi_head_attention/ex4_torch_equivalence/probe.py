"""Probes of to_torch_multihead (our weights inside nn.MultiheadAttention): run the student's objects on a case and
return plain data. Imports no reference, judge or declaration: the grading child holds it."""

from typing import NotRequired, TypedDict

import torch
from torch import Tensor, nn

from autograder.checking.probing import (
    InputChange,
    ProbeError,
    arguments_changes,
    lookup,
    plain,
    rand,
    seeded,
    state_of,
)
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import MHA_LAYERS, raised_by
from autograder.course.shared.inputs import DTYPES
from autograder.course.shared.records import Namespace, State

__all__ = [
    "EquivalenceCase", "EquivalenceRecord", "HANDED_BUFFERS", "equivalence_input", "equivalence_weights",
    "parts_added_removed", "probe_equivalence",
]

HANDED_BUFFERS = ("mask",)  # the buffers of the module to_torch_multihead is handed (StandInMultiHeadAttention)


class EquivalenceCase(TypedDict):
    seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_model: int
    num_heads: int
    qkv_bias: bool
    dropout: float
    dtype: str
    d_in: NotRequired[int]  # when it differs from d_model, nn.MultiheadAttention must be refused


class EquivalenceRecord(TypedDict, total=False):
    raised: str | None  # d_in != d_out: the name of the exception raised, None for none
    batch_first: bool
    embed_dim: int
    num_heads: int
    dropout: float | None  # None: not a number at all (dropout_type says what it is)
    dropout_type: str
    dtype: str
    state: State
    out: Tensor
    shared: list[str]  # its parameters that share memory with our module's
    inputs_changed: list[InputChange]  # what the call changed of the weights and mask of the module it was handed
    # the names ("mha.W_query.bias") of the parameters and buffers the call added to, or took from, that module
    parts_added: list[str]
    parts_removed: list[str]


def equivalence_weights(case: EquivalenceCase) -> dict[str, torch.Tensor]:
    """Seeded weights of the module handed to to_torch_multihead; the judge rebuilds them from the case."""
    d_model, dtype, seed = case["d_model"], DTYPES[case["dtype"]], case["seed"]
    d_in = case.get("d_in", d_model)
    weights = {}
    for index, layer in enumerate(MHA_LAYERS):
        fan_in = d_model if layer == "out_proj" else d_in
        weights[f"{layer}.weight"] = rand(seed + 10 + index, d_model, fan_in, dtype=dtype) * fan_in**-0.5
        if layer == "out_proj" or case["qkv_bias"]:
            weights[f"{layer}.bias"] = rand(seed + 20 + index, d_model, dtype=dtype) * 0.5
    return weights


def equivalence_input(case: EquivalenceCase) -> Tensor:
    return rand(case["seed"] + 1, case["batch"], case["num_tokens"], case["d_model"], dtype=DTYPES[case["dtype"]])


class StandInMultiHeadAttention(nn.Module):
    """What to_torch_multihead reads from a MultiHeadAttention, built from plain torch with the case's weights."""

    def __init__(self, case: EquivalenceCase) -> None:
        super().__init__()
        d_model, dtype = case["d_model"], DTYPES[case["dtype"]]
        d_in = case.get("d_in", d_model)
        self.d_out = d_model
        self.num_heads = case["num_heads"]
        self.head_dim = d_model // case["num_heads"]
        self.W_query = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.W_key = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.W_value = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.out_proj = nn.Linear(d_model, d_model, dtype=dtype)
        self.dropout = nn.Dropout(case["dropout"])
        context_length = case["context_length"]
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=dtype), diagonal=1))
        with torch.no_grad():
            for name, value in equivalence_weights(case).items():
                self.get_parameter(name).copy_(value)


def rate(value: object) -> float | None:
    """A dropout setting as the float it is; None for anything else (nn.MultiheadAttention stores what it is given,
    an nn.Dropout module included, and only fails on it later)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def handed_tensors(module: nn.Module) -> dict[str, Tensor]:
    """{"mha.<name>": tensor} of every parameter and buffer of the module to_torch_multihead is handed: what it copies
    from, and may only read."""
    named = [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]
    return {f"mha.{name}": tensor for name, tensor in named}


def parts_added_removed(handed: dict[str, Tensor], module: nn.Module) -> tuple[list[str], list[str]]:
    """The names of the parameters and buffers `module` holds after the call and did not before (`handed`: its
    handed_tensors before), and of those it held before and no longer does, each sorted."""
    after = handed_tensors(module)
    return sorted(set(after) - set(handed)), sorted(set(handed) - set(after))


def probe_equivalence(namespace: Namespace, case: EquivalenceCase) -> EquivalenceRecord:
    to_torch_multihead = lookup(namespace, "to_torch_multihead")
    with seeded(case["seed"]):  # nn.MultiheadAttention's own initialisation draws from the RNG too
        ours = StandInMultiHeadAttention(case)
        if case.get("d_in", case["d_model"]) != case["d_model"]:
            return {"raised": raised_by(to_torch_multihead, ours)}
        handed = handed_tensors(ours)
        theirs, changed = arguments_changes(handed, lambda: to_torch_multihead(ours))
    if changed:  # our module is the caller's: a copy of it that edits it is judged on that alone
        return {"inputs_changed": changed}
    added, removed = parts_added_removed(handed, ours)
    if added or removed:  # a bias parameter given to our bias-free layers changes the module as surely as a value
        return {"parts_added": added, "parts_removed": removed}
    if not isinstance(theirs, nn.MultiheadAttention):
        raise ProbeError("torch_equivalence.not_multihead", got=type(theirs).__module__ + "." + type(theirs).__name__)
    state = state_of(theirs)
    ours_memory = {parameter.untyped_storage().data_ptr() for parameter in ours.parameters()}
    data: EquivalenceRecord = {
        "shared": [name for name, parameter in theirs.named_parameters()
                   if parameter.untyped_storage().data_ptr() in ours_memory],
        "batch_first": bool(theirs.batch_first),
        "embed_dim": int(theirs.embed_dim),
        "num_heads": int(theirs.num_heads),
        "dropout": rate(theirs.dropout),
        "dropout_type": type(theirs.dropout).__name__,
        "dtype": str(theirs.out_proj.weight.dtype),
        "state": state,
    }
    runnable = data["batch_first"] and data["dtype"] == str(DTYPES[case["dtype"]])
    if runnable and (data["embed_dim"], data["num_heads"]) == (case["d_model"], case["num_heads"]):
        theirs.eval()  # dropout is compared as a setting; the output is compared without it
        x = equivalence_input(case)
        future = torch.triu(torch.ones(case["num_tokens"], case["num_tokens"], dtype=torch.bool), diagonal=1)
        with torch.no_grad():
            data["out"] = plain(theirs(x, x, x, attn_mask=future, need_weights=False)[0])
    return data
