"""Which file of a student's submission is which notebook: `open_submission(folder)`, for every consumer.

`attnkit grade` (autograder.grading.classroom), Gradescope's run_autograder (autograder.integrations.gradescope)
and `attnkit similarity` (autograder.review.inputs) all ask this module, so they agree on every folder.

A notebook N is looked for in these places, in order; the first place that holds a candidate decides (where
`attention/` holds only untouched copies of the release, the second place is looked at with it):
1. `attention/` in the student's folder (nbgrader's layout);
2. the student's folder itself and the folders up to two levels below it (`attention/attention/` after an
   unzip, a Gradescope upload inside a folder);
3. the members of the `.zip` files found in those folders, extracted into a temporary directory.
A candidate is a file named N.ipynb, or one whose name stands for N once case, separators and copy suffixes
are set aside (`N (1).ipynb`, `N-Copy1.ipynb`: autograder.grading.submissions.normalised_name), or either
saved as `.ipynb.txt`. Names are a first guess: where no name stands for N (or only untouched copies of the
release do), a notebook file of any other name that carries N's content is a candidate too (Colab's
`Copy of N.ipynb`, an LMS download's `surname_LATE_48213_N.ipynb`, `notebook1.ipynb`): N's graded and given cells,
recognised by their nbgrader grade ids and by the given cells' text (`_carried_notebook`).

Several candidates in that place are graded when the work is unambiguous: copies with the same code cells
count once, and an untouched copy of the release (the code cells of release/attention/N.ipynb) or a file
that is not a readable notebook is set aside. Two copies holding different work: none is graded, and the
reason names every candidate. The notes say which file was graded and why.

Nothing is ever followed: the student's folder, `attention/`, any folder, notebook or zip member that is a
symbolic link is reported ("... is a symbolic link: not followed") and left out. Folders are opened one
level at a time with O_NOFOLLOW relative to their parent's descriptor, so nothing outside the student's
folder is read even if a folder is swapped for a link meanwhile; files are read by
autograder.isolation.notebook_plan.read_submitted (O_NOFOLLOW, fstat, size caps before any byte is read).
"""

import contextlib
import dataclasses
import errno
import functools
import json
import logging
import os
import posixpath
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, cast

from autograder.course.assignment import ASSIGNMENT
from autograder.course.exercises import NOTEBOOKS
from autograder.grading.submissions import normalised_name
from autograder.isolation.limits import MAX_FILE_BYTES
from autograder.isolation.notebook_plan import (
    RELEASE_DIR,
    NotebookProblem,
    code_cells,
    read_submitted,
)
from autograder.safe_text import clean

__all__ = [
    "BY_CONTENT", "Located", "MAX_CONTENT_READS", "MAX_FILE_BYTES", "MAX_NOTES", "MAX_ZIP_MEMBERS", "Submission",
    "open_submission", "student_folders",
]

logger = logging.getLogger(__name__)

NOTEBOOK_SUFFIXES = (".ipynb", ".ipynb.txt")  # lower case; ".ipynb.txt": saved from a browser as text
SKIPPED_FOLDERS = ("__MACOSX", "__pycache__")  # and every hidden folder (.ipynb_checkpoints, .git)
MAX_DEPTH = 3  # path parts below the student's folder: "attention/attention/N.ipynb"
MAX_ENTRIES = 10_000  # directory entries looked at per student: a folder of a million files stops early
# Zip files: the archive, its member count, and what is extracted (the candidate notebooks only), checked from
# the headers before extracting and again while extracting, so a zip bomb stops at the cap.
MAX_ZIP_BYTES = MAX_FILE_BYTES
MAX_ZIP_MEMBERS = 10_000
MAX_EXTRACTED_BYTES = 2 * MAX_FILE_BYTES
CHUNK = 2**20
# Notebook files of other names read to find a notebook by its content: a folder of a thousand notebooks costs
# this many reads, not a thousand.
MAX_CONTENT_READS = 40
MAX_NOTES = 10  # per student: every notebook's notes and reasons repeat them
MIN_MARKER_CHARS = 30  # a given cell shorter than this ("x = 1") says nothing about which notebook it is

NOTEBOOK_FOLDER, NEAR_BY, IN_ZIP = 1, 2, 3  # the places, in the order they are looked at
BY_CONTENT = "found by content"  # in the note of a notebook recognised by its cells, whatever its name


@dataclass(frozen=True)
class Located:
    """Notebook `notebook` of one submission: `path` to grade, or None (not submitted: `reason` says why)."""

    notebook: str
    path: Path | None
    shown: str = ""  # the graded file as the student named it ("attention/N.ipynb", "work.zip: N.ipynb")
    notes: tuple[str, ...] = ()  # for the student: which file was graded and why, links not followed
    reason: str = ""
    candidates: tuple[str, ...] = ()  # every file that could have been this notebook
    by_content: bool = False  # the graded file was recognised by its cells, not by its name


@dataclass
class Submission:
    """What one student handed in: each notebook Located, and what else the folder held.

    A context manager: close() removes the files extracted from zips (`scratch`), which must exist until the
    notebooks are graded.
    """

    folder: Path
    located: dict[str, Located]
    notes: tuple[str, ...] = ()  # links not followed, zips or members refused: also in every Located
    files: tuple[str, ...] = ()  # every regular file seen, as shown to the student
    unused: tuple[str, ...] = ()  # notebook files that were not graded
    scratch: Path | None = None

    def close(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True)
class _File:
    shown: str
    path: Path  # where it is read: in the student's folder, or extracted from a zip into the scratch directory
    place: int
    name: str  # the file name, for the notebook it stands for
    by_content: bool = False  # a candidate because it carries the notebook's cells, whatever its name

    @property
    def exact(self) -> bool:
        return self.name == f"{_stands_for(self.name)}.ipynb"


@dataclass
class _Scan:
    files: list[_File] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)  # every regular file
    zips: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    entries: int = 0
    assignment_folder: bool = False  # the student's folder holds an attention/ folder (not a link)
    # (st_dev, st_ino) of each file of several names -> (st_nlink, its names seen in the folder)
    hard_links: dict[tuple[int, int], tuple[int, list[str]]] = field(default_factory=dict)
    more_notes: int = 0  # notes past MAX_NOTES: counted, not kept (a folder of 10,000 links is one line more)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)
        else:
            self.more_notes += 1

    def all_notes(self) -> tuple[str, ...]:
        more = (f"and {self.more_notes:,} more like these (links not followed, zip members not extracted)",)
        return (*self.notes, *(more if self.more_notes else ()))


def _stands_for(name: str) -> str:
    """The notebook a file name stands for (its normalised stem), or "" when it is no notebook file."""
    lower = name.lower()
    for suffix in sorted(NOTEBOOK_SUFFIXES, key=len, reverse=True):
        if lower.endswith(suffix) and len(name) > len(suffix):
            return normalised_name(name[: -len(suffix)])
    return ""


def student_folders(submitted_dir: str | os.PathLike[str]) -> list[Path]:
    """The student folders of `submitted_dir`, by name: folders, and symbolic links (graded 0, never followed)."""
    with os.scandir(submitted_dir) as entries:
        return sorted((Path(entry.path) for entry in entries if not entry.name.startswith(".")
                       and (entry.is_symlink() or entry.is_dir(follow_symlinks=False))), key=lambda path: path.name)


def open_submission(folder: str | os.PathLike[str], notebooks: Sequence[str] = NOTEBOOKS,
                    scratch_parent: str | os.PathLike[str] | None = None) -> Submission:
    """The Submission in `folder` (a student's folder): close it, or use `with`, once graded.

    Files extracted from zips go to a new private directory inside `scratch_parent` (default: the system's).
    """
    folder = Path(folder)
    # The instructor's path to the class is trusted; nothing below it is followed.
    folder = Path(os.path.realpath(folder.parent)) / folder.name
    scan = _Scan()
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        problem = _refused(f"{clean(folder.name)}/", error, folder.name, None, folder.parent)
        return Submission(folder, {notebook: Located(notebook, None, reason=f"not submitted ({problem})")
                                   for notebook in notebooks}, (problem,))
    try:
        _scan(root, folder, (), scan)
    finally:
        os.close(root)
    _refuse_hard_links(scan)
    submission = Submission(folder, {}, files=tuple(scan.seen))
    try:
        _resolve(submission, scan, notebooks, scratch_parent)
    except BaseException:
        submission.close()
        raise
    return submission


def _refuse_hard_links(scan: _Scan) -> None:
    """A file with a name outside the student's folder (a hard link to the instructor's file) is not the student's
    own: never graded, never looked into, as a symbolic link."""
    outside = {shown for names, seen in scan.hard_links.values() if len(seen) < names for shown in seen}
    for shown in sorted(outside):
        scan.note(f"{shown} is a hard link to a file outside the submission: not graded")
    scan.files[:] = [file for file in scan.files if file.shown not in outside]
    scan.zips[:] = [(shown, path) for shown, path in scan.zips if shown not in outside]


def _refused(shown: str, error: OSError, name: str, dir_fd: int | None,
             parent: str | os.PathLike[str] | None = None) -> str:
    """Why `name` (in the folder open as `dir_fd`, or at `parent`) could not be opened without following links."""
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        with contextlib.suppress(OSError):  # only to word the note: what is there now
            # `parent` is given where `dir_fd` is not
            mode = (os.lstat(name, dir_fd=dir_fd) if dir_fd is not None
                    else os.lstat(Path(cast(str, parent)) / name)).st_mode
            if not stat.S_ISLNK(mode):
                return f"{shown} is not a folder"
        return f"{shown} is a symbolic link: not followed"
    return f"{shown} cannot be read: {error.strerror or error}"


def _scan(fd: int, folder: Path, parts: tuple[str, ...], scan: _Scan) -> None:
    """Every file under the directory open as `fd` (the student's folder / `parts`), no link followed."""
    with os.scandir(fd) as iterator:
        entries = sorted(iterator, key=lambda entry: entry.name)
    for entry in entries:
        scan.entries += 1
        if scan.entries > MAX_ENTRIES:
            if scan.entries == MAX_ENTRIES + 1:
                scan.notes.append(f"more than {MAX_ENTRIES} files and folders: the rest were not looked at")
            return
        name = entry.name
        relative = (*parts, name)
        shown = clean("/".join(relative))
        if name.startswith(".") or name in SKIPPED_FOLDERS:
            continue
        if entry.is_symlink():
            scan.links.append(shown)
            scan.note(f"{shown} is a symbolic link: not followed")
        elif entry.is_dir(follow_symlinks=False):
            if len(relative) >= MAX_DEPTH:
                continue
            scan.assignment_folder |= relative == (ASSIGNMENT,)
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as error:  # swapped for a link since it was listed, or unreadable
                scan.note(_refused(f"{shown}/", error, name, fd))
                continue
            try:
                _scan(child, folder, relative, scan)
            finally:
                os.close(child)
        elif entry.is_file(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            if info.st_nlink > 1:
                scan.hard_links.setdefault((info.st_dev, info.st_ino), (info.st_nlink, []))[1].append(shown)
            path = folder.joinpath(*relative)
            if _stands_for(name):
                place = NOTEBOOK_FOLDER if parts == (ASSIGNMENT,) else NEAR_BY
                scan.files.append(_File(shown, path, place, name))
            elif name.lower().endswith(".zip"):
                scan.zips.append((shown, path))
            scan.seen.append(shown)


def _resolve(submission: Submission, scan: _Scan, notebooks: Sequence[str],
             scratch_parent: str | os.PathLike[str] | None) -> None:
    wanted = {notebook: [file for file in scan.files if _stands_for(file.name) == notebook] for notebook in notebooks}
    nearest = {notebook: _nearest(notebook, files) for notebook, files in wanted.items()}
    missing = {notebook for notebook, files in nearest.items() if not files}
    members: list[_File] = []
    if missing and scan.zips:
        submission.scratch = Path(tempfile.mkdtemp(prefix="attnkit-intake-", dir=scratch_parent))
        members = _from_zips(scan, missing, submission.scratch, notebooks)
        for notebook in missing:
            nearest[notebook] = [member for member in members if _stands_for(member.name) == notebook]
    looking = [notebook for notebook in notebooks if _needs_content(notebook, nearest[notebook])]
    if looking:
        others = [file for file in (*scan.files, *members) if _stands_for(file.name) not in notebooks]
        for notebook, files in _by_content(others, tuple(notebooks), scan).items():
            if notebook in looking:
                nearest[notebook] = [*nearest[notebook], *files]
    notes = scan.all_notes()
    submission.notes = notes
    for notebook in notebooks:
        submission.located[notebook] = _choose(notebook, nearest[notebook], scan, notes)
    graded = {located.shown for located in submission.located.values() if located.path is not None}
    submission.unused = tuple(file.shown for file in scan.files if file.shown not in graded)


def _needs_content(notebook: str, candidates: Iterable[_File]) -> bool:
    """Whether files of other names are looked into for `notebook`: no name stands for it, or only the release does."""
    return all(_kind(file, notebook) in ("untouched", "unreadable") for file in candidates)


def _by_content(files: Sequence[_File], notebooks: tuple[str, ...], scan: _Scan) -> dict[str, list[_File]]:
    """{notebook: the files of `files` that carry its content}, the first MAX_CONTENT_READS files read."""
    found: dict[str, list[_File]] = {}
    for index, file in enumerate(files):
        if index == MAX_CONTENT_READS:
            scan.notes.append(f"{len(files) - index} more notebook files of other names were not looked into")
            break
        notebook = _carried_notebook(file.path, notebooks)
        if notebook:
            found.setdefault(notebook, []).append(dataclasses.replace(file, by_content=True))
    return found


def _carried_notebook(path: Path, notebooks: tuple[str, ...]) -> str:
    """The notebook of `notebooks` whose graded and given cells the file at `path` carries, or "" when none does.

    A notebook's markers are its cells' nbgrader grade ids and its given cells' text that no other notebook of the
    assignment has. The file is that notebook when it holds at least a third of them (and 3), more than of any
    other: a Colab or Kaggle copy keeps them all, a scratch notebook with a pasted cell or two is none.
    """
    try:
        held = _file_markers(path)
    except NotebookProblem:
        return ""
    counts = sorted(((len(held & markers), notebook) for notebook, markers in _release_markers(notebooks).items()),
                    reverse=True)
    if not counts:
        return ""
    (best, notebook), runner_up = counts[0], (counts[1][0] if len(counts) > 1 else 0)
    needed = max(3, len(_release_markers(notebooks)[notebook]) // 3)
    return notebook if best >= needed and best > runner_up else ""


@functools.cache
def _release_markers(notebooks: tuple[str, ...],
                     release_dir: str | os.PathLike[str] = RELEASE_DIR) -> dict[str, frozenset[tuple[str, str]]]:
    """{notebook: the markers (see _carried_notebook) of the release's version that no other notebook has}."""
    markers: dict[str, frozenset[tuple[str, str]]] = {}
    for notebook in notebooks:
        try:
            markers[notebook] = _file_markers(Path(release_dir) / f"{notebook}.ipynb", given_only=True)
        except NotebookProblem:
            logger.warning("release/%s/%s.ipynb cannot be read: no file is recognised as it by its content",
                           ASSIGNMENT, notebook)
            markers[notebook] = frozenset()
    return {notebook: own - frozenset().union(*(other for name, other in markers.items() if name != notebook))
            for notebook, own in markers.items()}


def _file_markers(path: Path, given_only: bool = False) -> frozenset[tuple[str, str]]:
    """The grade ids ("id", ...) and the whitespace-folded text ("text", ...) of the notebook's cells.

    `given_only`: the text of the cells a student does not write (markdown, and code cells that are no solution).
    """
    try:
        document = json.loads(read_submitted(path), object_pairs_hook=_without_outputs)
    except (ValueError, RecursionError) as error:
        raise NotebookProblem(f"{clean(path.name)} is not a notebook") from error
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookProblem(f"{clean(path.name)} is not a notebook (no cells)")
    markers: set[tuple[str, str]] = set()
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        nbgrader = _nbgrader(cell)
        if isinstance(nbgrader.get("grade_id"), str):
            markers.add(("id", nbgrader["grade_id"]))
        if given_only and nbgrader.get("solution"):
            continue
        text = " ".join(_text(cell.get("source")).split())
        if len(text) >= MIN_MARKER_CHARS:
            markers.add(("text", text))
    return frozenset(markers)


def _nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    metadata = cell.get("metadata")
    nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return nbgrader if isinstance(nbgrader, dict) else {}


def _text(source: object) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _without_outputs(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object without a cell's outputs and attachments: a notebook full of plots is read for its text only."""
    return {key: value for key, value in pairs if key not in ("outputs", "attachments")}


def _nearest(notebook: str, files: Iterable[_File]) -> list[_File]:
    """The candidates of the first place that has any; those near by too when attention/ holds only the release."""
    first = [file for file in files if file.place == NOTEBOOK_FOLDER]
    near = [file for file in files if file.place == NEAR_BY]
    if first and near and all(_kind(file, notebook) == "untouched" for file in first):
        return first + near  # the work was saved elsewhere: the untouched release is set aside by _choose
    return first or near


def _choose(notebook: str, candidates: list[_File], scan: _Scan, notes: tuple[str, ...]) -> Located:
    """Located for `notebook` from the candidates of one place (see the module's docstring)."""
    expected = f"{ASSIGNMENT}/{notebook}.ipynb"
    shown = tuple(file.shown for file in candidates)
    if not candidates:
        reason = f"not submitted (no {expected}" if scan.assignment_folder else \
            f"not submitted (no {ASSIGNMENT}/ folder"
        named = [link for link in scan.links if _stands_for(posixpath.basename(link)) == notebook]
        if named:
            reason += f"; {', '.join(named)}: a symbolic link is never followed"
        notebook_files = [file.shown for file in scan.files]
        if notebook_files:
            reason += f"; the notebooks handed in are {', '.join(notebook_files)}"
        return Located(notebook, None, reason=_with_notes(reason + ")", notes), candidates=tuple(named))
    if len(candidates) == 1:
        [file] = candidates
        why = _where(file, expected)
        return Located(notebook, file.path, file.shown, (*([why] if why else []), *notes), candidates=shown,
                       by_content=file.by_content)

    kinds = {file: _kind(file, notebook) for file in candidates}
    edited = {kind for kind in kinds.values() if kind not in ("untouched", "unreadable")}
    if len(edited) > 1:
        reason = (f"not submitted: {len(candidates)} files could be {notebook}.ipynb and they hold different work, "
                  f"so none was graded: {', '.join(shown)}; keep one and hand in again")
        return Located(notebook, None, reason=_with_notes(reason, notes), candidates=shown)
    if edited:
        pool, why = [file for file in candidates if kinds[file] in edited], "the only edited work"
    elif "untouched" in kinds.values():
        pool, why = [file for file in candidates if kinds[file] == "untouched"], "none has edited code"
    else:
        pool, why = candidates, "none is a readable notebook"
    chosen = min(pool, key=lambda file: (not file.exact, file.by_content, file.shown.count("/"), file.shown))
    sets_aside: dict[str | tuple[str, ...], str] = {
        "untouched": "the release, untouched", "unreadable": "not a readable notebook"}
    others = "; ".join(f"{file.shown}: {sets_aside.get(kinds[file], 'the same code')}" for file in candidates
                       if file is not chosen)
    found = f" (recognised by its cells: {BY_CONTENT})" if chosen.by_content else ""
    note = f"graded {chosen.shown} as {notebook}.ipynb{found}, {why} of {len(candidates)} copies ({others})"
    return Located(notebook, chosen.path, chosen.shown, (note, *notes), candidates=shown, by_content=chosen.by_content)


def _where(file: _File, expected: str) -> str:
    """The note for the only candidate, unless it is where and what nbgrader expects."""
    if file.place == NOTEBOOK_FOLDER and file.exact and not file.by_content:
        return ""
    notebook = posixpath.basename(expected)
    if file.by_content:
        return f"graded {file.shown} as {notebook}: its name is not {notebook} but it holds that notebook's cells " \
               f"({BY_CONTENT})"
    if file.place == IN_ZIP:
        return f"graded {file.shown} as {notebook}: found only inside the zip file"
    if file.place == NEAR_BY:
        return f"graded {file.shown} as {notebook} (not in an {ASSIGNMENT}/ folder)"
    return f"graded {file.shown} as {notebook} (no file of that exact name was handed in)"


def _kind(file: _File, notebook: str) -> str | tuple[str, ...]:
    """"untouched", "unreadable", or the code cells themselves (equal code: the same work)."""
    try:
        code = code_cells(file.path)
    except NotebookProblem:
        return "unreadable"
    return "untouched" if code == _release_code(notebook) else code


@functools.cache
def _release_code(notebook: str, release_dir: str | os.PathLike[str] = RELEASE_DIR) -> tuple[str, ...] | None:
    try:
        return code_cells(Path(release_dir) / f"{notebook}.ipynb")
    except NotebookProblem:
        logger.warning("release/%s/%s.ipynb cannot be read: untouched copies are not recognised", ASSIGNMENT, notebook)
        return None


def _with_notes(reason: str, notes: Iterable[str]) -> str:
    return "; ".join((reason, *notes))


# --- zip files -------------------------------------------------------------------------------------------

class _ZipRefused(Exception):
    """A zip file, or one of its members, that is not extracted: the message says why."""


def _from_zips(scan: _Scan, notebooks: Collection[str], scratch: Path, known: Collection[str]) -> list[_File]:
    """_File for every member of the zips in `scan` that could be one of `notebooks` (by its name, or by its content:
    a notebook file whose name stands for none of `known`), extracted into `scratch`."""
    members: list[_File] = []
    extracted = [0]
    for index, (shown, path) in enumerate(scan.zips):
        try:
            members.extend(_extract(index, shown, path, (notebooks, known), scratch, scan, extracted))
        except _ZipRefused as refused:
            scan.note(f"{shown} not extracted: {refused}")
        except (OSError, EOFError, RuntimeError, NotImplementedError, ValueError, zipfile.BadZipFile,
                zlib.error) as error:
            scan.note(f"{shown} cannot be read as a zip file: {clean(str(error), 200) or type(error).__name__}")
    return members


def _extract(index: int, shown: str, path: Path, wanted: tuple[Collection[str], Collection[str]],
             scratch: Path, scan: _Scan, extracted: list[int]) -> list[_File]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _ZipRefused("it is a symbolic link, never followed") from None
        raise _ZipRefused(error.strerror or str(error)) from None
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise _ZipRefused("not a file")
        if status.st_size > MAX_ZIP_BYTES:
            raise _ZipRefused(f"larger than {MAX_ZIP_BYTES // 2**20} MB")
        with zipfile.ZipFile(handle) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:
                raise _ZipRefused(f"more than {MAX_ZIP_MEMBERS} members")
            chosen = _members(shown, infos, wanted, scan)
            declared = extracted[0] + sum(info.file_size for info in chosen)
            if declared > MAX_EXTRACTED_BYTES:
                raise _ZipRefused(f"its notebooks would take more than {MAX_EXTRACTED_BYTES // 2**20} MB")
            files: list[_File] = []
            for number, info in enumerate(chosen):
                name = posixpath.basename(info.filename.replace("\\", "/"))
                target = scratch / f"{index}-{number}" / name
                target.parent.mkdir(mode=0o700)
                _copy_member(archive, info, target, extracted)
                files.append(_File(f"{shown}: {clean(info.filename)}", target, IN_ZIP, name))
            return files


def _members(shown: str, infos: Iterable[zipfile.ZipInfo], wanted: tuple[Collection[str], Collection[str]],
             scan: _Scan) -> list[zipfile.ZipInfo]:
    """The members that could be one of the missing notebooks; unsafe ones are noted and left out.

    `wanted`: (the missing notebooks, every notebook of the assignment): a member whose name stands for a missing
    one, or for none of the assignment's (it may carry a missing one's content).
    """
    missing, known = wanted
    chosen: list[zipfile.ZipInfo] = []
    for info in infos:
        name = info.filename.replace("\\", "/")
        parts = [part for part in name.split("/") if part not in ("", ".")]
        stands = _stands_for(parts[-1]) if parts else ""
        if info.is_dir() or not stands or (stands not in missing and stands in known):
            continue
        where = f"{shown}: {clean(info.filename)}"
        if name.startswith("/") or ".." in parts or ":" in parts[0]:
            scan.note(f"{where} is outside the zip's folder (an absolute or .. path): not extracted")
        elif stat.S_ISLNK(info.external_attr >> 16):
            scan.note(f"{where} is a symbolic link: not followed")
        elif any(part.startswith(".") or part in SKIPPED_FOLDERS for part in parts) or len(parts) > MAX_DEPTH:
            continue
        elif info.file_size > MAX_FILE_BYTES:
            scan.note(f"{where} is larger than {MAX_FILE_BYTES // 2**20} MB: not extracted")
        else:
            chosen.append(info)
    return chosen


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, extracted: list[int]) -> None:
    """Extract one member, counting what comes out: more than its header said, or than the caps, stops it."""
    written = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as out, archive.open(info) as member:
        while block := member.read(CHUNK):
            written += len(block)
            extracted[0] += len(block)
            if written > info.file_size or written > MAX_FILE_BYTES or extracted[0] > MAX_EXTRACTED_BYTES:
                with contextlib.suppress(OSError):
                    target.unlink()
                raise _ZipRefused(f"{clean(info.filename)} holds more than its header says (a zip bomb?)")
            out.write(block)
