"""One notebook cell's source as Python the grading child can run: `compile_cell(source, filename)`.

IPython syntax (`%time`, `%%capture`, `!ls`, `x?`) becomes plain calls on `get_ipython()` through
IPython's own TransformerManager; autograder.isolation.shell answers those calls (magics that wrap code run it,
`%run` runs the student's own files, `%%writefile` writes into the child's workspace, the rest is skipped and
said so).
Top-level statements that belong to the grader, not to the student, are dropped: imports of `autograder` and bare
`check(...)`/`check_all(...)`/`grade(...)` calls. Run inside the student's process, they would run checks there. (An
import of `solutions` is left alone: it fails in the sandbox, and the student sees why.)
The transformation runs in the child, so a pathological cell can only hurt its own sandbox.
"""

import ast
import importlib
import linecache
import shlex
import types
from pathlib import Path

__all__ = ["UsageError", "compile_cell", "compile_python", "display_stand_in", "write_file_magic"]

GRADER_PACKAGES = frozenset({"autograder"})
GRADER_CALLS = frozenset({"check", "check_all", "grade"})


def compile_cell(source: str, filename: str) -> types.CodeType:
    """A code object for the cell; SyntaxError when the student's code does not parse."""
    code = _ipython_to_python(source)
    tree = ast.parse(code, filename=filename)
    tree.body = [statement for statement in tree.body if not _is_grader_statement(statement)]
    # Tracebacks then quote the student's line, not an empty string.
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    return compile(tree, filename, "exec")


def compile_python(source: str, filename: str) -> types.CodeType:
    """A plain Python file (a `%run` of a .py) as the cells are compiled, without IPython's syntax."""
    tree = ast.parse(source, filename=filename)
    tree.body = [statement for statement in tree.body if not _is_grader_statement(statement)]
    return compile(tree, filename, "exec")


def _ipython_to_python(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # IPython missing: comment out magics and shell escapes, keep the rest
        return "\n".join(f"pass  # {line}" if line.lstrip().startswith(("%", "!")) else line
                         for line in source.splitlines())
    return TransformerManager().transform_cell(source)


def _is_grader_statement(statement: ast.stmt) -> bool:
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


def write_file_magic(line: str, cell: str) -> None:
    """`%%writefile [-a] NAME`: the cell's text into NAME (relative to the working directory), as IPython writes it.

    The sandbox decides where writing is allowed; an import of the new module then finds it (caches refreshed).
    """
    try:
        words = shlex.split(line)
    except ValueError as error:
        raise UsageError(f"%%writefile {line}: {error}") from None
    append = any(word in ("-a", "--append") for word in words)
    names = [word for word in words if word not in ("-a", "--append")]
    if len(names) != 1 or names[0].startswith("-"):
        raise UsageError(f"%%writefile {line}: expected [-a] FILENAME")
    path = Path(names[0].strip("\"'")).expanduser()
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(cell)
    importlib.invalidate_caches()


class UsageError(Exception):
    """A magic's line that IPython would refuse too (IPython raises its own UsageError)."""


def display_stand_in(*_objects: object, **_kwargs: object) -> None:
    """`display(...)` outside a kernel: nothing to show, nothing to fail."""
    return None
