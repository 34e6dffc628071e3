"""Agreement between the student kit's stored public checks and the live public checks.

    python -m devtools.student_kit_agreement [--lang en|zh|both] [-v]

Runs every public check both ways on the same students: the solved notebooks' code (solutions/), the release
notebooks as handed out (stubs), every mutant in tests/mutants/ and every single-knob variant of
devtools/student_variants.py. A pair agrees when both give the same verdict (passed or not), the same
misconception and the same message text. Prints the agreement (target 100 %) and every disagreement;
exits 1 when there is one. tests/test_student_kit.py asserts the same.
"""

import argparse
import contextlib
import importlib
import inspect
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import torch

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID, of_notebook
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.runner import run_exercise
from devtools.variant_grid import grid

REPO = Path(__file__).resolve().parents[1]
MUTANT_MODULES = ("tests.mutants.basics_self_attention", "tests.mutants.causal", "tests.mutants.multihead")
# How mutants name what they stand for, when it is not the notebook name itself.
MUTANT_PREFIXES = {"load_v2_weights_into_v1": "load_", "MultiHeadAttentionWrapper": "Wrapper",
                   "MultiHeadAttention": "MHA"}


@dataclass(frozen=True)
class Student:
    label: str
    exercise: str
    namespace: dict


@dataclass(frozen=True)
class Disagreement:
    student: str
    check: str
    lang: str
    live: tuple
    kit: tuple


def reference_namespace(exercise_id):
    return {name: getattr(solutions, name) for name in EXERCISES_BY_ID[exercise_id].names}


def _no_feedback(*arguments, **options):
    """Stands in for the notebooks' check, check_all and grade: the agreement runs the checks itself."""


def release_namespaces():
    """{notebook: namespace} after running the release notebooks' code cells as handed out (stubs raise), without
    their imports of the autograder: only those lines go, the first cell imports torch beside it."""
    namespaces = {}
    with torch.random.fork_rng(devices=[]):  # the notebooks seed the global RNG; the caller's state is kept
        for path in sorted((REPO / "release" / "attention").glob("*.ipynb")):
            namespace = {"check": _no_feedback, "check_all": _no_feedback, "grade": _no_feedback}
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type != "code":
                    continue
                source = "\n".join(line for line in cell.source.splitlines()
                                   if not line.startswith(("from autograder", "import autograder")))
                with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exception):
                    exec(compile(source, path.name, "exec"), namespace)  # noqa: S102 - the course's own code
            namespaces[path.stem] = namespace
    return namespaces


def mutants():
    """(name, object) of every function and class defined in tests/mutants/."""
    found = []
    for module_name in MUTANT_MODULES:
        module = importlib.import_module(module_name)
        found += [(name, value) for name, value in vars(module).items()
                  if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == module.__name__]
    return found


def students():
    """Every student both kinds of check are run on."""
    found = [Student(f"reference/{e.id}", e.id, reference_namespace(e.id)) for e in EXERCISES]
    for notebook, namespace in release_namespaces().items():
        for exercise in of_notebook(notebook):
            if all(name in namespace for name in exercise.names):
                found.append(Student(f"release/{exercise.id}", exercise.id,
                                     {name: namespace[name] for name in exercise.names}))
    all_mutants = mutants()
    for exercise in EXERCISES:
        for name in exercise.names:
            prefix = MUTANT_PREFIXES.get(name, name)
            for mutant_name, mutant in all_mutants:
                if mutant_name.startswith(prefix):
                    # A multi-name exercise (the masking routes): the reference supplies the other names.
                    namespace = {**reference_namespace(exercise.id), name: mutant}
                    found.append(Student(f"mutant/{mutant_name}", exercise.id, namespace))
    for variant in grid():
        name = EXERCISES_BY_ID[variant.exercise].names[0]
        found.append(Student(f"variant/{variant.exercise}/{variant.family}/{variant.name}", variant.exercise,
                             {name: variant.student}))
    return found


def outcome(result):
    return (result.status == PASSED, result.misconception, result.message)


def compare_student(student, vectors, lang):
    """(checks compared, disagreements) for one student in one language."""
    live = run_exercise(student.exercise, student.namespace, include_hidden=False, lang=lang)
    kit = run_public(student.exercise, student.namespace, vectors, lang)
    kit_by_id = {result.id: result for result in kit}
    disagreements = []
    for result in live:
        kit_result = kit_by_id.get(result.id)
        kit_outcome = outcome(kit_result) if kit_result is not None else ("missing from the kit",)
        if outcome(result) != kit_outcome:
            disagreements.append(Disagreement(student.label, result.id, lang, outcome(result), kit_outcome))
    if set(kit_by_id) - {result.id for result in live}:
        disagreements.append(Disagreement(student.label, "(extra checks in the kit)", lang, (), tuple(kit_by_id)))
    return len(live), disagreements


def measure(vectors, langs=("en", "zh")):
    """(checks compared, [Disagreement]) over every student and language."""
    total, disagreements = 0, []
    for student in students():
        for lang in langs:
            compared, found = compare_student(student, vectors, lang)
            total += compared
            disagreements += found
    return total, disagreements


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m devtools.student_kit_agreement",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--lang", choices=("en", "zh", "both"), default="both")
    args = parser.parse_args(argv)
    langs = ("en", "zh") if args.lang == "both" else (args.lang,)
    vectors = vectors_from_document(vectors_document())
    total, disagreements = measure(vectors, langs)
    for found in disagreements:
        print(f"✘ {found.student} [{found.check}, {found.lang}]\n    live: {found.live}\n    kit:  {found.kit}")
    agreeing = total - len(disagreements)
    print(f"student kit vs live public checks: {agreeing}/{total} agree ({100 * agreeing / max(total, 1):.1f} %), "
          f"{len(students())} students, languages {', '.join(langs)}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
