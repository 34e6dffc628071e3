"""`attnkit check` and `attnkit grade`: report schema, scores, exports, resume, progress, exit statuses."""

import csv
import dataclasses
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from autograder import cli
from autograder.course import catalog
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading.classroom import grade_class
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.grading.progress import Progress
from autograder.grading.wrong_outputs import with_wrong_outputs
from autograder.integrations import nbgrader_course
from autograder.isolation import sandbox, supervisor, wire
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.isolation.sandbox import landlock_abi
from autograder.isolation.supervisor import Job, Outcome
from autograder.running.runner import DEFAULT_SEED, judge_exercise
from devtools.bench import format_breakdown, format_report, run_bench

CHECK_KEYS = {"id", "score", "max_score", "status", "misconception", "message"}
FAST = ["--timeout", "10", "--memory", "1024"]
WRONG_SOFTMAX = "def softmax_naive(x):\n    return x / x.sum()\n"


@pytest.fixture(scope="module")
def solved_dir(repo_root):
    return repo_root / "source" / "attention"


@pytest.fixture(scope="module")
def release_dir(repo_root, tmp_path_factory):
    """The committed student version; generated with nbgrader when it is not there yet."""
    committed = repo_root / "release" / "attention"
    if all((committed / f"{name}.ipynb").is_file() for name in NOTEBOOKS):
        return committed
    course_root = nbgrader_course.make_course(tmp_path_factory.mktemp("release") / "course", repo_root)
    return nbgrader_course.generate_release(course_root)


def _hand_in(submitted, student, notebooks):
    """notebooks: {name: bytes}"""
    folder = submitted / student / "attention"
    folder.mkdir(parents=True)
    for name, content in notebooks.items():
        (folder / f"{name}.ipynb").write_bytes(content)


def _with_wrong_softmax(solved_dir):
    notebook = json.loads((solved_dir / f"{NOTEBOOKS[0]}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
            cell["source"] = WRONG_SOFTMAX
    return json.dumps(notebook).encode()


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, solved_dir, release_dir):
    root = tmp_path_factory.mktemp("class")
    submitted, out = root / "submitted", root / "out"
    solved = {name: (solved_dir / f"{name}.ipynb").read_bytes() for name in NOTEBOOKS}
    _hand_in(submitted, "solved", solved)
    _hand_in(submitted, "untouched", {name: (release_dir / f"{name}.ipynb").read_bytes() for name in NOTEBOOKS})
    _hand_in(submitted, "partial", {NOTEBOOKS[0]: solved[NOTEBOOKS[0]], NOTEBOOKS[1]: b"not json"})
    _hand_in(submitted, "wrong", {**solved, NOTEBOOKS[0]: _with_wrong_softmax(solved_dir)})
    (submitted / "nothing").mkdir()
    code = cli.main(["grade", str(submitted), "--out", str(out), *FAST])
    assert code == 0
    return {"submitted": submitted, "out": out}


def _csv_rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as stream:
        return {row["student_id"]: row for row in csv.DictReader(stream)}


# --- attnkit check ------------------------------------------------------------------------------


def test_check_json_solved_notebooks_get_full_marks(solved_dir, capsys):
    paths = [str(solved_dir / f"{name}.ipynb") for name in NOTEBOOKS]
    assert cli.main(["check", *paths, "--json", *FAST]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"score", "max_score", "notebooks"}
    assert report["score"] == report["max_score"] == 100
    assert [notebook["path"] for notebook in report["notebooks"]] == paths
    for notebook in report["notebooks"]:
        assert {"path", "score", "max_score", "checks"} <= set(notebook)
        assert notebook["score"] == sum(check["score"] for check in notebook["checks"])
        for check in notebook["checks"]:
            assert set(check) == CHECK_KEYS
            assert check["status"] == "passed" and check["misconception"] is None
    ids = [check["id"] for notebook in report["notebooks"] for check in notebook["checks"]]
    assert sorted(ids) == sorted(check.id for check in catalog.GRADED_CHECKS)  # hidden checks, no preview


def test_check_release_notebooks_score_zero_with_one_line_per_failed_check(release_dir, capsys):
    paths = [str(release_dir / f"{name}.ipynb") for name in NOTEBOOKS]
    assert cli.main(["check", *paths, *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    failed = [line for line in lines if line.startswith("  ✘ [")]
    assert len(failed) == len(catalog.GRADED_CHECKS)
    assert all(re.match(r"  ✘ \[[\w.]+\] .+: .+", line) for line in failed)
    assert "total: 0/100" in lines
    assert sum(line.endswith("/18") or line.endswith("/25") or line.endswith("/39") for line in lines) == 4


def test_check_cannot_grade_exits_2_with_one_line(tmp_path, capsys):
    text_file = tmp_path / "notes.ipynb"
    text_file.write_text("just text")
    unknown = tmp_path / "homework.ipynb"
    unknown.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    for path, reason in ((tmp_path / "missing.ipynb", "no such file"), (text_file, "not a notebook"),
                         (unknown, "cannot tell which notebook")):
        assert cli.main(["check", str(path)]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and reason in error, error


@pytest.mark.slow
def test_console_script_entry_point(solved_dir):
    command = [sys.executable, "-m", "autograder.cli", "check", str(solved_dir / f"{NOTEBOOKS[0]}.ipynb"), "--json"]
    process = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["score"] == 18
    if landlock_abi() >= 6:
        assert process.stderr == ""  # a fully confined run has nothing to report


# --- attnkit grade ------------------------------------------------------------------------------


@pytest.mark.slow
def test_grades_csv_has_a_row_per_student_with_notebook_scores(graded_class):
    rows = _csv_rows(graded_class["out"])
    assert set(rows) == {"solved", "untouched", "partial", "wrong", "nothing"}
    assert list(next(iter(rows.values()))) == ["student_id", *NOTEBOOKS, "total", "max_score", "problems"]
    assert rows["solved"]["total"] == "100" and rows["solved"]["problems"] == ""
    assert rows["untouched"]["total"] == "0"
    assert rows["partial"][NOTEBOOKS[0]] == "18" and rows["partial"]["total"] == "18"
    assert "not a notebook" in rows["partial"]["problems"] and "not submitted" in rows["partial"]["problems"]
    assert rows["nothing"]["total"] == "0" and "no attention/ folder" in rows["nothing"]["problems"]
    assert 82 <= float(rows["wrong"]["total"]) < 100


@pytest.mark.slow
def test_solved_notebooks_run_every_cell_without_a_note(graded_class):
    """Every cell of the solved notebooks runs in the grading child, the grader's own calls (check, check_all,
    grade) dropped: no 'cell N: ...' note."""
    document = json.loads((graded_class["out"] / "students" / "solved.json").read_text())
    notes = [note for notebook in document["notebooks"] for note in notebook["notes"]]
    assert not [note for note in notes if note.startswith("cell")], notes


@pytest.mark.slow
def test_student_json_records_every_check(graded_class):
    document = json.loads((graded_class["out"] / "students" / "partial.json").read_text())
    assert document["student_id"] == "partial" and document["max_score"] == 100
    statuses = {notebook["notebook"]: notebook["status"] for notebook in document["notebooks"]}
    assert statuses == {NOTEBOOKS[0]: "graded", NOTEBOOKS[1]: "unreadable", NOTEBOOKS[2]: "missing",
                        NOTEBOOKS[3]: "missing"}
    checks = [check for notebook in document["notebooks"] for check in notebook["checks"]]
    assert sorted(check["id"] for check in checks) == sorted(check.id for check in catalog.GRADED_CHECKS)


@pytest.mark.slow
def test_gradescope_results(graded_class):
    results = json.loads((graded_class["out"] / "gradescope" / "wrong" / "results.json").read_text())
    assert results["score"] == sum(test["score"] for test in results["tests"])
    hidden_ids = {check.id for check in catalog.CHECKS if check.hidden}
    for test in results["tests"]:
        assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(test)
        assert test["status"] in {"passed", "failed"}
        check_id = test["name"].rsplit(" · ", 1)[-1]
        assert test["visibility"] == ("after_published" if check_id in hidden_ids else "visible")
    assert any(test["status"] == "failed" for test in results["tests"])


@pytest.mark.slow
def test_feedback_html_reveals_nothing_of_hidden_checks_but_their_messages(graded_class):
    page = (graded_class["out"] / "feedback" / "wrong.html").read_text()
    document = json.loads((graded_class["out"] / "students" / "wrong.json").read_text())
    hidden_failed = [check for notebook in document["notebooks"] for check in notebook["checks"]
                     if check["hidden"] and check["status"] != "passed"]
    public_failed = [check for notebook in document["notebooks"] for check in notebook["checks"]
                     if not check["hidden"] and check["status"] != "passed"]
    assert hidden_failed and public_failed
    # What lost points leads the page (a block each); what passed is folded into a table (a row each).
    rows = re.findall(r"<tr class=\"\w+\">.*?</tr>|<div class=\"lost\">.*?</div>", page, flags=re.S)
    hidden_rows = [row for row in rows if "graded check (hidden)" in row]
    assert len(hidden_rows) == sum(check["hidden"] for nb in document["notebooks"] for check in nb["checks"])
    for row in hidden_rows:
        assert "<pre>" not in row and "expected" not in row.lower().replace("unexpected", "")
        assert not re.search(r"\d\.\d{3}", row), row  # no tensor values
        assert "<img" not in row  # no picture
    assert "<pre>" in page  # a public failure does show its details


@pytest.mark.slow
def test_resume_grades_only_what_is_missing_or_changed(graded_class, solved_dir, tmp_path):
    # A copy of the graded class: this test changes it, the other tests read the shared one in any order.
    submitted, out = tmp_path / "submitted", tmp_path / "out"
    shutil.copytree(graded_class["submitted"], submitted)
    shutil.copytree(graded_class["out"], out)
    options = Options(limits=Limits(timeout=10, memory_mb=1024))
    stamps = {path.stem: path.stat().st_mtime_ns for path in (out / "students").glob("*.json")}
    again = grade_class(submitted, out, options)
    assert again.graded == [] and sorted(again.skipped) == sorted(stamps)
    assert {path.stem: path.stat().st_mtime_ns for path in (out / "students").glob("*.json")} == stamps

    (out / "students" / "untouched.json").unlink()  # as if the run was interrupted before this student
    shutil.copy(solved_dir / f"{NOTEBOOKS[2]}.ipynb", submitted / "partial" / "attention")  # a late notebook
    resumed = grade_class(submitted, out, options)
    assert sorted(resumed.graded) == ["partial", "untouched"]
    rows = _csv_rows(out)
    assert rows["partial"]["total"] == "43" and rows["untouched"]["total"] == "0" and rows["solved"]["total"] == "100"
    assert not list((out / "students").glob(".*.tmp"))  # atomic writes leave no temporary files


def test_grade_prints_a_summary_line_and_no_progress_bar_off_a_terminal(tmp_path, capsys, solved_dir):
    _hand_in(tmp_path / "submitted", "only", {NOTEBOOKS[2]: (solved_dir / f"{NOTEBOOKS[2]}.ipynb").read_bytes()})
    assert cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), *FAST]) == 0
    error = capsys.readouterr().err
    assert "\r" not in error
    assert error.count("\n") == 1 and "1 students (1 graded" in error


def test_grade_refuses_a_missing_folder(tmp_path, capsys):
    assert cli.main(["grade", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_progress_bar_only_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = Progress(stream)
        progress.start(2)
        progress.advance("alice")
        progress.advance("bob")
        progress.finish()
    assert "\r" in terminal.getvalue() and "2/2 students" in terminal.getvalue()
    assert pipe.getvalue() == ""


def test_isolation_notes_say_what_this_kernel_lacks(solved_dir):
    """With Landlock ABI >= 6 nothing is left unconfined; without it grading still works and says so."""
    inputs = [NotebookInput("01", solved_dir / f"{NOTEBOOKS[0]}.ipynb")]
    grading = grade_notebooks(inputs, Options(limits=Limits(timeout=10, memory_mb=1024)))
    assert grading.results[0].score == 18
    if landlock_abi() >= 6:
        assert grading.isolation_notes == []
    else:
        assert any("Landlock" in note for note in grading.isolation_notes)


@pytest.mark.slow
def test_bench_runs_plain_and_sandboxed_nbgrader_and_attnkit_on_the_same_submissions_and_they_agree():
    result = run_bench(1)
    assert result.nbgrader_totals == result.sandboxed_totals == result.attnkit_totals == {"student000": 100.0}
    assert result.scores_agree and min(result.nbgrader_seconds, result.sandboxed_seconds, result.attnkit_seconds) > 0
    report = format_report(result)
    assert "speed-up, sandboxed nbgrader" in report and "scores agree:       yes" in report
    assert f"{result.sandboxed_speedup:8.1f}x" in report
    # where the time went: the second attnkit run by phase, both nbgrader runs by preprocessor
    assert result.grade_phases.notebooks_graded == 4 and result.grade_phases_seconds > result.grade_phases.notebooks
    assert "Execute" in result.nbgrader_phases.preprocessors
    assert "SandboxedExecute" in result.sandboxed_phases.preprocessors
    breakdown = format_breakdown(result)
    assert "where the time goes, plain nbgrader" in breakdown and "where the time goes, sandboxed nbgrader" in breakdown


# --- how a child's end is told: re-runs, the total time, the grader's own errors --------------------


NB01_EXERCISES = tuple(exercise.id for exercise in EXERCISES if exercise.notebook == NOTEBOOKS[0])
SETTLE_LIMITS = Limits(timeout=30, budget_factor=4, max_attempts=4)
SEGFAULT = signal.SIGSEGV.value  # a wait status: killed by SIGSEGV


def _attempt(step, attempts=1, seconds_left=100.0, recorded=()):
    """An attempt of an 01 notebook as the parent sees it once the child is gone (no process behind it)."""
    plan = NotebookPlan(Path("alice/01.ipynb"), NOTEBOOKS[0], (), NB01_EXERCISES, "")
    state = supervisor._JobState(Job("key", plan, 0), Outcome("key", plan), time.monotonic() + seconds_left)
    state.outcome.attempts = attempts
    for exercise_id in recorded:
        state.outcome.records[exercise_id] = {}
    return supervisor._Attempt(state, pid=-1, fd=-1, workdir="", started=0.0, step=step, hello_seen=True)


def test_a_crashed_cell_is_skipped_and_the_notebook_re_run_while_attempts_and_time_remain():
    attempt = _attempt(("cell", 3))
    assert supervisor._settle(attempt, SEGFAULT, SETTLE_LIMITS) is True
    assert attempt.kill_kind == supervisor.CRASH and attempt.job.skip_cells == {3}
    assert attempt.job.outcome.notes == ["cell 3: crashed (segmentation fault); the notebook was re-run without it"]


@pytest.mark.parametrize(("attempts", "seconds_left", "recorded", "why"), [
    (4, 100.0, (), "(it had already been run 4 times)"),
    (1, -1.0, (), "(its total time of 120 s was used up)"),
    (1, 100.0, NB01_EXERCISES, ""),  # every exercise has its result: nothing to re-run for
], ids=["max_attempts", "out_of_time", "nothing_missing"])
def test_a_note_never_claims_a_re_run_that_did_not_happen(attempts, seconds_left, recorded, why):
    attempt = _attempt(("cell", 3), attempts, seconds_left, recorded)
    assert supervisor._settle(attempt, SEGFAULT, SETTLE_LIMITS) is False
    [note] = attempt.job.outcome.notes
    assert note.startswith("cell 3: crashed (segmentation fault)") and "re-run" not in note
    assert note.endswith(why) if why else note == "cell 3: crashed (segmentation fault)"


def test_the_kill_kind_not_the_wording_decides_the_timeout_message():
    timed_out = _attempt(("exercise", NB01_EXERCISES[0]))
    timed_out.kill_kind, timed_out.kill_reason = supervisor.TIMEOUT, "ran past the 30 s limit and did not stop"
    assert supervisor._settle(timed_out, signal.SIGKILL.value, SETTLE_LIMITS) is True
    for [record] in timed_out.job.outcome.records[NB01_EXERCISES[0]].values():
        assert record["error"]["key"] == "error.timeout" and record["error"]["fields"] == {"seconds": 30}

    malformed = _attempt(("exercise", NB01_EXERCISES[0]))
    malformed.kill_kind, malformed.kill_reason = supervisor.PROTOCOL, "sent malformed data (ran past the end)"
    supervisor._settle(malformed, signal.SIGKILL.value, SETTLE_LIMITS)
    for [record] in malformed.job.outcome.records[NB01_EXERCISES[0]].values():
        assert record["error"]["key"] == "error.no_result"


def test_an_exercise_stopped_by_the_notebook_budget_names_the_budget_not_the_step_limit():
    attempt = _attempt(("exercise", NB01_EXERCISES[0]), seconds_left=-1.0)
    attempt.kill_kind, attempt.kill_reason = supervisor.BUDGET, "the notebook ran past its total time of 120 s"
    assert supervisor._settle(attempt, signal.SIGKILL.value, SETTLE_LIMITS) is False
    for data in attempt.job.outcome.records[NB01_EXERCISES[0]].values():
        assert data == [{"error": {"type": "ProbeError", "key": "error.timeout", "fields": {"seconds": 120},
                                   "message": "", "line": ""}}]
    assert attempt.job.outcome.notes == [f"checking {NB01_EXERCISES[0]}: the notebook ran past its total time "
                                         "of 120 s; the rest of the notebook was not run"]


def _logged(caplog):
    """What the grader logged: `attnkit` prints it on stderr (tests/test_logging.py), a library call logs it."""
    return "\n".join(record.getMessage() for record in caplog.records)


def test_a_grader_error_event_is_the_student_s_code_stopping_the_child(caplog):
    """Student code can write any frame on the channel: a "grader_error" is not an event the child may send, so it
    is a protocol error (the student's code stopped the child), and none of its text reaches the log."""
    trace = "Traceback (most recent call last):\n  File \"guards.py\", line 3, in apply\nRuntimeError: boom"
    attempt = _attempt(("exercise", NB01_EXERCISES[1]), recorded=NB01_EXERCISES[:1])
    reader = wire.FrameReader()
    with pytest.raises(wire.ProtocolError, match="grader_error"):
        for event in reader.feed(wire.encode({"event": "grader_error", "traceback": trace})):
            supervisor._handle(attempt, event, SETTLE_LIMITS)
    attempt.kill_kind, attempt.kill_reason = supervisor.PROTOCOL, "stopped the grading process: ..."  # as _read does
    assert supervisor._settle(attempt, signal.SIGKILL.value, SETTLE_LIMITS) is True  # re-run without the exercise
    outcome = attempt.job.outcome
    assert outcome.notes == [f"checking {NB01_EXERCISES[1]}: your code stopped the grading process: ...; "
                             "the notebook was re-run without it"]
    assert not outcome.grader_failure and "boom" not in _logged(caplog)


def test_a_child_stopped_between_steps_by_the_student_goes_without_its_latest_cell():
    """Between steps only the grader's code runs, beside what a cell left running (a thread writing on the channel):
    the latest cell is skipped on the re-run, as if it had crashed itself."""
    attempt = _attempt(None)
    attempt.last_cell = 5
    attempt.kill_kind, attempt.kill_reason = supervisor.PROTOCOL, "stopped the grading process: ..."
    assert supervisor._settle(attempt, signal.SIGKILL.value, SETTLE_LIMITS) is True
    assert attempt.job.skip_cells == {5}
    assert attempt.job.outcome.notes == ["cell 5: your code stopped the grading process: ...; the notebook was re-run "
                                         "without it"]


FORGED_RECORDS = [
    {"error": "x"}, {"error": {"type": 5, "key": 7, "fields": "f", "message": 3}}, {"error": {"key": "error.timeout"}},
    {"output": "x"}, {"output": torch.zeros(0)}, {"output": torch.zeros(3, dtype=torch.bool)}, {},
    {"calls": 5, "output": torch.zeros(2)}, {"out": torch.full((2, 3), float("nan")), "state": {"W_query.weight": "x"}},
    {"before": 1, "after": 2}, {"output": torch.zeros(2, 2, dtype=torch.complex64), "input_gradient": torch.zeros(7)},
    {"output": (1, 2), "state": [], "weights_seen": "x", "matmuls": "a", "builtins": 3},
]


@pytest.mark.parametrize("forged", FORGED_RECORDS, ids=range(len(FORGED_RECORDS)))
def test_records_a_child_forges_are_judged_as_the_student_s_never_a_grader_error(forged):
    """Student code can write a whole "exercise" frame for the exercise being probed: whatever its records hold,
    every check is judged (a failure or an error of that check), and judging never raises."""
    for exercise in EXERCISES:
        records = supervisor._valid_records(exercise.id, {check.id: [forged]
                                                          for check in catalog.checks_of(exercise.id)})
        results = judge_exercise(exercise.id, records, seed=DEFAULT_SEED, lang="en")
        with_wrong_outputs(exercise.id, results, records, DEFAULT_SEED)
        assert [result.id for result in results] == [check.id for check in catalog.checks_of(exercise.id)]


@pytest.mark.parametrize("event", [
    {"event": "hello", "notes": ["FORGED"], "workspace": {}},  # a second hello
    {"event": "cell", "index": 4, "error": None},  # a cell it did not start
    {"event": "exercise", "exercise": NB01_EXERCISES[2], "records": {}},  # an exercise it did not start
    {"event": "start", "kind": "cell", "index": 5},  # a step inside a step
    {"event": "status", "text": "hi"},  # a kind the child never sends
])
def test_events_out_of_order_or_unknown_are_protocol_errors(event):
    attempt = _attempt(("cell", 3))
    with pytest.raises(wire.ProtocolError):
        supervisor._handle(attempt, event, SETTLE_LIMITS)
    assert attempt.job.outcome.isolation_notes == set()


def test_a_child_that_stops_before_its_hello_is_the_grader_s_failure(caplog):
    """Before its hello no student code has run: only the grader's set-up did. Said in the grader's words."""
    attempt = _attempt(None)
    attempt.hello_seen = False
    assert supervisor._settle(attempt, 70 << 8, SETTLE_LIMITS) is False
    assert "before running any of the notebook's code" in attempt.job.outcome.grader_failure
    assert "exit status 70" in attempt.job.outcome.grader_failure
    assert f"attnkit: internal error while grading {Path('alice/01.ipynb')}" in _logged(caplog)


def test_a_failure_in_the_child_s_own_set_up_is_reported_as_the_grader_s(solved_dir, monkeypatch, caplog):
    """A confinement the child's own code cannot apply: grader code failing in the child before any cell."""
    prepare = sandbox.prepare

    def broken_prepare(*args, **kwargs):
        return dataclasses.replace(prepare(*args, **kwargs), cpu_seconds="not a number")

    monkeypatch.setattr(sandbox, "prepare", broken_prepare)
    path = solved_dir / f"{NOTEBOOKS[0]}.ipynb"
    grading = grade_notebooks([NotebookInput("01", path)], Options(limits=Limits(timeout=10, memory_mb=1024)))
    [result] = grading.results
    assert result.score == 0 and result.status == "grader_error"
    assert "before running any of the notebook's code" in result.reason
    assert f"attnkit: internal error while grading {path}" in _logged(caplog)
    assert "invalid literal" not in _logged(caplog)  # the child's own text never reaches the log


def _code_cell(source):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


@pytest.mark.slow
def test_a_notebook_out_of_total_time_is_not_said_to_be_re_run(solved_dir, tmp_path):
    """The notebook's 5 s run out while a step, with 8 s of its own, still runs: killed in a cell, or in an exercise.

    By construction the total time trips first on any machine: each step could run 8 s, and nothing before the
    step that hangs takes more than a second.
    """
    solved = json.loads((solved_dir / f"{NOTEBOOKS[0]}.ipynb").read_text(encoding="utf-8"))
    slow_cells = dict(solved, cells=[_code_cell("pass"), _code_cell("import time\ntime.sleep(60)")] + solved["cells"])
    slow_probe = json.loads(json.dumps(solved))
    for cell in slow_probe["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
            cell["source"] = "import time\n\ndef softmax_naive(x):\n    time.sleep(60)\n    return x\n"
    inputs = []
    for name, notebook in (("slow_cells", slow_cells), ("slow_probe", slow_probe)):
        (tmp_path / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        inputs.append(NotebookInput(name, tmp_path / f"{name}.ipynb", NOTEBOOKS[0]))
    limits = Limits(timeout=8, memory_mb=1024, grace=1, budget_factor=0.625, workers=2)
    cells, probe = grade_notebooks(inputs, Options(limits=limits, lang="en")).results

    assert cells.score == 0
    assert "cell 1: the notebook ran past its total time of 5 s; the rest of the notebook was not run" in cells.notes
    assert probe.notes == ["checking softmax_naive: the notebook ran past its total time of 5 s; "
                           "the rest of the notebook was not run"]
    for result in (cells, probe):
        assert not any("re-run" in note for note in result.notes), result.notes
    naive = [check for check in probe.checks if check.exercise == "softmax_naive"]
    assert naive and all("took too long (over 5 s)" in check.message for check in naive), naive


@pytest.mark.slow
def test_the_summary_line_also_comes_when_run_as_a_module(tmp_path, solved_dir):
    """`python -m autograder.cli` (as the demo and the bench run it) logs under the same name as `attnkit`."""
    _hand_in(tmp_path / "submitted", "only", {NOTEBOOKS[2]: (solved_dir / f"{NOTEBOOKS[2]}.ipynb").read_bytes()})
    command = [sys.executable, "-m", "autograder.cli", "grade", str(tmp_path / "submitted"), "--out",
               str(tmp_path / "out"), *FAST]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert "attnkit grade: 1 students (1 graded" in run.stderr
