"""Read a submitted notebook into a plan: which cells to run, and after which cell to probe each exercise.

`plan_notebook(path, notebook=None)` is the entry point. It parses the JSON only (nothing of the
student's is run or even compiled here: that happens in the sandboxed child) and places each exercise
of the notebook right after its graded cell (nbgrader grade id `test_<exercise id>`), where nbgrader
would call `grade(...)`. An exercise whose graded cell was deleted is probed after the last cell.
The graded cells' own code is not run: nbgrader restores them from the source notebook anyway.

Cells are prepared as `nbgrader autograde` prepares them (its OverwriteCells preprocessor), from the
committed release: a cell whose grade id the release knows gets the release's cell type back, and a
locked (given) cell that the student edited gets the release's code back, with a note naming it.
Stored outputs are dropped before the size cap applies: plots never cost a grade, only code counts.
"""

import errno
import functools
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.course.assignment import ASSIGNMENT
from autograder.course.exercises import NOTEBOOKS, of_notebook
from autograder.isolation.child_task import Step
from autograder.isolation.limits import MAX_FILE_BYTES
from autograder.safe_text import clean

__all__ = [
    "GRADED_CELL_PREFIX", "NotebookPlan", "NotebookProblem", "RELEASE_DIR", "code_cells",
    "plan_notebook", "read_submitted", "solution_cells", "submitted_sha256",
]

# The code a notebook may hold once outputs are dropped.
MAX_CODE_BYTES = 20 * 2**20
GRADED_CELL_PREFIX = "test_"
RELEASE_DIR = Path(__file__).resolve().parents[2] / "release" / ASSIGNMENT


class NotebookProblem(ValueError):
    """The file cannot be graded as a notebook of this assignment (missing, not JSON, no cells...)."""


@dataclass(frozen=True)
class NotebookPlan:
    path: Path
    notebook: str  # name in exercises.NOTEBOOKS
    steps: tuple[Step, ...]
    exercises: tuple[str, ...]
    sha256: str
    notes: tuple[str, ...] = ()


def plan_notebook(path: str | os.PathLike[str], notebook: str | None = None) -> NotebookPlan:
    """The plan for grading `path` as `notebook` (inferred from the file name or graded cells when None)."""
    path = Path(path)
    data = read_submitted(path)
    cells = _cells(path, data)
    notebook = notebook or _identify(path, cells)
    exercise_ids = tuple(exercise.id for exercise in of_notebook(notebook))
    graded_cells = {f"{GRADED_CELL_PREFIX}{exercise_id}": exercise_id for exercise_id in exercise_ids}
    given = release_cells(notebook)

    steps: list[Step] = []
    placed: set[str] = set()
    notes: list[str] = []
    code_size = 0
    for index, cell in enumerate(cells):
        grade_id = _grade_id(cell)
        exercise_id = graded_cells.get(grade_id)
        # Graded cells never run here, so only the others are restored (and noted).
        released = given.get(grade_id) if exercise_id is None else None
        cell_type, source = _as_released(cell, released, index, notes)
        if exercise_id is None and cell_type == "code":
            code_size += len(source)
            steps.append(Step("cell", index, source=source))
        if exercise_id is not None and exercise_id not in placed:
            placed.add(exercise_id)
            steps.append(Step("exercise", index, exercise=exercise_id))
    missing = [exercise_id for exercise_id in exercise_ids if exercise_id not in placed]
    if missing and len(missing) == len(exercise_ids):
        notes.append(f"none of the graded cells of {notebook} are in this notebook: is it the right notebook "
                     "of the attention assignment?")
    elif missing:
        notes.append(f"graded cell of {', '.join(missing)} deleted: checked after the last cell")
    steps.extend(Step("exercise", -1, exercise=exercise_id) for exercise_id in missing)
    if code_size > MAX_CODE_BYTES:
        raise NotebookProblem(f"{clean(path.name)} holds more than {MAX_CODE_BYTES // 2**20} MB of code")
    return NotebookPlan(path, notebook, tuple(steps), exercise_ids, hashlib.sha256(data).hexdigest(), tuple(notes))


@dataclass(frozen=True)
class ReleasedCell:
    cell_type: str
    source: str
    locked: bool


@functools.cache
def release_cells(notebook: str, release_dir: str | os.PathLike[str] = RELEASE_DIR) -> dict[str, ReleasedCell]:
    """{grade id: ReleasedCell} of the release's version of `notebook`; empty when the release is not there."""
    path = Path(release_dir) / f"{notebook}.ipynb"
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    released = {}
    for cell in cells:
        grade_id = _grade_id(cell)
        if grade_id:
            locked = bool(cell["metadata"]["nbgrader"].get("locked"))
            released[grade_id] = ReleasedCell(cell.get("cell_type", ""), _source(cell), locked)
    return released


def _as_released(cell: dict[str, Any], released: ReleasedCell | None, index: int,
                 notes: list[str]) -> tuple[Any, str]:
    """(cell type, source) to grade: the student's, or the release's where nbgrader would restore it."""
    cell_type, source = cell.get("cell_type"), _source(cell)
    if released is None:
        return cell_type, source
    grade_id = _grade_id(cell)
    if cell_type != released.cell_type:
        notes.append(f"cell {index} ({grade_id}) was turned into a {clean(cell_type, 40)} cell: graded as the "
                     f"{released.cell_type} cell it is, as nbgrader does")
        cell_type = released.cell_type
    if released.locked and cell_type == "code" and source != released.source:
        notes.append(f"cell {index} ({grade_id}) is given code that was edited: graded with the given code, "
                     "as nbgrader does")
        source = released.source
    return cell_type, source


def read_submitted(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytearray:
    """The bytes of the file at `path` (a bytearray), read without following a symbolic link, `limit` at most.

    The file is opened with O_NOFOLLOW and what was opened is checked with fstat (a regular file, no larger
    than `limit`) before a byte is read: a link, a FIFO or a sparse 4 GB file is refused, not read, whatever an
    earlier lstat said. NotebookProblem says why a file cannot be read.
    """
    path = Path(path)
    fd, size = _open_submitted(path, limit)
    try:
        data = bytearray(size + 1)  # one byte more: a file that grew since fstat is seen
        view, filled = memoryview(data), 0
        while filled < len(data):
            count = os.readv(fd, [view[filled:]])
            if count == 0:
                break
            filled += count
        view.release()
        if filled > size:
            raise NotebookProblem(f"{clean(path.name)} changed while it was read")
        del data[filled:]  # in place: a large file is never held twice
        return data
    except OSError as error:
        raise NotebookProblem(f"{clean(path.name)} cannot be read: {error.strerror or error}") from None
    finally:
        os.close(fd)


def submitted_sha256(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """The SHA-256 (hex) of the file at `path`, read as read_submitted reads it but a block at a time."""
    path = Path(path)
    fd, _ = _open_submitted(path, limit)
    digest, total = hashlib.sha256(), 0
    try:
        while block := os.read(fd, 2**20):
            total += len(block)
            if total > limit:
                raise NotebookProblem(f"{clean(path.name)} changed while it was read")
            digest.update(block)
    except OSError as error:
        raise NotebookProblem(f"{clean(path.name)} cannot be read: {error.strerror or error}") from None
    finally:
        os.close(fd)
    return digest.hexdigest()


def _open_submitted(path: Path, limit: int) -> tuple[int, int]:
    """(descriptor, size) of `path` opened without following a link: a regular file of `limit` bytes at most."""
    name = clean(path.name)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses it next).
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise NotebookProblem(f"no such file: {clean(str(path))}") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotebookProblem(f"{name} is a symbolic link: not followed") from None
        raise NotebookProblem(f"{name} cannot be read: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotebookProblem(f"not a file: {clean(str(path))}")
        if status.st_size > limit:
            raise NotebookProblem(f"{name} is larger than {limit // 2**20} MB")
    except BaseException:
        os.close(fd)
        raise
    return fd, status.st_size


def _cells(path: Path, data: bytes | bytearray) -> list[dict[str, Any]]:
    if not data or data.isspace():
        raise NotebookProblem(f"{clean(path.name)} is empty")
    try:
        document = json.loads(data, object_pairs_hook=_without_outputs)
    except (ValueError, RecursionError) as error:
        raise NotebookProblem(f"{clean(path.name)} is not a notebook (invalid JSON: {_first_line(error)})") from None
    if not isinstance(document, dict):
        raise NotebookProblem(f"{clean(path.name)} is not a notebook (no cells)")
    cells = document.get("cells")
    if cells is None and isinstance(document.get("worksheets"), list):  # nbformat 3
        # Every level is the student's JSON: a sheet that is no object, or whose cells are no list, holds no cell.
        cells = [cell for sheet in document["worksheets"] if isinstance(sheet, dict)
                 and isinstance(sheet.get("cells"), list) for cell in sheet["cells"]]
    if not isinstance(cells, list):
        raise NotebookProblem(f"{clean(path.name)} is not a notebook (no cells)")
    return [cell for cell in cells if isinstance(cell, dict)]


def _without_outputs(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object with a cell's stored outputs and attachments left out: the grader never uses them."""
    return {key: value for key, value in pairs if key not in ("outputs", "attachments")}


def _identify(path: Path, cells: Iterable[dict[str, Any]]) -> str:
    if path.stem in NOTEBOOKS:
        return path.stem
    grade_ids = {_grade_id(cell) for cell in cells}
    for notebook in NOTEBOOKS:
        if any(f"{GRADED_CELL_PREFIX}{e.id}" in grade_ids for e in of_notebook(notebook)):
            return notebook
    raise NotebookProblem(f"cannot tell which notebook of the attention assignment {clean(path.name)} is: its "
                          f"name is none of {', '.join(NOTEBOOKS)} and it has none of their graded cells")


def _grade_id(cell: dict[str, Any]) -> str:
    metadata = cell.get("metadata")
    nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return grade_id if isinstance(grade_id, str) else ""


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", cell.get("input", ""))  # "input": nbformat 3
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def solution_cells(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """[(grade id, source)] of the notebook's solution cells (nbgrader `solution: true`), in notebook order.

    What the student wrote, for `attnkit similarity`; NotebookProblem when the file cannot be read as a notebook.
    """
    path = Path(path)
    cells = _cells(path, read_submitted(path))
    solutions = []
    for cell in cells:
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if isinstance(nbgrader, dict) and nbgrader.get("solution") and cell.get("cell_type") == "code":
            solutions.append((_grade_id(cell), _source(cell)))
    return solutions


def code_cells(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The sources of the notebook's code cells, in order (NotebookProblem when it cannot be read as a notebook).

    What tells an untouched copy of the release from edited work (autograder.grading.intake).
    """
    path = Path(path)
    return tuple(_source(cell) for cell in _cells(path, read_submitted(path)) if cell.get("cell_type") == "code")
