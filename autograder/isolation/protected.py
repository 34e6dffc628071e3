"""What student code must never import or read, declared once: the reference and the check code.

Everything secret lives in two packages, and the list is derived from where they are, never typed as paths:
  - the reference, the `solutions` package (found through the import system, wherever it is installed);
  - the check code, the `autograder.course.checks` package: the checks, their helpers and the functional
    reference with knobs (`variants`) that the judges compare with.
and in three folders of the checkout: `source/` (notebooks with their solutions), `tests/` (mutants, expected
outputs) and `devtools/` (student-style variants), plus `.git` (the history holds all of them).

Used by the in-process guards (the import names), the Landlock rules (the paths), the resume fingerprint (the
reference's files), and the Gradescope bundle (which must carry the packages and leave the folders out).
Moving a secret inside one of these packages keeps it protected; tests/test_protected.py walks the checkout
and fails when a file holding reference or check code lies outside the list.
"""

import importlib.util
import os
from pathlib import Path

import autograder

REFERENCE_PACKAGE = "solutions"
# Named, not imported: the grading child's zygote imports this module and must never hold the checks.
CHECKS_PACKAGE = "autograder.course.checks"
# Folders of the checkout, beside the packages: never bundled, never readable by student code.
CHECKOUT_FOLDERS = ("source", "tests", "devtools", ".git")


def protected_modules() -> tuple[str, ...]:
    """Import names (packages: every submodule too) that student code may not import."""
    return (REFERENCE_PACKAGE, CHECKS_PACKAGE)


def checkout_root() -> Path:
    """The folder that holds the autograder package (the checkout, or the bundle's source/ on Gradescope)."""
    return Path(autograder.__file__).resolve().parent.parent


def reference_locations() -> tuple[Path, ...]:
    """The folders of the `solutions` package (none when it cannot be found: then there is nothing to hide)."""
    spec = importlib.util.find_spec(REFERENCE_PACKAGE)
    if spec is None:
        return ()
    return tuple(Path(location).resolve() for location in (spec.submodule_search_locations or ()))


def check_locations() -> tuple[Path, ...]:
    spec = importlib.util.find_spec(CHECKS_PACKAGE)  # finds the package without running it
    locations = spec.submodule_search_locations if spec is not None else None
    return tuple(Path(location).resolve() for location in (locations or ()))


def protected_paths() -> tuple[Path, ...]:
    """Every file and folder student code may not read: the two packages and the checkout's private folders."""
    root = checkout_root()
    return (*reference_locations(), *check_locations(), *(root / folder for folder in CHECKOUT_FOLDERS))


def is_protected(path: str | os.PathLike[str]) -> bool:
    """True when `path` is one of the protected paths or lies beneath one."""
    path = Path(path).resolve()
    return any(path == protected or protected in path.parents for protected in protected_paths())
