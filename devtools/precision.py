"""Precision of diagnosis: is the first mistake the checks name for a wrong student the true one?

    python -m devtools.precision [-v]

The students: every variant of the variant grid (devtools.variant_grid; each carries its true misconception) and
every mutant of tests/mutants/ that its module labels in TRUE_MISCONCEPTIONS (the named families its bug belongs
to; () where it belongs to none, and then no name is right). A wrong student is one that loses points. For each,
every check runs in catalogue order as grading runs them, and the first misconception a failing check names is
the true one (right), another (wrong), or there is none (none named). Prints the counts per source and in all, and

    precision = right / named        recall = named / wrong

and the recall among the wrong students whose bug a named family covers ("in a family"; for the others no name is
right), with, under -v, every wrong name and every miss. Mutants without a label are counted apart (the checks'
tests judge those). Exit status 0; the figures are the output.
tests/test_precision.py asserts that no variant of the grid gets a wrong first name.
"""

import argparse
import importlib
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.running.runner import DEFAULT_SEED, run_exercise
from devtools import variant_grid
from devtools.student_kit_agreement import MUTANT_MODULES, MUTANT_PREFIXES, mutants, reference_namespace


@dataclass(frozen=True)
class Labelled:
    """A student whose true mistakes are known: `truth` holds the misconceptions its bug belongs to; () none."""

    source: str  # "grid" or "mutants"
    label: str
    exercise: str
    namespace: Mapping[str, Any]
    truth: tuple[str, ...]


@dataclass(frozen=True)
class Diagnosis:
    student: Labelled
    lost: float  # points lost at grading
    first_named: str | None  # the first misconception a failing check names, in check order

    @property
    def wrong_student(self) -> bool:
        return self.lost > 0

    @property
    def verdict(self) -> str:
        """"right", "wrong" or "none" for a wrong student; "" for one that keeps full marks."""
        if not self.wrong_student:
            return ""
        if self.first_named is None:
            return "none"
        return "right" if self.first_named in self.student.truth else "wrong"


def true_misconceptions() -> dict[str, tuple[str, ...]]:
    """{mutant name: the families its bug belongs to}, from each tests/mutants module's TRUE_MISCONCEPTIONS."""
    labels: dict[str, tuple[str, ...]] = {}
    for module_name in MUTANT_MODULES:
        labels.update(getattr(importlib.import_module(module_name), "TRUE_MISCONCEPTIONS", {}))
    return labels


def grid_students() -> list[Labelled]:
    """The grid's mistakes (its legitimate alternatives carry no mistake to name)."""
    return [Labelled("grid", f"{variant.exercise}/{variant.family}/{variant.name}", variant.exercise,
                     {EXERCISES_BY_ID[variant.exercise].names[0]: variant.student}, (variant.misconception,))
            for variant in variant_grid.grid() if variant.misconception is not variant_grid.EQUIVALENT]


def mutant_students() -> tuple[list[Labelled], list[str]]:
    """(the labelled mutants as students of the exercises whose names they stand for, the unlabelled mutants' names)."""
    labels, students, unlabelled = true_misconceptions(), [], []
    for exercise in EXERCISES:
        for name in exercise.names:
            prefix = MUTANT_PREFIXES.get(name, name)
            for mutant_name, mutant in mutants():
                if not mutant_name.startswith(prefix):
                    continue
                if mutant_name not in labels:
                    unlabelled.append(mutant_name)
                    continue
                namespace = {**reference_namespace(exercise.id), name: mutant}
                students.append(Labelled("mutants", mutant_name, exercise.id, namespace, labels[mutant_name]))
    return students, unlabelled


def diagnose_student(student: Labelled, seed: int = DEFAULT_SEED) -> Diagnosis:
    results = run_exercise(student.exercise, dict(student.namespace), seed=seed, lang="en")
    named = [result.misconception for result in results if result.status != PASSED and result.misconception]
    lost = sum(result.max_score - result.score for result in results)
    return Diagnosis(student, lost, named[0] if named else None)


@dataclass(frozen=True)
class Counts:
    wrong: int
    right: int
    misnamed: int
    unnamed: int
    in_family: int  # wrong students whose bug belongs to a named family
    in_family_named: int

    @property
    def named(self) -> int:
        return self.right + self.misnamed

    @property
    def precision(self) -> float:
        return self.right / self.named if self.named else 1.0

    @property
    def recall(self) -> float:
        return self.named / self.wrong if self.wrong else 1.0

    @property
    def family_recall(self) -> float:
        """named / wrong over the students whose bug a named family covers (the others are right to get none)."""
        return self.in_family_named / self.in_family if self.in_family else 1.0


def counts(diagnoses: Iterable[Diagnosis]) -> Counts:
    wrong = [diagnosis for diagnosis in diagnoses if diagnosis.wrong_student]
    verdicts = [diagnosis.verdict for diagnosis in wrong]
    in_family = [diagnosis for diagnosis in wrong if diagnosis.student.truth]
    return Counts(len(verdicts), verdicts.count("right"), verdicts.count("wrong"), verdicts.count("none"),
                  len(in_family), sum(diagnosis.first_named is not None for diagnosis in in_family))


def table(diagnoses: Sequence[Diagnosis], unlabelled: Sequence[str]) -> str:
    rows = [f"{'source':<10}{'wrong':>7}{'right':>7}{'wrong name':>12}{'none':>6}{'precision':>11}{'recall':>8}"
            f"{'in a family':>13}{'recall there':>14}"]
    for source in ("grid", "mutants", "all"):
        found = counts(d for d in diagnoses if source in ("all", d.student.source))
        rows.append(f"{source:<10}{found.wrong:>7}{found.right:>7}{found.misnamed:>12}{found.unnamed:>6}"
                    f"{found.precision:>11.3f}{found.recall:>8.3f}{found.in_family:>13}{found.family_recall:>14.3f}")
    kept = sum(not diagnosis.wrong_student for diagnosis in diagnoses)
    rows.append(f"labelled students that keep full marks (not counted): {kept}; mutants without a label: "
                f"{len(unlabelled)}")
    return "\n".join(rows)


def wrong_names(diagnoses: Iterable[Diagnosis]) -> list[str]:
    return [f"{d.student.source}: {d.student.exercise} / {d.student.label}: named {d.first_named}, true "
            f"{' or '.join(d.student.truth) or 'no named family'}" for d in diagnoses if d.verdict == "wrong"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.precision", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every wrong first name and every miss")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"check seed (default {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    mutant_list, unlabelled = mutant_students()
    diagnoses = [diagnose_student(student, args.seed) for student in grid_students() + mutant_list]
    print(table(diagnoses, unlabelled))
    if args.verbose:
        for line in wrong_names(diagnoses):
            print(f"  ✘ {line}")
        for d in diagnoses:
            if d.verdict == "none" and d.student.truth:
                print(f"  · {d.student.source}: {d.student.exercise} / {d.student.label}: none named, true "
                      f"{' or '.join(d.student.truth)}")
        if unlabelled:
            print(f"  mutants without a label: {', '.join(sorted(set(unlabelled)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
