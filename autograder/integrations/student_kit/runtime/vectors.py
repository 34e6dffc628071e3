"""The stored public cases (vectors.json): reading them, and where the installed kit keeps them."""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.checking.check_types import Evidence, Exercise, Misconception
from autograder.course.shared.plan import JUDGE_ROLE, ProbeAddress, resolve
from autograder.integrations.student_kit.runtime.tensors import decode

__all__ = [
    "FILE_NAME", "FORMAT", "StoredCheck", "Vectors", "installed_vectors", "misconception_from_record", "read_vectors",
    "vectors_from_document",
]

FORMAT = 4  # 3: a preview stores its hidden twin's points (graded_later); 4: each misconception with its exercises
# and evidence (the table of mistakes, issue 41)
FILE_NAME = "vectors.json"


@dataclass(frozen=True)
class StoredCheck:
    """A public check as data: the full kit's probe and judge by name, its cases (with the weights to load, where
    the expectations hold for given weights) and, per case, the expectations the judge reads. `hidden` is always
    False: only public checks are stored."""

    id: str
    exercise: str
    points: float
    probe: ProbeAddress
    judge: Callable[..., Any]
    cases: tuple[dict[str, Any], ...]
    expected: tuple[dict[str, Any], ...]
    hidden: bool = False
    graded_later: float = 0.0  # a preview: what its hidden twin is worth (check(...)'s progress line)


@dataclass(frozen=True)
class Vectors:
    messages: dict[str, dict[str, str]]
    exercises: dict[str, Exercise]  # by id (the full kit declares them in its folders; the kit stores them)
    misconceptions: dict[str, Misconception]  # by id
    checks: tuple[StoredCheck, ...]

    def checks_of(self, exercise_id: str) -> tuple[StoredCheck, ...]:
        return tuple(check for check in self.checks if check.exercise == exercise_id)

    def exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id; a clear error for a typo in a notebook cell."""
        try:
            return self.exercises[exercise_id]
        except KeyError:
            known = ", ".join(sorted(self.exercises))
            raise KeyError(f"unknown exercise {exercise_id!r}; known exercises: {known}") from None


def read_vectors(path: Path | str) -> Vectors:
    """The vectors in the JSON file at `path`; a clear error for a file of another format."""
    return vectors_from_document(json.loads(Path(path).read_text(encoding="utf-8")), source=path)


def vectors_from_document(document: Mapping[str, Any], source: Path | str = "vectors") -> Vectors:
    if document.get("format") != FORMAT:
        raise ValueError(f"{source}: student-kit vectors of format {document.get('format')!r}, expected {FORMAT}; "
                         "rebuild the kit with `attnkit student-kit build`")
    checks = tuple(
        StoredCheck(id=c["id"], exercise=c["exercise"], points=c["points"], probe=address(c["probe"]),
                    judge=resolve(address(c["judge"]), JUDGE_ROLE),
                    cases=tuple(decode(case) for case in c["cases"]),
                    expected=tuple(decode(expected) for expected in c["expected"]), graded_later=c["graded_later"])
        for c in document["checks"]
    )
    exercises = {e["id"]: Exercise(e["id"], e["notebook"], tuple(e["names"]), e["title"], e["points"])
                 for e in document["exercises"]}
    misconceptions = {m["id"]: misconception_from_record(m) for m in document["misconceptions"]}
    return Vectors(messages=document["messages"], exercises=exercises, misconceptions=misconceptions, checks=checks)


def misconception_from_record(record: Mapping[str, Any]) -> Misconception:
    """A stored entry of the table of mistakes (student_kit.build.misconception_record) as the Misconception it was."""
    return Misconception(record["id"], record["name"], record["hint"], record.get("question", {}),
                         record.get("change", {}), exercises=frozenset(record["exercises"]),
                         evidence=frozenset(Evidence(kind) for kind in record["evidence"]))


def address(record: Mapping[str, Any]) -> ProbeAddress:
    """A stored {"module", "function", "args"} as the address the full kit's plan uses."""
    return ProbeAddress(record["module"], record["function"], tuple(record["args"]))


def installed_vectors() -> Vectors:
    """The vectors shipped inside the installed kit (autograder/integrations/student_kit/data/vectors.json)."""
    return read_vectors(Path(__file__).resolve().parent.parent / "data" / FILE_NAME)
