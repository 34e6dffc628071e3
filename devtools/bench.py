"""`python -m devtools.bench [--n N] [--workers W] [--scale]`: plain nbgrader, nbgrader in attnkit's sandbox and
attnkit grade on the same N submissions (default 8), from a checkout (devtools is never installed).

Two throwaway nbgrader courses (autograder.integrations.nbgrader_course), one switched back to nbgrader's own grading in
the student's kernel and one as the course is configured (autograder.integrations.nbgrader_sandbox); the releases are
generated, N students each hand in a copy of the solved source notebooks to both, then
  1. plain `nbgrader autograde attention` grades them all (one command, a Jupyter kernel per notebook),
  2. `nbgrader autograde attention` grades them in attnkit's sandbox (one command, one zygote), and
  3. `attnkit grade submitted/ --out ...` grades the same folder (a fresh process: startup included).
The three wall times, their ratios, and whether the three agree on every student's total are reported.

`--scale` instead grades synthetic classes of 12, 120 and 1,200 notebooks (devtools.class_times' class: the demo's
honest submissions in turn) with `attnkit grade` alone and prints, per size, the seconds, the seconds per notebook and
the grader's peak resident memory (its VmHWM, read while it runs): the cost per notebook must stay flat or fall.

Then, per notebook, attnkit's own cost is broken down by stage (autograder.running.timing.StageTimes: the child's
set-up, cells, probes and exit, the reference's expectations, judging, fingerprints, writing the record) and set
against the cost of executing the notebook's code alone (a forked child of this warm process runs the code cells
and nothing else), all measured here, in the same run, one notebook at a time; with the CPU seconds it took.
"""

import argparse
import contextlib
import csv
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import logs
from autograder.course.assignment import ASSIGNMENT, DEFAULT_SEED
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.integrations import nbgrader_course
from autograder.isolation.cells import compile_cell, display_stand_in
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import plan_notebook
from autograder.outputs import records
from autograder.running.timing import StageTimes

CHECKOUT = Path(__file__).resolve().parents[1]
logger = logging.getLogger("autograder.bench")  # under attnkit's logger: its progress lines go to stderr


@dataclass(frozen=True)
class BenchResult:
    submissions: int
    notebooks: int
    nbgrader_seconds: float  # plain nbgrader, in the students' kernels
    sandboxed_seconds: float  # nbgrader with attnkit's SandboxedExecute
    attnkit_seconds: float
    nbgrader_totals: dict
    sandboxed_totals: dict
    attnkit_totals: dict
    workers: int | None

    @property
    def speedup(self):
        """Plain nbgrader's time over attnkit grade's."""
        return _ratio(self.nbgrader_seconds, self.attnkit_seconds)

    @property
    def sandboxed_speedup(self):
        """Plain nbgrader's time over the sandboxed nbgrader's."""
        return _ratio(self.nbgrader_seconds, self.sandboxed_seconds)

    @property
    def scores_agree(self):
        graders = (self.nbgrader_totals, self.sandboxed_totals, self.attnkit_totals)
        students = set().union(*graders)
        return all(max(totals.get(s, -1.0) for totals in graders) - min(totals.get(s, -1.0) for totals in graders)
                   < 1e-6 for s in students)


def _ratio(slow, fast):
    return slow / fast if fast else float("inf")


def _timed_autograde(course_root):
    started = time.perf_counter()
    nbgrader_course.autograde(course_root)
    seconds = time.perf_counter() - started
    return seconds, {student: float(sum(scores.values()))
                     for student, scores in nbgrader_course.read_scores(course_root).items()}


def run_bench(n, workers=None, log=None):
    """Build a course, submit `n` solved copies, time both graders; returns a BenchResult."""
    log = log or (lambda _line: None)
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-") as workdir:
        workdir = Path(workdir)
        log(f"building two nbgrader courses (in the kernel; sandboxed) with {n} submissions in {workdir}")
        in_kernel_root = nbgrader_course.make_course(workdir / "course-in-kernel", in_kernel=True)
        course_root = nbgrader_course.make_course(workdir / "course")
        for root in (in_kernel_root, course_root):
            nbgrader_course.generate_release(root)
        solved = course_root / "source" / nbgrader_course.ASSIGNMENT
        students = [f"student{index:03d}" for index in range(n)]
        for student in students:
            for root in (in_kernel_root, course_root):
                nbgrader_course.submit(root, student, solved)
        notebooks = len(list(solved.glob("*.ipynb")))

        log(f"plain nbgrader autograde {nbgrader_course.ASSIGNMENT}, in the kernel ({n * notebooks} notebooks)")
        nbgrader_seconds, nbgrader_totals = _timed_autograde(in_kernel_root)
        log(f"nbgrader autograde {nbgrader_course.ASSIGNMENT} in attnkit's sandbox ({n * notebooks} notebooks)")
        sandboxed_seconds, sandboxed_totals = _timed_autograde(course_root)

        log(f"attnkit grade ({n * notebooks} notebooks)")
        out_dir = workdir / "attnkit-out"
        command = [sys.executable, "-m", "autograder.cli", "grade", str(course_root / "submitted"),
                   "--out", str(out_dir)]
        if workers:
            command += ["--workers", str(workers)]
        started = time.perf_counter()
        process = subprocess.run(command, capture_output=True, text=True, check=False)
        attnkit_seconds = time.perf_counter() - started
        if process.returncode != 0:
            raise RuntimeError(f"attnkit grade failed ({process.returncode}):\n{process.stderr[-2000:]}")
        with open(out_dir / "grades.csv", newline="", encoding="utf-8") as stream:
            attnkit_totals = {row["student_id"]: float(row["total"]) for row in csv.DictReader(stream)}
    return BenchResult(n, notebooks, nbgrader_seconds, sandboxed_seconds, attnkit_seconds, nbgrader_totals,
                       sandboxed_totals, attnkit_totals, workers)


@dataclass(frozen=True)
class NotebookCost:
    notebook: str
    code_alone_seconds: float
    attnkit_seconds: float  # wall, per notebook, in a batch
    stages: StageTimes  # mean seconds per stage
    cpu_seconds: float  # grader and grading children together, per notebook

    @property
    def ratio(self):
        return self.attnkit_seconds / self.code_alone_seconds if self.code_alone_seconds else float("inf")


def measure_notebook_costs(notebook_paths, copies=8):
    """Per notebook: its code alone in a forked child vs `grade_notebooks` (one worker), stage by stage.

    Each notebook is graded `copies` times in one call and the time divided, as in a class run: the
    per-run set-up (the reference warm-up, preparing the sandbox) is shared by every notebook. The record is written
    for one student holding one copy of each notebook, and each notebook takes its share of that time.
    """
    options = Options(limits=Limits(workers=1))
    grade_notebooks([NotebookInput("warm-up", path) for path in notebook_paths], options)  # imports, warm-up
    costs, one_of_each = [], []
    for path in notebook_paths:
        plan = plan_notebook(path)
        alone = statistics.median(_timed(lambda plan=plan: _execute_code_alone(plan)) for _ in range(copies))
        cpu_before = _own_cpu()
        started = time.perf_counter()
        results = grade_notebooks([NotebookInput(i, path) for i in range(copies)], options).results
        graded = time.perf_counter() - started
        own_cpu = _own_cpu() - cpu_before
        stages = _mean_times([result.times for result in results])
        costs.append((plan.notebook, alone, graded / copies, stages, own_cpu / copies + stages.child_cpu))
        one_of_each.append(results[0])
    writing = _writing_seconds(one_of_each) / len(one_of_each)
    return [NotebookCost(notebook, alone, graded + writing, _with_writing(stages, writing), cpu + writing)
            for notebook, alone, graded, stages, cpu in costs]


def _own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _mean_times(all_times):
    mean = StageTimes()
    for stage in (*StageTimes.stages(), "child_cpu"):
        mean.add(stage, statistics.fmean(getattr(times, stage) for times in all_times))
    return mean


def _with_writing(stages, seconds):
    stages.add("writing", seconds)
    return stages


def _writing_seconds(results):
    """Seconds to build and write one student's record and feedback page from `results` (one per notebook)."""
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-records-") as out_dir:
        started = time.perf_counter()
        document = records.student_document("bench", ASSIGNMENT, "", DEFAULT_SEED, results)
        records.write_student(out_dir, document)
        return time.perf_counter() - started


def _timed(action):
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _execute_code_alone(plan):
    """Fork, run the notebook's code cells (errors ignored, output discarded), wait: no checks at all."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                namespace = {"__name__": "__main__", "display": display_stand_in}
                for step in plan.steps:
                    if step.kind == "cell":
                        with contextlib.suppress(Exception):
                            exec(compile_cell(step.source, f"<cell {step.index}>"), namespace)  # noqa: S102
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


SCALE_NOTEBOOKS = (12, 120, 1200)
PEAK_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class ScalePoint:
    notebooks: int
    seconds: float
    peak_bytes: int  # the grader's VmHWM, last read before it exited

    @property
    def per_notebook(self) -> float:
        return self.seconds / self.notebooks


def _high_water_mark(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def graded_with_peak(command: list[str]) -> tuple[float, int]:
    """Run `command`, reading its peak memory while it runs; (wall seconds, peak bytes). Raises on failure."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _high_water_mark(process.pid))
            time.sleep(PEAK_POLL_SECONDS)
        seconds = time.perf_counter() - started
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{command[3]} failed ({process.returncode}):\n{errors.read()[-2000:].decode()}")
    return seconds, peak


def run_scale(sizes=SCALE_NOTEBOOKS, log=None):
    """`attnkit grade` on synthetic classes of each size (in notebooks, four per student); a ScalePoint each."""
    from devtools.class_times import build_class

    log = log or (lambda _line: None)
    points = []
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-scale-") as workdir:
        workdir = Path(workdir)
        for notebooks in sizes:
            students = max(1, notebooks // 4)
            course_root = nbgrader_course.make_course(workdir / f"course-{notebooks}")
            nbgrader_course.generate_release(course_root)
            log(f"handing in {students} submissions")
            build_class(course_root, students, nbgrader_course.default_repo_root(), workdir / f"handed-in-{notebooks}")
            log(f"attnkit grade: {students * 4} notebooks")
            out_dir = workdir / f"out-{notebooks}"
            seconds, peak = graded_with_peak([sys.executable, "-m", "autograder.cli", "grade",
                                              str(course_root / "submitted"), "--out", str(out_dir)])
            points.append(ScalePoint(students * 4, seconds, peak))
    return points


def format_scale(points):
    lines = ["attnkit grade on synthetic classes (one worker per core, process startup included)",
             f"  {'notebooks':>9}{'seconds':>10}{'s/notebook':>12}{'grader peak MB':>16}"]
    lines += [f"  {point.notebooks:>9}{point.seconds:>10.1f}{point.per_notebook:>12.3f}"
              f"{point.peak_bytes / 2**20:>16.0f}" for point in points]
    costs = [point.per_notebook for point in points]
    flat = all(later <= earlier * 1.1 for earlier, later in zip(costs, costs[1:], strict=False))
    lines.append(f"  cost per notebook {'flat or falling' if flat else 'GROWING'} with the class "
                 "(each size within 10 % of the one before, or lower)")
    return "\n".join(lines)


STAGE_LABELS = {"start": "start", "cells": "cells", "probes": "probes", "finish": "finish",
                "expectations": "expect", "judging": "judge", "fingerprints": "fprint", "writing": "write"}


def format_costs(costs):
    """A table: per notebook, milliseconds per stage, the total, the code alone, their ratio and the CPU seconds."""
    stages = StageTimes.stages()
    header = f"  {'notebook':<30}" + "".join(f"{STAGE_LABELS[stage]:>8}" for stage in stages)
    header += f"{'attnkit':>9}{'code':>8}{'ratio':>7}{'CPU-s':>7}"
    lines = ["per notebook, one worker, mean of a batch: milliseconds per stage; attnkit (wall) against the notebook's "
             "code alone, and CPU seconds (grader and children)", header]
    for cost in costs:
        row = f"  {cost.notebook:<30}" + "".join(f"{getattr(cost.stages, stage) * 1000:8.1f}" for stage in stages)
        row += (f"{cost.attnkit_seconds * 1000:9.1f}{cost.code_alone_seconds * 1000:8.1f}{cost.ratio:7.2f}"
                f"{cost.cpu_seconds:7.3f}")
        lines.append(row)
    mean_cpu = statistics.fmean(cost.cpu_seconds for cost in costs) if costs else 0.0
    lines.append(f"  mean CPU per notebook: {mean_cpu:.3f} s (target <= 0.2)")
    return "\n".join(lines)


def format_report(result):
    totals = sorted(set(result.attnkit_totals.values()))
    if result.scores_agree:
        agreement = f"yes (every submission: {', '.join(f'{total:g}' for total in totals)} with all three)"
    else:
        agreement = "NO: " + ", ".join(
            f"{student} nbgrader {result.nbgrader_totals.get(student)} sandboxed "
            f"{result.sandboxed_totals.get(student)} attnkit {result.attnkit_totals.get(student)}"
            for student in sorted(set(result.nbgrader_totals) | set(result.attnkit_totals))
            if len({result.nbgrader_totals.get(student), result.sandboxed_totals.get(student),
                    result.attnkit_totals.get(student)}) > 1)
    workers = f"{result.workers} workers" if result.workers else "one worker per core"
    return "\n".join([
        f"attnkit bench: {result.submissions} submissions x {result.notebooks} notebooks "
        "(copies of the solved notebooks)",
        f"  plain nbgrader autograde (kernel):  {result.nbgrader_seconds:8.1f} s",
        f"  nbgrader autograde, sandboxed:      {result.sandboxed_seconds:8.1f} s (one nbgrader, one zygote)",
        f"  attnkit grade:                      {result.attnkit_seconds:8.1f} s ({workers}, process startup included)",
        f"  speed-up, sandboxed nbgrader:       {result.sandboxed_speedup:8.1f}x (plain nbgrader / sandboxed)",
        f"  speed-up, attnkit grade:            {result.speedup:8.1f}x (plain nbgrader / attnkit grade)",
        f"  scores agree:       {agreement}",
    ])


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its report, then the per-notebook costs of the solved source notebooks."""
    parser = argparse.ArgumentParser(prog="python -m devtools.bench", description="plain nbgrader, nbgrader in "
                                     "attnkit's sandbox and attnkit grade on the same N submissions, timed")
    parser.add_argument("--n", type=int, default=8, help="number of generated submissions (default 8)")
    parser.add_argument("--workers", type=int, default=None, help="attnkit workers (default: one per core)")
    parser.add_argument("--scale", action="store_true", help="only attnkit grade on synthetic classes of "
                        f"{', '.join(map(str, SCALE_NOTEBOOKS))} notebooks: time per notebook and the grader's peak "
                        "memory")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    logs.configure()
    if args.scale:
        print(format_scale(run_scale(log=logger.info)), flush=True)
        return 0
    result = run_bench(args.n, workers=args.workers, log=logger.info)
    print(format_report(result), flush=True)
    solved = sorted((CHECKOUT / "source" / ASSIGNMENT).glob("*.ipynb"))
    if solved:
        print(format_costs(measure_notebook_costs(solved)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
