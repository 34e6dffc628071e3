"""One cause, one message where a check's case cannot tell where the code departs (issue 58 point 3): a case whose
numbers prove nothing at a step (a shifted [1000, 1000] is 0 throughout; one entry's sum is its exponential) leaves
that step and the next open (Departure.fits); where another check of the exercise shows the code departing at one
of them, both checks are one cause and one row, led by the check that shows it, whatever order they ran in. A case
that proves a later step closes the question: nothing is folded then. A parameter count is alike: a shortfall
that a buffer or a trainable weight could make up (count_fits) is one cause with a count another module proves
takes the buffers away."""

import pytest
import torch

from autograder.checking.count_difference import count_fact, count_fits
from autograder.checking.departure import find_departure, step
from autograder.checking.tensor_trace import INPUT, TracedTensor
from tests.check_helpers import failing_rows
from tests.test_departure_one_cause import printed

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


def count_less_every_buffer(module):
    """Takes the buffers away from the trainable total, believing parameters() counted them."""
    trainable = sum(parameter.numel() for parameter in module.parameters() if parameter.requires_grad)
    return trainable - sum(buffer.numel() for buffer in module.buffers())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "attempt"), [("softmax_naive", softmax_naive_sum_from_the_second),
                                                      ("softmax_stable", softmax_stable_without_exp)])
def test_a_case_that_leaves_the_step_open_is_folded_under_the_check_that_shows_it(exercise_id, attempt, lang,
                                                                                 monkeypatch):
    text = printed(exercise_id, attempt, lang, monkeypatch)
    failing = failing_rows(text)
    assert text.count(DEPARTS[lang]) == 1, text
    assert UNSHOWN[lang] not in text, text
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_count_whose_shortfall_a_weight_could_make_is_folded_under_the_count_that_proves_the_buffers(
        lang, monkeypatch):
    text = printed("parameter_counts", count_less_every_buffer, lang, monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text


def test_a_shortfall_of_the_buffers_fits_them_taken_where_a_weight_makes_it_too():
    frozen = {"trainable": [["W_key", 16], ["W_value", 12]], "uncounted": [["mask", 16, "buffer"]], "rebuilt": []}
    assert count_fact(12, 28, frozen) == "" and count_fits(12, 28, frozen) == ("taken",)
    assert count_fits(13, 28, frozen) == () and count_fits(40, 28, frozen) == ()


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
