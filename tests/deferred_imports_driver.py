"""Run in a fresh interpreter by tests/test_deferred_imports.py: every student of the evaluation sets
(devtools.heldout_eval: held-out attempts, mutants, the variant grid) and the reference, graded (public and all
checks), one JSON line each: what every check said. `--imported` imports torch._dynamo, sympy and symbolic_shapes
first, so no stand-in of autograder.checking.deferred_imports is ever used: the two runs must print the same lines.
The last line says which of the three modules the run imported, and after which student it first did."""

import argparse
import importlib
import json
import sys

import torch

from autograder.running.runner import run_exercise
from devtools import heldout_eval

DEFERRED = ("torch._dynamo", "sympy", "torch.fx.experimental.symbolic_shapes")


def said(student: heldout_eval.Student) -> list[list[object]]:
    lines = []
    for include_hidden in (False, True):
        for result in run_exercise(student.exercise, dict(student.namespace), lang="en",
                                   include_hidden=include_hidden):
            lines.append([result.id, result.status, result.score, result.misconception, result.message,
                          result.details, result.question, result.mistake, result.wrong_outputs])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--imported", action="store_true")
    args = parser.parse_args()
    if args.imported:
        for name in DEFERRED:
            importlib.import_module(name)
    first_import = None
    students = [student for make in heldout_eval.STUDENTS.values() for student in make()]
    for student in students:
        print(json.dumps([student.source, student.label, said(student)], default=str), flush=True)
        if first_import is None and any(name in sys.modules for name in DEFERRED):
            first_import = student.label
    print(json.dumps({"imported": [name for name in DEFERRED if name in sys.modules], "first": first_import,
                      "students": len(students), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
