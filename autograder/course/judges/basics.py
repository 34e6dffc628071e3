"""Judges of notebook 01: softmax_naive, softmax_stable and context_vectors."""

import torch

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare_named, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.course.probes.basics import case_tensor
from autograder.course.probes.cases import TensorCase
from autograder.course.probes.records import ContextRecord, SoftmaxRecord


def judge_softmax(exercise_id: str, default_dim: int, data: SoftmaxRecord, case: TensorCase,
                  expected: Expectations) -> Verdict:
    """Shape, values (naming a mistake when one reproduces them), then dtype. `default_dim`: the axis the function
    normalises when the case passes no dim. Expectations: output, mistakes."""
    x, dim = case_tensor(case), case.get("dim", default_dim)
    got, want = data["output"], expected["output"]
    if not same(got, want):
        key = f"{exercise_id}.wrong_values"
        if got.shape == want.shape and not torch.isfinite(got).all():
            key = f"{exercise_id}.not_finite"
        elif got.shape == want.shape and not same(got.sum(dim=dim), torch.ones_like(want.sum(dim=dim))):
            key = f"{exercise_id}.not_normalised"
        return compare_named(got, want, expected["mistakes"], message_key=key, input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)


def judge_context_vectors(data: ContextRecord, case: TensorCase, expected: Expectations) -> Verdict:
    """Values, naming a mistake when one reproduces them. Expectations: output, mistakes."""
    inputs = case_tensor(case)
    return compare_named(data["output"], expected["output"], expected["mistakes"],
                         message_key="context_vectors.wrong_values", input_shape=tuple(inputs.shape))
