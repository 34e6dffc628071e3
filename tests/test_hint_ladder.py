"""The hint ladder: check(...) shows the symptom first; the named mistake and its hint come on request
(hint=True) or on the next run of the same exercise that still fails; graded output always carries them."""

import contextlib
import io

import pytest
import torch

from autograder.checking.check_types import FAILED, PASSED, CheckResult
from autograder.checking.feedback import HintLadder
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.outputs.records import check_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import run_exercise

MISTAKE = {"en": "likely mistake", "zh": "可能的错误"}
HELD_BACK = "»"


def mask_with_the_diagonal(num_tokens):
    """A student's causal_mask that also hides each token from itself (misconception mask_includes_diagonal)."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))


def right_mask(num_tokens):
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)


def result(status, hint=""):
    return CheckResult("c.x", "c", 0.0, 1.0, status, None, "symptom", False, hint=hint)


def test_the_ladder_holds_the_hint_back_once_then_shows_it_until_the_exercise_passes():
    ladder = HintLadder()
    assert not ladder.shows_hints("causal_mask", None)
    ladder.remember("causal_mask", [result(FAILED, "[likely mistake: m]")])
    assert ladder.shows_hints("causal_mask", None)
    assert not ladder.shows_hints("causal_mask", False) and not ladder.shows_hints("softmax_naive", None)
    ladder.remember("causal_mask", [result(FAILED, "[likely mistake: m]")])
    assert ladder.shows_hints("causal_mask", None)
    ladder.remember("causal_mask", [result(PASSED)])
    assert not ladder.shows_hints("causal_mask", None)
    assert ladder.shows_hints("causal_mask", True)


def printed(check, *arguments, **options):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check(*arguments, **options)
    return output.getvalue()


@pytest.fixture
def kit_check():
    """A fresh kernel's check(...) of the student kit, on the vectors built from this checkout."""
    vectors = vectors_from_document(vectors_document())
    return NotebookRuntime(StoredExpectations(lambda: vectors)).check


@pytest.fixture
def live_check():
    """A fresh kernel's check(...) of the full kit."""
    return NotebookRuntime(in_notebook.ReferenceExpectations()).check


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_check_shows_the_symptom_first_and_the_mistake_on_the_next_failing_run(kit, lang, request, monkeypatch):
    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    first = printed(check, "causal_mask", mask_with_the_diagonal)
    assert "✘" in first and MISTAKE[lang] not in first and HELD_BACK in first
    second = printed(check, "causal_mask", mask_with_the_diagonal)
    assert MISTAKE[lang] in second and HELD_BACK not in second
    # The symptom lines are the same on both rungs: the second only adds the named mistake.
    assert [line for line in first.splitlines() if HELD_BACK not in line] == \
           [line.split(" [")[0] if MISTAKE[lang] in line else line for line in second.splitlines()]
    assert "✘" not in printed(check, "causal_mask", right_mask)
    assert MISTAKE[lang] not in printed(check, "causal_mask", mask_with_the_diagonal)  # passed in between: rung 1


@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_hint_true_names_the_mistake_at_once_and_hint_false_never(kit, request):
    check = request.getfixturevalue(kit)
    assert MISTAKE["en"] in printed(check, "causal_mask", mask_with_the_diagonal, hint=True)
    for _ in range(2):
        assert MISTAKE["en"] not in printed(check, "causal_mask", mask_with_the_diagonal, hint=False)


def test_both_kits_print_the_same_rungs(kit_check, live_check, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    for _ in range(2):
        assert printed(kit_check, "causal_mask", mask_with_the_diagonal) == \
               printed(live_check, "causal_mask", mask_with_the_diagonal)


def test_graded_output_names_the_mistake():
    results = run_exercise("causal_mask", {"causal_mask": mask_with_the_diagonal}, lang="en")
    named = [r for r in results if r.misconception]
    assert named and all(r.hint and MISTAKE["en"] in check_document(r)["message"] for r in named)
    assert all(MISTAKE["en"] not in r.message for r in results)
    assert MISTAKE["en"] in printed(in_notebook.grade, "causal_mask", mask_with_the_diagonal)


@pytest.mark.parametrize("kit", ["live_check", "kit_check"])
def test_an_explanation_comes_only_once_every_public_check_passes(kit, request, monkeypatch):
    from attnkit import solutions

    check = request.getfixturevalue(kit)
    monkeypatch.setenv("ATTNKIT_LANG", "en")

    def counts_frozen_too(module):
        return sum(p.numel() for p in module.parameters())

    assert "Why it works" in printed(check, "parameter_counts", solutions.count_parameters)
    failing = printed(check, "parameter_counts", counts_frozen_too)
    assert "✘" in failing and "Why it works" not in failing
