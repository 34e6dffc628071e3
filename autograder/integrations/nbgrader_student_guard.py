"""nbgrader's gradebook takes a student only with an id and names fit to show: `install()`, from the course's config.

Every way a student enters nbgrader's gradebook sets the attributes of its `Student` model: `nbgrader db student
add` and `import`, formgrader's Add/Edit student, autograde's new student (named by a `submitted/` folder, i.e. by
the inbound folder a student chose); `attnkit course new --roster` applies the same rules itself. `install()` checks
each value as it is set on a Student, before anything is written, with the roster's rules
(`course_roster.id_problem`, `name_problem`): an id of letters, digits and `-_.`; a name without control characters
or `<`/`>`. A refused value raises nbgrader's own `InvalidEntry` with a one-line reason, so nbgrader says "There was
an error processing assignment ..." for that student (autograde goes on with the class), the db commands stop at
that row, and formgrader's editor saves nothing. Rows already in a gradebook are read as they are (formgrader
escapes what it prints of them: `nbgrader_formgrader_escaping`).
"""

from collections.abc import Callable
from typing import Any

from nbgrader.api import InvalidEntry, Student
from sqlalchemy import event
from sqlalchemy.orm import object_session

from autograder.integrations.course_roster import id_problem, name_problem

__all__ = ["install"]

NAME_ATTRIBUTES = ("first_name", "last_name", "email", "lms_user_id")


def _refuse(student: Student, problem: str) -> None:
    """Raise InvalidEntry; a student already in the gradebook keeps every value it had (nbgrader's update sets one
    attribute after the other: the ones set before the refused one are forgotten, not committed later)."""
    session = object_session(student)
    if session is not None and student in session and student not in session.new:
        session.expire(student)
    raise InvalidEntry(f"student refused by the gradebook: {problem}") from None


def _refuse_an_unusable_id(student: Student, value: Any, _old: Any, _initiator: Any) -> None:
    problem = id_problem(value) if isinstance(value, str) else "an id that is not text"
    if problem:
        _refuse(student, problem)


def _name_check(column: str) -> Callable[[Student, Any, Any, Any], None]:
    def refuse_an_unusable_name(student: Student, value: Any, _old: Any, _initiator: Any) -> None:
        problem = name_problem(column, value) if value is None or isinstance(value, str) else \
            f"the {column} is not text"
        if problem:
            _refuse(student, problem)

    return refuse_an_unusable_name


_CHECKS = ((Student.id, _refuse_an_unusable_id),
           *((getattr(Student, column), _name_check(column)) for column in NAME_ATTRIBUTES))


def install() -> None:
    """Check every Student id and name set in this process; idempotent (nbgrader loads the config many times)."""
    for attribute, check in _CHECKS:
        if not event.contains(attribute, "set", check):
            event.listen(attribute, "set", check)
