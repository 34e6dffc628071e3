"""What an exercise folder declares: its exercises, checks, messages and known mistakes, as one typed value.

An exercise lives in one folder, `autograder/course/<notebook package>/<exercise>/`, with three modules by role:
  - `probe.py`, what the grading child runs on the student's objects (no reference, no judge, no declaration);
  - `judge.py`, what decides from the probe's data and the reference's expectations (shipped in the student kit);
  - `declaration.py`, which binds them into checks and holds `DECLARATION`, a `Declaration`.
autograder.course.registry finds every folder's `DECLARATION`; autograder.course.catalog gathers them.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

from autograder.checking.check_types import Check, Exercise, Misconception

BilingualText = Mapping[str, str]  # {"en": ..., "zh": ...}


@dataclass(frozen=True, kw_only=True)
class Declaration:
    """One exercise folder's declaration.

    `exercises`: what it grades (none for the module contract, whose checks belong to other folders' exercises);
    an exercise's points are the sum of its checks' points (autograder.course.exercises adds them up).
    `checks`: each with its title; `messages`: the bilingual texts its judges name, by key; `misconceptions`: the
    known mistakes its checks are the first to name.
    """

    exercises: tuple[Exercise, ...] = ()
    checks: tuple[Check, ...]
    messages: Mapping[str, BilingualText] = field(default_factory=dict)
    misconceptions: tuple[Misconception, ...] = ()


def misconception(misconception_id: str, name_en: str, name_zh: str, hint_en: str, hint_zh: str, *,
                  question: tuple[str, str] = ("", ""), change: tuple[str, str] = ("", "")) -> Misconception:
    """One known mistake: its name and hint (the concept), and the ladder's question (rung 1) and change (rung 3) as
    (English, Simplified Chinese), each in both languages. One is reported only when a wrong variant of the
    reference reproduces the student's output (autograder.checking.compare.diagnose) or the probe saw the mistake
    itself."""
    def bilingual(pair: tuple[str, str]) -> dict[str, str]:
        return {"en": pair[0], "zh": pair[1]} if pair[0] else {}
    return Misconception(misconception_id, {"en": name_en, "zh": name_zh}, {"en": hint_en, "zh": hint_zh},
                         question=bilingual(question), change=bilingual(change))
