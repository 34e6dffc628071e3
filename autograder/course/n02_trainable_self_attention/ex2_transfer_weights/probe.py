"""Probes of load_v2_weights_into_v1: run the student's objects on a case and return plain data. Imports no reference,
judge or declaration: the grading child holds it."""

from collections.abc import Callable
from typing import Any, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import (
    PROJECTIONS,
    LinearProjections,
    ParameterProjections,
    describe_exception,
    lookup,
    rand,
    state_of,
)
from autograder.course.shared.inputs import dtype_of
from autograder.course.shared.records import ExceptionRecord, Namespace, State

__all__ = ["TransferCase", "TransferRecord", "probe_transfer", "square_case", "transfer_weights"]


class TransferCase(TypedDict):
    d_in: int
    d_out: int
    seed: int
    num_tokens: int
    dtype: str


class TransferRun(TypedDict):
    v1: State
    v2: State
    returned: str  # "sa_v1", "None" or the returned object's type
    replaced: list[str]  # v1's parameters that are no longer the nn.Parameter objects it was built with
    shared: list[str]  # v1's parameters that share memory with one of v2's
    frozen: list[str]  # v1's parameters that no longer require grad: v1 could not be trained any more
    recorded: list[str]  # v1's parameters autograd made the copy's result (a grad_fn): .grad would stay empty
    grad_left_off: bool  # the call switched gradients off for everything after it (and never back on)


class TransferRecord(TypedDict, total=False):
    """A run of load_v2_weights_into_v1, or the exception it raised and the run on a square pair."""

    v1: State
    v2: State
    returned: str
    replaced: list[str]
    shared: list[str]
    frozen: list[str]
    recorded: list[str]
    grad_left_off: bool
    raised: ExceptionRecord
    square: TransferRun
    unrecorded: TransferRun  # the same call with autograd recording nothing, where that one ran


def transfer_weights(case: TransferCase) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """({name: v1 start (d_in, d_out)}, {name: v2 weight (d_out, d_in)}), rebuilt from the case alone."""
    d_in, d_out, seed, dtype = case["d_in"], case["d_out"], case["seed"], dtype_of(case)
    v1 = {name: rand(seed + i, d_in, d_out, dtype=dtype) for i, name in enumerate(PROJECTIONS)}
    v2 = {name: rand(seed + 3 + i, d_out, d_in, dtype=dtype) for i, name in enumerate(PROJECTIONS)}
    return v1, v2


def square_case(case: TransferCase) -> TransferCase:
    return {**case, "d_out": case["d_in"]}


def run_transfer(load: Callable[..., Any], case: TransferCase) -> TransferRun:
    v1_start, v2_weights = transfer_weights(case)
    sa_v1, sa_v2 = ParameterProjections(v1_start), LinearProjections(v2_weights)
    own = {name: getattr(sa_v1, name) for name in PROJECTIONS}
    recording = torch.is_grad_enabled()
    try:
        returned = load(sa_v1, sa_v2)
        left_off = recording and not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(recording)  # what the call switched, read above, is not the probe's to keep
    kind = ("sa_v1" if returned is sa_v1 else "sa_v2" if returned is sa_v2 else "None" if returned is None
            else type(returned).__name__)
    v2_memory = {parameter.untyped_storage().data_ptr() for parameter in sa_v2.parameters()}
    replaced = [name for name in PROJECTIONS if getattr(sa_v1, name, None) is not own[name]]
    shared = [name for name in PROJECTIONS if isinstance(value := getattr(sa_v1, name, None), torch.Tensor)
              and value.untyped_storage().data_ptr() in v2_memory]
    held = {name: value for name in PROJECTIONS if isinstance(value := getattr(sa_v1, name, None), torch.Tensor)}
    return {"v1": state_of(sa_v1), "v2": state_of(sa_v2), "returned": kind, "replaced": replaced, "shared": shared,
            "frozen": [name for name, value in held.items() if not value.requires_grad],
            "recorded": [name for name, value in held.items() if value.grad_fn is not None],
            "grad_left_off": left_off}


def run_unrecorded(load: Callable[..., Any], case: TransferCase) -> TransferRun | None:
    """The same call on fresh modules with autograd recording nothing, or None where it fails there too: a call that
    runs only so failed because autograd recorded it (an in-place write into a parameter that requires grad)."""
    try:
        with torch.no_grad():
            return run_transfer(load, case)
    except Exception:  # noqa: BLE001 - failing here too says only that recording was not the cause
        return None


def probe_transfer(namespace: Namespace, case: TransferCase) -> TransferRecord:
    load = lookup(namespace, "load_v2_weights_into_v1")
    try:
        return TransferRecord(**run_transfer(load, case))
    except RuntimeError as exc:
        unrecorded = run_unrecorded(load, case)
        if unrecorded is not None:
            return {"raised": describe_exception(exc), "unrecorded": unrecorded}
        # Copying weight without .T only fails for d_in != d_out; on a square pair it runs, and shows.
        if case["d_in"] == case["d_out"]:
            raise
        try:
            square = run_transfer(load, square_case(case))
        except Exception:  # the first exception is the one to report
            raise exc from None
        return {"raised": describe_exception(exc), "square": square}
