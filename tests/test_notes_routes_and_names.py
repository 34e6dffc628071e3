"""Issue 45: the notes' own routes to causality are never docked, and a mistake once named stays named.

1. Both routes of the notes (softmax over every key, times the lower triangle, rows renormalised; or the future
   filled with -inf before the softmax) keep full marks on CausalAttention, the wrapper and MultiHeadAttention, on
   every case their checks draw (float32 and float64, 1 to 20+ tokens, the wide float64 case), graded and in
   check(); a causal fill that is finite but too small (-100, -1e4) loses points, publicly first.
2. Every mistake the variant grid reproduces on those exercises, including a split of one projection alone, is
   named in the graded output and at rung 2 of check() (hint=True).
"""

import contextlib
import io
import random

import pytest
import torch
from torch import nn

from autograder.checking.check_types import PASSED
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.n03_causal_attention.ex3_causal_attention import declaration as causal_declaration
from autograder.course.n03_causal_attention.ex3_causal_attention.probe import attention_input as causal_input
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import attention_input as mha_input
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention import declaration as mha_declaration
from autograder.course.variants import attention
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import DEFAULT_SEED
from devtools import student_variants as students
from devtools import variant_grid
from tests.check_helpers import assert_full_marks, results_by_id, score

SEEDS = (DEFAULT_SEED, 1, 2)  # the default grading seed and two others: the routes are right on any draw


class CausalAttentionRenormalised(nn.Module):
    """The notes' other route, written from the notebook's instructions: softmax over every key, multiply by the
    lower triangle (1 - mask[:n, :n]), renormalise each row, then dropout."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = attn_weights * (1 - self.mask[:num_tokens, :num_tokens])
        attn_weights = attn_weights / attn_weights.sum(dim=-1, keepdim=True)
        return self.dropout(attn_weights) @ values


RENORMALISED, NEG_INF = students.Knobs(mask="renormalised"), students.Knobs()
ROUTES = {
    ("causal_attention", "the issue's renormalising student"): CausalAttentionRenormalised,
    ("causal_attention", "tril and renormalise"): students.causal_attention(RENORMALISED),
    ("causal_attention", "triu and -inf"): students.causal_attention(NEG_INF),
    ("multi_head_attention", "tril and renormalise"): students.multi_head_attention(RENORMALISED),
    ("multi_head_attention", "triu and -inf"): students.multi_head_attention(NEG_INF),
    ("mha_wrapper", "heads that renormalise"): students.wrapper(students.WrapperKnobs(), CausalAttentionRenormalised),
}


@pytest.mark.parametrize(("exercise", "route"), sorted(ROUTES))
def test_both_routes_of_the_notes_keep_full_marks_graded_and_in_check(exercise, route):
    namespace = {EXERCISES_BY_ID[exercise].names[0]: ROUTES[exercise, route]}
    for seed in SEEDS:
        assert_full_marks(exercise, results_by_id(exercise, namespace, seed=seed), seed)
    public = results_by_id(exercise, namespace, include_hidden=False)
    assert all(result.status == PASSED for result in public.values()), [r.message for r in public.values()]


@pytest.mark.parametrize("fill", [-100.0, -1e4])
@pytest.mark.parametrize("exercise", ["causal_attention", "multi_head_attention"])
def test_a_fill_too_small_loses_points_publicly_first(exercise, fill):
    make = students.causal_attention if exercise == "causal_attention" else students.multi_head_attention
    namespace = {EXERCISES_BY_ID[exercise].names[0]: make(students.Knobs(fill=fill))}
    public = results_by_id(exercise, namespace, include_hidden=False)
    assert any(result.status != PASSED for result in public.values())
    for seed in SEEDS:
        assert score(results_by_id(exercise, namespace, seed=seed)) < EXERCISES_BY_ID[exercise].points, seed


def wide_cases(seeds):
    """(input, weights, num_heads) of the wide case of CausalAttention and of MultiHeadAttention, each drawn with its
    own seed, with weights as nn.Linear's default initialisation makes them (a correct student's)."""
    for seed in seeds:
        # The wide case is the one flagged so; the draw's edge sizes come after it.
        (causal,) = [c for c in causal_declaration.attention_cases_random(random.Random(seed)) if c.get("wide")]
        (mha,) = [c for c in mha_declaration.mha_cases_reference(random.Random(seed)) if c.get("wide")]
        for case, x in ((causal, causal_input(causal)), (mha, mha_input(mha))):
            assert case.get("wide") and x.dtype == torch.float64
            torch.manual_seed(case["seed"])
            weights = {f"{name}.weight": nn.Linear(case["d_in"], case["d_out"]).weight.detach().double()
                       for name in ("W_query", "W_key", "W_value")}
            yield x, weights, case.get("num_heads", 1)


def route_output(x, weights, num_heads, fill):
    """The -inf reference with another fill, or with fill None the notes' renormalising route."""
    queries, keys, values = (torch.nn.functional.linear(x, weights[f"{name}.weight"])
                             for name in ("W_query", "W_key", "W_value"))
    b, num_tokens, d_out = queries.shape
    queries, keys, values = (t.view(b, num_tokens, num_heads, -1).transpose(1, 2) for t in (queries, keys, values))
    future = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
    scores = queries @ keys.transpose(-2, -1)
    if fill is None:
        attn_weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) * ~future
        attn_weights = attn_weights / attn_weights.sum(dim=-1, keepdim=True)
    else:
        attn_weights = torch.softmax(scores.masked_fill(future, fill) / keys.shape[-1] ** 0.5, dim=-1)
    return (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, d_out)


def test_the_wide_case_keeps_the_renormalising_route_exact_and_shows_a_small_fill():
    """By analysis (autograder.course.shared.wide) the renormalising route is exact on every draw; a small fill shows
    on nearly every draw (not all: where W_query^T W_key is definite no input gives negative scores)."""
    draws = list(wide_cases(range(40)))
    leaks = {-100.0: 0, -1e4: 0}
    for x, weights, num_heads in draws:
        reference = attention(x, weights, num_heads=num_heads)
        assert torch.allclose(route_output(x, weights, num_heads, None), reference, rtol=1e-9, atol=1e-9)
        assert torch.allclose(route_output(x, weights, num_heads, -1e9), reference, rtol=1e-12, atol=0)
        for fill in leaks:
            leaks[fill] += not torch.allclose(route_output(x, weights, num_heads, fill), reference, rtol=1e-4,
                                              atol=1e-5)
    assert all(count >= 0.95 * len(draws) for count in leaks.values()), leaks


# ---------------------------------------------------------------------------------------------
# every mistake the grid reproduces stays named

NAMED_EXERCISES = ("causal_attention", "mha_wrapper", "multi_head_attention")
MISTAKES = [variant for variant in variant_grid.grid()
            if variant.exercise in NAMED_EXERCISES and variant.misconception is not variant_grid.EQUIVALENT]


def printed(call, *arguments, **options):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        call(*arguments, **options)
    return output.getvalue()


def test_the_grid_splits_one_projection_alone():
    names = {(variant.exercise, variant.name) for variant in MISTAKES}
    for role in ("queries", "keys", "values"):
        assert ("multi_head_attention", f"{role} split by view, no transpose") in names
        assert ("multi_head_attention", f"{role} split head_dim first") in names


@pytest.mark.slow  # about 90 mistakes, each graded and checked
@pytest.mark.parametrize("variant", MISTAKES, ids=lambda variant: f"{variant.exercise}/{variant.name}")
def test_every_mistake_the_grid_reproduces_is_named_graded_and_at_rung_2(variant, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    runtime = NotebookRuntime(in_notebook.ReferenceExpectations())
    name = MISCONCEPTIONS_BY_ID[variant.misconception].name["en"]
    graded = printed(runtime.grade, variant.exercise, variant.student)
    assert f"reproduced mistake — {name}" in graded, graded
    checked = printed(runtime.check, variant.exercise, variant.student, hint=True)
    assert f"reproduced mistake — {name}" in checked, checked


# ---------------------------------------------------------------------------------------------
# the issue's two students in the student kit too (check() from stored vectors; the kit does not grade)

QUERIES_VIEW_ONLY = students.multi_head_attention(students.Knobs(split="view_only", only="queries"))


@pytest.fixture(scope="module")
def kit_runtime():
    vectors = vectors_from_document(vectors_document())
    return NotebookRuntime(StoredExpectations(lambda: vectors))


@pytest.mark.slow
def test_the_issues_two_students_are_right_in_the_student_kit(kit_runtime, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    renormalised = printed(kit_runtime.check, "causal_attention", CausalAttentionRenormalised)
    assert "✘" not in renormalised and "reproduced mistake" not in renormalised, renormalised
    split = printed(kit_runtime.check, "multi_head_attention", QUERIES_VIEW_ONLY, hint=True)
    name = MISCONCEPTIONS_BY_ID["split_without_transpose"].name["en"]
    assert f"reproduced mistake — {name}" in split, split
