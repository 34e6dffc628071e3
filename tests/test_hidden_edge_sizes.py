"""What a public check shows, hidden grading grades on every draw: an edge size the public checks (previews included)
use, one token above all, is in the hidden checks' cases for every grading seed, not only for the seeds that happen
to draw it. Code that drops an axis on one token fails the preview and loses points at grading alike."""

import random

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from tests.check_helpers import results_by_id, score

GRADING_SEEDS = range(40)  # many more seeds than a draw of 1 to 5 tokens needs to miss one token


def one_token(case):
    return isinstance(case, dict) and case.get("num_tokens") == 1


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_a_one_token_input_shown_in_public_is_graded_on_every_hidden_draw(exercise):
    public = [c for c in catalog.checks_of(exercise.id, include_hidden=False)]
    hidden = [c for c in catalog.checks_of(exercise.id) if c.hidden]
    if not any(one_token(case) for check in public for case in check.cases(random.Random(0))):
        return
    for seed in GRADING_SEEDS:
        drawn = [case for check in hidden for case in check.cases(random.Random(f"{seed}/{check.id}"))]
        assert any(one_token(case) for case in drawn), f"{exercise.id}: no one-token hidden case for seed {seed}"


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
