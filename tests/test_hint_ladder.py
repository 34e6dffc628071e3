"""The hint ladder and the table around it. check(...) shows rung 1 first (the symptom and a question), rung 2 on
request (hint=True) or on the next run that still fails (the reproduced mistake and its hint), and rung 3 only on
request (hint=True once more, or hint=3: what to change, in words); graded output carries rungs 1 and 2, never 3.
The table has one row per cause of failure, and its first line never says done while a public check fails."""

import contextlib
import dataclasses
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import ERROR, FAILED, PASSED, Cause, CheckResult, Exercise
from autograder.checking.feedback import HintLadder, LadderCause, Step, rows, table
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.course.exercises import exercise as find_exercise
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
    "mistake": {"en": "reproduced mistake — ", "zh": "重现出的错误："},
    "hint": {"en": "hint — ", "zh": "提示："},
    "change": {"en": "what to change — ", "zh": "怎么改："},
}
NEXT = "»"  # the footer line naming the next rung
NOTHING_MORE = {"en": "no further hint: ", "zh": "没有更多提示："}  # a rung with nothing new


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
    cause = LadderCause.of(failing[0])

    def rung(exercise, requested):
        return ladder.step(exercise, cause, requested).rung

    def remember(exercise, results, shown):
        ladder.remember(exercise, results, {cause: Step(shown)})

    assert rung("causal_mask", None) == 1
    remember("causal_mask", failing, 1)
    for _ in range(3):  # plain runs that still fail stay at rung 2
        assert rung("causal_mask", None) == 2
        remember("causal_mask", failing, 2)
    assert ladder.step("causal_mask", cause, True) == Step(3, again=False)  # one rung more than the last run showed
    remember("causal_mask", failing, 3)
    # Asked again at the top: shown again, marked as such (the table then says there is no more).
    assert ladder.step("causal_mask", cause, True) == Step(3, again=True) == ladder.step("causal_mask", cause, 3)
    assert rung("causal_mask", None) == 2
    assert rung("causal_mask", False) == 1 and rung("causal_mask", 1) == 1
    assert rung("softmax_naive", None) == 1 and rung("softmax_naive", True) == 2
    assert rung("softmax_naive", 3) == 3
    remember("causal_mask", [result(PASSED)], 2)  # passing starts the ladder again
    assert rung("causal_mask", None) == 1
    remember("causal_mask", [result(ERROR, stub=True)], 1)  # an untouched stub is no attempt yet
    assert rung("causal_mask", None) == 1
    for wrong in (0, 4, -1, 2.5, "2"):
        with pytest.raises(ValueError, match="hint="):
            ladder.step("causal_mask", cause, wrong)


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
    assert CHANGE[lang] in third and NEXT not in third and NOTHING_MORE[lang] not in third
    # Rung 3 once more (hint=3 or hint=True again) repeats it with the line saying there is no more.
    for hint in (3, True):
        again = printed(check, "causal_mask", mask_with_the_diagonal, hint=hint)
        no_more = [line for line in again.splitlines() if line.strip() == catalog.MESSAGES["ladder.no_more"][lang]]
        assert len(no_more) == 1 and [line for line in again.splitlines() if line not in no_more] == \
               third.splitlines(), again
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
    for wrong in (4, 0, "3"):  # refused before any check runs, with the rungs there are
        with pytest.raises(ValueError, match="1, 2 or 3"):
            printed(check, "causal_mask", stub, hint=wrong)


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
    # 1 of 3 public checks passes; the 1.5 points of the passing one are secured, the other 2.5 are not.
    expected = {"en": "1 passing, 2 failing (previews included) · of 4 points: 1.5 secured, 2.5 on checks that still "
                      "fail",
                "zh": "1 项通过，2 项未通过（含预览）· 共 4 分：1.5 分已拿到，2.5 分在仍未通过的检查上"}
    assert expected[lang] in heading, heading


# ---------------------------------------------------------------------------------------------
# one message per root cause


EXERCISE = Exercise("demo", "00_demo", ("f",), {"en": "Demo", "zh": "示例"}, points=4)


def same_cause_results(count):
    cause = Cause(None, "shape.wrong", (("got_shape", "(2, 3)"),))
    return [CheckResult(f"demo.{i}", "demo", 0.0, 1.0, FAILED, None, f"check {i}: output shape (2, 3)", False,
                        hint="hint — the concept", mistake="reproduced mistake — a name", title=f"check {i}",
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
def test_a_named_mistake_folds_its_checks_and_the_errors_it_causes(lang, monkeypatch):
    """The heads in a plain list: the errors of the contract previews (.to(float64) leaves the heads float32) are
    the ones the reference with a plain list raises, numbers included, so they fold as failing for the same reason
    (issue 58), with the modes preview's missing parameter; no "nothing shows that the mistake above causes it"."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = printed(NotebookRuntime(LiveWithLadderTexts()).check, "mha_wrapper", PlainListWrapper, hint=True)
    marked = [line.strip() for line in output.splitlines() if line.strip()[:1] == "✘"]
    same = {"en": "6 more checks fail for the same reason", "zh": "另有 6 项检查因同样的原因未通过"}
    assert len(marked) == 2 and marked[1].startswith("✘ " + same[lang]), output
    follow = catalog.MESSAGES["fold.follow_on"][lang].split("{count}")[1].split("：")[0].split(":")[0].strip()
    assert follow not in output, output
    assert "expected m1 and m2" not in output and rung_lines(output, lang)["hint"] == 1


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
    assert "2 more checks stop with an error; nothing shows that the mistake above causes it, so fix that first and " \
           "run again: demo.b; demo.c" in text and "follows from" not in text
    assert "“dtype mismatch”" in text and "SECRET" not in text and "✘ d: keep the signature" in text
    # Without a named mistake before them, errors are rows of their own.
    assert len(rows(results[1:])) == 3


# ---------------------------------------------------------------------------------------------
# a rung with nothing new says so (issue 41, item 4)



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
                                question="q", mistake="reproduced mistake — m", hint="hint — h", values_shown=True)
    unnamed = dataclasses.replace(result(FAILED, cause=Cause(None, "other", ())), values_shown=True)
    # Under a named mistake, the unnamed row does not say "no known mistake" (the attempt has one): it says that
    # nothing proves the named one causes it (issue 58).
    for rung, marked in ((1, []), (2, ["nothing_known_besides"]), (3, ["no_more", "nothing_known_besides"])):
        text = table(EXERCISE, [named, unnamed], "en", hidden=False, messages=catalog.MESSAGES, rung=rung)
        lines = [line.strip() for line in text.splitlines()]
        expected = [catalog.MESSAGES[f"ladder.{key}"]["en"] for key in marked]
        assert [line for line in lines if line.startswith(NOTHING_MORE["en"])] == expected, text
    graded = table(EXERCISE, [named, unnamed], "en", hidden=True, messages=catalog.MESSAGES, rung=2)
    assert NOTHING_MORE["en"] not in graded


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_no_further_hint_line_points_only_to_what_the_row_shows(lang):
    """"the values above" only where the row shows values (or their picture); "the line the message names" only where
    an error names a line of the student's; otherwise the message itself (issue 58: a learner was sent to values a
    contract check never shows)."""
    values, line, neither = ("the values above", "上面的数值"), ("the line the message above names", "指出的那一行"), \
        ("what the message above says", "上面的信息对你的结果的描述")
    pick = 0 if lang == "en" else 1

    def said(result_at_top):
        text = table(EXERCISE, [result_at_top], lang, hidden=False, messages=catalog.MESSAGES, rung=2)
        return [line for line in text.splitlines() if line.strip().startswith(NOTHING_MORE[lang])]

    shown = dataclasses.replace(result(FAILED, cause=Cause(None, "other", ())), values_shown=True)
    at_line = result(FAILED, cause=Cause(None, "error.broadcast_axis", (("line", "y = a + b"),)))
    plain = result(FAILED, cause=Cause(None, "contract.input_modified", ()))
    for row, where in ((shown, values), (at_line, line), (plain, neither)):
        [told] = said(row)
        assert where[pick] in told, told
        assert all(other[pick] not in told for other in (values, line, neither) if other is not where), told
    # The same from real checks: the contract's preview of a forward that edits its input shows no values.
    from mutants import causal

    results = run_exercise("causal_attention", {"CausalAttention": causal.CausalAttention_modifies_input},
                           include_hidden=False, lang=lang)
    [contract] = [r for r in results if r.id == "causal_attention.properties.preview"]
    assert contract.status != PASSED and not contract.values_shown and contract.misconception is None
    text = table(find_exercise("causal_attention"), results, lang, hidden=False, messages=catalog.MESSAGES, rung=2)
    [told] = [line for line in text.splitlines() if line.strip().startswith(NOTHING_MORE[lang])]
    assert values[pick] not in told and neither[pick] in told, text


# ---------------------------------------------------------------------------------------------
# a ladder per mistake (issue 41, item 4): its state follows the cause, not the exercise


def inverted_mask(num_tokens):
    """A student's causal_mask that hides the past instead of the future (misconception mask_inverted)."""
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool).tril()


def named_in(text, lang, misconception):
    """Whether `text` names `misconception` on its rung-2 line."""
    name = catalog.MISCONCEPTIONS_BY_ID[misconception].name[lang]
    return f"{LABELS['mistake'][lang]}{name}" in [line.strip() for line in text.splitlines()]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_a_new_mistake_starts_at_rung_1_whatever_the_one_before_reached(kit, lang, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    printed(check, "causal_mask", mask_with_the_diagonal)
    assert named_in(printed(check, "causal_mask", mask_with_the_diagonal), lang, MISCONCEPTION)  # A at rung 2
    # A fixed, B made: B's rung 1 (its question, no name), not rung 2 on its very first run.
    first_b = printed(check, "causal_mask", inverted_mask)
    assert rung_lines(first_b, lang) == {"question": 1, "mistake": 0, "hint": 0, "change": 0}, first_b
    question = catalog.MISCONCEPTIONS_BY_ID["mask_inverted"].question[lang]
    assert question in first_b and first_b.splitlines()[-1].strip().startswith(NEXT)
    assert named_in(printed(check, "causal_mask", inverted_mask), lang, "mask_inverted")  # B's next run: rung 2
    # hint=True asks one rung more for the cause at hand: B's rung 3; A, back again, goes on from its own rung.
    assert rung_lines(printed(check, "causal_mask", inverted_mask, hint=True), lang)["change"] == 1
    back = printed(check, "causal_mask", mask_with_the_diagonal, hint=True)
    assert named_in(back, lang, MISCONCEPTION) and CHANGE[lang] in back and NOTHING_MORE[lang] not in back
    assert "✘" not in printed(check, "causal_mask", right_mask)  # a passing run starts every ladder again
    for attempt in (mask_with_the_diagonal, inverted_mask):
        again = printed(check, "causal_mask", attempt)
        assert rung_lines(again, lang)["mistake"] == 0, again


def two_named_causes():
    """Two failing checks of one exercise, each naming its own mistake (each with all three rungs)."""
    def named(check_id, mistake):
        return dataclasses.replace(result(FAILED, misconception=mistake, cause=Cause(mistake, "k", ())),
                                   id=check_id, title=check_id, message=f"{check_id}: wrong",
                                   question=f"question {mistake}", mistake=f"reproduced mistake — {mistake}",
                                   hint=f"hint — {mistake}", change=f"what to change — {mistake}")

    return [named("demo.a", "A"), named("demo.b", "B")]


def test_each_cause_of_one_run_is_shown_at_its_own_rung():
    ladder, results = HintLadder(), two_named_causes()
    a, b = (LadderCause.of(r) for r in results)
    ladder.remember("demo", results[:1], {a: Step(2)})  # A was shown at rung 2 by an earlier run, B never
    steps = ladder.steps("demo", results, None)
    assert steps == {a: Step(2, again=True), b: Step(1)}
    text = table(EXERCISE, results, "en", hidden=False, messages=catalog.MESSAGES, steps=steps)
    assert "reproduced mistake — A" in text and "question B" in text and "reproduced mistake — B" not in text
    # Both footers: B's next rung is its mistake, A's is what to change.
    assert [line.strip()[:1] for line in text.splitlines()].count(NEXT) == 2
    ladder.remember("demo", results, steps)
    assert ladder.steps("demo", results, True) == {a: Step(3), b: Step(2)}  # one rung more, for each cause
    assert ladder.steps("demo", results, None) == {a: Step(2, again=True), b: Step(2)}


def test_an_unnamed_cause_is_its_message_at_its_first_failing_check():
    def failing(check_id, key):
        return dataclasses.replace(result(FAILED, cause=Cause(None, key, ())), id=check_id)

    assert LadderCause.of(failing("demo.a", "k")) == LadderCause(None, "k", "demo.a")
    assert len({LadderCause.of(failing("demo.a", "k")), LadderCause.of(failing("demo.b", "k")),
                LadderCause.of(failing("demo.a", "j"))}) == 3
    assert LadderCause.of(two_named_causes()[0]) == LadderCause("A")


HINT_SEQUENCE = (None, None, True, True, 3, 3, None, True, 2, 2, None, True, True)


def ladder_attempts():
    """(exercise, attempt): a named mistake with three rungs, failures no known mistake reproduces (one value, one
    error per check), and a route finished beside a route with a named mistake."""
    from mutants import causal

    yield "causal_mask", (mask_with_the_diagonal,)
    yield "causal_mask", (causal.causal_mask_float,)
    yield "causal_mask", (causal.causal_mask_hardcoded,)
    yield "masking_routes", (solutions.causal_weights_renormalised, causal.causal_weights_neg_inf_wrong_dim)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_rung_repeats_the_one_before_word_for_word_without_saying_so(live_check, lang, monkeypatch):
    """Every request for a rung (hint=True, 2 or 3, or a plain run that climbs) on a failure that stays the same
    either shows something new, or says there is no more, or ends with the line naming the next rung."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    silent = []
    for exercise, attempt in ladder_attempts():
        solved = (getattr(solutions, name) for name in find_exercise(exercise).names)
        assert "✘" not in printed(live_check, exercise, *solved)  # a passing run: every ladder starts again
        before = printed(live_check, exercise, *attempt, hint=1)
        for hint in HINT_SEQUENCE:
            shown = printed(live_check, exercise, *attempt, hint=hint)
            said = NOTHING_MORE[lang] in shown or any(line.strip().startswith(NEXT) for line in shown.splitlines())
            if shown == before and not said:
                silent.append((exercise, attempt, hint, shown))
            before = shown
    assert not silent, silent[0]


# ---------------------------------------------------------------------------------------------
# the progress line counts finished parts truthfully (issue 41: "7 of 8 points still at stake" after route 1)


def route_points(route):
    """(points of the route's public checks, points of its hidden ones) in exercise 03-2, from the declarations."""
    checks = [check for check in catalog.checks_of("masking_routes") if check.id.startswith(f"masking_routes.{route}")]
    return sum(c.points for c in checks if not c.hidden), sum(c.points for c in checks if c.hidden)


def wrong_neg_inf_route(attn_scores):
    """Route 2 with a mask that also hides the diagonal: every check of the route fails."""
    return torch.softmax(attn_scores.masked_fill(mask_with_the_diagonal(attn_scores.shape[-1]), -torch.inf), dim=-1)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_a_finished_route_is_secured_and_graded_later_not_at_stake(kit, lang, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    (public_1, hidden_1), (public_2, hidden_2) = route_points("renormalise"), route_points("neg_inf")
    assert public_1 and hidden_1 and public_2 and hidden_2  # each route has points of both kinds
    points = public_1 + hidden_1 + public_2 + hidden_2
    heading = printed(check, "masking_routes", solutions.causal_weights_renormalised,
                      wrong_neg_inf_route).splitlines()[0]
    expected = {
        "en": f"✘ public checks: 3 passing, 3 failing (previews included) · of {points:g} points: {public_1:g} "
              f"secured, {hidden_1:g} graded later on new values (their previews pass), {public_2 + hidden_2:g} on "
              "checks that still fail",
        "zh": f"✘ 公开检查：3 项通过，3 项未通过（含预览）· 共 {points:g} 分：{public_1:g} 分已拿到，{hidden_1:g} 分"
              f"评分时换用新的数值（其预览已通过），{public_2 + hidden_2:g} 分在仍未通过的检查上"}
    assert heading.endswith(expected[lang]), heading
    # Route 2 not started: its points are on failing checks; nothing is secured yet, nothing graded later.
    heading = printed(check, "masking_routes", stub, stub).splitlines()[0]
    assert heading.endswith({"en": f"of {points:g} points: {points:g} on checks that still fail",
                             "zh": f"共 {points:g} 分：{points:g} 分在仍未通过的检查上"}[lang]), heading
    solved = printed(check, "masking_routes", solutions.causal_weights_renormalised,
                     solutions.causal_weights_neg_inf).splitlines()[0]
    assert solved.endswith({"en": f"{points:g} points in all, {hidden_1 + hidden_2:g} of them graded later on new "
                                  "values", "zh": f"其中 {hidden_1 + hidden_2:g} 分评分时换用新的数值"}[lang]), solved


def test_check_all_adds_up_the_same_parts(monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    (public_1, hidden_1), (public_2, hidden_2) = route_points("renormalise"), route_points("neg_inf")
    namespace = {"causal_weights_renormalised": solutions.causal_weights_renormalised,
                 "causal_weights_neg_inf": wrong_neg_inf_route}
    lines = printed(in_notebook.check_all, "03_causal_attention", namespace).splitlines()
    row = next(i for i, line in enumerate(lines) if "The two masking routes" in line)
    assert lines[row + 1].endswith(f"{public_1:g} secured, {hidden_1:g} graded later on new values (their previews "
                                   f"pass), {public_2 + hidden_2:g} on checks that still fail"), lines[row + 1]
    total = sum(exercise.points for exercise in EXERCISES if exercise.notebook == "03_causal_attention")
    assert lines[-1].endswith(f"of {total:g} points: {public_1:g} secured, {hidden_1:g} graded later on new values "
                              f"(their previews pass), {total - public_1 - hidden_1:g} on checks that still fail")


# ---------------------------------------------------------------------------------------------
# one message per cause across an exercise's checks (issue 41, item 5)


@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_one_transposed_product_in_mha_is_one_message_not_one_per_check(kit, request, monkeypatch):
    """`keys.transpose(1, 2)` on the heads' four axes makes every check raise at the same line, each with the shapes
    of its own input (text the message does not show): one row, the other checks folded under it."""
    from mutants import multihead

    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    output = printed(check, "multi_head_attention", multihead.MHATransposedLikeCausal)
    public = len(catalog.checks_of("multi_head_attention", include_hidden=False))
    assert output.count("swaps axes 1 and 2") == 1, output
    assert f"✘ {public - 1} more checks fail for the same reason: " in output, output


def test_a_same_reading_message_folds_only_without_a_name_and_only_in_public_checks():
    def failing(check_id, *, detail, hidden=False, misconception=None):
        fields = (("detail", detail), ("line", "x @ y"))
        return CheckResult(check_id, "demo", 0.0, 1.0, ERROR, misconception, f"{check_id}: the product at `x @ y`",
                           hidden, title=check_id, cause=Cause(misconception, "error.matmul_shapes", fields))

    public = [failing("demo.a", detail="(2, 3)"), failing("demo.b", detail="(4, 5)")]
    assert [len(row.same) for row in rows(public)] == [1]
    hidden = [failing("demo.a", detail="(2, 3)", hidden=True), failing("demo.b", detail="(4, 5)", hidden=True)]
    assert [len(row.same) for row in rows(hidden)] == [0, 0]  # withheld text: no claim that they are the same
    named = [failing("demo.a", detail="(2, 3)", misconception="m"), failing("demo.b", detail="(2, 3)")]
    # The second check has no evidence of the mistake: folded under it as an error only, not "the same reason".
    assert [(len(row.same), len(row.follow_on)) for row in rows(named)] == [(0, 1)]
    text = table(EXERCISE, named, "en", hidden=False, messages=catalog.MESSAGES)
    assert "1 more check stops with an error; nothing shows that the mistake above causes it" in text, text
    assert "same reason" not in text
