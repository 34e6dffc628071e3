"""What `attnkit similarity` reads: the students' solution cells, the base code, and the grading records.

- `read_base(base_paths)`: the base code (BaseCode: the names kept and every k-gram to exclude).
- `read_class(submitted_dir, base, progress, workers)`: one StudentCode per student folder (nbgrader's layout,
  the same notebook lookup as `attnkit grade`), each with the winnowed fingerprints of its solution cells minus
  every k-gram of the base code.
- The base code is the release's notebooks (starter stubs and given cells), the reference (solutions/*.py) and
  the instructor's `--base` files or folders (.py files and the code cells of .ipynb files).
- `read_behaviours(grades_dir)`: {student id: Behaviour} from `attnkit grade`'s students/<id>.json records.
"""

import ast
import concurrent.futures
import functools
import json
import multiprocessing
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.intake import open_submission, student_folders
from autograder.grading.progress import Progress
from autograder.isolation import protected
from autograder.isolation.notebook_plan import RELEASE_DIR, NotebookProblem, solution_cells
from autograder.review.code_fingerprints import default_vocabulary, fingerprints, kgram_fingerprints, normalised_tokens
from autograder.review.similarity import Behaviour, StudentCode
from autograder.safe_text import clean, one_line

__all__ = ["BaseCode", "InputError", "read_base", "read_behaviours", "read_class", "read_student"]

BASE_SUFFIXES = (".py", ".ipynb")
MAX_BASE_FILE_BYTES = 20 * 2**20
PARALLEL_FROM = 200  # students: below this, starting processes costs more than it saves

# Mistakes named with a value fitted from the student's own output (a scale constant, a fill): two students share
# that output only when they chose the same value, so it explains nothing about independence (issue 41's fitted
# families; the similarity bench plants exactly such a pair).
FITTED_MISTAKES = frozenset({"scale_wrong_value", "mask_fill_not_low_enough"})


class InputError(ValueError):
    """An input `attnkit similarity` cannot use (a missing --base path, an unreadable grades folder)."""


def _reference_sources() -> list[tuple[str, str]]:
    """[(label, code)] of the release's code cells and the reference's modules."""
    sources: list[tuple[str, str]] = []
    for notebook in NOTEBOOKS:
        cells = _notebook_code_cells(RELEASE_DIR / f"{notebook}.ipynb") or []
        sources.extend((f"release {notebook}", code) for code in cells)
    # Located, not imported: the grader's code outside the protected packages never imports the reference.
    for package in protected.reference_locations():
        sources.extend((f"solutions/{path.name}", path.read_text(encoding="utf-8"))
                       for path in sorted(package.glob("*.py")))
    return sources


def base_sources(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[str, str]]:
    """[(label, code)] of the instructor's --base files; a folder counts with every .py/.ipynb under it."""
    sources: list[tuple[str, str]] = []
    for path in map(Path, paths):
        if not path.exists():
            raise InputError(f"--base {path}: no such file or folder")
        files = sorted(p for p in path.rglob("*") if p.suffix in BASE_SUFFIXES and p.is_file()) if path.is_dir() \
            else [path]
        if path.is_dir() and not files:
            raise InputError(f"--base {path}: the folder holds no .py or .ipynb file")
        for file in files:
            if file.stat().st_size > MAX_BASE_FILE_BYTES:
                raise InputError(f"--base {file}: larger than {MAX_BASE_FILE_BYTES // 2**20} MB")
            if file.suffix == ".ipynb":
                cells = _notebook_code_cells(file)
                if cells is None:
                    raise InputError(f"--base {file}: not a readable notebook")
                sources.extend((str(file), code) for code in cells)
            else:
                try:
                    sources.append((str(file), file.read_text(encoding="utf-8", errors="replace")))
                except OSError as error:
                    raise InputError(f"--base {file}: {error.strerror or error}") from None
    return sources


def _course_vocabulary(sources: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Names kept in fingerprints: the module-level names the release and the reference define or import."""
    names: set[str] = set()
    for _, code in sources:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return default_vocabulary(names)


def _base_hashes(sources: Iterable[tuple[str, str]], vocabulary: Collection[str]) -> set[int]:
    """Every k-gram hash of the base code (not only the winnowed ones: any shared passage is excluded)."""
    return {fingerprint.hash for _, code in sources for fingerprint in kgram_fingerprints(
        normalised_tokens(code, vocabulary))}


def read_student(folder: Path, vocabulary: Collection[str], excluded: Collection[int]) -> StudentCode:
    """The student's solution cells, fingerprinted, with the base code's k-grams left out."""
    student = StudentCode(clean(folder.name), [])
    solutions: dict[str, list[tuple[str, str]]] = {}
    try:
        with open_submission(folder) as submission:  # the files `attnkit grade` graded; zips extracted meanwhile
            for notebook, located in submission.located.items():
                if located.path is None:
                    student.problems.append(f"{notebook}: {located.reason}")
                    continue
                try:
                    solutions[notebook] = solution_cells(located.path)
                except NotebookProblem as problem:
                    student.problems.append(f"{notebook}: {problem}")
                    student.unreadable.append(f"{notebook}: {problem}")
    except Exception as error:  # noqa: BLE001 - a folder that cannot be read is skipped with a note, never the class
        reason = f"the submission cannot be read: {type(error).__name__}: {one_line(error, 300)}"
        student.problems.append(reason)
        student.unreadable.append(reason)
        return student
    for notebook, cells in solutions.items():
        for grade_id, source in cells:
            index = len(student.cells)
            student.cells.append((f"{notebook} / {clean(grade_id, 80)}", source))
            student.fingerprints.extend((index, fingerprint) for fingerprint in fingerprints(source, vocabulary)
                                        if fingerprint.hash not in excluded)
    return student


@dataclass(frozen=True)
class BaseCode:
    """What the fingerprints of this run are relative to: the names kept, and every k-gram of the base code."""

    vocabulary: frozenset[str]
    excluded: frozenset[int]
    sources: int

    def shared_spans(self, source: str, other: str) -> list[tuple[int, int]]:
        """[(start, end)] of `source`'s passages that `other` has too, outside the base code (every k-gram, not
        only the winnowed ones: what the page highlights)."""
        theirs = {f.hash for f in kgram_fingerprints(normalised_tokens(other, self.vocabulary))} - self.excluded
        return [(f.start, f.end) for f in kgram_fingerprints(normalised_tokens(source, self.vocabulary))
                if f.hash in theirs]


def read_base(extra_base: Iterable[str | os.PathLike[str]] = ()) -> BaseCode:
    references = _reference_sources()
    vocabulary = _course_vocabulary(references)
    sources = references + base_sources(extra_base)
    return BaseCode(vocabulary, frozenset(_base_hashes(sources, vocabulary)), len(sources))


def read_class(submitted_dir: str | os.PathLike[str], base: BaseCode, progress: Progress | None = None,
               workers: int = 1) -> list[StudentCode]:
    """[StudentCode] for every student folder (read by `workers` processes), relative to `base` (read_base)."""
    vocabulary, excluded = base.vocabulary, base.excluded
    folders = student_folders(submitted_dir)
    if progress:
        progress.start(len(folders))
    read = functools.partial(read_student, vocabulary=vocabulary, excluded=excluded)
    students: list[StudentCode] = []
    if workers > 1 and len(folders) > PARALLEL_FROM:
        # Tokenising is pure Python: one process per core. Fork keeps the (read-only) base code in every child.
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            for student in pool.map(read, folders, chunksize=max(1, min(64, len(folders) // (4 * workers)))):
                students.append(student)
                if progress:
                    progress.advance(student.id)
    else:
        for folder in folders:
            students.append(read(folder))
            if progress:
                progress.advance(folder.name)
    return students


def read_behaviours(grades_dir: str | os.PathLike[str]) -> tuple[dict[str, Behaviour], list[str]]:
    """{student id: Behaviour} from GRADES_DIR/students/*.json, and notes on what could not be used."""
    folder = Path(grades_dir) / "students"
    if not folder.is_dir():
        raise InputError(f"--grades {grades_dir}: no students/ folder (is it an `attnkit grade` output?)")
    behaviours: dict[str, Behaviour] = {}
    notes: list[str] = []
    fingerprinted = 0
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            student_id = clean(record["student_id"])
            checks = [check for notebook in record["notebooks"] for check in notebook["checks"]]
        except (OSError, ValueError, KeyError, TypeError):
            notes.append(f"{clean(path.name)}: not a readable attnkit record, left out")
            continue
        outputs: dict[str, set[str]] = {}
        misconceptions: set[str] = set()
        named_in: set[str] = set()
        for check in checks:
            if not isinstance(check, dict):
                continue
            keys = check.get("wrong_outputs")
            if isinstance(keys, list) and keys:
                fingerprinted += 1
                outputs.setdefault(str(check.get("exercise", "")), set()).update(str(key) for key in keys)
            if check.get("misconception"):
                misconceptions.add(str(check["misconception"]))
                if str(check["misconception"]) not in FITTED_MISTAKES:
                    named_in.add(str(check.get("exercise", "")))
        # One known mistake fails several checks of its exercise, not all of which name it: all are explained.
        explained = {key for exercise in named_in for key in outputs.get(exercise, ())}
        behaviours[student_id] = Behaviour({exercise: frozenset(keys) for exercise, keys in outputs.items()},
                                           frozenset(misconceptions), frozenset(explained))
    failed_hidden = any(m for b in behaviours.values() for m in b.misconceptions)
    if behaviours and not fingerprinted and failed_hidden:
        notes.append("no record holds wrong-output fingerprints (graded by an older attnkit?): grade again for "
                     "behavioural evidence; misconceptions are still used")
    return behaviours, notes


def _notebook_code_cells(path: str | os.PathLike[str]) -> list[str] | None:
    """The code cells of a notebook file, or None when it is not a readable notebook."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        cells = document["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    code: list[str] = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            code.append("".join(source) if isinstance(source, list) else str(source))
    return code
