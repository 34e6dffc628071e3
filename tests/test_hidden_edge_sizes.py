"""What a public check shows, hidden grading grades on every draw: an edge size the public checks (previews included)
use, one token above all, is in the hidden checks' cases for every grading seed, not only for the seeds that happen
to draw it; and no hidden case has an edge size that no public case shows. Code that drops an axis on one token
(or on a batch of one) fails the preview and loses points at grading alike.

The edges are read from the cases themselves, not listed by hand: every size a case declares that is 1 (batch,
num_tokens, num_heads, head_dim, d_model, a scores tensor's axis), num_tokens at context_length, and a padding mask's
rows with one padded or one real token."""

import random
from collections.abc import Iterable

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from tests.check_helpers import results_by_id, score

GRADING_SEEDS = range(40)  # many more seeds than a draw of 1 to 5 tokens needs to miss one token

# Whole numbers a case holds that are no size: seeds, a position or head to look at, a softmax's dim.
NOT_SIZES = frozenset({"seed", "init_seed", "loss_seed", "position", "head", "dim"})


def edge_sizes(case: object) -> set[tuple[str, str]]:
    """The edge sizes one case declares: each size of 1, num_tokens at context_length, a mask row padding one token
    or keeping one."""
    if not isinstance(case, dict):
        return set()
    edges = {(key, "1") for key, value in case.items()
             if key not in NOT_SIZES and type(value) is int and value == 1}  # type(): a bool is no size
    edges |= {(f"shape[{axis}]", "1") for axis, size in enumerate(case.get("shape") or []) if size == 1}
    if "context_length" in case and case.get("num_tokens") == case["context_length"]:
        edges.add(("num_tokens", "context_length"))
    for row in case.get("attention_mask") or []:
        edges |= {("padded tokens", "1")} if list(row).count(0) == 1 else set()
        edges |= {("real tokens", "1")} if list(row).count(1) == 1 else set()
    return edges


def edges_of(cases: Iterable[object]) -> set[tuple[str, str]]:
    return {edge for case in cases for edge in edge_sizes(case)}


def public_edges(exercise_id: str) -> set[tuple[str, str]]:
    return edges_of(case for check in catalog.checks_of(exercise_id, include_hidden=False)
                    for case in check.cases(random.Random(0)))


def hidden_edges(exercise_id: str, seed: int) -> set[tuple[str, str]]:
    """The edges of the hidden cases graded on one seed, drawn as the runner draws them."""
    return edges_of(case for check in catalog.checks_of(exercise_id) if check.hidden
                    for case in check.cases(random.Random(f"{seed}/{check.id}")))


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_every_edge_size_shown_in_public_is_graded_on_every_hidden_draw(exercise):
    shown = public_edges(exercise.id)
    missed = {seed: shown - hidden_edges(exercise.id, seed) for seed in GRADING_SEEDS}
    assert not any(missed.values()), f"{exercise.id}: {({s: m for s, m in missed.items() if m})}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_no_hidden_edge_size_goes_unshown_in_public(exercise):
    shown = public_edges(exercise.id)
    unshown = {seed: hidden_edges(exercise.id, seed) - shown for seed in GRADING_SEEDS}
    assert not any(unshown.values()), f"{exercise.id}: {({s: u for s, u in unshown.items() if u})}"


def test_the_edges_are_read_from_the_cases():
    assert edge_sizes({"batch": 1, "num_tokens": 1, "context_length": 1, "seed": 1, "qkv_bias": True}) == {
        ("batch", "1"), ("num_tokens", "1"), ("context_length", "1"), ("num_tokens", "context_length")}
    assert edge_sizes({"shape": [1, 4, 4], "dim": 1, "head": 1}) == {("shape[0]", "1")}
    assert edge_sizes({"batch": 2, "num_tokens": 3, "context_length": 5,
                       "attention_mask": [[1, 1, 0], [1, 0, 0]]}) == {("padded tokens", "1"), ("real tokens", "1")}
    assert edge_sizes({"batch": 2, "num_tokens": 4, "context_length": 6}) == set()
    assert edge_sizes([1, 1]) == set()


class DropsTheTokenAxis(nn.Module):
    """A learner's SelfAttention_v2 whose last step drops the token axis of a one-token output."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        weights = torch.softmax(torch.einsum("td,sd->ts", q, k) / k.shape[-1] ** 0.5, dim=-1)
        return torch.einsum("ts,sd->td", weights, v).squeeze(-2)


class DropsTheTokenAxisV1(nn.Module):
    """The same last step in a SelfAttention_v1 with raw matrices."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(q @ k.transpose(0, 1) / k.shape[-1] ** 0.5, dim=-1)
        return (weights @ v).squeeze(-2)


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "name", "learner"), [
    ("self_attention_v2", "SelfAttention_v2", DropsTheTokenAxis),
    ("self_attention_v1", "SelfAttention_v1", DropsTheTokenAxisV1),
])
@pytest.mark.parametrize("seed", [3, 11])  # seeds whose 1-to-5-token draw used to miss one token
def test_an_axis_dropped_on_one_token_fails_in_public_and_loses_points_hidden(exercise_id, name, learner, seed):
    public = results_by_id(exercise_id, {name: learner}, seed=seed, include_hidden=False)
    assert public[f"{exercise_id}.shapes.preview"].status != PASSED
    graded = results_by_id(exercise_id, {name: learner}, seed=seed)
    assert graded[f"{exercise_id}.shapes"].status != PASSED
    assert score(graded) < score(results_by_id(exercise_id, {name: getattr(solutions, name)}, seed=seed))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SelfAttention_v1", "SelfAttention_v2"])
def test_the_reference_keeps_full_marks_with_the_one_token_case(name):
    exercise_id = {"SelfAttention_v1": "self_attention_v1", "SelfAttention_v2": "self_attention_v2"}[name]
    for seed in (3, 11):
        graded = results_by_id(exercise_id, {name: getattr(solutions, name)}, seed=seed)
        assert all(r.status == PASSED for r in graded.values()), seed


# Learner attempts written for the edges above: each drops the batch axis of a batch of one (`.squeeze(0)` to tidy
# an output), which a preview shows and which used to be graded only on the seeds that drew a batch of one.
class SqueezesTheBatchWrapper(solutions.MultiHeadAttentionWrapper):
    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1).squeeze(0)


class SqueezesTheBatchCausal(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        num_tokens = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))
        return (weights @ values).squeeze(0)


class SqueezesTheBatchMHA(solutions.MultiHeadAttention):
    def forward(self, x, attention_mask=None):
        return super().forward(x, attention_mask).squeeze(0)


def squeezes_the_batch_merge(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).reshape(b, num_tokens, num_heads * head_dim).squeeze(0)


def squeezes_the_batch_neg_inf(attn_scores):
    num_tokens = attn_scores.shape[-1]
    future = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=-1).squeeze(0)


# (exercise, the learner's namespace, the check its preview and hidden twin are, a grading seed whose hidden draw had no
# batch of one before the edge cases, what the preview says in each language)
SQUEEZED = [
    ("mha_wrapper", {"MultiHeadAttentionWrapper": SqueezesTheBatchWrapper}, "mha_wrapper.shapes", 1,
     ("the numbers are right, but the output has shape", "数值是对的，但输出形状是")),
    ("causal_attention", {"CausalAttention": SqueezesTheBatchCausal}, "causal_attention.random", 4,
     ("the numbers are right, but the output has shape", "数值是对的，但输出形状是")),
    ("multi_head_attention", {"MultiHeadAttention": SqueezesTheBatchMHA}, "multi_head_attention.reference", 13,
     ("the numbers are right, but the output has shape", "数值是对的，但输出形状是")),
    ("merge_heads", {"merge_heads": squeezes_the_batch_merge}, "merge_heads.shapes", 29,
     ("the numbers are right, but the output has shape", "数值是对的，但输出形状是")),
    ("masking_routes", {"causal_weights_neg_inf": squeezes_the_batch_neg_inf,
                        "causal_weights_renormalised": solutions.causal_weights_renormalised},
     "masking_routes.neg_inf_random", 17, ("output shape", "输出形状为")),
]


@pytest.mark.slow
@pytest.mark.parametrize(("exercise_id", "namespace", "check_id", "seed", "said"), SQUEEZED,
                         ids=[row[0] for row in SQUEEZED])
def test_a_batch_axis_dropped_on_a_batch_of_one_fails_the_preview_and_every_hidden_draw(exercise_id, namespace,
                                                                                       check_id, seed, said):
    for lang, words in zip(("en", "zh"), said, strict=True):
        public = results_by_id(exercise_id, namespace, seed=seed, lang=lang, include_hidden=False)
        preview = public[f"{check_id}.preview"]
        assert preview.status != PASSED
        # True of the code: its shape, then the promised one with the batch of one in front, no mistake named.
        assert words in preview.message and "(1, " in preview.message.split(words, 1)[1], preview.message
        assert preview.misconception is None
    graded = results_by_id(exercise_id, namespace, seed=seed)
    assert graded[check_id].status != PASSED, f"{check_id} passed on seed {seed}: the batch of one was not drawn"
    reference = results_by_id(exercise_id, {name: getattr(solutions, name) for name in namespace}, seed=seed)
    assert all(result.status == PASSED for result in reference.values())
    assert score(graded) < score(reference)
