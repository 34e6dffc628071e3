"""A mistake of the table is named only where it is proven, never because another mistake gives the same symptom
(issue 58, item 4): a softmax that shifts its scores by the wrong amount overflows on large scores as one that does
not shift them at all does, and a forward whose attention weights leave autograd's graph starves a parameter of its
gradient as a detached parameter does. Each is told apart by what the learner's own code does: its output on the
case where only an unshifted softmax overflows (NEAR_OVERFLOW), and whether forward reads the parameter itself inside
the graph.

The attempts are written here as a learner would write them; the real mistakes are still named."""

import pytest
import torch
from torch import nn

from autograder.course import catalog
from autograder.course.mistakes import MISTAKES
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks

MISTAKES_BY_ID = {entry.id: entry for entry in MISTAKES}
DOWNSTREAM = {"en": "though your forward uses it inside autograd's graph",
              "zh": "尽管你的 forward 是在 autograd 的计算图之内使用它的"}


def failing(exercise_id, name, student, lang="en"):
    """The failing public checks and previews of check(...) with hints, diagnosed as a learner reads them."""
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, {name: student}, lang,
                         include_hidden=False, seed=in_notebook.DEFAULT_SEED, diagnose=True)
    return {result.id: result for result in results if result.status != "passed"}


# ---------------------------------------------------------------------------------------------
# softmax_stable: shifted by something other than the maximum


def softmax_shifted_by_argmax(x, dim=-1):  # the position of the largest score, not its value
    largest_at = x.max(dim=dim, keepdim=True).indices
    exps = torch.exp(x - largest_at)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_shifted_by_first_score(x, dim=-1):  # a shift by the row's first score: stable enough here, and right
    exps = torch.exp(x - x.narrow(dim, 0, 1))
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_not_shifted(x, dim=-1):  # the real mistake: no shift at all
    exps = x.exp()
    return exps / exps.sum(dim, keepdim=True)


def softmax_right(x, dim=-1):
    exps = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return exps / exps.sum(dim=dim, keepdim=True)


def test_a_softmax_shifted_by_the_position_of_the_maximum_is_not_named_an_unshifted_one():
    for lang in ("en", "zh"):
        shown = failing("softmax_stable", "softmax_stable", softmax_shifted_by_argmax, lang)
        assert shown  # it overflows on [1000., 1000.], as an unshifted softmax does
        assert all(result.misconception is None for result in shown.values())
        name = MISTAKES_BY_ID["naive_softmax_overflow"].name[lang]
        assert not any(name in line for result in shown.values() for line in result.ladder(3))
        # Rung 2 says where its run departs, read from its own tensors.
        notes = shown["softmax_stable.notes"]
        assert catalog.MESSAGES["step.maximum"][lang] in notes.departure


def test_an_unshifted_softmax_is_still_named():
    for lang in ("en", "zh"):
        shown = failing("softmax_stable", "softmax_stable", softmax_not_shifted, lang)
        assert shown["softmax_stable.notes"].misconception == "naive_softmax_overflow"
        assert shown["softmax_stable.notes"].mistake.endswith(MISTAKES_BY_ID["naive_softmax_overflow"].name[lang])


def test_softmaxes_that_shift_enough_lose_nothing_and_are_named_nothing():
    for student in (softmax_right, softmax_shifted_by_first_score):
        assert not any(result.misconception for result in failing("softmax_stable", "softmax_stable",
                                                                  student).values())
    assert not failing("softmax_stable", "softmax_stable", softmax_right)


# ---------------------------------------------------------------------------------------------
# self_attention_v1 / v2: the gradient cut after the parameter, not at it


class V1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))


class V1WeightsDetached(V1):  # "the weights are only a lookup": the softmax's result taken out of the graph
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights.detach() @ values


class V1ScoresWithoutGradients(V1):  # the scores computed from the (in-graph) queries with gradients off
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        with torch.no_grad():
            scores = queries @ keys.T
        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values


class V1QueryParameterDetached(V1):  # the real mistake: the parameter itself read outside the graph
    def forward(self, x):
        queries, keys, values = x @ self.W_query.detach(), x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class V1QueryParameterData(V1):  # the real mistake, through .data
    def forward(self, x):
        queries, keys, values = x @ self.W_query.data, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class V1Right(V1):
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


def test_weights_cut_from_the_graph_name_the_step_not_the_parameter():
    for student in (V1WeightsDetached, V1ScoresWithoutGradients):
        for lang in ("en", "zh"):
            shown = failing("self_attention_v1", "SelfAttention_v1", student, lang)
            properties = shown["self_attention_v1.properties.preview"]
            assert properties.misconception == "forward_step_detached", student.__name__
            assert DOWNSTREAM[lang] in properties.message and "W_query" in properties.message
            parameter_name = MISTAKES_BY_ID["parameter_detached"].name[lang]
            assert not any(parameter_name in line for result in shown.values() for line in result.ladder(3))
            assert properties.mistake.endswith(MISTAKES_BY_ID["forward_step_detached"].name[lang])


def test_a_parameter_read_outside_the_graph_is_still_named_so():
    for student in (V1QueryParameterDetached, V1QueryParameterData):
        shown = failing("self_attention_v1", "SelfAttention_v1", student)
        properties = shown["self_attention_v1.properties.preview"]
        assert properties.misconception == "parameter_detached", student.__name__
        assert DOWNSTREAM["en"] not in properties.message


def test_a_right_forward_is_told_nothing_of_the_graph():
    assert not failing("self_attention_v1", "SelfAttention_v1", V1Right)


class V1ReadInGraphThenDetached(V1):  # reads W_query inside the graph once, for nothing; the output: a detached copy
    def forward(self, x):
        _unused = self.W_query * 1.0
        queries, keys, values = x @ self.W_query.detach(), x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class V1HidesItsReads(V1):  # torch functions switched off around its projections: no read of W_query is seen
    def forward(self, x):
        with torch._C.DisableTorchFunction():
            queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights.detach() @ values


def test_the_downstream_sentence_needs_every_read_of_the_parameter_inside_the_graph():
    """A hostile or muddled forward gets the parameter's name as before, never the claim that forward uses it inside
    the graph: one read outside it, or reads no recorder saw, prove no cut further down."""
    for student in (V1ReadInGraphThenDetached, V1HidesItsReads):
        shown = failing("self_attention_v1", "SelfAttention_v1", student)
        properties = shown["self_attention_v1.properties.preview"]
        assert properties.misconception != "forward_step_detached", student.__name__
        assert DOWNSTREAM["en"] not in properties.message


# ---------------------------------------------------------------------------------------------
# Scores laid out keys by queries: three spellings, one name, advice true of each


class V1KeysFirst(V1):  # the operands of the product swapped
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(keys @ queries.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


class V1ScoresTransposed(V1):  # the notes' product, transposed afterwards
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax((queries @ keys.T).T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


class V1EinsumLabelsSwapped(V1):  # queries first in the einsum, its output labels key-by-query
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(torch.einsum("qd,kd->kq", queries, keys) / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_scores_laid_out_keys_by_queries_get_one_name_and_advice_that_presumes_no_operand_order(lang):
    """Swapped operands, a transposed product and swapped einsum labels give the same numbers: the name is proven
    by them, and what rung 3 says to change speaks of the scores' rows and columns, never of a product's left side
    (the einsum's queries are already first)."""
    advice = set()
    for student in (V1KeysFirst, V1ScoresTransposed, V1EinsumLabelsSwapped):
        shown = failing("self_attention_v1", "SelfAttention_v1", student, lang)
        named = [result for result in shown.values() if result.misconception == "query_key_swapped"]
        assert named, (student.__name__, {i: r.message for i, r in shown.items()})
        lines = named[0].ladder(3)
        assert not any(word in line for line in lines for word in ("left of the product", "放在左边")), lines
        advice.add(lines[-1])
    assert len(advice) == 1, advice
