"""Surprises: student-style buggy code that passes every public check of an exercise and loses points at grading.

    python -m devtools.surprises [-v]

The students are those of the student-kit agreement (devtools.student_kit_agreement.students): every mutant in
tests/mutants/ and every single-knob variant of devtools/student_variants.py (the release stubs and the reference
are left out: a stub fails its public checks, the reference loses nothing), and every mutant cosmic-ray makes of
solutions/ (devtools.mutants), once for each exercise that uses its line. For each, the exercise's public checks
run as `check(...)` runs them, then every check as `grade(...)` does. A surprise is a ✔ on every public check
followed by lost points: for a self-learner with the student kit, a bug they are told is not there. Prints a table
per exercise and, with -v, every surprise with the hidden checks it fails. Exit status 0; the figure is the output.
"""

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.running.runner import run_exercise
from devtools import mutants as mutant_source
from devtools.student_kit_agreement import Student, students


@dataclass(frozen=True)
class Outcome:
    student: str
    exercise: str
    public_passed: bool  # every public check ✔
    lost: float  # points lost at grading
    failed_hidden: tuple[str, ...]

    @property
    def surprise(self) -> bool:
        return self.public_passed and self.lost > 0


def outcome(student: Student) -> Outcome:
    public = run_exercise(student.exercise, student.namespace, include_hidden=False, lang="en")
    graded = run_exercise(student.exercise, student.namespace, include_hidden=True, lang="en")
    lost = sum(result.max_score - result.score for result in graded)
    failed = tuple(result.id for result in graded if result.hidden and result.status != PASSED)
    return Outcome(student.label, student.exercise, all(r.status == PASSED for r in public), lost, failed)


def buggy_students() -> list[Student]:
    """The hand-written mutants and the grid's variants, then the mutation tool's mutants."""
    written = [student for student in students() if student.label.startswith(("mutant/", "variant/"))]
    return written + mutation_students()


def mutation_students() -> list[Student]:
    """cosmic-ray's mutants of solutions/, one student per exercise whose names reach the mutated line. Mutants on
    lines no exercise uses, and those that raise as their module runs, have no exercise to pass or fail."""
    usage = mutant_source.usage()
    population = []
    for mutant in mutant_source.all_mutants():
        exercise_ids = usage.get((mutant.file, mutant.line), ())
        if not exercise_ids:
            continue
        try:
            loaded = mutant_source.load(mutant)
        except mutant_source.MutantImportError:
            continue
        population += [Student(f"cosmic-ray/{mutant.key}", exercise_id,
                               mutant_source.namespace_for(EXERCISES_BY_ID[exercise_id], loaded))
                       for exercise_id in sorted(exercise_ids)]
    return population


def measure(population: list[Student]) -> list[Outcome]:
    return [outcome(student) for student in population]


def table(outcomes: list[Outcome]) -> str:
    by_exercise: dict[str, list[Outcome]] = defaultdict(list)
    for found in outcomes:
        by_exercise[found.exercise].append(found)
    rows = [f"{'exercise':<25}{'students':>10}{'public ✔':>10}{'surprises':>11}{'points lost':>13}"]
    for exercise in EXERCISES:
        found = by_exercise.get(exercise.id, [])
        surprises = [o for o in found if o.surprise]
        rows.append(f"{exercise.id:<25}{len(found):>10}{sum(o.public_passed for o in found):>10}{len(surprises):>11}"
                    f"{sum(o.lost for o in surprises):>13g}")
    total = [o for o in outcomes if o.surprise]
    rows.append(f"{'all':<25}{len(outcomes):>10}{sum(o.public_passed for o in outcomes):>10}{len(total):>11}"
                f"{sum(o.lost for o in total):>13g}")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.surprises", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every surprise and what it fails")
    args = parser.parse_args(argv)
    outcomes = measure(buggy_students())
    print(table(outcomes))
    if args.verbose:
        for found in outcomes:
            if found.surprise:
                print(f"  {found.student}: -{found.lost:g} ({', '.join(found.failed_hidden)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
