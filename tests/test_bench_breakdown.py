"""Where the bench says the time goes (devtools.timed_runs, devtools.bench.format_breakdown): every stage of a
notebook is timed, the phases of a class run add up to no more than its wall clock, nbgrader's preprocessors are
timed without counting one twice, and the report names each part."""

import json
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from nbconvert.preprocessors import Preprocessor

from autograder.course.assignment import ASSIGNMENT
from autograder.running.timing import StageTimes
from devtools import timed_runs
from devtools.bench import BenchResult, format_breakdown
from devtools.timed_runs import GradePhases, NbgraderPhases

CHECKOUT = Path(__file__).resolve().parents[1]


class _Clock:
    """A clock the fake preprocessors move: the timings below are exact, whatever the machine's load."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_each_preprocessor_is_timed_without_the_ones_it_calls(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(timed_runs, "time", clock)

    class Inner(Preprocessor):
        def preprocess(self, nb, resources):
            clock.now += 3.0
            return nb, resources

    class Outer(Preprocessor):
        def preprocess(self, nb, resources):
            clock.now += 2.0
            nb, resources = Inner(enabled=True)(nb, resources)
            clock.now += 1.0
            return nb, resources

    applied = Preprocessor.__call__
    with timed_runs.timed_preprocessors() as seconds:
        Outer(enabled=True)({}, {})
        Inner(enabled=True)({}, {})
    assert seconds == {"Outer": 3.0, "Inner": 6.0}
    assert Preprocessor.__call__ is applied  # put back


def test_an_nbgrader_run_counts_the_import_of_nbgraders_app(monkeypatch, tmp_path):
    """nbgrader's imports are its own time, not the process ending's (the rest of the wall clock after its run)."""
    clock = _Clock()
    monkeypatch.setattr(timed_runs, "time", clock)
    monkeypatch.setattr(sys, "argv", sys.argv)

    def main():
        clock.now += 1.0
        raise SystemExit(0)

    class SlowToImport(types.ModuleType):
        def __getattr__(self, name):  # `from ... import main`: the module's import, 5 s on the clock
            if name != "main":
                raise AttributeError(name)
            clock.now += 5.0
            return main

    monkeypatch.setitem(sys.modules, "nbgrader.apps.nbgraderapp", SlowToImport("nbgrader.apps.nbgraderapp"))
    times = tmp_path / "times.json"
    timed_runs.main(["nbgrader", "--times", str(times), "autograde", "attention"])
    assert NbgraderPhases(**json.loads(times.read_text(encoding="utf-8"))).run == 6.0


@pytest.mark.slow
def test_a_timed_class_run_times_every_stage_and_its_phases_fit_its_wall_clock(tmp_path):
    submitted = tmp_path / "submitted"
    shutil.copytree(CHECKOUT / "source" / ASSIGNMENT, submitted / "student1" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    times = tmp_path / "times.json"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "devtools.timed_runs", "grade", "--times", str(times),
                    "--launched-at", repr(time.time()), str(submitted), str(tmp_path / "out")],
                   cwd=CHECKOUT, check=True, capture_output=True)
    wall = time.perf_counter() - started
    phases = GradePhases(**json.loads(times.read_text(encoding="utf-8")))
    assert phases.notebooks_graded == 4
    stages = StageTimes(**phases.stages)
    assert all(getattr(stages, stage) > 0 for stage in StageTimes.stages()), stages
    assert stages.child_cpu > 0
    in_process = (phases.start_up, phases.imports, phases.zygote, phases.intake, phases.notebooks,
                  phases.class_outputs)
    assert all(seconds >= 0 for seconds in in_process) and sum(in_process) <= wall
    assert (tmp_path / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[-3] == "100"


def test_the_breakdown_names_each_phase_stage_and_preprocessor_with_its_share():
    stages = StageTimes(intake=0.048, cgroup=0.48, fork=0.96, workspace=0.096, sandbox=0.48, cells=2.4, probes=4.8,
                        exit=0.48, judges=1.2, pages=0.096, records=0.048, child_cpu=9.6)
    grade = GradePhases(0.05, 1.6, 0.1, 0.02, 8.0, 0.7, 48, {name: getattr(stages, name)
                                                               for name in (*StageTimes.stages(), "child_cpu")})
    sandboxed = NbgraderPhases(0.05, 19.0, {"SandboxedExecute": 9.5, "SaveAutoGrades": 2.0})
    result = BenchResult(12, 4, 160.0, 20.0, 10.0, {}, {}, {}, None, None, sandboxed, grade, 11.0)
    report = format_breakdown(result)
    for phase in ("start up", "imports", "zygote", "intake", "notebooks", "class outputs", "exit"):
        assert f"\n  {phase} " in report
    header, row, shares = report.splitlines()[9:12]
    assert header.split() == ["intake", "cgroup", "fork", "wkspace", "sandbox", "cells", "probes", "exit", "judges",
                              "pages", "records", "total", "child", "CPU"]
    assert row.split() == ["1.0", "10.0", "20.0", "2.0", "10.0", "50.0", "100.0", "10.0", "25.0", "2.0", "1.0",
                           "231.0", "200.0"]
    assert shares.split()[:4] == ["0.4%", "4.3%", "8.7%", "0.9%"]  # of the 231 ms
    assert shares.endswith("(each stage's share of the total)")
    assert "  exit             0.53 s" in report  # 11.0 s wall less the 10.47 s of phases inside
    assert "SandboxedExecute                                9.50 s ( 47.5% of the wall clock)" in report
    assert "nbgrader's own (imports, gradebook, copies)     7.50 s" in report
    assert "plain nbgrader" not in report  # not timed in this result: not shown
