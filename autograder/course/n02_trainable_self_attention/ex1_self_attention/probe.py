"""Probes of SelfAttention_v1 and SelfAttention_v2: run the student's objects on a case and return plain data. Imports
no reference, judge or declaration: the grading child holds it."""

from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import kept_if_raised, lookup, plain, rand, seeded, state_of
from autograder.checking.torch_recorders import called_functions
from autograder.course.shared.inputs import dtype_of, notes_inputs
from autograder.course.shared.loading import load_case_weights
from autograder.course.shared.records import Namespace, State

__all__ = ["CallsRecord", "ForwardRecord", "SelfAttentionCase", "attention_input", "probe_calls", "probe_forward"]


class SelfAttentionCase(TypedDict):
    init_seed: int
    d_in: int
    d_out: int
    dtype: str
    input: NotRequired[str]  # notes_inputs, or random from seed
    seed: NotRequired[int]
    num_tokens: NotRequired[int]
    qkv_bias: NotRequired[bool]  # SelfAttention_v2 only
    load_weights: NotRequired[dict[str, Any]]


class ForwardRecord(TypedDict):
    """SelfAttention_v1/v2's output and the weights it was computed with."""

    output: Tensor
    state: State


class CallsRecord(TypedDict):
    calls: list[str]


def attention_input(case: SelfAttentionCase) -> torch.Tensor:
    """(num_tokens, d_in) input of a case: the notes' sentence or random values."""
    if case.get("input") == "notes_inputs":
        return notes_inputs()
    return rand(case["seed"], case["num_tokens"], case["d_in"], dtype=dtype_of(case))


def build_module(class_name: str, namespace: Namespace, case: SelfAttentionCase) -> torch.nn.Module:
    """The student's class, constructed under the case's seed without touching the notebook's own RNG: the CPU
    stream torch.manual_seed(init_seed) gives, without its seeding of every accelerator backend (each call queues
    a seed with a formatted stack trace for CUDA, XPU and MTIA while none is initialised)."""
    attention_class = lookup(namespace, class_name)
    args = (case["d_in"], case["d_out"]) + ((case["qkv_bias"],) if "qkv_bias" in case else ())
    with seeded(case["init_seed"]):
        module = attention_class(*args)
    return load_case_weights(module.double() if dtype_of(case) == torch.float64 else module, case)


def probe_forward(class_name: str, namespace: Namespace, case: SelfAttentionCase) -> ForwardRecord:
    module = build_module(class_name, namespace, case)
    state = state_of(module)  # before the call: expected values come from the weights it started with
    with kept_if_raised(state=state):
        output = plain(module(attention_input(case)))
    return {"output": output, "state": state}


def probe_calls(class_name: str, namespace: Namespace, case: SelfAttentionCase) -> CallsRecord:
    module = build_module(class_name, namespace, case)
    output, calls = called_functions(module, attention_input(case))
    plain(output)
    return {"calls": calls}
