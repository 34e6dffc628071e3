"""One diagnosis per attempt (issue 58, items 3 and 4): an exercise's failing checks are read together.

A mistake proven on one check explains every other failing check its variant reproduces, so one cause reads as one
row ("N more checks fail for the same reason"), never as a name on one check and "no known mistake" on four others;
a name needs a case that tells it apart (the notes' 2 heads of size 1 do not tell d_out from num_heads); a raising
variant names a mistake only when the learner's error has its numbers too. The attempts below are written here, in
a learner's style, from the notebooks' instructions.
"""

import contextlib
import dataclasses
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.attempt import one_diagnosis
from autograder.checking.check_types import ERROR, FAILED, PASSED, Cause, CheckResult
from autograder.checking.feedback import rows
from autograder.checking.reproduction import RaisedError, VariantError, raising_the_same
from autograder.course import catalog
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook, runner
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import run_exercise
from tests.check_helpers import failing_rows
from tests.mutants import multihead as multihead_mutants

NO_KNOWN = {"en": "no known mistake reproduces", "zh": "没有哪个已知的错误能重现"}
SAME_REASON = {"en": "more check", "zh": "另有"}


# ---------------------------------------------------------------------------------------------
# learner-style attempts


class JoinedOnTokens(nn.Module):
    """The wrapper with the heads joined one after the other: "put the heads' outputs together" read as a longer
    sequence."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        outs = [h(x) for h in self.heads]
        return torch.cat(outs, dim=1)


class GivenInit(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def heads(self, x):
        b, t, _ = x.shape
        q, k, v = (layer(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        return q, k, v

    def finish(self, weights, v, x, attention_mask):
        b, t, _ = x.shape
        out = (self.dropout(weights) @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(out)


class KeysSwappedLikeOneHead(GivenInit):
    """`keys.transpose(1, 2)` kept from the one-head class of notebook 03."""

    def forward(self, x, attention_mask=None):
        t = x.shape[1]
        q, k, v = self.heads(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        return self.finish(torch.softmax(scores / self.head_dim ** 0.5, dim=-1), v, x, attention_mask)


class ScaledByTheHeadCount(GivenInit):
    """Divides by the root of the number of heads: on the notes' 2 heads of size 1 that is the root of d_out too."""

    def forward(self, x, attention_mask=None):
        t = x.shape[1]
        q, k, v = self.heads(x)
        scores = (q @ k.transpose(-2, -1)).masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        return self.finish(torch.softmax(scores / self.num_heads ** 0.5, dim=-1), v, x, attention_mask)


class ScaledByTheWholeWidth(GivenInit):
    """Divides by the root of d_out, the whole output's size: a mistake of the table."""

    def forward(self, x, attention_mask=None):
        t = x.shape[1]
        q, k, v = self.heads(x)
        scores = (q @ k.transpose(-2, -1)).masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        return self.finish(torch.softmax(scores / self.d_out ** 0.5, dim=-1), v, x, attention_mask)


class MaskCutTooShort(nn.Module):
    """CausalAttention whose mask is cut to a fixed 3 x 3 block: SMALLER than the scores, not larger."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:3, :3], -torch.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return weights @ v


class MaskLeftWhole(MaskCutTooShort):
    """The stored mask used as it is: larger than the scores of a short input (the table's mask_not_truncated)."""

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool(), -torch.inf)
        weights = self.dropout(torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return weights @ v


# ---------------------------------------------------------------------------------------------
# helpers


def printed(check, *arguments, **options):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check(*arguments, **options)
    return output.getvalue()


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


def runtime(kit, kit_vectors):
    if kit == "live":
        return NotebookRuntime(in_notebook.ReferenceExpectations())
    return NotebookRuntime(StoredExpectations(lambda: kit_vectors))


def failing(exercise_id, *, check_id="x", misconception=None, reproduced_by=(), key="values.wrong", status=FAILED):
    return CheckResult(check_id, exercise_id, 0.0, 1.0, status, misconception, f"{check_id}: symptom", False,
                       title=check_id, cause=Cause(misconception, key, ()), reproduced_by=reproduced_by)


# ---------------------------------------------------------------------------------------------
# a mistake proven on one check explains the others it reproduces


def test_a_mistake_proven_on_one_check_names_each_other_check_its_variant_reproduces_and_no_other():
    named = failing("mha_wrapper", check_id="a", misconception="heads_on_token_axis",
                    reproduced_by=("heads_on_token_axis",))
    # Two variants reproduce this check's failure alike: on its own it names neither, but the attempt proves one.
    alike = failing("mha_wrapper", check_id="b", reproduced_by=("heads_on_token_axis", "heads_stacked"))
    unrelated = failing("mha_wrapper", check_id="c", reproduced_by=("heads_stacked",))
    nothing = failing("mha_wrapper", check_id="d", key="other.message")
    passed = dataclasses.replace(failing("mha_wrapper", check_id="e"), status=PASSED, cause=None)
    diagnosed = one_diagnosis([named, alike, unrelated, nothing, passed], "en", catalog.MESSAGES,
                              catalog.MISCONCEPTIONS_BY_ID)
    assert [result.misconception for result in diagnosed] == ["heads_on_token_axis", "heads_on_token_axis", None,
                                                               None, None]
    explained = diagnosed[1]
    assert explained.cause.misconception == "heads_on_token_axis" and explained.mistake and explained.hint
    assert explained.message == alike.message  # its symptom is its own
    [first, *others] = rows(diagnosed)
    assert first.shown is diagnosed[0] and first.same == [diagnosed[1]]
    assert [row.shown.id for row in others] == ["c", "d", "e"]


def test_two_proven_mistakes_that_both_reproduce_a_check_name_neither_there():
    one = failing("multi_head_attention", check_id="a", misconception="scale_by_d_out",
                  reproduced_by=("scale_by_d_out",))
    two = failing("multi_head_attention", check_id="b", misconception="missing_scaling",
                  reproduced_by=("missing_scaling",))
    both = failing("multi_head_attention", check_id="c", reproduced_by=("scale_by_d_out", "missing_scaling"))
    diagnosed = one_diagnosis([one, two, both], "en", catalog.MESSAGES, catalog.MISCONCEPTIONS_BY_ID)
    assert diagnosed[2].misconception is None


def test_a_proven_mistake_does_not_name_a_check_of_an_exercise_it_does_not_apply_to():
    named = failing("mha_wrapper", check_id="a", misconception="heads_on_token_axis",
                    reproduced_by=("heads_on_token_axis",))
    other = failing("mha_wrapper", check_id="b", reproduced_by=("heads_on_token_axis",))
    other = dataclasses.replace(other, exercise="causal_mask")
    assert one_diagnosis([named, other], "en", catalog.MESSAGES, catalog.MISCONCEPTIONS_BY_ID)[1].misconception is None


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_heads_joined_on_the_tokens_read_as_one_cause_in_check(kit, lang, kit_vectors, monkeypatch):
    """The learner's example: cat(dim=1) in the wrapper named on one check and "no known mistake" on four others."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = runtime(kit, kit_vectors).check
    printed(check, "mha_wrapper", JoinedOnTokens)
    text = printed(check, "mha_wrapper", JoinedOnTokens)  # rung 2: the next run that still fails
    name = catalog.MISCONCEPTIONS_BY_ID["heads_on_token_axis"].name[lang]
    assert text.count(name) == 1, text
    assert NO_KNOWN[lang] not in text, text
    failing = failing_rows(text)
    # the named row and the checks it explains: the value preview (its variant's outputs), the contract previews
    # (the reference joined on the tokens gets their very verdicts, the device's on meta included): one cause, one
    # row and its fold, for six failing checks
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    assert "5" in failing[1], text


def test_the_attempt_is_read_together_in_graded_output_too():
    """attnkit grade and nbgrader's grade(...) read the same results: each failing check names the one cause."""
    results = run_exercise("mha_wrapper", {"MultiHeadAttentionWrapper": JoinedOnTokens}, include_hidden=True)
    names = {result.id: result.misconception for result in results if result.status != PASSED}
    assert names["mha_wrapper.notes"] == names["mha_wrapper.shapes"] == "heads_on_token_axis"
    assert not any(NO_KNOWN["en"] in result.full_message for result in results)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_line_the_message_already_faults_gets_no_known_mistake_line_at_rungs_2_and_3(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    first = printed(check, "multi_head_attention", KeysSwappedLikeOneHead)
    assert "transpose(1, 2)" in first
    for hint in (2, 3):
        text = printed(check, "multi_head_attention", KeysSwappedLikeOneHead, hint=hint)
        assert NO_KNOWN[lang] not in text, text
        assert catalog.MESSAGES["ladder.cause_stated"][lang] in text, text


def test_failures_departing_from_the_notes_at_one_step_are_one_row_whatever_their_messages():
    first = dataclasses.replace(failing("softmax_naive", check_id="a", key="values.wrong"), departure="d",
                                departure_step="row_sums")
    other_message = dataclasses.replace(failing("softmax_naive", check_id="b", key="weights.not_normalised"),
                                        departure="d2", departure_step="row_sums")
    other_step = dataclasses.replace(failing("softmax_naive", check_id="c", key="weights.other"), departure="d3",
                                     departure_step="exponentials")
    table_rows = rows([first, other_message, other_step])
    assert [(row.shown.id, [same.id for same in row.same]) for row in table_rows] == [("a", ["b"]), ("c", [])]


RAISED_AT = "where it raised — `self.dropout = nn.Dropout(dropout)` raised, called from your line `Head(d, p, n)`"


def test_raises_with_one_where_it_raised_line_are_one_row_whatever_values_their_errors_quote():
    """learners_2026_12e j-w-10: each check passes its own context_length where the dropout goes, so each error
    quotes its own number ("got 6", "got 7"), but the same line raised, called from the same line of the learner's:
    one cause, one row. Another line, another error type, or a failure that did not raise stays a row of its own."""
    def raised(check_id, key="error.ValueError", departure=RAISED_AT, status=ERROR):
        result = failing("mha_wrapper", check_id=check_id, key=key, status=status)
        return dataclasses.replace(result, cause=Cause(None, key, (("text", f"got {check_id}"),)), departure=departure,
                                   message=f"{check_id}: raised, got {check_id}")

    table_rows = rows([raised("a"), raised("b"), raised("c", departure=RAISED_AT + " again"),
                       raised("d", key="error.TypeError"), raised("e", status=FAILED)])
    assert [(row.shown.id, [same.id for same in row.same]) for row in table_rows] == [
        ("a", ["b"]), ("c", []), ("d", []), ("e", [])]


def divided_by_the_scores_sum(x):
    return torch.exp(x) / x.sum()


def matrix_product_with_the_inputs_transposed(inputs):
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs.T


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_cause_of_a_learner_attempt_is_one_row_in_check(lang, monkeypatch):
    """`exp(x) / x.sum()` departs at one step on every check; `weights @ inputs.T` raises at one line on every check,
    with each check's own sizes: one row each, the others folded as failing for the same reason."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    for exercise_id, attempt in (("softmax_naive", divided_by_the_scores_sum),
                                 ("context_vectors", matrix_product_with_the_inputs_transposed)):
        check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
        text = printed(check, exercise_id, attempt, hint=2)
        failing = failing_rows(text)
        assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text


# ---------------------------------------------------------------------------------------------
# a name needs a case that tells it apart


def test_the_notes_two_heads_of_size_1_do_not_name_d_out_for_a_divisor_of_the_head_count():
    """sqrt(num_heads) equals sqrt(d_out) on the notes' case: nothing the learner ran tells the two apart, and their
    code never uses d_out. No check, public or hidden, may name "scaled by the whole output's size"."""
    for include_hidden in (False, True):
        results = run_exercise("multi_head_attention", {"MultiHeadAttention": ScaledByTheHeadCount},
                               include_hidden=include_hidden)
        assert any(result.status != PASSED for result in results)
        assert all(result.misconception != "scale_by_d_out" for result in results), [
            (result.id, result.misconception) for result in results]


@pytest.mark.slow  # three gradings of the exercise, hidden checks included: over 2 s
def test_d_out_is_named_where_a_case_tells_it_apart_and_then_on_every_check_it_reproduces(monkeypatch):
    """The same name for the learner who does divide by d_out: the preview's cases hold one where d_out is no other
    size, which proves it; the notes' check, which cannot tell on its own, is then explained by it too."""
    attempt = {"MultiHeadAttention": ScaledByTheWholeWidth}
    for include_hidden in (False, True):
        results = {result.id: result for result in run_exercise("multi_head_attention", attempt,
                                                                include_hidden=include_hidden)}
        assert results["multi_head_attention.notes"].misconception == "scale_by_d_out"
    proving = "multi_head_attention.reference" if include_hidden else "multi_head_attention.reference.preview"
    assert results[proving].misconception == "scale_by_d_out"
    # Read check by check, the notes' case alone names nothing: its variant reproduces it, among others' sizes.
    monkeypatch.setattr(runner, "one_diagnosis", lambda results, *_: list(results))
    alone = {result.id: result for result in runner.run_exercise("multi_head_attention", attempt,
                                                                 include_hidden=False)}
    assert alone["multi_head_attention.notes"].misconception is None
    assert "scale_by_d_out" in alone["multi_head_attention.notes"].reproduced_by
    assert alone["multi_head_attention.reference.preview"].misconception == "scale_by_d_out"


# ---------------------------------------------------------------------------------------------
# a raising variant must match the error's numbers


def test_an_error_of_the_same_type_and_operation_with_other_numbers_names_nothing():
    variant = VariantError("mask_not_truncated", RaisedError(
        "RuntimeError", "The size of tensor a (7) must match the size of tensor b (8) at non-singleton dimension 2"))
    smaller = {"type": "RuntimeError",
               "message": "The size of tensor a (7) must match the size of tensor b (3) at non-singleton dimension 2"}
    same = {**smaller, "message": variant.error.message}
    assert raising_the_same(smaller, [variant]) == ()
    assert raising_the_same(same, [variant]) == ("mask_not_truncated",)


def test_a_mask_cut_smaller_than_the_scores_is_not_named_not_truncated_and_one_left_whole_is():
    smaller = run_exercise("causal_attention", {"CausalAttention": MaskCutTooShort}, include_hidden=True)
    assert any(result.status != PASSED for result in smaller)
    assert all(result.misconception != "mask_not_truncated" for result in smaller), [
        (result.id, result.misconception, result.message) for result in smaller]
    larger = run_exercise("causal_attention", {"CausalAttention": MaskLeftWhole}, include_hidden=True)
    assert any(result.misconception == "mask_not_truncated" for result in larger), [
        (result.id, result.misconception, result.message) for result in larger]


# ---------------------------------------------------------------------------------------------
# an output of nan alone names no mistake: every computation that overflows gives it


def softmax_stable_shifted_by_the_row_sum(x, dim=-1):  # shifts, but by the sum: [1000., 1000.] underflows, 0 / 0
    e = torch.exp(x - x.sum(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def softmax_stable_without_a_shift(x, dim=-1):
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


def test_an_output_of_nan_alone_does_not_name_the_overflow_of_a_softmax_that_shifts():
    """On [1000., 1000.] a softmax shifted by the wrong amount gives nan as the unshifted one does: nothing there tells
    the two apart, so "softmax overflows" is not named; where a case with numbers tells (a row with a finite
    entry), the unshifted softmax is still named, and explains the nan of the public check as the same cause."""
    shifted = run_exercise("softmax_stable", {"softmax_stable": softmax_stable_shifted_by_the_row_sum},
                           include_hidden=True)
    assert any(result.status != PASSED for result in shifted)
    assert not any(result.misconception == "naive_softmax_overflow" for result in shifted), [
        (result.id, result.misconception) for result in shifted]
    unshifted = run_exercise("softmax_stable", {"softmax_stable": softmax_stable_without_a_shift},
                             include_hidden=True)
    names = {result.id: result.misconception for result in unshifted if result.status != PASSED}
    assert names["softmax_stable.large"] == names["softmax_stable.notes"] == "naive_softmax_overflow", names


# ---------------------------------------------------------------------------------------------
# a check with no steps of its own, whose output is wrong in the shape as a localised row's


def wrong_shape(check_id, got, expected, departure=""):
    return dataclasses.replace(failing("self_attention_v1", check_id=check_id, key="shape.wrong"), departure=departure,
                               departure_step="context_vectors" if departure else "",
                               message=f"{check_id}: output shape {got}, expected {expected}",
                               cause=Cause(None, "shape.wrong", (("expected_shape", expected), ("got_shape", got))))


def test_a_check_without_steps_whose_shape_goes_wrong_as_a_localised_rows_is_told_so_under_it():
    """A contract check declares no steps, so nothing traces it: where its output grows and shrinks the same axes
    as a row that is localised, it is one line under that row (what the line says: the shape goes wrong the same
    way), not a row of its own ending in "no known mistake"; another change of shape stays a row of its own."""
    located = wrong_shape("a", "(6, 6)", "(6, 2)", departure="where it departs — d")
    contract = wrong_shape("b", "(9, 9)", "(9, 2)")
    other = wrong_shape("c", "(2, 9)", "(9, 2)")
    table_rows = rows([located, contract, other])
    assert [(row.shown.id, [same.id for same in row.same_shape]) for row in table_rows] == [("a", ["b"]), ("c", [])]
    # Nothing localised above it: a row of its own, as before.
    assert [row.shown.id for row in rows([wrong_shape("a", "(6, 6)", "(6, 2)"), contract])] == ["a", "b"]


# ---------------------------------------------------------------------------------------------
# one fact of the learner's object, read by two checks that ask for other values, is one cause


def wrapper_built_without_dropout(d_in, context_length, dropout):
    """The dropout argument ignored: the heads are built with 0.0 whatever the call asks."""
    return solutions.MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)


def wrapper_with_two_slips(d_in, context_length, dropout):
    """Two causes, each on its own call: the notes' length typed in for d_in 5, the dropout dropped for the others."""
    return solutions.MultiHeadAttentionWrapper(d_in, 1, 6 if d_in == 5 else context_length,
                                               dropout if d_in == 5 else 0.0, num_heads=2)


def split_heads_made_float(x, num_heads):
    x = x.float()
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_the_same_wrong_value_asked_for_with_other_values_is_one_row(kit, lang, kit_vectors, monkeypatch):
    """The heads built with dropout 0.0 where the public check asks 0.5 and its preview 0.3; float32 out for a
    float64 and for a bfloat16 input: one fact of the learner's code, one row, the other check folded under it, and
    "no known mistake" said once, not once per check."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    for exercise_id, attempt in (("two_dimensional_wrapper", wrapper_built_without_dropout),
                                 ("split_heads", split_heads_made_float)):
        check = runtime(kit, kit_vectors).check
        text = printed(check, exercise_id, attempt, hint=2)
        failing = failing_rows(text)
        assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
        assert text.count(NO_KNOWN[lang]) <= 1, text


def test_two_different_wrong_values_stay_two_rows():
    """Control: the length typed in on one call and the dropout dropped on another are two facts, two rows."""
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    text = printed(check, "two_dimensional_wrapper", wrapper_with_two_slips, hint=2)
    failing = failing_rows(text)
    assert len(failing) == 2 and not any(SAME_REASON["en"] in line for line in failing), text
    assert "context_length 6" in failing[0] and "dropout 0.0" in failing[1], text


def compared(check_id, **fields):
    return dataclasses.replace(failing("two_dimensional_wrapper", check_id=check_id, key="sizes"),
                               message=f"{check_id}: {sorted(fields.items())}",
                               cause=Cause(None, "sizes", tuple(sorted(fields.items()))))


def test_a_learners_value_folds_only_with_the_same_value_departing_in_the_same_names():
    dropped = compared("a", got_dropout="0.0", dropout="0.5", got_d_in="5", d_in="5")
    dropped_again = compared("b", got_dropout="0.0", dropout="0.3", got_d_in="8", d_in="8")
    other_value = compared("c", got_dropout="0.1", dropout="0.3", got_d_in="8", d_in="8")
    more_names = compared("d", got_dropout="0.0", dropout="0.3", got_d_in="3", d_in="8")
    nothing_departs = compared("e", got_dropout="0.3", dropout="0.3")
    also_nothing = compared("f", got_dropout="0.5", dropout="0.5")
    table_rows = rows([dropped, dropped_again, other_value, more_names, nothing_departs, also_nothing])
    assert [(row.shown.id, [same.id for same in row.same]) for row in table_rows] == [
        ("a", ["b"]), ("c", []), ("d", []), ("e", []), ("f", [])]
    # Shapes follow each check's input: the shape rules read them, not this one.
    shapes = [compared(name, got_shape="(2, 12, 2)", expected_shape=shape)
              for name, shape in (("g", "(2, 6, 4)"), ("h", "(2, 7, 4)"))]
    assert len(rows(shapes)) == 2


# ---------------------------------------------------------------------------------------------
# a property check (causality, heads kept apart) explained by the mistake proven on a value check, where the
# reference with that mistake fails it with the very same verdict


class SoftmaxOverTheQueries(nn.Module):
    """CausalAttention written from the notes, with the softmax taken along dim=1 of the (b, T, T) scores."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=1))
        return weights @ values


class MergedWithoutTransposingBack(GivenInit):
    """The heads' context vectors viewed straight back into (b, T, d_out): heads laid along the tokens."""

    def forward(self, x, attention_mask=None):
        b, t, _ = x.shape
        q, k, v = self.heads(x)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).contiguous().view(b, t, self.d_out))


NOTHING_PROVES = {"en": "nothing proves that the mistake named", "zh": "没有证据表明本表中指出的错误"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_a_property_the_proven_mistake_breaks_alike_folds_under_its_name(kit, lang, kit_vectors, monkeypatch):
    """The softmax over the queries, proven on the value checks, lets the future in: the reference with that mistake
    leaks at the same positions, so the causality preview is one more check failing for that reason, not "nothing
    proves ..."; the merge without the transpose back mixes the heads and leaks the future alike."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    for exercise_id, attempt, failing_checks in (("causal_attention", SoftmaxOverTheQueries, 3),
                                                 ("multi_head_attention", MergedWithoutTransposingBack, 4)):
        check = runtime(kit, kit_vectors).check
        text = printed(check, exercise_id, attempt, hint=2)
        assert NOTHING_PROVES[lang] not in text and NO_KNOWN[lang] not in text, text
        failing = failing_rows(text)
        assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
        assert f"{failing_checks - 1}" in failing[1], text


def test_the_graded_causality_check_is_explained_by_the_proven_mistake_too():
    results = {result.id: result for result in run_exercise(
        "causal_attention", {"CausalAttention": SoftmaxOverTheQueries}, include_hidden=True)}
    assert results["causal_attention.properties"].misconception == "softmax_wrong_dim"
    assert not any(NO_KNOWN["en"] in result.full_message for result in results.values())


def test_a_property_check_alone_names_no_mistake_its_variants_break_alike(monkeypatch):
    """Several mistakes let the future in at the same positions: the causality check lists them, names none on its
    own, and only the mistake another check proves explains it."""
    monkeypatch.setattr(runner, "one_diagnosis", lambda results, *_: list(results))
    results = {result.id: result for result in runner.run_exercise(
        "causal_attention", {"CausalAttention": SoftmaxOverTheQueries}, include_hidden=False)}
    leaking = results["causal_attention.properties.preview"]
    assert leaking.misconception is None
    assert {"softmax_wrong_dim", "masked_fill_result_dropped"} <= set(leaking.failing_alike)
    assert "softmax_wrong_dim" not in leaking.reproduced_by


def test_a_variant_failing_a_property_with_other_numbers_does_not_explain_it():
    """Control: the verdicts must be the same, numbers included: a leak from another position is another fact."""
    from autograder.checking.check_types import Verdict
    from autograder.checking.expectations import FAILING_ALIKE, Expectations
    from autograder.checking.results import failing_alike, verdict_text

    learner = verdict_text(Verdict(False, "contract.future_leaks", {"position": 1}))
    stored = Expectations.stored({FAILING_ALIKE: [
        ["softmax_wrong_dim", *verdict_text(Verdict(False, "contract.future_leaks", {"position": 1}))],
        ["mask_inverted", *verdict_text(Verdict(False, "contract.future_leaks", {"position": 2}))],
        ["missing_scaling", *verdict_text(Verdict(False, "contract.batch_mixed", {"sample": 1}))]]})
    assert failing_alike(learner, stored) == ("softmax_wrong_dim",)
    assert failing_alike(learner, Expectations.stored({})) == ()


def copied_without_transposing(sa_v1, sa_v2):
    """Exercise 3.1 with nn.Linear's (d_out, d_in) weights copied as they are."""
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)
    return sa_v1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_square_case_that_cannot_tell_two_mistakes_apart_does_not_unname_the_one_the_others_prove(lang,
                                                                                                   monkeypatch):
    """The preview's square case copies the weight as it is, which a reshape of a square weight gives too: it lists
    both, and the raising cases, whose numbers only the untransposed copy gives, name it; one row, not "nothing
    proves ..." under the name."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    text = printed(check, "transfer_weights", copied_without_transposing, hint=2)
    assert NOTHING_PROVES[lang] not in text and NO_KNOWN[lang] not in text, text
    results = {result.id: result for result in run_exercise(
        "transfer_weights", {"load_v2_weights_into_v1": copied_without_transposing}, include_hidden=False)}
    assert results["transfer_weights.shapes.preview"].misconception == "weights_not_transposed"


class HeadsWithoutTheBias(nn.Module):
    """The wrapper whose heads are built without passing qkv_bias on."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(solutions.CausalAttention(d_in, d_out, context_length, dropout))

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_heads_bias_read_by_a_value_check_is_the_fact_the_contract_names(lang, monkeypatch):
    """The value preview reads the heads' layers (no bias where qkv_bias asked for one): the fact the structure
    check names, so one row under the name, not "nothing proves ..." on the value preview."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    text = printed(check, "mha_wrapper", HeadsWithoutTheBias, hint=2)
    assert NOTHING_PROVES[lang] not in text and NO_KNOWN[lang] not in text, text
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    assert text.count(catalog.MISCONCEPTIONS_BY_ID["qkv_bias_ignored"].name[lang]) == 1, text


class ReturnsTheWeightsToo(nn.Module):
    """SelfAttention_v1 whose forward returns (context vectors, weights), as the notes print both."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values, weights


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_a_tuple_returned_on_another_device_is_the_tuple_every_check_reports(kit, lang, kit_vectors, monkeypatch):
    """The device preview says what came back (a tuple), as every other check does: one row, not a second "no
    known mistake" for "the output has the wrong shape or is not on meta"."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(runtime(kit, kit_vectors).check, "self_attention_v1", ReturnsTheWeightsToo, hint=2)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    assert text.count(NO_KNOWN[lang]) == 1, text


class WrittenIntoZeros(ReturnsTheWeightsToo):
    """SelfAttention_v1 whose context vectors are written row by row into a fresh torch.zeros buffer."""

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        out = torch.zeros(x.shape[0], values.shape[1])
        for i in range(x.shape[0]):
            out[i] = weights[i] @ values
        return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_a_buffer_made_in_forward_explains_the_dtype_it_forces(kit, lang, kit_vectors, monkeypatch):
    """The device preview proves the CPU tensor made in forward; the reference writing into such a buffer returns
    float32 for a float64 input on the value and structure previews too, with the same dtypes: one row."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(runtime(kit, kit_vectors).check, "self_attention_v1", WrittenIntoZeros, hint=2)
    assert NOTHING_PROVES[lang] not in text and NO_KNOWN[lang] not in text, text
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text


def renormalised_without_keepdim(attn_weights):
    n = attn_weights.shape[-1]
    tri = torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * tri
    return masked / masked.sum(dim=-1)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_an_error_the_proven_mistake_raises_alike_is_that_mistake_not_a_follow_on(kit, lang, kit_vectors,
                                                                                   monkeypatch):
    """Row sums without keepdim, proven on the values: on the device preview's batch the reference with that
    mistake raises the very error the learner's code raises (numbers included), so it fails for the same reason
    rather than "stops with an error; nothing shows that the mistake above causes it"."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(runtime(kit, kit_vectors).check, "masking_routes",
                   renormalised_without_keepdim, solutions.causal_weights_neg_inf, hint=2)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    follow = catalog.MESSAGES["fold.follow_on_one"][lang].split("；")[0].split(";")[0]
    assert follow not in text, text


# ---------------------------------------------------------------------------------------------
# a buffer made on the CPU: the dtype rows are the device row's cause


class HeadsWrittenIntoAnEmptyBuffer(JoinedOnTokens):
    """The wrapper (the given constructor) whose heads are written side by side into a buffer made with torch.empty,
    no dtype or device named: float32 on the CPU whatever the input."""

    def forward(self, x):
        outs = [head(x) for head in self.heads]
        width = outs[0].shape[-1]
        result = torch.empty(x.shape[0], x.shape[1], width * len(outs))
        for i, out in enumerate(outs):
            result[..., i * width:(i + 1) * width] = out
        return result


@pytest.mark.slow  # the exercise's checks with their variants run, in both kits
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_the_float32_of_a_buffer_made_on_the_cpu_is_one_row_with_its_device(kit, kit_vectors, monkeypatch):
    """The device preview proves the tensor made on the CPU; the reference wrapper writing into such a buffer fails
    the float64 previews with the very same verdicts, so the three are one row with the mistake's name."""
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    text = printed(runtime(kit, kit_vectors).check, "mha_wrapper", HeadsWrittenIntoAnEmptyBuffer, hint=2)
    failing = failing_rows(text)
    assert len(failing) == 2 and "2 more checks fail for the same reason" in failing[1], text
    assert "a tensor made inside forward stays on the CPU" in text and "float32" in text, text
    assert "no further hint" not in text, text


class OutProjFollowsQkvBias(solutions.MultiHeadAttention):
    """The given __init__ edited so that out_proj follows qkv_bias too ("the same bias setting everywhere")."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)


@pytest.mark.slow  # the exercise graded, hidden checks included
def test_an_output_bias_that_follows_qkv_bias_is_a_missing_parameter_not_qkv_bias_ignored():
    """The query, key and value layers follow qkv_bias here: a missing out_proj.bias is told as missing, never "with
    qkv_bias off the module still has out_proj.bias" nor the qkv_bias mistake (learners_2026_12l)."""
    results = run_exercise("multi_head_attention", {"MultiHeadAttention": OutProjFollowsQkvBias}, include_hidden=True)
    failing = [result for result in results if result.status != PASSED]
    assert failing, results
    assert not any(result.misconception == "qkv_bias_ignored" for result in results), [
        (result.id, result.misconception) for result in failing]
    assert not any("still has" in result.full_message for result in results)
    assert any("no parameter out_proj.bias" in result.full_message for result in failing), [
        result.full_message for result in failing]


def heads_from_the_input_size(d_in, context_length, dropout):
    """Two heads "because d_in is 3": the head count taken from d_in, every head one feature wide."""
    return multihead_mutants.WrapperBook(d_in, 1, context_length, dropout, num_heads=d_in - 1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_head_count_that_follows_d_in_is_one_row_and_names_no_trade_of_heads_for_width(lang, monkeypatch):
    """Every head is already one feature wide: "make each head narrower" would be false (12v's vz-tw-10); the
    count each check's d_in gives (4 heads, 7 heads) is one cause, one row. One head of two features keeps the
    name."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    text = printed(check, "two_dimensional_wrapper", heads_from_the_input_size, hint=3)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    traded = {"en": "num_heads changed to change the output size", "zh": "为了改变输出大小而改变了 num_heads"}[lang]
    assert {"en": "narrower", "zh": "变窄"}[lang] not in text and traded not in text, text
    one_head = printed(check, "two_dimensional_wrapper", multihead_mutants.two_dimensional_wrapper_one_head, hint=3)
    assert traded in one_head, one_head
    assert {"en": "narrower", "zh": "变窄"}[lang] in one_head, one_head


def split_heads_viewed_in_one_go(x, num_heads):
    """The heads' shape asked of view directly, "the transpose is only a reshuffle"."""
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def split_heads_transposed_then_viewed(x, num_heads):
    """Tokens and features swapped first, then viewed: a view torch refuses on any input."""
    b, num_tokens, d_out = x.shape
    return x.transpose(1, 2).view(b, num_heads, num_tokens, d_out // num_heads)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_raise_the_proven_mistakes_variant_makes_too_is_that_mistake(lang, monkeypatch):
    """The view without the transpose is proven on the small examples by its values; on a non-contiguous input the
    same view is refused, as the reference with that mistake refuses it: one cause, one row (12w's wz-sh-01). A
    transpose before the view raises on every input: no values prove the mistake, and the raise alone names none."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = NotebookRuntime(in_notebook.ReferenceExpectations()).check
    text = printed(check, "split_heads", split_heads_viewed_in_one_go, hint=2)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    named = {"en": "heads split with view but not transposed", "zh": "用 view 拆分了头但没有转置"}[lang]
    assert named in text, text
    assert named not in printed(check, "split_heads", split_heads_transposed_then_viewed, hint=2)
