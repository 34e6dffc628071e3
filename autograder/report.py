"""Feedback a student can read, with the live catalogue's messages (the rendering is autograder.feedback's)."""

from autograder import catalog, feedback
from autograder.exercises import exercise as find_exercise
from autograder.feedback import MARKS

__all__ = ["MARKS", "heatmap_png", "table"]


def table(exercise_id, results, lang, *, hidden):
    return feedback.table(find_exercise(exercise_id), results, lang, hidden=hidden, messages=catalog.MESSAGES)


def heatmap_png(expected, got):
    return feedback.heatmap_png(expected, got, catalog.MESSAGES)
