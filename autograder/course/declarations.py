"""Where the course is declared: every module of autograder.course.checks, subpackages included, that has CHECKS,
in course order.

Each notebook has a package of its own (`n01_attention_without_weights`, ...) with one module per exercise or small
group of exercises, named so that they sort in the notebook's order (`ex1_softmax`, `ex2_context_vectors`). Each
such module declares, next to its checks, the exercises they grade (`EXERCISES`), their bilingual messages
(`MESSAGES`); each package's `misconceptions.py` declares the known mistakes its checks name (`MISCONCEPTIONS`).
Nothing lists the modules: a new one is found here, so adding an exercise never touches the catalogue.
"""

import functools
import importlib
import pkgutil
from types import ModuleType

from autograder.course import checks

LAST = "\uffff"  # modules that declare no exercise (the module contract) come after the notebooks'


@functools.cache
def check_modules() -> tuple[ModuleType, ...]:
    """The declaring modules, by the first notebook they grade, then by name (the catalogue's check order)."""
    modules = [importlib.import_module(name) for name in module_names()]
    declaring = [module for module in modules if hasattr(module, "CHECKS")]
    return tuple(sorted(declaring, key=lambda module: (_first_notebook(module), module.__name__)))


@functools.cache
def misconception_modules() -> tuple[ModuleType, ...]:
    """The modules that declare MISCONCEPTIONS, by their package's notebook, then by name."""
    modules = [importlib.import_module(name) for name in module_names()]
    declaring = [module for module in modules if hasattr(module, "MISCONCEPTIONS")]
    return tuple(sorted(declaring, key=lambda module: (_package_notebook(module), module.__name__)))


def module_names() -> list[str]:
    """The dotted name of every module under autograder.course.checks, packages included, sorted."""
    # walk_packages imports each subpackage to look inside it: the packages hold nothing but their notebook's name.
    return sorted(info.name for info in pkgutil.walk_packages(checks.__path__, prefix=f"{checks.__name__}."))


def _package_notebook(module):
    package = importlib.import_module(module.__name__.rpartition(".")[0])
    return getattr(package, "NOTEBOOK", LAST)


def _first_notebook(module):
    return min((exercise.notebook for exercise in getattr(module, "EXERCISES", ())), default=LAST)
