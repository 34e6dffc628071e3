"""Notebooks handed in under the names students really save: a download's " (1)", a Jupyter copy, capitals."""

import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading.classroom import grade_class
from autograder.grading.notebooks import Options
from autograder.grading.submissions import locate_notebooks, normalised_name
from autograder.isolation.supervisor import Limits

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)


@pytest.mark.parametrize("stem", [
    NB01,
    f"{NB01} (1)",
    f"{NB01}(2)",
    f"{NB01}-Copy1",
    f"{NB01} - Copy",
    f"{NB01} - Copy (2)",
    f"{NB01} copy",
    "01_Attention_Without_Weights",
    "01 Attention Without Weights (3)",
])
def test_names_students_save_stand_for_the_notebook(stem):
    assert normalised_name(stem) == NB01


@pytest.mark.parametrize("stem", ["01_attention", "02_trainable_self_attention (1)", "copy", "notes (1)"])
def test_other_names_stand_for_other_notebooks(stem):
    assert normalised_name(stem) != NB01


def test_the_exact_name_wins_over_a_copy(tmp_path):
    for name in (f"{NB01}.ipynb", f"{NB01} (1).ipynb"):
        (tmp_path / name).write_text("{}")
    found = locate_notebooks(tmp_path)[NB01]
    assert found.path == tmp_path / f"{NB01}.ipynb" and not found.note


def test_a_missing_folder_says_so(tmp_path):
    found = locate_notebooks(tmp_path / "attention")
    assert all(item.path is None and item.reason == "not submitted (no attention/ folder)" for item in found.values())


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    """One class: three students with renamed copies, one with two candidates, one with an unrelated file."""
    solved = (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes()
    submitted = tmp_path_factory.mktemp("renamed") / "submitted"
    handed_in = {
        "download": [f"{NB01} (1).ipynb"],
        "capitals": ["01_Attention_Without_Weights.ipynb"],
        "jupyter_copy": [f"{NB01}-Copy1.ipynb"],
        "two_copies": [f"{NB01} (1).ipynb", f"{NB01} (2).ipynb"],
        "unrelated": ["my_notes.ipynb"],
    }
    for student, names in handed_in.items():
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_bytes(solved)
    summary = grade_class(submitted, submitted.parent / "out", Options(limits=Limits(timeout=20, memory_mb=1024)))
    documents = {document["student_id"]: document for document in summary.documents}
    return {student: next(nb for nb in documents[student]["notebooks"] if nb["notebook"] == NB01)
            for student in handed_in}, handed_in


@pytest.mark.parametrize("student", ["download", "capitals", "jupyter_copy"])
def test_the_only_renamed_copy_is_graded_and_the_notes_say_which_file(graded, student):
    notebooks, handed_in = graded
    notebook = notebooks[student]
    [name] = handed_in[student]
    assert notebook["status"] == "graded" and notebook["score"] == NB01_POINTS, notebook["notes"]
    assert notebook["path"].endswith(name)
    assert any(name in note and f"as {NB01}.ipynb" in note for note in notebook["notes"]), notebook["notes"]


def test_two_candidates_are_not_submitted_and_the_reason_lists_the_files(graded):
    notebooks, handed_in = graded
    notebook = notebooks["two_copies"]
    assert notebook["status"] == "missing" and notebook["score"] == 0
    assert notebook["reason"].startswith(f"not submitted (no attention/{NB01}.ipynb")
    assert all(name in notebook["reason"] for name in handed_in["two_copies"]), notebook["reason"]


def test_an_unrelated_notebook_is_listed_not_graded(graded):
    notebook = graded[0]["unrelated"]
    assert notebook["status"] == "missing" and "my_notes.ipynb" in notebook["reason"]
