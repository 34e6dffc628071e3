"""Mistakes of one family: gradients: copies without no_grad, detached or unused parameters, aliases."""

from autograder.checking.check_types import Misconception

MISTAKES: tuple[Misconception, ...] = ()
