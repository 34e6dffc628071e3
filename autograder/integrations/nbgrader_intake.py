"""Only what the student handed in reaches nbgrader's grading: `OwnFilesOnly`, the first sanitize preprocessor.

`nbgrader autograde` copies a submission into `autograded/` with `shutil.copy`, which follows links as the
instructor: a file `answers.txt -> <course>/source/attention/03_....ipynb` arrives in `autograded/` as a regular file
holding the solutions, and `SandboxedExecute` grades that copy. `attnkit grade` never follows a link
(autograder.grading.intake); this module gives nbgrader's path the same rule, at the first step nbgrader lets a
course run before grading (the sanitize list runs for each notebook, after nbgrader's copy, before any grading):

- the notebook graded is the file `attnkit grade` grades as that notebook (`graded_file`: autograder.grading.intake
  decides which file is which notebook, on the same student folder), read again without following a link
  (O_NOFOLLOW, each folder from `submitted/` down opened the same way): the notebook handed in under its name, or
  the edited `-Copy1` beside an untouched original, or a copy found by its content, under the notebook's name with
  a note saying which file was graded and why. Where `attnkit grade` grades no file (a link, a hard link to a file
  outside the submission, two copies holding different work) an empty notebook takes its place (0 points, as
  `attnkit grade` gives), with a note saying why. So the gradebook, formgrader, the feedback and the exports hold
  one grade per notebook, the one `attnkit grade` gives;
- `autograded/<student>/<assignment>/` is made to hold exactly the student's own regular files that nbgrader copies
  (after its ignore rules: never a notebook), copied again from descriptors opened without following links, plus
  the instructor's files nbgrader copied from `source/`: whatever nbgrader copied through a link, a hard link to a
  file outside the submission, or from a special file (FIFO, device, socket) is removed before any grading,
  whatever the folder held when nbgrader copied it. The student's other notebooks (`Untitled.ipynb`, a `-Copy1`,
  a `00_setup.ipynb` that the code `%run`s) are never placed there: nbgrader's `generate_feedback` takes every
  notebook of `autograded/` for a submitted one. They are graded beside all the same: both of the sandbox's modes
  grade a notebook beside the folder grading ahead stages (autograder.integrations.nbgrader_lookahead.stage), which
  holds them as handed in (`HandedIn.notebooks_beside`, `place_notebooks_beside`);
- the notes ("answers.txt is a symbolic link: not followed", attnkit grade's wording) travel to `SandboxedExecute`
  in the notebook's metadata (NOTES_KEY, set here on every notebook, so a student's own value never survives) and
  are shown in the first graded cell.

`OwnFilesCollect` gives `nbgrader collect` (the default exchange, `c.ExchangeFactory.collect`) the same rule when it
copies the exchange's inbound folder into `submitted/`, and takes only the inbound entries a student could have
handed in (autograder.integrations.nbgrader_inbound: no link, no name forged for a classmate or with a time nbgrader
cannot read); no entry stops the others.

What this cannot reach: nbgrader's autograde copy itself runs before any course code, so a link to a device is read
by it, and a FIFO or a dangling link stops that student's autograde in nbgrader (an error for that student, the
class goes on); other exchanges (ngshare...) copy with their own code (docs/security.md).
"""

import contextlib
import fnmatch
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.integrations import nbgrader_hidden_tests, nbgrader_metadata, nbgrader_points
from autograder.integrations.nbgrader_inbound import (
    InboundEntry,
    InboundName,
    InboundRules,
    NotHandedIn,
    check_entry,
    collect_clock,
    shown_name,
)
from autograder.isolation.limits import MAX_FILE_BYTES
from autograder.isolation.workspace import MAX_SCAN_ENTRIES
from autograder.safe_text import clean

if TYPE_CHECKING:
    from nbgrader.converters.base import BaseConverter

__all__ = [
    "NOTEBOOK", "NOTES_KEY", "OwnFilesCollect", "SANITIZE_PREPROCESSORS", "THIS", "assignment_notebooks", "graded_file",
    "graded_files", "handed_in", "ignored", "instructor_files", "not_own", "place_notebooks_beside", "place_own_files",
    "read_own_notebook",
]

THIS = f"{__name__}.OwnFilesOnly"
# nbgrader 0.9's Autograde.sanitize_preprocessors with ours first, and the hidden tests of the cells handed in as
# released restored just before OverwriteCells checks them (autograder.integrations.nbgrader_hidden_tests).
SANITIZE_PREPROCESSORS = [
    THIS,
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    nbgrader_hidden_tests.THIS,
    nbgrader_points.THIS,  # a graded cell with an earlier release's points: no tampering (after a change of points)
    "nbgrader.preprocessors.OverwriteCells",
    nbgrader_metadata.THIS,  # nbgrader's CheckCellMetadata, its schema checked once per process
]
NOTES_KEY = "attnkit_handed_in"  # notebook metadata: the notes of this module, read by SandboxedExecute
NOTEBOOK = "*.ipynb"  # nbgrader converts the notebooks and copies every other file
CHUNK = 1 << 20

# attnkit grade's words (autograder.grading.intake), and the same style for what it has no word for.
LINK = "{} is a symbolic link: not followed"
HARD_LINK = "{} is a hard link to a file outside the submission: not copied"
SPECIAL = "{} is not a regular file ({}): not copied"
CHANGED = "{} changed while it was copied: not copied"
TOO_MANY = f"more than {MAX_SCAN_ENTRIES:,} files and folders: the rest were not copied"
MAX_NOTES = 10
OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
TIMESTAMP_FILE = "timestamp.txt"  # nbgrader submit's, beside the student's files
MAX_TIMESTAMP_BYTES = 4096
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


@dataclass(frozen=True)
class OwnFile:
    """A regular file of the submission that nbgrader copies: where it is below the folder, and which file it was."""

    parts: tuple[str, ...]
    identity: tuple[int, int]  # (st_dev, st_ino) when scanned: a file swapped since is not copied

    @property
    def relative(self) -> str:
        return "/".join(self.parts)


@dataclass(frozen=True)
class HandedIn:
    """One student's submitted folder as nbgrader's copy should see it: the student's own files, and what was
    refused (notes naming each)."""

    folder: Path
    files: tuple[OwnFile, ...]  # not ignored, not a notebook: what nbgrader's copy copies
    notebooks: tuple[str, ...]  # top-level notebook file names nbgrader converts, the student's own regular files
    notes: tuple[str, ...]
    complete: bool  # False: more entries than MAX_SCAN_ENTRIES, the rest not looked at
    # The student's other notebooks (`00_setup.ipynb` that the code `%run`s, a `-Copy1`, one in a subfolder), their
    # own regular files: staged beside the graded notebook, never placed in autograded/ (place_notebooks_beside).
    notebooks_beside: tuple[OwnFile, ...] = ()


@dataclass
class _Walk:
    ignore: tuple[str, ...]
    graded: frozenset[str] | None  # the notebooks nbgrader converts; None: every top-level notebook
    files: list[OwnFile]
    notebooks: list[str]
    notebooks_beside: list[OwnFile]
    notes: list[str]
    links: dict[tuple[int, int], int]  # (st_dev, st_ino) of every multiply linked file -> names seen inside
    nlinks: dict[OwnFile | str, tuple[tuple[int, int], int]]  # file -> (identity, st_nlink)
    entries: int = 0
    more_notes: int = 0

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES:
            self.notes.append(text)
        else:
            self.more_notes += 1

    def own(self, key: "OwnFile | str", shown: str) -> bool:
        """Whether the file is the student's own: a hard link is, when every name of the file is inside the
        submission; otherwise noted."""
        identity, nlink = self.nlinks.get(key, ((0, 0), 1))
        if nlink > 1 and self.links.get(identity, 0) < nlink:
            self.note(HARD_LINK.format(clean(shown)))
            return False
        return True


def ignored(name: str, patterns: Sequence[str]) -> bool:
    """Whether nbgrader's copy leaves `name` out (nbgrader.utils.is_ignored, which globs: a pattern matches a hidden
    name only when it starts with a dot), decided from the name alone."""
    return any(fnmatch.fnmatchcase(name, pattern) and (not name.startswith(".") or pattern.startswith("."))
               for pattern in patterns)


def _open_folder(root: Path, parts: Sequence[str]) -> int:
    """The folder `root`/parts opened one level at a time without following a link (`root` is the instructor's);
    OSError (ELOOP, ENOTDIR) where a part is a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            child = os.open(part, OPEN_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def assignment_notebooks(source: Path | None) -> frozenset[str] | None:
    """The notebook file names of the assignment's source folder: the ones nbgrader converts and writes into
    `autograded/`; None where there are none to read (then every top-level notebook counts as one)."""
    names = frozenset(path.name for path in source.glob(NOTEBOOK)) if source is not None else frozenset()
    return names or None


def handed_in(root: Path, parts: Sequence[str], ignore: Sequence[str],
              graded: Collection[str] | None = None) -> HandedIn:
    """The submission at `root`/parts (e.g. submitted/, (student, assignment)); see HandedIn. `graded`: the notebooks
    nbgrader converts (None: every top-level notebook). The student's other notebooks are neither: nbgrader's copy
    leaves every notebook out, and so does attnkit's; they are `notebooks_beside`, which only staging places."""
    folder = root.joinpath(*parts)
    try:
        fd = _open_folder(root, parts)
    except OSError as error:
        return HandedIn(folder, (), (), (_folder_refused(root, parts, error),), True)
    walk = _Walk(tuple(ignore), None if graded is None else frozenset(graded), [], [], [], [], {}, {})
    try:
        complete = _walk(fd, (), walk)
    finally:
        os.close(fd)
    own_files = [file for file in walk.files if walk.own(file, file.relative)]
    own_notebooks = [name for name in walk.notebooks if walk.own(name, name)]
    beside = [file for file in walk.notebooks_beside if walk.own(file, file.relative)]
    notes = [*walk.notes, *([f"and {walk.more_notes:,} more like these"] if walk.more_notes else [])]
    if not complete:
        notes.append(TOO_MANY)
    return HandedIn(folder, tuple(own_files), tuple(own_notebooks), tuple(notes), complete, tuple(beside))


def _folder_refused(root: Path, parts: Sequence[str], error: OSError) -> str:
    """The note for a student's folder (or its assignment folder) that is a link or cannot be opened."""
    for depth in range(len(parts)):
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(root.joinpath(*parts[: depth + 1])).st_mode):
                return LINK.format(clean("/".join(parts[depth: depth + 1])) + "/")
    return f"{clean('/'.join(parts))}/ cannot be read: {error.strerror or error}"


def _walk(fd: int, parts: tuple[str, ...], walk: _Walk) -> bool:
    """Record the folder open as `fd` (the submission / `parts`); False once past MAX_SCAN_ENTRIES entries."""
    with os.scandir(fd) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        walk.entries += 1
        if walk.entries > MAX_SCAN_ENTRIES:
            return False
        relative = (*parts, name)
        shown = clean("/".join(relative))
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue  # gone since it was listed: nbgrader's copy cannot have it either, or fails on it
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            identity = (info.st_dev, info.st_ino)
            walk.links[identity] = walk.links.get(identity, 0) + 1
        if ignored(name, walk.ignore):
            continue  # nbgrader's copy leaves it (a folder: all below it) out
        if stat.S_ISLNK(info.st_mode):
            walk.note(LINK.format(shown))
        elif stat.S_ISDIR(info.st_mode):
            if ignored(name, [NOTEBOOK]):
                continue  # nbgrader's copy leaves out a folder named like a notebook, and all below it
            try:
                child = os.open(name, OPEN_DIRECTORY, dir_fd=fd)
            except OSError:
                walk.note(LINK.format(shown))  # swapped for a link since it was looked at
                continue
            try:
                if not _walk(child, relative, walk):
                    return False
            finally:
                os.close(child)
        elif not stat.S_ISREG(info.st_mode):
            walk.note(SPECIAL.format(shown, _kind(info.st_mode)))
        elif ignored(name, [NOTEBOOK]):  # never copied, by nbgrader nor here
            if not parts and (walk.graded is None or name in walk.graded):  # converted: the top-level ones
                walk.notebooks.append(name)
                walk.nlinks[name] = ((info.st_dev, info.st_ino), info.st_nlink)
            else:  # the student's other notebooks: staged beside the graded one only
                beside = OwnFile(relative, (info.st_dev, info.st_ino))
                walk.notebooks_beside.append(beside)
                walk.nlinks[beside] = ((info.st_dev, info.st_ino), info.st_nlink)
        else:
            file = OwnFile(relative, (info.st_dev, info.st_ino))
            walk.files.append(file)
            walk.nlinks[file] = ((info.st_dev, info.st_ino), info.st_nlink)
    return True


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "no file"


@contextlib.contextmanager
def _opened_own(root: Path, parts: Sequence[str], file: Sequence[str],
               identity: tuple[int, int] | None = None) -> Iterator[int]:
    """A descriptor of the regular file root/parts/file, every part opened without following a link; OSError
    where it is a link, no regular file, not the file scanned (`identity`) or linked from outside (st_nlink > 1 is
    checked by the caller's scan)."""
    folder = _open_folder(root, [*parts, *file[:-1]])
    try:
        fd = os.open(file[-1], OPEN_FILE, dir_fd=folder)
    finally:
        os.close(folder)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or (identity is not None and (status.st_dev, status.st_ino) != identity):
            raise OSError(f"{'/'.join(file)} is not the file that was scanned")
        yield fd
    finally:
        os.close(fd)


def _copy_own(fd: int, destination: Path) -> None:
    """Copy the file open as `fd` to `destination` (replaced at once: a file nbgrader copied there is never read)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=destination.parent, prefix=".attnkit-copy-")
    try:
        with os.fdopen(handle, "wb") as out:
            os.lseek(fd, 0, os.SEEK_SET)
            while block := os.read(fd, CHUNK):
                out.write(block)
        os.replace(temporary, destination)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def read_own_notebook(root: Path, parts: Sequence[str], name: str) -> bytes:
    """The bytes of the submitted notebook root/parts/name, read without following a link; OSError otherwise."""
    with _opened_own(root, parts, [name]) as fd:
        if os.fstat(fd).st_size > MAX_FILE_BYTES:
            raise OSError(f"{name} is larger than {MAX_FILE_BYTES // 2**20} MB")
        chunks = []
        while block := os.read(fd, CHUNK):
            chunks.append(block)
        return b"".join(chunks)


@dataclass(frozen=True)
class GradedFile:
    """What of a submission is graded as one notebook: the bytes of the file `attnkit grade` grades as it (None:
    none is), and the notes saying which file was graded and why, or why none was."""

    data: bytes | None
    notes: tuple[str, ...]


def graded_file(root: Path, parts: Sequence[str], notebook: str, submission: HandedIn) -> GradedFile:
    """The file of the submission at root/parts (submitted/, (student, assignment)) graded as `notebook` (a name
    without .ipynb): see graded_files."""
    return graded_files(root, parts, [notebook], submission)[notebook]


def graded_files(root: Path, parts: Sequence[str], notebooks: Sequence[str],
                 submission: HandedIn) -> dict[str, GradedFile]:
    """The file of the submission at root/parts (submitted/, (student, assignment)) graded as each of `notebooks`
    (names without .ipynb), chosen as `attnkit grade` chooses it (autograder.grading.intake, on the student's folder,
    looked at once), and read without following a link. `submission` (handed_in of the same folder) gives the notes
    on the folder, which are not repeated. Outside nbgrader's layout of attnkit's course (another assignment or
    directory structure, a notebook not attnkit's), only the file of the notebook's own name is graded, as nbgrader
    converts it."""
    from autograder.course.assignment import ASSIGNMENT
    from autograder.course.exercises import NOTEBOOKS

    chosen = {notebook: _own_name(root, parts, notebook, submission) for notebook in notebooks
              if len(parts) != 2 or parts[-1] != ASSIGNMENT or notebook not in NOTEBOOKS}
    if len(chosen) == len(notebooks):
        return chosen
    from autograder.grading.intake import open_submission
    from autograder.isolation.notebook_plan import NotebookProblem, read_submitted

    with open_submission(root / parts[0]) as found:
        for notebook in notebooks:
            if notebook in chosen:
                continue
            located = found.located[notebook]
            if located.path is None:
                chosen[notebook] = GradedFile(None, (_without(located.reason, found.notes),))
                continue
            notes = tuple(note for note in located.notes if note not in found.notes)
            try:
                relative = located.path.relative_to(found.folder).parts
            except ValueError:  # a member extracted from a zip, into the intake's own temporary folder
                relative = ()
            try:
                data = (read_own_notebook(root, (parts[0], *relative[:-1]), relative[-1]) if relative
                        else bytes(read_submitted(located.path)))
            except (OSError, NotebookProblem) as error:
                chosen[notebook] = GradedFile(None, (*notes, _unreadable(located.shown, error)))
                continue
            chosen[notebook] = GradedFile(data, notes)
    return chosen


def _own_name(root: Path, parts: Sequence[str], notebook: str, submission: HandedIn) -> GradedFile:
    """The submitted file of the notebook's own name, when it is the student's own regular file."""
    name = f"{notebook}.ipynb"
    if name not in submission.notebooks:
        if any(clean(name) in note for note in submission.notes):
            return GradedFile(None, ())  # the folder's notes say why already
        return GradedFile(None, (LINK.format(clean(name)) if _is_link(root.joinpath(*parts, name))
                                 else f"{clean(name)} is not the student's own file: not graded",))
    try:
        return GradedFile(read_own_notebook(root, parts, name), ())
    except OSError as error:
        return GradedFile(None, (_unreadable(name, error),))


def _unreadable(shown: str, error: Exception) -> str:
    return f"{clean(shown)} cannot be read as it was handed in: {clean(getattr(error, 'strerror', None) or error, 200)}"


def _without(reason: str, notes: Sequence[str]) -> str:
    """The intake's reason without the folder's notes it ends with (they are said once, by handed_in's notes)."""
    suffix = "; ".join(("", *notes)) if notes else ""
    return reason.removesuffix(suffix) if suffix else reason


def place_own_files(submission: HandedIn, root: Path, parts: Sequence[str], destination: Path,
                    keep: frozenset[str] = frozenset()) -> list[str]:
    """Make `destination` hold the submission's own files and nothing else copied from it (notebooks and `keep`, the
    instructor's files, are left as they are); notes for files that changed meanwhile."""
    notes = []
    wanted = {file.relative for file in submission.files} - keep
    for file in submission.files:
        if file.relative in keep:
            continue
        target = destination.joinpath(*file.parts)
        try:
            with _opened_own(root, parts, file.parts, file.identity) as fd:
                _copy_own(fd, target)
        except OSError:
            notes.append(CHANGED.format(clean(file.relative)))
            wanted.discard(file.relative)
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
    for directory, folders, names in os.walk(destination):  # the instructor's own folder: no link in it followed
        below = PurePosixPath(Path(directory).relative_to(destination).as_posix())
        for name in names:
            relative = str(below / name) if str(below) != "." else name
            if ignored(name, [NOTEBOOK]) and str(below) == ".":
                continue  # nbgrader's own output
            if relative not in wanted and relative not in keep:
                os.unlink(Path(directory) / name)
        folders[:] = [folder for folder in folders if not (Path(directory) / folder).is_symlink()]
    return notes


def place_notebooks_beside(submission: HandedIn, root: Path, parts: Sequence[str], destination: Path) -> None:
    """Copy the student's other notebooks (`submission.notebooks_beside`) into `destination`, as handed in, read
    without following a link; one changed since it was scanned is left out, as place_own_files leaves out a file.
    Only for the folder a notebook is graded beside (nbgrader_lookahead.stage), never for autograded/."""
    for file in submission.notebooks_beside:
        target = destination.joinpath(*file.parts)
        try:
            with _opened_own(root, parts, file.parts, file.identity) as fd:
                if os.fstat(fd).st_size > MAX_FILE_BYTES:
                    continue
                _copy_own(fd, target)
        except OSError:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()


def instructor_files(converter: "BaseConverter | None", course: CourseDirectory, assignment: str) -> frozenset[str]:
    """The files Autograde copies from source/<assignment> over the student's (relative paths)."""
    from nbgrader.utils import find_all_files

    source = Path(course.format_path(course.source_directory, ".", assignment))
    excluded = set(getattr(converter, "exclude_overwriting", {}).get(assignment, []))
    return frozenset(Path(found).relative_to(source).as_posix()
                     for found in find_all_files(str(source), [*course.ignore, NOTEBOOK])) - excluded


class OwnFilesOnly(NbGraderPreprocessor):
    """Grade the student's own files only (see the module docstring): first in Autograde.sanitize_preprocessors."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        converter = self._converter()
        course = converter.coursedir if converter is not None else CourseDirectory(config=self.config)
        student, assignment = str(resources["nbgrader"]["student"]), str(resources["nbgrader"]["assignment"])
        notebook = f"{resources['nbgrader']['notebook']}.ipynb"
        submitted, parts = _submitted_folder(course, student, assignment)
        source = Path(course.format_path(course.source_directory, ".", assignment))
        submission = handed_in(submitted, parts, course.ignore, assignment_notebooks(source))
        graded = graded_file(submitted, parts, str(resources["nbgrader"]["notebook"]), submission)
        notes = [*graded.notes, *submission.notes]
        if graded.data is None:
            nb = _empty_like(nb)
        else:
            try:
                nb = nbformat.reads(graded.data.decode("utf-8"), as_version=4)
            except Exception as error:  # noqa: BLE001 - a hostile file that nbgrader read otherwise: not graded
                notes.append(_unreadable(notebook, error))
                nb = _empty_like(nb)
        destination = Path(course.format_path(course.autograded_directory, student, assignment))
        keep = instructor_files(converter, course, assignment)
        notes += place_own_files(submission, submitted, parts, destination, keep)
        nb.metadata[NOTES_KEY] = notes  # always ours: a value the student wrote there is replaced
        for note in notes:
            self.log.warning("attnkit: %s/%s: %s", clean(student), clean(notebook), note)
        return nb, resources

    def _converter(self) -> "BaseConverter | None":
        from nbgrader.converters.base import BaseConverter

        converter = getattr(self.parent, "parent", None)
        return converter if isinstance(converter, BaseConverter) else None


def _submitted_folder(course: CourseDirectory, student: str, assignment: str) -> tuple[Path, tuple[str, ...]]:
    """(the instructor's submitted/ folder, the parts below it down to this submission), as nbgrader's
    CourseDirectory.directory_structure places it; only the parts are opened without following links."""
    folder = Path(course.format_path(course.submitted_directory, student, assignment))
    root = Path(os.path.normpath(course.format_path(course.submitted_directory, ".", ".")))
    try:
        return root, Path(os.path.normpath(folder)).relative_to(root).parts
    except ValueError:
        return folder.parent, (folder.name,)


def _is_link(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return stat.S_ISLNK(os.lstat(path).st_mode)
    return False


def _empty_like(nb: NotebookNode) -> NotebookNode:
    """A notebook with no cells (graded 0, as a notebook not handed in), keeping nbgrader's kernel metadata."""
    empty = nbformat.v4.new_notebook()
    kernelspec = nb.get("metadata", {}).get("kernelspec")
    if kernelspec is not None:
        empty.metadata["kernelspec"] = kernelspec
    return empty


# --- nbgrader collect ------------------------------------------------------------------------------------------------

COLLECT_SETTING = "c.ExchangeFactory.collect"


def not_own(folder: Path) -> dict[str, str]:
    """{relative path: note} of every entry under `folder` that is not the student's own to hand in: links (never
    followed), special files, and hard links to a file outside `folder`."""
    refused: dict[str, str] = {}
    names_inside: dict[tuple[int, int], int] = {}
    linked: list[tuple[str, tuple[int, int], int]] = []
    for directory, _folders, files in os.walk(folder):  # links to folders are listed, never followed
        for name in [*_folders, *files]:
            path = Path(directory) / name
            relative = path.relative_to(folder).as_posix()
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                refused[relative] = LINK.format(clean(relative))
            elif stat.S_ISREG(info.st_mode):
                if info.st_nlink > 1:
                    identity = (info.st_dev, info.st_ino)
                    names_inside[identity] = names_inside.get(identity, 0) + 1
                    linked.append((relative, identity, info.st_nlink))
            elif not stat.S_ISDIR(info.st_mode):
                refused[relative] = SPECIAL.format(clean(relative), _kind(info.st_mode))
    for relative, identity, nlink in linked:
        if names_inside[identity] < nlink:
            refused[relative] = HARD_LINK.format(clean(relative))
    return refused


@dataclass(frozen=True)
class _Refused:
    """The username of a refused inbound entry's record: no student id equals it, so nbgrader's choice of each
    student's latest submission never pairs it with a student's own."""

    entry: str


class OwnFilesCollect(ExchangeCollect):  # type: ignore[misc]
    """`nbgrader collect` (the default exchange) that takes only what a student could have handed in, and copies only
    the student's own files into `submitted/`. Set by the course's `c.ExchangeFactory.collect`.

    The inbound folder's entries: each is checked before nbgrader chooses a student's latest submission
    (autograder.integrations.nbgrader_inbound: the name and its student id, a folder and no link, its owner, its
    time); one refused is left where it is, named in one log line, and stops no other. The copy opens the entry
    without following a link and reads the folder it checked, whatever is put in its place meanwhile; a copy that
    fails (the folder too large, changed since) is that student's, logged, and the class goes on.

    The files inside: nbgrader's collect copies with `shutil.copytree`, which follows links as the instructor; here
    links, special files and hard links to files outside the submission are left out (logged with attnkit grade's
    words), and a link swapped in after that check is copied as a link (`symlinks=True`), which autograde's
    OwnFilesOnly then refuses.
    """

    check_owner: bool  # nbgrader's traits and attributes this class sets (annotations only: nbgrader defines them)
    src_records: list[dict[str, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rules: InboundRules | None = None
        self._entries: dict[str, InboundEntry] = {}  # entry name -> what was checked, for the entries not refused

    def init_src(self) -> None:
        self._rules = InboundRules(self.coursedir.assignment_id, self._gradebook_students(), self.check_owner,
                                   collect_clock())
        super().init_src()
        self.src_records = [record for record in self.src_records if not isinstance(record["username"], _Refused)]
        unvouched = sorted(record["username"] for record in self.src_records
                           if not self._entries[record["filename"]].owner_vouches)
        if unvouched and self.check_owner:
            self.log.warning("attnkit: %d of %d submissions are owned by an account that is not their student's (one "
                             "account for every student?): only their names say who handed them in, and those "
                             "stamped later than this collect's clock were refused: %s", len(unvouched),
                             len(self.src_records), ", ".join(unvouched[:20]) + (" ..." if len(unvouched) > 20 else ""))

    def _gradebook_students(self) -> frozenset[str] | None:
        from nbgrader.api import Gradebook

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            students = frozenset(student.id for student in gradebook.students)
        return students or None

    def _path_to_record(self, path: str) -> dict[str, Any]:
        """nbgrader's record of an inbound entry it globbed, for an entry a student could have handed in; a refused
        one becomes a record of its own (a `_Refused` username), which init_src drops."""
        if self._rules is None:
            raise RuntimeError("OwnFilesCollect._path_to_record runs from init_src")
        entry = os.path.basename(path)
        try:
            self._entries[entry] = check_entry(Path(path).parent, entry, self._rules)
        except NotHandedIn as refusal:
            self.log.warning("attnkit: not collected: %s: %s", shown_name(entry), refusal)
            return {"username": _Refused(entry), "filename": entry, "timestamp": datetime.min}
        record: dict[str, Any] = super()._path_to_record(path)
        return record

    def copy_files(self) -> None:
        """nbgrader's loop with its own owner check off: init_src refused what that check only warns of, and its
        `os.stat` follows a link (an entry swapped for a dangling one since would stop the class)."""
        check_owner, self.check_owner = self.check_owner, False
        try:
            super().copy_files()
        finally:
            self.check_owner = check_owner

    def do_copy(self, src: str, dest: str, log: object = None) -> None:
        entry = Path(src).name
        checked = self._entries.get(entry)
        try:
            with _pinned_folder(src, checked.identity if checked is not None else None) as folder:
                self._copy_own_files(folder, Path(dest), entry, checked.name if checked is not None else None)
        except (NotHandedIn, OSError, RuntimeError) as error:
            self.log.warning("attnkit: not collected: %s: %s", shown_name(entry),
                             shown_name(getattr(error, "strerror", None) or str(error)))
            shutil.rmtree(dest, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(Path(dest).parent)  # the student's folder nbgrader made for it, where it holds nothing else

    def _copy_own_files(self, src: str, dest: Path, entry: str, checked_name: InboundName | None) -> None:
        from nbgrader.utils import ignore_patterns

        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is "
                               f"{1000 * self.coursedir.max_dir_size}")
        refused = not_own(Path(src))
        for note in refused.values():
            self.log.warning("attnkit: collecting %s: %s", shown_name(entry), note)
        nbgraders = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                    max_file_size=self.coursedir.max_file_size, log=self.log)

        def ignore(directory: str, names: list[str]) -> set[str]:
            below = Path(directory).relative_to(src)
            return set(nbgraders(directory, names)) | {
                name for name in names if (below / name).as_posix().removeprefix("./") in refused}

        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        if checked_name is not None:
            self._record_timestamp(dest, entry, checked_name)
        if self.coursedir.groupshared:  # as nbgrader's own do_copy: group read and write
            for directory, _folders, files in os.walk(dest):
                for path, bits in [(directory, 0o2770), *((os.path.join(directory, name), 0o660) for name in files)]:
                    mode = os.lstat(path).st_mode
                    if not stat.S_ISLNK(mode) and mode & bits != bits:
                        with contextlib.suppress(PermissionError):
                            os.chmod(path, (mode | bits) & (0o2777 if bits == 0o2770 else 0o777))

    def _record_timestamp(self, dest: Path, entry: str, name: InboundName) -> None:
        """timestamp.txt of the collected copy holds the timestamp of the name collect chose it by, as nbgrader
        submit writes both: a forged one can neither differ from it nor stop a later `collect --update` (nbgrader
        parses the one in submitted/, and fails on one it cannot read)."""
        path = dest / TIMESTAMP_FILE
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        regular = info is not None and stat.S_ISREG(info.st_mode) and info.st_size <= MAX_TIMESTAMP_BYTES
        if regular and path.read_bytes().decode("utf-8", "replace").strip() == name.timestamp:
            return
        if info is not None:
            self.log.warning("attnkit: collecting %s: its %s does not hold the time in its name: the name's is "
                             "recorded", shown_name(entry), TIMESTAMP_FILE)
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
        path.write_text(name.timestamp, encoding="utf-8")


@contextlib.contextmanager
def _pinned_folder(path: str, identity: tuple[int, int] | None) -> Iterator[str]:
    """A path that reads the folder `path` as it is now, for as long as the context lasts: opened without following a
    link, then read through /proc/self/fd (Linux), so that an entry swapped for a link or another folder since is
    never read; elsewhere `path` itself. NotHandedIn where it is a link, no folder, or not the one checked."""
    try:
        fd = os.open(path, OPEN_DIRECTORY)
    except OSError as error:
        what = "changed since it was checked" if identity is not None else "a symbolic link or no folder"
        raise NotHandedIn(f"{what}: {error.strerror or error}") from None
    try:
        opened = os.fstat(fd)
        if identity is not None and (opened.st_dev, opened.st_ino) != identity:
            raise NotHandedIn("changed since it was checked: another folder")
        pinned = f"/proc/self/fd/{fd}"
        try:
            same = os.path.samestat(os.stat(pinned), opened)
        except OSError:
            same = False
        yield pinned if same else path
    finally:
        os.close(fd)
