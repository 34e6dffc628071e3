"""Fitted value families (issue 41 item 3): a causal fill, a scale constant, a global max and an unused parameter are
named only where the reference with that value (or the fact read from the graph) reproduces the student's own output,
on every failing case; a very negative fill or a global max that gives the same numbers keeps full marks.

The students are written from the release notebooks' instructions, as a learner would: CausalAttention with
register_buffer("mask", ...), masked_fill on the scores, a softmax over the last axis and self.dropout on the weights.
"""

import math

import pytest
import torch
from torch import nn

from autograder.checking.check_types import Check, Evidence, Verdict
from autograder.checking.expectations import no_expectations
from autograder.checking.results import judge_cases
from autograder.course.catalog import MESSAGES, MISCONCEPTIONS_BY_ID
from autograder.running.runner import run_exercise


def causal_attention(fill=-math.inf, scale="root", bias_used=True, twice=False, frozen_value=False):
    """A learner's CausalAttention (notebook 03, section 3.5.3) with one slip."""
    class CausalAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
            super().__init__()
            self.d_out = d_out
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            if frozen_value:  # "the values need no training", a learner guesses
                self.W_value.weight.requires_grad_(False)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            if bias_used:
                keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
            else:  # the weights alone: the bias is created but never added
                keys = x @ self.W_key.weight.T
                queries = x @ self.W_query.weight.T
                values = x @ self.W_value.weight.T
            d_k = keys.shape[-1]
            if twice:  # scaled on the queries and again on the scores
                queries = queries / d_k**0.5
            attn_scores = queries @ keys.transpose(1, 2)
            attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], fill)
            divisor = {"root": d_k**0.5, "d_k": d_k, "tokens": num_tokens}[scale]
            attn_weights = self.dropout(torch.softmax(attn_scores / divisor, dim=-1))
            return attn_weights @ values

    return CausalAttention


def run(exercise, name, student):
    results = run_exercise(exercise, {name: student}, lang="en")
    failed = [result for result in results if result.status != "passed"]
    return failed, {result.misconception for result in failed} - {None}


def causal(student):
    return run("causal_attention", "CausalAttention", student)


def test_a_zero_fill_is_named_with_its_value_on_every_value_check():
    failed, named = causal(causal_attention(fill=0.0))
    assert named == {"mask_fill_zero"}
    notes = next(result for result in failed if result.id == "causal_attention.notes")
    assert notes.misconception == "mask_fill_zero" and "filled with 0 " in notes.message


def test_a_finite_fill_is_named_with_the_value_the_student_wrote():
    failed, named = causal(causal_attention(fill=-10.0))
    assert named == {"mask_fill_not_low_enough"}
    notes = next(result for result in failed if result.id == "causal_attention.notes")
    assert "filled with -10 " in notes.message


def test_a_fill_no_list_holds_is_fitted_from_the_students_own_weights():
    # -7.5 is none of the common fills: the value comes from the weights the student's dropout layer received.
    failed, named = causal(causal_attention(fill=-7.5))
    assert named == {"mask_fill_not_low_enough"}
    assert any("filled with -7.5 " in result.message for result in failed)


@pytest.mark.parametrize("fill", [-1e9, -torch.finfo(torch.float32).max])
def test_a_fill_low_enough_for_every_case_keeps_full_marks(fill):
    failed, named = causal(causal_attention(fill=fill))
    assert failed == [] and named == set()


def test_a_fill_that_only_the_wide_case_shows_names_nothing_when_several_values_reproduce_it():
    # -100 gives the future the same weights as 0 or -10 on the wide rows: no single value is proven there.
    failed, named = causal(causal_attention(fill=-100.0))
    assert [result.id for result in failed] == ["causal_attention.random"] and named == set()


@pytest.mark.parametrize(("student", "mistake"), [
    (causal_attention(scale="d_k"), "scale_by_d_k"),
    (causal_attention(twice=True), "scale_by_d_k"),  # the root twice is d_k: the same output, one entry
    (causal_attention(scale="tokens"), "scale_by_num_tokens"),
])
def test_a_wrong_scale_constant_is_named_by_the_constant(student, mistake):
    failed, named = causal(student)
    assert failed and named == {mistake}


def test_an_unused_bias_is_named_unused_and_never_told_it_was_detached():
    failed, named = causal(causal_attention(bias_used=False))
    assert named == {"parameter_unused"}
    properties = next(result for result in failed if result.id.startswith("causal_attention.properties"))
    assert "does not depend on it" in properties.message and "detach" not in properties.message


def test_a_parameter_with_gradients_off_is_named_detached():
    failed, named = causal(causal_attention(frozen_value=True))
    properties = next(result for result in failed if result.id.startswith("causal_attention.properties"))
    assert properties.misconception == "parameter_detached" and "W_value.weight" in properties.message


def softmax_global_max(x, dim=-1):
    """softmax_stable with the maximum of the whole tensor: the notes' "subtract the max", read too widely."""
    shifted = torch.exp(x - x.max())
    return shifted / shifted.sum(dim=dim, keepdim=True)


def test_a_global_max_is_named_where_it_underflows_and_passes_where_it_gives_the_same_numbers():
    failed, named = run("softmax_stable", "softmax_stable", softmax_global_max)
    assert named == {"softmax_global_max"}
    assert {result.id.removesuffix(".preview") for result in failed} == {"softmax_stable.large"}
    # As softmax_naive (no dim, one vector) the global max is the row's own: right, and named nothing.
    naive_failed, _ = run("softmax_naive", "softmax_naive", lambda x: softmax_global_max(x, dim=0))
    assert naive_failed == []


def NO_EXPECTATIONS(index, data, case):  # noqa: N802 - a constant-like callable
    return no_expectations(data, case)


def test_a_name_that_a_later_failing_case_does_not_reproduce_is_withheld():
    """The gate of every variant-proven name: the first failing case names A, a later one names B: no name."""
    verdicts = iter([Verdict(False, "causal_attention.wrong_output", misconception="scale_by_d_k",
                             evidence=Evidence.VARIANT),
                     Verdict(False, "causal_attention.wrong_output", misconception="mask_inverted",
                             evidence=Evidence.VARIANT)])
    check = Check(id="causal_attention.notes", exercise="causal_attention", points=1, hidden=False,
                  title={"en": "t", "zh": "t"}, cases=lambda rng: [{}, {}], probe=lambda namespace, case: {},
                  judge=lambda record, case, expectations: next(verdicts))
    result = judge_cases(check, [{}, {}], [{}, {}], NO_EXPECTATIONS, "en", MESSAGES, MISCONCEPTIONS_BY_ID)
    assert result.status == "failed" and result.cause.message_key == "causal_attention.wrong_output"
    assert result.misconception is None
    agreeing = iter([Verdict(False, "causal_attention.wrong_output", misconception="scale_by_d_k",
                             evidence=Evidence.VARIANT)] * 2)
    check = Check(id="causal_attention.notes", exercise="causal_attention", points=1, hidden=False,
                  title={"en": "t", "zh": "t"}, cases=lambda rng: [{}, {}], probe=lambda namespace, case: {},
                  judge=lambda record, case, expectations: next(agreeing))
    result = judge_cases(check, [{}, {}], [{}, {}], NO_EXPECTATIONS, "en", MESSAGES, MISCONCEPTIONS_BY_ID)
    assert result.misconception == "scale_by_d_k"


def test_every_new_entry_has_three_rungs_in_both_languages_and_declares_where_and_how():
    for entry_id in ("mask_fill_zero", "mask_fill_not_low_enough", "scale_by_d_k", "scale_by_num_tokens",
                     "softmax_global_max", "parameter_unused", "parameter_detached"):
        entry = MISCONCEPTIONS_BY_ID[entry_id]
        assert entry.exercises and entry.evidence, entry_id
        for text in (entry.question, entry.name, entry.hint, entry.change):
            assert text["en"] and text["zh"], entry_id
        assert entry.question["en"].endswith("?") and "(" not in entry.question["en"], entry_id
