"""Text from the grading child that repeats a line of the protected sources is withheld, never shown.

Student code decides what its exceptions say, and their messages reach the feedback page, the student's JSON and
Gradescope's visible output. The child cannot read the protected sources (Landlock, and they are not in its
memory: autograder.isolation.zygote), but a message can still carry one, typed from memory or smuggled in. So every
string in the child's events is compared with the lines of the protected sources (the reference, the check modules,
the source notebooks) that are not public (in the release, or in the code a student kit ships): a string that
holds one is replaced by a note. Lines the student wrote themselves (in the notebook being graded) are theirs to
see: otherwise a withheld message would tell them which of their lines is in the solution.
"""

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.isolation.protected import check_locations, checkout_root, reference_locations

__all__ = ["WITHHELD", "Withholder", "protected_lines"]

MIN_LINE_CHARS = 24  # shorter lines (`return x`, `import torch`...) say nothing of the answer
WITHHELD = ("[withheld: this text repeats a line of the grader's protected code, which is never shown; "
            "it did not come from your notebook]")


def normalised(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class ProtectedLines:
    """The protected lines, indexed by their first MIN_LINE_CHARS characters for a search linear in the text."""

    by_prefix: dict[str, tuple[str, ...]]

    def found_in(self, text: str) -> list[str]:
        """The protected lines that occur in `text` (already normalised)."""
        found = []
        for start in range(len(text) - MIN_LINE_CHARS + 1):
            for line in self.by_prefix.get(text[start:start + MIN_LINE_CHARS], ()):
                if text.startswith(line, start):
                    found.append(line)
        return found


class Withholder:
    """Replaces, in a child's event, every string that holds a protected line the student did not write."""

    def __init__(self, lines: ProtectedLines, student_code: Iterable[str]) -> None:
        self._lines = lines
        self._student_code = normalised("\n".join(student_code))

    def event(self, value: object) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.event(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.event(item) for item in value]
        return value

    def text(self, text: str) -> str:
        if len(text) < MIN_LINE_CHARS:
            return text
        found = self._lines.found_in(normalised(text))
        if any(line not in self._student_code for line in found):
            return WITHHELD
        return text


@functools.cache
def protected_lines() -> ProtectedLines:
    """The lines of the reference, the checks and the source notebooks that no student can read anywhere."""
    root = checkout_root()
    protected = _lines_of([*_python_files(reference_locations()), *_python_files(check_locations())])
    protected |= _notebook_lines(sorted((root / "source").rglob("*.ipynb")))
    public = _notebook_lines(sorted((root / "release").rglob("*.ipynb")))
    hidden = {Path(package).parts for package in (*reference_locations(), *check_locations())}
    public |= _lines_of(path for path in (root / "autograder").rglob("*.py") if not _inside(path, hidden))
    by_prefix: dict[str, list[str]] = {}
    for line in sorted(protected - public):
        by_prefix.setdefault(line[:MIN_LINE_CHARS], []).append(line)
    return ProtectedLines({prefix: tuple(lines) for prefix, lines in by_prefix.items()})


def _inside(path: Path, folders: set[tuple[str, ...]]) -> bool:
    """`path` is one of `folders` (each given as its parts) or lies below one: compared part by part, as
    `folder == path or folder in path.parents` would, without making a Path for each parent (that was most of a
    class run's first child's wait: protected_lines runs before it is forked)."""
    parts = path.parts
    return any(parts[:len(folder)] == folder for folder in folders)


def _python_files(locations: Iterable[Path]) -> list[Path]:
    """The Python files of packages' folders, and the files named themselves."""
    return [path for location in locations
            for path in ([Path(location)] if Path(location).is_file() else sorted(Path(location).rglob("*.py")))]


def _lines_of(paths: Iterable[Path]) -> set[str]:
    lines = set()
    for path in paths:
        lines.update(_kept(path.read_text(encoding="utf-8", errors="replace").splitlines()))
    return lines


def _notebook_lines(paths: Iterable[Path]) -> set[str]:
    lines = set()
    for path in paths:
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        for cell in cells:
            source = cell.get("source", "")
            lines.update(_kept(("".join(source) if isinstance(source, list) else str(source)).splitlines()))
    return lines


def _kept(lines: Iterable[str]) -> set[str]:
    # A line shorter than MIN_LINE_CHARS is never longer once normalised: most of a source file is not normalised.
    return {kept for line in lines
            if len(line) >= MIN_LINE_CHARS and len(kept := normalised(line)) >= MIN_LINE_CHARS}
