"""The grading stage's entries, what `attnkit check`, `attnkit grade` and `attnkit merge` call (README, "Public
API"): each takes paths and options and returns what was done; the command line only prints it. Each raises
autograder.refusal.Refused when grading cannot happen at all."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from autograder.grading.classroom import ClassSummary, grade_class
from autograder.grading.notebooks import GRADED, NotebookInput, NotebookResult, Options, grade_notebooks
from autograder.grading.progress import Progress
from autograder.grading.regrade import RegradeSummary, regrade_exercises
from autograder.grading.shards import MergeSummary, Shard, ShardError, merge, shard_argument
from autograder.outputs.documents import StudentDocument
from autograder.refusal import Refused
from autograder.safe_text import clean


@dataclass(frozen=True)
class NotebookCheck:
    """`attnkit check`'s outcome: one result per notebook, in the order given, and the protections this kernel
    lacked."""

    results: list[NotebookResult]
    isolation_notes: list[str]

    @property
    def score(self) -> float:
        return sum(result.score for result in self.results)

    @property
    def max_score(self) -> float:
        return sum(result.max_score for result in self.results)

    def report_lines(self) -> list[str]:
        """The lines for the terminal: per notebook its score, a line per failed check and its notes; the total
        when there are several. Messages and notes can quote student code: each line is cleaned, so no control
        sequence of the student's reaches the terminal."""
        lines = report_lines(self.results)
        if len(self.results) > 1:
            lines.append(f"total: {self.score:g}/{self.max_score:g}")
        return lines

    def as_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (`attnkit check --json`)."""
        keys = ("id", "score", "max_score", "status", "misconception")
        return {
            "score": self.score,
            "max_score": self.max_score,
            "notebooks": [
                {
                    "path": result.path,
                    "notebook": result.notebook,
                    "score": result.score,
                    "max_score": result.max_score,
                    "checks": [{**{key: getattr(check, key) for key in keys}, "message": check.full_message}
                               for check in result.checks],
                    "notes": list(result.notes),
                }
                for result in self.results
            ],
        }


def report_lines(results: Sequence[NotebookResult]) -> list[str]:
    """Per notebook its score, a line per failed check and its notes, each line cleaned for the terminal."""
    lines = []
    for result in results:
        lines.append(f"{result.path}: {result.score:g}/{result.max_score:g}")
        for check in result.checks:
            if check.status != "passed":  # the symptom, then the hint ladder's lines under it
                symptom, *ladder = check.full_message.split("\n")
                lines.append(f"  ✘ [{check.id}] {symptom}")
                lines.extend(f"      {line}" for line in ladder)
        lines.extend(f"  · {note}" for note in result.notes)
    return [clean(line) for line in lines]


def check_notebooks(paths: Sequence[Path], options: Options) -> NotebookCheck:
    """Grade loose notebooks with every check, hidden included (`attnkit check`): the folders holding them are
    kept from student code too. Refused when a notebook cannot be read or placed, before any is graded."""

    def refuse_unreadable(result: NotebookResult) -> None:
        # grade_notebooks reports a notebook it cannot read (or place) while planning, before grading any
        if result.status != GRADED:
            raise Refused(f"cannot grade {result.path}: {result.reason}")

    inputs = [NotebookInput(str(path), path) for path in paths]
    blocked = tuple(path.resolve().parent for path in paths)
    options = Options(limits=options.limits, seed=options.seed, lang=options.lang,
                      blocked=(*options.blocked, *dict.fromkeys(blocked)))
    grading = grade_notebooks(inputs, options, on_result=refuse_unreadable)
    return NotebookCheck(grading.results, grading.isolation_notes)


def mean_score(documents: Sequence[StudentDocument]) -> float:
    """The class's mean total (0 for no student)."""
    totals = [document["score"] for document in documents]
    return sum(totals) / len(totals) if totals else 0.0


def grade_classroom(submitted_dir: Path, out_dir: Path, options: Options, *, progress_to: TextIO,
                    shard: Shard | None = None) -> ClassSummary:
    """Grade a class in nbgrader's layout, SUBMITTED_DIR/<student>/attention/*.ipynb (the students of `shard`
    only, if given), into `out_dir`: grades.csv, per-student JSON and feedback pages, the class report
    (`attnkit grade`), with a progress bar on `progress_to`. Resumable: a student whose submission is unchanged
    since the last run is skipped. Raises autograder.outputs.disk.OutputDiskFull when that disk fills up."""
    if not submitted_dir.is_dir():
        raise Refused(f"no such directory: {submitted_dir}")
    if out_dir.resolve() == submitted_dir.resolve() or submitted_dir.resolve() in out_dir.resolve().parents:
        raise Refused("--out must not be inside SUBMITTED_DIR")
    progress = Progress(progress_to)
    try:
        return grade_class(submitted_dir, out_dir, options, progress, shard=shard)
    except ShardError as problem:
        raise Refused(str(problem)) from None
    finally:
        progress.finish()


def regrade_classroom(submitted_dir: Path, out_dir: Path, exercises: Sequence[str], options: Options, *,
                      progress_to: TextIO) -> RegradeSummary:
    """Grade `exercises` again for every student `out_dir`'s earlier run graded, keeping every other exercise's
    results (`attnkit grade --exercise`); refused when there is no earlier run, or it used another seed or points."""
    if not submitted_dir.is_dir():
        raise Refused(f"no such directory: {submitted_dir}")
    progress = Progress(progress_to, label="notebooks")
    try:
        return regrade_exercises(submitted_dir, out_dir, exercises, options, progress)
    except ShardError as problem:
        raise Refused(str(problem)) from None
    finally:
        progress.finish()


def merge_shards(out_dirs: Sequence[Path], merged_dir: Path) -> MergeSummary:
    """The outputs of `attnkit grade --shard` runs, checked against each other, as one class in `merged_dir`
    (`attnkit merge`)."""
    try:
        return merge(out_dirs, merged_dir)
    except (ShardError, OSError) as problem:
        raise Refused(str(problem)) from None



__all__ = ["NotebookCheck", "Options", "Refused", "check_notebooks", "grade_classroom", "mean_score", "merge_shards",
           "regrade_classroom", "report_lines", "shard_argument"]
