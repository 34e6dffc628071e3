"""`python -m autograder.demo` (`make demo`): a real nbgrader round trip in a throwaway course.

Two students hand in the attention assignment:
  solved     the source notebooks themselves, solutions intact   -> expected 100 points
  untouched  the committed release/attention/, stubs not filled  -> expected 0 points
nbgrader autogrades both; the demo prints each step with its elapsed time, then the scores. It exits
non-zero when a total is not the expected one. `--keep DIR` keeps the course directory for a look
at nbgrader's autograded notebooks, feedback HTML and grades CSV.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from autograder import course
from autograder.exercises import EXERCISES, NOTEBOOKS

# student id -> (where the notebooks come from, expected total)
SOLVED = "solved"
UNTOUCHED = "untouched"


def _max_points():
    points = {notebook: 0 for notebook in NOTEBOOKS}
    for exercise in EXERCISES:
        points[exercise.notebook] += exercise.points
    return points


def score_table(scores, expected_totals):
    """The scores as a plain-text table, one row per student, one column per notebook."""
    max_points = _max_points()
    header = ["student", *(f"{notebook[:2]} /{points}" for notebook, points in max_points.items()),
              f"total /{sum(max_points.values())}", "expected"]
    rows = [header]
    for student, expected in expected_totals.items():
        notebooks = scores.get(student, {})
        cells = [f"{notebooks[nb]:g}" if nb in notebooks else "-" for nb in max_points]
        total = sum(notebooks.values())
        rows.append([student, *cells, f"{total:g}", f"{expected:g}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def run(workdir, repo_root=None, keep=False):
    """The round trip in `workdir`; returns True when both totals are the expected ones."""
    start = time.monotonic()

    def step(message):
        print(f"[{time.monotonic() - start:6.1f}s] {message}", flush=True)

    repo = course.default_repo_root() if repo_root is None else Path(repo_root)
    committed_release = repo / "release" / course.ASSIGNMENT

    step(f"building a course in {workdir}")
    course_root = course.make_course(Path(workdir) / "course", repo)
    step(f"nbgrader generate_assignment {course.ASSIGNMENT}")
    course.generate_release(course_root)
    step(f"submitting '{SOLVED}' (source/{course.ASSIGNMENT}/, solutions intact) "
         f"and '{UNTOUCHED}' (release/{course.ASSIGNMENT}/ as handed out)")
    course.submit(course_root, SOLVED, course_root / "source" / course.ASSIGNMENT)
    course.submit(course_root, UNTOUCHED, committed_release)
    step(f"nbgrader autograde {course.ASSIGNMENT} (runs {2 * len(NOTEBOOKS)} notebooks)")
    course.autograde(course_root)
    step(f"nbgrader generate_feedback {course.ASSIGNMENT}")
    feedback = course.generate_feedback(course_root)
    step("nbgrader export")
    grades_csv = course.export_grades(course_root)
    scores = course.read_scores(course_root)
    step("done")

    expected = {SOLVED: 100, UNTOUCHED: 0}
    print()
    print(score_table(scores, expected))
    print()
    if keep:
        print(f"course:   {course_root}\nfeedback: {feedback}\ngrades:   {grades_csv}")
    return all(sum(scores.get(student, {}).values()) == total for student, total in expected.items())


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the course in DIR (must not hold one yet) and keep it")
    args = parser.parse_args(argv)
    try:
        if args.keep is not None:
            ok = run(args.keep.resolve(), keep=True)
        else:
            with tempfile.TemporaryDirectory(prefix="attnkit-demo-") as workdir:
                ok = run(workdir)
                print("(temporary course removed; use --keep DIR to keep it)")
    except (course.NbgraderError, OSError, ValueError) as error:
        print(f"demo failed: {error}", file=sys.stderr)
        return 1
    if not ok:
        print("demo: a total differs from the expected one", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
