"""Probes and judges run under the grader's torch settings: a notebook cell that switches gradients off, changes the
default dtype or device, or asks for deterministic algorithms costs correct code nothing, and the notebook gets its
own settings back afterwards."""

import types

import pytest
import torch

from attnkit import solutions
from autograder.checking import probing
from autograder.checking.check_types import PASSED
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.running.runner import DEFAULT_SEED, cases_for, run_exercise

SETTINGS = {
    "no_grad": (torch.set_grad_enabled, False, torch.is_grad_enabled, True),
    "float64": (torch.set_default_dtype, torch.float64, torch.get_default_dtype, torch.float32),
    "deterministic": (torch.use_deterministic_algorithms, True, torch.are_deterministic_algorithms_enabled, False),
}


@pytest.fixture(params=sorted(SETTINGS))
def student_setting(request):
    """A notebook cell's global setting, undone after the test whatever happens."""
    setter, value, getter, default = SETTINGS[request.param]
    setter(value)
    try:
        yield getter, value
    finally:
        setter(default)


def reference_namespace(exercise):
    return {name: getattr(solutions, name) for name in exercise.names}


def test_correct_code_keeps_every_point_whatever_a_cell_set(student_setting):
    getter, value = student_setting
    lost = {}
    for exercise in EXERCISES:
        results = run_exercise(exercise.id, reference_namespace(exercise), include_hidden=True, lang="en")
        lost.update({result.id: result.message for result in results if result.status != PASSED})
        assert getter() == value, f"{exercise.id}: the notebook's setting was not given back"
    assert not lost, lost


def test_without_the_grader_settings_a_gradient_check_would_fail():
    """The guard is what makes the difference: the properties probe itself, run under no_grad, sees no gradient."""
    check = catalog.CHECKS_BY_ID["causal_attention.properties"]
    case = cases_for(check, DEFAULT_SEED)[0]
    with torch.no_grad():
        data = check.probe({"CausalAttention": solutions.CausalAttention}, case)
    assert all(size is None for size in data["gradients"].values())


def test_a_default_device_a_cell_set_is_the_cpu_while_grading_and_back_after():
    torch.set_default_device("meta")
    try:
        with probing.grader_torch_state():
            assert torch.empty(1).device.type == "cpu"
        assert torch.empty(1).device.type == "meta"
    finally:
        torch.set_default_device(None)


@pytest.mark.parametrize("entered", [None, "meta"])
def test_the_default_device_is_read_where_torch_before_2_3_keeps_it(monkeypatch, entered):
    # torch 2.0-2.2 have no torch.get_default_device (the student kit runs under the learner's torch): the grader reads
    # the device of the context torch.set_default_device entered, torch._GLOBAL_DEVICE_CONTEXT (None: the CPU).
    context = None if entered is None else types.SimpleNamespace(device=torch.device(entered))
    monkeypatch.setattr(probing, "_get_default_device", None)
    monkeypatch.setattr(torch, "_GLOBAL_DEVICE_CONTEXT", context, raising=False)
    assert probing._default_device() == torch.device(entered or "cpu")
