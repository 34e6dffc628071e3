"""`%run` while grading: a notebook or a Python file the student handed in beside the notebook runs in the grading
child, in the step of the cell that runs it (the same sandbox, limits and withholding as the cell), as IPython runs
it: `run_file(line, root, namespace, running)`.

What IPython does, and so does this:
  - a `.ipynb` (or `.ipy`): its code cells, in order, in the notebook's own namespace; the first error stops it and
    fails the cell (IPython's safe_execfile_ipy with raise_exceptions);
  - a `.py`: in a fresh `__main__` namespace (`-n`: named after the file; `-i`: the notebook's own namespace), whose
    names then join the notebook's; an exception in it is shown in the cell's output and the cell goes on; exit()
    ends only the file (`-e`: silently); `sys.argv` is the file and its arguments meanwhile;
  - `-m NAME` runs NAME as a module: here only a module handed in (NAME.py or NAME/__main__.py);
  - `-t`, `-p`, `-d` (timing, profiling, the debugger) just run it: timing is not the grader's business.
Only a regular file inside `root` (the child's workspace: the copy of the student's own folder) runs: a path that
leaves it (`..`, `/etc/passwd`, the solutions), a link (even to a file inside) or a hard-linked file is refused,
and so is a file that is already running (`%run` of itself): each a UsageError, which fails the cell like any error.
"""

import builtins
import errno
import json
import linecache
import os
import shlex
import stat
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.isolation.cells import UsageError, compile_cell, compile_python

__all__ = ["Runner", "parse"]

# IPython's %run options ("nidtN:b:pD:l:rs:T:em:G"): those followed by a value, and those without.
OPTIONS_WITH_VALUE = frozenset("NbDlsTm")
FLAGS = frozenset("nidtprreG")
MAX_DEPTH = 8  # %run inside %run inside...: deeper is refused
NOTEBOOK_SUFFIXES = (".ipynb", ".ipy")


@dataclass(frozen=True)
class RunRequest:
    """One %run line, read as IPython reads it."""

    target: str  # the file (or, with -m, the module) as written
    arguments: tuple[str, ...]
    flags: frozenset[str]
    module: bool  # -m: target is a module name


def parse(line: str) -> RunRequest:
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise UsageError(f"%run {line}: {error}") from None
    flags: set[str] = set()
    module = False
    while words and words[0].startswith("-") and len(words[0]) > 1:
        word = words.pop(0)
        for position, flag in enumerate(word[1:], start=1):
            if flag in OPTIONS_WITH_VALUE:
                value = word[position + 1:] or (words.pop(0) if words else "")
                if not value:
                    raise UsageError(f"%run: option -{flag} requires an argument")
                if flag == "m":
                    module = True
                    words.insert(0, value)
                break
            if flag not in FLAGS:
                raise UsageError(f"%run: option -{flag} not recognized")
            flags.add(flag)
    if not words:
        raise UsageError("%run: you must provide at least a filename")
    return RunRequest(words[0], tuple(words[1:]), frozenset(flags), module)


@dataclass(frozen=True)
class HandedIn:
    path: Path  # inside the root
    text: str  # read from the file found without a link, not from whatever the path names later


def handed_in(root: Path, target: str, module: bool) -> HandedIn:
    """The regular file `target` names inside `root`, opened without following any link; UsageError otherwise."""
    if module:
        parts = target.split(".")
        if not all(part.isidentifier() for part in parts):
            raise UsageError(f"%run -m {target}: not a module name")
        candidates = [Path(*parts).with_suffix(".py"), Path(*parts) / "__main__.py"]
    else:
        written = Path(os.path.expanduser(target))
        candidates = [written] + ([written.with_name(written.name + ".py")] if not written.suffix else [])
    for candidate in candidates:
        found = _inside(root, candidate, target)
        if found is not None:
            return found
    raise UsageError(f"%run {target}: no such file handed in beside the notebook")


def _inside(root: Path, candidate: Path, target: str) -> HandedIn | None:
    """root/candidate read when it is a regular file reached without a link (each folder and the file opened with
    O_NOFOLLOW: a link swapped in meanwhile is refused too); None when missing; UsageError otherwise."""
    absolute = Path(os.path.normpath(root / candidate))
    if root not in absolute.parents:
        raise UsageError(f"%run {target}: only the files handed in beside the notebook run while grading")
    *folders, name = absolute.relative_to(root).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part, flags in [(folder, os.O_DIRECTORY) for folder in folders] + [(name, 0)]:
            opened = _open_next(fd, part, flags, target)
            os.close(fd)
            fd = opened
            if fd < 0:
                return None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"%run {target}: not a regular file")
        if info.st_nlink > 1:
            raise UsageError(f"%run {target}: a file with other names (a hard link) is not run while grading")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return HandedIn(absolute, handle.read().decode("utf-8", errors="replace"))
    finally:
        if fd >= 0:
            os.close(fd)


def _open_next(dir_fd: int, name: str, flags: int, target: str) -> int:
    """`name` inside the folder open as `dir_fd`, never through a link; -1 when missing."""
    try:
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return -1
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(dir_fd, name):
            raise UsageError(f"%run {target}: a link is not run while grading (only the files handed in)") from None
        raise UsageError(f"%run {target}: {error.strerror}") from None


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


class Runner:
    """The %run of one grading child: what is running now (so that a file never runs inside itself)."""

    def __init__(self, root: Path, namespace: dict[str, Any], running: str = "") -> None:
        """`running`: the name of the graded notebook, running already (its copy in `root`, if any, is itself)."""
        self._root = root
        self._namespace = namespace
        self._running: list[Path] = [root / running] if running else []

    def run(self, line: str) -> None:
        request = parse(line)
        found = handed_in(self._root, request.target, request.module)
        path = found.path
        if path in self._running:
            raise UsageError(f"%run {request.target}: it is already running (a %run of itself); not run again")
        if len(self._running) > MAX_DEPTH:
            raise UsageError(f"%run {request.target}: more than {MAX_DEPTH} %run inside each other")
        saved_argv, saved_file = sys.argv, self._namespace.get("__file__")
        self._running.append(path)
        sys.argv = [str(path), *request.arguments]
        try:
            _cache_lines(found)
            if path.suffix in NOTEBOOK_SUFFIXES:
                self._namespace["__file__"] = str(path)
                self._run_notebook(found)
            else:
                self._run_python(found, request)
        finally:
            self._running.pop()
            sys.argv = saved_argv
            if saved_file is None:
                self._namespace.pop("__file__", None)
            else:
                self._namespace["__file__"] = saved_file

    def _run_notebook(self, found: HandedIn) -> None:
        path = found.path
        if path.suffix == ".ipy":
            exec(compile_cell(found.text, str(path)), self._namespace)  # noqa: S102 - the student's own file
            return
        for number, source in enumerate(_code_cells(found.text, path)):
            exec(compile_cell(source, f"<{path.name} cell {number}>"), self._namespace)  # noqa: S102 - the same

    def _run_python(self, found: HandedIn, request: RunRequest) -> None:
        path = found.path
        code = compile_python(found.text, str(path))
        interactive = "i" in request.flags
        if interactive:
            namespace = self._namespace
            namespace["__file__"] = str(path)
        else:
            name = path.stem if "n" in request.flags else "__main__"
            module = types.ModuleType(name)
            namespace = module.__dict__
            namespace.update({"__file__": str(path), "__builtins__": builtins})
            if "get_ipython" in self._namespace:  # a builtin in IPython: every file it runs has it
                namespace["get_ipython"] = self._namespace["get_ipython"]
        main = sys.modules.get("__main__")
        if not interactive and namespace["__name__"] == "__main__":
            sys.modules["__main__"] = module  # as `python file.py`: pickling and dataclasses find its names
        try:
            exec(code, namespace)  # noqa: S102 - the student's own file
        except SystemExit as exit_:
            if exit_.code not in (None, 0) and "e" not in request.flags:
                print(f"%run {path.name}: exited with {exit_.code!r}", file=sys.stderr)
        except Exception as error:  # noqa: BLE001 - as IPython: shown, and the cell goes on
            print(f"%run {path.name}: {type(error).__name__}: {error}", file=sys.stderr)
        finally:
            if main is not None:
                sys.modules["__main__"] = main
        if not interactive:
            namespace.pop("__name__", None)
            file_before = self._namespace.get("__file__")
            self._namespace.update(namespace)
            self._namespace["__builtins__"] = builtins
            if file_before is not None:
                self._namespace["__file__"] = file_before


def _cache_lines(found: HandedIn) -> None:
    """Tracebacks then quote the file's lines, as they were run."""
    linecache.cache[str(found.path)] = (len(found.text), None, found.text.splitlines(keepends=True), str(found.path))


def _code_cells(text: str, path: Path) -> list[str]:
    """The sources of a notebook's code cells (nbformat 4; 3's worksheets too), each type checked."""
    try:
        document = json.loads(text)
    except ValueError:
        raise UsageError(f"%run {path.name}: not a notebook (its JSON cannot be read)") from None
    cells: object = document.get("cells") if isinstance(document, dict) else None
    if cells is None and isinstance(document, dict) and isinstance(document.get("worksheets"), list):
        cells = []
        for sheet in document["worksheets"]:
            sheet_cells = sheet.get("cells") if isinstance(sheet, dict) else None
            cells.extend(sheet_cells if isinstance(sheet_cells, list) else [])
    if not isinstance(cells, list):
        raise UsageError(f"%run {path.name}: not a notebook (no list of cells)")
    sources = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise UsageError(f"%run {path.name}: a code cell whose source is not text")
        sources.append(source)
    return sources
