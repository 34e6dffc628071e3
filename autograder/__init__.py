"""attnkit's autograder: checks that teach, for the attention exercises.

In a notebook: `check("causal_mask", causal_mask)` prints public feedback; `check_all("03_causal_attention",
globals())` sums up a notebook; `grade("causal_mask", causal_mask)` runs every check and returns the score.

`check` and `grade` are loaded on first use (PEP 562): importing a part of the package, such as the grading
child's code (autograder.isolation.zygote), must not import the checks and the reference with it.

The pipeline's stages are the layers of pyproject.toml's contract "Pipeline stages import downwards only", numbered
from the bottom: above the shared modules (i18n, safe_text, templating, logs, safe_logging, refusal), Stage 1
checking, 2 course, 3 running, 4 isolation | outputs, 5 grading, 6 integrations | review; the CLI (cli.py) on top.
Each stage package's docstring names its number (tests/test_import_graph.py holds them to the contract).
"""

import importlib

__all__ = ["check", "check_all", "grade"]


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(importlib.import_module("autograder.running.in_notebook"), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
