"""Mistakes of one family: counting parameters: buffers, frozen, shared and children's parameters."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
