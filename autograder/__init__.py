"""attnkit's autograder: checks that teach, for the attention exercises.

In a notebook: `check("causal_mask", causal_mask)` prints public feedback;
`grade("causal_mask", causal_mask)` runs every check and returns the score.
"""

from autograder.checking.in_notebook import check, grade

__all__ = ["check", "grade"]
