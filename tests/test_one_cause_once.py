"""One message per cause across an exercise's checks (issue 58 point 3): a line that adds nothing new is said once per
table, not under every check it would follow; and beside a row that locates the step where the learner's computation
departs from the notes, a failure that step is not proven on is never told "no known mistake reproduces this
failure". Two causes stay two rows: nothing is folded that is not proven the same."""

import contextlib
import dataclasses
import io
import math

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import FAILED, Cause, CheckResult, Exercise
from autograder.checking.feedback import table
from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime

NO_KNOWN = {"en": "no known mistake reproduces", "zh": "没有哪个已知的错误能重现"}
NOTHING_MORE = {"en": "no further hint: ", "zh": "没有更多提示："}
SAME_REASON = {"en": "more check", "zh": "项检查因同样的原因未通过"}
BESIDE = "ladder.nothing_known_beside_departure"
EXERCISE = Exercise("demo", "00_demo", ("f",), {"en": "Demo", "zh": "示例"}, points=4)


def failing(index, key, *, departure="", departure_step=""):
    return CheckResult(f"demo.{index}", "demo", 0.0, 1.0, FAILED, None, f"check {index}: {key}", False,
                       title=f"check {index}", cause=Cause(None, key, ((f"n{index}", str(index)),)),
                       departure=departure, departure_step=departure_step)


def located(index, step, text):
    return failing(index, f"values.differ_{step}", departure=f"where it departs — {text}", departure_step=step)


def said(text, lang):
    return [line.strip() for line in text.splitlines() if line.strip().startswith(NOTHING_MORE[lang])]


# ---------------------------------------------------------------- the table, from results


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_beside_a_located_step_an_unproven_failure_is_not_told_no_known_mistake_and_is_said_once(lang):
    results = [located(0, "weights", "the weights sum over the queries"), failing(1, "contract.a"),
               failing(2, "contract.b"), failing(3, "contract.c")]
    text = table(EXERCISE, results, lang, hidden=False, messages=catalog.MESSAGES, rung=2)
    assert NO_KNOWN[lang] not in text, text
    assert said(text, lang) == [catalog.MESSAGES[f"{BESIDE}_in_message"][lang]], text
    # Each unproven failure keeps a row of its own: nothing says it fails for the same reason.
    assert len([line for line in text.splitlines() if line.startswith("  ✘")]) == 4, text
    assert SAME_REASON[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_a_located_step_the_failures_say_no_known_mistake_once(lang):
    results = [failing(1, "contract.a"), failing(2, "contract.b")]
    text = table(EXERCISE, results, lang, hidden=False, messages=catalog.MESSAGES, rung=2)
    assert said(text, lang) == [catalog.MESSAGES["ladder.nothing_known_in_message"][lang]], text
    assert catalog.MESSAGES[f"{BESIDE}_in_message"][lang] not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_steps_located_are_two_causes_in_two_rows(lang):
    """Two different departures in one attempt stay two messages; rung 3 says its nothing-new line once."""
    first, second = (located(0, "weights", "the weights sum over the queries"),
                     located(1, "context", "the context vectors are the inputs"))
    text = table(EXERCISE, [first, second], lang, hidden=False, messages=catalog.MESSAGES, rung=2)
    assert first.departure in text and second.departure in text, text
    assert SAME_REASON[lang] not in text and NOTHING_MORE[lang] not in text, text
    top = table(EXERCISE, [first, second], lang, hidden=False, messages=catalog.MESSAGES, rung=3)
    assert said(top, lang) == [catalog.MESSAGES["ladder.departure_stated"][lang]], top


def test_a_graded_table_says_no_nothing_new_line():
    results = [located(0, "weights", "the weights sum over the queries"), failing(1, "contract.a")]
    graded = table(EXERCISE, results, "en", hidden=True, messages=catalog.MESSAGES, rung=2)
    assert NOTHING_MORE["en"] not in graded


def test_a_named_table_keeps_its_own_line():
    named = dataclasses.replace(failing(0, "values.differ"), misconception="m", mistake="reproduced mistake — m",
                                cause=Cause("m", "values.differ", ()))
    text = table(EXERCISE, [named, failing(1, "contract.a"), located(2, "weights", "w")], "en", hidden=False,
                 messages=catalog.MESSAGES, rung=2)
    assert catalog.MESSAGES["ladder.nothing_known_besides_in_message"]["en"] in text
    assert catalog.MESSAGES[f"{BESIDE}_in_message"]["en"] not in text


# ---------------------------------------------------------------- learner attempts, written for these tests


class HandsBackTheWeights(nn.Module):
    """Causal attention written with einsum whose forward returns the weight matrix it built."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(k.shape[-1])
        s = s.masked_fill(self.mask[:n, :n] == 1, float("-inf"))
        w = self.dropout(torch.softmax(s, dim=-1))
        _context = w @ v
        return w


def shift_by_smallest(x, dim=-1):
    """A stable softmax that shifts by each row's smallest entry."""
    shifted = x - torch.amin(x, dim=dim, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=dim, keepdim=True)


def shift_by_smallest_in_place(x, dim=-1):
    """The same shift, written into the caller's tensor: the in-place row is not proven to come from that step."""
    x -= torch.amin(x, dim=dim, keepdim=True)
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def printed(exercise_id, attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, attempt, hint=2)
    return output.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "attempt"), [("causal_attention", HandsBackTheWeights),
                                                      ("softmax_stable", shift_by_smallest_in_place)])
def test_a_learner_with_a_located_step_reads_no_unknown_mistake_and_one_nothing_new_line(exercise_id, attempt,
                                                                                         lang, monkeypatch):
    text = printed(exercise_id, attempt, lang, monkeypatch)
    assert NO_KNOWN[lang] not in text, text
    assert said(text, lang) == [catalog.MESSAGES[f"{BESIDE}_in_message"][lang]], text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_failure_the_located_step_also_explains_is_folded_under_it(lang, monkeypatch):
    # The gradient check departs at the same step (its neighbouring case): one row, nothing "unproven" beside it.
    text = printed("softmax_stable", shift_by_smallest, lang, monkeypatch)
    assert NO_KNOWN[lang] not in text, text
    assert said(text, lang) == [], text
    assert SAME_REASON[lang] in text, text


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "answer"), [("causal_attention", solutions.CausalAttention),
                                                     ("softmax_stable", solutions.softmax_stable)])
def test_the_notes_answer_gets_no_nothing_new_line(exercise_id, answer, monkeypatch):
    text = printed(exercise_id, answer, "en", monkeypatch)
    assert "✘" not in text and NOTHING_MORE["en"] not in text, text
