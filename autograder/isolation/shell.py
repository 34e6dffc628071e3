"""What `get_ipython()` returns in the grading child: `ShellStandIn`, the stand-in for IPython's shell.

Cells reach it through IPython's syntax (autograder.isolation.cells turns `%time x`, `%%bash`, `!ls` into calls on
it) or by calling it themselves (`get_ipython().run_line_magic(...)`): the same rules either way.
  - magics whose body is the student's code run it, once (timing, profiling and the debugger are not the
    grader's business): %time, %timeit, %prun, %%capture, %debug;
  - `%run` runs a notebook or Python file handed in beside the notebook (autograder.isolation.run_magic);
  - `%%writefile` writes its file into the child's workspace;
  - a few magics need nothing while grading (%matplotlib: figures are drawn without a screen; %config,
    %autoreload, %aimport);
  - everything else (shell commands, `%pip`, `%cd`, `%load`, `%%bash`, `%load_ext`...) is skipped, and said so:
    each is recorded (`take_skipped`), and the grader notes it under the cell (autograder.isolation.supervisor).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.isolation.cells import compile_cell, write_file_magic
from autograder.isolation.run_magic import Runner

__all__ = ["MAX_SKIPPED", "ShellStandIn"]

RUNNING_MAGICS = frozenset({"time", "timeit", "prun", "capture", "debug"})
WRITING_MAGICS = frozenset({"writefile", "file"})
NEEDS_NOTHING = frozenset({"matplotlib", "config", "autoreload", "aimport"})
MAX_SKIPPED = 20  # recorded per cell (what a loop of skipped magics adds is counted, not listed)
MAX_SHOWN_CHARS = 60  # of a skipped magic's line


class ShellStandIn:
    """`get_ipython()` while grading; see the module docstring."""

    def __init__(self, namespace: dict[str, Any], root: Path, running: str = "") -> None:
        self.user_ns = namespace
        self._runs = 0
        self._runner = Runner(root, namespace, running)
        self._skipped: list[str] = []
        self._more_skipped = 0

    def run_line_magic(self, name: str, line: str, *_args: object, **_kwargs: object) -> None:
        name, line = str(name), str(line)
        if name == "run":
            self._runner.run(line)
        elif name in RUNNING_MAGICS:
            if line.strip():
                self._run(line)
        elif name not in NEEDS_NOTHING:
            self._skip(f"%{name} {line}".strip())

    def run_cell_magic(self, name: str, line: str, cell: str, *_args: object, **_kwargs: object) -> None:
        name, line, cell = str(name), str(line), str(cell)
        if name in RUNNING_MAGICS:
            self._run(cell)
        elif name in WRITING_MAGICS:
            write_file_magic(line, cell)
        else:
            self._skip(f"%%{name} {line}".strip())

    def system(self, command: object = "", *_args: object, **_kwargs: object) -> int:
        self._skip(f"!{command}")
        return 0

    def getoutput(self, command: object = "", *_args: object, **_kwargs: object) -> list[str]:
        self._skip(f"!{command}")
        return []

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__"):
            raise AttributeError(name)

        def skipped(*_args: object, **_kwargs: object) -> None:
            self._skip(f"get_ipython().{name}(...)")

        return skipped

    def take_skipped(self) -> tuple[list[str], int]:
        """What was skipped since the last call (and how many more were not listed); starts afresh."""
        skipped, more = self._skipped, self._more_skipped
        self._skipped, self._more_skipped = [], 0
        return skipped, more

    def _skip(self, what: str) -> None:
        if len(self._skipped) >= MAX_SKIPPED:
            self._more_skipped += 1
            return
        shown = what if len(what) <= MAX_SHOWN_CHARS else what[:MAX_SHOWN_CHARS] + "..."
        self._skipped.append(shown)

    def _run(self, code: str) -> None:
        self._runs += 1
        exec(compile_cell(code, f"<magic {self._runs}>"), self.user_ns)  # noqa: S102 - the student's own code
