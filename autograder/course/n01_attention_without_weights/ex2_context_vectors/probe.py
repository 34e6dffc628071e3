"""Probes of context_vectors: run the student's objects on a case and return plain data. Imports no reference, judge
or declaration: the grading child holds it."""

from typing import TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import gradient_flow, lookup, plain
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import TensorCase, case_tensor
from autograder.course.shared.records import Namespace

__all__ = ["ContextRecord", "probe_context_vectors"]


class ContextRecord(TypedDict, total=False):
    output: Tensor
    input_changed: bool
    gradient: str  # probing.gradient_flow: "ok", "no_gradient", "not_finite" or "raised"


def probe_context_vectors(namespace: Namespace, case: TensorCase) -> ContextRecord:
    context_vectors = lookup(namespace, "context_vectors")
    inputs = case_tensor(case)
    original = inputs.clone()
    output = plain(context_vectors(inputs))
    return {"output": output, "input_changed": not torch.equal(inputs, original),
            "gradient": gradient_flow(context_vectors, original)[0]}
