"""The review stage's entry, what `attnkit similarity` calls (README, "Public API")."""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from autograder.grading.api import grade_classroom
from autograder.grading.notebooks import Options
from autograder.grading.progress import Progress
from autograder.refusal import Refused
from autograder.review.inputs import InputError
from autograder.review.run import SimilarityRun, run_similarity

__all__ = ["find_similar_work"]


def find_similar_work(submitted_dir: Path, out_dir: Path, *, base: Sequence[Path], grades_dir: Path | None,
                      threshold: float | None, options: Options, progress_to: TextIO,
                      log: Callable[[str], None]) -> SimilarityRun:
    """Pairs of students whose code or wrong outputs look copied, in OUT_DIR/similarity.csv and .html: evidence
    for a human, never a verdict (`attnkit similarity`). Without `grades_dir`, the class is graded first into
    OUT_DIR/grades (progress bars on `progress_to`). `log(line)` is told each step. Raises
    autograder.refusal.Refused when it cannot run."""

    def grade(submitted: Path, grades: Path) -> None:
        summary = grade_classroom(submitted, grades, options, progress_to=progress_to)
        log(f"graded {len(summary.students)} students ({len(summary.graded)} graded, {len(summary.skipped)} "
            f"unchanged) in {summary.seconds:.1f} s")

    try:
        return run_similarity(submitted_dir, out_dir, base=base, grades_dir=grades_dir, grade=grade,
                              progress=Progress(progress_to), log=log, threshold=threshold,
                              workers=options.limits.workers)
    except InputError as problem:
        raise Refused(str(problem)) from None

