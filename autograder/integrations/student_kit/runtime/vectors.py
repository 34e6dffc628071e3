"""The stored public cases (vectors.json): reading them, and where the installed kit keeps them."""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.checking.check_types import Evidence, Exercise, Misconception
from autograder.course.shared.plan import JUDGE_ROLE, ProbeAddress, resolve
from autograder.integrations.student_kit.runtime.tensors import decode

__all__ = [
    "CHECKS_DIR", "FILE_NAME", "FORMAT", "StoredCheck", "Vectors", "installed_vectors", "misconception_from_record",
    "read_vectors", "split_document", "stored_check", "vectors_from_document",
]

FORMAT = 5  # 3: a preview stores its hidden twin's points (graded_later); 4: each misconception with its exercises
# and evidence (the table of mistakes, issue 41); 5: float tensors as their bytes in base64 (runtime/tensors.py), and
# the kit's checks in a file an exercise (split_document)
FILE_NAME = "vectors.json"  # the index: messages, exercises, mistakes, and where each exercise's checks lie
CHECKS_DIR = "checks"


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
    """The stored vectors. An exercise's checks are read and decoded (their tensors made, their judges imported) the
    first time that exercise is asked for: a fresh kernel's first check pays for its own exercise only (issue 59)."""

    messages: dict[str, dict[str, str]]
    exercises: dict[str, Exercise]  # by id, in course order (the full kit declares them in its folders)
    misconceptions: dict[str, Misconception]  # by id
    load_records: Callable[[str], Sequence[Mapping[str, Any]]]  # an exercise's stored checks as read, by its id
    decoded: dict[str, tuple[StoredCheck, ...]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def checks(self) -> tuple[StoredCheck, ...]:
        """Every stored check, in course order."""
        return tuple(check for exercise_id in self.exercises for check in self.checks_of(exercise_id))

    def checks_of(self, exercise_id: str) -> tuple[StoredCheck, ...]:
        if exercise_id not in self.decoded:
            records = self.load_records(exercise_id) if exercise_id in self.exercises else ()
            self.decoded[exercise_id] = tuple(stored_check(record) for record in records)
        return self.decoded[exercise_id]

    def exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id; a clear error for a typo in a notebook cell."""
        try:
            return self.exercises[exercise_id]
        except KeyError:
            known = ", ".join(sorted(self.exercises))
            raise KeyError(f"unknown exercise {exercise_id!r}; known exercises: {known}") from None


def split_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """The kit's files of a whole document ({path relative to the kit's data/: JSON}): the index (FILE_NAME), with
    each exercise's file named in place of its checks, and each exercise's checks (CHECKS_DIR/ID.json). A fresh
    kernel's first check parses its exercise's file and the index only, not 4 MB of every exercise's tensors."""
    files: dict[str, Any] = {}
    by_exercise: dict[str, list[Any]] = {}
    for record in document["checks"]:
        by_exercise.setdefault(record["exercise"], []).append(record)
    index = {**document, "checks": {exercise_id: f"{CHECKS_DIR}/{exercise_id}.json" for exercise_id in by_exercise}}
    files[FILE_NAME] = index
    for exercise_id, records in by_exercise.items():
        files[index["checks"][exercise_id]] = records
    return files


def read_vectors(path: Path | str) -> Vectors:
    """The vectors of the JSON file at `path`: a whole document, or an index (split_document) whose exercises' files
    lie beside it, read when asked for; a clear error for a file of another format."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    return vectors_from_document(document, source=path)


def vectors_from_document(document: Mapping[str, Any], source: Path | str = "vectors") -> Vectors:
    if document.get("format") != FORMAT:
        raise ValueError(f"{source}: student-kit vectors of format {document.get('format')!r}, expected {FORMAT}; "
                         "rebuild the kit with `attnkit student-kit build`")
    load_records: Callable[[str], Sequence[Mapping[str, Any]]]
    if isinstance(document["checks"], Mapping):  # an index: each exercise's checks in its own file
        files, folder = dict(document["checks"]), Path(source).parent

        def load_records(exercise_id: str) -> Sequence[Mapping[str, Any]]:
            relative = files.get(exercise_id)
            return json.loads((folder / relative).read_text(encoding="utf-8")) if relative else ()
    else:
        by_exercise: dict[str, list[Mapping[str, Any]]] = {}
        for record in document["checks"]:
            by_exercise.setdefault(record["exercise"], []).append(record)

        def load_records(exercise_id: str) -> Sequence[Mapping[str, Any]]:
            return by_exercise.get(exercise_id, [])
    exercises = {e["id"]: Exercise(e["id"], e["notebook"], tuple(e["names"]), e["title"], e["points"])
                 for e in document["exercises"]}
    misconceptions = {m["id"]: misconception_from_record(m) for m in document["misconceptions"]}
    return Vectors(messages=document["messages"], exercises=exercises, misconceptions=misconceptions,
                   load_records=load_records)


def stored_check(c: Mapping[str, Any]) -> StoredCheck:
    """One stored check as the runtime runs it: its tensors made, its judge imported."""
    return StoredCheck(id=c["id"], exercise=c["exercise"], points=c["points"], probe=address(c["probe"]),
                       judge=resolve(address(c["judge"]), JUDGE_ROLE),
                       cases=tuple(decode(case) for case in c["cases"]),
                       expected=tuple(decode(expected) for expected in c["expected"]), graded_later=c["graded_later"])


def misconception_from_record(record: Mapping[str, Any]) -> Misconception:
    """A stored entry of the table of mistakes (student_kit.build.misconception_record) as the Misconception it was."""
    return Misconception(record["id"], record["name"], record["hint"], record.get("question", {}),
                         record.get("change", {}), exercises=frozenset(record["exercises"]),
                         evidence=frozenset(Evidence(kind) for kind in record["evidence"]),
                         fails_every_case=record.get("fails_every_case") is True)


def address(record: Mapping[str, Any]) -> ProbeAddress:
    """A stored {"module", "function", "args"} as the address the full kit's plan uses."""
    return ProbeAddress(record["module"], record["function"], tuple(record["args"]))


def installed_vectors() -> Vectors:
    """The vectors shipped inside the installed kit (autograder/integrations/student_kit/data/vectors.json)."""
    return read_vectors(Path(__file__).resolve().parent.parent / "data" / FILE_NAME)
