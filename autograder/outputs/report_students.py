"""The class report's student table: one row per student (total, each notebook, named mistakes, feedback link).

Student ids are the names of the students' folders: hostile text. A row's link is built from the id alone, percent-
encoded whole (`/`, `\\`, `?`, `#`, `%`, `:` included), under `feedback/`, so it is a relative path to one file
inside the output folder and never a scheme, a query or a way up; and it is given only when that file is there, a
regular file and not a link (`feedback_hrefs`). Records are the grader's, their text cleaned already; what a row
shows is cleaned again (a hand-edited record must not break the page), and the template escapes it, the href too.
"""

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import NOTEBOOKS, exercise_title
from autograder.outputs import records
from autograder.outputs.documents import StudentDocument
from autograder.outputs.feedback_page import departure_lost_line
from autograder.safe_text import clean

__all__ = ["feedback_href", "feedback_hrefs", "student_rows"]

FEEDBACK_FOLDER = "feedback"
GRADED = "graded"


@dataclass(frozen=True)
class NotebookCell:
    score: str
    status: str  # "graded", or why not (missing, unreadable, grader_error)


@dataclass(frozen=True)
class StudentRow:
    id: str
    href: str  # "" when the student has no feedback page
    total: str
    notebooks: tuple[NotebookCell, ...]  # in course order
    mistakes: tuple[str, ...]  # the named (reproduced) mistakes, each once, in the order the checks met them
    problem: str  # the grader's own error for this student, "" when none
    notes: tuple[str, ...] = ()  # what the record says of this student (a late penalty, no submission...), cleaned
    # Per exercise, a failed check whose departure was not computed: the feedback page's line, in English (issue 58)
    lost_departures: tuple[str, ...] = ()


def feedback_href(student_id: str) -> str:
    """The link from OUT_DIR/class_report.html to OUT_DIR/feedback/<id>.html: one percent-encoded path segment."""
    return f"{FEEDBACK_FOLDER}/{quote(f'{student_id}.html', safe='')}"


def feedback_hrefs(out_dir: str | os.PathLike[str], documents: Sequence[StudentDocument]) -> dict[str, str]:
    """{student id: href} for the students whose feedback page is a regular file in OUT_DIR/feedback/."""
    folder = Path(out_dir) / FEEDBACK_FOLDER
    hrefs: dict[str, str] = {}
    for document in documents:
        student_id = document["student_id"]
        if not student_id or "/" in student_id or student_id.startswith(".") or clean(student_id) != student_id:
            continue  # not a file name of OUT_DIR/feedback/: the grader writes ids cleaned, never one like it
        try:
            mode = (folder / f"{student_id}.html").lstat().st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(mode):
            hrefs[student_id] = feedback_href(student_id)
    return hrefs


def student_rows(documents: Sequence[StudentDocument], hrefs: Mapping[str, str],
                 notes: Mapping[str, Sequence[str]] | None = None) -> list[StudentRow]:
    """A row per student, by student id (a stable order however the class was graded or merged); `notes`: what the
    record says of a student, by id."""
    notes = notes or {}
    rows = []
    for document in sorted(documents, key=lambda document: document["student_id"]):
        by_name = {notebook["notebook"]: notebook for notebook in document.get("notebooks", ())}
        cells = tuple(
            NotebookCell(_number(by_name[name]["score"]), str(by_name[name]["status"])) if name in by_name
            else NotebookCell("0", "missing")
            for name in NOTEBOOKS)
        # A grader error's page, if any, is an earlier run's: not this record's, so not linked.
        href = "" if document.get("grader_error") else hrefs.get(document["student_id"], "")
        rows.append(StudentRow(clean(document["student_id"]), href,
                               _number(document["score"]), cells, _mistakes(document),
                               clean(document.get("grader_error", "")),
                               tuple(clean(note) for note in notes.get(document["student_id"], ())),
                               _lost_departures(document)))
    return rows


def _mistakes(document: StudentDocument) -> tuple[str, ...]:
    named: dict[str, None] = {}
    for notebook in document.get("notebooks", ()):
        for check in notebook.get("checks", ()):
            misconception = check.get("misconception")
            if misconception:
                known = MISCONCEPTIONS_BY_ID.get(misconception)
                named[known.name["en"] if known else clean(misconception)] = None
    return tuple(named)


def _lost_departures(document: StudentDocument) -> tuple[str, ...]:
    """"<exercise>: <the feedback page's line>" once per exercise whose failed check lost its departure; a value
    that is not one of Untraced's shows nothing (autograder.outputs.feedback_page.departure_lost_line)."""
    lines: dict[str, str] = {}
    for notebook in document.get("notebooks", ()):
        for check in notebook.get("checks", ()):
            exercise = check.get("exercise", "")
            line = "" if check.get("status") == "passed" else departure_lost_line(check.get("departure_lost"), "en")
            if line and exercise not in lines:
                lines[exercise] = f"{clean(exercise_title(exercise, 'en'))}: {line}"
    return tuple(lines.values())


def _number(value: float) -> str:
    return records.format_number(value)
