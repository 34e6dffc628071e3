"""Mistakes of one family: the scores' scale: missing, by the wrong constant, after the softmax, twice."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
