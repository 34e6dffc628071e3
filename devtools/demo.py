"""`python -m devtools.demo` (`make demo`): the whole course workflow, end to end, on a bundled class.

In a new directory (a fresh one under the system's temporary directory, printed and kept; or
`--keep DIR`), never inside the checkout:

  1. builds an nbgrader course and generates the release from source/ (`nbgrader generate_assignment`);
  2. collects the class of `devtools.class_fixtures`, built from the source notebooks right now: the
     solved notebooks, the untouched release, six submissions with a typical mistake each and two
     adversarial ones (torch.allclose patched + an endless loop; solutions/ read from disk + os._exit);
  3. grades them with `attnkit grade` (a short --timeout for the looping one), with `nbgrader autograde` as the
     course is configured (in attnkit's sandbox: autograder.integrations.nbgrader_sandbox), and, in a second
     course switched back to nbgrader's own grading in the student's kernel, with plain `nbgrader autograde` (one
     nbgrader per student, two at a time); then runs `nbgrader generate_feedback` and `nbgrader export` in the
     sandboxed course;
  4. prints one row per student: attnkit's total, sandboxed nbgrader's, whether they agree, plain in-kernel
     nbgrader's (labelled as such), what attnkit found, then where the feedback pages and grades.csv files are;
  5. ends with the seconds each phase took (measured in this run, with the machine's cores and load average at the
     start and the end), the path of attnkit's class report and what to open next.

Every submission, adversarial ones included, must get the same grade, notebook by notebook, from attnkit and from
the sandboxed nbgrader; honest ones also from plain nbgrader, which the adversarial ones may fool (the table shows
it: that is what the sandbox prevents). The exit status is 1 when a grade disagrees or a fixture's declared outcome
does not hold.
"""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.integrations import nbgrader_course
from autograder.isolation.limits import default_workers
from autograder.isolation.sandbox import landlock_abi
from devtools.class_fixtures import CLASS, FixtureError, validate, write_submission

# Seconds per cell: attnkit's --timeout, and nbgrader's cell limit in the demo course (the repository's
# 120 s would make nbgrader wait two minutes on the looping student).
ATTNKIT_TIMEOUT = 5
NBGRADER_CELL_TIMEOUT = 15
# nbgrader autograde processes at once (one student each; they share the sqlite gradebook).
NBGRADER_STREAMS = max(1, min(2, os.cpu_count() or 1))
TOLERANCE = 1e-6
OK, NOT_OK = "✔", "✘"
# Where an instructor goes after the demo: the pages of the docs site (docs/, `make docs`) that read its outputs.
NEXT_PAGES = ("docs/ta-guide.md", "docs/instructor/setup.md")


class DemoError(RuntimeError):
    """A step of the demo could not run (not a disagreement between the graders)."""


@dataclass
class Row:
    """One student of the table."""

    submission: object  # class_fixtures.Submission
    nbgrader: dict  # notebook -> score from nbgrader autograde in attnkit's sandbox (empty when it gave none)
    attnkit: dict  # the student's attnkit JSON record ({} when missing)
    problems: list = field(default_factory=list)  # broken expectations
    in_kernel: dict = field(default_factory=dict)  # notebook -> score from plain nbgrader in the student's kernel

    @property
    def student_id(self):
        return self.submission.student_id

    @property
    def nbgrader_total(self):
        return sum(self.nbgrader.values()) if self.nbgrader else None

    @property
    def in_kernel_total(self):
        return sum(self.in_kernel.values()) if self.in_kernel else None

    @property
    def attnkit_total(self):
        return self.attnkit.get("score")

    def attnkit_notebooks(self):
        return {notebook["notebook"]: notebook["score"] for notebook in self.attnkit.get("notebooks", [])}

    def agree(self, theirs=None):
        """attnkit's grade equals `theirs` (default: the sandboxed nbgrader's), notebook by notebook."""
        ours, theirs = self.attnkit_notebooks(), self.nbgrader if theirs is None else theirs
        return bool(ours) and bool(theirs) and all(
            abs(ours.get(name, 0.0) - theirs.get(name, 0.0)) <= TOLERANCE for name in NOTEBOOKS)

    def lost(self):
        """attnkit's points lost per exercise, in exercise order."""
        lost = {}
        for check in self._checks():
            if check["score"] < check["max_score"]:
                lost[check["exercise"]] = lost.get(check["exercise"], 0.0) + check["max_score"] - check["score"]
        return lost

    def misconceptions(self):
        """(exercise, misconception id) pairs attnkit named, in order, without repeats."""
        found = []
        for check in self._checks():
            pair = (check["exercise"], check.get("misconception"))
            if pair[1] and pair not in found:
                found.append(pair)
        return found

    def notes(self):
        return [note for notebook in self.attnkit.get("notebooks", []) for note in notebook.get("notes", [])]

    def _checks(self):
        return [check for notebook in self.attnkit.get("notebooks", []) for check in notebook["checks"]]


def _fmt(score):
    return "-" if score is None else f"{score:g}"


def expectation_problems(row, landlock=None):
    """What the fixture declares and the grades do not show (empty when all holds)."""
    submission, problems = row.submission, []
    if not row.attnkit:
        return ["attnkit gave no grade"]
    if not row.agree():
        problems.append(f"nbgrader (sandboxed) {_fmt(row.nbgrader_total)} and attnkit {_fmt(row.attnkit_total)} "
                        f"disagree ({_notebook_differences(row, row.nbgrader)})")
    if submission.honest and row.in_kernel and not row.agree(row.in_kernel):
        problems.append(f"nbgrader in the kernel {_fmt(row.in_kernel_total)} and attnkit {_fmt(row.attnkit_total)} "
                        f"disagree on an honest submission ({_notebook_differences(row, row.in_kernel)})")
    if submission.total is not None:
        for grader, total in (("attnkit", row.attnkit_total), ("nbgrader", row.nbgrader_total)):
            if total is None or abs(total - submission.total) > TOLERANCE:
                problems.append(f"{grader} gave {_fmt(total)}, expected {submission.total:g}")
    if submission.exercise is not None:
        if submission.needs_landlock and not (landlock_abi() if landlock is None else landlock):
            return problems  # without Landlock, reading solutions/ cannot be denied
        if submission.exercise not in row.lost():
            problems.append(f"attnkit took no points in {submission.exercise}")
        if submission.misconception and (submission.exercise, submission.misconception) not in row.misconceptions():
            problems.append(f"attnkit did not name {submission.misconception} in {submission.exercise}")
    return problems


def _notebook_differences(row, theirs):
    ours = row.attnkit_notebooks()
    return ", ".join(f"{name[:2]}: {_fmt(theirs.get(name))} vs {_fmt(ours.get(name))}"
                     for name in NOTEBOOKS if abs(theirs.get(name, 0.0) - ours.get(name, 0.0)) > TOLERANCE)


def agreement(row):
    """The agreement column: ✔ when attnkit and the sandboxed nbgrader agree, notebook by notebook."""
    return OK if row.agree() else f"{NOT_OK} DISAGREE"


def in_kernel_column(row):
    """Plain nbgrader's total, and whether the student fooled it (graded above attnkit's honest grade)."""
    total, honest_total = row.in_kernel_total, row.attnkit_total
    if total is not None and honest_total is not None and total > honest_total + TOLERANCE:
        return f"{_fmt(total)} {NOT_OK} fooled"
    return _fmt(total)


def table(rows):
    """The final table, one line per student (the longest column last)."""
    header = ["student", "attnkit", "nbgrader (sandboxed)", "agree", "nbgrader in kernel (no sandbox)",
              "as declared", "misconceptions (attnkit)", "points lost (attnkit)"]
    lines = [header]
    for row in rows:
        lost = row.lost()
        lost_text = "every exercise" if len(lost) == len(EXERCISES_BY_ID) else \
            ", ".join(f"{exercise} -{points:g}" for exercise, points in lost.items())
        misconceptions = ", ".join(dict.fromkeys(name for _, name in row.misconceptions()))
        lines.append([row.student_id, _fmt(row.attnkit_total), _fmt(row.nbgrader_total), agreement(row),
                      in_kernel_column(row), NOT_OK if row.problems else OK, misconceptions or "-",
                      lost_text or "-"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {1, 2, 4}  # scores
    text = ["  ".join(cell.rjust(width) if i in right else cell.ljust(width)
                      for i, (cell, width) in enumerate(zip(line, widths, strict=True))).rstrip()
            for line in lines]
    text.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(text)


def _inside(path, directory):
    path, directory = Path(path).resolve(), Path(directory).resolve()
    return path == directory or directory in path.parents


class Demo:
    """The steps of one demo run in `workdir`, with progress lines on `out`."""

    def __init__(self, workdir, repo_root=None, out=None):
        self.workdir = Path(workdir).resolve()
        self.repo = (nbgrader_course.default_repo_root() if repo_root is None else Path(repo_root)).resolve()
        self.out = out if out is not None else sys.stdout
        self.started = time.monotonic()
        self.course_root = self.workdir / "course"
        self.in_kernel_root = self.workdir / "course-in-kernel"
        self.handed_in = self.workdir / "handed_in"
        self.attnkit_out = self.workdir / "attnkit"
        self.phases: list[tuple[str, float]] = []  # (what, seconds), in order
        self.load_at_start = os.getloadavg()

    @property
    def class_report(self):
        return self.attnkit_out / "class_report.html"

    def step(self, message):
        print(f"[{time.monotonic() - self.started:6.1f}s] {message}", file=self.out, flush=True)

    @contextlib.contextmanager
    def phase(self, name):
        """Time what runs inside as the phase `name` (kept, and printed at the end)."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases.append((name, time.monotonic() - started))

    def run(self):
        """Every step; returns the rows of the table (their `problems` filled in)."""
        problems = [problem for submission in CLASS for problem in validate(submission)]
        if problems:
            raise FixtureError("; ".join(problems))
        with self.phase("two nbgrader courses, their releases (generate_assignment)"):
            self.step(f"building an nbgrader course in {self.course_root}")
            nbgrader_course.make_course(self.course_root, self.repo)
            self.step(f"and a second course, {self.in_kernel_root.name}/, that grades in the student's kernel "
                      "(no sandbox)")
            nbgrader_course.make_course(self.in_kernel_root, self.repo, in_kernel=True)
            for root, setting in ((self.course_root, f"c.SandboxedExecute.timeout = {ATTNKIT_TIMEOUT}"),
                                  (self.in_kernel_root, f"c.ExecutePreprocessor.timeout = {NBGRADER_CELL_TIMEOUT}")):
                with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
                    config.write(f"# make demo: one student loops forever; a cell is interrupted after this long\n"
                                 f"{setting}\n")
            self.step(f"nbgrader generate_assignment {nbgrader_course.ASSIGNMENT}: source/ -> release/ (both courses)")
            nbgrader_course.generate_release(self.course_root)
            nbgrader_course.generate_release(self.in_kernel_root)
        with self.phase("collecting the class"):
            self.collect()
        with self.phase("attnkit grade"):
            self.grade_with_attnkit()
        with self.phase("nbgrader autograde, in attnkit's sandbox"):
            self.grade_with_sandboxed_nbgrader()
        with self.phase("plain nbgrader autograde, in the students' kernels"):
            self.grade_in_kernel()
        with self.phase("nbgrader generate_feedback and export"):
            self.step(f"nbgrader generate_feedback {nbgrader_course.ASSIGNMENT}")
            nbgrader_course.generate_feedback(self.course_root)
            self.step("nbgrader export")
            nbgrader_course.export_grades(self.course_root)
        rows = self.rows()
        self.step("done")
        return rows

    def collect(self):
        self.step(f"collecting {len(CLASS)} submissions (built from source/{nbgrader_course.ASSIGNMENT}/ now) "
                  f"into submitted/")
        for submission in CLASS:
            folder = write_submission(submission, self.handed_in / submission.student_id, self.repo)
            nbgrader_course.submit(self.course_root, submission.student_id, folder)
            nbgrader_course.submit(self.in_kernel_root, submission.student_id, folder)
            print(f"           {submission.student_id:28} {submission.description}", file=self.out, flush=True)

    def grade_with_attnkit(self):
        submitted = self.course_root / "submitted"
        self.step(f"attnkit grade submitted/ --out {self.attnkit_out} --timeout {ATTNKIT_TIMEOUT}")
        command = [sys.executable, "-m", "autograder.cli", "grade", str(submitted), "--out", str(self.attnkit_out),
                   "--timeout", str(ATTNKIT_TIMEOUT)]
        self.out.flush()
        process = subprocess.run(command, cwd=self.workdir, check=False)
        if process.returncode != 0:
            raise DemoError(f"attnkit grade exited with status {process.returncode}")

    def grade_with_sandboxed_nbgrader(self):
        self.step(f"nbgrader autograde {nbgrader_course.ASSIGNMENT}: {len(CLASS)} students x {len(NOTEBOOKS)} "
                  f"notebooks in attnkit's sandbox (the course's nbgrader_config.py), one nbgrader for the class")
        nbgrader_course.autograde(self.course_root)
        self.step("  nbgrader autograde (sandboxed): done")

    def grade_in_kernel(self):
        students = [submission.student_id for submission in CLASS]
        self.step(f"nbgrader autograde {nbgrader_course.ASSIGNMENT} in {self.in_kernel_root.name}/, in the students' "
                  f"kernels: {len(students)} students x {len(NOTEBOOKS)} notebooks, {NBGRADER_STREAMS} at a time")
        with ThreadPoolExecutor(max_workers=NBGRADER_STREAMS) as pool:
            futures = {pool.submit(nbgrader_course.autograde, self.in_kernel_root, [student]): student
                       for student in students}
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    future.result()
                    self.step(f"  nbgrader autograde (in kernel): {futures[future]} ({done}/{len(students)})")
            except BaseException:
                for future in futures:  # students not started yet are not graded
                    future.cancel()
                raise

    def attnkit_record(self, student_id):
        path = self.attnkit_out / "students" / f"{student_id}.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def rows(self):
        scores = nbgrader_course.read_scores(self.course_root)
        in_kernel = nbgrader_course.read_scores(self.in_kernel_root)
        landlock = landlock_abi()
        rows = [Row(submission, scores.get(submission.student_id, {}), self.attnkit_record(submission.student_id),
                    in_kernel=in_kernel.get(submission.student_id, {}))
                for submission in CLASS]
        for row in rows:
            row.problems = expectation_problems(row, landlock)
        return rows

    def report(self, rows):
        """The table, what the adversarial rows show, and where the outputs are."""
        print(file=self.out)
        print(table(rows), file=self.out)
        print(file=self.out)
        for row in rows:
            if not row.submission.honest:
                notes = "; ".join(row.notes()[:2]) or "no notes"
                print(f"{row.student_id}: {row.submission.description}.\n"
                      f"  attnkit {_fmt(row.attnkit_total)}, nbgrader in the sandbox {_fmt(row.nbgrader_total)}, "
                      f"plain nbgrader in the kernel {_fmt(row.in_kernel_total)} (attnkit saw: {notes})", file=self.out)
        if any(not row.submission.honest for row in rows):
            print("  (plain nbgrader runs its checks in the student's kernel, where the student can patch them and "
                  "read solutions/;\n   the course's nbgrader_config.py grades in attnkit's sandbox instead, as "
                  "`attnkit grade` does: the judges run\n   in the grader's process and the student's code is "
                  "confined.)", file=self.out)
        for row in rows:
            for problem in row.problems:
                print(f"{NOT_OK} {row.student_id}: {problem}", file=self.out)
        print(file=self.out)
        feedback = self.course_root / "feedback"
        print(f"nbgrader feedback:  {feedback}/<student>/{nbgrader_course.ASSIGNMENT}/*.html (sandboxed)\n"
              f"nbgrader grades:    {self.course_root / 'grades.csv'} (sandboxed)\n"
              f"attnkit feedback:   {self.attnkit_out / 'feedback'}/<student>.html\n"
              f"attnkit grades:     {self.attnkit_out / 'grades.csv'}\n"
              f"everything (kept):  {self.workdir}   (rm -rf it when done)", file=self.out)

    def ending(self, rows, seconds):
        """The last lines: what each phase took, the verdict, the class report's path and the next step."""
        print("\ntime per phase (measured in this run):", file=self.out)
        for name, phase_seconds in self.phases:
            print(f"  {phase_seconds:6.0f} s  {name}", file=self.out)
        start, end = self.load_at_start[0], os.getloadavg()[0]
        print(f"  {seconds:6.0f} s  in all ({seconds / 60:.1f} min) on {default_workers()} cores, load average "
              f"{start:.2f} at the start and {end:.2f} at the end (1 min)", file=self.out)
        failed = [row.student_id for row in rows if row.problems]
        print(f"\nmake demo: {len(rows)} students in {seconds:.0f} s; "
              + (f"{NOT_OK} not as declared: {', '.join(failed)}" if failed else
                 f"{OK} every submission got the same grade from attnkit and the sandboxed nbgrader, every honest one "
                 "also from plain nbgrader"), file=self.out)
        report = self.class_report if self.class_report.is_file() else None
        print(f"class report: {report or f'not written ({self.class_report} is missing)'}", file=self.out)
        print(f"next: open {report.as_uri() if report else 'the feedback pages above'} in a browser (the class's "
              f"totals, each notebook's scores, the mistakes named), then {NEXT_PAGES[0]} (reading the report and a "
              f"student's feedback) and {NEXT_PAGES[1]} (a course of your own); `make docs` builds these pages as a "
              "site", file=self.out, flush=True)
        return failed


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m devtools.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="put the course and the grades in DIR (new or empty, outside the checkout) instead of "
                             "a new temporary directory; either way they are kept")
    args = parser.parse_args(argv)
    repo = nbgrader_course.default_repo_root()
    if args.keep is not None:
        workdir = args.keep.resolve()
        if _inside(workdir, repo):
            print(f"demo: {workdir} is inside the checkout {repo}; choose a directory outside it", file=sys.stderr)
            return 2
        if workdir.exists() and (not workdir.is_dir() or any(workdir.iterdir())):
            print(f"demo: {workdir} exists and is not an empty directory", file=sys.stderr)
            return 2
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="attnkit-demo-")).resolve()
        if _inside(workdir, repo):
            print(f"demo: the temporary directory {workdir} is inside the checkout; set TMPDIR or use --keep DIR",
                  file=sys.stderr)
            return 2
    print(f"make demo: the attnkit course end to end; outputs go to {workdir} (kept)", flush=True)
    demo = Demo(workdir, repo)
    try:
        rows = demo.run()
    except (nbgrader_course.NbgraderError, DemoError, FixtureError, OSError, ValueError) as error:
        print(f"demo failed: {error}\n(outputs so far: {workdir})", file=sys.stderr)
        return 1
    demo.report(rows)
    failed = demo.ending(rows, time.monotonic() - demo.started)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
