"""A fresh kernel's first check runs on the meta device without importing torch._dynamo, sympy or symbolic_shapes
(autograder.checking.deferred_imports), and nothing a check says changes for it.

The stand-ins answer only plain values, exactly as torch's own functions do; anything else imports the real module.
Each fresh-interpreter test runs what a new kernel runs; the equivalence test probes every student of the evaluation
sets (held-out attempts, mutants, the variant grid) in two fresh interpreters, one with the real modules imported
first, and compares what every check's probe captured, and for a sample of them every check's words and scores.
"""

import json
import os
import subprocess
import sys

import pytest
from deferred_imports_driver import DEFERRED  # the three modules, spelt once for both
from fresh_interpreter import fresh

from autograder.checking import deferred_imports
from autograder.checking.deferred_imports import PLAIN_AS_IS, PLAIN_CONSTANT, PLAIN_FOLDED, torch_imports_deferred


@pytest.mark.slow
def test_every_exercises_first_check_imports_none_of_them_and_passes_the_reference():
    assert fresh(f"""
        import io, sys, contextlib, torch
        from autograder import check
        from autograder.course.exercises import EXERCISES
        from attnkit import solutions
        failed = []
        for exercise in EXERCISES:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                check(exercise.id, *(getattr(solutions, name) for name in exercise.names))
            if "✘" in out.getvalue() or "✔" not in out.getvalue():
                failed.append(exercise.id)
        print(len(EXERCISES), failed, [name for name in {DEFERRED!r} if name in sys.modules])
    """) == ["17", "[]", "[]"]


@pytest.mark.slow
def test_torch_is_left_as_it_was_the_next_meta_op_imports_dynamo_as_torch_would():
    # Had a stand-in's answer stayed cached on a kernel, the op after the block would not import torch._dynamo.
    assert fresh("""
        import sys, torch
        from autograder.checking.deferred_imports import torch_imports_deferred
        x = torch.ones(2, 3, device="meta")
        with torch_imports_deferred():
            y = (x / 2.0).exp().triu()
        stand_ins = [name for name, module in sys.modules.items() if type(module).__name__.endswith("StandIn")]
        print(y.shape == x.shape, stand_ins)
        print("torch._dynamo" in sys.modules)
        z = x / 3.0
        print("torch._dynamo" in sys.modules, type(sys.modules["torch._dynamo"]).__name__)
    """) == ["True", "[]", "False", "True", "module"]


@pytest.mark.slow
def test_anything_else_asked_of_a_stand_in_is_the_real_modules_answer():
    assert fresh(f"""
        import sys, torch
        from autograder.checking.deferred_imports import torch_imports_deferred
        with torch_imports_deferred():
            import sympy
            print(sympy.Symbol("n") + 1)
            import torch._dynamo.utils
            print(torch._dynamo.config.__name__)
            from torch.fx.experimental import symbolic_shapes
            try:
                symbolic_shapes.guard_or_false(3)
            except AssertionError as error:
                print(type(error).__name__)
        print(all(type(sys.modules[name]).__name__ == "module" for name in {DEFERRED!r}))
    """) == ["n", "+", "1", "torch._dynamo.config", "AssertionError", "True"]


PLAIN_VALUES = (True, False, 0, 1, 3, 2.5, [1, 2], (1, (2, 3)), [], None)


def _answer(function, *args):
    try:
        return ("value", function(*args))
    except Exception as error:  # noqa: BLE001 - the error is the answer compared
        return ("error", type(error).__name__)


@pytest.mark.filterwarnings("ignore:guard_size_oblivious:FutureWarning")  # torch 2.13 warns of its own function
def test_the_stand_ins_answers_are_torchs_own_on_plain_values():
    from torch.fx.experimental import symbolic_shapes

    stand_in = deferred_imports._SymbolicShapesStandIn()
    names = (*PLAIN_AS_IS, *PLAIN_CONSTANT)
    for name in names:
        for value in PLAIN_VALUES:
            assert _answer(getattr(stand_in, name), value) == _answer(getattr(symbolic_shapes, name), value), (name,
                                                                                                            value)
    for name in (*PLAIN_FOLDED, "sym_eq"):
        for first in PLAIN_VALUES:
            for second in PLAIN_VALUES:
                assert (_answer(getattr(stand_in, name), first, second)
                        == _answer(getattr(symbolic_shapes, name), first, second)), (name, first, second)


def test_the_dynamo_stand_in_hands_back_the_kernel_and_the_block_changes_nothing_when_they_are_imported():
    import torch._dynamo  # noqa: F401 - imported: the block must leave sys.modules alone

    def kernel():
        return 7

    assert deferred_imports._DynamoStandIn().disable(kernel, recursive=False) is kernel
    before = {name: sys.modules[name] for name in DEFERRED if name in sys.modules}
    with torch_imports_deferred():
        assert {name: sys.modules.get(name) for name in before} == before


@pytest.mark.slow
def test_every_student_of_the_evaluation_sets_is_told_the_same_with_and_without_the_stand_ins(tmp_path):
    flags = ((), ("--imported",))
    outputs = {flag: tmp_path / f"said{len(flag)}.jsonl" for flag in flags}  # files: a full pipe would stall a run
    processes = {}
    runs = {}
    try:
        for flag in flags:
            with open(outputs[flag], "w", encoding="utf-8") as stdout:
                processes[flag] = subprocess.Popen([sys.executable, "-m", "tests.deferred_imports_driver", *flag],
                                                   stdout=stdout, stderr=subprocess.PIPE, text=True)
        for flag, process in processes.items():
            # ~150 s of CPU each, side by side beside the other pytest worker; the limit only guards against a hang.
            _, stderr = process.communicate(timeout=1200)
            assert process.returncode == 0, stderr[-3000:]
            *lines, summary = outputs[flag].read_text(encoding="utf-8").splitlines()
            runs[flag] = (lines, json.loads(summary))
    finally:  # a run that failed or ran out of time must not go on taking a core from the rest of the suite
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    (deferred, deferred_summary), (imported, imported_summary) = runs[()], runs[("--imported",)]
    assert deferred_summary["students"] == imported_summary["students"] >= 400
    assert deferred_summary["graded"] == imported_summary["graded"] >= 50
    assert deferred_summary["imported"] == [], deferred_summary  # the stand-ins answered for every student
    different = [(a, b) for a, b in zip(deferred, imported, strict=True) if a != b]
    if different:
        a, b = different[0]
        at = len(os.path.commonprefix([a, b]))
        pytest.fail(f"{len(different)} students told something else; the first from character {at}:\n"
                    f"{a[:120]}\n{a[max(at - 100, 0):at + 200]}\n{b[max(at - 100, 0):at + 200]}")
