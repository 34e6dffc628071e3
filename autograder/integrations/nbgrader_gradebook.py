"""An nbgrader course's gradebook read for `attnkit export`: in an nbgrader course, the gradebook is the record.

Everything is read through nbgrader's own `Gradebook` API, so a total is nbgrader's: its submission score (each
cell's manual grade where formgrader set one, else the autograded one, plus extra credit) less its late penalty,
never below 0, as `nbgrader export` computes it. The database is opened read-only: reading never changes it, and a
file that is not a gradebook is refused instead of being given nbgrader's tables. Besides the graded submissions, the
gradebook lists the whole class, each student with the email `attnkit course new --roster` (or `nbgrader db student
import`) gave them: what an LMS roster's email column is matched against, and how a student who handed nothing in is
told from one the gradebook does not know.

Per exercise (`--per-exercise`), a graded cell counts for the attnkit exercise it grades (`test_<exercise id>` in the
exercise's notebook); a cell that maps to none (one an instructor added) counts in the total only, and a note says so.
"""

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from autograder.course.exercises import EXERCISES
from autograder.integrations.lms import ClassGrades, LmsError, StudentGrade
from autograder.isolation.notebook_plan import GRADED_CELL_PREFIX
from autograder.outputs.records import format_number
from autograder.safe_text import clean

if TYPE_CHECKING:  # nbgrader's gradebook imports sqlalchemy & co.: only when a gradebook is read
    from nbgrader.api import SubmittedAssignment

__all__ = ["is_course", "read_gradebook"]

GRADEBOOK = "gradebook.db"  # nbgrader's default name, in the course directory
COURSE_MARKERS = (GRADEBOOK, "nbgrader_config.py")
# (notebook, grade cell) -> exercise id
CELL_EXERCISES = {(exercise.notebook, f"{GRADED_CELL_PREFIX}{exercise.id}"): exercise.id for exercise in EXERCISES}


def is_course(source: str | os.PathLike[str]) -> bool:
    """Whether `source` is an nbgrader course directory or a gradebook file (not an `attnkit grade` output)."""
    path = Path(source)
    return path.is_file() or (path.is_dir() and any((path / name).exists() for name in COURSE_MARKERS))


def _gradebook_path(source: str | os.PathLike[str]) -> Path:
    """The gradebook of a course directory, or `source` itself when it is the gradebook file."""
    path = Path(source)
    if path.is_file():
        return path
    database = path / GRADEBOOK
    if not database.is_file():
        raise LmsError(f"{path}: an nbgrader course without {GRADEBOOK}: autograde the submissions first, or give "
                       "the gradebook file itself where the course's db_url puts it elsewhere")
    return database


def read_gradebook(source: str | os.PathLike[str], assignment: str) -> ClassGrades:
    """The grades of `assignment`'s submissions in the course's gradebook; LmsError when it cannot be read."""
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.engine import URL
    from sqlalchemy.exc import SQLAlchemyError

    database = _gradebook_path(source)
    # A SQLite URI opened read-only (the path percent-encoded: a '?' or '#' in a folder name is no query).
    url = URL.create("sqlite", database=f"file:{quote(str(database.resolve()))}", query={"mode": "ro", "uri": "true"})
    try:
        # course_id "": nbgrader adds no course row (a read-only database could not take one)
        with Gradebook(url, "") as gradebook:  # type: ignore[arg-type]  # create_engine takes a URL as well
            try:
                found = gradebook.find_assignment(assignment)
            except MissingEntry:
                names = sorted(item.name for item in gradebook.assignments)
                raise LmsError(f"{database}: no assignment {assignment!r} in the gradebook (it has "
                               f"{', '.join(clean(name, 60) for name in names) or 'none'}); say which with "
                               "--assignment") from None
            students = {submission.student.id: _student(submission) for submission in found.submissions}
            enrolled = {student.id: student.email for student in gradebook.students}
            return ClassGrades(students, float(found.max_score or 0.0), enrolled)
    except SQLAlchemyError as error:
        reason = clean(str(getattr(error, "orig", None) or type(error).__name__), 200)
        raise LmsError(f"{database}: not a readable nbgrader gradebook ({reason}); a gradebook from an older "
                       "nbgrader needs `nbgrader db upgrade`") from None


def _student(submission: "SubmittedAssignment") -> StudentGrade:
    score = float(submission.score or 0.0)
    penalty = float(submission.late_submission_penalty or 0.0)
    exercises = {exercise.id: 0.0 for exercise in EXERCISES}
    manual: list[str] = []
    unmapped: list[str] = []
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            cell = f"{notebook.name}/{grade.name}"
            exercise = CELL_EXERCISES.get((notebook.name, grade.name))
            if exercise is not None:
                exercises[exercise] += float(grade.score or 0.0)
            elif grade.score or grade.max_score:
                unmapped.append(cell)
            if grade.manual_score is not None:
                manual.append(f"{cell} {format_number(grade.manual_score)} (autograded "
                              f"{format_number(grade.auto_score or 0.0)})")
            if grade.extra_credit:
                manual.append(f"{cell} extra credit {format_number(grade.extra_credit)}")
    notes = []
    if manual:
        notes.append(f"formgrader's grades count: {'; '.join(clean(item, 120) for item in manual)}")
    if penalty:
        notes.append(f"late: nbgrader's late penalty of {format_number(penalty)} points is subtracted from "
                     f"{format_number(score)} (per-exercise columns are before the penalty)")
    if submission.needs_manual_grade:
        notes.append("needs manual grading in formgrader: the total may still change; export again after")
    if unmapped:
        notes.append(f"graded cells in the total but in no exercise column: {clean(', '.join(unmapped), 300)}")
    return StudentGrade(max(0.0, score - penalty), exercises, tuple(notes))  # nbgrader export's total
