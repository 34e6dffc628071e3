"""The assignment: the folder name nbgrader's course, the release and a submission use, and the grading seed.

Light on purpose (no torch, no checks): the command line reads both for its --help.
"""

__all__ = ["ASSIGNMENT", "DEFAULT_SEED"]

ASSIGNMENT = "attention"
# The seed of every check's cases, in `grade()` cells and in attnkit grade alike (honest work scores the same).
DEFAULT_SEED = 20260
