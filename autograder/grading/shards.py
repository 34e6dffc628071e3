"""Grade a class in shards and merge them: `attnkit grade --shard I/N` and `attnkit merge` (README, "Grading
thousands of students").

A shard is a deterministic 1/N of the students: student `s` belongs to shard `shard_index(s, N)`, the first 8 bytes
of sha256(student id) modulo N. It depends on the id alone (never on a position in a list), so adding or removing a
student moves no other student to another shard.

Every `attnkit grade` run, sharded or not, writes `OUT_DIR/grading.json` (the manifest):

    {"format": "attnkit-grades/1", "assignment": "attention", "seed": 0, "catalogue": "<sha256 of the checks and
     the reference>", "shard": "1/3" or null, "complete": true, "students": {"<id>": "<submission hash>", ...}}

`complete` is false while the run is in progress (a shard that crashed or was killed is not merged), and the
manifest claims OUT_DIR for one shard: a run with another `--shard` into the same OUT_DIR is refused. So each shard
gets its own OUT_DIR (e.g. `grades/shards/I-of-N`), where it writes the usual outputs for its own students: grades.csv,
students/, gradescope/, feedback/, class_report.html.

`merge(out_dirs, merged_dir)` reads each OUT_DIR's manifest, checks that they agree (same assignment, seed and check
catalogue; every shard 0..N-1 of one N present and complete; a student found twice has the same result both times),
copies each student's files and writes one grades.csv, grading.json and class_report.html for the whole class.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from autograder.outputs import records
from autograder.outputs.documents import StudentDocument

__all__ = [
    "MANIFEST", "Manifest", "MergeSummary", "Shard", "ShardError", "claim", "merge", "read_manifest", "shard_argument",
    "shard_index", "write_manifest",
]

MANIFEST = "grading.json"
FORMAT = "attnkit-grades/1"
_SHARD_TEXT = re.compile(r"\s*(-?\d+)\s*/\s*(-?\d+)\s*")


class ShardError(Exception):
    """A shard or merge that must not go ahead; the message says why and what to do."""


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ShardError(f"{self.index}/{self.count}: N, the number of shards, must be at least 1")
        if not 0 <= self.index < self.count:
            raise ShardError(f"{self.index}/{self.count}: I must be between 0 and {self.count - 1} "
                             f"(I/N with 0 <= I < N: the shards are numbered 0 to N-1)")

    @classmethod
    def parse(cls, text: object) -> "Shard":
        """`I/N` (e.g. "0/4") -> Shard(0, 4); ShardError with the reason otherwise."""
        match = _SHARD_TEXT.fullmatch(str(text))
        if not match:
            raise ShardError(f"{text!r}: expected I/N, two whole numbers with 0 <= I < N (e.g. 0/4)")
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def contains(self, student_id: str) -> bool:
        return shard_index(student_id, self.count) == self.index


def shard_index(student_id: str, count: int) -> int:
    """The shard (0..count-1) of a student: a stable hash of the id, the same on every machine and Python run."""
    digest = hashlib.sha256(os.fsencode(str(student_id))).digest()  # UTF-8; a folder name's own bytes if not
    return int.from_bytes(digest[:8], "big") % count


def shard_argument(text: str) -> Shard:
    """argparse `type=` for --shard: a Shard, or a usage error that says what is wrong (exit status 2)."""
    try:
        return Shard.parse(text)
    except ShardError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


# --- the manifest -------------------------------------------------------------------------------


class ManifestDocument(TypedDict):
    """OUT_DIR/grading.json, as written (see the module docstring)."""

    format: str
    assignment: str
    seed: int
    catalogue: str
    shard: str | None  # "I/N"; None for an unsharded run
    complete: bool
    students: dict[str, str]  # student id -> submission hash


@dataclass(frozen=True)
class Manifest:
    out_dir: Path
    assignment: str
    seed: int
    catalogue: str
    shard: Shard | None
    complete: bool
    students: dict[str, str]  # student id -> submission hash

    def to_json(self) -> ManifestDocument:
        return {
            "format": FORMAT,
            "assignment": self.assignment,
            "seed": self.seed,
            "catalogue": self.catalogue,
            "shard": str(self.shard) if self.shard else None,
            "complete": self.complete,
            "students": dict(self.students),
        }


def read_manifest(out_dir: str | os.PathLike[str]) -> Manifest | None:
    """The manifest of an OUT_DIR; None when there is none; ShardError when it is unreadable."""
    path = Path(out_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as problem:
        raise ShardError(f"{path}: unreadable ({problem})") from None
    try:
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        students = data["students"]
        if not isinstance(students, dict):
            raise ValueError("students is not an object")
        return Manifest(Path(out_dir), str(data["assignment"]), int(data["seed"]), str(data["catalogue"]),
                        Shard.parse(data["shard"]) if data["shard"] is not None else None, bool(data["complete"]),
                        {str(key): str(value) for key, value in students.items()})
    except (AttributeError, KeyError, TypeError, ValueError, ShardError) as problem:
        raise ShardError(f"{path}: not an attnkit grading manifest ({problem})") from None


def write_manifest(manifest: Manifest) -> None:
    records.write_atomically(manifest.out_dir / MANIFEST,
                             json.dumps(manifest.to_json(), indent=2, ensure_ascii=False) + "\n")


def claim(out_dir: str | os.PathLike[str], assignment: str, seed: int, catalogue: str, shard: Shard | None) -> None:
    """Mark OUT_DIR as being graded for `shard` (complete: false); refuse one that holds another shard's outputs."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = Manifest(out_dir, assignment, seed, catalogue, shard, False, {})
    if _create_exclusively(out_dir / MANIFEST, json.dumps(started.to_json(), indent=2, ensure_ascii=False) + "\n"):
        return  # of two runs started at once on the same new OUT_DIR, only one gets here
    earlier = read_manifest(out_dir)
    if earlier is not None and earlier.shard != shard:
        def name(value: Shard | None) -> str:
            return f"shard {value}" if value else "an unsharded run"

        raise ShardError(
            f"{out_dir} already holds the outputs of {name(earlier.shard)} ({out_dir / MANIFEST}), not of "
            f"{name(shard)}: give every shard its own --out (e.g. grades/shards/I-of-N), or delete that directory")
    write_manifest(started)


def _create_exclusively(path: Path, text: str) -> bool:
    """Write `path` whole unless it exists (a complete temporary file, hard-linked into place); True if written."""
    try:
        with records.atomic_target(path, replace=False) as temporary:
            temporary.write_text(text, encoding="utf-8")
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: exclusive creation, then the text
                with open(path, "x", encoding="utf-8") as stream:
                    stream.write(text)
    except FileExistsError:
        return False
    return True


# --- merge --------------------------------------------------------------------------------------


@dataclass
class MergeSummary:
    inputs: list[Manifest]
    documents: list[StudentDocument] = field(default_factory=list)  # one per student, sorted by student id
    grades_csv: Path | None = None
    class_report: Path | None = None

    @property
    def students(self) -> list[str]:
        return [document["student_id"] for document in self.documents]


def merge(out_dirs: Iterable[str | os.PathLike[str]], merged_dir: str | os.PathLike[str]) -> MergeSummary:
    """Check the shard outputs in `out_dirs` against each other, then write the whole class into `merged_dir`."""
    from autograder.outputs import class_report  # matplotlib: only once there is a report to draw

    out_paths = [Path(path) for path in out_dirs]
    merged_dir = Path(merged_dir)
    if not out_paths:
        raise ShardError("nothing to merge: give the OUT_DIR of every shard")
    manifests = [_input_manifest(path) for path in out_paths]
    if any(merged_dir.resolve() == path.resolve() for path in out_paths):
        raise ShardError(f"--out {merged_dir} is one of the directories to merge: merge into a new directory")
    existing = read_manifest(merged_dir) if merged_dir.is_dir() else None
    if existing is not None and existing.shard is not None:
        raise ShardError(f"--out {merged_dir} holds the outputs of shard {existing.shard}: "
                         f"merge into another directory")
    _check_agreement(manifests)

    documents: dict[str, StudentDocument] = {}
    found_in: dict[str, Manifest] = {}
    for manifest in manifests:
        for student_id, submission_hash in manifest.students.items():
            document = _student_document(manifest, student_id, submission_hash)
            if student_id in documents:
                earlier = documents[student_id]
                if _result(earlier) != _result(document):
                    raise ShardError(
                        f"student {student_id} is in {found_in[student_id].out_dir} and in {manifest.out_dir} with "
                        f"different results ({_describe(earlier)} vs {_describe(document)}): grade that student "
                        f"again in one shard only, then merge")
                continue
            documents[student_id] = document
            found_in[student_id] = manifest

    merged_dir.mkdir(parents=True, exist_ok=True)
    first = manifests[0]
    merged = Manifest(merged_dir, first.assignment, first.seed, first.catalogue, None, False, {})
    write_manifest(merged)  # not complete until every file is in place
    ordered = [documents[student_id] for student_id in sorted(documents)]
    for document in ordered:
        _copy_student(found_in[document["student_id"]].out_dir, merged_dir, document["student_id"])
    summary = MergeSummary(manifests, ordered)
    summary.grades_csv = records.write_grades_csv(merged_dir, ordered)
    summary.class_report = class_report.write_class_report(merged_dir, ordered)
    write_manifest(Manifest(merged_dir, first.assignment, first.seed, first.catalogue, None, True,
                            {document["student_id"]: document["submission_hash"] for document in ordered}))
    return summary


def _input_manifest(out_dir: Path) -> Manifest:
    if not out_dir.is_dir():
        raise ShardError(f"no such directory: {out_dir}")
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise ShardError(f"{out_dir} has no {MANIFEST}: not the OUT_DIR of an `attnkit grade` run")
    if not manifest.complete:
        what = f"shard {manifest.shard}" if manifest.shard else "the grading"
        raise ShardError(f"{out_dir}: {what} did not finish (run the same `attnkit grade` again: it resumes)")
    for student_id in manifest.students:
        if not _plain_name(student_id):
            raise ShardError(f"{out_dir / MANIFEST}: {student_id!r} is not a student id")
    return manifest


def _check_agreement(manifests: Sequence[Manifest]) -> None:
    first = manifests[0]
    for attribute, what, fix in (("assignment", "assignments", "merge one assignment at a time"),
                                 ("seed", "seeds", "grade every shard with the same --seed"),
                                 ("catalogue", "check catalogues",
                                  "grade every shard with the same attnkit checks and reference")):
        for manifest in manifests[1:]:
            if getattr(manifest, attribute) != getattr(first, attribute):
                raise ShardError(
                    f"different {what}: {first.out_dir} has {_short(getattr(first, attribute))}, {manifest.out_dir} "
                    f"has {_short(getattr(manifest, attribute))}; {fix}")
    counts = sorted({manifest.shard.count for manifest in manifests if manifest.shard})
    if len(counts) > 1:
        splits = ", ".join(f"{manifest.out_dir}: {manifest.shard}" for manifest in manifests if manifest.shard)
        raise ShardError(f"shards of different splits ({splits}): grade every shard with the same N in --shard I/N")
    if counts:
        present = {manifest.shard.index for manifest in manifests if manifest.shard}
        missing = [f"{index}/{counts[0]}" for index in range(counts[0]) if index not in present]
        if missing:
            raise ShardError(f"missing shards: {', '.join(missing)} (give the OUT_DIR of every shard; "
                             f"merging without them would leave their students out)")


def _student_document(manifest: Manifest, student_id: str, submission_hash: str) -> StudentDocument:
    document = records.read_student(manifest.out_dir, student_id)
    where = manifest.out_dir / "students" / f"{student_id}.json"
    if document is None:
        raise ShardError(f"{where}: missing or unreadable (listed in {manifest.out_dir / MANIFEST})")
    if document.get("student_id") != student_id or document.get("submission_hash") != submission_hash:
        raise ShardError(f"{where} does not match {manifest.out_dir / MANIFEST} (changed after grading?): "
                         f"grade that shard again")
    if document.get("seed") != manifest.seed:
        raise ShardError(f"{where} was graded with seed {document.get('seed')}, not {manifest.seed}")
    return document


def _result(document: StudentDocument) -> tuple[object, ...]:
    """What must agree when a student was graded twice: the submission and every check's outcome."""
    return (
        document.get("submission_hash"),
        document.get("score"),
        document.get("max_score"),
        tuple(
            (notebook.get("notebook"), notebook.get("status"), notebook.get("score"),
             tuple((check.get("id"), check.get("score"), check.get("status"), check.get("misconception"))
                   for check in notebook.get("checks", ())))
            for notebook in document.get("notebooks", ())
        ),
    )


def _describe(document: StudentDocument) -> str:
    score = records.format_number(document.get("score", 0))
    return f"{score} points, submission {str(document.get('submission_hash'))[:12]}"


def _short(value: object) -> str:
    return repr(value[:12] + "...") if isinstance(value, str) and len(value) > 16 else repr(value)


def _plain_name(student_id: str) -> bool:
    return bool(student_id) and "/" not in student_id and "\\" not in student_id and not student_id.startswith(".") \
        and "\0" not in student_id


def _copy_student(source_dir: Path, merged_dir: Path, student_id: str) -> None:
    """Each of the student's files, atomically; the JSON record last (its presence marks the student as done)."""
    for relative in records.student_paths(student_id):
        source = source_dir / relative
        if source.is_dir():
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    _copy_atomically(path, merged_dir / relative / path.relative_to(source))
        elif source.is_file():
            _copy_atomically(source, merged_dir / relative)


def _copy_atomically(source: Path, target: Path) -> None:
    with records.atomic_target(target) as temporary:
        shutil.copyfile(source, temporary)
