"""One catalogue of every check, message and known mistake, gathered from the declaring modules of
autograder.course.checks."""

from types import MappingProxyType

from autograder.course.declarations import check_modules, misconception_modules
from autograder.course.exercises import exercise as find_exercise
from autograder.course.messages import MESSAGES as COMMON_MESSAGES

_MODULES = check_modules()


def _merged(*tables):
    merged = {}
    for table in tables:
        duplicated = merged.keys() & table.keys()
        if duplicated:
            raise ValueError(f"defined twice: {sorted(duplicated)}")
        merged.update(table)
    return MappingProxyType(merged)


CHECKS = tuple(check for module in _MODULES for check in module.CHECKS)
CHECKS_BY_ID = MappingProxyType({check.id: check for check in CHECKS})
MESSAGES = _merged(COMMON_MESSAGES, *(module.MESSAGES for module in _MODULES))
MISCONCEPTIONS_BY_ID = _merged(*({m.id: m} for module in misconception_modules() for m in module.MISCONCEPTIONS))
MISCONCEPTIONS = tuple(MISCONCEPTIONS_BY_ID.values())  # course order: notebook 01's first, the contract's last


def checks_of(exercise_id, include_hidden=True):
    find_exercise(exercise_id)
    return tuple(c for c in CHECKS if c.exercise == exercise_id and (include_hidden or not c.hidden))
