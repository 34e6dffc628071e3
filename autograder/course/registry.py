"""The one registry of the course: every exercise folder's `DECLARATION`, in course order.

An exercise folder is found by its role-named module, `autograder.course.<package>.<exercise>.declaration` (or
`autograder.course.<package>.declaration` for a folder directly under the course, the module contract). Nothing
lists the folders: adding one never touches the catalogue. A `declaration` module without a `DECLARATION` of type
`Declaration` is an error that names it.
"""

import functools
import importlib

from autograder.course.course_settings import AppliedPoints, apply_settings, settings_in_force
from autograder.course.declaration import Declaration
from autograder.course.shared.roles import modules_in_role

__all__ = ["DeclarationError", "course_points", "declaration_modules", "declarations", "declared"]

DECLARATION_MODULE = "declaration"
LAST = "\uffff"  # folders that declare no exercise (the module contract) come after the notebooks'


class DeclarationError(TypeError):
    """A folder's declaration module does not hold a Declaration."""


def declaration_modules() -> tuple[str, ...]:
    """The dotted names of every exercise folder's declaration module, sorted (autograder.course.declaration, which
    defines the type, is not a folder's)."""
    return modules_in_role(DECLARATION_MODULE)


@functools.cache
def declarations() -> tuple[Declaration, ...]:
    """Every folder's Declaration, by the first notebook it grades, then by module name (the catalogue's order),
    with the points of the course settings file (autograder.course.course_settings): every grader reads them here."""
    return course_points().declarations


def course_points() -> AppliedPoints:
    """The declarations with the course settings file's points, and what was done to them (rescaling, rounding)."""
    return apply_settings(declared(), settings_in_force())


def declared() -> tuple[Declaration, ...]:
    """Every folder's Declaration as its code declares it (the points before the course settings file)."""
    found = []
    for name in declaration_modules():
        declaration = getattr(importlib.import_module(name), "DECLARATION", None)
        if not isinstance(declaration, Declaration):
            raise DeclarationError(f"{name} must define DECLARATION = Declaration(...), not "
                                   f"{type(declaration).__name__}")
        found.append((name, declaration))
    found.sort(key=lambda item: (_first_notebook(item[1]), item[0]))
    return tuple(declaration for _name, declaration in found)


def _first_notebook(declared: Declaration) -> str:
    return min((exercise.notebook for exercise in declared.exercises), default=LAST)
