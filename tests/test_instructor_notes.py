"""Notes an instructor can read: grouped, capped, in linear time; grades.csv's `problems` names what changed a grade.

One class graded by `attnkit grade` (NB01 only matters):
  - empty: NB01 has no cells at all, and NB02 only markdown: 0, and grades.csv says why;
  - colab: NB01 handed in as Colab's `Copy of ...`: full marks, grades.csv names the file found by content;
  - left_out: NB01 imports softmax_naive from the last module of its own 600-module package, past the copy's
    500 files: that exercise's points lost, the cell's note and grades.csv say files were left out;
  - solved: full marks, no problems, no `problems` key in its record (an honest record's bytes stay as they were).
"""

import csv
import json
import time

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import MAX_NOTES, MODULES_LEFT_OUT, Options, tidy_notes
from autograder.isolation.limits import Limits

NB01, NB02 = NOTEBOOKS[:2]
POINTS = {notebook: sum(e.points for e in EXERCISES if e.notebook == notebook) for notebook in NOTEBOOKS}
SOFTMAX_NAIVE = next(exercise.points for exercise in EXERCISES if exercise.id == "softmax_naive")
HELPER = "import torch\n\n\ndef softmax_naive(x):\n    return torch.exp(x) / torch.exp(x).sum(dim=0)\n"


def _empty_notebook(cells=()):
    return json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    solved = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    submitted = tmp_path_factory.mktemp("notes") / "submitted"
    for student in ("empty", "colab", "left_out", "solved"):
        (submitted / student / "attention").mkdir(parents=True)
    (submitted / "empty" / "attention" / f"{NB01}.ipynb").write_text(_empty_notebook())
    markdown = {"cell_type": "markdown", "metadata": {}, "source": "# my notes"}
    (submitted / "empty" / "attention" / f"{NB02}.ipynb").write_text(_empty_notebook([markdown]))
    (submitted / "colab" / f"Copy of {NB01}.ipynb").write_bytes(solved.read_bytes())
    (submitted / "solved" / "attention" / f"{NB01}.ipynb").write_bytes(solved.read_bytes())

    notebook = nbformat.read(solved, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
            cell.source = "from helpers.m599 import softmax_naive"
    folder = submitted / "left_out" / "attention"
    nbformat.write(notebook, folder / f"{NB01}.ipynb")
    (folder / "helpers").mkdir()
    (folder / "helpers" / "__init__.py").write_text("")
    for number in range(600):
        (folder / "helpers" / f"m{number:03}.py").write_text(HELPER)

    out = submitted.parent / "out"
    summary = classroom.grade_class(submitted, out, Options(limits=Limits(timeout=30.0, memory_mb=1024)))
    documents = {document["student_id"]: document for document in summary.documents}
    with (out / "grades.csv").open(newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    return documents, rows


def _notebook(document, notebook=NB01):
    return next(entry for entry in document["notebooks"] if entry["notebook"] == notebook)


def test_an_empty_notebook_is_graded_0_and_grades_csv_says_why(graded):
    documents, rows = graded
    for notebook in (NB01, NB02):
        entry = _notebook(documents["empty"], notebook)
        assert entry["score"] == 0 and entry["status"] == "unreadable", entry
        assert "has no code cells: an empty notebook, graded 0" in entry["reason"]
    assert f"{NB01}, {NB02}: " not in rows["empty"]["problems"]  # each names its own file
    assert f"{NB01}: {NB01}.ipynb has no code cells: an empty notebook, graded 0" in rows["empty"]["problems"]
    assert f"{NB02}: {NB02}.ipynb has no code cells" in rows["empty"]["problems"]


def test_a_notebook_found_by_content_is_named_in_grades_csv(graded):
    documents, rows = graded
    assert _notebook(documents["colab"])["score"] == POINTS[NB01]
    assert f"{NB01}: graded Copy of {NB01}.ipynb (found by content)" in rows["colab"]["problems"]


@pytest.mark.slow
def test_a_module_left_out_of_the_copy_is_named_in_the_notes_and_grades_csv(graded):
    documents, rows = graded
    entry = _notebook(documents["left_out"])
    assert entry["score"] == POINTS[NB01] - SOFTMAX_NAIVE, [c["message"] for c in entry["checks"]]
    assert any(note.startswith("cell") and "helpers is beside the notebook but was not copied for grading" in note
               for note in entry["notes"]), entry["notes"]
    assert entry["problems"] == [MODULES_LEFT_OUT]
    assert f"{NB01}: {MODULES_LEFT_OUT}" in rows["left_out"]["problems"]
    assert len(entry["notes"]) <= MAX_NOTES


def test_an_honest_record_has_no_problems(graded):
    documents, rows = graded
    assert f"{NB01}: " not in rows["solved"]["problems"]  # the other notebooks were not handed in
    assert "problems" not in _notebook(documents["solved"])


def test_notes_are_kept_once_and_capped():
    notes = ["graded x as y", "cell 3: NameError: name 'a' is not defined", "graded x as y",
             "cell 5: NameError: name 'a' is not defined", "cell 3: NameError: name 'a' is not defined",
             "cell 9: ValueError: bad"]
    assert tidy_notes(notes) == ["graded x as y", "cell 3: NameError: name 'a' is not defined",
                                 "cell 5: NameError: name 'a' is not defined", "cell 9: ValueError: bad"]
    many = tidy_notes([f"file {number} was not copied" for number in range(100)])
    assert len(many) == MAX_NOTES and many[-1] == f"and {100 - MAX_NOTES + 1} more notes like these"
    assert many[:3] == ["file 0 was not copied", "file 1 was not copied", "file 2 was not copied"]


def test_tidying_200000_notes_takes_linear_time():
    notes = [f"cell {number % 5_000}: NameError: name 'x{number % 7}' is not defined" for number in range(100_000)]
    notes += [f"figures/{number}.png was not copied for grading" for number in range(100_000)]
    started = time.monotonic()
    tidy = tidy_notes(notes)
    # Quadratic deduplication of these took minutes; a linear pass takes well under a second, even on a busy box.
    assert time.monotonic() - started < 10
    distinct = 5_000 * 7 + 100_000  # 5,000 and 7 share no factor: every (cell, name) pair occurs
    assert len(tidy) == MAX_NOTES and tidy[-1] == f"and {distinct - MAX_NOTES + 1:,} more notes like these"
