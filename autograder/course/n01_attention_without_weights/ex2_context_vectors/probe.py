"""Probes of context_vectors: run the student's objects on a case and return plain data. Imports no reference, judge
or declaration: the grading child holds it."""

from typing import Any, TypedDict

from torch import Tensor

from autograder.checking.probing import EDITS, gradient_is_own_slope, gradient_of, input_changes, lookup, plain
from autograder.checking.torch_recorders import UntrackedEdits, called_functions
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import TensorCase, case_tensor
from autograder.course.shared.records import Namespace

__all__ = ["ContextRecord", "probe_context_vectors"]


class ContextRecord(TypedDict, total=False):
    output: Tensor
    calls: list[str]  # the torch functions the call ran (torch_recorders.called_functions)
    input_changed: bool
    gradient: str  # probing.gradient_of: "ok", "no_gradient", "not_finite" or "raised"
    gradient_error: dict[str, Any]  # what backward raised, when "raised"
    input_gradient: Tensor  # the gradient that reached the input, when "ok": the judge compares it with the reference's
    gradient_is_own_slope: bool  # probing.gradient_is_own_slope, where it could be read
    untracked_edits: list[str]  # in-place ops of that call autograd did not record (torch_recorders.UntrackedEdits)


def probe_context_vectors(namespace: Namespace, case: TensorCase) -> ContextRecord:
    context_vectors = lookup(namespace, "context_vectors")
    inputs = case_tensor(case)
    (output, calls), change = input_changes(inputs, lambda handed: called_functions(context_vectors, handed))
    data: ContextRecord = {"output": plain(output), "calls": calls, "input_changed": change in EDITS}
    edits = UntrackedEdits()
    data["gradient"], error, gradient = gradient_of(edits.watching(context_vectors), case_tensor(case))
    data["untracked_edits"] = sorted(set(edits.ops))
    if error is not None:
        data["gradient_error"] = error
    if gradient is not None:
        data["input_gradient"] = gradient
        own = gradient_is_own_slope(context_vectors, case_tensor(case), gradient)
        if own is not None:
            data["gradient_is_own_slope"] = own
    return data
