"""Where the course is declared: every module of autograder.course.checks that has CHECKS, in course order.

Each such module declares, next to its checks, the exercises they grade (`EXERCISES`), their bilingual
messages (`MESSAGES`) and, optionally, misconceptions of its own (`MISCONCEPTIONS`). Nothing lists the modules:
a new one is found here, so adding an exercise never touches the catalogue.
"""

import functools
import importlib
import pkgutil

from autograder.course import checks

LAST = "\uffff"  # modules that declare no exercise (the module contract) come after the notebooks'


@functools.cache
def check_modules():
    """The declaring modules, by the first notebook they grade, then by name (the catalogue's check order)."""
    names = sorted(info.name for info in pkgutil.iter_modules(checks.__path__))
    modules = [importlib.import_module(f"{checks.__name__}.{name}") for name in names]
    declaring = [module for module in modules if hasattr(module, "CHECKS")]
    return tuple(sorted(declaring, key=lambda module: (_first_notebook(module), module.__name__)))


def _first_notebook(module):
    return min((exercise.notebook for exercise in getattr(module, "EXERCISES", ())), default=LAST)
