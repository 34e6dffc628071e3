"""A real nbgrader round trip: generate_assignment, autograde two submissions, generate_feedback, export.

nbgrader runs once for the module (about a minute): the source notebooks, solutions intact, handed in
as student `solved`, and the committed release, untouched, as student `untouched`.
"""

import csv
import html
import re
from pathlib import Path

import nbformat
import pytest

import autograder
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.integrations import nbgrader_course

pytestmark = pytest.mark.slow

SOLVED, UNTOUCHED = "solved", "untouched"
# What nbgrader shows of a hidden test region in feedback, and may: the call into the grader.
SHOWN_HIDDEN_LINE = re.compile(r"^(grade\(.*\)|from autograder import grade)$")
# Errors that mean the run itself broke, not the student's code.
BROKEN_RUN = ("CellTimeoutError", "DeadKernelError", "TimeoutError")


def _max_points():
    points = dict.fromkeys(NOTEBOOKS, 0)
    for exercise in EXERCISES:
        points[exercise.notebook] += exercise.points
    return points


def _below_max(cell_scores):
    return {
        notebook: {grade_id: score for grade_id, score in grades.items() if score[0] != score[1]}
        for notebook, grades in cell_scores.items()
        if any(score[0] != score[1] for score in grades.values())
    }


def _text(html_page):
    """The visible text of an HTML page: no style/script blocks, no tags, entities decoded."""
    html_page = re.sub(r"<(style|script)\b.*?</\1>", "", html_page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", html_page))


@pytest.fixture(scope="module")
def graded_course(repo_root, tmp_path_factory):
    course_root = nbgrader_course.make_course(tmp_path_factory.mktemp("nbgrader") / "course", repo_root)
    nbgrader_course.generate_release(course_root)
    nbgrader_course.submit(course_root, SOLVED, course_root / "source" / nbgrader_course.ASSIGNMENT)
    nbgrader_course.submit(course_root, UNTOUCHED, repo_root / "release" / nbgrader_course.ASSIGNMENT)
    nbgrader_course.autograde(course_root)
    nbgrader_course.generate_feedback(course_root)
    return course_root


@pytest.fixture(scope="module")
def scores(graded_course):
    return nbgrader_course.read_scores(graded_course)


def test_solved_submission_earns_full_marks(graded_course, scores):
    lost = _below_max(nbgrader_course.read_cell_scores(graded_course)[SOLVED])
    assert scores[SOLVED] == _max_points(), f"the solved notebooks lose points (score, max): {lost}"
    assert sum(scores[SOLVED].values()) == 100


def test_untouched_release_earns_zero(graded_course, scores):
    cells = nbgrader_course.read_cell_scores(graded_course)[UNTOUCHED]
    earned = {nb: {gid: s for gid, s in grades.items() if s[0]} for nb, grades in cells.items()}
    assert scores[UNTOUCHED] == dict.fromkeys(NOTEBOOKS, 0), f"the untouched release earns points: {earned}"


def test_untouched_release_run_does_not_break(graded_course):
    """Every notebook is autograded, no cell times out or kills the kernel, every graded cell reports a score."""
    for name in NOTEBOOKS:
        notebook = nbformat.read(
            graded_course / "autograded" / UNTOUCHED / nbgrader_course.ASSIGNMENT / f"{name}.ipynb", as_version=4)
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            errors = [output for output in cell.outputs if output.output_type == "error"]
            broken = [error.ename for error in errors if error.ename in BROKEN_RUN]
            assert not broken, f"{name}: {broken} in cell {cell.metadata.get('nbgrader', {}).get('grade_id')}"
            if cell.metadata.get("nbgrader", {}).get("grade"):
                grade_id = cell.metadata.nbgrader.grade_id
                assert not errors, f"{name}: graded cell {grade_id} raised {[e.ename for e in errors]}, not a score"
                assert any(output.output_type == "execute_result" for output in cell.outputs), (
                    f"{name}: graded cell {grade_id} returned no score")


def test_exported_grades(graded_course):
    with open(nbgrader_course.export_grades(graded_course), newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {SOLVED, UNTOUCHED}
    assert (float(rows[SOLVED]["score"]), float(rows[SOLVED]["max_score"])) == (100.0, 100.0)
    assert float(rows[UNTOUCHED]["score"]) == 0.0


def test_feedback_shows_no_hidden_test_source(graded_course, source_regions):
    """Feedback HTML shows the grade(...) calls of the hidden regions, nothing else of them nor of the checks."""
    package_dir = str(Path(autograder.__file__).resolve().parent)
    for name, regions in source_regions.items():
        calls = {line for line in regions["hidden"] if SHOWN_HIDDEN_LINE.match(line)}
        secret = regions["hidden"] - calls - regions["outside"]
        for student in (SOLVED, UNTOUCHED):
            page = graded_course / "feedback" / student / nbgrader_course.ASSIGNMENT / f"{name}.html"
            text = _text(page.read_text(encoding="utf-8"))
            missing = sorted(call for call in calls if call not in text)
            assert not missing, f"{page.name} ({student}): grade calls not found in feedback text: {missing}"
            shown = sorted(line for line in secret if line in text)
            assert not shown, f"{page.name} ({student}) shows hidden-test lines: {shown}"
            assert package_dir not in text, (
                f"{page.name} ({student}) shows a traceback through the autograder package, i.e. its source")


def test_bad_input_is_refused_with_a_clear_error(graded_course, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / f"{NOTEBOOKS[0]}.ipynb").write_bytes(
        (graded_course / "source" / nbgrader_course.ASSIGNMENT / f"{NOTEBOOKS[0]}.ipynb").read_bytes())
    with pytest.raises(FileNotFoundError, match=f"lacks {NOTEBOOKS[1]}.ipynb"):
        nbgrader_course.submit(graded_course, "partial", partial)
    with pytest.raises(ValueError, match="student id"):
        nbgrader_course.submit(graded_course, "../escape", graded_course / "source" / nbgrader_course.ASSIGNMENT)
    with pytest.raises(ValueError, match="no submission from nobody"):
        nbgrader_course.autograde(graded_course, ["nobody"])
    with pytest.raises(FileExistsError):
        nbgrader_course.make_course(graded_course)


def test_nbgrader_failure_shows_its_output(repo_root, tmp_path):
    """A source notebook nbgrader rejects (two cells with one grade id): the error quotes nbgrader's reason."""
    fake_repo = tmp_path / "repo"
    (fake_repo / "source" / nbgrader_course.ASSIGNMENT).mkdir(parents=True)
    (fake_repo / "nbgrader_config.py").write_bytes((repo_root / "nbgrader_config.py").read_bytes())
    notebook = nbformat.read(repo_root / "source" / nbgrader_course.ASSIGNMENT / f"{NOTEBOOKS[0]}.ipynb", as_version=4)
    graded = [cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade")]
    graded[1].metadata.nbgrader.grade_id = graded[0].metadata.nbgrader.grade_id
    nbformat.write(notebook, fake_repo / "source" / nbgrader_course.ASSIGNMENT / f"{NOTEBOOKS[0]}.ipynb")

    course_root = nbgrader_course.make_course(tmp_path / "course", fake_repo)
    with pytest.raises(nbgrader_course.NbgraderError) as failure:
        nbgrader_course.generate_release(course_root)
    message = str(failure.value)
    assert "generate_assignment" in message and "exit code" in message
    assert graded[0].metadata.nbgrader.grade_id in message, message
