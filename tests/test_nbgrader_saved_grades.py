"""The course's SaveAutoGrades (autograder.integrations.nbgrader_saved_grades) leaves the gradebook as nbgrader's own
leaves it, cell for cell, in one commit per notebook instead of one per graded cell; and where a cell raises, the
cells before it are kept, as nbgrader's commits kept them."""

import shutil
import sqlite3
import warnings

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import SaveAutoGrades
from nbgrader.utils import compute_checksum
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SAWarning

from autograder.integrations.nbgrader_sandbox import NBGRADERS_REPLACED, in_place_of_nbgraders
from autograder.integrations.nbgrader_saved_grades import REPLACES, THIS, SavedInOneCommit

ASSIGNMENT, NOTEBOOK, STUDENT = "attention", "01_attention_without_weights", "s001"
GRADED = {"test_scores": (3.0, "1.5"), "test_weights": (2.0, "2.0"), "test_shapes": (1.0, None)}  # None: an error
ANSWERS = ("answer_unchanged", "answer_written")


def _graded_cell(grade_id, points, shown):
    cell = nbformat.v4.new_code_cell("grade(...)")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": points, "locked": True,
                                 "solution": False, "schema_version": 3}
    cell.outputs = ([nbformat.v4.new_output("execute_result", data={"text/plain": shown}, execution_count=1)]
                    if shown is not None else
                    [nbformat.v4.new_output("error", ename="Error", evalue="no", traceback=["no"])])
    return cell


def _answer(grade_id, written):
    cell = nbformat.v4.new_code_cell("raise NotImplementedError")
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False, "solution": True,
                                 "schema_version": 3}
    cell.metadata["nbgrader"]["checksum"] = compute_checksum(cell)
    if written:
        cell.source = "x = 1"
    return cell


def _notebook(extra_grade_id=None):
    cells = [_graded_cell(grade_id, points, shown) for grade_id, (points, shown) in GRADED.items()]
    cells[1:1] = [_answer(grade_id, written=index == 1) for index, grade_id in enumerate(ANSWERS)]
    if extra_grade_id is not None:  # a graded cell the gradebook does not know, after the first two graded cells
        cells.insert(3, _graded_cell(extra_grade_id, 1.0, "1.0"))
    return nbformat.v4.new_notebook(cells=cells)


@pytest.fixture(scope="module")
def gradebook_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(f"sqlite:///{path}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        for grade_id, (points, _shown) in GRADED.items():
            gradebook.add_grade_cell(grade_id, NOTEBOOK, ASSIGNMENT, max_score=points, cell_type="code")
        for grade_id in ANSWERS:
            gradebook.add_solution_cell(grade_id, NOTEBOOK, ASSIGNMENT)
        gradebook.add_student(STUDENT)
        with warnings.catch_warnings():  # nbgrader's add_submission warns three SAWarnings that lose nothing
            warnings.simplefilter("ignore", SAWarning)
            gradebook.add_submission(ASSIGNMENT, STUDENT)
    return path


def _saved(kind, gradebook_file, folder, notebook):
    """Run `kind` on `notebook` against a fresh copy of the gradebook: (the gradebook's rows, the commits made, the
    error raised or None)."""
    folder.mkdir()
    copy = folder / "gradebook.db"
    shutil.copyfile(gradebook_file, copy)
    resources = {"nbgrader": {"notebook": NOTEBOOK, "assignment": ASSIGNMENT, "student": STUDENT,
                              "db_url": f"sqlite:///{copy}"}}
    commits = []

    def counted(connection):
        commits.append(connection)

    event.listen(Engine, "commit", counted)
    error = None
    try:
        kind().preprocess(notebook, resources)
    except MissingEntry as raised:
        error = type(raised).__name__
    finally:
        event.remove(Engine, "commit", counted)
    with sqlite3.connect(copy) as connection:
        rows = list(connection.iterdump())
    return rows, len(commits), error


def test_the_gradebook_holds_what_nbgraders_own_leaves_in_one_commit_per_notebook(gradebook_file, tmp_path):
    nbgraders, nbgraders_commits, _ = _saved(SaveAutoGrades, gradebook_file, tmp_path / "nbgrader", _notebook())
    ours, our_commits, _ = _saved(SavedInOneCommit, gradebook_file, tmp_path / "ours", _notebook())
    assert ours == nbgraders
    with sqlite3.connect(gradebook_file) as connection:
        assert ours != list(connection.iterdump())  # the scores and comments were written
    # nbgrader's: the gradebook's own on opening it, then one per graded cell and per answer; ours: those of opening
    # it, then one for the whole notebook
    assert nbgraders_commits - our_commits == len(GRADED) + len(ANSWERS) - 1


def test_a_cell_that_raises_keeps_what_the_cells_before_it_wrote_as_nbgraders_does(gradebook_file, tmp_path):
    broken = _notebook(extra_grade_id="test_unknown")
    nbgraders = _saved(SaveAutoGrades, gradebook_file, tmp_path / "nbgrader", broken)
    ours = _saved(SavedInOneCommit, gradebook_file, tmp_path / "ours", _notebook(extra_grade_id="test_unknown"))
    assert nbgraders[2] == ours[2] == "MissingEntry"
    assert ours[0] == nbgraders[0]
    with sqlite3.connect(gradebook_file) as connection:
        assert ours[0] != list(connection.iterdump())  # the first graded cell and the answers were kept


def test_the_session_commits_again_after_the_notebook(gradebook_file, tmp_path):
    """The commit made a flush for the notebook's cells is nbgrader's session's own again afterwards."""
    copy = tmp_path / "gradebook.db"
    shutil.copyfile(gradebook_file, copy)
    resources = {"nbgrader": {"notebook": NOTEBOOK, "assignment": ASSIGNMENT, "student": STUDENT,
                              "db_url": f"sqlite:///{copy}"}}
    preprocessor = SavedInOneCommit()
    preprocessor.preprocess(_notebook(), resources)
    assert "commit" not in vars(preprocessor.gradebook.db)


def test_the_list_replaces_nbgraders_save_auto_grades_and_no_other_of_its_neighbours():
    listed = ["nbgrader.preprocessors.LimitOutput", REPLACES, "nbgrader.preprocessors.AssignLatePenalties"]
    assert NBGRADERS_REPLACED[REPLACES] == THIS
    assert in_place_of_nbgraders(listed) == [listed[0], THIS, listed[2]]
