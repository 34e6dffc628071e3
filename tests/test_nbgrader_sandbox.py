"""`nbgrader autograde` grades in attnkit's sandbox (autograder/integrations/nbgrader_sandbox.py).

- The course's nbgrader_config.py replaces nbgrader's Execute, and only that, in Autograde's list.
- The same totals as `attnkit grade`, per student and per notebook, on the demo class (adversarial students
  included), on the adversarial catalogue of tests/adversarial_cases.py (every case nbgrader can read) and on an
  honest student whose notebook imports its own module and opens its data files.
- What nbgrader records and shows: verdicts and points in the graded cells (never a stderr stream or an error
  there), the errors of the student's own cells, feedback with a named mistake and a heatmap and no hidden value.
- The rest of nbgrader's workflow: manual grading and comments, late penalties, export, re-running one student.
- Where the sandbox cannot run, one clear error that names the setting; nothing graded in a kernel instead.
"""

import json
import logging
import os
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from adversarial_cases import cases, usable
from adversarial_cases import write_submission as write_case
from traitlets.config.loader import PyFileConfigLoader

from autograder.course.exercises import NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations import (
    nbgrader_course,
    nbgrader_markup,
    nbgrader_metadata,
    nbgrader_sandbox,
    nbgrader_saved_grades,
)
from autograder.isolation.limits import Limits
from devtools import demo
from devtools.class_fixtures import BY_ID, CLASS
from devtools.class_fixtures import write_submission as write_fixture

pytestmark = pytest.mark.slow

TOLERANCE = 1e-6
NB01, NB03 = NOTEBOOKS[0], NOTEBOOKS[2]


def _course(root, repo_root, limits):
    """A sandboxed nbgrader course whose SandboxedExecute has `limits`, its release generated."""
    course = nbgrader_course.make_course(root, repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"c.SandboxedExecute.timeout = {limits.timeout}\nc.SandboxedExecute.memory_mb = "
                     f"{limits.memory_mb}\nc.SandboxedExecute.grace = {limits.grace}\n"
                     f"c.SandboxedExecute.budget_factor = {limits.budget_factor}\n")
    nbgrader_course.generate_release(course)
    return course


def _attnkit_scores(submitted, out, limits):
    summary = classroom.grade_class(submitted, out, Options(limits=limits))
    return {document["student_id"]: {notebook["notebook"]: notebook["score"] for notebook in document["notebooks"]}
            for document in summary.documents}, {document["student_id"]: document for document in summary.documents}


def _disagreements(attnkit_scores, nbgrader_scores, students):
    """'student notebook: attnkit X, nbgrader Y' for every notebook the two grade differently."""
    found = []
    for student in students:
        ours, theirs = attnkit_scores[student], nbgrader_scores.get(student, {})
        for name in NOTEBOOKS:
            if abs(ours.get(name, 0.0) - theirs.get(name, 0.0)) > TOLERANCE:
                found.append(f"{student} {name}: attnkit {ours.get(name)}, nbgrader {theirs.get(name)}")
    return found


def _outputs(notebook_path):
    notebook = nbformat.read(notebook_path, as_version=4)
    return [(cell, cell.get("metadata", {}).get("nbgrader", {})) for cell in notebook.cells
            if cell.cell_type == "code"]


# --- configuration and refusal --------------------------------------------------------------------------------------


def test_the_course_config_replaces_nbgraders_execute_and_nothing_else(repo_root):
    from nbgrader.converters.autograde import Autograde

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert list(config.Autograde.autograde_preprocessors) == nbgrader_sandbox.AUTOGRADE_PREPROCESSORS
    defaults = [f"{kind.__module__.split('.')[0]}.preprocessors.{kind.__name__}"
                for kind in Autograde().autograde_preprocessors]
    assert defaults[0] == "nbgrader.preprocessors.Execute"
    assert nbgrader_sandbox.AUTOGRADE_PREPROCESSORS[1:-1] == nbgrader_sandbox.in_place_of_nbgraders(defaults[1:])
    assert nbgrader_metadata.THIS in nbgrader_sandbox.AUTOGRADE_PREPROCESSORS
    assert nbgrader_saved_grades.THIS in nbgrader_sandbox.AUTOGRADE_PREPROCESSORS
    assert nbgrader_sandbox.AUTOGRADE_PREPROCESSORS[-1] == nbgrader_markup.THIS
    # the demo's in-kernel course puts nbgrader's own list back, exactly
    in_kernel = {"c": config.__class__()}
    exec("\n".join(nbgrader_sandbox.in_kernel_config_lines()), in_kernel)
    assert list(in_kernel["c"].Autograde.autograde_preprocessors) == defaults


def test_where_the_sandbox_cannot_run_autograde_stops_and_names_the_setting(monkeypatch, tmp_path, repo_root):
    monkeypatch.setattr(nbgrader_sandbox.sandbox, "landlock_abi", lambda: 0)
    notebook = nbformat.read(repo_root / "release" / "attention" / f"{NB01}.ipynb", as_version=4)
    resources = {"nbgrader": {"notebook": NB01}, "metadata": {"path": str(tmp_path)}}
    with pytest.raises(nbgrader_sandbox.SandboxUnavailable) as refused:
        nbgrader_sandbox.SandboxedExecute().preprocess(notebook, resources)
    message = str(refused.value)
    assert "Landlock" in message and "c.Autograde.autograde_preprocessors" in message
    assert "Nothing was graded in the student's kernel" in message
    assert list(tmp_path.iterdir()) == []  # not even the notebook was written


def test_an_isolation_layer_missing_in_the_child_also_stops_it(monkeypatch):
    for note in ("seccomp unavailable (Operation not permitted): ...", "Landlock unavailable (Linux < 5.13 ...)"):
        assert note.startswith(nbgrader_sandbox.ESSENTIAL_LAYERS)
    assert not "Landlock ABI 4 < 6: student code may signal".startswith(nbgrader_sandbox.ESSENTIAL_LAYERS)


# --- the demo class -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_class(tmp_path_factory, repo_root):
    """The demo class graded by attnkit and by the sandboxed nbgrader (the demo's limits), feedback generated."""
    root = tmp_path_factory.mktemp("nbgrader-sandbox-demo")
    limits = Limits(timeout=demo.ATTNKIT_TIMEOUT)
    course = _course(root / "course", repo_root, limits)
    for submission in CLASS:
        folder = write_fixture(submission, root / "handed_in" / submission.student_id, repo_root)
        nbgrader_course.submit(course, submission.student_id, folder)
    log = _nbgrader_log(course, "autograde", "attention", "--log-level=INFO")  # each notebook's line: a detail
    nbgrader_course.generate_feedback(course)
    scores, documents = _attnkit_scores(course / "submitted", root / "attnkit", limits)
    return {"course": course, "attnkit": scores, "documents": documents, "log": log,
            "nbgrader": nbgrader_course.read_scores(course)}


def _nbgrader_log(course, *args):
    """Run `nbgrader ARGS` in the course; its log (it must succeed)."""
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    process = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=environment,
                             capture_output=True, text=True, check=False)
    assert process.returncode == 0, (process.stdout + process.stderr)[-3000:]
    return process.stdout + process.stderr


def test_the_demo_class_gets_attnkits_grades_from_nbgrader(demo_class):
    students = [submission.student_id for submission in CLASS]
    assert _disagreements(demo_class["attnkit"], demo_class["nbgrader"], students) == []
    # the attacks that fool nbgrader in a kernel get their honest grade here
    for student in ("adversarial-allclose-loop", "adversarial-solutions-exit"):
        assert sum(demo_class["nbgrader"][student].values()) < 100, student
    # every notebook was graded ahead (autograder/integrations/nbgrader_lookahead.py): what nbgrader sanitized was
    # the grading input attnkit planned from submitted/, edited given cell and attacks included
    graded = [line for line in demo_class["log"].splitlines() if " in the sandbox: " in line]
    assert len(graded) == len(CLASS) * len(NOTEBOOKS) and all("graded ahead" in line for line in graded), graded


def test_graded_cells_hold_the_verdicts_and_the_points_and_nothing_nbgrader_reads_as_zero(demo_class):
    course = demo_class["course"]
    for student in ("solved", "mistake-mask-diagonal", "untouched"):
        for name in NOTEBOOKS:
            graded = [(cell, meta) for cell, meta in _outputs(course / "autograded" / student / "attention" /
                                                                f"{name}.ipynb") if meta.get("grade")]
            assert graded, (student, name)
            for cell, meta in graded:
                kinds = [output.output_type for output in cell.outputs]
                assert "error" not in kinds and not any(
                    output.get("name") == "stderr" for output in cell.outputs), (student, meta["grade_id"])
                assert kinds[0] == "stream" and "Graded checks" in cell.outputs[0].text
                (result,) = [output for output in cell.outputs if output.output_type == "execute_result"]
                assert 0 <= float(result.data["text/plain"]) <= meta["points"]


def test_the_students_own_cells_show_their_errors(demo_class):
    """Each cell that raised in the child shows it (the stubs' NotImplementedError where they are called), and only
    those cells: what attnkit's record says, cell by cell."""
    documents = demo_class["documents"]["untouched"]
    for name in NOTEBOOKS:
        path = demo_class["course"] / "autograded" / "untouched" / "attention" / f"{name}.ipynb"
        cells = nbformat.read(path, as_version=4).cells
        notes = next(notebook["notes"] for notebook in documents["notebooks"] if notebook["notebook"] == name)
        raised = {int(note.split(":")[0].removeprefix("cell ")): note.split(": ")[1] for note in notes
                  if note.startswith("cell ")}
        assert raised, name
        shown = {index: [(output.output_type, output.get("ename")) for output in cell.outputs
                         if output.output_type == "error"]
                 for index, cell in enumerate(cells)
                 if cell.cell_type == "code" and not cell.metadata.get("nbgrader", {}).get("grade")}
        assert {index: errors for index, errors in shown.items() if errors} == \
            {index: [("error", kind)] for index, kind in raised.items()}, name


def test_the_students_own_cells_show_what_they_printed_capped(tmp_path, repo_root):
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    printing = [nbformat.v4.new_code_cell('print("hello from", "cell")\nimport sys\nprint("oops", file=sys.stderr)'),
                nbformat.v4.new_code_cell('print("x" * 100_000, end="")')]
    notebook.cells[3:3] = printing
    course = _course(tmp_path / "course", repo_root, Limits(timeout=10))
    folder = course / "submitted" / "printer" / "attention"
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    for name in NOTEBOOKS[1:]:
        (folder / f"{name}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{name}.ipynb").read_bytes())
    nbgrader_course.autograde(course)
    assert nbgrader_course.read_scores(course)["printer"][NB01] == 18
    cells = nbformat.read(course / "autograded" / "printer" / "attention" / f"{NB01}.ipynb", as_version=4).cells
    assert [(output.output_type, output.name, output.text) for output in cells[3].outputs] == \
        [("stream", "stdout", "hello from cell\noops\n")]
    (flood,) = cells[4].outputs
    assert flood.text == "x" * 2000 + "\n[... 98,000 more characters not kept]"


def test_feedback_names_the_mistake_draws_the_mask_and_keeps_hidden_values_secret(demo_class):
    course, student = demo_class["course"], "mistake-mask-diagonal"
    page = (course / "feedback" / student / "attention" / f"{NB03}.html").read_text(encoding="utf-8")
    assert "reproduced mistake" in page and "data:image/svg+xml;base64," in page  # the heatmap, as nbconvert embeds SVG
    assert "Score: 15.5 / 25.0" in page or "15.5" in page
    document = demo_class["documents"][student]
    notebook = next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB03)
    hidden_failed = [check for check in notebook["checks"] if check["hidden"] and check["status"] != "passed"]
    assert hidden_failed
    for check in hidden_failed:
        # a hidden check's verdict line is on the page, with no expected/got values under it; or, where a check
        # before it fails for the same reason, its title on the line that folds it (autograder.checking.feedback)
        line = check["message"].splitlines()[0][:60]
        text = page.replace("&#x27;", "'").replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
        assert line in text or line.split(": ")[0][:40] in text, line
    text = page.split("Graded checks for The causal mask")[1].split("execute_result")[0]
    assert "expected:" in text  # the public checks' values are shown ...
    public_titles = [check["message"][:30] for check in notebook["checks"] if not check["hidden"]]
    assert public_titles


# --- grading ahead ------------------------------------------------------------------------------------------------


def test_a_result_graded_ahead_is_taken_only_for_the_same_grading_input(tmp_path, repo_root):
    from autograder.integrations.nbgrader_lookahead import Run, look_ahead, staged
    from autograder.isolation.notebook_plan import plan_notebook

    solved = (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes()
    handed_in = tmp_path / "submitted" / "alice" / "attention"
    handed_in.mkdir(parents=True)
    (handed_in / f"{NB01}.ipynb").write_bytes(solved)
    options = Options(limits=Limits(timeout=10))
    run = Run(tmp_path / "submitted", tmp_path / "autograded", "attention", "*", False, tuple(NOTEBOOKS), options)
    call = object.__new__(type("AutogradeCall", (), {}))  # what keeps the look-ahead: the call's converter
    ahead = look_ahead(run, call)
    assert look_ahead(run, call) is ahead  # every notebook of the call asks the same one

    def sanitized(name, edit=None):
        folder = tmp_path / name
        folder.mkdir()
        notebook = nbformat.reads(solved.decode(), as_version=4)
        if edit:
            edit(notebook)
        (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        return plan_notebook(folder / f"{NB01}.ipynb", NB01)

    with staged(run, "alice") as beside:  # what a notebook of alice's is graded beside on the spot
        same = ahead.result_for("alice", sanitized("same"), beside)
        assert same is not None and same.score == 18
        assert ahead.result_for("bob", sanitized("bob"), beside) is None  # not graded ahead
        added = sanitized("added", edit=lambda nb: nb.cells.append(nbformat.v4.new_code_cell("x = 1")))
        assert ahead.result_for("alice", added, beside) is None  # other code
    for name, content in (("data.csv", b"1,2\n"), (f"{NOTEBOOKS[1]}.ipynb", b'{"cells": []}')):
        (handed_in / name).write_bytes(content)  # handed in since it was graded ahead
        with staged(run, "alice") as beside:
            assert ahead.result_for("alice", sanitized(f"beside {name}"), beside) is None  # other files beside it


# --- the adversarial catalogue and a messy honest folder ---------------------------------------------------------


def _readable_by_nbgrader(case):
    return not isinstance(case.edit, bytes) and usable(case)


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory, repo_root):
    """tests/adversarial_cases.py (the cases nbgrader can read) graded by attnkit and by the sandboxed nbgrader."""
    from test_adversarial import LIMITS

    root = tmp_path_factory.mktemp("nbgrader-sandbox-catalogue")
    course = _course(root / "course", repo_root, LIMITS)
    submitted = course / "submitted"
    context = {"repo": str(repo_root), "submitted": str(submitted), "out": str(course / "autograded")}
    chosen = [case for case in cases() if _readable_by_nbgrader(case)]
    for case in chosen:
        write_case(case, submitted, repo_root / "source" / "attention", context)
    scores, _ = _attnkit_scores(submitted, root / "attnkit", LIMITS)
    refused, logs = _autograde_what_nbgrader_accepts(course, root / "refused-by-nbgrader", len(chosen))
    return {"cases": chosen, "logs": logs, "attnkit": scores, "refused": refused,
            "nbgrader": nbgrader_course.read_scores(course), "course": course}


def _autograde_what_nbgrader_accepts(course, refused_dir, at_most):
    """`nbgrader autograde attention` until it succeeds: a student whose notebook nbgrader itself refuses (its
    sanitizing stops the whole run on, say, a duplicated grade id) is moved out and the run goes on without it
    (graded students are skipped). Returns the refused students and every run's log."""
    refused, logs = [], []
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    for _ in range(at_most + 1):
        process = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "attention", "--log-level=INFO"],
                                 cwd=course, env=environment, capture_output=True, text=True, check=False)
        logs.append(process.stdout + process.stderr)
        if process.returncode == 0:
            break
        started = [line.split("'")[1] for line in logs[-1].splitlines() if "Creating/updating student with ID" in line]
        culprit = next(student for student in reversed(started)
                       if not (course / "autograded" / student).exists() and student not in refused)
        refused.append(culprit)
        refused_dir.mkdir(exist_ok=True)
        (course / "submitted" / culprit).rename(refused_dir / culprit)
    return refused, logs


# A thread the student left running writes forged frames on the channel whenever it is scheduled: which step the
# grader blames (and so which cell the re-run drops) depends on where its first frame lands among the child's own,
# in any run of either grader. Its agreement is not a property of the two graders; that neither blames itself is.
RACING_THREAD_CASES = ("thread_writing_on_the_channel-at_most_full",)


def test_the_adversarial_catalogue_gets_attnkits_grades_from_nbgrader(catalogue):
    graded = [case.name for case in catalogue["cases"]
              if case.name not in catalogue["refused"] and case.name not in RACING_THREAD_CASES]
    log = "".join(catalogue["logs"])
    # what nbgrader refused, it refused itself (its own sanitizing), never attnkit's step
    assert "attnkit cannot grade" not in log and "attnkit could not grade" not in log
    assert "SandboxedExecute" not in log.split("Traceback")[-1] if "Traceback" in log else True
    assert len(graded) >= len(catalogue["cases"]) - 5, catalogue["refused"]
    assert _disagreements(catalogue["attnkit"], catalogue["nbgrader"], graded) == []
    for name in RACING_THREAD_CASES:  # graded by both, never as a grader error
        assert name in catalogue["nbgrader"] and name not in catalogue["refused"], name


def test_an_honest_student_with_a_module_and_data_files_gets_full_marks_from_both(tmp_path, repo_root):
    from test_sandbox_workspace import CONTEXT, HELPER, WRITEFILE, _cells, _insert_after

    limits = Limits(timeout=10)
    course = _course(tmp_path / "course", repo_root, limits)
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    cells = _cells(notebook)
    cells["solution_softmax_naive"].source = "from helper import softmax_naive"
    cells["solution_softmax_stable"].source = WRITEFILE
    _insert_after(notebook, "solution_softmax_stable", "from stable import softmax_stable")
    cells["solution_context_vectors"].source = CONTEXT
    folder = course / "submitted" / "files" / "attention"
    (folder / "data").mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    for name in NOTEBOOKS[1:]:  # the other notebooks solved
        (folder / f"{name}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{name}.ipynb").read_bytes())
    (folder / "helper.py").write_text(HELPER)
    (folder / "data" / "scale.csv").write_text("scale,1.0\n")
    np.save(folder / "ones.npy", np.ones(4))
    nbgrader_course.autograde(course)
    attnkit, _ = _attnkit_scores(course / "submitted", tmp_path / "attnkit", limits)
    assert nbgrader_course.read_scores(course)["files"][NB01] == attnkit["files"][NB01] == 18


# --- the rest of nbgrader's workflow --------------------------------------------------------------------------------


def test_manual_grades_comments_late_penalties_export_and_one_student_again(tmp_path, repo_root):
    from nbgrader.api import Gradebook

    course = _course(tmp_path / "course", repo_root, Limits(timeout=10))
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    for student in ("solved", "mistake-mask-diagonal"):
        nbgrader_course.submit(course, student, write_fixture(BY_ID[student], tmp_path / "in" / student, repo_root))
    db_url = f"sqlite:///{course / nbgrader_course.GRADEBOOK}"
    with Gradebook(db_url, nbgrader_course.COURSE_ID) as gradebook:
        gradebook.update_or_create_assignment("attention", duedate="2026-01-01 00:00:00 UTC")
    (course / "submitted" / "mistake-mask-diagonal" / "attention" / "timestamp.txt").write_text(
        "2026-01-02 00:00:00 UTC")
    nbgrader_course.autograde(course)
    scores = nbgrader_course.read_scores(course)
    assert sum(scores["solved"].values()) == 100
    with Gradebook(db_url, nbgrader_course.COURSE_ID) as gradebook:
        late = gradebook.find_submission("attention", "mistake-mask-diagonal")
        assert late.total_seconds_late > 0 and late.late_submission_penalty == late.score > 0  # penalty: all of it
        # a TA overrides one cell and comments on another, as formgrader does
        grade = gradebook.find_grade("test_causal_mask", NB03, "attention", "solved")
        grade.manual_score = 1.0
        comment = gradebook.find_comment("solution_causal_mask", NB03, "attention", "solved")
        comment.manual_comment = "check the diagonal again"
        gradebook.db.commit()
    nbgrader_course.generate_feedback(course)
    page = (course / "feedback" / "solved" / "attention" / f"{NB03}.html").read_text(encoding="utf-8")
    assert "check the diagonal again" in page
    exported = nbgrader_course.export_grades(course).read_text(encoding="utf-8")
    assert "solved" in exported and ",95.0," in exported  # 100 - 6 + 1 (the override)
    # autograde one student again (--student, --force): the manual override survives, the other is untouched
    nbgrader_course.autograde(course, ["solved"])
    with Gradebook(db_url, nbgrader_course.COURSE_ID) as gradebook:
        assert gradebook.find_grade("test_causal_mask", NB03, "attention", "solved").manual_score == 1.0
        assert gradebook.find_submission("attention", "mistake-mask-diagonal").total_seconds_late > 0


def test_formgraders_autograde_button_grades_one_student_in_the_sandbox(tmp_path, repo_root, monkeypatch, caplog):
    """What formgrader's Autograde button runs: NbGraderAPI.autograde(assignment, student) inside the server's own
    process. Only that student is graded (ahead, too), with the grade attnkit gives, and a hostile classmate's files
    are not touched."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    course = _course(tmp_path / "course", repo_root, Limits(timeout=10))
    for student in ("adversarial-allclose-loop", "mistake-mask-diagonal", "solved"):
        nbgrader_course.submit(course, student, write_fixture(BY_ID[student], tmp_path / "in" / student, repo_root))
    monkeypatch.chdir(course)
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")  # nbgrader runs alembic
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    api = NbGraderAPI(CourseDirectory(config=config), config=Config(config))
    with caplog.at_level(logging.INFO, logger="autograder.integrations.nbgrader_lookahead"):
        outcome = api.autograde("attention", "mistake-mask-diagonal")
    assert [record.getMessage().split(" submitted")[0] for record in caplog.records
            if "ahead of nbgrader" in record.getMessage()] == ["attnkit: grading 4"]  # that student's, no other's
    assert outcome["success"], outcome.get("error", "") + outcome.get("log", "")
    graded = [line for line in outcome["log"].splitlines() if " in the sandbox: " in line]
    assert len(graded) == len(NOTEBOOKS) and all("mistake-mask-diagonal/" in line for line in graded), graded
    assert all("graded ahead" in line for line in graded), graded
    scores = nbgrader_course.read_scores(course)
    assert set(scores) == {"mistake-mask-diagonal"} and sum(scores["mistake-mask-diagonal"].values()) == 90.5
    assert not (course / "autograded" / "adversarial-allclose-loop").exists()
