"""Verdict changes: every check whose verdict on a known student differs between another revision's checks and these.

    python -m devtools.verdict_changes --against 4d17600 [--exercise causal_attention ...]

The students are this checkout's (devtools.student_kit_agreement.students: the reference, the release stubs, every
mutant in tests/mutants/ and every cell of the variant grid). Each is graded twice, by the checks of `--against`
(its autograder/ taken with `git archive` into a temporary folder) and by this checkout's, each in a process of its
own: every graded check and every check check() runs (the previews). A verdict is (passed, the misconception named,
the score). Prints one line per changed verdict, grouped by check, and the number of students and verdicts
compared. A change is not wrong in itself: each needs its reason (a fault fixed, a mistake newly named). Exit
status 0; the list is the output.
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHADOWED = "autograder"  # the package taken from the other revision; devtools, tests and solutions stay this one's


@dataclass(frozen=True)
class Verdict:
    passed: bool
    misconception: str | None
    score: float

    def __str__(self) -> str:
        named = f", named {self.misconception}" if self.misconception else ""
        return f"{'✔' if self.passed else '✘'} {self.score:g}{named}"


Verdicts = dict[str, dict[str, Verdict]]  # "student [exercise]" -> check id -> verdict


def grade_students(exercises: Sequence[str]) -> Verdicts:
    """Every student's verdicts under the autograder this process imports."""
    from autograder.checking.check_types import PASSED
    from autograder.running import runner
    from devtools.student_kit_agreement import students

    # One class's expectations for every student, as `attnkit grade` keeps them (runner.ClassExpectations, issue 59);
    # a revision from before them computes every student's own.
    shared = {"expectations": runner.ClassExpectations()} if hasattr(runner, "ClassExpectations") else {}
    verdicts: Verdicts = {}
    for student in students():
        if exercises and student.exercise not in exercises:
            continue
        key = f"{student.label} [{student.exercise}]"
        results = [*runner.run_exercise(student.exercise, student.namespace, lang="en", **shared),
                   *runner.run_exercise(student.exercise, student.namespace, lang="en", include_hidden=False,
                                        **shared)]
        verdicts[key] = {result.id: Verdict(result.status == PASSED, result.misconception, float(result.score))
                         for result in results}
    return verdicts


def verdicts_under(autograder_root: Path | None, exercises: Sequence[str]) -> Verdicts:
    """The verdicts in a child process whose `autograder` comes from `autograder_root` (None: this checkout's)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the child's autograder is the one its starting folder holds
    cwd = REPO
    if autograder_root is not None:
        # The child starts in a folder holding the other autograder beside links to this checkout's devtools and
        # tests: the folder a module run starts in comes first on the import path.
        cwd = autograder_root
        for name in ("devtools", "tests"):
            (autograder_root / name).symlink_to(REPO / name)
    with tempfile.TemporaryDirectory(prefix="verdicts-") as folder:
        output = Path(folder) / "verdicts.json"
        command = [sys.executable, "-m", "devtools.verdict_changes", "--worker", str(output)]
        for exercise in exercises:
            command += ["--exercise", exercise]
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"grading under {autograder_root or REPO} failed:\n{done.stderr[-4000:]}")
        raw = json.loads(output.read_text(encoding="utf-8"))
    return {student: {check: Verdict(*verdict) for check, verdict in checks.items()}
            for student, checks in raw.items()}


def checkout(revision: str, folder: Path) -> Path:
    """`revision`'s autograder/ extracted into `folder`."""
    archive = folder / "autograder.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "--output", str(archive), revision, SHADOWED], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()
    return folder


def changes(before: Verdicts, after: Verdicts) -> dict[str, list[str]]:
    """{check id: ["student: before -> after"]} for every verdict that differs (a check only one side has too)."""
    changed: dict[str, list[str]] = defaultdict(list)
    for student in sorted(set(before) | set(after)):
        old, new = before.get(student, {}), after.get(student, {})
        for check in sorted(set(old) | set(new)):
            if old.get(check) != new.get(check):
                changed[check].append(f"{student}: {old.get(check, 'absent')} -> {new.get(check, 'absent')}")
    return dict(changed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.verdict_changes", description=__doc__.split("\n")[0])
    parser.add_argument("--against", help="the revision whose checks to compare with (e.g. 4d17600)")
    parser.add_argument("--exercise", action="append", default=[], help="only this exercise (repeatable)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)  # a child: write the verdicts there
    args = parser.parse_args(argv)
    if args.worker is not None:
        verdicts = grade_students(args.exercise)
        args.worker.write_text(json.dumps({student: {check: [v.passed, v.misconception, v.score]
                                                     for check, v in checks.items()}
                                           for student, checks in verdicts.items()}), encoding="utf-8")
        return 0
    if not args.against:
        parser.error("--against REVISION is required")
    with tempfile.TemporaryDirectory(prefix="verdict-changes-") as folder:
        before = verdicts_under(checkout(args.against, Path(folder)), args.exercise)
    after = verdicts_under(None, args.exercise)
    changed = changes(before, after)
    for check, lines in sorted(changed.items()):
        print(f"{check}: {len(lines)} verdict(s) changed")
        for line in lines:
            print(f"    {line}")
    compared = sum(len(checks) for checks in after.values())
    print(f"{sum(len(lines) for lines in changed.values())} of {compared} verdicts changed against {args.against}, "
          f"{len(after)} students")
    return 0


if __name__ == "__main__":
    sys.exit(main())
