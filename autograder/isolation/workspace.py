"""The grading child's working directory: capped in size, holding the student's own files, as in Jupyter.

In the child, before student code and before the sandbox forbids namespaces, `set_up(workdir, folder, disk_mb)`:
  1. mounts a tmpfs of `disk_mb` MB on `workdir`, in a mount namespace of the child's own (as root; otherwise in
     a user namespace of its own, where the kernel allows unprivileged ones). Student files then live in the
     child's memory and vanish with it: nothing reaches the disk the grader and the grades share, and a write
     past the cap fails with ENOSPC. Where the kernel refuses, the workdir stays on disk and the parent watches
     its size instead (`disk_usage`, autograder.isolation.supervisor), killing the child past the cap;
  2. copies the regular files of the student's own notebook folder (`folder`) into it, never following a
     link, with size caps and a small depth, so that `import helper` and `open("data.csv")` work: what the
     notebook's code imports and names first, and what is left out summed up in one note. Notebooks are left
     out, but for those the code names (`%run ./00_setup.ipynb`: autograder.isolation.own_files);
  3. puts '' (the working directory) first on sys.path, as a Jupyter kernel does.
"""

import contextlib
import ctypes
import errno
import importlib
import itertools
import os
import posixpath
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.isolation import namespaces

__all__ = [
    "FILES", "MAX_COPY_FILES", "MAX_COPY_FILE_MB", "MAX_SCAN_ENTRIES", "NOT_COPIED", "NOT_COPIED_NOTE", "PYTHON",
    "SPACE", "Workspace", "disk_usage", "full_note", "set_up", "too_many_files_note", "what_is_full",
]

# --- the tmpfs (include/uapi/linux/mount.h) ---------------------------------------------------------
MS_NOSUID, MS_NODEV = 0x2, 0x4
TMPFS_INODES = 4096  # files and folders a notebook may create; each costs kernel memory outside `size`

# --- copying the student's folder -----------------------------------------------------------------
MAX_COPY_DEPTH = 3  # subfolders below the notebook's folder
MAX_COPY_FILES = 500
MAX_COPY_FILE_MB = 16
# Directory entries looked at per notebook (listing, counting a virtualenv's files): 200,000 files beside a
# notebook cost a bounded, linear scan, and what lies past it is summed up in the note.
MAX_SCAN_ENTRIES = 250_000
NOT_COPIED = frozenset({".ipynb_checkpoints", "__pycache__"})  # Jupyter's and Python's own leftovers, never noted
TOOLING = {".git": "a .git folder", ".hg": "a .hg folder", ".svn": "a .svn folder", "node_modules": "node_modules"}
EXAMPLES = 3  # file names shown per kind in the note
NOT_COPIED_NOTE = "not copied for grading from beside the notebook"  # the one note's start (grading reads it)
MAX_NAMED_MODULES = 20  # Python files of the student named in the note when left out
CHUNK = 1 << 20


@dataclass
class Workspace:
    """What `set_up` did: whether the kernel caps the space, and notes for the log and for the student."""

    capped: bool  # a private tmpfs of disk_mb; False: the parent must watch the workdir's size
    isolation_notes: list[str] = field(default_factory=list)  # protections the kernel lacked
    student_notes: list[str] = field(default_factory=list)  # what of the student's folder was left out (one note)


def set_up(workdir: Path, folder: Path | None, disk_mb: int, private_tmpfs: bool = True, code: str = "") -> Workspace:
    """Prepare `workdir` in this (freshly forked, not yet confined) child; see the module docstring. `code`: the
    notebook's code cells, whose imports and file names decide what is copied first."""
    workdir = Path(workdir)
    why_not = _private_tmpfs(workdir, disk_mb) if private_tmpfs else "turned off (Limits.private_tmpfs)"
    workspace = Workspace(capped=why_not is None)
    if why_not is not None:
        workspace.isolation_notes.append(
            f"no private tmpfs for grading children ({why_not}): their files go to the shared disk, whose use "
            f"the grader polls and stops past {disk_mb} MB")
    if folder is not None:
        budget = _CopyBudget(files=MAX_COPY_FILES, bytes=disk_mb * 2**20 // 2)
        _copy_folder(Path(folder), workdir, budget, workspace, code)
    if "" not in sys.path:
        sys.path.insert(0, "")  # as in a Jupyter kernel: modules in the working directory are importable
    importlib.invalidate_caches()
    return workspace


SPACE, FILES = "space", "files"  # what ran out in a full workspace


def what_is_full(workdir: Path) -> str | None:
    """SPACE when the child's capped workdir has no block left, FILES when it has no inode left (either way a
    write or a new file there fails with ENOSPC); None when neither."""
    try:
        usage = os.statvfs(workdir)
    except OSError:
        return None
    if usage.f_bavail == 0:
        return SPACE
    return FILES if usage.f_favail == 0 else None


def too_many_files_note() -> str:
    """The student's words for a notebook whose new files failed at the inode cap (not the size cap)."""
    return f"created more than {TMPFS_INODES} files and folders (the limit while grading)"


def full_note(disk_mb: int) -> str:
    """The student's words for a notebook stopped (or whose writes failed) at the cap."""
    return f"wrote more than {disk_mb} MB of files (the limit while grading)"


# --- the tmpfs ---------------------------------------------------------------------------------------


def _private_tmpfs(workdir: Path | str, disk_mb: int) -> str | None:
    """Mount a `disk_mb` tmpfs on `workdir` in a new mount namespace; None when done, else why not."""
    why_not = namespaces.private_mounts()  # (without CAP_SYS_ADMIN, in a user namespace of its own)
    if why_not is not None:
        return why_not
    options = f"size={int(disk_mb)}m,nr_inodes={TMPFS_INODES},mode=0700".encode()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"tmpfs", os.fsencode(workdir), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        return f"mounting tmpfs: {os.strerror(ctypes.get_errno())}"
    return None


# --- copying the student's folder --------------------------------------------------------------------
#
# First a scan (nothing copied, nothing opened but folders): every regular file up to MAX_COPY_DEPTH folders down,
# its size and its kind; folders that are never copied (virtualenvs, version control, node_modules) only counted.
# Then the copy, in this order, within the budget: the student's Python files (those the notebook imports first),
# the files the notebook's code names ("data/scale.csv", "ones.npy", a folder "figures"), then the rest, small
# files before images before checkpoints. What is left out is summed up in one note.

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp", ".tif", ".tiff", ".pdf"})
CHECKPOINT_SUFFIXES = frozenset({".pt", ".pth", ".ckpt", ".safetensors", ".bin", ".h5", ".onnx", ".pkl", ".pickle",
                                 ".joblib", ".msgpack", ".gguf"})
PYTHON, DATA, IMAGE, CHECKPOINT = "Python file", "data file", "image", "checkpoint"
KIND_ORDER = {PYTHON: 0, DATA: 1, IMAGE: 2, CHECKPOINT: 3}
LINK, TOO_DEEP, UNREADABLE = "link", "folder more than 3 deep", "unreadable entry"
HARD_LINK = "hard link to a file outside the folder"  # another name of it lies outside: not the student's own file
# A string literal of the notebook's code, and the modules it imports: what the code needs.
_LITERAL = re.compile(r"""(?:'([^'\n\\]{1,300})'|"([^"\n\\]{1,300})")""")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", re.MULTILINE)
_RUN_LINE = re.compile(r"^\s*%run\s+(.{1,300})$", re.MULTILINE)  # its words: options, the file, its arguments


@dataclass
class _CopyBudget:
    files: int
    bytes: int


@dataclass(frozen=True)
class _Found:
    """A regular file of the student's folder: its path below the folder (parts) and what the scan saw."""

    parts: tuple[str, ...]
    size: int
    kind: str
    in_package: bool  # in a folder that holds __init__.py
    identity: tuple[int, int] = (0, 0)  # (st_dev, st_ino), for a file of several names (st_nlink > 1)
    names: int = 1  # st_nlink

    @property
    def shown(self) -> str:
        return "/".join(self.parts)


@dataclass
class _Scan:
    files: list[_Found] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=dict)  # kind or reason -> names
    folders: list[str] = field(default_factory=list)  # "a .venv with 1,600 files": never copied, counted
    made: list[tuple[str, ...]] = field(default_factory=list)  # the folders copied (made even when left empty)
    entries: int = 0
    stopped: bool = False  # MAX_SCAN_ENTRIES reached
    named: frozenset[str] = frozenset()  # what the notebook's code names: a notebook beside it is copied only then
    names_inside: dict[tuple[int, int], int] = field(default_factory=dict)  # names of a multiply linked file seen

    def look(self) -> bool:
        """Count one entry; False once past the cap."""
        self.entries += 1
        self.stopped = self.stopped or self.entries > MAX_SCAN_ENTRIES
        return not self.stopped

    def leave_out(self, kind: str, shown: str) -> None:
        self.left_out.setdefault(kind, []).append(shown)


@dataclass(frozen=True)
class _Needs:
    """What the notebook's code names: module names it imports, and string literals (paths, maybe)."""

    modules: frozenset[str]
    literals: frozenset[str]  # and the words of its %run lines


def _needs_of(code: str) -> _Needs:
    """The modules `code` imports (top-level names and dotted paths) and its string literals, normalised as paths."""
    modules: set[str] = set()
    for match in _IMPORT.finditer(code):
        for name in (match.group(1) or match.group(2) or "").split(","):
            dotted = name.strip().split(" ")[0]
            parts = dotted.split(".")
            modules.update(".".join(parts[: depth + 1]) for depth in range(len(parts)) if parts[0])
    values = [value for match in _LITERAL.finditer(code) for value in match.groups() if value and value.strip()]
    values += [word.strip("\"'") for match in _RUN_LINE.finditer(code) for word in match.group(1).split()]
    literals = {posixpath.normpath(value.strip()).removeprefix("./").rstrip("/") for value in values if value.strip()}
    return _Needs(frozenset(modules), frozenset(literal for literal in literals if literal not in (".", "")))


def _copy_folder(folder: Path, workdir: Path, budget: _CopyBudget, workspace: Workspace, code: str = "") -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        workspace.student_notes.append(f"the files beside your notebook were not copied: {_reason(error)}")
        return
    try:
        needs = _needs_of(code)
        scan = _Scan(named=needs.literals)
        _scan_entries(fd, (), scan, in_package=False)
        _leave_out_hard_links(scan)
        # The folders first, as many as files may be copied: `savefig("figures/x.png")` works even when the
        # figures already there were left out.
        for relative in sorted(scan.made, key=len)[:MAX_COPY_FILES]:
            workdir.joinpath(*relative).mkdir(mode=0o700, parents=True, exist_ok=True)
        for found in sorted(scan.files, key=_priority(needs)):
            _copy_found(fd, found, workdir, budget, scan)
    finally:
        os.close(fd)
    note = _summary(scan)
    if note:
        workspace.student_notes.append(note)


def _scan_entries(dir_fd: int, parts: tuple[str, ...], scan: _Scan, in_package: bool) -> None:
    """Record every regular file under the folder open as `dir_fd`; never follow a link."""
    with os.scandir(dir_fd) as entries:
        # No more names than the scan may still look at (and one to know it stopped): a folder of millions of
        # entries is never held in memory.
        names = sorted(itertools.islice((entry.name for entry in entries), MAX_SCAN_ENTRIES - scan.entries + 1))
    in_package = in_package or "__init__.py" in names
    for name in names:
        if not scan.look():
            return
        relative = (*parts, name)
        shown = "/".join(relative)
        if name in NOT_COPIED or (name.endswith(".ipynb") and shown not in scan.named):
            continue  # notebooks are what is graded, not data; but one the code names (`%run setup.ipynb`) is copied
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            scan.leave_out(UNREADABLE, shown)
            continue
        if stat.S_ISLNK(info.st_mode):
            scan.leave_out(LINK, shown)
        elif stat.S_ISDIR(info.st_mode):
            _scan_folder(dir_fd, name, relative, scan, in_package)
        elif stat.S_ISREG(info.st_mode):
            identity = (info.st_dev, info.st_ino)
            if info.st_nlink > 1:
                scan.names_inside[identity] = scan.names_inside.get(identity, 0) + 1
            scan.files.append(_Found(relative, info.st_size, _kind(name), in_package, identity, info.st_nlink))


def _leave_out_hard_links(scan: _Scan) -> None:
    """A file with a name outside the student's folder (a hard link made to the instructor's file) is not theirs:
    never copied, as `attnkit grade`'s intake never grades one and nbgrader's path removes one."""
    outside = [found for found in scan.files
               if found.names > 1 and found.names > scan.names_inside.get(found.identity, 0)]
    for found in outside:
        scan.leave_out(HARD_LINK, found.shown)
    scan.files[:] = [found for found in scan.files if found not in outside]


def _scan_folder(dir_fd: int, name: str, relative: tuple[str, ...], scan: _Scan, in_package: bool) -> None:
    shown = "/".join(relative)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        scan.leave_out(UNREADABLE, shown + "/")
        return
    try:
        never = _never_copied(fd, name)
        if never:
            scan.folders.append(f"{never} ({shown}/) with {_count_files(fd, scan)} files")
        elif len(relative) > MAX_COPY_DEPTH:
            scan.leave_out(TOO_DEEP, shown + "/")
        else:
            scan.made.append(relative)
            _scan_entries(fd, relative, scan, in_package)
    finally:
        os.close(fd)


def _never_copied(fd: int, name: str) -> str:
    """What the folder open as `fd` is when it is never copied (a virtualenv, version control...), else ""."""
    if name in TOOLING:
        return TOOLING[name]
    for marker, what in (("pyvenv.cfg", "a virtualenv"), ("conda-meta", "a conda environment")):
        with contextlib.suppress(OSError):
            os.stat(marker, dir_fd=fd, follow_symlinks=False)
            return what
    return ""


def _count_files(fd: int, scan: _Scan) -> str:
    """How many files the folder open as `fd` holds, all the way down ("more than N" past the scan's cap)."""
    count, stack = 0, [os.dup(fd)]
    try:
        while stack:
            current = stack.pop()
            try:
                with os.scandir(current) as entries:
                    for entry in entries:
                        if not scan.look():
                            return f"more than {count:,}"
                        if entry.is_dir(follow_symlinks=False):
                            with contextlib.suppress(OSError):
                                stack.append(os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                                                     | os.O_CLOEXEC, dir_fd=current))
                        else:
                            count += 1
            finally:
                os.close(current)
    finally:
        for left in stack:
            os.close(left)
    return f"{count:,}"


def _kind(name: str) -> str:
    suffix = posixpath.splitext(name.lower())[1]
    if suffix == ".py":
        return PYTHON
    if suffix in IMAGE_SUFFIXES:
        return IMAGE
    if suffix in CHECKPOINT_SUFFIXES:
        return CHECKPOINT
    return DATA


def _priority(needs: _Needs) -> Callable[[_Found], tuple[int, int, tuple[str, ...]]]:
    """The copy order: what the code imports, the student's other Python code, what the code names, the rest."""

    def named(found: _Found) -> bool:
        shown = found.shown
        return (shown in needs.literals or found.parts[-1] in needs.literals
                or any("/".join(found.parts[:depth]) in needs.literals for depth in range(1, len(found.parts))))

    def imported(found: _Found) -> bool:
        stem = posixpath.splitext(found.shown)[0].replace("/", ".")
        return stem.removesuffix(".__init__") in needs.modules or any(
            ".".join(found.parts[:depth]) in needs.modules for depth in range(1, len(found.parts)))

    def key(found: _Found) -> tuple[int, int, tuple[str, ...]]:
        if imported(found) and (found.kind == PYTHON or found.in_package):
            rank = 0
        elif found.kind == PYTHON or found.in_package:
            rank = 1
        elif named(found):
            rank = 2
        else:
            rank = 3 + KIND_ORDER[found.kind]
        return rank, found.size, found.parts

    return key


def _copy_found(root_fd: int, found: _Found, workdir: Path, budget: _CopyBudget, scan: _Scan) -> None:
    if found.size > MAX_COPY_FILE_MB * 2**20 or budget.files <= 0 or found.size > budget.bytes:
        scan.leave_out(found.kind, found.shown)
        return
    try:
        dir_fd = _open_parents(root_fd, found.parts[:-1], workdir)
    except OSError:
        scan.leave_out(UNREADABLE, found.shown)
        return
    try:
        written = _copy_one(dir_fd, found.parts[-1], workdir.joinpath(*found.parts),
                            min(budget.bytes, MAX_COPY_FILE_MB * 2**20))
    finally:
        if dir_fd != root_fd:
            os.close(dir_fd)
    if written is None:
        scan.leave_out(UNREADABLE, found.shown)
        return
    budget.files -= 1
    budget.bytes -= written


def _open_parents(root_fd: int, parents: tuple[str, ...], workdir: Path) -> int:
    """The folder `parents` below the student's folder, opened one level at a time without following a link (it may
    have been swapped for one since the scan), and made in the workdir."""
    fd = root_fd
    for depth, name in enumerate(parents):
        try:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        finally:
            if fd != root_fd:
                os.close(fd)
        fd = child
        workdir.joinpath(*parents[: depth + 1]).mkdir(mode=0o700, exist_ok=True)
    return fd


def _copy_one(dir_fd: int, name: str, destination: Path, limit: int) -> int | None:
    """Bytes copied, or None when the file could not be (gone, swapped for a link or a FIFO, grew past `limit`)."""
    try:
        # O_NONBLOCK: a FIFO swapped in after the scan must not block the child.
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(source).st_mode):
            return None
        return _copy_bytes(source, destination, limit)
    except OSError:
        destination.unlink(missing_ok=True)
        return None
    finally:
        os.close(source)


def _summary(scan: _Scan) -> str:
    """One note for everything left out, kinds with counts and a few names: never a note per file."""
    parts = []
    for kind in (PYTHON, DATA, IMAGE, CHECKPOINT, LINK, HARD_LINK, TOO_DEEP, UNREADABLE):
        names = scan.left_out.get(kind, [])
        if names:
            shown = names[: MAX_NAMED_MODULES if kind == PYTHON else EXAMPLES]
            more = f", and {len(names) - len(shown):,} more" if len(names) > len(shown) else ""
            parts.append(f"{_count(len(names), kind)} ({', '.join(shown)}{more})")
    parts.extend(scan.folders)
    if scan.stopped:
        parts.append(f"whatever lies past the first {MAX_SCAN_ENTRIES:,} files and folders (not looked at)")
    if not parts:
        return ""
    return (f"{NOT_COPIED_NOTE}: {'; '.join(parts)} (the student's Python files and the files the notebook names "
            f"are copied first, then others up to {MAX_COPY_FILES} files and half the disk cap, {MAX_COPY_FILE_MB} "
            "MB a file; links are never followed, virtualenvs and version control never copied)")


def _count(number: int, kind: str) -> str:
    if kind == TOO_DEEP:
        return f"{number:,} folder{'s' if number != 1 else ''} more than {MAX_COPY_DEPTH} deep"
    return f"{number:,} {kind}{'s' if number != 1 else ''}"


def _copy_bytes(source: int, destination: Path, limit: int) -> int:
    """Copy at most `limit` bytes (a file that grew after the stat is cut there: it fails to copy)."""
    written = 0
    target = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        while chunk := os.read(source, CHUNK):
            written += len(chunk)
            if written > limit:
                raise OSError(errno.EFBIG, "it grew while being copied")
            os.write(target, chunk)
    finally:
        os.close(target)
    return written


def _reason(error: OSError) -> str:
    return error.strerror or type(error).__name__


# --- the parent's watch, where there is no tmpfs -------------------------------------------------------


def disk_usage(workdir: str, pid: int) -> int:
    """Bytes the child holds on the workdir's filesystem: its files (blocks, not sizes: sparse files are free)
    and files it keeps open there after deleting them (through /proc/<pid>/fd)."""
    try:
        device = os.lstat(workdir).st_dev
    except OSError:
        return 0
    seen: set[int] = set()
    total = 0
    for root, folders, files in os.walk(workdir):
        for name in folders + files:
            try:
                info = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if info.st_dev == device and info.st_ino not in seen:
                seen.add(info.st_ino)
                total += info.st_blocks * 512
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return total
    for descriptor in descriptors:
        try:
            info = os.stat(f"/proc/{pid}/fd/{descriptor}")
        except OSError:
            continue
        if info.st_dev == device and stat.S_ISREG(info.st_mode) and info.st_ino not in seen:
            seen.add(info.st_ino)
            total += info.st_blocks * 512
    return total
