"""Probes of softmax_naive and softmax_stable: run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

import inspect
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import EDITS, gradient_is_own_slope, gradient_of, input_changes, lookup, plain, rand
from autograder.checking.torch_recorders import called_functions, called_functions_until_raise
from autograder.course.shared.inputs import dtype_of, notes_inputs
from autograder.course.shared.records import Namespace

__all__ = ["NEAR_OVERFLOW", "SoftmaxRecord", "TensorCase", "case_tensor", "probe_softmax_naive",
           "probe_softmax_naive_rules", "probe_softmax_stable", "probe_softmax_stable_rules"]


class TensorCase(TypedDict):
    """An input tensor of notebook 01: the notes' sentence, given values, or seeded random values."""

    input: str  # notes_journey | notes_scores | notes_inputs | values | random
    seed: NotRequired[int]
    shape: NotRequired[list[int]]
    scale: NotRequired[float]
    values: NotRequired[list[float] | list[list[float]]]  # a vector or a matrix
    dtype: NotRequired[str]
    dim: NotRequired[int]  # passed to softmax_stable when present


class SoftmaxRecord(TypedDict, total=False):
    output: Tensor
    calls: list[str]
    input_changed: bool
    default_dim: int | None  # the default of the function's `dim` parameter, None when it has no int default
    parameters: list[str]  # the names of the function's parameters, as its signature gives them ([] if unknown)
    gradient: str  # probing.gradient_of's status
    gradient_error: dict[str, Any]  # what backward raised, when "raised"
    input_gradient: Tensor  # probing.gradient_of, when "ok": the judge compares it with softmax's own
    gradient_is_own_slope: bool  # probing.gradient_is_own_slope, where it could be read
    # softmax_stable's output on NEAR_OVERFLOW (None where the call raised or returned no tensor): what tells a softmax
    # that shifts its scores by too little from one that does not shift them at all.
    near_overflow: Tensor | None


# Scores whose exponentials overflow float32 only unshifted (exp(89) is inf, exp(88) is not): an unshifted softmax
# gives nan there, any shift of a point or more (by the maximum or by anything else) the right weights. A name that
# says the scores were not shifted needs the learner's output here to be the unshifted one (judge_softmax).
NEAR_OVERFLOW = (80.0, 89.0)


def case_tensor(case: TensorCase) -> torch.Tensor:
    """The input a case describes, rebuilt identically by probe and judge."""
    source = case["input"]
    if source == "notes_journey":  # scores of query x(2) against every token, as in the notes
        inputs = notes_inputs()
        return inputs @ inputs[1]
    if source == "notes_scores":
        inputs = notes_inputs()
        return inputs @ inputs.T
    if source == "notes_inputs":
        return notes_inputs()
    if source == "values":
        return torch.tensor(case["values"], dtype=dtype_of(case))
    return rand(case["seed"], *case["shape"], dtype=dtype_of(case)) * case.get("scale", 1.0)


def probe_softmax(name: str, namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    softmax = lookup(namespace, name)
    x = case_tensor(case)
    args = (x,) if "dim" not in case else (x, case["dim"])
    (output, calls), change = input_changes(x, lambda handed: called_functions(softmax, handed, *args[1:]))
    gradient, error, input_gradient = gradient_of(lambda through: softmax(through, *args[1:]), case_tensor(case))
    data: SoftmaxRecord = {"output": plain(output), "calls": calls, "input_changed": change in EDITS,
                           "default_dim": default_of(softmax, "dim"), "gradient": gradient,
                           "parameters": parameter_names(softmax)}
    if input_gradient is not None:
        data["input_gradient"] = input_gradient
        own = gradient_is_own_slope(lambda through: softmax(through, *args[1:]), case_tensor(case), input_gradient)
        if own is not None:
            data["gradient_is_own_slope"] = own
    if error is not None:
        data["gradient_error"] = error
    if name == "softmax_stable":
        data["near_overflow"] = output_near_overflow(softmax)
    return data


def output_near_overflow(softmax: Callable[..., Any]) -> Tensor | None:
    """softmax(NEAR_OVERFLOW, -1) as plain data; None where it raises or returns no tensor."""
    try:
        output = softmax(torch.tensor(NEAR_OVERFLOW, dtype=torch.float32), -1)
    except Exception:  # noqa: BLE001 - a call that fails here proves no mistake of the table
        return None
    return plain(output) if isinstance(output, Tensor) else None


def probe_softmax_rules(name: str, namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    """The from-scratch rules' record: probe_softmax's on a vector; on any other input only the calls and whether the
    input was changed, recorded up to a raise, if the call raises: a dim or keepdim mistake that raises on a matrix
    already costs the value checks, and what it called before raising is still the rule's matter."""
    x = case_tensor(case)
    if x.dim() == 1:
        return probe_softmax(name, namespace, case)
    softmax = lookup(namespace, name)
    args = (x,) if "dim" not in case else (x, case["dim"])
    calls, change = input_changes(x, lambda handed: called_functions_until_raise(softmax, handed, *args[1:]))
    return {"calls": calls, "input_changed": change in EDITS}


def default_of(function: Callable[..., Any], parameter: str) -> int | None:
    """The int default of `function`'s `parameter`, or None (no such parameter, no default, not an int)."""
    try:
        default = inspect.signature(function).parameters[parameter].default
    except (KeyError, TypeError, ValueError):
        return None
    return default if isinstance(default, int) and not isinstance(default, bool) else None


def parameter_names(function: Callable[..., Any]) -> list[str]:
    """The names of `function`'s parameters as plain strings; [] when its signature cannot be read."""
    try:
        return [str(name) for name in inspect.signature(function).parameters][:20]
    except (TypeError, ValueError):
        return []


def probe_softmax_naive(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax("softmax_naive", namespace, case)


def probe_softmax_stable(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax("softmax_stable", namespace, case)


def probe_softmax_naive_rules(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax_rules("softmax_naive", namespace, case)


def probe_softmax_stable_rules(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax_rules("softmax_stable", namespace, case)
