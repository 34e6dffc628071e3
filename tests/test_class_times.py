"""devtools/class_times.py, the bench behind the instructor guide's "How long grading takes": a tiny class through
both graders (so the command cannot rot), and a grader stopped at --limit reported as not finished, never scaled."""

import os
import sys
import time

import pytest

from devtools import class_times
from devtools.class_fixtures import CLASS


def test_the_class_is_the_honest_submissions_in_turn():
    honest = [submission.student_id for submission in CLASS if submission.honest]
    assert "solved" in honest and "untouched" in honest and not any(name.startswith("adversarial") for name in honest)
    ids = class_times.student_ids(len(honest) + 2)
    assert ids[0] == "s00000-solved" and ids[len(honest)] == f"s{len(honest):05d}-solved"
    assert [student.split("-", 1)[1] for student in ids[:len(honest)]] == honest


@pytest.mark.slow
def test_a_tiny_class_is_timed_with_both_graders_and_they_agree(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    assert class_times.main(["--students", "2", "--keep", str(tmp_path / "class")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("class_times: 2 students x 4 notebooks = 8 notebooks (in turn: solved, untouched")
    assert lines[1].startswith(f"machine: {class_times.Machine.now().cores} cores, load average ")
    rows = {line.split("  ")[1].strip(): line.split() for line in lines[3:5]}
    assert set(rows) == {"attnkit grade", "nbgrader autograde (sandboxed)"}
    for row in rows.values():
        graded, seconds, per_notebook = row[-8:-5]
        assert row[-2] == "(mean"
        # seconds are printed to 0.1 s, seconds per notebook to 0.001 s
        assert graded == "8/8" and float(seconds) > 0 and float(per_notebook) == pytest.approx(float(seconds) / 8,
                                                                                              abs=0.01)
    assert lines[5] == "totals: attnkit grade and nbgrader autograde agree on every one of the 2 students"
    assert sorted(path.name for path in (tmp_path / "class" / "course" / "submitted").iterdir()) == \
        ["s00000-solved", "s00001-untouched"]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_grader_stopped_at_the_limit_keeps_what_it_graded_and_says_not_finished(tmp_path):
    # a "grader" that grades one notebook, starts a grading child of its own, and never ends
    script = ("import pathlib, subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "pathlib.Path('child.pid').write_text(str(child.pid))\n"
              "pathlib.Path('graded-1').touch()\n"
              "time.sleep(120)\n")
    lines = []
    timing = class_times.run_timed("slow grader", [sys.executable, "-c", script], 4,
                                   class_times.count_files("graded-*", tmp_path), cwd=tmp_path,
                                   log_path=tmp_path / "log", limit=2.0, every=0.5, progress=lines.append)
    assert timing.stopped_at_limit and not timing.finished
    assert timing.done == 1 and timing.per_notebook == timing.seconds
    assert 2.0 <= timing.seconds < 60
    assert timing.row().endswith("NOT FINISHED: stopped at the --limit") and " 1/4 " in timing.row()
    assert lines and lines[-1].startswith("slow grader: ")
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the grader's own children are stopped with it"


def test_a_failed_grader_fails_the_bench_and_a_disagreement_too(tmp_path):
    failed = class_times.run_timed("broken", [sys.executable, "-c", "raise SystemExit(3)"], 4, lambda: 0,
                                   cwd=tmp_path, log_path=tmp_path / "log", every=0.5)
    assert not failed.finished and not failed.stopped_at_limit and failed.per_notebook is None
    assert failed.row().endswith("FAILED")
    machine = class_times.Machine(2, (1.0, 1.0, 1.0))
    assert not class_times.Report(1, machine, (failed,), None).ok
    fine = class_times.Timing("fine", 4, 4, 2.0, True, 1.0, 1.0)
    assert class_times.Report(1, machine, (fine, fine), ()).ok
    disagreeing = class_times.Report(1, machine, (fine, fine), ("s00000-solved",))
    assert not disagreeing.ok and "totals DISAGREE for 1 students: s00000-solved" in disagreeing.text()
