"""The hint ladder and the table around it. check(...) shows rung 1 first (the symptom and a question), rung 2 on
request (hint=True) or on the next run that still fails (the likely mistake and its hint), and rung 3 only on request
(hint=True once more, or hint=3: what to change, in words); graded output carries rungs 1 and 2, never 3. The table
has one row per cause of failure, and its first line never says done while a public check fails."""

import contextlib
import dataclasses
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import ERROR, FAILED, PASSED, Cause, CheckResult, Exercise
from autograder.checking.feedback import HintLadder, rows, table
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.outputs.records import check_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import run_exercise

MISCONCEPTION = "mask_includes_diagonal"
# The ladder's texts of one misconception, given here so that the test reads them whatever the declarations say.
QUESTION = {"en": "Which key tokens may query token 0 see?", "zh": "查询 token 0 可以看到哪些 key token？"}
CHANGE = {"en": "Start hiding one step to the right of the diagonal.", "zh": "从对角线右边一格开始遮住。"}
LABELS = {  # the start of each rung's line, per language (autograder/course/messages.py)
    "question": {"en": "ask yourself — ", "zh": "想一想："},
    "mistake": {"en": "likely mistake — ", "zh": "可能的错误："},
    "hint": {"en": "hint — ", "zh": "提示："},
    "change": {"en": "what to change — ", "zh": "怎么改："},
}
NEXT = "»"  # the footer line naming the next rung


def mask_with_the_diagonal(num_tokens):
    """A student's causal_mask that also hides each token from itself (misconception mask_includes_diagonal)."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))


def right_mask(num_tokens):
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)


def stub(*_args, **_kwargs):
    raise NotImplementedError()


class PlainListWrapper(nn.Module):
    """MultiHeadAttentionWrapper with its heads in a plain list: PyTorch sees none of their weights, so .to(float64)
    leaves them float32 and three more checks raise "expected m1 and m2 to have the same dtype"."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                      for _ in range(num_heads)]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def printed(check, *arguments, **options):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check(*arguments, **options)
    return output.getvalue()


def rung_lines(text, lang):
    """{rung name: how many of the text's lines start with its label}."""
    stripped = [line.strip() for line in text.splitlines()]
    return {name: sum(line.startswith(label[lang]) for line in stripped) for name, label in LABELS.items()}


class LiveWithLadderTexts(in_notebook.ReferenceExpectations):
    @property
    def misconceptions(self):
        known = super().misconceptions
        return {**known, MISCONCEPTION: dataclasses.replace(known[MISCONCEPTION], question=QUESTION, change=CHANGE)}


@pytest.fixture(scope="module")
def kit_document():
    document = vectors_document()
    for misconception in document["misconceptions"]:
        if misconception["id"] == MISCONCEPTION:
            misconception.update(question=dict(QUESTION), change=dict(CHANGE))
    return document


@pytest.fixture
def kit_check(kit_document):
    """A fresh kernel's check(...) of the student kit, on the vectors built from this checkout."""
    vectors = vectors_from_document(kit_document)
    return NotebookRuntime(StoredExpectations(lambda: vectors)).check


@pytest.fixture
def live_check():
    """A fresh kernel's check(...) of the full kit."""
    return NotebookRuntime(LiveWithLadderTexts()).check


# ---------------------------------------------------------------------------------------------
# the ladder itself


def result(status, *, cause=None, stub=False, misconception=None, title="t"):
    return CheckResult("c.x", "c", 0.0, 1.0, status, misconception, "symptom", False, stub=stub, title=title,
                       cause=cause)


def test_the_ladder_climbs_to_rung_2_by_itself_and_to_rung_3_only_on_request():
    ladder, failing = HintLadder(), [result(FAILED)]
    assert ladder.rung("causal_mask", None) == 1
    ladder.remember("causal_mask", failing, 1)
    for _ in range(3):  # plain runs that still fail stay at rung 2
        assert ladder.rung("causal_mask", None) == 2
        ladder.remember("causal_mask", failing, 2)
    assert ladder.rung("causal_mask", True) == 3  # one rung more than the last run showed
    ladder.remember("causal_mask", failing, 3)
    assert ladder.rung("causal_mask", True) == 3 and ladder.rung("causal_mask", None) == 2
    assert ladder.rung("causal_mask", False) == 1 and ladder.rung("causal_mask", 1) == 1
    assert ladder.rung("softmax_naive", None) == 1 and ladder.rung("softmax_naive", True) == 2
    assert ladder.rung("softmax_naive", 3) == 3
    ladder.remember("causal_mask", [result(PASSED)], 2)  # passing starts the ladder again
    assert ladder.rung("causal_mask", None) == 1
    ladder.remember("causal_mask", [result(ERROR, stub=True)], 1)  # an untouched stub is no attempt yet
    assert ladder.rung("causal_mask", None) == 1
    for wrong in (0, 4, -1):
        with pytest.raises(ValueError, match="hint="):
            ladder.rung("causal_mask", wrong)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_three_rungs_in_order_and_rung_3_only_on_request(kit, lang, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    first = printed(check, "causal_mask", mask_with_the_diagonal)
    assert "✘" in first and rung_lines(first, lang) == {"question": 1, "mistake": 0, "hint": 0, "change": 0}
    assert QUESTION[lang] in first and first.splitlines()[-1].strip().startswith(NEXT)
    second = printed(check, "causal_mask", mask_with_the_diagonal)
    assert rung_lines(second, lang) == {"question": 1, "mistake": 1, "hint": 1, "change": 0}
    assert "hint=3" in second.splitlines()[-1] and second.splitlines()[-1].strip().startswith(NEXT)
    # Each rung keeps what the one below showed and adds its own lines.
    assert [line for line in first.splitlines() if NEXT not in line] == \
           [line for line in second.splitlines() if NEXT not in line and not line.strip().startswith(
               (LABELS["mistake"][lang], LABELS["hint"][lang]))]
    again = printed(check, "causal_mask", mask_with_the_diagonal)
    assert again == second  # plain runs never reach rung 3
    third = printed(check, "causal_mask", mask_with_the_diagonal, hint=True)
    assert rung_lines(third, lang) == {"question": 1, "mistake": 1, "hint": 1, "change": 1}
    assert CHANGE[lang] in third and NEXT not in third
    assert printed(check, "causal_mask", mask_with_the_diagonal, hint=3) == third
    assert "✘" not in printed(check, "causal_mask", right_mask)
    assert rung_lines(printed(check, "causal_mask", mask_with_the_diagonal), lang)["mistake"] == 0  # passed: rung 1


@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_hint_true_names_the_mistake_at_once_and_hint_false_never(kit, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    named = printed(check, "causal_mask", mask_with_the_diagonal, hint=True)
    assert rung_lines(named, "en") == {"question": 1, "mistake": 1, "hint": 1, "change": 0}
    for _ in range(2):
        assert rung_lines(printed(check, "causal_mask", mask_with_the_diagonal, hint=False), "en")["mistake"] == 0
    assert CHANGE["en"] in printed(check, "causal_mask", mask_with_the_diagonal, hint=3)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_both_kits_print_the_same_bytes_at_every_rung(kit_check, live_check, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    for hint in (None, None, True, False, 3):
        assert printed(kit_check, "causal_mask", mask_with_the_diagonal, hint=hint) == \
               printed(live_check, "causal_mask", mask_with_the_diagonal, hint=hint)
    for exercise, attempt in (("mha_wrapper", PlainListWrapper), ("causal_mask", stub)):
        assert printed(kit_check, exercise, attempt) == printed(live_check, exercise, attempt)


def test_graded_output_shows_rungs_1_and_2_never_3(monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    known = dict(catalog.MISCONCEPTIONS_BY_ID)
    known[MISCONCEPTION] = dataclasses.replace(known[MISCONCEPTION], question=QUESTION, change=CHANGE)
    monkeypatch.setattr("autograder.running.runner.MISCONCEPTIONS_BY_ID", known)
    monkeypatch.setattr("autograder.running.in_notebook.MISCONCEPTIONS_BY_ID", known)
    results = run_exercise("causal_mask", {"causal_mask": mask_with_the_diagonal}, lang="en")
    named = [r for r in results if r.misconception == MISCONCEPTION]
    assert named and all(r.question and r.mistake and r.hint and r.change for r in named)
    for r in named:
        message = check_document(r)["message"]
        assert rung_lines(message, "en") == {"question": 1, "mistake": 1, "hint": 1, "change": 0}, message
        assert LABELS["mistake"]["en"] not in r.message and CHANGE["en"] not in message
    graded = printed(in_notebook.grade, "causal_mask", mask_with_the_diagonal)
    assert rung_lines(graded, "en")["mistake"] >= 1 and CHANGE["en"] not in graded and NEXT not in graded


@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_an_explanation_comes_only_once_every_public_check_passes(kit, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", "en")

    def counts_frozen_too(module):
        return sum(p.numel() for p in module.parameters())

    assert "Why it works" in printed(check, "parameter_counts", solutions.count_parameters)
    failing = printed(check, "parameter_counts", counts_frozen_too)
    assert "✘" in failing and "Why it works" not in failing


# ---------------------------------------------------------------------------------------------
# the first line: never "done" while a public check fails


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_the_progress_line_never_says_done_while_a_public_check_fails(kit, lang, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    done = {"en": "all", "zh": "全部"}

    def counts_frozen_too(module):  # passes the notes' check, fails the other public one and the preview
        return sum(p.numel() for p in module.parameters())

    solved = printed(check, "parameter_counts", solutions.count_parameters).splitlines()[0]
    assert "✔" in solved and done[lang] in solved and "✘" not in solved
    for exercise, attempt in (("parameter_counts", counts_frozen_too), ("causal_mask", mask_with_the_diagonal),
                              ("causal_mask", stub), ("mha_wrapper", PlainListWrapper)):
        output = printed(check, exercise, attempt)
        heading, failing = output.splitlines()[0], output.count("✘")
        assert failing > 1 and "✘" in heading and "✔" not in heading and done[lang] not in heading, heading
    heading = printed(check, "parameter_counts", counts_frozen_too).splitlines()[0]
    # 1 of 3 public checks passes; the 1.5 points of the passing one are safe, the other 2.5 are at stake.
    expected = {"en": "1 passing, 2 failing (previews included) · 2.5 of 4 points still at stake",
                "zh": "1 项通过，2 项未通过（含预览）· 共 4 分，其中 2.5 分仍待争取"}
    assert expected[lang] in heading, heading


# ---------------------------------------------------------------------------------------------
# one message per root cause


EXERCISE = Exercise("demo", "00_demo", ("f",), {"en": "Demo", "zh": "示例"}, points=4)


def same_cause_results(count):
    cause = Cause(None, "shape.wrong", (("got_shape", "(2, 3)"),))
    return [CheckResult(f"demo.{i}", "demo", 0.0, 1.0, FAILED, None, f"check {i}: output shape (2, 3)", False,
                        hint="hint — the concept", mistake="likely mistake — a name", title=f"check {i}",
                        cause=cause) for i in range(count)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_failures_with_one_cause_are_one_full_row_and_one_folded_line(lang):
    results = [*same_cause_results(4), result(PASSED, title="passes")]
    assert [len(row.same) for row in rows(results)] == [3, 0]
    lines = table(EXERCISE, results, lang, hidden=False, messages=catalog.MESSAGES, rung=2).splitlines()
    marked = [line.strip() for line in lines[1:] if line.strip()[:1] in ("✔", "✘")]
    folded = {"en": "3 more checks fail for the same reason: check 1; check 2; check 3",
              "zh": "另有 3 项检查因同样的原因未通过：check 1；check 2；check 3"}
    assert marked == ["✘ check 0: output shape (2, 3)", f"✘ {folded[lang]}", "✔ symptom"]
    # The hint is printed once, not once per failing check.
    assert sum(line.strip() == "hint — the concept" for line in lines) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_named_mistake_folds_its_checks_and_the_errors_that_follow_from_it(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = printed(NotebookRuntime(LiveWithLadderTexts()).check, "mha_wrapper", PlainListWrapper, hint=True)
    marked = [line.strip() for line in output.splitlines() if line.strip()[:1] == "✘"]
    same = {"en": "2 more checks fail for the same reason", "zh": "另有 2 项检查因同样的原因未通过"}
    follow = {"en": "3 more checks stop with an error that follows from the mistake above",
              "zh": "另有 3 项检查因上面这个错误而出错"}
    assert [line for line in marked if line.startswith(("✘ " + same[lang], "✘ " + follow[lang]))] == marked[1:3]
    # torch's own English words, labelled as such inside a sentence in the learner's language, once per text.
    words = {"en": "in PyTorch's own words: “expected m1 and m2 to have the same dtype",
             "zh": "PyTorch 的原话（英文）是：“expected m1 and m2 to have the same dtype"}
    assert output.count(words[lang]) == 1, output
    assert output.count("expected m1 and m2") == 1 and rung_lines(output, lang)["hint"] == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_untouched_stub_is_one_line(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = printed(NotebookRuntime(LiveWithLadderTexts()).check, "causal_mask", stub)
    lines = output.splitlines()
    assert len(lines) == 2 and lines[1].strip().startswith("✘") and output.count("NotImplementedError") == 1, output


def test_graded_records_carry_the_ladder_and_the_feedback_page_shows_it_once_per_exercise():
    from autograder.grading.notebooks import NotebookResult
    from autograder.outputs import feedback_page, records

    results = run_exercise("causal_mask", {"causal_mask": mask_with_the_diagonal}, lang="en")
    named = [r for r in results if r.misconception == MISCONCEPTION]
    assert len(named) >= 2 and all(r.hint in r.full_message.splitlines() for r in named)
    notebook = NotebookResult("s", "03_causal_attention", "03.ipynb", "graded", "", results)
    page = feedback_page.feedback_html(records.student_document("s", "attention", "hash", 1, [notebook]), "en")
    assert page.count(named[0].hint) == 1 and page.count(named[0].message) == 1
    assert all(r.message.split(": ")[0] in page for r in named)


def test_follow_on_errors_attach_to_the_named_mistake_and_a_hidden_ones_text_stays_withheld():
    named = CheckResult("demo.a", "demo", 0.0, 1.0, FAILED, "m", "a: wrong", False, title="a",
                        cause=Cause("m", "demo.wrong", ()))

    def raised(check_id, hidden, text):
        fields = (("detail", text), ("type", "RuntimeError"))
        return CheckResult(check_id, "demo", 0.0, 1.0, ERROR, None, f"{check_id}: raised", hidden, title=check_id,
                           cause=Cause(None, "error.other", fields))

    signature = CheckResult("demo.d", "demo", 0.0, 1.0, ERROR, None, "d: keep the signature", False, title="d",
                            cause=Cause(None, "error.wrong_signature", (("type", "TypeError"),)))
    results = [named, raised("demo.b", False, "dtype mismatch"), raised("demo.c", True, "SECRET"), signature]
    assert [(row.shown.id, len(row.follow_on)) for row in rows(results)] == [("demo.a", 2), ("demo.d", 0)]
    text = table(EXERCISE, results, "en", hidden=True, messages=catalog.MESSAGES)
    assert "2 more checks stop with an error that follows from the mistake above: demo.b; demo.c" in text
    assert "“dtype mismatch”" in text and "SECRET" not in text and "✘ d: keep the signature" in text
    # Without a named mistake before them, errors are rows of their own.
    assert len(rows(results[1:])) == 3


# ---------------------------------------------------------------------------------------------
# a rung with nothing new says so (issue 41, item 4)

NOTHING_MORE = {"en": "no further hint: ", "zh": "没有更多提示："}


def wrong_attempts():
    """A sample of tests/mutants/ across the notebooks' exercises: failures no known mistake reproduces (a float
    mask, a mask of one size, a fill too small to hide the future, dropout without its scaling, route 1 in float32)
    and named ones whose ladders go all the way up."""
    from mutants import causal, multihead

    routes = {"causal_weights_renormalised": solutions.causal_weights_renormalised,
              "causal_weights_neg_inf": solutions.causal_weights_neg_inf}
    yield "causal_mask", {"causal_mask": causal.causal_mask_float}
    yield "causal_mask", {"causal_mask": causal.causal_mask_hardcoded}
    yield "causal_mask", {"causal_mask": causal.causal_mask_with_diagonal}
    yield "masking_routes", {**routes, "causal_weights_renormalised": causal.causal_weights_renormalised_float32}
    yield "masking_routes", {**routes, "causal_weights_neg_inf": causal.causal_weights_neg_inf_wrong_dim}
    yield "causal_attention", {"CausalAttention": causal.CausalAttention_small_fill}
    yield "causal_attention", {"CausalAttention": causal.CausalAttention_dropout_not_scaled}
    yield "mha_wrapper", {"MultiHeadAttentionWrapper": PlainListWrapper}
    yield "merge_heads", {"merge_heads": multihead.merge_heads_no_contiguous}
    yield "split_heads", {"split_heads": multihead.split_heads_float}
    yield "multi_head_attention", {"MultiHeadAttention": multihead.MHAScaleByDIn}
    yield "padding_mask", {"MultiHeadAttention": multihead.MHAPaddingFilledWithZero}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rung_adds_something_or_says_there_is_no_more(lang):
    exercises = {exercise.id: exercise for exercise in EXERCISES}
    unnamed = 0
    for exercise_id, namespace in wrong_attempts():
        results = run_exercise(exercise_id, namespace, include_hidden=False, lang=lang)
        assert any(r.status != PASSED for r in results), exercise_id
        unnamed += all(r.misconception is None for r in results)
        shown = [table(exercises[exercise_id], results, lang, hidden=False, messages=catalog.MESSAGES, rung=rung)
                 for rung in (1, 2, 3)]
        assert NOTHING_MORE[lang] not in shown[0], (exercise_id, shown[0])
        for below, above in zip(shown, shown[1:], strict=False):  # rung 2 after rung 1, rung 3 after rung 2
            new = [line for line in above.splitlines() if line not in below.splitlines()]
            assert new or NOTHING_MORE[lang] in above, (exercise_id, above)
    assert unnamed >= 3  # the sample holds failures without a named mistake, the case this rule is for


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_a_failure_without_a_named_mistake_says_so_on_the_next_run_and_on_request(kit, lang, request, monkeypatch):
    from mutants import causal

    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    first = printed(check, "causal_mask", causal.causal_mask_float)
    assert "✘" in first and NOTHING_MORE[lang] not in first and NEXT not in first
    for hint in (None, True, 3):
        again = printed(check, "causal_mask", causal.causal_mask_float, hint=hint)
        assert again != first and again.count(NOTHING_MORE[lang]) == len(rows(
            run_exercise("causal_mask", {"causal_mask": causal.causal_mask_float}, include_hidden=False))), again
    assert NOTHING_MORE[lang] not in printed(check, "causal_mask", causal.causal_mask_float, hint=False)


def test_a_rung_with_nothing_new_is_said_only_where_it_is_so():
    """The rule can fail: a rung that adds a line is not marked, one that adds none is, and graded output (which the
    student cannot climb) carries no such line."""
    named = dataclasses.replace(result(FAILED, misconception="m", cause=Cause("m", "k", ())),
                                question="q", mistake="likely mistake — m", hint="hint — h")
    unnamed = result(FAILED, cause=Cause(None, "other", ()))
    for rung, marked in ((1, []), (2, ["nothing_known"]), (3, ["no_more", "nothing_known"])):
        text = table(EXERCISE, [named, unnamed], "en", hidden=False, messages=catalog.MESSAGES, rung=rung)
        lines = [line.strip() for line in text.splitlines()]
        expected = [catalog.MESSAGES[f"ladder.{key}"]["en"] for key in marked]
        assert [line for line in lines if line.startswith(NOTHING_MORE["en"])] == expected, text
    graded = table(EXERCISE, [named, unnamed], "en", hidden=True, messages=catalog.MESSAGES, rung=2)
    assert NOTHING_MORE["en"] not in graded
