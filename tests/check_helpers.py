"""Helpers the mutation suites share: run an exercise's checks on a namespace, keyed by check id."""

import pytest

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.running.runner import DEFAULT_SEED, run_exercise


def results_by_id(exercise_id, namespace, seed=DEFAULT_SEED, lang="en", include_hidden=True):
    results = run_exercise(exercise_id, namespace, seed=seed, lang=lang, include_hidden=include_hidden)
    return {result.id: result for result in results}


def score(results):
    return sum(result.score for result in results.values())


def assert_full_marks(exercise_id, results, seed):
    """Every check passed, the exercise's points earned, and no misconception named on correct code."""
    failed = [r.message for r in results.values() if r.status != PASSED]
    assert not failed, f"seed {seed}: {failed}"
    assert score(results) == pytest.approx(EXERCISES_BY_ID[exercise_id].points), f"seed {seed}"
    assert all(r.misconception is None for r in results.values()), f"seed {seed}"


def failing_rows(text):
    """The ✘ rows of a check(...) table as printed: one per cause, each folded line a row of its own."""
    return [line for line in text.splitlines() if line.startswith("  ✘")]
