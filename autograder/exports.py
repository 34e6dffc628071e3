"""Grades in standard forms: `student_document` (the JSON record), `write_student` (its files), `write_grades_csv`.

`student_paths(id)` lists a student's files (what `attnkit merge` copies); `atomic_target` (and `write_atomically`,
text through it) is every atomic write of the package: the manifest and merge (autograder.shards), the class report
(autograder.class_report), the Gradescope bundle and results (autograder.gradescope).

Per student, `write_student` writes, each atomically (temporary file, then os.replace):
  feedback/<id>.html            what the student reads: every check's message; expected/got values only
                                for public checks, nothing of a hidden check but its message
  gradescope/<id>/results.json  Gradescope's autograder format; hidden checks "after_published"
  students/<id>.json            the full record, written last: its presence marks the student as done
"""

import contextlib
import csv
import html
import io
import json
import os
import tempfile
from pathlib import Path

from autograder.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.report import MARKS
from autograder.safe_text import clean, clean_data

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): such text gets a quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def check_document(check, *, public_details=True):
    document = {
        "id": check.id,
        "exercise": check.exercise,
        "score": check.score,
        "max_score": check.max_score,
        "status": check.status,
        "misconception": check.misconception,
        "message": check.message,
        "hidden": check.hidden,
    }
    if public_details and not check.hidden and check.details:
        document["details"] = list(check.details)
    if check.wrong_outputs:  # for `attnkit similarity`; absent (not empty) otherwise, as in older records
        document["wrong_outputs"] = list(check.wrong_outputs)
    return document


def notebook_document(result):
    return {
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


def student_document(student_id, assignment, submission_hash, seed, results):
    """The student's record. Its text (messages, notes, reasons, file names) may quote student code or file
    names: every string is cleaned here, the one place results become outputs (see autograder.safe_text)."""
    notebooks = clean_data([notebook_document(result) for result in results])
    return {
        "student_id": clean(student_id),
        "assignment": assignment,
        "submission_hash": submission_hash,
        "seed": seed,
        "score": sum(notebook["score"] for notebook in notebooks),
        "max_score": sum(notebook["max_score"] for notebook in notebooks),
        "notebooks": notebooks,
    }


def grader_error_document(student_id, assignment, seed, problem, document=None):
    """The record of a student whose grading or writing failed: what was graded (if anything) and the problem.

    It has no submission hash, so a later run never takes it for finished work and grades the student again.
    """
    document = dict(document) if document else {
        "student_id": clean(student_id), "assignment": assignment, "seed": seed, "score": 0.0,
        "max_score": float(sum(exercise.points for exercise in EXERCISES_BY_ID.values())), "notebooks": []}
    document.update(submission_hash="", grader_error=clean(problem))
    return document


def student_paths(student_id):
    """A student's outputs, relative to OUT_DIR, in the order they are written (the JSON record last)."""
    return (Path("feedback") / f"{student_id}.html", Path("gradescope") / student_id,
            Path("students") / f"{student_id}.json")


def write_student(out_dir, document):
    """Feedback, Gradescope results, then the JSON record (last: a student is done when it exists)."""
    out_dir, student_id = Path(out_dir), document["student_id"]
    write_atomically(out_dir / "feedback" / f"{student_id}.html", feedback_html(document))
    write_atomically(out_dir / "gradescope" / student_id / "results.json",
                      json.dumps(gradescope_results(document), indent=2, ensure_ascii=False))
    write_record(out_dir, document)


def write_record(out_dir, document):
    """students/<id>.json alone: the full record, the mark that the student is done."""
    write_atomically(Path(out_dir) / "students" / f"{document['student_id']}.json",
                     json.dumps(document, indent=2, ensure_ascii=False))


def read_student(out_dir, student_id):
    """The JSON record written earlier, or None when there is none or it is unreadable."""
    path = Path(out_dir) / "students" / f"{student_id}.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def write_grades_csv(out_dir, documents):
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


def spreadsheet_text(text):
    """A text cell a spreadsheet shows as text: cleaned, and quoted when it would start a formula."""
    text = clean(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _problems(notebooks):
    """`01_..., 02_...: reason` for notebooks that could not be graded, one entry per distinct reason."""
    by_reason = {}
    for notebook in notebooks:
        if notebook["status"] != "graded":
            by_reason.setdefault(notebook["reason"], []).append(notebook["notebook"])
    return "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())


def gradescope_results(document):
    tests = []
    for notebook in document["notebooks"]:
        for number, check in enumerate(notebook["checks"], start=1):
            output = check["message"]
            if not check["hidden"] and check.get("details"):
                output += "\n" + "\n".join(check["details"])
            tests.append({
                "name": f"{notebook['notebook']} · {_exercise_title(check['exercise'])} · {check['id']}",
                "number": f"{notebook['notebook'][:2]}.{number}",
                "score": check["score"],
                "max_score": check["max_score"],
                "status": "passed" if check["status"] == "passed" else "failed",
                "output": output,
                "visibility": "after_published" if check["hidden"] else "visible",
                "tags": [check["exercise"]],
            })
    return {
        "score": document["score"],
        "output": f"attnkit: {format_number(document['score'])} / {format_number(document['max_score'])} points",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def feedback_html(document):
    """A self-contained page: per notebook its score, each check's verdict and message, notes on cells."""
    escape = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>attnkit feedback: {escape(document['student_id'])}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3em;"
        "text-align:left;vertical-align:top}.passed{color:#1a7f37}.failed,.error{color:#cf222e}"
        "pre{background:#f6f8fa;padding:.4em;margin:.3em 0;white-space:pre-wrap}</style></head><body>",
        f"<h1>Feedback for {escape(document['student_id'])}</h1>",
        f"<p>Total: <strong>{format_number(document['score'])} / {format_number(document['max_score'])}</strong></p>",
    ]
    if document.get("grader_error"):
        parts.append(f"<p class=\"error\">{escape(document['grader_error'])}: not your code's fault; ask your "
                     "instructor to grade it again</p>")
    for notebook in document["notebooks"]:
        parts.append(f"<h2>{escape(notebook['notebook'])}: {format_number(notebook['score'])} / "
                     f"{format_number(notebook['max_score'])}</h2>")
        if notebook["status"] != "graded":
            parts.append(f"<p class=\"error\">Not graded: {escape(notebook['reason'])}</p>")
        parts.append("<table><tr><th></th><th>Exercise</th><th>Check</th><th>Points</th></tr>")
        for check in notebook["checks"]:
            kind = "graded check (hidden)" if check["hidden"] else "public check"
            details = ""
            if not check["hidden"] and check.get("details"):
                details = "<pre>" + escape("\n".join(check["details"])) + "</pre>"
            parts.append(
                f"<tr class=\"{escape(check['status'])}\"><td>{MARKS.get(check['status'], '✘')}</td>"
                f"<td>{escape(_exercise_title(check['exercise']))}</td>"
                f"<td>{escape(check['message'])}<br><small>{kind}</small>{details}</td>"
                f"<td>{format_number(check['score'])} / {format_number(check['max_score'])}</td></tr>"
            )
        parts.append("</table>")
        if notebook["notes"]:
            parts.append("<p>While running your notebook:</p><ul>")
            parts.extend(f"<li>{escape(note)}</li>" for note in notebook["notes"])
            parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _exercise_title(exercise_id):
    exercise = EXERCISES_BY_ID.get(exercise_id)
    return exercise.title_en if exercise else exercise_id


def format_number(value):
    return f"{float(value):g}"


@contextlib.contextmanager
def atomic_target(path, *, replace=True):
    """Yield a fresh temporary path beside `path` (its folder created) to write; then os.replace it onto `path`.

    On an exception the temporary file is removed and `path` is left as it was. With replace=False the caller puts
    the temporary file into place itself (e.g. a hard link); it is removed afterwards in every case.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(temporary)
    try:
        yield temporary
        if replace:
            os.replace(temporary, path)
            return
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    temporary.unlink(missing_ok=True)


def write_atomically(path, text):
    with atomic_target(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
