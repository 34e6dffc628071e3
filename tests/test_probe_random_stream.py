"""Probes and the random stream: every probe call starts from PROBE_SEED on the CPU generator, so a learner's code that
draws from it (layers built in forward, dropout, torch.rand) reads the same numbers whatever ran before, and a check
leaves the notebook's own random stream exactly as it was (a learner who runs check() between two cells gets the
same later random numbers as one who does not).
"""

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.checking.probing import PROBE_SEED, run_probe, seeded
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.runner import run_exercise


@pytest.fixture(scope="module")
def vectors():
    return vectors_from_document(vectors_document())


def draws(_namespace, _case):
    return {"drawn": torch.rand(4)}


def test_a_probe_reads_the_documented_seed_whatever_the_stream_was():
    torch.manual_seed(7)
    first = run_probe(draws, {}, None)["drawn"]
    torch.rand(100)  # the notebook drew meanwhile
    second = run_probe(draws, {}, None)["drawn"]
    expected = torch.rand(4, generator=torch.Generator().manual_seed(PROBE_SEED))
    assert torch.equal(first, second) and torch.equal(first, expected)


def test_a_probe_that_seeds_its_own_build_keeps_its_values():
    def seeds_its_build(_namespace, _case):
        with seeded(123):
            layer = nn.Linear(3, 2)
        return {"weight": layer.weight.detach().clone(), "after": torch.rand(2)}

    with seeded(123):
        expected = nn.Linear(3, 2).weight.detach().clone()
    record = run_probe(seeds_its_build, {}, None)
    after = torch.rand(2, generator=torch.Generator().manual_seed(PROBE_SEED))
    assert torch.equal(record["weight"], expected) and torch.equal(record["after"], after)


def test_a_probe_that_raises_leaves_the_stream_as_it_was():
    def raises(_namespace, _case):
        torch.rand(10)
        raise ValueError("a learner's error")

    torch.manual_seed(3)
    state = torch.get_rng_state()
    assert run_probe(raises, {}, None)["error"]["type"] == "ValueError"
    assert torch.equal(torch.get_rng_state(), state)


class LayersInForward(nn.Module):
    """SelfAttention_v2 that builds new, unseeded layers on every call: its numbers come from the global stream."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        d_in, d_out = x.shape[-1], self.W_query.out_features
        keys, queries, values = (nn.Linear(d_in, d_out, bias=False)(x) for _ in range(3))
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


def _words(results):
    return [(r.id, r.status, r.score, r.misconception, r.message, r.details, r.mistake) for r in results]


def test_a_learner_drawing_in_forward_is_told_the_same_numbers_whatever_ran_before():
    namespace = {"SelfAttention_v2": LayersInForward}
    torch.manual_seed(1)
    first = _words(run_exercise("self_attention_v2", namespace, lang="en"))
    torch.manual_seed(2)
    torch.rand(1000)
    second = _words(run_exercise("self_attention_v2", namespace, lang="en"))
    assert first == second and any(status != PASSED for _, status, *_ in first)


@pytest.mark.parametrize(("exercise_id", "namespace"), [
    ("causal_attention", {"CausalAttention": solutions.CausalAttention}),
    ("self_attention_v1", {"SelfAttention_v1": solutions.SelfAttention_v1}),
    ("self_attention_v2", {"SelfAttention_v2": LayersInForward}),
])
def test_a_check_leaves_the_notebooks_random_stream_as_it_was(vectors, exercise_id, namespace):
    torch.manual_seed(123)
    state = torch.get_rng_state()
    run_public(exercise_id, namespace, vectors, "en")  # the student kit's check()
    assert torch.equal(torch.get_rng_state(), state)
    run_exercise(exercise_id, namespace, include_hidden=False, lang="en")  # the full kit's check()
    assert torch.equal(torch.get_rng_state(), state)


def test_a_cell_rebinding_the_default_generator_changes_nothing(monkeypatch):
    torch.manual_seed(11)
    state = torch.get_rng_state()
    monkeypatch.setattr(torch, "default_generator", torch.Generator())  # a cell's `torch.default_generator = ...`
    drawn = run_probe(draws, {}, None)["drawn"]
    assert torch.equal(drawn, torch.rand(4, generator=torch.Generator().manual_seed(PROBE_SEED)))
    assert torch.equal(torch.get_rng_state(), state)
