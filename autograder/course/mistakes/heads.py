"""Mistakes of one family: heads: split and merge, plain lists, shared heads, head_dim, the output projection."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
