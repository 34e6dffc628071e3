"""A fresh kernel's first check(...) waits for none of torch's one-time imports it does not need.

torch imports torch._dynamo (most of a second) the first time a dispatch mode's __torch_dispatch__ runs, the first
time deterministic algorithms are switched, and on the first op on the meta device, with sympy (half a second) for
the meta kernels' type promotion and shape checks. The recorders opt out of the first (UncompiledDispatchMode), the
grader's torch settings touch the second only when a cell switched it on, and the probes on the meta device run with
stand-ins for those modules (autograder.checking.deferred_imports, tests/test_deferred_imports.py). Each test runs
in a fresh interpreter: what counts is what a new kernel imports.
"""

import pytest
from fresh_interpreter import fresh


@pytest.mark.slow
def test_recording_calls_and_ops_imports_no_dynamo():
    assert fresh("""
        import sys, torch
        from attnkit import solutions
        from autograder.checking.probing import grader_torch_state
        from autograder.checking.torch_recorders import called_functions
        with grader_torch_state():
            called_functions(solutions.softmax_naive, torch.tensor([1.0, 2.0, 3.0]))
        print("torch._dynamo" in sys.modules)
    """) == ["False"]


@pytest.mark.slow
def test_importing_check_starts_nothing_and_the_first_meta_check_imports_neither_dynamo_nor_sympy():
    # Nothing runs in the background of a student's kernel (tests/test_kit_never_races.py), and the first check that
    # runs on the meta device imports neither module in the student's own thread either, and is right.
    assert fresh("""
        import io, sys, threading, contextlib, torch
        from autograder import check
        from attnkit import solutions
        print(threading.active_count(), "torch._dynamo" in sys.modules)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            check("self_attention_v1", solutions.SelfAttention_v1)
        print("torch._dynamo" in sys.modules, "sympy" in sys.modules, "✘" in out.getvalue())
    """) == ["1", "False", "False", "False", "False"]


@pytest.mark.slow
def test_the_import_cell_leaves_torchs_heap_out_of_the_collectors_walks():
    """`from autograder import check` freezes the heap the import cell made (notebook_runtime.kernel_heap_settled):
    the first check does not pay for the cyclic collector's first full walk of torch's objects (issue 59). The
    notebook's own objects made afterwards are collected as before."""
    said = fresh("""
        import gc, torch
        before = gc.get_freeze_count()
        from autograder import check
        frozen = gc.get_freeze_count()
        class Cycle:
            pass
        made = Cycle(); made.me = made
        del made
        print(before, frozen > 100_000, gc.collect() >= 1)
    """)
    assert said == ["0", "True", "True"]
