"""Probes of notebook 02 (SelfAttention_v1/v2, exercise 3.1's weight transfer). The transfer probe hands the
student's function stand-in modules built from plain torch, so a bug in the student's own classes cannot cost
exercise 3.1 its points. The judges are in autograder.course.checks.n02_trainable_self_attention.
"""


import torch

from autograder.checking.probing import (
    PROJECTIONS,
    LinearProjections,
    ParameterProjections,
    called_functions,
    describe_exception,
    lookup,
    plain,
    rand,
    state_of,
)
from autograder.course.probes.cases import Namespace, SelfAttentionCase, TransferCase
from autograder.course.probes.inputs import dtype_of, notes_inputs
from autograder.course.probes.loading import load_case_weights
from autograder.course.probes.records import CallsRecord, ForwardRecord, TransferRecord, TransferRun


def attention_input(case: SelfAttentionCase) -> torch.Tensor:
    """(num_tokens, d_in) input of a case: the notes' sentence or random values."""
    if case.get("input") == "notes_inputs":
        return notes_inputs()
    return rand(case["seed"], case["num_tokens"], case["d_in"], dtype=dtype_of(case))


def build_module(class_name, namespace, case):
    """The student's class, constructed under the case's seed without touching the notebook's own RNG."""
    attention_class = lookup(namespace, class_name)
    args = (case["d_in"], case["d_out"]) + ((case["qkv_bias"],) if "qkv_bias" in case else ())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["init_seed"])
        module = attention_class(*args)
    return load_case_weights(module.double() if dtype_of(case) == torch.float64 else module, case)


def probe_forward(class_name: str, namespace: Namespace, case: SelfAttentionCase) -> ForwardRecord:
    module = build_module(class_name, namespace, case)
    state = state_of(module)  # before the call: expected values come from the weights it started with
    output = plain(module(attention_input(case)))
    return {"output": output, "state": state}


def probe_calls(class_name: str, namespace: Namespace, case: SelfAttentionCase) -> CallsRecord:
    module = build_module(class_name, namespace, case)
    output, calls = called_functions(module, attention_input(case))
    plain(output)
    return {"calls": calls}


def transfer_weights(case):
    """({name: v1 start (d_in, d_out)}, {name: v2 weight (d_out, d_in)}), rebuilt from the case alone."""
    d_in, d_out, seed, dtype = case["d_in"], case["d_out"], case["seed"], dtype_of(case)
    v1 = {name: rand(seed + i, d_in, d_out, dtype=dtype) for i, name in enumerate(PROJECTIONS)}
    v2 = {name: rand(seed + 3 + i, d_out, d_in, dtype=dtype) for i, name in enumerate(PROJECTIONS)}
    return v1, v2


def square_case(case: TransferCase) -> TransferCase:
    return {**case, "d_out": case["d_in"]}


def run_transfer(load, case: TransferCase) -> TransferRun:
    v1_start, v2_weights = transfer_weights(case)
    sa_v1, sa_v2 = ParameterProjections(v1_start), LinearProjections(v2_weights)
    own = {name: getattr(sa_v1, name) for name in PROJECTIONS}
    returned = load(sa_v1, sa_v2)
    kind = "sa_v1" if returned is sa_v1 else "None" if returned is None else type(returned).__name__
    v2_memory = {parameter.untyped_storage().data_ptr() for parameter in sa_v2.parameters()}
    replaced = [name for name in PROJECTIONS if getattr(sa_v1, name, None) is not own[name]]
    shared = [name for name in PROJECTIONS if isinstance(value := getattr(sa_v1, name, None), torch.Tensor)
              and value.untyped_storage().data_ptr() in v2_memory]
    return {"v1": state_of(sa_v1), "v2": state_of(sa_v2), "returned": kind, "replaced": replaced, "shared": shared}


def probe_transfer(namespace: Namespace, case: TransferCase) -> TransferRecord:
    load = lookup(namespace, "load_v2_weights_into_v1")
    try:
        return TransferRecord(**run_transfer(load, case))
    except RuntimeError as exc:
        # Copying weight without .T only fails for d_in != d_out; on a square pair it runs, and shows.
        if case["d_in"] == case["d_out"]:
            raise
        try:
            square = run_transfer(load, square_case(case))
        except Exception:  # the first exception is the one to report
            raise exc from None
        return {"raised": describe_exception(exc), "square": square}

