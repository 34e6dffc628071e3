"""One class run with the submissions that used to stop or mis-grade it: every other student is graded and written.

- raises an exception whose message holds a lone surrogate (bytes decoded with surrogateescape), NUL or ESC;
- carries 60 MB of stored plot outputs (outputs never count towards the size cap);
- edited a given (locked) cell (restored from the release before the notebook runs, with a note);
- hits a failure while its outputs are written (injected): marked "grader error", the others unaffected.
"""

import contextlib
import csv
import io
import json
import shutil

import nbformat
import pytest

from autograder import cli
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.outputs import records

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
SOFTMAX_STABLE_POINTS = next(exercise.points for exercise in EXERCISES if exercise.id == "softmax_stable")
RAISE_SURROGATE = "raise RuntimeError(b'\\xff\\x1b[2J boom'.decode('utf-8', 'surrogateescape'))"
UNLUCKY = "unlucky"
LIMITS = ["--timeout", "20", "--memory", "1024"]


def _edited(source, grade_id, edit):
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            edit(cell)
            return notebook
    raise KeyError(grade_id)


def _with_cell_after(source, grade_id, code):
    notebook = nbformat.read(source, as_version=4)
    index = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in notebook.cells].index(grade_id)
    notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(code))
    return notebook


def _set_source(code):
    def edit(cell):
        cell.source = code
    return edit


def _with_plots(cell):
    # 60 MB of base64 "PNG" outputs on one cell, as a notebook full of saved plots carries.
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * (2 * 2**20)}}
    cell.outputs = [nbformat.from_dict(image) for _ in range(30)]


@pytest.fixture(scope="module")
def class_run(tmp_path_factory, repo_root):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    notebooks = {
        "honest": nbformat.read(source, as_version=4),
        "surrogate_in_cell": _with_cell_after(source, "given_inputs", RAISE_SURROGATE),
        "surrogate_in_function": _edited(source, "solution_softmax_stable", _set_source(
            f"def softmax_stable(x, dim=-1):\n    {RAISE_SURROGATE}\n")),
        "control_characters": _edited(source, "solution_softmax_stable", _set_source(
            "def softmax_stable(x, dim=-1):\n    raise ValueError('\\x00\\x1b]0;pwned\\x07\\u202e')\n")),
        "large_outputs": _edited(source, "solution_softmax_naive", _with_plots),
        "edited_given_cell": _edited(source, "given_inputs", _set_source("inputs = None  # the given data, gone")),
        UNLUCKY: nbformat.read(source, as_version=4),
    }
    root = tmp_path_factory.mktemp("class")
    submitted = root / "submitted"
    for student, notebook in notebooks.items():
        (submitted / student / "attention").mkdir(parents=True)
        nbformat.write(notebook, submitted / student / "attention" / f"{NB01}.ipynb")
    assert (submitted / "large_outputs" / "attention" / f"{NB01}.ipynb").stat().st_size > 60 * 10**6
    return {"submitted": submitted, "out": root / "out"}


@pytest.fixture(scope="module")
def first_run(class_run):
    """`attnkit grade`, with writing the unlucky student's feedback page failing: (exit status, stderr)."""
    original = records.feedback_html

    def failing_for_one(document, lang=None):
        if document["student_id"] == UNLUCKY:
            raise OSError("No space left on device")
        return original(document, lang)

    patch, err = pytest.MonkeyPatch(), io.StringIO()
    patch.setattr(records, "feedback_html", failing_for_one)
    try:
        with contextlib.redirect_stderr(err):
            status = cli.main(["grade", str(class_run["submitted"]), "--out", str(class_run["out"]), *LIMITS])
    finally:
        patch.undo()
    return status, err.getvalue()


def _documents(out):
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in (out / "students").glob("*.json")}


def _rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as stream:
        return {row["student_id"]: row for row in csv.DictReader(stream)}


def _nb01(document):
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB01)


@pytest.mark.slow
def test_the_run_says_something_went_wrong_and_names_the_student(first_run):
    status, err = first_run
    assert status == cli.GRADER_FAILED
    assert f"attnkit grade: {UNLUCKY}: grader error: OSError: No space left on device" in err


@pytest.mark.slow
def test_every_student_has_a_row_and_the_unlucky_one_says_grader_error(class_run, first_run):
    rows = _rows(class_run["out"])
    assert set(rows) == {path.name for path in class_run["submitted"].iterdir()}
    assert rows[UNLUCKY]["problems"].startswith("grader error: OSError")
    assert float(rows[UNLUCKY][NB01]) == NB01_POINTS  # what was graded is kept
    assert float(rows["honest"][NB01]) == NB01_POINTS and "grader error" not in rows["honest"]["problems"]
    record = _documents(class_run["out"])[UNLUCKY]
    assert record["grader_error"].startswith("grader error: OSError") and record["submission_hash"] == ""


@pytest.mark.parametrize("student", ["surrogate_in_function", "control_characters"])
@pytest.mark.slow
def test_a_strange_exception_costs_its_exercise_only_and_is_shown_safely(class_run, first_run, student):
    notebook = _nb01(_documents(class_run["out"])[student])
    assert notebook["score"] == NB01_POINTS - SOFTMAX_STABLE_POINTS
    page = (class_run["out"] / "feedback" / f"{student}.html").read_text(encoding="utf-8")
    assert "\x1b" not in page and "\x00" not in page and "\u202e" not in page
    assert "\\x1b" in page  # the control character is shown, as text


@pytest.mark.slow
def test_a_cell_raising_surrogates_is_a_note_and_the_rest_runs(class_run, first_run):
    notebook = _nb01(_documents(class_run["out"])["surrogate_in_cell"])
    assert any("RuntimeError: \ufffd\\x1b[2J boom" in note for note in notebook["notes"]), notebook["notes"]


@pytest.mark.slow
def test_stored_outputs_do_not_count_towards_the_size_cap(class_run, first_run):
    notebook = _nb01(_documents(class_run["out"])["large_outputs"])
    assert notebook["status"] == "graded" and notebook["score"] == NB01_POINTS, notebook["reason"]


@pytest.mark.slow
def test_an_edited_given_cell_is_restored_with_a_note(class_run, first_run):
    notebook = _nb01(_documents(class_run["out"])["edited_given_cell"])
    assert notebook["score"] == NB01_POINTS
    assert any("(given_inputs) is given code that was edited" in note for note in notebook["notes"])


@pytest.mark.slow
def test_attnkit_check_prints_the_strange_notebook_safely(class_run, capsys):
    path = class_run["submitted"] / "surrogate_in_cell" / "attention" / f"{NB01}.ipynb"
    assert cli.main(["check", str(path), *LIMITS]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\ufffd\\x1b[2J boom" in out


@pytest.mark.slow
def test_the_next_run_grades_the_unlucky_student_again_and_keeps_the_others(class_run, first_run, capsys, tmp_path):
    # On a copy of the class: the other tests read the first run's outputs, in any order.
    submitted, out = tmp_path / "submitted", tmp_path / "out"
    shutil.copytree(class_run["submitted"], submitted)
    shutil.copytree(class_run["out"], out)
    assert cli.main(["grade", str(submitted), "--out", str(out), *LIMITS]) == 0
    err = capsys.readouterr().err
    students = len(list(submitted.iterdir()))
    assert f"{students} students (1 graded, {students - 1} unchanged since the last run)" in err
    record = _documents(out)[UNLUCKY]
    assert "grader_error" not in record and record["score"] == NB01_POINTS


@pytest.mark.slow
def test_a_notebook_is_never_charged_for_the_graders_work_on_another(repo_root, tmp_path):
    """The grader judges and writes one notebook while the next one's child runs: however long that takes (here a
    7 s pause once the first notebook is done, past the second's 6 s budget), the second is charged only for its
    own child's time (2.4 s of sleeping cells) and gets no 'total time' note."""
    import time

    from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
    from autograder.isolation.limits import Limits

    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    quick, slow = tmp_path / "quick" / f"{NB01}.ipynb", tmp_path / "slow" / f"{NB01}.ipynb"
    for path in (quick, slow):
        path.parent.mkdir()
    quick.write_bytes(source.read_bytes())
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[3:3] = [nbformat.v4.new_code_cell("import time\ntime.sleep(0.6)") for _ in range(4)]
    slow.write_text(json.dumps(notebook), encoding="utf-8")

    def pause_after_the_first(result):
        if result.key == "quick":
            time.sleep(7)

    limits = Limits(timeout=2.0, budget_factor=3.0, grace=1.0, workers=2)
    inputs = [NotebookInput("quick", quick, NB01), NotebookInput("slow", slow, NB01)]
    results = {result.key: result for result in
               grade_notebooks(inputs, Options(limits=limits), on_result=pause_after_the_first).results}
    assert results["quick"].score == results["slow"].score == NB01_POINTS
    assert not any("total time" in note for note in results["slow"].notes), results["slow"].notes
