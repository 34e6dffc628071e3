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
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.classroom import grade_class
from autograder.isolation.limits import default_workers
from autograder.review.run import run_similarity
from autograder.review.similarity import FLAG_THRESHOLD
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


@dataclass(frozen=True)
class BenchResult:
    """One run of `attnkit similarity` on a synthetic class, measured against its plan."""

    students: int
    seconds: float  # the similarity run alone
    candidates: int  # pairs scored
    planted_ranks: dict  # kind -> sorted ranks of its planted pairs (None: not scored)
    flagged: int  # pairs at or above the default threshold
    flagged_planted: int
    highest_honest: float  # the best score of a pair that is not planted (0 when none was scored)
    highest_book_pair: float  # the best score of the honest pairs that both copy the book

    @property
    def planted(self):
        return sum(len(ranks) for ranks in self.planted_ranks.values())

    @property
    def flagged_honest(self):
        return self.flagged - self.flagged_planted

    @property
    def planted_on_top(self):
        """Every planted pair ranks above every honest pair (ranks 1..k, k = planted pairs)."""
        ranks = sorted(rank for ranks in self.planted_ranks.values() for rank in ranks if rank is not None)
        return ranks == list(range(1, self.planted + 1))


def measure(n, root, seed=0, planted=10, log=None):
    """Write a class of `n` students under `root`, make its grading records, run `attnkit similarity` on it."""
    log = log or (lambda line: None)
    plan = build_class(n, seed, planted_per_kind=planted, book_pairs=planted)
    submitted, grades = root / "submitted", root / "grades"
    started = time.monotonic()
    write_class(plan, submitted)
    book = write_book(root / "book.py")
    log(f"wrote {n} students in {time.monotonic() - started:.1f} s under {root}")

    started = time.monotonic()
    exemplars = _exemplar_records(plan, submitted, root / "exemplars")
    for student_id, mistake in mistakes_of(plan).items():
        record = dict(exemplars[mistake], student_id=student_id)
        path = grades / "students" / f"{student_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record), encoding="utf-8")
    log(f"graded {len(exemplars)} exemplars (one per distinct mistake) and wrote {n} records in "
        f"{time.monotonic() - started:.1f} s")

    started = time.monotonic()
    run = run_similarity(submitted, root / "similarity", base=[book], grades_dir=grades, threshold=0.05,
                         log=lambda line: log(f"[{time.monotonic() - started:.0f} s] {line}"),
                         workers=default_workers())
    seconds = time.monotonic() - started
    analysis = run.analysis
    kinds = {tuple(sorted(pair)): kind for kind, *pair in plan.planted}
    book_pairs = {tuple(sorted(pair)) for pair in plan.book_pairs}
    ranked = [(pair.student_a, pair.student_b) for pair in analysis.pairs]
    rank_of = {pair: rank for rank, pair in enumerate(ranked, 1)}
    planted_ranks = {kind: sorted((rank_of.get(pair) for pair, kind_ in kinds.items() if kind_ == kind),
                                  key=lambda rank: (rank is None, rank or 0))
                     for kind in ("verbatim", "renamed", "wrong_output")}
    flagged = [pair for pair in analysis.pairs if pair.score >= FLAG_THRESHOLD]
    honest = [pair.score for pair in analysis.pairs if (pair.student_a, pair.student_b) not in kinds]
    return BenchResult(
        students=analysis.students, seconds=seconds, candidates=analysis.candidates, planted_ranks=planted_ranks,
        flagged=len(flagged), flagged_planted=sum((p.student_a, p.student_b) in kinds for p in flagged),
        highest_honest=max(honest, default=0.0),
        highest_book_pair=max((p.score for p in analysis.pairs if (p.student_a, p.student_b) in book_pairs),
                              default=0.0))


def _bench(args, root):
    result = measure(args.n, root, args.seed, args.planted, log=_log)
    _report(result)
    if args.libraries:
        from devtools.similarity_libraries import measure_libraries

        plan = build_class(args.n, args.seed, planted_per_kind=args.planted, book_pairs=args.planted)
        measure_libraries(root / "submitted", root / "book.py", plan, log=print)
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


def _report(result):
    pairs = result.students * (result.students - 1) // 2
    print(f"attnkit similarity on {result.students} students: {result.seconds:.1f} s "
          f"({result.candidates} candidate pairs scored of {pairs})")
    print(f"every planted pair above every honest pair: {'yes' if result.planted_on_top else 'no'}")
    print(f"flagged at the default threshold {FLAG_THRESHOLD}: {result.flagged} pairs, {result.flagged_planted} of "
          f"the {result.planted} planted, {result.flagged_honest} honest")
    for kind, ranks in result.planted_ranks.items():
        scored = [rank for rank in ranks if rank is not None]
        missing = len(ranks) - len(scored)
        print(f"  planted {kind}: ranks {scored}" + (f", {missing} not scored" if missing else ""))
    print(f"  honest book-copying pairs: highest score {result.highest_book_pair:.3f}")
    print(f"  highest honest pair: {result.highest_honest:.3f}")


def _log(line):
    print(f"similarity_bench: {line}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
