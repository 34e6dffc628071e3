"""Feedback with the live catalogue: a verdict's CheckResult, the ✔/✘ table and the pictures of failed checks.

The rendering itself is autograder.checking.results (verdict -> CheckResult), autograder.checking.feedback (table)
and autograder.checking.pictures (heatmap, head layout), shared byte for byte with the student kit; this module
binds them to the live catalogue's messages and misconceptions.
"""

from collections.abc import Sequence

import torch

from autograder.checking import feedback, pictures, results
from autograder.checking.check_types import Check, CheckResult, HeadLayout, Status, Verdict
from autograder.checking.feedback import MARKS
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import exercise as find_exercise

__all__ = ["MARKS", "check_result", "head_layout_svg", "heatmap_picture", "heatmap_svg", "pictures_of", "table"]


def table(exercise_id: str, check_results: Sequence[CheckResult], lang: str, *, hidden: bool,
          rung: int = feedback.GRADED_RUNG) -> str:
    return feedback.table(find_exercise(exercise_id), check_results, lang, hidden=hidden, messages=catalog.MESSAGES,
                          rung=rung)


def heatmap_svg(expected: torch.Tensor, got: torch.Tensor, lang: str) -> str:
    return pictures.heatmap_svg(expected, got, catalog.MESSAGES, lang)


def head_layout_svg(layout: HeadLayout, lang: str) -> str:
    return pictures.head_layout_svg(layout, catalog.MESSAGES, lang)


def heatmap_picture(heatmap: pictures.Heatmap, lang: str) -> pictures.Picture:
    """A heatmap (as a record keeps it) drawn, with its words."""
    return pictures.Picture(pictures.draw_heatmap(heatmap, catalog.MESSAGES, lang),
                            pictures.describe_heatmap(heatmap, catalog.MESSAGES, lang))


def pictures_of(result: CheckResult, lang: str) -> list[pictures.Picture]:
    """A public check's failure pictures (heatmap, head layout), each with its words."""
    return pictures.pictures_of(result, catalog.MESSAGES, lang)


def check_result(check: Check, status: Status, verdict: Verdict, lang: str) -> CheckResult:
    """The CheckResult of `check` with this status and verdict, its message in `lang`."""
    return results.check_result(check, status, verdict, lang, catalog.MESSAGES, MISCONCEPTIONS_BY_ID)
