"""Adversarial submissions graded in ONE class run, among honest students whose grades must not move.

The class: two honest students (a_honest, zz_honest: the solved notebooks, 100 points) and one
student per case of tests/adversarial_cases.py, named after the case (`<what>-<expected outcome>`).
Short limits (2 s per step, 512 MB) keep the run quick.
"""

import builtins
import io
import json
import os
import sys

import pytest
import torch
from adversarial_cases import HIDDEN_FAIL, cases, expected_scores, usable, write_submission
from shell_helpers import notebook_shell, run

import autograder.checking.probing
import autograder.running.runner
from autograder.course.exercises import NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.isolation import wire
from autograder.isolation.limits import Limits

HONEST = ("a_honest", "zz_honest")
LIMITS = Limits(timeout=2.0, memory_mb=512, grace=1.0, budget_factor=5.0)
ALL_CASES = cases()
CASES = [case for case in ALL_CASES if usable(case)]  # graded in the class run


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("adversarial")
    submitted, out = root / "submitted", root / "out"
    source = repo_root / "source" / "attention"
    context = {"repo": str(repo_root), "submitted": str(submitted), "out": str(out)}
    for student in HONEST:
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        for name in NOTEBOOKS:
            (folder / f"{name}.ipynb").write_bytes((source / f"{name}.ipynb").read_bytes())
    for case in CASES:
        write_submission(case, submitted, source, context)
    parent_state = (torch.allclose, torch.Tensor.__eq__, builtins.sum, sys.modules["autograder.running.runner"],
                    autograder.checking.probing.plain, autograder.running.runner.judge_exercise)
    summary = classroom.grade_class(submitted, out, Options(limits=LIMITS))
    return {"summary": summary, "out": out, "parent_state": parent_state,
            "documents": {document["student_id"]: document for document in summary.documents}}


def _notebook(document, name):
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == name)


def _exercise_scores(notebook):
    scores = {}
    for check in notebook["checks"]:
        scores[check["exercise"]] = scores.get(check["exercise"], 0.0) + check["score"]
    return scores


@pytest.mark.slow
def test_every_student_has_a_grade(graded_class):
    documents = graded_class["documents"]
    assert sorted(documents) == sorted([*HONEST, *(case.name for case in CASES)])
    assert all(document["max_score"] == 100 for document in documents.values())


@pytest.mark.parametrize("student", HONEST)
@pytest.mark.slow
def test_honest_students_keep_full_marks_beside_every_attack(graded_class, student):
    document = graded_class["documents"][student]
    assert document["score"] == 100, [c["message"] for nb in document["notebooks"] for c in nb["checks"]
                                      if c["status"] != "passed"]
    csv_row = next(line for line in (graded_class["out"] / "grades.csv").read_text().splitlines()
                   if line.startswith(f"{student},"))
    assert csv_row.split(",")[5] == "100"


@pytest.mark.slow
def test_the_grader_process_is_untouched_by_student_monkeypatching(graded_class):
    allclose, tensor_eq, builtin_sum, runner_module, plain, judge = graded_class["parent_state"]
    assert torch.allclose is allclose and torch.Tensor.__eq__ is tensor_eq and builtins.sum is builtin_sum
    assert sys.modules["autograder.running.runner"] is runner_module
    assert autograder.checking.probing.plain is plain and autograder.running.runner.judge_exercise is judge
    assert "attnkit.solutions" in sys.modules  # the purge happened in the children only


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda case: case.name)
@pytest.mark.slow
def test_case(graded_class, case):
    if not usable(case):
        # Reported as a skip: this kernel lacks the Landlock ABI the outcome depends on.
        pytest.skip(f"needs Landlock ABI >= {case.needs_landlock} to keep student code off the reference")
    document = graded_class["documents"][case.name]
    notebook = _notebook(document, case.notebook)
    scores = _exercise_scores(notebook)
    failed = {check["exercise"]: [] for check in notebook["checks"]}
    for check in notebook["checks"]:
        if check["status"] != "passed":
            failed[check["exercise"]].append(check["message"])
    for exercise, expected in expected_scores(case).items():
        if expected == HIDDEN_FAIL:
            checks = [check for check in notebook["checks"] if check["exercise"] == exercise]
            assert all(check["status"] == "passed" for check in checks if not check["hidden"]), checks
            assert any(check["status"] != "passed" for check in checks if check["hidden"]), checks
            assert scores[exercise] < sum(check["max_score"] for check in checks)
        elif isinstance(expected, tuple):  # ("same_as", baseline student): the patches changed nothing
            baseline = _notebook(graded_class["documents"][expected[1]], case.notebook)
            assert scores[exercise] == _exercise_scores(baseline)[exercise]
            assert scores[exercise] < sum(c["max_score"] for c in notebook["checks"] if c["exercise"] == exercise)
        elif expected == "at_most_full":  # the outcome depends on timing; the class-wide tests hold whatever it is
            assert scores.get(exercise, 0.0) <= sum(c["max_score"] for c in notebook["checks"]
                                                   if c["exercise"] == exercise)
        elif expected == "below_full":
            assert scores[exercise] < sum(c["max_score"] for c in notebook["checks"] if c["exercise"] == exercise)
        else:
            assert scores.get(exercise, 0.0) == expected, (exercise, failed[exercise], notebook["notes"])
    if case.message:
        exercise, text = case.message
        assert any(text in message for message in failed[exercise]), failed[exercise]
    if case.note:
        alternatives = case.note if isinstance(case.note, tuple) else (case.note,)
        assert any(text in note for note in notebook["notes"] for text in alternatives), notebook["notes"]
    if case.reason:
        assert notebook["status"] == "unreadable" and case.reason in notebook["reason"]
        assert all(case.reason in check["message"] for check in notebook["checks"])
    if case.all_notebooks:  # the student's other notebooks are graded on their own
        for other in document["notebooks"]:
            if other["notebook"] != case.notebook:
                assert other["score"] == other["max_score"], other["notebook"]
    else:
        missing = [other for other in document["notebooks"] if other["notebook"] != case.notebook]
        assert all(other["status"] == "missing" and other["score"] == 0 for other in missing)


@pytest.mark.slow
def test_failed_checks_say_why(graded_class):
    for document in graded_class["documents"].values():
        for notebook in document["notebooks"]:
            for check in notebook["checks"]:
                if check["status"] != "passed":
                    assert ": " in check["message"] and len(check["message"]) > 20, check


@pytest.mark.slow
def test_grades_files_were_not_tampered_with(graded_class):
    out = graded_class["out"]
    assert "hacked" not in (out / "grades.csv").read_text()
    assert "hacked" not in (out / "feedback" / "a_honest.html").read_text()


def test_the_channel_never_unpickles_code(tmp_path):
    """A child that writes a pickle with a payload gets a protocol error; the payload never runs."""
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    buffer = io.BytesIO()
    torch.save({"event": "done", "x": Payload()}, buffer)
    frame = wire.HEADER.pack(wire.TORCH_FRAME, len(buffer.getvalue())) + buffer.getvalue()
    with pytest.raises(wire.ProtocolError):
        list(wire.FrameReader().feed(frame))
    assert not marker.exists()
    assert list(wire.FrameReader().feed(wire.encode({"event": "done", "t": torch.ones(2)})))[0]["event"] == "done"


def test_grader_statements_are_dropped_from_cells_and_ipython_syntax_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "from autograder import check\nimport autograder\nx = 2\ncheck('softmax_naive', x)\n" \
             "autograder.grade('softmax_naive', x)\n%time y = x + 1\n!ls\ndisplay(y)"
    with notebook_shell(tmp_path) as (shell, namespace):
        error, printed = run(shell, source)
        refused = shell.take_refused()
    assert error is None and namespace["y"] == 3 and "check" not in namespace and "autograder" not in namespace
    assert printed.endswith("3\n") and refused == ([("!ls", "program")], 0)


@pytest.mark.slow
def test_no_student_makes_the_grader_blame_itself(graded_class):
    """What a child sends is never attnkit's own error: no grader error, no forged note on the instructor's
    console, no advice to grade without the sandbox anywhere."""
    summary = graded_class["summary"]
    assert summary.grader_errors == {} and summary.problems == []
    assert not any("FORGED" in note or "sandbox" in note for note in summary.isolation_notes)
    for document in graded_class["documents"].values():
        for notebook in document["notebooks"]:
            assert notebook["status"] != "grader_error"
            text = json.dumps(notebook)
            assert "attnkit failed" not in text and "sandbox off" not in text, notebook["notebook"]
