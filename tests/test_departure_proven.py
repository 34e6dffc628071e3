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

from autograder.checking.departure import STEPS, Departure, find_departure, recorded_output, step
from autograder.checking.step_relations import permuted_axis
from autograder.checking.tensor_trace import LIFTED, TensorTrace, TracedTensor, traced_probe
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.runner import cases_for
from tests.test_departure_how import SEED, kinds, lines, traced_departure
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


# ------------------------------------------------------------------ a degenerate tensor proves no axis


def softmax_stable_elementwise_maximum(x, dim=-1):
    """The reference's softmax_stable with torch.maximum against 0 for the maximum along dim: on the notes'
    all-positive scores every shifted score is 0, so the result is 1/6 everywhere."""
    shifted = x - torch.maximum(x, torch.zeros_like(x))
    exp = torch.exp(shifted)
    return exp / exp.sum(dim=dim, keepdim=True)


def test_a_uniform_result_is_not_said_to_sum_to_one_along_another_dimension():
    departure = traced_departure("softmax_stable.notes", softmax_stable_elementwise_maximum)
    assert departure.step == "maximum", departure
    assert "sums_axis" not in kinds(departure), departure.facts
    text = lines(departure)
    assert "along dimension 0" not in text["en"] and "sums to 1" not in text["en"], text
    assert "沿第 0 个维度加起来等于 1" not in text["zh"], text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_rung_says_a_uniform_result_normalises_another_axis(monkeypatch, lang):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    texts = [printed("softmax_stable", softmax_stable_elementwise_maximum, hint=rung) for rung in (1, 2, 3)]
    assert all("✘" in text for text in texts), texts
    false = {"en": "sums to 1 along dimension 0", "zh": "沿第 0 个维度加起来等于 1"}[lang]
    assert all(false not in text for text in texts), texts


SCORES = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 1.0, 1.0]], dtype=torch.float64)


def weights_departure(theirs: torch.Tensor, returned: bool):
    """The departure of a learner's weights `theirs` made from the notes' scores: as the tensor in the weights'
    place, or (`returned`) as the result their function returns, made out of the trace's sight."""
    traced = [TracedTensor("mm", SCORES, ())] + ([] if returned else [TracedTensor("softmax", theirs, (0,))])
    return find_departure([step("scores", SCORES), step("weights", SCORES.softmax(dim=1), ordered=True)], traced,
                          theirs if returned else None)


@pytest.mark.parametrize("returned", [False, True])
def test_a_real_wrong_axis_is_still_said_with_its_axis(returned):
    """Non-degenerate weights normalised along the other dimension: theirs sum to 1 along 0 and not along 1."""
    departure = weights_departure(SCORES.softmax(dim=0), returned)
    assert (departure.step, kinds(departure)) == ("weights", ["sums_axis"]), departure
    assert (departure.facts[0].fields["axis"], departure.facts[0].fields["expected_axis"]) == (0, 1)
    assert ("sums to 1 along dimension 0; in the notes' attention weights, the entries sum to 1 along dimension 1"
            in lines(departure)["en"])


@pytest.mark.parametrize("returned", [False, True])
def test_a_uniform_tensor_against_weights_says_no_axis(returned):
    departure = weights_departure(torch.full((3, 3), 1 / 3, dtype=torch.float64), returned)
    assert departure.step == "weights" and "sums_axis" not in kinds(departure), departure.facts
    assert "along dimension" not in lines(departure)["en"], lines(departure)


def _close(got, expected):
    return got.shape == expected.shape and bool(torch.allclose(got, expected, atol=1e-6))


def test_a_reordering_two_dimensions_give_alike_names_neither():
    """A circulant matrix: its rows shifted down by one are its columns shifted left by one."""
    circulant = torch.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [2.0, 3.0, 1.0]], dtype=torch.float64)
    shifted = circulant.roll(1, dims=0)
    assert _close(shifted, circulant.roll(-1, dims=1))
    assert permuted_axis(shifted, circulant, _close) is None
    plain = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0], [8.0, 6.0, 9.0]], dtype=torch.float64)
    assert permuted_axis(plain.roll(1, dims=0), plain, _close) == (0, False)


def test_a_tensor_summing_to_one_along_two_other_dimensions_names_neither():
    """Weights of three dimensions whose slices along the last are doubly stochastic: they sum to 1 along dimension 0
    and along 1 alike, and not along the notes' last: which axis the code normalised is not proven."""
    scores = torch.arange(8, dtype=torch.float64).reshape(2, 2, 2) / 3
    theirs = torch.stack([torch.full((2, 2), 0.5, dtype=torch.float64),
                          torch.tensor([[0.3, 0.7], [0.7, 0.3]], dtype=torch.float64)], dim=-1)
    traced = [TracedTensor("mm", scores, ()), TracedTensor("softmax", theirs, (0,))]
    departure = find_departure([step("scores", scores), step("weights", scores.softmax(dim=-1), ordered=True)],
                               traced, None)
    assert departure.step == "weights" and "sums_axis" not in kinds(departure), departure.facts
