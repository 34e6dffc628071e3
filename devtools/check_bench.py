"""How long a public check takes in a warm kernel: `python -m devtools.check_bench [--repeat N]`.

Runs each exercise's public checks (what `check(...)` runs, table included) and all its checks
(what `grade(...)` runs) on the reference, after one warm-up call, and prints the median times.
The target for a public check is under 100 ms.
"""

import argparse
import statistics
import time

from attnkit import solutions
from autograder.course.exercises import EXERCISES
from autograder.running.rendering import table
from autograder.running.runner import run_exercise

TARGET_MS = 100.0


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed calls per exercise (default 15)")
    args = parser.parse_args(argv)
    rows = measure(args.repeat)
    print(f"{'exercise':<26}{'check() ms':>12}{'grade() ms':>12}")
    for exercise_id, public_ms, all_ms in rows:
        print(f"{exercise_id:<26}{public_ms:>12.1f}{all_ms:>12.1f}")
    slowest = max(rows, key=lambda row: row[1])
    verdict = "within" if slowest[1] < TARGET_MS else "OVER"
    print(f"slowest public check: {slowest[0]} {slowest[1]:.1f} ms — {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
