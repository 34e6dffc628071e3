"""No false sentence at any rung for notebooks 01 and 02 (issue 58): what a learner's run proves, read from tensors
the learner's code made and held when the next op read them.

- A step whose numbers on the case are one entry of 0 or 1 (a softmax over one entry is 1 whatever the code) is
  proven by no tensor: the probe's own `ones_like` seed of backward holds it too, and is no cut of the graph.
- A tensor written into in place (a view of the scores filled) holds other numbers when the next op reads it: what
  that op makes is not "computed from your scores, which match the notes'".
- Under a row whose values are the expected ones along other axes, the last rung does not send the learner to
  "where your result first differs (the values above)".
"""

import contextlib
import io
import time

import pytest
import torch

from autograder.checking.departure import made_many_ways
from autograder.checking.gradient_departure import GradientDeparture, find_gradient_departure
from autograder.checking.tensor_trace import WRITTEN, TensorTrace, TracedTensor
from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime, run_checks
from tests.test_departure import SEED

LANGS = ("en", "zh")


def checked(exercise_id, namespace, lang):
    return run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                      seed=SEED, diagnose=True)


def failing(results):
    return [result for result in results if result.status != "passed"]


def rung_text(result, rung):
    return "\n".join(result.ladder(rung))


def attention_scores(inputs):  # as notebook 01 defines it above the exercise
    return inputs @ inputs.T


# ------------------------------------------------------------------ learner attempts written for this file


def softmax_with_a_guard_in_the_sum(x):  # a small number added to the sums "to be safe": in the graph throughout
    exps = x.exp()
    return exps / (exps.sum(dim=0) + 0.002)


def softmax_from_detached_numbers(x):  # the notes' values, its exponentials outside autograd's graph
    exps = torch.exp(x.detach())
    return exps / exps.sum(dim=0)


def context_vectors_without_self(inputs):  # each token's score with itself zeroed in place before the softmax
    scores = attention_scores(inputs)
    scores.diagonal().zero_()
    return torch.softmax(scores, dim=-1) @ inputs


def context_vectors_without_self_copied(inputs):  # the same numbers, the diagonal taken out into a new tensor
    scores = attention_scores(inputs)
    scores = scores - torch.diag_embed(scores.diagonal())
    return torch.softmax(scores, dim=-1) @ inputs


def context_vectors_shifted_in_place(inputs):  # control: its scores shifted through a slice, every value right
    scores = attention_scores(inputs)
    scores[:] = scores - scores.amax(dim=-1, keepdim=True).detach()
    return torch.softmax(scores, dim=-1) @ inputs


def context_vectors_features_first(inputs):  # the inputs weighed from the other side: (d_in, num_tokens)
    weights = torch.softmax(attention_scores(inputs), dim=-1)
    return inputs.T @ weights


GRAPH_CUT = {"en": "not connected to the input in autograd's graph", "zh": "计算图"}
MATCHING_SCORES = {"en": "computed from your attention scores, which match the notes'", "zh": "与讲义的一致"}


# ------------------------------------------------------------------ a one-entry step proves nothing


def test_one_entry_of_zero_or_one_is_made_many_ways_other_numbers_are_not():
    assert made_many_ways(torch.tensor([1.0])) and made_many_ways(torch.tensor([[0.0]]))
    assert made_many_ways(torch.zeros(3)) and made_many_ways(torch.full((2, 2), 0.25))
    assert not made_many_ways(torch.tensor([0.1353])) and not made_many_ways(torch.tensor([0.2, 0.8]))


def test_the_probes_ones_like_seed_of_backward_is_no_cut_of_the_graph():
    # exp, sum, division recorded by autograd (1.0 / 0.99 here), then the probe's backward seed made "from" the sum
    recorded = dict(connected=True, recorded=True)
    traced = [TracedTensor("input", torch.tensor([-2.0]), (), True, False),
              TracedTensor("exp", torch.tensor([0.1353]), (0,), **recorded),
              TracedTensor("sum", torch.tensor(0.1353), (1,), **recorded),
              TracedTensor("div", torch.tensor([0.99]), (1, 2), **recorded),
              TracedTensor("sum", torch.tensor(0.99), (3,), **recorded),
              TracedTensor("ones_like", torch.tensor(1.0), (4,), False, False)]
    steps = [("exponentials", [torch.tensor([0.1353])], False), ("sums", [torch.tensor([0.1353])], False),
             ("division", [torch.tensor([1.0])], False)]
    assert find_gradient_departure(steps, traced) == GradientDeparture(("exponentials", "sums"), absent="division")


def test_a_guard_added_to_the_sums_is_never_said_to_leave_autograds_graph():
    for lang in LANGS:
        results = failing(checked("softmax_naive", {"softmax_naive": softmax_with_a_guard_in_the_sum}, lang))
        assert results
        for result in results:
            for rung in (1, 2, 3):
                assert GRAPH_CUT[lang] not in rung_text(result, rung), rung_text(result, rung)
            assert result.misconception is None


def test_detached_exponentials_are_still_named_leaving_autograds_graph():
    for lang in LANGS:
        results = failing(checked("softmax_naive", {"softmax_naive": softmax_from_detached_numbers}, lang))
        assert [result.misconception for result in results] == ["gradient_cut"]
        name = {"en": "the computation leaves autograd's graph", "zh": "计算脱离了 autograd 的计算图"}[lang]
        assert name in rung_text(results[0], 2)


# ------------------------------------------------------------------ a tensor written into in place


def test_a_view_filled_in_place_gives_its_base_a_new_entry_that_the_next_op_reads():
    inputs = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    with TensorTrace() as trace:
        scores = inputs @ inputs.T
        scores.diagonal().zero_()
        weights = torch.softmax(scores, dim=-1)
    traced = trace.traced
    softmax_at = max(index for index, entry in enumerate(traced) if entry.op == "softmax")
    [read] = traced[softmax_at].inputs
    assert traced[read].op == WRITTEN
    assert torch.equal(traced[read].value, scores.to(torch.float64))
    assert torch.allclose(traced[softmax_at].value, weights.to(torch.float64))
    # the scores as made, before the fill, stay in the trace: the code did compute them
    assert any(entry.op == "mm" and torch.equal(entry.value, (inputs @ inputs.T).to(torch.float64))
               for entry in traced)


def test_weights_of_scores_zeroed_in_place_are_not_said_made_from_matching_scores():
    for lang in LANGS:
        [shown] = [result for result in failing(checked(
            "context_vectors", {"context_vectors": context_vectors_without_self}, lang)) if result.departure]
        assert catalog.MESSAGES["step.weights"][lang] in shown.departure
        assert MATCHING_SCORES[lang] not in shown.departure, shown.departure
        for rung in (1, 2, 3):
            assert MATCHING_SCORES[lang] not in rung_text(shown, rung)


def test_in_place_edits_of_fresh_tensors_stay_right_and_a_copy_keeps_its_departure():
    for lang in LANGS:
        assert not failing(checked("context_vectors", {"context_vectors": context_vectors_shifted_in_place}, lang))
        [shown] = [result for result in failing(checked(
            "context_vectors", {"context_vectors": context_vectors_without_self_copied}, lang)) if result.departure]
        assert catalog.MESSAGES["step.weights"][lang] in shown.departure


# ------------------------------------------------------------------ values that do not differ are not pointed at


@pytest.mark.slow
@pytest.mark.parametrize("lang", LANGS)
def test_a_row_of_the_right_numbers_on_other_axes_does_not_point_at_where_they_differ(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("context_vectors", context_vectors_features_first,
                                                                   hint=3)
    text = output.getvalue()
    same_numbers = {"en": "the numbers are right", "zh": "数值是对的"}[lang]
    differs = {"en": "first differs from the expected one", "zh": "开始与期望的不同"}[lang]
    assert same_numbers in text and differs not in text, text
    assert catalog.MESSAGES["ladder.nothing_known_beside_departure_in_message"][lang] in text, text


# ------------------------------------------------------------------ an op's inner shape is not the learner's


def context_vectors_of_each_token_alone(inputs):  # each token scored with itself only, through an einsum
    own = torch.einsum("ik,ik->i", inputs, inputs)
    weights = torch.softmax(own, dim=0)
    return weights.unsqueeze(1) * inputs


def context_vectors_of_each_token_alone_summed(inputs):  # the same scores as a product and a sum: a (6,) tensor
    own = (inputs * inputs).sum(dim=1)
    weights = torch.softmax(own, dim=0)
    return weights.unsqueeze(1) * inputs


def test_an_einsums_inner_batched_shape_is_not_said_to_be_the_learners():
    inner = {"en": "has shape (6, 1, 1)", "zh": "(6, 1, 1)"}
    same_row = {"en": "with the same row of", "zh": "同一行"}
    for lang in LANGS:
        [shown] = [result for result in failing(checked(
            "context_vectors", {"context_vectors": context_vectors_of_each_token_alone}, lang)) if result.departure]
        assert catalog.MESSAGES["step.scores"][lang] in shown.departure
        assert inner[lang] not in shown.departure and same_row[lang] in shown.departure, shown.departure
        [summed] = [result for result in failing(checked(
            "context_vectors", {"context_vectors": context_vectors_of_each_token_alone_summed}, lang))
            if result.departure]
        assert catalog.MESSAGES["step.scores"][lang] in summed.departure, summed.departure


# ------------------------------------------------------------------ a changed v2 is told how only where proven


def transfer_then_clear_v2(sa_v1, sa_v2):  # copies right, then zeroes v2's weights "to free them"
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).data.copy_(getattr(sa_v2, name).weight.data.T)
        getattr(sa_v2, name).weight.data.zero_()
    return sa_v1


def transfer_turning_v2_around(sa_v1, sa_v2):  # lays v2's own weights out as v1's, then copies them
    for name in ("W_query", "W_key", "W_value"):
        weight = getattr(sa_v2, name).weight
        weight.data = weight.data.t()
        getattr(sa_v1, name).data.copy_(weight.data)
    return sa_v1


def test_v2_changed_otherwise_than_transposed_is_not_told_of_an_in_place_transpose():
    transpose = {"en": "in-place transpose", "zh": "原地转置"}
    for lang in LANGS:
        [cleared, *_] = failing(checked("transfer_weights", {"load_v2_weights_into_v1": transfer_then_clear_v2},
                                        lang))
        text = "\n".join(cleared.ladder(1) + [cleared.message])
        assert "sa_v2.W_query.weight" in cleared.message and transpose[lang] not in text, text
        [turned, *_] = failing(checked("transfer_weights",
                                       {"load_v2_weights_into_v1": transfer_turning_v2_around}, lang))
        assert transpose[lang] in turned.message, turned.message


def test_a_hostile_loop_of_aliases_written_in_place_ends_the_trace_instead_of_costing_time():
    base = torch.rand(4, 4)
    start = time.monotonic()
    with TensorTrace() as trace:
        aliases = [base.detach() for _ in range(5000)]
        for _ in range(2000):
            base[0].add_(1.0)
    assert time.monotonic() - start < 5 and trace.truncated and len(aliases) == 5000
    with TensorTrace() as trace:  # a few aliases: refreshed, the trace whole
        made = torch.ones(4, 4) * 2
        view = made.view(16)
        made[1].zero_()
        total = view.sum()
    [read] = trace.traced[-1].inputs
    assert not trace.truncated and float(trace.traced[-1].value) == float(total)
    assert trace.traced[read].op == WRITTEN and torch.equal(trace.traced[read].value, view.to(torch.float64))
