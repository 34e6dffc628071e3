"""Notebooks handed in under the names students really save, in the layouts they really use, and attacks by links.

A download's " (1)", a Jupyter copy, capitals; a folder one down, a zip, `.ipynb.txt`; links to the solution or a
classmate. `attnkit grade` and Gradescope's runner must give the same answer on the same folder.
"""

import messy_layouts
import pytest
from messy_layouts import RENAMED, unrelated

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading.classroom import grade_class
from autograder.grading.intake import open_submission
from autograder.grading.notebooks import Options
from autograder.grading.submissions import normalised_name
from autograder.integrations import gradescope
from autograder.isolation.limits import Limits

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


def test_the_exact_name_wins_over_a_copy_when_neither_is_a_notebook(tmp_path):
    for name in (f"{NB01}.ipynb", f"{NB01} (1).ipynb"):
        (tmp_path / "attention").mkdir(exist_ok=True)
        (tmp_path / "attention" / name).write_text("{}")
    with open_submission(tmp_path) as submission:
        found = submission.located[NB01]
    assert found.path == tmp_path / "attention" / f"{NB01}.ipynb"
    assert "none is a readable notebook of 2 copies" in found.notes[0]


def test_a_missing_folder_says_so(tmp_path):
    with open_submission(tmp_path / "nobody") as submission:
        assert all(item.path is None and item.reason == "not submitted (nobody/ cannot be read: No such file or "
                   "directory)" for item in submission.located.values())


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    """One class: three students with renamed copies, one with two candidates, one with an unrelated file."""
    solved = (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes()
    submitted = tmp_path_factory.mktemp("renamed") / "submitted"
    handed_in = RENAMED
    for student, names in handed_in.items():
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        for name in names:
            (folder / name).write_bytes(unrelated() if student == "unrelated" else solved)
    summary = grade_class(submitted, submitted.parent / "out", Options(limits=Limits(timeout=20, memory_mb=1024)))
    documents = {document["student_id"]: document for document in summary.documents}
    return {student: next(nb for nb in documents[student]["notebooks"] if nb["notebook"] == NB01)
            for student in handed_in}, handed_in


@pytest.mark.parametrize("student", ["download", "capitals", "jupyter_copy"])
@pytest.mark.slow
def test_the_only_renamed_copy_is_graded_and_the_notes_say_which_file(graded, student):
    notebooks, handed_in = graded
    notebook = notebooks[student]
    [name] = handed_in[student]
    assert notebook["status"] == "graded" and notebook["score"] == NB01_POINTS, notebook["notes"]
    assert notebook["path"].endswith(name)
    assert any(name in note and f"as {NB01}.ipynb" in note for note in notebook["notes"]), notebook["notes"]


@pytest.mark.slow
def test_two_copies_of_the_same_work_are_graded_once(graded):
    notebook = graded[0]["two_copies"]
    assert notebook["status"] == "graded" and notebook["score"] == NB01_POINTS
    assert notebook["path"].endswith(f"{NB01} (1).ipynb")
    assert f"attention/{NB01} (2).ipynb: the same code" in notebook["notes"][0], notebook["notes"]


@pytest.mark.slow
def test_an_unrelated_notebook_is_listed_not_graded(graded):
    notebook = graded[0]["unrelated"]
    assert notebook["status"] == "missing" and "my_notes.ipynb" in notebook["reason"]


# --- links, zips, other layouts: `attnkit grade` and Gradescope's runner agree ----------------------------

ATTACKS = {  # student: what the reason says
    "link_to_solution": f"attention/{NB01}.ipynb is a symbolic link: not followed",
    "attention_linked_to_source": "attention is a symbolic link: not followed",
    "link_to_classmate": f"attention/{NB01}.ipynb is a symbolic link: not followed",
    "student_folder_linked": "student_folder_linked/ is a symbolic link: not followed",
    "zip_escaping": f"work.zip: ../{NB01}.ipynb is outside the zip's folder",
    "sparse_4gb": "is larger than 512 MB",
    "two_edited": f"attention/{NB01}-Copy1.ipynb",
}
HONEST = {  # student: what the note says
    "alice": None,
    "nested": f"graded attention/attention/{NB01}.ipynb as {NB01}.ipynb (not in an attention/ folder)",
    "top_level": f"graded {NB01}.ipynb as {NB01}.ipynb (not in an attention/ folder)",
    "as_text": f"graded attention/{NB01}.ipynb.txt as {NB01}.ipynb",
    "zipped": f"graded attention.zip: attention/{NB01}.ipynb as {NB01}.ipynb: found only inside the zip file",
    "copy_beside_release": f"graded attention/{NB01}-Copy1.ipynb as {NB01}.ipynb, the only edited work",
    "colab": f"graded Copy of {NB01}.ipynb as {NB01}.ipynb: its name is not {NB01}.ipynb but it holds that",
    "lms_download": f"graded attention/nguyen_LATE_48213_{NB01}.ipynb as {NB01}.ipynb: its name is not",
    "finder_zip": f"graded Archive.zip: hw/notebook1.ipynb as {NB01}.ipynb: its name is not",
}


@pytest.fixture(scope="module")
def layouts(tmp_path_factory, repo_root):
    """The class above graded by `attnkit grade`: {student: NB01's record}, and the builders."""
    submitted = tmp_path_factory.mktemp("layouts") / "submitted"
    alice = submitted / "alice"
    builders = messy_layouts.layouts(repo_root, alice)
    for student, build in builders.items():
        (submitted / student).mkdir(parents=True)
        build(submitted / student)
    (submitted / "student_folder_linked").symlink_to(alice, target_is_directory=True)
    summary = grade_class(submitted, submitted.parent / "out", Options(limits=Limits(timeout=20, memory_mb=1024)))
    documents = {document["student_id"]: document for document in summary.documents}
    assert set(documents) == set(ATTACKS) | set(HONEST)
    return {student: next(nb for nb in documents[student]["notebooks"] if nb["notebook"] == NB01)
            for student in documents}, builders, alice


@pytest.mark.parametrize("student", sorted(ATTACKS))
@pytest.mark.slow
def test_links_zips_and_caps_score_0_and_say_why(layouts, student):
    notebook = layouts[0][student]
    assert notebook["status"] in ("missing", "unreadable") and notebook["score"] == 0, notebook
    assert ATTACKS[student] in notebook["reason"], notebook["reason"]


@pytest.mark.slow
def test_two_edited_copies_name_both_files(layouts):
    reason = layouts[0]["two_edited"]["reason"]
    assert f"attention/{NB01}.ipynb" in reason and f"attention/{NB01}-Copy1.ipynb" in reason


@pytest.mark.parametrize("student", sorted(HONEST))
@pytest.mark.slow
def test_honest_layouts_are_graded_and_the_note_says_which_file(layouts, student):
    notebook = layouts[0][student]
    assert notebook["status"] == "graded" and notebook["score"] == NB01_POINTS, notebook
    if HONEST[student]:
        assert any(note.startswith(HONEST[student]) for note in notebook["notes"]), notebook["notes"]


@pytest.mark.parametrize("student", sorted(set(ATTACKS) | set(HONEST)))
@pytest.mark.slow
def test_gradescope_grades_the_same_folder_the_same(layouts, student, tmp_path):
    """run_autograder on the same folder as ROOT/submission: the same status and score for every notebook."""
    by_student, builders, alice = layouts
    root = tmp_path / "autograder"
    root.mkdir()
    if student == "student_folder_linked":
        (root / "submission").symlink_to(alice, target_is_directory=True)
    else:
        (root / "submission").mkdir()
        builders[student](root / "submission")
    results = gradescope.run(root, Options(limits=Limits(timeout=20, memory_mb=1024), lang="en"))
    score = sum(test["score"] for test in results["tests"] if test["name"].startswith(f"{NB01} · "))
    assert score == by_student[student]["score"], results["output"]
    expected = HONEST[student] if student in HONEST else ATTACKS[student].replace(student, "submission")
    assert expected is None or expected in results["output"], results["output"]
