"""The student kit's first check in a fresh kernel: `python -m devtools.kit_first_check [--torch VERSION]`.

Builds the kit's wheel, installs it into a fresh venv beside the learner's torch (the project's release unless
--torch names another; from the package registries, linked from uv's cache), then, for every exercise, in FRESH_RUNS
fresh interpreters of that venv, as a release notebook runs: `import torch` (the learner's, not timed), `from
autograder import check` (the import cell's kit part, timed), the exercise's solved cells (not timed: the learner's
own code), and the first `check(exercise, ...)` (timed). Prints devtools.check_bench's table of medians, against its
targets (first check 0.3 s, import 0.5 s). The venv is removed unless --keep.
"""

import argparse
import importlib.metadata
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.course.exercises import EXERCISES
from autograder.integrations.student_kit.build import build_wheel
from devtools.check_bench import FIRST_CHECK_TARGET_S, FRESH_RUNS, first_check_table
from devtools.kit_torch_matrix import VENVS, kit_venv

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "student_kit_driver" / "agree_in_kit.py"

# Run in the kit's venv: what it reads of the project is the driver (standard library and torch only), as a file.
FIRST_CHECK = """
import contextlib, io, runpy, sys, time
repo, driver, exercise_id, notebook, names = sys.argv[1:]
import torch
started = time.perf_counter()
from autograder import check
imported = time.perf_counter()
cells = runpy.run_path(driver)
namespace = cells["run_cells"](cells["notebook_cells"](repo, notebook, True), notebook)
objects = [namespace[name] for name in names.split(",")]
ready = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as shown:
    check(exercise_id, *objects)
checked = time.perf_counter()
lazy = [name for name in ("torch._dynamo", "sympy") if name in sys.modules]
assert "\\u2718" not in shown.getvalue(), shown.getvalue()  # the solved code passes: the check ran in full
print(imported - started, checked - ready, ",".join(lazy) or "-")
"""


def first_check_rows(python: Path, scratch: Path) -> list[tuple[str, float, float, str]]:
    """Per exercise: median seconds of the import cell and of the first check, and the lazy modules it imported."""
    rows = []
    for exercise in EXERCISES:
        runs = []
        for _ in range(FRESH_RUNS):
            done = subprocess.run([str(python), "-c", FIRST_CHECK, str(REPO), str(DRIVER), exercise.id,
                                   exercise.notebook, ",".join(exercise.names)], capture_output=True, text=True,
                                  cwd=scratch, check=False)
            if done.returncode != 0:
                raise SystemExit(f"{exercise.id}: the fresh interpreter failed:\n{done.stderr[-3000:]}")
            import_s, check_s, lazy = done.stdout.split()
            runs.append((float(import_s), float(check_s), lazy))
        rows.append((exercise.id, statistics.median(run[0] for run in runs),
                     statistics.median(run[1] for run in runs), runs[-1][2]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", default=importlib.metadata.version("torch").split("+")[0],
                        help="the learner's torch release (default: the project's)")
    parser.add_argument("--keep", action="store_true", help="keep the venv (under .kit-venvs/)")
    args = parser.parse_args(argv)
    VENVS.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="first-check-", dir=VENVS))
    try:
        wheel = build_wheel(scratch / "dist")
        python = kit_venv(args.torch, scratch / "venv", wheel)
        rows = first_check_rows(python, scratch)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    version = subprocess.run([str(sys.executable), "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"the student kit in a fresh venv: torch {args.torch}, Python {version}, {FRESH_RUNS} fresh interpreters "
          "an exercise (medians)")
    print(first_check_table(rows))
    return 0 if max(row[2] for row in rows) <= FIRST_CHECK_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
