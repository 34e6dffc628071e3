"""Which files IPython's `%run`, `%load` and `%pycat` may read while grading: `OwnFiles(root, running)`.

Only a regular file the student handed in beside the notebook: one inside `root` (the child's workspace, a copy of
the student's own folder), reached without a link (each folder and the file are opened with O_NOFOLLOW, so a link
anywhere on the way is refused, even to a file inside), with no other name (a hard link), and not a file that is
running already (the graded notebook itself, or a `%run` of a file inside its own run). IPython finds the file as it
always does (relative to the working directory, `.py` added where the name has no suffix); these rules only say
whether it may be read. What reads it is IPython's own code, by its path: a link swapped in meanwhile by the
student's own thread gains nothing the sandbox does not allow anyway (the Landlock rules bound every read).
"""

import errno
import os
import stat
from pathlib import Path

from IPython.core.error import UsageError

__all__ = ["MAX_DEPTH", "OwnFiles"]

MAX_DEPTH = 8  # %run inside %run inside...: deeper is refused


class OwnFiles:
    """The files of one grading child that IPython may read, and what is running (see the module docstring)."""

    def __init__(self, root: Path, running: str = "") -> None:
        """`root`: the workspace (its real path); `running`: the graded notebook's file name (its copy in `root`,
        if any, is itself)."""
        self.root = root
        self._running: list[Path] = [root / running] if running else []

    def runnable(self, magic: str, name: str) -> tuple[str, Path]:
        """(`name` as IPython's `%run` finds it (get_py_filename: as written, else with `.py`), its absolute path)
        when it is the student's own file and not running; UsageError otherwise (the cell fails, as any error of
        %run's)."""
        if not isinstance(name, str):  # `%run -m` of a module a meta path finder serves: not a file handed in
            raise UsageError(f"%{magic}: only the files handed in beside the notebook run while grading")
        for candidate in _candidates(name):
            path = self.resolve(candidate)
            if path is None:
                raise UsageError(f"%{magic} {name}: only the files handed in beside the notebook run while grading")
            found = _regular_file(self.root, path)
            if found is _MISSING:
                continue
            if found:
                raise UsageError(f"%{magic} {name}: {found}")
            if path in self._running:
                raise UsageError(f"%{magic} {name}: it is already running (a %run of itself); not run again")
            if len(self._running) > MAX_DEPTH:
                raise UsageError(f"%{magic} {name}: more than {MAX_DEPTH} %run inside each other")
            return candidate, path
        raise UsageError(f"%{magic} {name}: no such file handed in beside the notebook")

    def readable(self, name: str) -> str:
        """Why the file `name` names (as IPython's `%load` finds one) may not be read (a path out of the folder, even
        to nothing); "" when it may, or when the folder has no such file (IPython then looks elsewhere: its history,
        the namespace)."""
        for candidate in _candidates(name):
            path = self.resolve(candidate)
            if path is None:
                return "only the files handed in beside the notebook are read while grading"
            found = _regular_file(self.root, path)
            if found is not _MISSING:
                return found
        return ""

    def resolve(self, name: str) -> Path | None:
        """The absolute path `name` names from the working directory, without following links; None outside root."""
        try:
            absolute = Path(os.path.normpath(os.path.join(os.getcwd(), os.path.expanduser(name))))
        except OSError:  # the working directory is gone
            return None
        return absolute if self.root in absolute.parents else None

    def enter(self, path: Path) -> None:
        """`path` is running from now on, until `leave(path)` (a %run of it inside is refused)."""
        self._running.append(path)

    def leave(self, path: Path) -> None:
        self._running.remove(path)


_MISSING = "missing"


def _candidates(name: str) -> list[str]:
    """The names IPython's get_py_filename tries, in its order."""
    return [name] + ([name + ".py"] if not name.endswith(".py") else [])


def _regular_file(root: Path, path: Path) -> str:
    """"" when `path` (inside root) is a regular file reached without a link, with one name; _MISSING when nothing
    is there; else why it is refused. Each folder and the file are opened with O_NOFOLLOW."""
    *folders, name = path.relative_to(root).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part, flags in [(folder, os.O_DIRECTORY) for folder in folders] + [(name, 0)]:
            opened = _open_next(fd, part, flags)
            os.close(fd)
            fd = -1
            if isinstance(opened, str):
                return opened
            fd = opened
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_nlink > 1:
            return "a file with other names (a hard link) is not read while grading"
        return ""
    finally:
        if fd >= 0:
            os.close(fd)


def _open_next(dir_fd: int, name: str, flags: int) -> int | str:
    """`name` inside the folder open as `dir_fd`, never through a link; a str (why not, or _MISSING) otherwise."""
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return _MISSING
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            return "a link is not read while grading (only the files handed in)"
        return error.strerror or "cannot be opened"


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
