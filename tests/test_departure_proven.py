"""Rung 2 says of a learner's code only what their own run proves (issue 58, item 5).

Two sentences were false on an independent set of learner attempts (tests/evalsets/learners_2026_12c):
- "none of the tensors your code made on this case holds it" of exponentials the code holds, rebuilt by
  `torch.tensor` from Python numbers: the trace did not see a tensor made from Python data (autograder.checking.
  tensor_trace records it now, as made from no traced tensor);
- "the result your function returns sums to 1 along dimension 0, the notes' ... along dimension 1" of a result of
  one number throughout (1/6 everywhere), which sums to 1 along both: a degenerate tensor proves nothing of the axis
  (the describers of autograder.checking.step_relations and departure say an axis only where no other fits).

The attempts are written here as near-copies of the reference with one change; each test fails without the fix.
"""

import math

import pytest
import torch

from autograder.checking.departure import STEPS, Departure, find_departure, recorded_output
from autograder.checking.tensor_trace import LIFTED, TensorTrace, traced_probe
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.runner import cases_for
from tests.test_departure_how import SEED, lines
from tests.test_true_sentences import printed

# ------------------------------------------------------------------ a tensor made from Python numbers is seen


def softmax_exponentials_from_python(x):
    """The reference's softmax_naive with its exponentials rebuilt from Python floats (float32, outside the graph)."""
    exps = torch.tensor([math.exp(v) for v in x.tolist()])
    return exps / exps.sum(dim=0)


def softmax_exponentials_minus_one_from_python(x):
    """The same, with e^x - 1 for the exponentials: it does depart there."""
    exps = torch.tensor([math.exp(v) - 1 for v in x.tolist()])
    return exps / exps.sum(dim=0)


def softmax_naive_right(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def test_a_tensor_made_from_python_numbers_is_traced_as_made_from_no_traced_tensor():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    with torch.no_grad(), TensorTrace() as trace:
        exps = torch.tensor([math.exp(v) for v in x.tolist()], dtype=torch.float64)
        exps / exps.sum()  # noqa: B018 - the ops the trace records
    assert trace.traced[0].op == LIFTED and trace.traced[0].inputs == (), trace.traced
    assert torch.equal(trace.traced[0].value, x.exp())
    assert [entry.op for entry in trace.traced[1:]] == ["sum", "div"]
    assert trace.traced[1].inputs == (0,)


def vector_departures(check_id: str, function) -> list[Departure]:
    """The departure of `function` on each case of the public check `check_id` whose input is a vector of two
    entries or more (on one entry the sum is the exponential: the sum's tensor holds both steps)."""
    exercise = next(e for e in in_notebook.EXERCISES if check_id.startswith(e.id + "."))
    check = next(check for check in catalog.checks_of(exercise.id, include_hidden=False) if check.id == check_id)
    probe = resolve(in_notebook._runnable(check, SEED).probe)
    found = []
    for case in cases_for(check, SEED):
        record, traced = traced_probe(probe, exercise.namespace((function,)), case)
        output = recorded_output(record)
        if "error" not in record and output is not None and output.dim() == 1 and output.numel() > 1:
            found.append(find_departure(check.expect(record, case)[STEPS], traced, output))
    return found


def test_exponentials_rebuilt_from_python_numbers_are_found_where_the_code_holds_them():
    departures = vector_departures("softmax_naive.random.preview", softmax_exponentials_from_python)
    assert departures
    # Every step's value is there (the dtype and the gradient are what fail).
    assert all(departure.step is None for departure in departures), departures


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_rung_says_the_code_made_no_tensor_holding_exponentials_it_holds(monkeypatch, lang):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    texts = [printed("softmax_naive", softmax_exponentials_from_python, hint=rung) for rung in (1, 2, 3)]
    assert all("✘" in text for text in texts), texts
    false = {"en": "none of the tensors your code made", "zh": "没有一个等于"}[lang]
    assert all(false not in text for text in texts), texts
    # What is true is still said: the gradient does not reach the input.
    graph = {"en": "leaves autograd's graph", "zh": "脱离了 autograd 的计算图"}[lang]
    assert graph in texts[1], texts[1]


def test_exponentials_from_python_numbers_that_differ_still_depart_there():
    departures = vector_departures("softmax_naive.random.preview", softmax_exponentials_minus_one_from_python)
    assert departures and all((departure.matched, departure.step) == ((), "exponentials")
                              for departure in departures), departures
    assert "none of the tensors your code made on this case holds it" in lines(departures[0])["en"]


def test_a_right_softmax_departs_nowhere():
    departures = vector_departures("softmax_naive.random.preview", softmax_naive_right)
    assert departures and all(departure.step is None for departure in departures), departures
