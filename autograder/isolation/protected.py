"""What student code must never import or read, declared once: the reference and the check code.

Everything secret lives in two packages, and the list is derived from where they are, never typed as paths:
  - the reference, the `attnkit.solutions` package (the checkout's solutions/, installed under the project's name;
    found through the import system, wherever it is installed);
  - the check code in the `autograder.course` package: every module of an exercise folder but its probe and judge
    (the declaration: hidden cases, expectations; a notebook's shared declaration helpers), and beside the folders
    the functional reference with knobs (`variants`) and the student kit's recorder (`kit_recording`). The probe
    side, which the grading child and the student kit hold, is each folder's `probe` and `judge` module, the
    `autograder.course.shared` package and the packages' `__init__`.
and in three folders of the checkout: `source/` (notebooks with their solutions), `tests/` (mutants, expected
outputs) and `devtools/` (student-style variants), plus `.git` (the history holds all of them).

Used by the in-process guards (the import names), the Landlock rules (the paths), the resume fingerprint (the
reference's files), and the Gradescope bundle (which must carry the packages and leave the folders out). Moving a
secret inside the reference or into a course module that is not a probe or judge keeps it protected;
tests/test_protected.py walks the checkout and fails when a file holding reference or check code lies outside the
list."""

import importlib.util
import os
from collections.abc import Iterable
from pathlib import Path

import autograder

__all__ = [
    "CHECKOUT_FOLDERS", "REFERENCE_PACKAGE", "check_locations", "check_modules", "checkout_root", "is_protected",
    "protected_modules", "protected_paths", "reference_locations",
]

REFERENCE_PACKAGE = "attnkit.solutions"
# Named, not imported: the grading child's zygote imports this module and must never hold the checks.
COURSE_PACKAGE = "autograder.course"
PROBE_SIDE_MODULES = ("probe", "judge", "__init__")  # an exercise folder's modules the child and the kit may hold
PROBE_SIDE_PACKAGE = "shared"  # autograder.course.shared: the probes' helpers (inputs, weights loading, the plan)
# Modules directly under autograder.course that hold check code; the others there (the catalogue, the registry, the
# messages) gather or describe it and hold none. tests/test_protected.py fails on one that should be listed.
REFERENCE_SIDE_MODULES = ("variants", "error_variants", "kit_recording", "value_variants")
# Folders of the checkout, beside the packages: never bundled, never readable by student code.
CHECKOUT_FOLDERS = ("source", "tests", "devtools", ".git")


def protected_modules() -> tuple[str, ...]:
    """Import names (packages: every submodule too) that student code may not import."""
    return (REFERENCE_PACKAGE, *check_modules())


def checkout_root() -> Path:
    """The folder that holds the autograder package (the checkout, or the bundle's source/ on Gradescope)."""
    return Path(autograder.__file__).resolve().parent.parent


def reference_locations() -> tuple[Path, ...]:
    """The folders of the reference package (none when it cannot be found: then there is nothing to hide)."""
    try:
        spec = importlib.util.find_spec(REFERENCE_PACKAGE)
    except ModuleNotFoundError:  # not even its parent package is installed
        return ()
    if spec is None:
        return ()
    return tuple(Path(location).resolve() for location in (spec.submodule_search_locations or ()))


def _check_files() -> dict[str, Path]:
    """{module name: file} of the course's check code, found from the files without importing the course."""
    spec = importlib.util.find_spec(COURSE_PACKAGE)  # finds the package without running it
    found: dict[str, Path] = {}
    for location in (spec.submodule_search_locations or ()) if spec is not None else ():
        for path in sorted(Path(location).rglob("*.py")):
            relative = path.relative_to(location).with_suffix("").parts
            in_folder = len(relative) > 1 and relative[0] != PROBE_SIDE_PACKAGE
            if not (in_folder and path.stem not in PROBE_SIDE_MODULES or relative == (path.stem,)
                    and path.stem in REFERENCE_SIDE_MODULES):
                continue
            found[".".join((COURSE_PACKAGE, *relative))] = path.resolve()
    return found


def check_modules() -> tuple[str, ...]:
    """The import names of the course's check code, sorted: every module of an exercise folder but its probe and
    judge, and the reference-side modules beside the folders (REFERENCE_SIDE_MODULES)."""
    return tuple(sorted(_check_files()))


def check_locations() -> tuple[Path, ...]:
    """The files of the course's check code, in the order of check_modules()."""
    files = _check_files()
    return tuple(files[name] for name in sorted(files))


def protected_paths() -> tuple[Path, ...]:
    """Every file and folder student code may not read: the two packages and the checkout's private folders."""
    root = checkout_root()
    return (*reference_locations(), *check_locations(), *(root / folder for folder in CHECKOUT_FOLDERS))


def is_protected(path: str | os.PathLike[str], protected: Iterable[Path] | None = None) -> bool:
    """True when `path` is one of the protected paths or lies beneath one. `protected`: protected_paths(), when the
    caller asks for many paths (finding the check code's files walks the course package)."""
    path = Path(path).resolve()
    lineage = {path, *path.parents}
    return any(location in lineage for location in (protected_paths() if protected is None else protected))
