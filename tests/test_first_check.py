"""A fresh kernel's first check(...) does not wait for torch's one-time imports.

torch imports torch._dynamo (most of a second) the first time a dispatch mode's __torch_dispatch__ runs, the first
time deterministic algorithms are switched, and on the first op on the meta device. The recorders opt out of the
first (UncompiledDispatchMode), the grader's torch settings touch the second only when a cell switched it on, and
importing `check` pays the third in a background thread while the student reads. Each test runs in a fresh
interpreter: what counts is what a new kernel imports.
"""

import subprocess
import sys
import textwrap


def fresh(code):
    process = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                             timeout=300, check=False)
    assert process.returncode == 0, process.stderr
    return process.stdout.split()


def test_recording_calls_and_ops_imports_no_dynamo():
    assert fresh("""
        import sys, torch
        import solutions
        from autograder.checking.probing import called_functions, grader_torch_state
        with grader_torch_state():
            called_functions(solutions.softmax_naive, torch.tensor([1.0, 2.0, 3.0]))
        print("torch._dynamo" in sys.modules)
    """) == ["False"]


def test_importing_check_warms_the_meta_device_up_in_the_background():
    assert fresh("""
        import sys, threading, torch
        from autograder import check  # noqa: F401
        warm_up = [thread for thread in threading.enumerate() if thread.name == "attnkit-warm-up"]
        for thread in warm_up:
            thread.join()
        print(len(warm_up), "torch._dynamo" in sys.modules)
    """) == ["1", "True"]
