"""A case whose step is one number throughout ([1000., 1000.]: the shifted scores are [0., 0.]), held by a tensor of
the learner's: never "none of the tensors your code made holds it" (12o's oy-ss-04 and oy-ss-10, false sentences),
but that the numbers prove nothing, that the case alone does not show where the code departs, and a rung 3 that
says so rather than "the line above says at which step"."""


import pytest
import torch

from autograder.checking.departure import find_departure
from autograder.checking.departure import step as declared
from autograder.checking.tensor_trace import INPUT, TracedTensor
from tests.test_symptom_truth import printed


def softmax_shift_undone(x, dim=-1):  # the shift put back: exp(x - c) * exp(c) overflows where exp(x) does
    c = x.max(dim=dim, keepdim=True).values
    e = torch.exp(x - c) * torch.exp(c)
    return e / e.sum(dim=dim, keepdim=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_of_one_number_held_by_the_code_is_never_said_held_by_none(lang, monkeypatch):
    text = printed("softmax_stable", softmax_shift_undone, lang, monkeypatch, hint=3)
    if lang == "en":
        assert ("on this case a tensor of yours has the numbers of the notes' inputs minus their maximum too, though "
                "they prove nothing (many computations give them), so this case alone does not show where your code "
                "departs") in text, text
        assert "holds the notes' inputs minus their maximum" not in text, text
        assert "the line above says what this case shows of your computation" in text, text
        assert "says at which step of the notes" not in text, text
    else:
        assert "所以仅凭这个例子看不出你的代码从哪里开始不同" in text, text
        assert "没有一个等于笔记中的减去最大值之后的输入" not in text, text


def test_the_record_keeps_no_step_where_the_feedback_says_the_case_does_not_show_one():
    """The class report counts what the feedback says: a departure held unproven is no located step."""
    shifted = torch.zeros(2, dtype=torch.float64)
    steps = [declared("maximum", torch.tensor([1000.0], dtype=torch.float64)), declared("shifted", shifted),
             declared("exponentials", torch.ones(2, dtype=torch.float64)),
             declared("sums", torch.tensor([2.0], dtype=torch.float64)),
             declared("division", torch.full((2,), 0.5, dtype=torch.float64))]
    x = torch.full((2,), 1000.0, dtype=torch.float64)
    traced = [TracedTensor(INPUT, x, ()), TracedTensor("max", torch.tensor([1000.0], dtype=torch.float64), (0,)),
              TracedTensor("sub", shifted, (0, 1)), TracedTensor("exp", torch.ones(2, dtype=torch.float64), (2,)),
              TracedTensor("exp", torch.tensor([torch.inf], dtype=torch.float64), (1,)),
              TracedTensor("mul", torch.full((2,), torch.inf, dtype=torch.float64), (3, 4))]
    departure = find_departure(steps, traced, None)
    assert departure.step == "shifted" and departure.held_unproven, departure
    assert departure.located_step == ""
    proven = find_departure(steps[:2], traced[:2], None)  # the shifted scores never made: none holds them
    assert proven.step == "shifted" and proven.located_step == "shifted", proven
