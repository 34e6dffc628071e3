"""The `attnkit similarity` command line: arguments checked, progress on stderr, one summary line."""

import sys
import time

from autograder.progress import Progress
from autograder.similarity import FLAG_THRESHOLD
from autograder.similarity_inputs import InputError
from autograder.similarity_run import run_similarity


def similarity_command(args, options_of, usage_error):
    """Run `attnkit similarity` for parsed `args`; `usage_error` is the CLI's exit-2 exception."""
    threshold = FLAG_THRESHOLD if args.threshold is None else args.threshold
    if not 0.0 < threshold <= 1.0:
        raise usage_error("--threshold must be in (0, 1]")
    if not args.submitted.is_dir():
        raise usage_error(f"no such directory: {args.submitted}")
    if args.grades is not None and not (args.grades / "students").is_dir():
        raise usage_error(f"--grades {args.grades}: no students/ folder (is it an `attnkit grade` output?)")
    out, submitted = args.out.resolve(), args.submitted.resolve()
    if out == submitted or submitted in out.parents:
        raise usage_error("--out must not be inside SUBMITTED_DIR")
    options = options_of(args)

    started = time.monotonic()

    def log(line):
        print(f"attnkit similarity: [{time.monotonic() - started:.0f} s] {line}", file=sys.stderr, flush=True)

    def grade(submitted_dir, grades_dir):
        from autograder.batch import grade_class

        progress = Progress(sys.stderr)
        try:
            summary = grade_class(submitted_dir, grades_dir, options, progress)
        finally:
            progress.finish()
        log(f"graded {len(summary.students)} students ({len(summary.graded)} graded, {len(summary.skipped)} "
            f"unchanged) in {summary.seconds:.1f} s")

    try:
        run = run_similarity(args.submitted, args.out, base=args.base, grades_dir=args.grades, grade=grade,
                             progress=Progress(sys.stderr), log=log, threshold=threshold,
                             workers=options.limits.workers)
    except InputError as problem:
        raise usage_error(str(problem)) from None
    for note in run.analysis.notes:
        log(note)
    log(f"{run.analysis.students} students, {run.analysis.candidates} candidate pairs scored, "
        f"{len(run.analysis.pairs)} flagged in {run.seconds:.1f} s; {run.csv}, {run.html} "
        "(evidence for a human to read, never a verdict)")
    return 0
