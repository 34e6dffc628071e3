"""How fast and how precise `attnkit similarity` is on a synthetic class: `python -m devtools.similarity_bench`.

    python -m devtools.similarity_bench [--n 3000] [--planted 10] [--keep DIR] [--libraries]

Writes a class of N students (devtools.similarity_class: honest students, `--planted` pairs of each planted kind,
as many honest book-copying pairs) under a temporary folder (or DIR), makes its grading records, then times one
`attnkit similarity` run on it (the same code as the command, in this process) and prints the time, the precision
of the top k (k = planted pairs), every planted pair's rank, and the highest honest score.

Grading records: grading 3,000 students takes the better part of an hour on 2 cores, and a student's wrong
outputs depend only on their mistake (the same wrong code gives the same outputs on the same hidden cases; a
right answer is never recorded). So one exemplar student per distinct mistake is graded for real with
`attnkit grade`, and every other student with that mistake gets the exemplar's record under their own id
(tests/test_similarity.py grades a whole class for real instead).

`--libraries` also measures the two libraries the task suggested (see README, "attnkit similarity"):
copydetect's fingerprinting per student and its all-pairs detector on a sample, extrapolated to N; and
datasketch's MinHash LSH on the fingerprint sets, against the inverted index attnkit uses.
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder.grading.classroom import grade_class
from autograder.isolation.limits import default_workers
from autograder.review.run import run_similarity
from devtools.similarity_class import build_class, mistakes_of, write_book, write_class


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m devtools.similarity_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=3000, help="students (default 3000)")
    parser.add_argument("--planted", type=int, default=10, help="planted pairs of each kind (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="write the class here and keep it")
    parser.add_argument("--libraries", action="store_true", help="also measure copydetect and datasketch")
    args = parser.parse_args(argv)
    if args.n < 6 * args.planted + 2 * args.planted + 2:
        parser.error("--n is too small for that many planted pairs")
    root = args.keep or Path(tempfile.mkdtemp(prefix="attnkit-similarity-bench-"))
    try:
        return _bench(args, root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def _bench(args, root):
    log = _log
    plan = build_class(args.n, args.seed, planted_per_kind=args.planted, book_pairs=args.planted)
    submitted, grades = root / "submitted", root / "grades"
    started = time.monotonic()
    write_class(plan, submitted)
    book = write_book(root / "book.py")
    log(f"wrote {args.n} students in {time.monotonic() - started:.1f} s under {root}")

    started = time.monotonic()
    exemplars = _exemplar_records(plan, submitted, root / "exemplars")
    for student_id, mistake in mistakes_of(plan).items():
        record = dict(exemplars[mistake], student_id=student_id)
        path = grades / "students" / f"{student_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record), encoding="utf-8")
    log(f"graded {len(exemplars)} exemplars (one per distinct mistake) and wrote {args.n} records in "
        f"{time.monotonic() - started:.1f} s")

    started = time.monotonic()
    run = run_similarity(submitted, root / "similarity", base=[book], grades_dir=grades, threshold=0.05,
                         log=lambda line: log(f"[{time.monotonic() - started:.0f} s] {line}"),
                         workers=default_workers())
    seconds = time.monotonic() - started
    _report(plan, run, seconds)
    if args.libraries:
        from devtools.similarity_libraries import measure_libraries

        measure_libraries(submitted, book, plan, log=print)
    return 0


def _exemplar_records(plan, submitted, folder):
    """{(mistake, constant): record} from grading one student of each with `attnkit grade`."""
    exemplar_of = {}
    for student_id, mistake in sorted(mistakes_of(plan).items()):
        exemplar_of.setdefault(mistake, student_id)
    class_dir = folder / "submitted"
    for student_id in exemplar_of.values():
        shutil.copytree(submitted / student_id, class_dir / student_id)
    summary = grade_class(class_dir, folder / "grades")
    by_id = {document["student_id"]: document for document in summary.documents}
    return {mistake: by_id[student_id] for mistake, student_id in exemplar_of.items()}


def _report(plan, run, seconds):
    analysis = run.analysis
    planted = {tuple(sorted(pair)): kind for kind, *pair in plan.planted}
    book = {tuple(sorted(pair)) for pair in plan.book_pairs}
    ranked = [(pair.student_a, pair.student_b) for pair in analysis.pairs]
    k = len(planted)
    top = ranked[:k]
    precision = sum(pair in planted for pair in top) / k if k else 1.0
    honest = [pair for pair in analysis.pairs if (pair.student_a, pair.student_b) not in planted]
    flagged = [pair for pair in analysis.pairs if pair.score >= 0.5]
    print(f"attnkit similarity on {analysis.students} students: {seconds:.1f} s "
          f"({analysis.candidates} candidate pairs scored of {analysis.students * (analysis.students - 1) // 2})")
    print(f"precision of the top {k} (k = planted pairs): {precision:.3f}")
    print(f"flagged at the default threshold 0.5: {len(flagged)} pairs, "
          f"{sum((p.student_a, p.student_b) in planted for p in flagged)} of them planted")
    for kind in ("verbatim", "renamed", "wrong_output"):
        ranks = [ranked.index(pair) + 1 if pair in ranked else None for pair, k_ in planted.items() if k_ == kind]
        print(f"  planted {kind}: ranks {sorted(r for r in ranks if r)}"
              + (f", {sum(r is None for r in ranks)} not scored" if None in ranks else ""))
    book_scores = [pair.score for pair in analysis.pairs if (pair.student_a, pair.student_b) in book]
    print(f"  honest book-copying pairs: highest score {max(book_scores, default=0.0):.3f} (flagged at >= 0.5)")
    print(f"  highest honest pair: {honest[0].score:.3f}" if honest else "  no honest pair scored")


def _log(line):
    print(f"similarity_bench: {line}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
