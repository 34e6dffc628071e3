"""One cause, one message where a check's case cannot tell where the code departs (issue 58 point 3): a case whose
numbers prove nothing at a step (a shifted [1000, 1000] is 0 throughout; one entry's sum is its exponential) leaves
that step and the next open (Departure.fits); where another check of the exercise shows the code departing at one
of them, both checks are one cause and one row, led by the check that shows it, whatever order they ran in. A case
that proves a later step closes the question: nothing is folded then."""

import contextlib
import io

import pytest
import torch

from autograder.checking.departure import find_departure, step
from autograder.checking.tensor_trace import INPUT, TracedTensor
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime

SAME_REASON = {"en": "more check", "zh": "项检查因同样的原因未通过"}
DEPARTS = {"en": "where it departs", "zh": "从哪里开始不同"}
UNSHOWN = {"en": "does not show where", "zh": "看不出你的代码从哪里开始不同"}


# ---------------------------------------------------------------- learner attempts, written for these tests


def softmax_naive_sum_from_the_second(x):
    """Sums every exponential after the first (an off-by-one in the loop): one entry sums to nothing at all."""
    exps = torch.exp(x)
    denominator = 0
    for index in range(1, x.shape[0]):
        denominator = denominator + exps[index]
    return exps / denominator


def softmax_stable_without_exp(x, dim=-1):
    """Shifts by the maximum, then normalises by the shifted scores' total size: no exponentials at all."""
    shifted = x - torch.amax(x, dim=dim, keepdim=True)
    return shifted / shifted.abs().sum(dim=dim, keepdim=True)


def printed(exercise_id, attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, attempt, hint=2)
    return output.getvalue()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "attempt"), [("softmax_naive", softmax_naive_sum_from_the_second),
                                                      ("softmax_stable", softmax_stable_without_exp)])
def test_a_case_that_leaves_the_step_open_is_folded_under_the_check_that_shows_it(exercise_id, attempt, lang,
                                                                                 monkeypatch):
    text = printed(exercise_id, attempt, lang, monkeypatch)
    failing_rows = [line for line in text.splitlines() if line.startswith("  ✘")]
    assert text.count(DEPARTS[lang]) == 1, text
    assert UNSHOWN[lang] not in text, text
    assert len(failing_rows) == 2 and SAME_REASON[lang] in failing_rows[1], text


# ---------------------------------------------------------------- Departure.fits, on traces written here


def traced(*values, inputs=1):
    """A trace of `values` in the order made, each read from the one before (the first `inputs` are inputs)."""
    return [TracedTensor(value=value, op=INPUT if index < inputs else "op",
                         inputs=() if index < inputs else (index - 1,))
            for index, value in enumerate(values)]


def softmax_steps(x):
    exps = torch.exp(x)
    sums = exps.sum(dim=0)
    return [step("exponentials", exps), step("sums", sums), step("division", exps / sums)]


def test_a_sum_equal_to_the_exponential_leaves_the_sums_and_the_division_open():
    x = torch.tensor([0.3])
    found = find_departure(softmax_steps(x), traced(x, torch.exp(x), torch.exp(x) / 0), torch.exp(x) / 0)
    assert found.step == "division" and found.fits == ("sums", "division")


def test_a_case_that_proves_the_sums_leaves_only_the_division_open():
    x = torch.tensor([0.3, -1.0, 2.0])
    exps = torch.exp(x)
    found = find_departure(softmax_steps(x), traced(x, exps, exps.sum(), exps / 2), exps / 2)
    assert found.step == "division" and found.fits == ("division",)


def test_a_step_proven_after_the_departing_one_leaves_nothing_open():
    x = torch.tensor([0.3, -1.0, 2.0])
    exps = torch.exp(x)
    # The exponentials made in another way the trace cannot match (doubled), then the right division from them.
    right = exps / exps.sum()
    found = find_departure(softmax_steps(x), traced(x, exps * 2, (exps * 2).sum(), right), right)
    assert found.step == "exponentials" and found.fits == ()
