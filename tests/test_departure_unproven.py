"""A case whose step is one number throughout ([1000., 1000.]: the shifted scores are [0., 0.]), held by a tensor of
the learner's: never "none of the tensors your code made holds it" (12o's oy-ss-04 and oy-ss-10, false sentences),
but that the numbers prove nothing, that the case alone does not show where the code departs, and a rung 3 that
says so rather than "the line above says at which step"."""

import contextlib
import io

import pytest
import torch

from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


def softmax_shift_undone(x, dim=-1):  # the shift put back: exp(x - c) * exp(c) overflows where exp(x) does
    c = x.max(dim=dim, keepdim=True).values
    e = torch.exp(x - c) * torch.exp(c)
    return e / e.sum(dim=dim, keepdim=True)


def printed(attempt, lang, monkeypatch, hint=3):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("softmax_stable", attempt, hint=hint)
    return output.getvalue()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_of_one_number_held_by_the_code_is_never_said_held_by_none(lang, monkeypatch):
    text = printed(softmax_shift_undone, lang, monkeypatch)
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
