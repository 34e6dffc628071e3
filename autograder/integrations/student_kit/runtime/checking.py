"""The student kit's source of expectations: the stored public checks, each with the full kit's probe and judge,
and the expectations read from the stored vectors instead of computed from the reference."""

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autograder.checking.check_types import CheckResult, Exercise, Misconception
from autograder.checking.expectations import Expectations
from autograder.integrations.student_kit.runtime.vectors import StoredCheck, Vectors
from autograder.running.notebook_runtime import Messages, RunnableCheck, run_checks

__all__ = ["StoredExpectations", "run_public"]


class StoredExpectations:
    """The kit's stored vectors as the notebook runtime's source, read on first use (`load_vectors()`): public
    checks only, their cases fixed (the seed is ignored), and no grading."""

    grades = False
    default_seed = None

    def __init__(self, load_vectors: Callable[[], Vectors]) -> None:
        self._load_vectors = load_vectors

    @functools.cached_property
    def vectors(self) -> Vectors:
        return self._load_vectors()

    @property
    def messages(self) -> Messages:
        return self.vectors.messages

    @property
    def misconceptions(self) -> Mapping[str, Misconception]:
        return self.vectors.misconceptions

    @property
    def exercises(self) -> Sequence[Exercise]:
        return list(self.vectors.exercises.values())

    def exercise(self, exercise_id: str) -> Exercise:
        return self.vectors.exercise(exercise_id)

    def checks(self, exercise_id: str, *, include_hidden: bool, seed: int | None) -> list[RunnableCheck]:
        return [_runnable(check) for check in self.vectors.checks_of(exercise_id)]


def _runnable(check: StoredCheck) -> RunnableCheck:
    def expectations(index: int, record: dict[str, Any], case: dict[str, Any]) -> Expectations:
        return Expectations.stored(check.expected[index])

    return RunnableCheck(check, check.probe, lambda: check.cases, expectations, check.graded_later)


def run_public(exercise_id: str, namespace: Mapping[str, Any], vectors: Vectors, lang: str) -> list[CheckResult]:
    """One CheckResult per stored public check of the exercise, in the full kit's order."""
    return run_checks(StoredExpectations(lambda: vectors), exercise_id, namespace, lang, include_hidden=False,
                      seed=None)
