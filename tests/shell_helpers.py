"""The grading child's IPython shell (autograder.isolation.grading_shell) in this test process, on a folder of the
test's: `notebook_shell(root)` gives (shell, namespace) and puts back afterwards what the shell changed in this process
(`__main__`, the builtins it adds); `run(shell, source)` runs one cell and gives (its exception or None, its output)."""

import builtins
import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from autograder.isolation.grading_shell import GradingShell, shared_shell
from autograder.isolation.own_files import OwnFiles


@contextmanager
def notebook_shell(root: Path, running: str = "") -> Iterator[tuple[GradingShell, dict[str, Any]]]:
    """The shell on a fresh notebook whose own folder is `root` (the caller makes it the working directory)."""
    main, saved_builtins = sys.modules["__main__"], dict(vars(builtins))
    shell = shared_shell()
    try:
        yield shell, shell.start_notebook(OwnFiles(Path(os.path.realpath(root)), running=running))
    finally:
        sys.modules["__main__"] = main
        for name in set(vars(builtins)) - set(saved_builtins):  # what the shell added (display, __IPYTHON__)
            delattr(builtins, name)
        vars(builtins).update(saved_builtins)


def run(shell: GradingShell, source: str) -> tuple[BaseException | None, str]:
    """(the cell's exception or None, what it printed on stdout and stderr)"""
    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        error = shell.run(source)
    return error, printed.getvalue()
