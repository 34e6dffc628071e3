"""No file stops a class: a malformed notebook is its student's problem, said in the student's words.

Planning a notebook (autograder.isolation.notebook_plan) raises nothing but NotebookProblem for any JSON or any bytes
(hypothesis over broken nbformat 3 and 4 documents, and a fixed set of files that break the parser); intake
(autograder.grading.intake) sets such a file aside without raising; `attnkit grade` gives the student an
"unreadable" notebook with the reason and exits 0, every classmate graded; Gradescope's run writes its results;
`attnkit similarity` skips the file with a note naming it. The issue's 36 bytes,
`{"worksheets": [{"cells": null}]}`, used to give "grader error", exit 1 and a crash.
"""

import csv
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from malformed_notebooks import NB01, RAW, SEEDED, THE_36_BYTES, documents

from autograder import cli
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading.intake import open_submission
from autograder.grading.notebooks import GRADER_ERROR, UNREADABLE, Options
from autograder.integrations import gradescope
from autograder.isolation.child_task import Step
from autograder.isolation.notebook_plan import (
    RELEASE_DIR,
    NotebookPlan,
    NotebookProblem,
    code_cells,
    plan_notebook,
    solution_cells,
)
from autograder.review import run as similarity_run

NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
EXAMPLES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                            HealthCheck.too_slow])


def _read_every_way(path):
    """Every reading of a notebook the graders do: the plan, the solution cells, the code cells."""
    for notebook in (None, NB01):
        try:
            plan = plan_notebook(path, notebook)
        except NotebookProblem:
            continue
        assert isinstance(plan, NotebookPlan) and all(isinstance(step, Step) for step in plan.steps)
        assert all(isinstance(step.source, str) for step in plan.steps if step.kind == "cell")
    for read in (solution_cells, code_cells):
        try:
            found = read(path)
        except NotebookProblem:
            continue
        assert all(isinstance(source, str) for source in (found if read is code_cells else
                                                           [source for _, source in found]))


@EXAMPLES
@given(document=documents())
@pytest.mark.slow
def test_planning_raises_only_notebook_problem_for_any_json(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("nb") / f"{NB01}.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    _read_every_way(path)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=documents(), name=st.sampled_from([f"{NB01}.ipynb", "Copy of notebook.ipynb", f"{NB01} (1).ipynb"]))
def test_intake_sets_any_json_aside_without_raising(tmp_path_factory, document, name):
    """The resolver reads files for their kind and their content (a name that is no notebook's makes it look)."""
    folder = tmp_path_factory.mktemp("student")
    (folder / "attention").mkdir()
    (folder / "attention" / name).write_text(json.dumps(document), encoding="utf-8")
    shutil.copy(RELEASE_DIR / f"{NB01}.ipynb", folder / f"{NB01}.ipynb")  # a second candidate: kinds compared
    with open_submission(folder) as submission:
        assert set(submission.located) == set(NOTEBOOKS)


@pytest.mark.parametrize("data", [*RAW, *SEEDED], ids=range(len(RAW) + len(SEEDED)))
def test_files_that_break_the_parser_are_notebook_problems(tmp_path, data):
    path = tmp_path / f"{NB01}.ipynb"
    path.write_bytes(data)
    _read_every_way(path)
    folder = tmp_path / "student"
    (folder / "attention").mkdir(parents=True)
    (folder / "attention" / "notebook.ipynb").write_bytes(data)  # read for its content
    (folder / "attention" / f"{NB01}.ipynb").write_bytes(data)
    with open_submission(folder) as submission:
        assert set(submission.located) == set(NOTEBOOKS)


def _runs(tmp_path, data):
    """Whether grading `data` starts a child (the class test hands in only files that do not)."""
    path = tmp_path / "probe" / f"{NB01}.ipynb"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    try:
        plan = plan_notebook(path)
    except NotebookProblem:
        return False
    # no cell to run and no graded cell: graded 0 without a child, as autograder.grading.notebooks does
    return any(step.kind == "cell" or step.index >= 0 for step in plan.steps)


@pytest.fixture(scope="module")
def broken_class(tmp_path_factory, repo_root):
    """A class of students who handed in only files that cannot be graded (the 36 bytes first), and one solved
    classmate (notebook 01 from the source, the only notebook that runs): graded by `attnkit grade`."""
    root = tmp_path_factory.mktemp("broken-class")
    unplannable = [data for data in SEEDED if not _runs(root, data)]
    assert unplannable[0] == THE_36_BYTES and len(unplannable) >= 8
    submitted = root / "submitted"
    students = {}
    for number, start in enumerate(range(0, len(unplannable), len(NOTEBOOKS))):
        student = f"broken{number}"
        (submitted / student / "attention").mkdir(parents=True)
        for name, data in zip(NOTEBOOKS, unplannable[start:start + len(NOTEBOOKS)], strict=False):
            (submitted / student / "attention" / f"{name}.ipynb").write_bytes(data)
        students[student] = submitted / student
    (submitted / "solved" / "attention").mkdir(parents=True)
    shutil.copy(repo_root / "source" / "attention" / f"{NB01}.ipynb", submitted / "solved" / "attention")
    status = cli.main(["grade", str(submitted), "--out", str(root / "out"), "--workers", "1", "--timeout", "20"])
    return {"status": status, "out": root / "out", "submitted": submitted, "broken": sorted(students)}


def test_attnkit_grade_gives_the_student_the_reason_and_exits_0(broken_class):
    assert broken_class["status"] == 0  # exit 1 is for the grader's own errors (autograder.cli)
    with open(broken_class["out"] / "grades.csv", encoding="utf-8") as grades:
        rows = {row["student_id"]: row for row in csv.DictReader(grades)}
    assert set(rows) == {*broken_class["broken"], "solved"}
    assert float(rows["solved"][NB01]) == NB01_POINTS
    assert "grader error" not in "".join(row["problems"] for row in rows.values())
    record = json.loads((broken_class["out"] / "students" / "broken0.json").read_text(encoding="utf-8"))
    first = record["notebooks"][0]
    assert (first["notebook"], first["status"]) == (NB01, UNREADABLE)
    assert first["reason"] == f"{NB01}.ipynb has no code cells: an empty notebook, graded 0"
    statuses = {notebook["status"] for student in broken_class["broken"] for notebook in json.loads(
        (broken_class["out"] / "students" / f"{student}.json").read_text(encoding="utf-8"))["notebooks"]}
    assert GRADER_ERROR not in statuses and UNREADABLE in statuses


def test_gradescope_grades_submissions_of_broken_files(tmp_path):
    """Every file the class test hands in, four at a time as one Gradescope submission: results, never a crash."""
    unplannable = [data for data in SEEDED if not _runs(tmp_path, data)]
    for number, start in enumerate(range(0, len(unplannable), len(NOTEBOOKS))):
        root = tmp_path / f"run{number}"
        (root / "submission").mkdir(parents=True)
        for name, data in zip(NOTEBOOKS, unplannable[start:start + len(NOTEBOOKS)], strict=False):
            (root / "submission" / f"{name}.ipynb").write_bytes(data)
        results = gradescope.run(root, Options(lang="en"))
        written = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        assert results["score"] == 0 and written["score"] == 0
        assert "grader error" not in written["output"]
        if number == 0:  # the 36 bytes, first
            assert f"{NB01}: 0 / {NB01_POINTS}, not graded: {NB01}.ipynb has no code cells" in written["output"]


def test_similarity_skips_an_unreadable_notebook_with_a_note(tmp_path, repo_root):
    submitted = tmp_path / "submitted"
    for student, data in [("broken", THE_36_BYTES), ("blank", RAW[1]), ("deep", RAW[9]),
                          ("solved", (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes())]:
        (submitted / student / "attention").mkdir(parents=True)
        (submitted / student / "attention" / f"{NB01}.ipynb").write_bytes(data)
    run = similarity_run.run_similarity(submitted, tmp_path / "out")
    [note] = [note for note in run.analysis.notes if "could not be read" in note]
    assert note.startswith("2 notebooks handed in could not be read and were left out: ")
    assert f"blank {NB01}: {NB01}.ipynb is empty" in note
    assert f"deep {NB01}: {NB01}.ipynb is not a notebook (invalid JSON: maximum recursion depth" in note
    # the 36 bytes are a notebook without cells: nothing to compare, said as for a student who wrote nothing
    [nothing] = [note for note in run.analysis.notes if "no readable solution cell" in note]
    assert nothing.endswith(": blank, broken, deep")
    assert run.csv.is_file() and run.html.is_file()
