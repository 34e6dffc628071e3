"""Mistakes of one family: a module's state: buffers, plain attributes, dropout placement and mode, inputs changed."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
