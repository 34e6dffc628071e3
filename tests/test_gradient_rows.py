"""A gradient check failing for the cause a value check shows is one row with it (issue 58, item 3).

softmax_stable's from-scratch check judges the gradient on vectors. Where the learner's values are right on its case
but their function's slope is not softmax's ([1000., 1000.] with the shift the wrong way round, or a clamp), the case
beside it (the entries moved by 0.25) shows where their values depart: the same step as the value check's, so one
cause. Where their values depart on the case itself (a nan gradient beside a nan result), that step is read there.
Where a mistake another check proves fails the check alike (an unshifted softmax's nan gradient), it is named. Each
attempt below is written here, in a learner's style, from the notebook's instructions.
"""

import contextlib
import io

import pytest
import torch

from autograder.checking.departure import find_departure, recorded_output
from autograder.checking.probing import own_slopes_later
from autograder.checking.tensor_trace import traced_probe_with_raise
from autograder.course.n01_attention_without_weights.ex1_softmax.declaration import (
    NUDGE,
    neighbour_case,
    softmax_steps,
)
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import case_tensor, probe_softmax_stable_rules
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime

NO_FURTHER_HINT = {"en": "no further hint", "zh": "没有更多提示"}
SAME_REASON = {"en": "for the same reason", "zh": "同样的原因"}
FROM_SCRATCH = {"en": "softmax_stable is written from scratch", "zh": "softmax_stable 是自己实现的"}


def shift_negated(x, dim=-1):
    """Subtracts the maximum, then negates the difference ("shift so the largest is 0", read as max minus x)."""
    largest = x.max(dim=dim, keepdim=True).values
    e = torch.exp(-(x - largest))
    return e / e.sum(dim=dim, keepdim=True)


def clamped_above(x, dim=-1):
    """Keeps exp below overflow by capping the scores instead of shifting them: flat past 60, nan on very negative."""
    e = torch.exp(x.clamp(max=60.0))
    return e / e.sum(dim=dim, keepdim=True)


def maximum_left_unused(x, dim=-1):
    """Computes the row maximum, then exponentiates the raw scores all the same."""
    top = x.max(dim=dim, keepdim=True).values  # noqa: F841 - the learner's leftover
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


def printed(runtime, attempt):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        runtime.check("softmax_stable", attempt, hint=2)
    return output.getvalue()


@pytest.mark.slow  # twelve checks of the exercise, each with its departures traced: over 2 s each
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
@pytest.mark.parametrize("attempt", [shift_negated, clamped_above, maximum_left_unused])
def test_the_gradient_check_is_one_row_with_the_value_check_of_its_cause(attempt, kit, lang, kit_vectors,
                                                                         monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    expectations = (in_notebook.ReferenceExpectations() if kit == "live"
                    else StoredExpectations(lambda: kit_vectors))
    text = printed(NotebookRuntime(expectations), attempt)
    failing = [line for line in text.splitlines() if line.startswith("  ✘")]
    assert len(failing) == 2, text
    assert SAME_REASON[lang] in failing[1] and FROM_SCRATCH[lang] in failing[1], text
    assert NO_FURTHER_HINT[lang] not in text, text


def test_the_neighbour_lies_beside_the_case_in_each_entry():
    case = {"input": "values", "values": [1000.0, 1000.0, -3.0], "dim": -1, "dtype": "float64"}
    near = neighbour_case(case)
    assert near["dim"] == -1 and near["dtype"] == "float64"
    moved = (case_tensor(near) - case_tensor(case)).tolist()
    assert moved == [NUDGE, -NUDGE, NUDGE]


def test_the_probes_own_finite_differences_are_not_read_as_the_learners_steps():
    """On the neighbour of [1000., 1000.] the probe's own slope reads the input's largest |entry| (1000.25), which is
    the notes' maximum there: a clamp computes no maximum, and its departure is the first step, the maximum."""
    near = neighbour_case({"input": "values", "values": [1000.0, 1000.0], "dim": -1})
    steps = softmax_steps(case_tensor(near), -1, stable=True)
    with own_slopes_later():
        record, traced, _raised = traced_probe_with_raise(probe_softmax_stable_rules,
                                                          {"softmax_stable": clamped_above}, near)
    assert traced is not None
    departure = find_departure(steps, traced, recorded_output(record))
    assert departure.step == "maximum" and departure.matched == (), departure
