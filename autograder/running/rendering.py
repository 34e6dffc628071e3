"""Feedback with the live catalogue: a verdict's CheckResult, the ✔/✘ table and heatmaps for failed masks.

The rendering itself is autograder.checking.results (verdict -> CheckResult) and autograder.checking.feedback
(table, heatmap), shared byte for byte with the student kit; this module binds them to the live catalogue's
messages and misconceptions.
"""

from autograder.checking import feedback, results
from autograder.checking.feedback import MARKS
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import exercise as find_exercise

__all__ = ["MARKS", "check_result", "heatmap_png", "table"]


def table(exercise_id, check_results, lang, *, hidden, hints=True):
    return feedback.table(find_exercise(exercise_id), check_results, lang, hidden=hidden, messages=catalog.MESSAGES,
                          hints=hints)


def heatmap_png(expected, got):
    return feedback.heatmap_png(expected, got, catalog.MESSAGES)


def check_result(check, status, verdict, lang):
    """The CheckResult of `check` with this status and verdict, its message in `lang`."""
    return results.check_result(check, status, verdict, lang, catalog.MESSAGES, MISCONCEPTIONS_BY_ID)
