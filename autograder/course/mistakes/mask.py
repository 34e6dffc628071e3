"""Mistakes of one family: the causal mask: diagonal, inverted, not truncated, fills, after the softmax."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
