"""`attnkit report COURSE_DIR`: the class report of an nbgrader course, from its gradebook, with no grading run.

In an nbgrader course the gradebook is the record (autograder.integrations.nbgrader_gradebook, which `attnkit export`
reads too): the report's totals are nbgrader's, the numbers formgrader, the feedback pages, `nbgrader export` and the
LMS files show, manual grades and extra credit included and late penalties subtracted. Every student of the
gradebook has a row (the roster's, and whoever autograde added), and so does a student folder in submitted/ that
autograde has not graded yet; one who handed nothing in has 0, as `nbgrader export` and the LMS files give, and the
row says so. Each notebook's points are the gradebook's less that notebook's late penalty, as its feedback page
shows them; a notebook not handed in says so.

The mistakes the checks reproduced come from attnkit's record in each autograded notebook (autograder.integrations.
nbgrader_record, written by `SandboxedExecute`), read without following a link, and kept only where its points are the
gradebook's autograded ones: a record that disagrees (the notebook graded again some other way) or is missing (a
notebook autograded before attnkit kept one, or in the student's kernel) shows no mistakes, and the row says which.

The page is COURSE_DIR/class_report.html (or OUT_DIR/class_report.html); it says where its totals come from
(autograder.outputs.class_report.TotalsRecord) and where nbgrader's feedback pages are, and links nothing outside
its folder. Student ids and every text from the course are escaped by the page.
"""

import contextlib
import datetime
import errno
import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.assignment import ASSIGNMENT, DEFAULT_SEED
from autograder.course.exercises import NOTEBOOKS
from autograder.integrations.lms import LmsError
from autograder.integrations.nbgrader_gradebook import (
    AssignmentGrades,
    Submission,
    is_course,
    manual_grades_note,
    read_assignment,
)
from autograder.integrations.nbgrader_record import read_record
from autograder.outputs.class_report import TotalsRecord, write_class_report
from autograder.outputs.documents import CheckDocument, NotebookDocument, StudentDocument
from autograder.outputs.records import format_number
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = ["GradebookReport", "write_gradebook_report"]

SUBMITTED, AUTOGRADED = "submitted", "autograded"  # nbgrader's CourseDirectory defaults, the course's folders
GRADED, MISSING, NO_SUBMISSION, NOT_AUTOGRADED = "graded", "missing", "no submission", "not autograded"
MAX_NOTEBOOK_BYTES = 64 * 2**20  # an autograded notebook holds the student's cells and attnkit's outputs
MAX_FOLDERS = 100_000  # submitted/'s entries looked at
POINTS_TOLERANCE = 1e-6
TITLE = "attnkit class report (gradebook)"


@dataclass
class GradebookReport:
    path: Path
    students: int  # rows
    submitted: int  # students with a graded submission
    without_submission: list[str] = field(default_factory=list)  # in the gradebook, nothing handed in: 0
    not_autograded: list[str] = field(default_factory=list)  # handed in (submitted/), not in the gradebook yet
    late: list[str] = field(default_factory=list)  # with a late penalty
    without_record: list[str] = field(default_factory=list)  # "id/notebook" whose mistakes are not shown


def write_gradebook_report(course: Path, out_dir: Path | None = None, assignment: str = ASSIGNMENT) -> GradebookReport:
    """Write the class report of `course` from its gradebook (see the module's docstring); Refused when `course` is
    no nbgrader course folder or its gradebook cannot be read."""
    if not course.is_dir() or not is_course(course):
        raise Refused(f"{clean(course)}: not an nbgrader course folder (no gradebook.db or nbgrader_config.py); "
                      "an `attnkit grade` output has its class_report.html already")
    try:
        grades = read_assignment(course, assignment)
    except LmsError as problem:
        raise Refused(str(problem)) from None
    handed_in = _handed_in(course / SUBMITTED, assignment)
    ids = sorted(set(grades.students) | set(grades.submissions) | handed_in)
    out = out_dir or course
    report = GradebookReport(out / "class_report.html", len(ids), len(grades.submissions))
    documents: list[StudentDocument] = []
    notes: dict[str, tuple[str, ...]] = {}
    for student_id in ids:
        submission = grades.submissions.get(student_id)
        if submission is not None:
            document, said = _graded(course, grades, submission, report)
        else:
            waiting = student_id in handed_in
            (report.not_autograded if waiting else report.without_submission).append(student_id)
            document = _not_graded(student_id, grades, NOT_AUTOGRADED if waiting else NO_SUBMISSION)
            said = ["handed in (submitted/), not autograded yet: 0 until nbgrader autograde grades it" if waiting
                    else "no submission: 0, as nbgrader export and the LMS files give"]
        documents.append(document)
        notes[student_id] = tuple(said)
    out.mkdir(parents=True, exist_ok=True)
    write_class_report(out, documents, TITLE, _record(grades, notes), course=course)
    return report


def _graded(course: Path, grades: AssignmentGrades, submission: Submission,
            report: GradebookReport) -> tuple[StudentDocument, list[str]]:
    student_id = submission.student_id
    notebooks: list[NotebookDocument] = []
    unrecorded: list[str] = []
    disagreeing: list[str] = []
    for notebook in submission.notebooks:
        path = (AUTOGRADED, student_id, grades.assignment, f"{notebook.name}.ipynb")
        metadata = _notebook_metadata(course, path)
        checks = read_record(metadata) if metadata is not None else None
        if metadata is not None and checks is None:
            unrecorded.append(notebook.name)
        elif checks is not None and not _agrees(checks, submission, notebook.name):
            disagreeing.append(notebook.name)
            checks = None
        notebooks.append({
            "notebook": notebook.name, "path": "/".join(path), "status": GRADED if metadata is not None else MISSING,
            "reason": "" if metadata is not None else "not handed in (nothing in autograded/)",
            "score": notebook.score - notebook.late_penalty, "max_score": notebook.max_score, "sha256": "",
            "checks": checks or [], "notes": []})
    report.without_record += [f"{student_id}/{name}" for name in unrecorded + disagreeing]
    said: list[str] = []
    if submission.late_penalty:
        report.late.append(student_id)
        said.append(f"late by {_duration(submission.seconds_late)}: {format_number(submission.late_penalty)} points "
                    f"off {format_number(submission.score)} (formgrader's pages show {format_number(submission.score)}"
                    ", before the penalty)")
    if manual := manual_grades_note(submission.cells):
        said.append(manual)
    if submission.needs_manual_grade:
        said.append("needs manual grading in formgrader: the total may still change")
    if unrecorded:
        said.append(f"no attnkit record in {', '.join(unrecorded)} (autograded before attnkit kept one, or in the "
                    "student's kernel): mistakes not shown")
    if disagreeing:
        said.append(f"attnkit's record in {', '.join(disagreeing)} does not match the gradebook's autograded points "
                    "(graded again some other way): mistakes not shown; autograde the student again")
    document: StudentDocument = {
        "student_id": student_id, "assignment": grades.assignment, "submission_hash": "",
        "seed": DEFAULT_SEED,  # a record's field the report never reads (the course's is SandboxedExecute.seed)
        "score": submission.total, "max_score": grades.max_score, "notebooks": notebooks}
    return document, said


def _not_graded(student_id: str, grades: AssignmentGrades, status: str) -> StudentDocument:
    notebooks: list[NotebookDocument] = [
        {"notebook": name, "path": "", "status": status, "reason": "", "score": 0.0, "max_score": 0.0, "sha256": "",
         "checks": [], "notes": []} for name in (grades.notebooks or NOTEBOOKS)]
    return {"student_id": student_id, "assignment": grades.assignment, "submission_hash": "", "seed": DEFAULT_SEED,
            "score": 0.0, "max_score": grades.max_score, "notebooks": notebooks}


def _agrees(checks: Sequence[CheckDocument], submission: Submission, notebook: str) -> bool:
    """Whether the record's points are the gradebook's autograded points of the notebook's graded cells."""
    cells = {cell.exercise: cell.auto_score for cell in submission.cells
             if cell.notebook == notebook and cell.exercise is not None}
    recorded: dict[str, float] = {}
    for check in checks:
        recorded[check["exercise"]] = recorded.get(check["exercise"], 0.0) + check["score"]
    return set(recorded) <= set(cells) and all(
        auto is not None and abs(recorded.get(exercise, 0.0) - auto) <= POINTS_TOLERANCE
        for exercise, auto in cells.items())


def _record(grades: AssignmentGrades, notes: dict[str, tuple[str, ...]]) -> TotalsRecord:
    due = (f"due {grades.duedate:%Y-%m-%d %H:%M} UTC: a late submission loses the course's late penalty"
           if grades.duedate is not None else "no due date, so nothing is late")
    read = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return TotalsRecord(
        f"Totals from the gradebook ({clean(grades.database)}, read {read}): the numbers formgrader, the feedback "
        "pages, nbgrader export and attnkit export show, manual grades and extra credit included, late penalties "
        "subtracted (the Notes say by how much). "
        f"Assignment {clean(grades.assignment)}, {due}. Every student of the gradebook has a row; one who handed "
        "nothing in has 0, as in nbgrader export and the LMS files. Named mistakes from attnkit's records in "
        "autograded/, no grading run.",
        notes, feedback_links=False)


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, hours, minutes = minutes // 1440, minutes // 60 % 24, minutes % 60
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    return " ".join(part for part in parts if part) or f"{seconds:.0f} s"


def _handed_in(submitted: Path, assignment: str) -> set[str]:
    """The student folders of submitted/ holding the assignment's folder (neither a link)."""
    found: set[str] = set()
    with contextlib.suppress(OSError), os.scandir(submitted) as entries:
        for count, entry in enumerate(entries):
            if count >= MAX_FOLDERS:
                break
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and os.path.isdir(os.path.join(entry.path, assignment)) \
                        and not os.path.islink(os.path.join(entry.path, assignment)):
                    found.add(entry.name)
    return found


def _notebook_metadata(course: Path, parts: Sequence[str]) -> dict[str, object] | None:
    """The top-level metadata of the notebook at COURSE/parts..., each part opened without following a link; None
    when there is no such regular file; {} when it cannot be read as a notebook (no record, then)."""
    if any(part in ("", ".", "..") or "/" in part or "\0" in part for part in parts):
        return None
    try:
        with _opened(course, parts) as fd:
            size = os.fstat(fd).st_size
            if size > MAX_NOTEBOOK_BYTES:
                return {}
            data = b"".join(iter(lambda: os.read(fd, 2**20), b""))
    except FileNotFoundError:
        return None
    except OSError as error:
        return None if error.errno in (errno.ELOOP, errno.ENOTDIR) else {}
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
    return metadata if isinstance(metadata, dict) else {}


@contextlib.contextmanager
def _opened(root: Path, parts: Sequence[str]) -> Iterator[int]:
    """A descriptor of the regular file root/parts..., no part a link (OSError ELOOP/ENOTDIR for a link, ENOENT)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
        child = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY,
                        dir_fd=fd)
        os.close(fd)
        fd = child
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileNotFoundError(errno.ENOENT, "not a regular file")
        yield fd
    finally:
        os.close(fd)
