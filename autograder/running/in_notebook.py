"""What notebook cells call in the full kit: the one notebook runtime (autograder.running.notebook_runtime) with the
expectations computed from the reference, for the live catalogue's checks."""

from collections.abc import Mapping, Sequence
from typing import Any

from autograder.checking.check_types import Check, Exercise, Misconception
from autograder.checking.expectations import Expectations
from autograder.course import catalog
from autograder.course.assignment import DEFAULT_SEED
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES
from autograder.course.exercises import exercise as find_exercise
from autograder.course.shared.plan import address_of
from autograder.running.notebook_runtime import Messages, NotebookRuntime, RunnableCheck, kernel_heap_settled
from autograder.running.runner import cases_for

__all__ = ["MISCONCEPTIONS_BY_ID", "ReferenceExpectations", "check", "check_all", "grade"]


class ReferenceExpectations:
    """The full kit's source: the live catalogue's checks, their cases drawn with the seed and their expectations
    computed from the reference when a judge first asks."""

    grades = True
    default_seed = DEFAULT_SEED

    @property
    def messages(self) -> Messages:
        return catalog.MESSAGES

    @property
    def misconceptions(self) -> Mapping[str, Misconception]:
        return MISCONCEPTIONS_BY_ID

    @property
    def exercises(self) -> Sequence[Exercise]:
        return EXERCISES

    def exercise(self, exercise_id: str) -> Exercise:
        return find_exercise(exercise_id)

    def checks(self, exercise_id: str, *, include_hidden: bool, seed: int | None) -> list[RunnableCheck]:
        drawn_with = self.default_seed if seed is None else seed
        return [_runnable(check, drawn_with) for check in catalog.checks_of(exercise_id, include_hidden=include_hidden)]


def _runnable(check: Check, seed: int) -> RunnableCheck:
    def expectations(index: int, record: dict[str, Any], case: dict[str, Any]) -> Expectations:
        return check.expect(record, case)

    return RunnableCheck(check, address_of(check.probe), lambda: cases_for(check, seed), expectations,
                         catalog.graded_later(check))


kernel_heap_settled()  # the session starts: the import cell's heap is never walked again
RUNTIME = NotebookRuntime(ReferenceExpectations())  # the kernel's session (its hint ladder)
check = RUNTIME.check
check_all = RUNTIME.check_all
grade = RUNTIME.grade
