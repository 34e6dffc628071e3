"""One grade per notebook on every path: the course's `nbgrader autograde` and `attnkit grade` give the same totals,
per student and per notebook, on every layout of the messy-work tests, and the student's other notebooks never reach
nbgrader's bookkeeping (autograder/integrations/nbgrader_intake.py, nbgrader_renamed.py).

One nbgrader course as configured (nbgrader_config.py), graded by `nbgrader autograde`, `nbgrader generate_feedback`
and `attnkit grade`:
  - the issue's students: amartin (the four notebooks solved, beside Untitled.ipynb and a scratch notebook in a
    subfolder), copy1 (notebook 04 done in 04_multi_head_attention-Copy1.ipynb, the original left as released),
    earlier (solved; feedback generated, then an Untitled.ipynb handed in and graded and fed back again);
  - every layout of tests/messy_layouts.py for notebook 01 (links, zips, copies, other folders and names, a sparse
    4 GB file, a cluttered folder), each beside the other three notebooks as released (so that nbgrader autogrades
    the student: it skips a folder without a notebook file), and a student folder that is a link to a classmate's.
generate_feedback exits 0 and keeps everyone's feedback; `autograded/` holds the four notebooks and nothing else of a
notebook; the two graders agree; the note saying which file was graded is in the autograded notebook (what formgrader
shows) and in the feedback page. Not here: 200,000 files beside a notebook (tests/test_cluttered_folders.py, attnkit
grade only: nbgrader's own copy of them takes minutes), the demo class (tests/test_nbgrader_sandbox.py).
"""

import json
import os
import shutil
import subprocess
import sys

import messy_layouts
import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations import nbgrader_course
from autograder.isolation.limits import Limits

pytestmark = pytest.mark.slow

NB01, NB04 = NOTEBOOKS[0], NOTEBOOKS[3]
POINTS = {notebook: sum(e.points for e in EXERCISES if e.notebook == notebook) for notebook in NOTEBOOKS}
LIMITS = Limits(timeout=20.0, memory_mb=1024)
TOLERANCE = 1e-6
COPY_NOTE = (f"graded attention/{NB04}-Copy1.ipynb as {NB04}.ipynb, the only edited work of 2 copies "
             f"(attention/{NB04}.ipynb: the release, untouched)")
NO_NB01 = {"zip_escaping", "unrelated"}  # no file of theirs is notebook 01 (a zip member outside the zip, a notebook
#                                          of their own): neither grader grades one, nbgrader makes no page for it
UNTITLED = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": [],
                       "source": []}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # File > New Notebook


def _nbgrader(course, *args):
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=environment,
                          capture_output=True, text=True, check=False)


def _course(root, repo_root):
    course = nbgrader_course.make_course(root, repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"c.SandboxedExecute.timeout = {LIMITS.timeout}\n"
                     f"c.SandboxedExecute.memory_mb = {LIMITS.memory_mb}\n")
    nbgrader_course.generate_release(course)
    return course


def _copy(repo_root, kind, name, destination):
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(repo_root / kind / "attention" / f"{name}.ipynb", destination)


def _hand_in(submitted, repo_root):
    """The class above; its student ids."""
    for student in ("amartin", "copy1", "earlier"):
        for name in NOTEBOOKS:
            _copy(repo_root, "release" if (student, name) == ("copy1", NB04) else "source", name,
                  submitted / student / "attention" / f"{name}.ipynb")
    (submitted / "amartin" / "attention" / "Untitled.ipynb").write_text(json.dumps(UNTITLED))
    (submitted / "amartin" / "attention" / "scratch").mkdir()
    (submitted / "amartin" / "attention" / "scratch" / "try.ipynb").write_text(json.dumps(UNTITLED))
    _copy(repo_root, "source", NB04, submitted / "copy1" / "attention" / f"{NB04}-Copy1.ipynb")
    alice = submitted / "alice"
    builders = {**messy_layouts.layouts(repo_root, alice), **messy_layouts.renamed(repo_root),
                **messy_layouts.more_layouts(repo_root), "cluttered": messy_layouts.cluttered}
    for student, build in builders.items():
        (submitted / student).mkdir()
        if student == "cluttered":
            build(submitted / student, repo_root)
            continue
        build(submitted / student)
        attention = submitted / student / "attention"
        if not attention.is_symlink():  # the rest of the assignment, as released: nbgrader autogrades the student
            for name in NOTEBOOKS[1:]:
                _copy(repo_root, "release", name, attention / f"{name}.ipynb")
    (submitted / "student_folder_linked").symlink_to(alice, target_is_directory=True)
    return sorted(path.name for path in submitted.iterdir())


def _feedback(course):
    """{student: the feedback pages they have}"""
    return {folder.name: sorted(path.name for path in (folder / "attention").glob("*.html"))
            for folder in sorted((course / "feedback").iterdir())}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("one-grade")
    course = _course(root / "course", repo_root)
    students = _hand_in(course / "submitted", repo_root)
    run = {"autograde": _nbgrader(course, "autograde", "attention", "--force", "--log-level=INFO"),
           "feedback": _nbgrader(course, "generate_feedback", "attention")}
    run["feedback_then"] = _feedback(course)
    run["nbgrader"] = nbgrader_course.read_scores(course)
    summary = classroom.grade_class(course / "submitted", root / "attnkit", Options(limits=LIMITS))
    run["attnkit"] = {document["student_id"]: document for document in summary.documents}
    # earlier hands in an Untitled.ipynb too, and is graded and fed back again (formgrader's buttons do the same)
    (course / "submitted" / "earlier" / "attention" / "Untitled.ipynb").write_text(json.dumps(UNTITLED))
    run["autograde_again"] = _nbgrader(course, "autograde", "attention", "--force", "--student=earlier")
    run["feedback_again"] = _nbgrader(course, "generate_feedback", "attention", "--force", "--student=earlier")
    run["feedback_now"] = _feedback(course)
    return course, students, run


def _ok(process):
    return process.returncode == 0, (process.stdout + process.stderr)[-4000:]


def test_generate_feedback_exits_0_for_everyone_and_keeps_everyones_feedback(graded):
    course, students, run = graded
    for step in ("autograde", "feedback", "autograde_again", "feedback_again"):
        ok, log = _ok(run[step])
        assert ok, (step, log)
    handed_in = {student: NOTEBOOKS[1:] if student in NO_NB01 else NOTEBOOKS for student in students}
    assert run["feedback_then"] == run["feedback_now"] == {
        student: sorted(f"{name}.html" for name in names) for student, names in handed_in.items()}
    for student, names in handed_in.items():  # nbgrader's bookkeeping sees the notebooks of the assignment only
        autograded = course / "autograded" / student / "attention"
        assert sorted(path.relative_to(autograded).as_posix() for path in autograded.rglob("*.ipynb")) == \
            sorted(f"{name}.ipynb" for name in names), student
    for student in NO_NB01:
        assert next(nb for nb in run["attnkit"][student]["notebooks"] if nb["notebook"] == NB01)["status"] == "missing"


def test_both_graders_give_the_same_totals_per_student_and_per_notebook(graded):
    _, students, run = graded
    assert set(run["nbgrader"]) == set(run["attnkit"]) == set(students)
    disagreements = []
    for student in students:
        ours = {notebook["notebook"]: notebook["score"] for notebook in run["attnkit"][student]["notebooks"]}
        theirs = run["nbgrader"][student]
        disagreements += [f"{student} {name}: attnkit {ours[name]}, nbgrader {theirs.get(name)}"
                          for name in NOTEBOOKS if abs(ours[name] - (theirs.get(name) or 0.0)) > TOLERANCE]
    assert disagreements == []
    # and not all zero: what each layout is worth (tests/test_submission_files.py says why for each)
    full = {"alice", "nested", "top_level", "as_text", "zipped", "copy_beside_release", "colab", "lms_download",
            "finder_zip", "download", "capitals", "jupyter_copy", "two_copies", "no_metadata", "outside_untouched",
            "edited_wins"}
    assert {student for student in students if run["nbgrader"][student][NB01] == POINTS[NB01]} == \
        full | {"amartin", "copy1", "earlier", "cluttered"}
    assert run["nbgrader"]["copy1"] == run["nbgrader"]["cluttered"] == POINTS


def test_the_copy_is_graded_under_the_notebooks_name_and_the_note_says_which_file(graded):
    course, _, run = graded
    assert run["nbgrader"]["copy1"][NB04] == POINTS[NB04]
    log = run["autograde"].stdout + run["autograde"].stderr
    assert f"copy1/{NB04} graded ahead in the sandbox" in log  # grading ahead staged the file OwnFilesOnly took
    notebook = nbformat.read(course / "autograded" / "copy1" / "attention" / f"{NB04}.ipynb", as_version=4)
    first_graded = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade"))
    assert COPY_NOTE in "".join(output.get("text", "") for output in first_graded.outputs)
    page = (course / "feedback" / "copy1" / "attention" / f"{NB04}.html").read_text(encoding="utf-8")
    assert COPY_NOTE in page
    assert any(COPY_NOTE in note for note in
               next(nb for nb in run["attnkit"]["copy1"]["notebooks"] if nb["notebook"] == NB04)["notes"])


def test_a_notebook_handed_in_only_under_another_name_is_graded_under_its_own(graded):
    course, _, run = graded
    for student, shown in (("jupyter_copy", f"attention/{NB01}-Copy1.ipynb"),
                           ("colab", f"Copy of {NB01}.ipynb"), ("zipped", f"attention.zip: attention/{NB01}.ipynb")):
        assert run["nbgrader"][student][NB01] == POINTS[NB01], student
        text = (course / "autograded" / student / "attention" / f"{NB01}.ipynb").read_text(encoding="utf-8")
        assert f"graded {shown} as {NB01}.ipynb" in text, student
    assert f"jupyter_copy/{NB01} graded ahead in the sandbox" in run["autograde"].stdout + run["autograde"].stderr
