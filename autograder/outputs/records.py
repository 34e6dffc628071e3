"""Grades in standard forms: `student_document` (the JSON record), `write_student` (its files), `write_grades_csv`.

`student_paths(id)` lists a student's files (what `attnkit merge` copies); `atomic_target` (and `write_atomically`,
text through it) is every atomic write of the package: the manifest and merge (autograder.grading.shards), the class
report (autograder.outputs.class_report), the Gradescope bundle and results (autograder.integrations.gradescope).

Per student, `write_student` writes, each atomically (temporary file, then os.replace):
  feedback/<id>.html            what the student reads (autograder.outputs.feedback_page), in their language
  gradescope/<id>/results.json  Gradescope's autograder format; hidden checks "after_published"
  students/<id>.json            the full record, written last: its presence marks the student as done
"""

import contextlib
import csv
import errno
import io
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol, cast

from autograder.checking.check_types import CheckResult, Status
from autograder.checking.pictures import Heatmap
from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS, exercise_title
from autograder.i18n import language, render
from autograder.outputs.disk import OutputDiskFull
from autograder.outputs.documents import (
    CheckDocument,
    GradescopeResults,
    GradescopeTest,
    NotebookDocument,
    StudentDocument,
)
from autograder.outputs.feedback_page import feedback_html
from autograder.outputs.picture_documents import heatmap_document
from autograder.running.timing import StageTimes
from autograder.safe_text import clean, clean_data

__all__ = [
    "FORMULA_STARTS", "OutputDiskFull", "atomic_target", "check_document", "feedback_html", "format_number",
    "grader_error_document", "gradescope_results", "read_student", "reads_as_formula", "spreadsheet_text",
    "stop_when_disk_full", "student_document", "student_paths", "write_atomically", "write_grades_csv", "write_record",
    "write_student",
]

RESULTS_MESSAGES = {"total": {"en": "attnkit: {score} / {max_score} points", "zh": "attnkit：{score} / {max_score} 分"}}
# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): such text gets a quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


class GradedNotebook(Protocol):
    """What a notebook's record is made from: autograder.grading.notebooks.NotebookResult (a stage above this one)."""

    notebook: str
    path: str
    status: str
    reason: str
    sha256: str
    checks: list[CheckResult]
    notes: list[str]
    problems: list[str]  # what changed the grade; a record leaves it out when empty

    @property
    def score(self) -> float: ...

    @property
    def max_score(self) -> float: ...


@contextlib.contextmanager
def stop_when_disk_full(out_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Turn a full disk (ENOSPC, EDQUOT) while writing OUT_DIR's files into OutputDiskFull; other errors pass."""
    try:
        yield
    except OSError as error:
        if error.errno in DISK_FULL_ERRNOS:
            raise OutputDiskFull(out_dir, error) from error
        raise


def check_document(check: CheckResult, *, public_details: bool = True) -> CheckDocument:
    document: CheckDocument = {
        "id": check.id,
        "exercise": check.exercise,
        "score": check.score,
        "max_score": check.max_score,
        "status": check.status,
        "misconception": check.misconception,
        "message": check.full_message,
        "hidden": check.hidden,
    }
    if public_details and not check.hidden and check.details:
        document["details"] = list(check.details)
    if public_details and not check.hidden and check.heatmap is not None:
        heatmap = heatmap_document(Heatmap.of(*check.heatmap))
        if heatmap is not None:
            document["heatmap"] = heatmap
    if check.departure_step:  # the first of the notes' steps the student's run departs from (the class report's)
        document["departure_step"] = check.departure_step
    if check.departure_lost:  # asked for and not computed, and why (autograder.checking.check_types.Untraced)
        document["departure_lost"] = check.departure_lost
    if check.wrong_outputs:  # for `attnkit similarity`; absent (not empty) otherwise, as in older records
        document["wrong_outputs"] = list(check.wrong_outputs)
    return document


def _notebook_document(result: GradedNotebook) -> NotebookDocument:
    """A graded notebook (autograder.grading.notebooks.NotebookResult) as its part of the record."""
    document: NotebookDocument = {
        "notebook": result.notebook,
        "path": result.path,
        "status": result.status,
        "reason": result.reason,
        "score": result.score,
        "max_score": result.max_score,
        "sha256": result.sha256,
        "checks": [check_document(check) for check in result.checks],
        "notes": list(result.notes),
    }
    if getattr(result, "problems", None):  # absent otherwise: an honest record's bytes stay what they were
        document["problems"] = list(result.problems)
    return document


def student_document(student_id: str, assignment: str, submission_hash: str, seed: int,
                     results: Iterable[GradedNotebook]) -> StudentDocument:
    """The student's record. Its text (messages, notes, reasons, file names) may quote student code or file
    names: every string is cleaned here, the one place results become outputs (see autograder.safe_text)."""
    notebooks = cast(list[NotebookDocument], clean_data([_notebook_document(result) for result in results]))
    return {
        "student_id": clean(student_id),
        "assignment": assignment,
        "submission_hash": submission_hash,
        "seed": seed,
        "score": sum(notebook["score"] for notebook in notebooks),
        "max_score": sum(notebook["max_score"] for notebook in notebooks),
        "notebooks": notebooks,
    }


def grader_error_document(student_id: str, assignment: str, seed: int, problem: str,
                          document: StudentDocument | None = None) -> StudentDocument:
    """The record of a student whose grading or writing failed: what was graded (if anything) and the problem.

    It has no submission hash, so a later run never takes it for finished work and grades the student again.
    """
    # Keys in the order earlier runs wrote them: the hash and the problem last.
    failed = cast(StudentDocument, dict(document) if document else {
        "student_id": clean(student_id), "assignment": assignment, "seed": seed, "score": 0.0,
        "max_score": float(sum(exercise.points or 0 for exercise in EXERCISES_BY_ID.values())), "notebooks": []})
    failed["submission_hash"] = ""
    failed["grader_error"] = clean(problem)
    return failed


def student_paths(student_id: str) -> tuple[Path, Path, Path]:
    """A student's outputs, relative to OUT_DIR, in the order they are written (the JSON record last)."""
    return (Path("feedback") / f"{student_id}.html", Path("gradescope") / student_id,
            Path("students") / f"{student_id}.json")


def write_student(out_dir: str | os.PathLike[str], document: StudentDocument, lang: str | None = None,
                  times: StageTimes | None = None) -> None:
    """Feedback, Gradescope results, then the JSON record (last: a student is done when it exists).

    The page and the results' titles are in `lang` (default: ATTNKIT_LANG or the locale), as the messages are.
    `times`, when given, is told the seconds of the page ("pages") and of the other two ("records").
    """
    out_dir, student_id = Path(out_dir), document["student_id"]
    times = times or StageTimes()
    with times.timing("pages"):
        write_atomically(out_dir / "feedback" / f"{student_id}.html", feedback_html(document, lang))
    with times.timing("records"):
        write_atomically(out_dir / "gradescope" / student_id / "results.json",
                          json.dumps(gradescope_results(document, lang), indent=2, ensure_ascii=False))
        write_record(out_dir, document)


def write_record(out_dir: str | os.PathLike[str], document: StudentDocument) -> None:
    """students/<id>.json alone: the full record, the mark that the student is done."""
    write_atomically(Path(out_dir) / "students" / f"{document['student_id']}.json",
                     json.dumps(document, indent=2, ensure_ascii=False))


def read_student(out_dir: str | os.PathLike[str], student_id: str) -> StudentDocument | None:
    """The JSON record written earlier, or None when there is none or it is unreadable (its shape is trusted: only
    the grader writes OUT_DIR)."""
    path = Path(out_dir) / "students" / f"{student_id}.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return cast(StudentDocument, document) if isinstance(document, dict) else None


def write_grades_csv(out_dir: str | os.PathLike[str], documents: Iterable[StudentDocument]) -> Path:
    """grades.csv: one row per student, a column per notebook, the total and what was missing."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student_id", *NOTEBOOKS, "total", "max_score", "problems"])
    for document in documents:
        by_name = {notebook["notebook"]: notebook for notebook in document["notebooks"]}
        scores = [format_number(by_name[name]["score"]) if name in by_name else "0" for name in NOTEBOOKS]
        problems = "; ".join(filter(None, [document.get("grader_error", ""), _problems(document["notebooks"])]))
        writer.writerow([spreadsheet_text(document["student_id"]), *scores, format_number(document["score"]),
                         format_number(document["max_score"]), spreadsheet_text(problems)])
    path = Path(out_dir) / "grades.csv"
    write_atomically(path, buffer.getvalue())
    return path


def spreadsheet_text(text: object) -> str:
    """A text cell a spreadsheet shows as text: cleaned, and quoted when it might read it as a formula. Every CSV
    attnkit writes (grades.csv, the similarity table, the LMS files, `nbgrader export`) puts student text through
    this one guard."""
    text = clean(text)
    return "'" + text if reads_as_formula(text) else text


def reads_as_formula(text: str) -> bool:
    """Whether a spreadsheet may read `text` as a formula: it starts with a formula character, or does once what some
    spreadsheets do on import is done: leading whitespace (spaces, newlines, U+3000...) and invisible characters
    (U+200B, U+FEFF...) trimmed, compatibility forms normalised (NFKC: `＝`, `＋`, `－`, `＠`, `﹦` are `=`, `+`, `-`,
    `@`)."""
    if text.startswith(FORMULA_STARTS):
        return True
    read = unicodedata.normalize("NFKC", text)
    start = next((index for index, char in enumerate(read)
                  if not (char.isspace() or unicodedata.category(char) == "Cf")), len(read))
    return read.startswith(FORMULA_STARTS, start)


def _problems(notebooks: Iterable[NotebookDocument]) -> str:
    """`01_..., 02_...: reason` for notebooks that could not be graded, and for graded ones what changed their grade
    (a file found by its content, files left out of the copy), one entry per distinct reason."""
    by_reason: dict[str, list[str]] = {}
    for notebook in notebooks:
        reasons = [notebook["reason"]] if notebook["status"] != "graded" else []
        for reason in [*notebook.get("problems", []), *reasons]:
            by_reason.setdefault(reason, []).append(notebook["notebook"])
    return "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())


def gradescope_results(document: StudentDocument, lang: str | None = None) -> GradescopeResults:
    lang = lang or language()
    tests: list[GradescopeTest] = []
    for notebook in document["notebooks"]:
        for number, check in enumerate(notebook["checks"], start=1):
            output = check["message"]
            if not check["hidden"] and check.get("details"):
                output += "\n" + "\n".join(check["details"])
            tests.append({
                "name": f"{notebook['notebook']} · {exercise_title(check['exercise'], lang)} · {check['id']}",
                "number": f"{notebook['notebook'][:2]}.{number}",
                "score": check["score"],
                "max_score": check["max_score"],
                "status": Status.PASSED if check["status"] == Status.PASSED else Status.FAILED,
                "output": output,
                "visibility": "after_published" if check["hidden"] else "visible",
                "tags": [check["exercise"]],
            })
    return {
        "score": document["score"],
        "output": render(RESULTS_MESSAGES, "total", lang, {"score": format_number(document["score"]),
                                                          "max_score": format_number(document["max_score"])}),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def format_number(value: float) -> str:
    return f"{float(value):g}"


@contextlib.contextmanager
def atomic_target(path: str | os.PathLike[str], *, replace: bool = True) -> Iterator[Path]:
    """Yield a fresh temporary path beside `path` (its folder created) to write; then os.replace it onto `path`.

    On an exception the temporary file is removed and `path` is left as it was. With replace=False the caller puts
    the temporary file into place itself (e.g. a hard link); it is removed afterwards in every case.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(temporary_name)
    try:
        yield temporary
        if replace:
            os.replace(temporary, path)
            return
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    temporary.unlink(missing_ok=True)


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    with atomic_target(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
