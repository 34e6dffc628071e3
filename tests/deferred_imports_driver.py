"""Run in a fresh interpreter by tests/test_deferred_imports.py: every student of the evaluation sets
(devtools.heldout_eval: held-out attempts, mutants, the variant grid) and the reference, probed (all checks), one JSON
line each: what every check's probe captured. `--imported` imports torch._dynamo, sympy and symbolic_shapes first, so
no stand-in of autograder.checking.deferred_imports is ever used: the two runs must print the same lines.

The stand-ins are entered only while a probe watches the meta device, and judging reads nothing but what the probes
captured, so equal captures are equal words; every SAMPLE_EVERY-th student is graded as well (previews and graded,
every field of every check), to show it. The last line says which of the three modules the run imported, and after
which student it first did."""

import argparse
import hashlib
import importlib
import json
import sys
from typing import Any

import torch

from autograder.running.runner import probe_exercise, run_exercise
from devtools import heldout_eval

DEFERRED = ("torch._dynamo", "sympy", "torch.fx.experimental.symbolic_shapes")
# Grading all 506 twice costs ~1,400 s of CPU on 2 cores (CI's 90 minutes); the probes of all of them ~75 s.
SAMPLE_EVERY = 8


def _plain(value: object) -> Any:
    """A captured value as JSON can say it: a tensor by its shape, dtype, device and a digest of its numbers."""
    if isinstance(value, torch.Tensor):
        numbers = "" if value.device.type == "meta" else hashlib.sha256(
            value.detach().cpu().contiguous().numpy().tobytes() if value.dtype != torch.bfloat16
            else value.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()
        return ["tensor", list(value.shape), str(value.dtype), value.device.type, numbers]
    return repr(value)


def captured(student: heldout_eval.Student) -> dict[str, list[dict[str, Any]]]:
    return probe_exercise(student.exercise, dict(student.namespace), include_hidden=True)


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
    graded = 0
    for position, student in enumerate(students):
        line: list[object] = [student.source, student.label, captured(student)]
        if position % SAMPLE_EVERY == 0:
            line.append(said(student))
            graded += 1
        print(json.dumps(line, default=_plain), flush=True)
        if first_import is None and any(name in sys.modules for name in DEFERRED):
            first_import = student.label
    print(json.dumps({"imported": [name for name in DEFERRED if name in sys.modules], "first": first_import,
                      "students": len(students), "graded": graded, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
