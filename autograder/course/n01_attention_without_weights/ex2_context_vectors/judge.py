"""Judges of context_vectors: decide from the probe's data, the case and the reference's expectations. Imports no
reference or declaration: the student kit ships it as it is."""

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare_named, dtype_verdict
from autograder.checking.expectations import Expectations
from autograder.checking.judging import gradient_problem, no_gradient
from autograder.checking.torch_recorders import MODES_OFF
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import TensorCase, case_tensor
from autograder.course.n01_attention_without_weights.ex2_context_vectors.probe import ContextRecord

__all__ = ["judge_context_vectors", "judge_context_vectors_dtype"]


def judge_context_vectors(record: ContextRecord, case: TensorCase, expectations: Expectations) -> Verdict:
    """Values, naming a mistake when one reproduces them. Expectations: output, mistakes."""
    inputs = case_tensor(case)
    return compare_named(record["output"], expectations["output"], expectations["mistakes"],
                         message_key="context_vectors.wrong_values", input_shape=tuple(inputs.shape),
                         calls=record.get("calls", ()))


def judge_context_vectors_dtype(record: ContextRecord, case: TensorCase, expectations: Expectations) -> Verdict:
    """Input left alone, gradients flowing back to it, the values, the gradient the reference passes back (right
    values with another gradient: a step computed outside autograd), then float64 kept. Expectations: output,
    mistakes, input_gradient."""
    if record["input_changed"]:
        return Verdict(False, "context_vectors.input_changed")
    if record.get("gradient", "ok") != "ok":
        return no_gradient(record["gradient"], record.get("gradient_error"))
    verdict = judge_context_vectors(record, case, expectations)
    if not verdict.passed:
        return verdict
    if MODES_OFF in record.get("untracked_edits", ()):  # an edit made with the recorder off: fail closed
        return Verdict(False, "function.edit_unseen")
    if record.get("untracked_edits"):  # read from the run: an edit the graph does not hold
        return Verdict(False, "function.untracked_edit", misconception="gradient_cut", evidence=Evidence.FACT)
    wrong = gradient_problem(record.get("input_gradient"), expectations["input_gradient"],
                             own_slope=record.get("gradient_is_own_slope"))
    return wrong or dtype_verdict("context_vectors", record["output"], torch.float64)
