"""Feedback with the live catalogue: a verdict's CheckResult, the ✔/✘ table and heatmaps for failed masks.

The rendering itself is autograder.checking.results (verdict -> CheckResult) and autograder.checking.feedback
(table, heatmap), shared byte for byte with the student kit; this module binds them to the live catalogue's
messages and misconceptions.
"""

from collections.abc import Sequence

import torch

from autograder.checking import feedback, results
from autograder.checking.check_types import Check, CheckResult, Status, Verdict
from autograder.checking.feedback import MARKS
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import exercise as find_exercise

__all__ = ["MARKS", "check_result", "heatmap_png", "table"]


def table(exercise_id: str, check_results: Sequence[CheckResult], lang: str, *, hidden: bool,
          rung: int = feedback.GRADED_RUNG) -> str:
    return feedback.table(find_exercise(exercise_id), check_results, lang, hidden=hidden, messages=catalog.MESSAGES,
                          rung=rung)


def heatmap_png(expected: torch.Tensor, got: torch.Tensor) -> bytes:
    return feedback.heatmap_png(expected, got, catalog.MESSAGES)


def check_result(check: Check, status: Status, verdict: Verdict, lang: str) -> CheckResult:
    """The CheckResult of `check` with this status and verdict, its message in `lang`."""
    return results.check_result(check, status, verdict, lang, catalog.MESSAGES, MISCONCEPTIONS_BY_ID)
