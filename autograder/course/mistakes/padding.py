"""Mistakes of one family: the padding mask: ignored, the query axis, inverted, fill values."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
