"""What an exercise folder declares: its exercises, checks and messages, as one typed value (the known mistakes are
the course's table, autograder.course.mistakes, not a folder's).

An exercise lives in one folder, `autograder/course/<notebook package>/<exercise>/`, with three modules by role:
  - `probe.py`, what the grading child runs on the student's objects (no reference, no judge, no declaration);
  - `judge.py`, what decides from the probe's data and the reference's expectations (shipped in the student kit);
  - `declaration.py`, which binds them into checks and holds `DECLARATION`, a `Declaration`.
autograder.course.registry finds every folder's `DECLARATION`; autograder.course.catalog gathers them.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from autograder.checking.check_types import Check, Exercise

__all__ = ["Declaration"]

BilingualText = Mapping[str, str]  # {"en": ..., "zh": ...}


@dataclass(frozen=True, kw_only=True)
class Declaration:
    """One exercise folder's declaration.

    `exercises`: what it grades (none for the module contract, whose checks belong to other folders' exercises);
    an exercise's points are the sum of its checks' points (autograder.course.exercises adds them up).
    `checks`: each with its title; `messages`: the bilingual texts its judges name, by key.
    """

    exercises: tuple[Exercise, ...] = ()
    checks: tuple[Check, ...]
    messages: Mapping[str, BilingualText] = field(default_factory=dict)

