"""The grading child runs each cell through IPython's own InteractiveShell (a shell, not a kernel), as Jupyter runs it.

`shared_shell()` builds the shell once, in the zygote (autograder.isolation.zygote: its import and set-up are paid once
per class), before the zygote forks: every grading child gets it as it was then, and hands it a fresh `__main__`
(`GradingShell.start_notebook`) before the first cell. So a cell's IPython syntax, `__future__` imports kept for the
next cells, `_`/`__`/`Out`/`In`, `display()`, `%time`, `%timeit`, `%%capture`, `%%writefile`, `%run`, `%load`,
`$variables` in a magic's line... are IPython's own. Its history stays in memory (no sqlite file, no saving thread),
its profile folder is a temporary one removed at once, and its key-value store (`%store`, `%bookmark`) lives in
the child's memory: nothing a child writes there reaches the next one.

What grading does not allow, the shell refuses and records (`take_refused`; the grader notes each under its cell):
  - anything that starts a program: `!cmd`, `x = !cmd`, `get_ipython().system(...)`, the shell aliases (`%ls`,
    `%cat`...), `%system`, `%sx`, `%sc`, the script magics (`%%bash`, `%%sh`, `%%script`, `%%python3`...), the
    package managers (`%pip`, `%conda`, `%mamba`, `%micromamba`, `%uv`), `%edit`, `%killbgscripts`; the cell
    goes on as if it had run (the sandbox would refuse the process anyway: seccomp);
  - `torch.compile`: its compiler runs as a program; the function or module is returned uncompiled: the grade is
    that of the same code;
  - `%pastebin`, and `%load` or `%pycat` of a URL (the network) or of a file that is not the student's own
    (nothing is read).
`%run` of a file that is not the student's own, or is running already, fails its cell with a UsageError
(autograder.isolation.own_files says which files are).
Cell errors are the child's to report: they are recorded in the ExecutionResult and not printed (the grader writes
its own note under the cell); a result is printed as a kernel's text/plain would be, without the terminal's
`Out[n]:` prompt. The grader's own statements (`from autograder import ...`, `check(...)`) are dropped from each
cell by an AST transformer (`GraderStatements`).
"""

import ast
import contextlib
import fnmatch
import io
import pickle
import shutil
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.alias import Alias
from IPython.core.displayhook import DisplayHook
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.text import SList
from traitlets import Type
from traitlets.config import Config

from autograder.isolation.own_files import OwnFiles
from autograder.isolation.refusals import MAX_REFUSED, Refusal

__all__ = ["GraderStatements", "GradingShell", "shared_shell"]

GRADER_PACKAGES = frozenset({"autograder"})
GRADER_CALLS = frozenset({"check", "check_all", "grade"})
# Magics that start a program, by name (aliases, the script magics and the package managers are found by their kind).
PROGRAM_MAGICS = frozenset({"system", "sx", "sc", "!", "edit", "ed", "killbgscripts", "script"})
PROGRAM_MAGIC_MODULES = ("IPython.core.magics.script", "IPython.core.magics.packaging")
NETWORK_MAGICS = frozenset({"pastebin"})
URL_PREFIXES = ("http://", "https://")
MAX_SHOWN_CHARS = 60  # of a refused magic's line


class _ResultHook(DisplayHook):
    """A cell's result, written as its text/plain (a kernel's execute_result) without the terminal's prompt."""

    def write_output_prompt(self) -> None:
        return None


class GradingShell(InteractiveShell):
    """IPython's InteractiveShell with the sandbox's refusals (see the module docstring)."""

    displayhook_class = Type(_ResultHook)

    _files: OwnFiles | None = None  # the child's own files, once a notebook started
    _ipython_run: Callable[..., Any] | None = None  # IPython's own %run, wrapped by _checked_run
    _refused: list[tuple[str, str]]
    _more_refused = 0

    def start_notebook(self, files: OwnFiles) -> dict[str, Any]:
        """Make a fresh `__main__` the notebook's namespace, as a new kernel's; returns it (what the probes read)."""
        main = types.ModuleType("__main__", "Automatically created module for IPython interactive environment")
        self.user_module, self.user_ns = self.prepare_user_module(main, None)
        self.init_sys_modules()
        if self.history_manager is not None:  # in memory (shared_shell): the lists `In`, `_oh`, `_dh` emptied
            self.history_manager.reset(new_session=False)
            self.history_manager.outputs = _NotKept()
        self.execution_count = 1
        self.compile = self.compiler_class()  # no __future__ flag of an earlier notebook
        self.user_ns_hidden.clear()
        self.init_user_ns()
        self.init_builtins()  # `display` and `__IPYTHON__` among the builtins, as a new kernel has them
        self.init_displayhook()  # `_`, `__`, `___` start as "" in the new namespace
        self.db = _SessionStore()
        self._files = files
        self.take_refused()
        return self.user_ns

    def run(self, source: str) -> BaseException | None:
        """Run one cell as a kernel does (its history stored: `_`, `In`, `Out`); the exception it raised, if any."""
        self._leave_traps()  # an earlier cell stopped inside IPython's own code (the step's alarm) left them set
        try:
            result = self.run_cell(source, store_history=True)
        except BaseException:
            self._leave_traps()
            raise
        error = result.error_before_exec or result.error_in_exec
        return error if isinstance(error, BaseException) else None

    def take_refused(self) -> tuple[list[tuple[str, str]], int]:
        """What was refused since the last call ((what, Refusal) pairs, and how many more); starts afresh."""
        refused, more = getattr(self, "_refused", []), self._more_refused
        self._refused, self._more_refused = [], 0
        return refused, more

    def refuse(self, what: str, why: Refusal) -> None:
        if len(self._refused) >= MAX_REFUSED:
            self._more_refused += 1
            return
        shown = what if len(what) <= MAX_SHOWN_CHARS else what[:MAX_SHOWN_CHARS] + "..."
        self._refused.append((shown, why.value))

    # --- what starts a program --------------------------------------------------------------------------------

    def system(self, cmd: str) -> None:  # type: ignore[override]  # refused: nothing runs, nothing is returned
        self.refuse(f"!{cmd}", Refusal.PROGRAM)

    def system_raw(self, cmd: str) -> None:
        self.system(cmd)

    def system_piped(self, cmd: str) -> None:
        self.system(cmd)

    def getoutput(self, cmd: str, split: bool = True, depth: int = 0) -> SList:
        self.refuse(f"!{cmd}", Refusal.PROGRAM)
        return SList()

    def _find_with_lazy_load(self, /, type_: str, magic_name: str) -> Any:
        """Where run_line_magic and run_cell_magic find a magic: a refused one is found as its refusal."""
        return self._unless_refused(type_, magic_name, super()._find_with_lazy_load(type_, magic_name))

    def find_magic(self, magic_name: str, magic_kind: str = "line") -> Any:
        return self._unless_refused(magic_kind, magic_name, super().find_magic(magic_name, magic_kind))

    def find_line_magic(self, magic_name: str) -> Any:
        return self._unless_refused("line", magic_name, super().find_line_magic(magic_name))

    def find_cell_magic(self, magic_name: str) -> Any:
        return self._unless_refused("cell", magic_name, super().find_cell_magic(magic_name))

    def _unless_refused(self, kind: str, name: str, magic: Any) -> Any:
        why = _why_refused(name, magic) if magic is not None else None
        if why is None:
            return magic
        prefix = "%%" if kind == "cell" else "%"

        def refused(line: str = "", _cell: str = "") -> None:
            self.refuse(f"{prefix}{name} {line}".strip(), why)

        return refused

    # --- what reads files ---------------------------------------------------------------------------------------

    def find_user_code(self, target: str, raw: bool = True, py_only: bool = False, skip_encoding_cookie: bool = True,
                       search_ns: bool = False) -> str:
        """%load, %pycat: the history and the namespace as IPython finds them; a file only if it is the student's
        own; never a URL."""
        if not self.extract_input_lines(target, raw=raw):
            if target.startswith(URL_PREFIXES):
                self.refuse(f"%load {target}", Refusal.NETWORK)
                return ""
            if self._files is None or self._files.readable(target):
                self.refuse(f"%load {target}", Refusal.OUTSIDE)
                return ""
        return super().find_user_code(target, raw, py_only, skip_encoding_cookie, search_ns)

    def _checked_run(self, parameter_s: str = "") -> Any:
        """IPython's own %run, given a file finder that says which files may run (the student's own, not running)."""
        files, ipython_run = self._files, self._ipython_run
        entered: list[Path] = []

        def file_finder(name: str) -> str:
            if files is None:
                raise FileNotFoundError(name)
            found, path = files.runnable("run", name)
            files.enter(path)
            entered.append(path)
            return found

        assert ipython_run is not None
        try:
            return ipython_run(parameter_s, file_finder=file_finder)
        finally:
            for path in entered:
                if files is not None:
                    files.leave(path)

    def enable_gui(self, gui: str | None = None) -> None:
        """`%matplotlib inline` (and `%gui`): no event loop to join while grading; figures are drawn as in a kernel."""
        return None

    def ask_exit(self) -> None:
        """`exit()` in a cell: the shell is asked to end, as a terminal's is; the notebook's next cells still run."""
        self.exit_now = True

    def _leave_traps(self) -> None:
        """The builtins and display hook that run_cell sets for a cell, put back where a cell was stopped before
        run_cell could (their nesting counts are IPython's own bookkeeping); nothing to do otherwise."""
        for trap in (self.builtin_trap, self.display_trap):
            try:
                if trap._nested_level > 0:
                    trap._nested_level = 1
                    trap.__exit__(None, None, None)
            except Exception:  # noqa: BLE001, S112 - what the student did to them is theirs; the next cell goes on
                continue


def _why_refused(name: str, magic: Any) -> Refusal | None:
    if isinstance(magic, Alias) or name in PROGRAM_MAGICS:
        return Refusal.PROGRAM
    if getattr(magic, "__module__", "") in PROGRAM_MAGIC_MODULES:
        return Refusal.PROGRAM
    if name in NETWORK_MAGICS:
        return Refusal.NETWORK
    return None


class _NotKept(dict[int, list[Any]]):
    """IPython 9 keeps everything each cell prints or displays, in memory, for `%notebook` (its history's
    `outputs`); while grading, a loop of prints must cost nothing (the child keeps the first characters of a cell's
    output, autograder.isolation.child_process): nothing is kept. (It also spares IPython's own IndexError in a cell
    that prints after `%notebook` or `%history` looked up a cell that printed nothing.)"""

    def __getitem__(self, key: int) -> list[Any]:
        return []

    def __contains__(self, key: object) -> bool:
        return False


class _SessionStore(dict[str, bytes]):
    """The shell's key-value store (`%store`, `%bookmark`) in memory, pickled as IPython's PickleShareDB stores it:
    a fresh kernel's empty store, never a file another child could read."""

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, pickle.dumps(value))

    def __getitem__(self, key: str) -> Any:
        return pickle.loads(super().__getitem__(key))  # noqa: S301 - the student's own values, in their own process

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key] if key in self else default

    def keys(self, globpat: str | None = None) -> Any:  # type: ignore[override]  # PickleShareDB.keys(globpat)
        return [key for key in super().keys() if globpat is None or fnmatch.fnmatch(key, globpat)]


def _discard_page(_shell: InteractiveShell, _data: object, start: int = 0, screen_lines: int = 0) -> None:
    """`obj?`, `%prun`'s table...: a kernel sends them to the pager, not the cell's output; no pager program here."""
    return None


def _recorded(shell: InteractiveShell, etype: type[BaseException], value: BaseException, tb: types.TracebackType,
              tb_offset: int | None = None) -> list[str]:
    """A cell's exception: kept for %tb and %debug as IPython keeps it, not printed (the child reports it)."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    return []


def _is_grader_statement(statement: ast.stmt) -> bool:
    """An import of the grader (`autograder`) or a bare `check(...)`/`check_all(...)`/`grade(...)` call."""
    if isinstance(statement, ast.Import):
        return any(alias.name.split(".")[0] in GRADER_PACKAGES for alias in statement.names)
    if isinstance(statement, ast.ImportFrom):
        return statement.level == 0 and (statement.module or "").split(".")[0] in GRADER_PACKAGES
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        function = statement.value.func
        if isinstance(function, ast.Name):
            return function.id in GRADER_CALLS
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
            return function.attr in GRADER_CALLS and function.value.id in GRADER_PACKAGES
    return False


class GraderStatements(ast.NodeTransformer):
    """Drops a cell's top-level statements that belong to the grader, not to the student: run inside the student's
    process they would run checks there. (An import of `solutions` is left alone: it fails in the sandbox, and the
    student sees why.)"""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        node.body = [statement for statement in node.body if not _is_grader_statement(statement)]
        return node


def shared_shell() -> GradingShell:
    """This process's grading shell, made on first use (in the zygote, before it forks: see the module docstring)."""
    if GradingShell.initialized():
        return GradingShell.instance()
    config = Config()
    config.HistoryManager.enabled = False  # history in memory only: no sqlite file, no saving thread
    config.InteractiveShell.colors = "nocolor"  # a traceback a %run file prints is read in a page, not a terminal
    config.InteractiveShell.xmode = "Plain"
    ipython_dir = tempfile.mkdtemp(prefix="attnkit-ipython-")
    main = sys.modules.get("__main__")
    try:
        shell = GradingShell.instance(config=config, ipython_dir=ipython_dir)
    finally:
        shutil.rmtree(ipython_dir, ignore_errors=True)  # nothing of it is read or written again
        if main is not None:  # the shell takes `__main__` when a notebook starts, not before
            sys.modules["__main__"] = main
    assert shell.display_formatter is not None and shell.extension_manager is not None  # made by __init__
    shell.take_refused()
    shell.display_formatter.active_types = ["text/plain"]  # what a cell shows is read as text: no picture rendered
    shell.set_hook("show_in_pager", _discard_page)
    shell.set_custom_exc((BaseException,), _recorded)
    shell.ast_transformers.append(GraderStatements())
    shell.extension_manager.load_extension("storemagic")  # as in a Jupyter kernel (IPKernelApp's default)
    shell._ipython_run = shell.magics_manager.find("line", "run")  # loaded now: it may be declared lazily
    shell.magics_manager.register_function(shell._checked_run, "line", "run")
    _refuse_compiling(shell)
    _warm_up(shell, main)
    return shell


WARM_UP_CELLS = (  # what most cells do, run once before any fork: IPython's and torch's first-use costs paid here
    "import torch\nwarm = torch.ones(2, 3) * 2\n%time warm_sum = warm.sum(dim=-1)",
    "def warm_up(x: torch.Tensor) -> torch.Tensor:\n    return x.sum(dim=-1)\nprint(warm_up(warm))\nwarm_up(warm)",
    "again = _\n[again, {'a': 1.5}, (2, 'b')]",
    "warm.sum()",
)


def _warm_up(shell: GradingShell, main: types.ModuleType | None) -> None:
    """Run WARM_UP_CELLS on a throwaway notebook (a child starts its own); nothing is printed, `__main__` kept."""
    shell.start_notebook(OwnFiles(Path(tempfile.gettempdir())))
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            for source in WARM_UP_CELLS:
                shell.run(source)
    finally:
        shell.take_refused()
        if main is not None:
            sys.modules["__main__"] = main


def _refuse_compiling(shell: GradingShell) -> None:
    """torch.compile (and nn.Module.compile, torch.compiler.compile, which call it) returns what it is given."""
    torch = sys.modules.get("torch")
    if torch is None:
        return

    def compile(model: Any = None, **_options: Any) -> Any:  # noqa: A001 - torch's name
        shell.refuse("torch.compile", Refusal.COMPILER)
        return model if model is not None else _unchanged

    setattr(torch, "compile", compile)  # noqa: B010 - torch's attribute, replaced in this process only


def _unchanged(model: Any) -> Any:
    return model

