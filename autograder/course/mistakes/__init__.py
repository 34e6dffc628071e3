"""The course's table of mistakes: one module per family, each entry with its texts (the hint ladder's three rungs,
in English and Simplified Chinese), the exercises it applies to, and its evidence (how it is proven on the student's
own case: autograder.checking.check_types.Evidence).

A check's judge may put a mistake's id on a verdict; autograder.checking.results shows the name only when the verdict
carries evidence of a kind the entry declares, on an exercise the entry lists.
"""

from autograder.checking.check_types import Misconception
from autograder.course.mistakes import counting, gradients, heads, mask, padding, projections, scale, softmax, state
from autograder.course.mistakes.entry import mistake

__all__ = ["FAMILIES", "MISTAKES", "mistake"]

FAMILIES = (softmax, scale, projections, mask, padding, state, gradients, heads, counting)  # in course order
MISTAKES: tuple[Misconception, ...] = tuple(entry for family in FAMILIES for entry in family.MISTAKES)
