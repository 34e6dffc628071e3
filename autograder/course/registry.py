"""The one registry of the course: every exercise folder's `DECLARATION`, in course order.

An exercise folder is found by its role-named module, `autograder.course.<package>.<exercise>.declaration` (or
`autograder.course.<package>.declaration` for a folder directly under the course, the module contract). Nothing
lists the folders: adding one never touches the catalogue. A `declaration` module without a `DECLARATION` of type
`Declaration` is an error that names it.
"""

import functools
import importlib

from autograder.course.declaration import Declaration
from autograder.course.shared.plan import modules_in_role

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
    """Every folder's Declaration, by the first notebook it grades, then by module name (the catalogue's order)."""
    found = []
    for name in declaration_modules():
        declared = getattr(importlib.import_module(name), "DECLARATION", None)
        if not isinstance(declared, Declaration):
            raise DeclarationError(f"{name} must define DECLARATION = Declaration(...), not "
                                   f"{type(declared).__name__}")
        found.append((name, declared))
    found.sort(key=lambda item: (_first_notebook(item[1]), item[0]))
    return tuple(declared for _name, declared in found)


def _first_notebook(declared: Declaration) -> str:
    return min((exercise.notebook for exercise in declared.exercises), default=LAST)
