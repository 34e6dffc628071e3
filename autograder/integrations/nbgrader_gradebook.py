"""An nbgrader course's gradebook, read for `attnkit export` and `attnkit report`: in an nbgrader course, the gradebook
is the record.

Everything is read through nbgrader's own `Gradebook` API, once, into plain dataclasses (`read_assignment`): both
commands total the same numbers. A total is nbgrader's: its submission score (each cell's manual grade where formgrader
set one, else the autograded one, plus extra credit) less its late penalty, never below 0, as `nbgrader export`
computes it. The database is opened read-only: reading never changes it, and a file that is not a gradebook is
refused instead of being given nbgrader's tables. Besides the graded submissions, the gradebook lists the whole
class, each student with the email `attnkit course new --roster` (or `nbgrader db student import`) gave them: what an
LMS roster's email column is matched against, and how a student who handed nothing in is told from one the
gradebook does not know.

Per exercise (`--per-exercise`), a graded cell counts for the attnkit exercise it grades (`test_<exercise id>` in the
exercise's notebook); a cell that maps to none (one an instructor added) counts in the total only, and a note says so.
"""

import datetime
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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

__all__ = [
    "AssignmentGrades", "CellGrade", "NotebookGrade", "Submission", "is_course", "manual_grades_note",
    "read_assignment", "read_gradebook",
]

GRADEBOOK = "gradebook.db"  # nbgrader's default name, in the course directory
COURSE_MARKERS = (GRADEBOOK, "nbgrader_config.py")
# (notebook, grade cell) -> exercise id
CELL_EXERCISES = {(exercise.notebook, f"{GRADED_CELL_PREFIX}{exercise.id}"): exercise.id for exercise in EXERCISES}


@dataclass(frozen=True)
class CellGrade:
    """One graded cell of a submitted notebook, as the gradebook holds it."""

    notebook: str
    name: str  # the cell's grade id
    exercise: str | None  # the attnkit exercise it grades; None for a cell an instructor added
    score: float  # nbgrader's: the manual grade where formgrader set one, else the autograded score, plus extra credit
    auto_score: float | None  # what autograde recorded; None when it recorded nothing
    manual_score: float | None
    extra_credit: float
    max_score: float


@dataclass(frozen=True)
class NotebookGrade:
    name: str
    score: float  # before the late penalty (formgrader's)
    max_score: float
    late_penalty: float  # nbgrader's AssignLatePenalties, per notebook; the feedback page shows score - penalty


@dataclass(frozen=True)
class Submission:
    """A student's graded submission of the assignment."""

    student_id: str
    score: float  # before the late penalty (formgrader's code score)
    late_penalty: float
    seconds_late: float  # past the due date (and the student's extension), as nbgrader counts it
    needs_manual_grade: bool
    notebooks: tuple[NotebookGrade, ...]
    cells: tuple[CellGrade, ...]

    @property
    def total(self) -> float:
        """nbgrader export's score: the submission's less its late penalty, never below 0."""
        return max(0.0, self.score - self.late_penalty)


@dataclass(frozen=True)
class AssignmentGrades:
    """What the gradebook holds of one assignment."""

    database: Path
    assignment: str
    duedate: datetime.datetime | None  # UTC, as nbgrader stores it; None: no due date, nothing is late
    max_score: float
    notebooks: tuple[str, ...]  # the assignment's notebooks, by name
    submissions: Mapping[str, Submission]  # by student id
    # Every student of the gradebook, graded or not, by id, with the email it holds for them (None: none)
    students: Mapping[str, str | None]


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


def read_assignment(source: str | os.PathLike[str], assignment: str) -> AssignmentGrades:
    """`assignment` as the course's gradebook holds it (see the module's docstring); LmsError when it cannot be
    read."""
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
            return AssignmentGrades(
                database, assignment, found.duedate, float(found.max_score or 0.0),
                tuple(notebook.name for notebook in found.notebooks),
                {submission.student.id: _submission(submission) for submission in found.submissions},
                {student.id: student.email for student in gradebook.students})
    except SQLAlchemyError as error:
        reason = clean(str(getattr(error, "orig", None) or type(error).__name__), 200)
        raise LmsError(f"{database}: not a readable nbgrader gradebook ({reason}); a gradebook from an older "
                       "nbgrader needs `nbgrader db upgrade`") from None


def _submission(submission: "SubmittedAssignment") -> Submission:
    cells = tuple(
        CellGrade(notebook.name, grade.name, CELL_EXERCISES.get((notebook.name, grade.name)), float(grade.score or 0.0),
                  None if grade.auto_score is None else float(grade.auto_score),
                  None if grade.manual_score is None else float(grade.manual_score),
                  float(grade.extra_credit or 0.0), float(grade.max_score or 0.0))
        for notebook in submission.notebooks for grade in notebook.grades)
    notebooks = tuple(NotebookGrade(notebook.name, float(notebook.score or 0.0), float(notebook.max_score or 0.0),
                                    float(notebook.late_submission_penalty or 0.0))
                      for notebook in submission.notebooks)
    return Submission(submission.student.id, float(submission.score or 0.0),
                      float(submission.late_submission_penalty or 0.0), float(submission.total_seconds_late),
                      bool(submission.needs_manual_grade), notebooks, cells)


def read_gradebook(source: str | os.PathLike[str], assignment: str) -> ClassGrades:
    """The grades of `assignment`'s submissions in the course's gradebook, as `attnkit export` writes them; LmsError
    when it cannot be read."""
    grades = read_assignment(source, assignment)
    students = {student_id: _student(submission) for student_id, submission in grades.submissions.items()}
    return ClassGrades(students, grades.max_score, grades.students)


def manual_grades_note(cells: Sequence[CellGrade]) -> str:
    """"formgrader's grades count: ..." naming each manual grade and extra credit of `cells`; "" when none."""
    manual: list[str] = []
    for cell in cells:
        name = f"{cell.notebook}/{cell.name}"
        if cell.manual_score is not None:
            manual.append(f"{name} {format_number(cell.manual_score)} (autograded "
                          f"{format_number(cell.auto_score or 0.0)})")
        if cell.extra_credit:
            manual.append(f"{name} extra credit {format_number(cell.extra_credit)}")
    return f"formgrader's grades count: {'; '.join(clean(item, 120) for item in manual)}" if manual else ""


def _student(submission: Submission) -> StudentGrade:
    exercises = {exercise.id: 0.0 for exercise in EXERCISES}
    unmapped: list[str] = []
    for cell in submission.cells:
        if cell.exercise is not None:
            exercises[cell.exercise] += cell.score
        elif cell.score or cell.max_score:
            unmapped.append(f"{cell.notebook}/{cell.name}")
    notes = [note] if (note := manual_grades_note(submission.cells)) else []
    if submission.late_penalty:
        notes.append(f"late: nbgrader's late penalty of {format_number(submission.late_penalty)} points is "
                     f"subtracted from {format_number(submission.score)} (per-exercise columns are before the penalty)")
    if submission.needs_manual_grade:
        notes.append("needs manual grading in formgrader: the total may still change; export again after")
    if unmapped:
        notes.append(f"graded cells in the total but in no exercise column: {clean(', '.join(unmapped), 300)}")
    return StudentGrade(submission.total, exercises, tuple(notes))  # nbgrader export's total
