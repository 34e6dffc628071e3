"""The grading child's working directory: capped in size, holding the student's own files, as in Jupyter.

In the child, before student code and before the sandbox forbids namespaces, `set_up(workdir, folder, disk_mb)`:
  1. mounts a tmpfs of `disk_mb` MB on `workdir`, in a mount namespace of the child's own (as root; otherwise in
     a user namespace of its own, where the kernel allows unprivileged ones). Student files then live in the
     child's memory and vanish with it: nothing reaches the disk the grader and the grades share, and a write
     past the cap fails with ENOSPC. Where the kernel refuses, the workdir stays on disk and the parent watches
     its size instead (`disk_usage`, autograder.isolation.supervisor), killing the child past the cap;
  2. copies the regular files of the student's own notebook folder (`folder`) into it, never following a
     link, with size caps and a small depth, so that `import helper` and `open("data.csv")` work;
  3. puts '' (the working directory) first on sys.path, as a Jupyter kernel does.
"""

import ctypes
import errno
import importlib
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

# --- mount namespaces (include/uapi/linux/sched.h, mount.h) -----------------------------------------
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
TMPFS_INODES = 4096  # files and folders a notebook may create; each costs kernel memory outside `size`

# --- copying the student's folder -----------------------------------------------------------------
MAX_COPY_DEPTH = 3  # subfolders below the notebook's folder
MAX_COPY_FILES = 500
MAX_COPY_FILE_MB = 16
NOT_COPIED = frozenset({".ipynb_checkpoints", "__pycache__", ".git"})  # Jupyter's and Python's own leftovers
CHUNK = 1 << 20


@dataclass
class Workspace:
    """What `set_up` did: whether the kernel caps the space, and notes for the log and for the student."""

    capped: bool  # a private tmpfs of disk_mb; False: the parent must watch the workdir's size
    isolation_notes: list[str] = field(default_factory=list)  # protections the kernel lacked
    student_notes: list[str] = field(default_factory=list)  # files of the student's folder left out, and why


def set_up(workdir: Path, folder: Path | None, disk_mb: int, private_tmpfs: bool = True) -> Workspace:
    """Prepare `workdir` in this (freshly forked, not yet confined) child; see the module docstring."""
    workdir = Path(workdir)
    why_not = _private_tmpfs(workdir, disk_mb) if private_tmpfs else "turned off (Limits.private_tmpfs)"
    workspace = Workspace(capped=why_not is None)
    if why_not is not None:
        workspace.isolation_notes.append(
            f"no private tmpfs for grading children ({why_not}): their files go to the shared disk, whose use "
            f"the grader polls and stops past {disk_mb} MB")
    if folder is not None:
        budget = _CopyBudget(files=MAX_COPY_FILES, bytes=disk_mb * 2**20 // 2)
        _copy_folder(Path(folder), workdir, budget, workspace)
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
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    if not _unshare(libc, CLONE_NEWNS):
        # Without CAP_SYS_ADMIN: a user namespace of our own grants it there (the sandbox drops it again).
        if not _unshare(libc, CLONE_NEWUSER | CLONE_NEWNS):
            return f"unshare: {os.strerror(ctypes.get_errno())}"
        problem = _map_ids(uid, gid)
        if problem:
            return problem
    # Keep every mount of this namespace to itself: a shared "/" would propagate the tmpfs to the grader's.
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"making mounts private: {os.strerror(ctypes.get_errno())}"
    options = f"size={int(disk_mb)}m,nr_inodes={TMPFS_INODES},mode=0700".encode()
    if libc.mount(b"tmpfs", os.fsencode(workdir), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        return f"mounting tmpfs: {os.strerror(ctypes.get_errno())}"
    return None


def _unshare(libc, flags) -> bool:
    return libc.unshare(flags) == 0


def _map_ids(uid: int, gid: int) -> str | None:
    """In the new user namespace keep our own uid and gid (no other id exists there)."""
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError as error:
        return f"user namespace id maps: {error.strerror}"
    return None


# --- copying the student's folder --------------------------------------------------------------------


@dataclass
class _CopyBudget:
    files: int
    bytes: int


def _copy_folder(folder: Path, workdir: Path, budget: _CopyBudget, workspace: Workspace) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        workspace.student_notes.append(f"the files beside your notebook were not copied: {_reason(error)}")
        return
    try:
        _copy_entries(fd, workdir, "", 0, budget, workspace)
    finally:
        os.close(fd)


def _copy_entries(dir_fd: int, target: Path, prefix: str, depth: int, budget: _CopyBudget,
                  workspace: Workspace) -> None:
    """Copy what `dir_fd` holds into `target`; every name is opened relative to dir_fd, never through a link."""
    notes = workspace.student_notes
    with os.scandir(dir_fd) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        shown = prefix + name
        if name in NOT_COPIED or name.endswith(".ipynb"):  # notebooks are what is graded, not data
            continue
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            notes.append(f"{shown} was not copied for grading: it is a link (links are never followed)")
        elif stat.S_ISDIR(info.st_mode):
            if depth >= MAX_COPY_DEPTH:
                notes.append(f"{shown}/ was not copied for grading: more than {MAX_COPY_DEPTH} folders deep")
                continue
            _copy_subfolder(dir_fd, name, target, shown, depth, budget, workspace)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(dir_fd, name, info.st_size, target / name, shown, budget, notes)


def _copy_subfolder(dir_fd, name, target, shown, depth, budget, workspace):
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        workspace.student_notes.append(f"{shown}/ was not copied for grading: {_reason(error)}")
        return
    try:
        (target / name).mkdir(mode=0o700, exist_ok=True)
        _copy_entries(fd, target / name, shown + "/", depth + 1, budget, workspace)
    finally:
        os.close(fd)


def _copy_file(dir_fd, name, size, destination, shown, budget, notes):
    if size > MAX_COPY_FILE_MB * 2**20:
        notes.append(f"{shown} was not copied for grading: larger than {MAX_COPY_FILE_MB} MB")
        return
    if budget.files <= 0 or size > budget.bytes:
        notes.append(f"{shown} was not copied for grading: the files beside the notebook are over "
                     f"{MAX_COPY_FILES} files or {budget.bytes // 2**20} MB")
        return
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the child.
        source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        notes.append(f"{shown} was not copied for grading: {_reason(error)}")
        return
    try:
        if not stat.S_ISREG(os.fstat(source).st_mode):
            return
        written = _copy_bytes(source, destination, min(budget.bytes, MAX_COPY_FILE_MB * 2**20))
    except OSError as error:
        notes.append(f"{shown} was not copied for grading: {_reason(error)}")
        destination.unlink(missing_ok=True)
        return
    finally:
        os.close(source)
    budget.files -= 1
    budget.bytes -= written


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
