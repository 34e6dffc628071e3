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

Where the time goes: `attnkit grade` runs once more on the same class through devtools.timed_runs, which times its
phases from inside (start-up, imports, waiting for the zygote, intake, the notebooks, the class outputs) and sums
every notebook's stages (autograder.running.timing.StageTimes: intake, cgroup, fork, workspace, sandbox, cells,
probes, exit, judges, pages, records; with each one's share of their total); the two nbgrader runs go through
devtools.timed_runs too, which times each of nbgrader's preprocessors (the sandboxed run's SandboxedExecute is
attnkit's share of it) and leaves the rest as nbgrader's own.

Then, per kind of notebook, the same stages with one worker, set against the cost of executing the notebook's code
alone (a forked child of this warm process runs the code cells and nothing else), all measured here, in the same run,
one notebook at a time; with the CPU seconds it took.
"""

import argparse
import contextlib
import csv
import json
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
from autograder.isolation.grading_shell import shared_shell
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import plan_notebook
from autograder.isolation.own_files import OwnFiles
from autograder.outputs import records
from autograder.running.timing import StageTimes
from devtools.timed_runs import GradePhases, NbgraderPhases

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
    nbgrader_phases: NbgraderPhases | None = None  # plain nbgrader's run, by preprocessor
    sandboxed_phases: NbgraderPhases | None = None  # the sandboxed nbgrader's run, by preprocessor
    grade_phases: GradePhases | None = None  # a second `attnkit grade` of the same class, timed by phase
    grade_phases_seconds: float = 0.0  # that run's wall clock, as this process saw it

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


def _timed_run(subcommand, arguments, times_path, python=sys.executable, **popen):
    """`python -m devtools.timed_runs SUBCOMMAND ... ARGUMENTS`: its wall seconds and the phases it wrote."""
    command = [python, "-m", "devtools.timed_runs", subcommand, "--times", str(times_path)]
    started = time.perf_counter()
    process = subprocess.run([*command, "--launched-at", repr(time.time()), *arguments], capture_output=True,
                             text=True, check=False, **popen)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"timed {subcommand} failed ({process.returncode}):\n{process.stderr[-2000:]}")
    return seconds, json.loads(Path(times_path).read_text(encoding="utf-8"))


def _timed_autograde(course_root, times_path):
    """`nbgrader autograde` of every submission, its preprocessors timed (devtools.timed_runs)."""
    command, env = nbgrader_course.nbgrader_command(course_root, "autograde", nbgrader_course.ASSIGNMENT, "--force")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH", "")]))  # devtools
    python, arguments = command[0], command[3:]  # [python, "-m", "nbgrader", ARGS...]
    seconds, phases = _timed_run("nbgrader", arguments, times_path, python, cwd=course_root, env=env)
    totals = {student: float(sum(scores.values()))
              for student, scores in nbgrader_course.read_scores(course_root).items()}
    return seconds, totals, NbgraderPhases(**phases)


def run_bench(n, workers=None, log=None):
    """Build a course, submit `n` solved copies, time the three graders; returns a BenchResult.

    Then `attnkit grade` once more on the same folder, timed by phase from inside (devtools.timed_runs)."""
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
        nbgrader_seconds, nbgrader_totals, nbgrader_phases = _timed_autograde(in_kernel_root,
                                                                              workdir / "plain-times.json")
        log(f"nbgrader autograde {nbgrader_course.ASSIGNMENT} in attnkit's sandbox ({n * notebooks} notebooks)")
        sandboxed_seconds, sandboxed_totals, sandboxed_phases = _timed_autograde(course_root,
                                                                                 workdir / "sandboxed-times.json")

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

        log(f"attnkit grade again, timed by phase ({n * notebooks} notebooks)")
        times_path = workdir / "grade-times.json"
        arguments = [str(course_root / "submitted"), str(workdir / "attnkit-phases-out")]
        if workers:
            arguments += ["--workers", str(workers)]
        phases_seconds, phases = _timed_run("grade", arguments, times_path, cwd=CHECKOUT)
    return BenchResult(n, notebooks, nbgrader_seconds, sandboxed_seconds, attnkit_seconds, nbgrader_totals,
                       sandboxed_totals, attnkit_totals, workers, nbgrader_phases, sandboxed_phases,
                       GradePhases(**phases), phases_seconds)


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
    writing = _writing_times(one_of_each)
    return [NotebookCost(notebook, alone, graded + writing.total, _with_writing(stages, writing),
                         cpu + writing.total) for notebook, alone, graded, stages, cpu in costs]


def _own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _mean_times(all_times):
    mean = StageTimes()
    for stage in (*StageTimes.stages(), "child_cpu"):
        mean.add(stage, statistics.fmean(getattr(times, stage) for times in all_times))
    return mean


def _with_writing(stages, writing):
    stages.add("pages", writing.pages)
    stages.add("records", writing.records)
    return stages


def _writing_times(results):
    """One student's document, record and feedback page from `results` (one per notebook), built and written: the
    "pages" and "records" seconds of each notebook's share."""
    writing = StageTimes()
    with tempfile.TemporaryDirectory(prefix="attnkit-bench-records-") as out_dir:
        with writing.timing("records"):
            document = records.student_document("bench", ASSIGNMENT, "", DEFAULT_SEED, results)
        records.write_student(out_dir, document, times=writing)
    return StageTimes(pages=writing.pages / len(results), records=writing.records / len(results))


def _timed(action):
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _execute_code_alone(plan):
    """Fork, run the notebook's code cells through IPython's shell as the grading child does, made here once (errors
    ignored, output discarded), wait: no sandbox, no checks at all."""
    shell = shared_shell()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                shell.start_notebook(OwnFiles(Path(plan.path).resolve().parent))
                for step in plan.steps:
                    if step.kind == "cell":
                        shell.run(step.source)
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


def graded_with_peak(command: list[str], name: str = "attnkit grade") -> tuple[float, int]:
    """Run `command`, reading its peak memory while it runs; (wall seconds, peak bytes). Raises on failure, with
    `name` and the command's last words."""
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
            raise RuntimeError(f"{name} failed ({process.returncode}):\n{errors.read()[-2000:].decode()}")
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


STAGE_LABELS = {"intake": "intake", "cgroup": "cgroup", "fork": "fork", "workspace": "wkspace", "sandbox": "sandbox",
                "cells": "cells", "probes": "probes", "exit": "exit", "judges": "judges", "pages": "pages",
                "records": "records"}


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


GRADE_PHASE_NOTES = {
    "start_up": "the interpreter starting",
    "imports": "attnkit's grading package and torch, in the grader (the zygote imports beside it)",
    "zygote": "waiting for the zygote once the grader's own imports are done",
    "intake": "the students' folders opened, their files found and hashed",
    "notebooks": "planned, forked, run, judged, each student's record and page written",
    "class_outputs": "grades.csv, the class report, the manifest",
}


def format_breakdown(result):
    """Where the time goes: the second `attnkit grade` run by phase and per notebook by stage; each nbgrader run by
    preprocessor, with the rest nbgrader's own."""
    lines = []
    phases = result.grade_phases
    if phases is not None:
        in_process = sum(getattr(phases, name) for name in GRADE_PHASE_NOTES)
        lines.append(f"where the time goes, attnkit grade (the same class again, timed by phase from inside: "
                     f"{result.grade_phases_seconds:.1f} s wall)")
        for name, note in GRADE_PHASE_NOTES.items():
            lines.append(f"  {name.replace('_', ' '):<14}{getattr(phases, name):7.2f} s  {note}")
        lines.append(f"  {'exit':<14}{max(0.0, result.grade_phases_seconds - in_process):7.2f} s  "
                     "the rest of the wall clock: the process ending, its zygote stopped")
        count = max(1, phases.notebooks_graded)
        stages = StageTimes(**phases.stages)
        lines.append(f"  per notebook ({phases.notebooks_graded} graded; each stage summed over the run / "
                     f"{phases.notebooks_graded}), milliseconds: the children's stages (workspace to exit) run "
                     f"{result.workers or 'one per core'} at a time, the grader's one at a time")
        lines.append("    " + "".join(f"{STAGE_LABELS[stage]:>9}" for stage in StageTimes.stages())
                     + f"{'total':>9}{'child CPU':>11}")
        lines.append("    " + "".join(f"{getattr(stages, stage) / count * 1000:9.1f}" for stage in StageTimes.stages())
                     + f"{stages.total / count * 1000:9.1f}{stages.child_cpu / count * 1000:11.1f}")
        total = stages.total or 1.0
        lines.append("    " + "".join(f"{getattr(stages, stage) / total:9.1%}" for stage in StageTimes.stages())
                     + f"{'':9}{'':11}  (each stage's share of the total)")
    for label, nbgrader_phases, seconds in (("plain nbgrader", result.nbgrader_phases, result.nbgrader_seconds),
                                            ("sandboxed nbgrader", result.sandboxed_phases,
                                             result.sandboxed_seconds)):
        if nbgrader_phases is None:
            continue
        lines.append(f"where the time goes, {label} ({seconds:.1f} s wall; start-up {nbgrader_phases.start_up:.2f} s, "
                     f"nbgrader's main() {nbgrader_phases.run:.1f} s)")
        ranked = sorted(nbgrader_phases.preprocessors.items(), key=lambda item: -item[1])
        rest = max(0.0, seconds - nbgrader_phases.start_up - nbgrader_phases.run)
        for name, part in [*ranked, (NBGRADERS_OWN, nbgrader_phases.nbgraders_own), (NBGRADERS_EXIT, rest)]:
            lines.append(f"  {name:<44}{part:8.2f} s {_share(part, seconds)}")
    return "\n".join(lines)


NBGRADERS_OWN = "nbgrader's own (imports, gradebook, copies)"
NBGRADERS_EXIT = "the process ending (its kernels or zygote)"


def _share(part, whole):
    return f"({part / whole:6.1%} of the wall clock)" if whole else ""


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
    print(format_breakdown(result), flush=True)
    solved = sorted((CHECKOUT / "source" / ASSIGNMENT).glob("*.ipynb"))
    if solved:
        print(format_costs(measure_notebook_costs(solved)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
