"""Where an exercise folder's modules are (its probes, judges and declaration), found by their names.

Light on purpose (no torch, no checks): the course registry finds the declarations here, and the registry is read by
steps that need only the exercises' names and points (nbgrader's export and collect, the LMS files).
"""

import importlib
import pkgutil

__all__ = ["COURSE_PACKAGE", "JUDGE_ROLE", "PROBE_ROLE", "in_role", "modules_in_role"]

COURSE_PACKAGE = "autograder.course"
PROBE_ROLE, JUDGE_ROLE = "probe", "judge"  # the module names that hold a folder's probes and judges


def in_role(module: str, role: str) -> bool:
    """True for a module named by `role` (`probe`, `judge`, `declaration`) inside a folder of autograder.course:
    autograder.course.<folder>[.<exercise>].<role>, never a module directly under the course."""
    parts = module.split(".")
    return module.startswith(COURSE_PACKAGE + ".") and len(parts) >= 4 and parts[-1] == role


def modules_in_role(role: str) -> tuple[str, ...]:
    """Every exercise folder's `role` module, sorted. Walking imports only the folders' packages, which hold
    docstrings and their notebook's name: never a probe, judge or declaration."""
    course = importlib.import_module(COURSE_PACKAGE)
    found = pkgutil.walk_packages(course.__path__, prefix=COURSE_PACKAGE + ".")
    return tuple(sorted(info.name for info in found if in_role(info.name, role)))
