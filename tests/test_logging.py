"""Progress and diagnostics go through `logging`: the documented stderr lines are unchanged, the rest needs -v.

`attnkit` configures logging once per command (autograder.logs): its INFO, WARNING and ERROR lines are the bare
messages the docs document; DEBUG lines (what each step did) appear with `-v` only. Used as a library, the grader's
errors still reach stderr as bare lines; nothing under autograder/ prints diagnostics itself.
"""

import ast
import contextlib
import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import cli, logs


@pytest.fixture
def logging_restored():
    """The "autograder" logger as it was: a -v run here must not make later tests verbose."""
    logger = logging.getLogger(logs.LOGGER)
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:], logger.level = handlers, level


def _grade_nobody_s_notebooks(tmp_path, before=(), after=()):
    """`attnkit [BEFORE] grade ... [AFTER]` on a class of one student who handed in nothing (no child runs):
    (exit status, stderr)."""
    (tmp_path / "submitted" / "ann\x1b[2J" / "attention").mkdir(parents=True, exist_ok=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):  # the handler writes to sys.stderr as it is at each line
        status = cli.main([*before, "grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), *after])
    return status, err.getvalue()


def test_quiet_by_default_one_summary_line(tmp_path, logging_restored):
    status, err = _grade_nobody_s_notebooks(tmp_path)
    assert status == 0
    assert err.startswith("attnkit grade: 1 students (1 graded, 0 unchanged since the last run) in ")
    assert err.count("\n") == 1 and err.endswith(f"; mean 0.0; {tmp_path / 'out' / 'grades.csv'}\n")


@pytest.mark.parametrize("before, after", [(["-v"], []), (["--verbose"], []), ([], ["-v"])],
                         ids=["-v grade", "--verbose grade", "grade -v"])
def test_verbose_adds_what_each_step_did(tmp_path, logging_restored, before, after):
    status, err = _grade_nobody_s_notebooks(tmp_path, before, after)
    lines = err.splitlines()
    assert status == 0 and "attnkit grade: 1 students to grade, 0 unchanged" in lines
    graded = next(line for line in lines if ": graded, " in line)
    assert graded.startswith("attnkit grade: ann\\x1b[2J: graded, 01_") and "\x1b" not in err  # the id cleaned
    assert lines[-1].startswith("attnkit grade: 1 students (1 graded")  # the summary still last


def test_each_command_configures_once_a_rerun_prints_its_lines_once(tmp_path, logging_restored):
    _grade_nobody_s_notebooks(tmp_path, ["-v"])
    status, err = _grade_nobody_s_notebooks(tmp_path)  # quiet again: the -v of the first run is gone
    assert status == 0 and err.count("\n") == 1 and err.startswith("attnkit grade: 1 students (")
    handlers = [handler for handler in logging.getLogger(logs.LOGGER).handlers
                if isinstance(handler, logs.StderrHandler)]
    assert len(handlers) == 1


@pytest.mark.slow
def test_a_library_caller_still_sees_the_grader_s_errors_on_stderr_and_nothing_else():
    code = ("import logging; from autograder.isolation import supervisor; from autograder.grading import classroom; "
            "supervisor.logger.error('attnkit: internal error while grading x: boom\\n    line'); "
            "classroom.logger.info('an info line'); classroom.logger.debug('a debug line')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert run.stderr == "attnkit: internal error while grading x: boom\n    line\n" and run.stdout == ""


# Code that runs in the grading child and prints what IPython would print in the student's cell (the child's stderr
# is that cell's output, never a terminal): none since IPython's own shell runs the cells (issue 57).
CELL_OUTPUT: set[str] = set()


@pytest.mark.slow
def test_no_module_prints_diagnostics_to_stderr(repo_root):
    """print(..., file=sys.stderr) bypasses -v and the handler: every diagnostic goes through a logger."""
    offenders = []
    for path in sorted((repo_root / "autograder").rglob("*.py")):
        if path.relative_to(repo_root).as_posix() in CELL_OUTPUT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
                    and any(keyword.arg == "file" and ast.unparse(keyword.value) == "sys.stderr"
                            for keyword in node.keywords)):
                offenders.append(f"{Path(path).relative_to(repo_root)}:{node.lineno}")
    assert offenders == []
