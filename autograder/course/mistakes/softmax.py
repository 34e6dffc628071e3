"""Mistakes of one family: softmax over the wrong axis, overflow, normalising without exp, keepdim, global max."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
