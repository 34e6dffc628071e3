"""The course's exercises, gathered from their folders' declarations (autograder.course.registry).

An exercise is declared once, in its folder's declaration: id, notebook, the names its checks receive, its title in
both languages, its time and difficulty. Its points are the sum of its checks' points.
"""

import dataclasses

from autograder.checking.check_types import Exercise
from autograder.course.registry import declarations
from autograder.i18n import pick

__all__ = ["EXERCISES", "EXERCISES_BY_ID", "NOTEBOOKS", "Exercise", "exercise", "exercise_title", "of_notebook"]


def _gathered() -> tuple[Exercise, ...]:
    declared = [exercise for declaration in declarations() for exercise in declaration.exercises]
    ids = [exercise.id for exercise in declared]
    duplicated = sorted({exercise_id for exercise_id in ids if ids.count(exercise_id) > 1})
    if duplicated:
        raise ValueError(f"exercises declared twice: {duplicated}")
    points: dict[str, float] = {}
    for declaration in declarations():
        for check in declaration.checks:
            points[check.exercise] = points.get(check.exercise, 0) + check.points
    unchecked = sorted(set(ids) - set(points))
    if unchecked:
        raise ValueError(f"exercises without checks (no points to give): {unchecked}")
    # Whole numbers stay integers: nbgrader's points and the tables show 6, not 6.0.
    exercises = [dataclasses.replace(exercise, points=_whole(points[exercise.id])) for exercise in declared]
    return tuple(sorted(exercises, key=lambda exercise: exercise.notebook))  # stable: declaration order kept


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


EXERCISES = _gathered()
EXERCISES_BY_ID = {exercise.id: exercise for exercise in EXERCISES}
NOTEBOOKS = tuple(dict.fromkeys(exercise.notebook for exercise in EXERCISES))


def of_notebook(name: str) -> tuple[Exercise, ...]:
    """The exercises of notebook `name`, in course order (none for a name that is not a notebook)."""
    return tuple(exercise for exercise in EXERCISES if exercise.notebook == name)


def exercise(exercise_id: str) -> Exercise:
    """The exercise with this id; a clear error for a typo in a notebook cell."""
    try:
        return EXERCISES_BY_ID[exercise_id]
    except KeyError:
        known = ", ".join(sorted(EXERCISES_BY_ID))
        raise KeyError(f"unknown exercise {exercise_id!r}; known exercises: {known}") from None


def exercise_title(exercise_id: str, lang: str = "en") -> str:
    """The exercise's title in `lang`; the id itself for an id this course does not know (an old record)."""
    known = EXERCISES_BY_ID.get(exercise_id)
    return pick(known.title, lang) if known else exercise_id
