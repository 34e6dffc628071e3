"""Probes of notebook 01 (softmax_naive, softmax_stable, context_vectors): call the student's function on the
case's input and report plain data. The judges are in autograder.course.checks.n01_attention_without_weights.
"""


import inspect

import torch

from autograder.checking.probing import called_functions, gradient_flow, gradient_of, lookup, plain, rand
from autograder.course.probes.cases import Namespace, TensorCase
from autograder.course.probes.inputs import dtype_of, notes_inputs
from autograder.course.probes.records import ContextRecord, SoftmaxRecord


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
    original = x.clone()
    args = (x,) if "dim" not in case else (x, case["dim"])
    output, calls = called_functions(softmax, *args)
    gradient, _error, input_gradient = gradient_of(lambda through: softmax(through, *args[1:]), original)
    data: SoftmaxRecord = {"output": plain(output), "calls": calls, "input_changed": not torch.equal(x, original),
                           "default_dim": default_of(softmax, "dim"), "gradient": gradient}
    if input_gradient is not None:
        data["input_gradient"] = input_gradient
    return data


def default_of(function, parameter):
    """The int default of `function`'s `parameter`, or None (no such parameter, no default, not an int)."""
    try:
        default = inspect.signature(function).parameters[parameter].default
    except (KeyError, TypeError, ValueError):
        return None
    return default if isinstance(default, int) and not isinstance(default, bool) else None


def probe_softmax_naive(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax("softmax_naive", namespace, case)


def probe_softmax_stable(namespace: Namespace, case: TensorCase) -> SoftmaxRecord:
    return probe_softmax("softmax_stable", namespace, case)


def probe_context_vectors(namespace: Namespace, case: TensorCase) -> ContextRecord:
    context_vectors = lookup(namespace, "context_vectors")
    inputs = case_tensor(case)
    original = inputs.clone()
    output = plain(context_vectors(inputs))
    return {"output": output, "input_changed": not torch.equal(inputs, original),
            "gradient": gradient_flow(context_vectors, original)[0]}

