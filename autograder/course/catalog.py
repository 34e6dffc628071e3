"""One catalogue of every check and message, gathered from the exercise folders' declarations
(autograder.course.registry), and of every known mistake, read from the table of mistakes (autograder.course.mistakes).

Every hidden check has a public **preview** here, right before it: the same probe, judge and expectations on cases
its own generator draws from a fixed public seed, worth 0 points, run by `check(...)` and never by `grade(...)`. So
every kind of requirement graded later is shown first, with visible inputs; grading only varies values and shapes.
"""

import dataclasses
import functools
import random
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from autograder.checking.check_types import Check
from autograder.course.exercises import exercise as find_exercise
from autograder.course.messages import MESSAGES as COMMON_MESSAGES
from autograder.course.mistakes import MISTAKES
from autograder.course.registry import declarations

__all__ = [
    "CHECKS", "CHECKS_BY_ID", "GRADED_CHECKS", "MESSAGES", "MISCONCEPTIONS", "MISCONCEPTIONS_BY_ID", "PREVIEW_TITLE",
    "checks_of", "graded_later",
]

_DECLARATIONS = declarations()


def _merged(*tables: Mapping[str, Any]) -> MappingProxyType[str, Any]:
    merged: dict[str, Any] = {}
    for table in tables:
        duplicated = merged.keys() & table.keys()
        if duplicated:
            raise ValueError(f"defined twice: {sorted(duplicated)}")
        merged.update(table)
    return MappingProxyType(merged)


PREVIEW_TITLE = {"en": "{title} (preview: graded later on new values)", "zh": "{title}（预览：评分时换用新的数值）"}


def _preview_cases(cases: Callable[[random.Random], list[Any]], check_id: str, _rng: random.Random) -> list[Any]:
    """The hidden check's cases, drawn from a seed of their own: the same wherever and whenever check() runs."""
    return cases(random.Random(f"preview/{check_id}"))


def _preview(check: Check) -> Check:
    title = {lang: text.format(title=check.title[lang]) for lang, text in PREVIEW_TITLE.items()}
    return dataclasses.replace(check, id=f"{check.id}.preview", points=0, hidden=False, preview=True, title=title,
                               cases=functools.partial(_preview_cases, check.cases, check.id))


GRADED_CHECKS = tuple(check for declared in _DECLARATIONS for check in declared.checks)  # what grade() runs
CHECKS = tuple(shown for check in GRADED_CHECKS for shown in ((_preview(check), check) if check.hidden else (check,)))
CHECKS_BY_ID = MappingProxyType({check.id: check for check in CHECKS})
# A check's title is a field of the check; the tables and pages read it as the message "<check id>.title".
_TITLES = {f"{check.id}.title": check.title for check in CHECKS}
MESSAGES = _merged(COMMON_MESSAGES, *(declared.messages for declared in _DECLARATIONS), _TITLES)
MISCONCEPTIONS_BY_ID = _merged(*({m.id: m} for m in MISTAKES))  # the table of mistakes: one id, one entry
MISCONCEPTIONS = tuple(MISCONCEPTIONS_BY_ID.values())  # by family, in course order (autograder.course.mistakes)


def graded_later(check: Check) -> float:
    """What the hidden check a preview previews is worth (0 for a check that is no preview): check(...)'s progress
    line counts it as graded later while the preview passes, as failing while it fails."""
    return CHECKS_BY_ID[check.id.removesuffix(".preview")].points if check.preview else 0.0


def checks_of(exercise_id: str, include_hidden: bool = True) -> tuple[Check, ...]:
    """The exercise's checks: with include_hidden, every graded check (public and hidden, no preview); without,
    what check(...) runs (public checks and the previews of the hidden ones)."""
    find_exercise(exercise_id)
    if include_hidden:
        return tuple(c for c in CHECKS if c.exercise == exercise_id and not c.preview)
    return tuple(c for c in CHECKS if c.exercise == exercise_id and not c.hidden)
