"""What a student's first cells do right after `from autograder import check`: torch's global setters.

Shared by tests/test_kit_never_races.py (the full kit, and the student kit's runtime in this checkout) and
tests/test_student_kit_venv.py (the built student kit, installed alone). The kit once imported torch internals in a
background thread, and `torch.use_deterministic_algorithms(True)` right after the import raced with it
(`_DeadlockError`, or `ImportError: ... partially initialized module torch._inductor.utils`).
"""

import subprocess
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

# Printed by the script when everything ran: the threads alive right after the import, then whether torch's
# internals were imported by the import alone.
SETTERS = textwrap.dedent("""
    import sys, threading
    import torch
    {import_check}
    threads = [thread.name for thread in threading.enumerate() if thread is not threading.main_thread()]
    internals = sorted(name for name in ("torch._dynamo", "torch._inductor") if name in sys.modules)
    torch.use_deterministic_algorithms(True)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.set_default_device("cpu")
    torch.set_grad_enabled(False)
    torch.backends.cudnn.deterministic = True
    torch.set_float32_matmul_precision("high")
    torch.use_deterministic_algorithms(False)
    print("ran", "threads=" + ",".join(threads), "internals=" + ",".join(internals))
""")


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def run_setters(python, import_check, runs, cwd=None, env=None, workers=2):
    """Run SETTERS in `runs` fresh interpreters (`workers` at a time: the race needs a busy import, not a quiet one)."""
    script = SETTERS.format(import_check=import_check)

    def once(_):
        completed = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=300,
                                   cwd=cwd, env=env, check=False)
        return Run(completed.returncode, completed.stdout.strip(), completed.stderr)

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(once, range(runs)))


def failures(runs):
    """The runs that did not print a clean line: a setter raised, a thread was left running, or internals imported."""
    return [run for run in runs if run.returncode != 0 or run.stdout != "ran threads= internals="]
