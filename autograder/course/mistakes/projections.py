"""Mistakes of one family: the projections: queries and keys swapped, x @ W.weight, weights transferred wrongly."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
