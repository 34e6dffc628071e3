"""How long a public check takes: `python -m devtools.check_bench [--repeat N] [--pictures] [--first]`.

Runs each exercise's public checks (what `check(...)` runs, table included) and all its checks
(what `grade(...)` runs) on the reference, after one warm-up call, and prints the median times.
The target for a public check is under 100 ms.

`--first` prints, per exercise, what a fresh kernel pays, as a release notebook's first cell runs it after
`import torch`: `from autograder import check` (target 0.5 s), the first check(...) on the reference (target 0.3 s),
and which of torch's lazy modules (torch._dynamo, sympy) it imported; the median of FRESH_RUNS fresh interpreters.

Then the first picture a failed check draws, in a fresh process (a kernel's first failing check): the heatmap as
matplotlib drew it before (its import included) against autograder.checking.pictures' SVG, both in this run, and
their ratio. The target for the first picture is under 0.5 s. `--pictures` prints that line only.
"""

import argparse
import statistics
import subprocess
import sys
import time

from attnkit import solutions
from autograder.course.exercises import EXERCISES
from autograder.running.rendering import table
from autograder.running.runner import run_exercise

TARGET_MS = 100.0
PICTURE_TARGET_S = 0.5
FRESH_RUNS = 3  # fresh processes per renderer: the median is printed

# Before the timer: what a kernel holds by the time a check fails (torch, the catalogue, a failed mask's tensors).
PICTURE_SETUP = """
import time
import torch
from autograder.course.messages import MESSAGES
expected = torch.ones(6, 6, dtype=torch.bool).triu(1)
got = torch.ones(6, 6, dtype=torch.bool).triu()
"""
# The heatmap as autograder.checking.feedback drew it with matplotlib until the pictures became SVG: the baseline.
MATPLOTLIB_PICTURE = """
start = time.perf_counter()
import io
from matplotlib.figure import Figure
figure = Figure(figsize=(7, 3.2))
for index, (matrix, title) in enumerate(((expected, "expected"), (got, "yours"))):
    axis = figure.add_subplot(1, 2, index + 1)
    image = axis.imshow(matrix.float().numpy(), cmap="viridis", vmin=0.0, vmax=1.0)
    axis.set_title(title)
    axis.set_xlabel("key")
    axis.set_ylabel("query")
    figure.colorbar(image, ax=axis, fraction=0.046)
figure.tight_layout()
buffer = io.BytesIO()
figure.savefig(buffer, format="png", dpi=90)
print(time.perf_counter() - start)
"""
SVG_PICTURE = """
start = time.perf_counter()
from autograder.checking.pictures import heatmap_svg
heatmap_svg(expected, got, MESSAGES, "zh")
print(time.perf_counter() - start)
"""


FIRST_CHECK_TARGET_S = 0.3
IMPORT_TARGET_S = 0.5
FIRST_CHECK = """
import contextlib, io, sys, time
import torch
from attnkit import solutions
started = time.perf_counter()
from autograder import check
imported = time.perf_counter()
objects = [getattr(solutions, name) for name in {names!r}]
with contextlib.redirect_stdout(io.StringIO()):
    check({exercise_id!r}, *objects)
checked = time.perf_counter()
lazy = [name for name in ("torch._dynamo", "sympy") if name in sys.modules]
print(imported - started, checked - imported, ",".join(lazy) or "-")
"""


def first_check_rows():
    """Per exercise: median seconds of the import and of the first check in fresh interpreters, and what it imported."""
    rows = []
    for exercise in EXERCISES:
        runs = []
        for _ in range(FRESH_RUNS):
            code = FIRST_CHECK.format(names=list(exercise.names), exercise_id=exercise.id)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            import_s, check_s, lazy = done.stdout.split()
            runs.append((float(import_s), float(check_s), lazy))
        rows.append((exercise.id, statistics.median(run[0] for run in runs), statistics.median(run[1] for run in runs),
                     runs[-1][2]))
    return rows


def first_check_table(rows):
    lines = [f"{'exercise':<26}{'import s':>10}{'first check s':>15}  lazy imports"]
    lines += [f"{exercise_id:<26}{import_s:>10.3f}{check_s:>15.3f}  {lazy}"
              for exercise_id, import_s, check_s, lazy in rows]
    slowest_import = max(row[1] for row in rows)
    slowest = max(rows, key=lambda row: row[2])
    lines.append(f"slowest import {slowest_import:.3f} s ({'within' if slowest_import <= IMPORT_TARGET_S else 'OVER'} "
                 f"{IMPORT_TARGET_S} s); slowest first check: {slowest[0]} {slowest[2]:.3f} s "
                 f"({'within' if slowest[2] <= FIRST_CHECK_TARGET_S else 'OVER'} {FIRST_CHECK_TARGET_S} s)")
    return "\n".join(lines)


def median_ms(action, repeat):
    action()  # warm-up: first calls pay for lazy imports and allocator growth
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)


def measure(repeat):
    rows = []
    for exercise in EXERCISES:
        namespace = {name: getattr(solutions, name) for name in exercise.names}

        def public(exercise_id=exercise.id, namespace=namespace):
            results = run_exercise(exercise_id, namespace, include_hidden=False, lang="en")
            return table(exercise_id, results, "en", hidden=False)

        def everything(exercise_id=exercise.id, namespace=namespace):
            return run_exercise(exercise_id, namespace, lang="en")

        rows.append((exercise.id, median_ms(public, repeat), median_ms(everything, repeat)))
    return rows


def first_picture_s(drawing):
    """Median seconds, over FRESH_RUNS fresh processes, from a failed check's tensors to the picture's bytes."""
    timings = []
    for _ in range(FRESH_RUNS):
        done = subprocess.run([sys.executable, "-c", PICTURE_SETUP + drawing], capture_output=True, text=True,
                              check=True)
        timings.append(float(done.stdout.split()[-1]))
    return statistics.median(timings)


def picture_line():
    old, new = first_picture_s(MATPLOTLIB_PICTURE), first_picture_s(SVG_PICTURE)
    verdict = "within" if new < PICTURE_TARGET_S else "OVER"
    return (f"first picture in a fresh process: matplotlib {old:.3f} s, SVG {new:.3f} s, ratio {old / new:.0f}x "
            f"— {verdict} the {PICTURE_TARGET_S} s target")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed calls per exercise (default 15)")
    parser.add_argument("--pictures", action="store_true", help="time the first picture only")
    parser.add_argument("--first", action="store_true", help="time the import and each exercise's first check, "
                        "in fresh interpreters, only")
    args = parser.parse_args(argv)
    if args.pictures:
        print(picture_line())
        return
    if args.first:
        print(first_check_table(first_check_rows()))
        return
    rows = measure(args.repeat)
    print(f"{'exercise':<26}{'check() ms':>12}{'grade() ms':>12}")
    for exercise_id, public_ms, all_ms in rows:
        print(f"{exercise_id:<26}{public_ms:>12.1f}{all_ms:>12.1f}")
    slowest = max(rows, key=lambda row: row[1])
    verdict = "within" if slowest[1] < TARGET_MS else "OVER"
    print(f"slowest public check: {slowest[0]} {slowest[1]:.1f} ms — {verdict} the {TARGET_MS:.0f} ms target")
    print(picture_line())


if __name__ == "__main__":
    main()
