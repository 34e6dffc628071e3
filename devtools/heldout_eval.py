"""Does the course name the right mistake on work it was not tuned to? Precision and recall on three sets.

    python -m devtools.heldout_eval [--set heldout|mutants|grid]... [-v] [--read] [--attempt NAME]...

The sets: the held-out learner attempts of tests/heldout/ (written from the notebooks' instructions, each labelled
with the table's mistake it makes, "none known" or "correct"), the labelled mutants of tests/mutants/ and the variant
grid (devtools.precision gives both). Each student runs through its exercise's checks as grading runs them
(devtools.precision's route: run_exercise, the hidden checks included) and as check(...) runs them (the public checks
and their previews), and every mistake a failing check of either run names is what a learner reads. Per set:

    attempts     students in the set
    wrong        those that lose points
    named        wrong students shown at least one mistake's name
    right        named students every one of whose names is a mistake their label gives
    named wrong  named students shown a name their label does not give (precision = right / named)
    in table     wrong students whose label is a table id; recall there = right among them / in table
    correct      legitimate alternatives; docked = those that lose points or get a name (must be 0)
    kept         students labelled with a mistake that keep full marks (the checks let the bug through)

-v lists every wrong name and every miss; --read prints, for each held-out attempt that loses points, what check(...)
says at hint=1, 2 and 3 in English, and in Chinese for a sample (the first such attempt of each exercise): the
learner's read. Exit status 0; the figures are the output. tests/test_heldout_attempts.py holds the measures.
"""

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.running.in_notebook import ReferenceExpectations
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import DEFAULT_SEED, run_exercise
from devtools import precision, variant_grid
from devtools.student_kit_agreement import reference_namespace
from tests.heldout import Attempt, all_attempts

SETS = ("heldout", "mutants", "grid")
RUNGS = (1, 2, 3)


@dataclass(frozen=True)
class Student:
    """One student of a set: `truth` holds the table ids a right name may be (() for none known or correct)."""

    source: str  # one of SETS
    label: str
    exercise: str
    namespace: Mapping[str, Any]
    truth: tuple[str, ...]
    correct: bool  # a legitimate alternative: must keep full marks and get no name


@dataclass(frozen=True)
class Outcome:
    student: Student
    lost: float  # points lost at grading
    names: tuple[str, ...]  # every mistake a failing check names, in check order, once each

    @property
    def wrong(self) -> bool:
        return self.lost > 0

    @property
    def named(self) -> bool:
        return self.wrong and bool(self.names)

    @property
    def misnamed(self) -> tuple[str, ...]:
        """The names shown that the student's label does not give."""
        return tuple(name for name in self.names if name not in self.student.truth)

    @property
    def named_right(self) -> bool:
        return self.named and not self.misnamed

    @property
    def docked(self) -> bool:
        return self.student.correct and (self.wrong or bool(self.names))


def heldout_student(attempt: Attempt) -> Student:
    names = EXERCISES_BY_ID[attempt.exercise].names
    namespace = {**reference_namespace(attempt.exercise), **dict(zip(names, attempt.objects, strict=True))}
    label = attempt.label if isinstance(attempt.label, str) else " or ".join(attempt.label)
    return Student("heldout", f"{attempt.name} [{label}]", attempt.exercise, namespace, attempt.mistakes,
                   attempt.correct)


def heldout_students() -> list[Student]:
    return [heldout_student(attempt) for attempt in all_attempts()]


def mutant_students() -> list[Student]:
    """tests/mutants/' labelled mutants, as devtools.precision builds them (its unlabelled ones are not counted)."""
    labelled, _ = precision.mutant_students()
    return [Student("mutants", s.label, s.exercise, s.namespace, s.truth, False) for s in labelled]


def grid_students() -> list[Student]:
    """The variant grid, its legitimate alternatives included (devtools.precision leaves those out)."""
    students = []
    for variant in variant_grid.grid():
        exercise = EXERCISES_BY_ID[variant.exercise]
        correct = variant.misconception is variant_grid.EQUIVALENT
        students.append(Student("grid", f"{variant.family}/{variant.name}", variant.exercise,
                                {exercise.names[0]: variant.student},
                                () if variant.misconception is None else (variant.misconception,), correct))
    return students


STUDENTS = {"heldout": heldout_students, "mutants": mutant_students, "grid": grid_students}


def diagnose(student: Student, seed: int = DEFAULT_SEED) -> Outcome:
    """Points lost at grading, and every name the learner reads: those of the public checks and their previews
    (check(...)'s run, which can name what the graded run does not) and those of the graded feedback."""
    graded = run_exercise(student.exercise, dict(student.namespace), seed=seed, lang="en")
    public = run_exercise(student.exercise, dict(student.namespace), seed=seed, lang="en", include_hidden=False)
    names = [result.misconception for result in public + graded if result.status != PASSED and result.misconception]
    lost = sum(result.max_score - result.score for result in graded)
    return Outcome(student, lost, tuple(dict.fromkeys(names)))


@dataclass(frozen=True)
class Counts:
    attempts: int
    wrong: int
    named: int
    right: int
    named_wrong: int
    in_table: int  # wrong students whose label is a table id
    in_table_right: int
    correct: int
    docked: int  # correct alternatives that lose points or get a name
    kept: int  # students labelled with a mistake that keep full marks

    @property
    def precision(self) -> float:
        return self.right / self.named if self.named else 1.0

    @property
    def recall(self) -> float:
        """Named right among the wrong students whose label is a table id."""
        return self.in_table_right / self.in_table if self.in_table else 1.0


def counts(outcomes: Iterable[Outcome]) -> Counts:
    found = list(outcomes)
    wrong = [o for o in found if o.wrong]
    in_table = [o for o in wrong if o.student.truth]
    return Counts(len(found), len(wrong), sum(o.named for o in wrong), sum(o.named_right for o in wrong),
                  sum(bool(o.misnamed) for o in wrong), len(in_table), sum(o.named_right for o in in_table),
                  sum(o.student.correct for o in found), sum(o.docked for o in found),
                  sum(not o.wrong and not o.student.correct and bool(o.student.truth) for o in found))


def table(outcomes: Sequence[Outcome]) -> str:
    header = ("set", "attempts", "wrong", "named", "right", "named wrong", "precision", "in table", "recall",
              "correct", "docked", "kept")
    widths = (9, 9, 6, 6, 6, 12, 10, 9, 7, 8, 7, 5)
    rows = ["".join(f"{text:>{width}}" if i else f"{text:<{width}}" for i, (text, width)
                    in enumerate(zip(header, widths, strict=True)))]
    for source in sorted({o.student.source for o in outcomes}, key=SETS.index):
        c = counts(o for o in outcomes if o.student.source == source)
        values = (source, c.attempts, c.wrong, c.named, c.right, c.named_wrong, f"{c.precision:.3f}", c.in_table,
                  f"{c.recall:.3f}", c.correct, c.docked, c.kept)
        rows.append("".join(f"{value:>{width}}" if i else f"{value:<{width}}" for i, (value, width)
                            in enumerate(zip(values, widths, strict=True))))
    return "\n".join(rows)


def wrong_names(outcomes: Iterable[Outcome]) -> list[str]:
    return [f"{o.student.source}: {o.student.exercise} / {o.student.label}: named {', '.join(o.names)}"
            for o in outcomes if o.wrong and o.misnamed]


def misses(outcomes: Iterable[Outcome]) -> list[str]:
    """Wrong students whose label is a table id and that get no name."""
    return [f"{o.student.source}: {o.student.exercise} / {o.student.label}: none named"
            for o in outcomes if o.wrong and o.student.truth and not o.names]


def docked(outcomes: Iterable[Outcome]) -> list[str]:
    return [f"{o.student.source}: {o.student.exercise} / {o.student.label}: lost {o.lost:g}, named "
            f"{', '.join(o.names) or 'nothing'}" for o in outcomes if o.docked]


def kept(outcomes: Iterable[Outcome]) -> list[str]:
    return [f"{o.student.source}: {o.student.exercise} / {o.student.label}: full marks"
            for o in outcomes if not o.wrong and not o.student.correct and o.student.truth]


@contextlib.contextmanager
def language(lang: str) -> Iterator[None]:
    before = os.environ.get("ATTNKIT_LANG")
    os.environ["ATTNKIT_LANG"] = lang
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ATTNKIT_LANG", None)
        else:
            os.environ["ATTNKIT_LANG"] = before


def learner_read(attempt: Attempt, lang: str) -> str:
    """What check(...) prints for `attempt` at hint=1, 2 and 3, in a fresh kernel's runtime, in `lang`."""
    runtime = NotebookRuntime(ReferenceExpectations())
    parts = []
    with language(lang):
        for rung in RUNGS:
            output = io.StringIO()
            with contextlib.redirect_stdout(output):
                runtime.check(attempt.exercise, *attempt.objects, hint=rung)
            parts.append(f"--- hint={rung}\n{output.getvalue().rstrip()}")
    return "\n".join(parts)


def read_sample(attempts: Sequence[Attempt], outcomes: Mapping[str, Outcome]) -> set[str]:
    """The attempts read in Chinese too: the first of each exercise that loses points."""
    sample: dict[str, str] = {}
    for attempt in attempts:
        if outcomes[attempt.name].wrong:
            sample.setdefault(attempt.exercise, attempt.name)
    return set(sample.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.heldout_eval", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--set", choices=SETS, action="append", help="a set to measure (default: all three)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list wrong names, misses, docked and kept")
    parser.add_argument("--read", action="store_true", help="the learner's read of the held-out attempts")
    parser.add_argument("--attempt", action="append", help="read only this held-out attempt (by name)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"check seed (default {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    sets = args.set or list(SETS)
    attempts = all_attempts()
    # The held-out outcomes by attempt, for the learner's read; the other sets from devtools.precision's students.
    heldout = ({attempt.name: diagnose(heldout_student(attempt), args.seed) for attempt in attempts}
               if "heldout" in sets or args.read else {})
    outcomes = [outcome for source in sets for outcome in (
        list(heldout.values()) if source == "heldout" else [diagnose(s, args.seed) for s in STUDENTS[source]()])]
    print(table(outcomes))
    if args.verbose:
        for title, lines in (("wrong names", wrong_names(outcomes)),
                             ("misses (label in the table, no name)", misses(outcomes)),
                             ("correct alternatives docked", docked(outcomes)),
                             ("labelled mistakes that keep full marks", kept(outcomes))):
            print(f"\n{title}: {len(lines)}")
            for line in lines:
                print(f"  {line}")
    if args.read:
        sample = read_sample(attempts, heldout)
        for attempt in attempts:
            if (args.attempt and attempt.name not in args.attempt) or not heldout[attempt.name].wrong:
                continue
            for lang in ("en", "zh") if attempt.name in sample else ("en",):
                print(f"\n===== {attempt.exercise} / {attempt.name} [{attempt.label}] ({attempt.story}) · {lang}")
                print(learner_read(attempt, lang))
    return 0


if __name__ == "__main__":
    sys.exit(main())
