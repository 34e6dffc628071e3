"""attnkit's autograder: checks that teach, for the attention exercises.

In a notebook: `check("causal_mask", causal_mask)` prints public feedback; `check_all("03_causal_attention",
globals())` sums up a notebook; `grade("causal_mask", causal_mask)` runs every check and returns the score.

`check` and `grade` are loaded on first use (PEP 562): importing a part of the package, such as the grading
child's code (autograder.isolation.zygote), must not import the checks and the reference with it.
"""

import importlib

__all__ = ["check", "check_all", "grade"]


def __getattr__(name):
    if name in __all__:
        return getattr(importlib.import_module("autograder.running.in_notebook"), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
