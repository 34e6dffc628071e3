"""Nothing a student wrote reaches the instructor's terminal raw (autograder/safe_logging.py).

The attack: a student id (folder name), a file name and a cell's grade id holding OSC 0 (window title), OSC 52
(clipboard write), CSI erase-line and cursor-up, a bare CR, a backspace, an 8-bit CSI (C1) and bidi overrides.
`nbgrader autograde` printed them raw in its own log lines ("Creating/updating student with ID ...", "Cell ... does
not exist in the database"); the course's nbgrader_config.py now installs a LogRecord factory that shows them as
escapes. The same bytes are looked for in what `attnkit grade -v` and `attnkit similarity` print. Honest text
(Chinese, accents, emoji) stays as it is.
"""

import io
import json
import logging
import os
import subprocess
import sys
import unicodedata
import warnings

import pytest
from tornado.log import LogFormatter

from autograder import safe_logging
from autograder.course.exercises import NOTEBOOKS
from autograder.grading.progress import Progress
from autograder.integrations import nbgrader_course

NB01 = NOTEBOOKS[0]
EVIL = "\x1b]0;PWNED-TITLE\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\x1b[1A\r\x08\x9b31m\x9d0;t\x9c\u202e\u2066\u2028"
SHOWN = "\\x1b]0;PWNED-TITLE\\x07\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[2K\\x1b[1A\\x0d\\x08\\x9b31m\\x9d0;t\\x9c" \
        "\\u202e\\u2066\\u2028"
HONEST = "张伟-Émile-🙂"
HONEST_ID = "张伟-Émile"  # a student id is letters, digits and -_. (course_roster.id_problem): no emoji
FORGED = "attnkit grade: 1 students (1 graded, 0 unchanged since the last run) in 0.1 s; mean 100.0"


def raw_controls(text):
    """The characters of `text` that act on a terminal or reorder what it shows (newline and tab are text)."""
    return sorted({f"U+{ord(char):04X}" for char in text
                   if (unicodedata.category(char) in ("Cc", "Zl", "Zp") and char not in "\n\t")
                   or "\u202a" <= char <= "\u202e" or "\u2066" <= char <= "\u2069" or char in "\u061c\u200e\u200f"})


def test_raw_controls_sees_every_character_of_the_attack():
    assert raw_controls(EVIL) == sorted(f"U+{ord(char):04X}" for char in set(EVIL) if not char.isprintable())
    assert raw_controls(SHOWN) == [] and raw_controls(HONEST) == []


# --- the factory, in this process -------------------------------------------------------------------------------------


@pytest.fixture
def logging_as_it_was():
    """Logging and warnings as Python sets them up (an earlier `attnkit` command run in this process installed the
    factory), put back as they were after the test: install() is process-wide."""
    factory, formatwarning = logging.getLogRecordFactory(), warnings.formatwarning
    logging.setLogRecordFactory(logging.LogRecord)
    warnings.formatwarning = warnings._formatwarning_orig  # noqa: SLF001 - the standard library's own default
    yield
    logging.setLogRecordFactory(factory)
    warnings.formatwarning = formatwarning


def _log_the_attack():
    """What a traitlets-style logger (nbgrader's formatter, its own handler) prints for records carrying EVIL."""
    stream = io.StringIO()
    nbgraders, plain = logging.StreamHandler(stream), logging.StreamHandler(stream)  # the second prints stacks
    nbgraders.setFormatter(LogFormatter(fmt="%(color)s[%(name)s | %(levelname)s]%(end_color)s %(message)s"))
    logger = logging.getLogger("test_terminal_safe_logs.AutogradeApp")
    logger.propagate, logger.handlers[:] = False, [nbgraders, plain]
    logger.setLevel(logging.DEBUG)
    logger.warning("Cell '%s' does not exist in the database (%s)", f"solution_x{EVIL}", HONEST)
    logger.info(f"Copying {EVIL}/notes.txt")  # a message built before logging, no arguments
    try:
        raise ValueError(f"nbgrader cell does not have a grade_id: {EVIL}")
    except ValueError:
        logger.exception("Traceback for %s", HONEST)
    logger.error("here", stack_info=True)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        shown = io.StringIO()
        warnings.showwarning = lambda *args, **kwargs: shown.write(warnings.formatwarning(*args[:4]))
        warnings.warn(f"Non-unique cell id {EVIL} detected", UserWarning, stacklevel=1)
    return stream.getvalue() + shown.getvalue()


def test_without_the_factory_the_attack_reaches_the_terminal(logging_as_it_was):
    printed = _log_the_attack()
    assert raw_controls(printed)  # what the factory is for: these lines are printed raw without it


def test_every_part_of_a_record_and_a_warning_is_shown_not_sent(logging_as_it_was):
    safe_logging.install()
    printed = _log_the_attack()
    assert raw_controls(printed) == []
    assert f"Cell 'solution_x{SHOWN}' does not exist in the database ({HONEST})" in printed  # args
    assert f"Copying {SHOWN}/notes.txt" in printed  # the message itself
    assert f"ValueError: nbgrader cell does not have a grade_id: {SHOWN}" in printed  # the traceback
    assert f"Non-unique cell id {SHOWN} detected" in printed  # a warning
    assert "Stack (most recent call last)" in printed and "Traceback (most recent call last)" in printed


def test_install_is_idempotent_and_keeps_another_factory_s_records(logging_as_it_was):
    class Tagged(logging.LogRecord):
        tag = "theirs"

    logging.setLogRecordFactory(Tagged)
    safe_logging.install()
    factory = logging.getLogRecordFactory()
    safe_logging.install()  # the course's config loaded a second time
    assert logging.getLogRecordFactory() is factory
    record = logging.getLogger("x").makeRecord("x", logging.INFO, "f", 1, "%s", (EVIL,), None)
    assert isinstance(record, Tagged) and record.tag == "theirs" and record.getMessage() == SHOWN


def test_handlers_traitlets_builds_again_after_a_log_setting_changes_are_covered(logging_as_it_was, capsys):
    from traitlets.config import Application

    safe_logging.install()
    application = Application()
    application.log.info("before")  # its console handler, built by traitlets
    application.log_level = logging.INFO  # traitlets replaces its handlers (dictConfig): a filter on them would go
    application.log.warning("Creating/updating student with ID '%s'", EVIL)
    assert f"Creating/updating student with ID '{SHOWN}'" in capsys.readouterr().err


def test_the_progress_bar_shows_a_student_id_not_its_escapes():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    progress = Progress(stream)
    progress.start(2)
    progress.advance(f"eve{EVIL}")
    progress.advance(HONEST)
    drawn = stream.getvalue().replace("\r\x1b[K", "")  # the bar's own redraw, and nothing else
    assert raw_controls(drawn) == [] and "eve\\x1b]0;PWNED" in drawn and HONEST in drawn


# --- nbgrader autograde and attnkit, as processes ---------------------------------------------------------------------


def _hostile_student(folder, release):
    """A submission whose folder name, file names and a grade id carry EVIL."""
    (folder / "attention").mkdir(parents=True)
    notebook = json.loads((release / f"{NB01}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        nbgrader = cell["metadata"].get("nbgrader", {})
        if nbgrader.get("grade_id", "").startswith("solution_"):
            nbgrader["grade_id"] += EVIL
            break
    (folder / "attention" / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "attention" / f"notes{EVIL}.txt").write_text("hi", encoding="utf-8")
    (folder / "attention" / f"02{EVIL}.ipynb").write_text("{}", encoding="utf-8")
    (folder / "attention" / f"{NOTEBOOKS[1]}.ipynb").write_text("{", encoding="utf-8")  # similarity names it


def _honest_student(folder):
    (folder / "attention").mkdir(parents=True)
    empty = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # nbgrader skips a student without
    (folder / "attention" / f"{NB01}.ipynb").write_text(json.dumps(empty), encoding="utf-8")
    (folder / "attention" / f"笔记 {HONEST}.txt").write_text("我的笔记", encoding="utf-8")


def _run(command, cwd):
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    process = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, check=False)
    return process.returncode, (process.stdout + process.stderr).decode("utf-8")  # strict: every byte is UTF-8


@pytest.mark.slow
def test_nbgrader_autograde_prints_no_escape_of_the_students(tmp_path, repo_root):
    course = nbgrader_course.make_course(tmp_path / "course", repo_root)
    nbgrader_course.generate_release(course)
    # the gradebook refuses this id (nbgrader_student_guard): the lines that say so show it; "eve" is graded, and the
    # lines about her file names and grade id show them
    _hostile_student(course / "submitted" / f"eve{EVIL}", course / "release" / "attention")
    _hostile_student(course / "submitted" / "eve", course / "release" / "attention")
    _honest_student(course / "submitted" / HONEST_ID)
    logfile = tmp_path / "nbgrader.log"  # nbgrader's own file handler, added beside its console
    # --log-level=INFO: nbgrader's lines for every student and file, which name them, are details a quiet run leaves out
    _, printed = _run([sys.executable, "-m", "nbgrader", "autograde", "attention", f"--NbGrader.logfile={logfile}",
                       "--log-level=INFO"], course)
    assert raw_controls(printed) == []
    logged = logfile.read_text(encoding="utf-8")
    assert raw_controls(logged) == [] and f"Creating/updating student with ID 'eve{SHOWN}'" in logged
    # the student's text reached nbgrader's own lines, shown: the student id, a file name, the grade id
    assert f"Creating/updating student with ID 'eve{SHOWN}'" in printed
    assert "student refused by the gradebook: id 'eve\\\\x1b]0;PWNED-TITLE" in printed
    assert f"/attention/notes{SHOWN}.txt -> " in printed
    assert f"{SHOWN}' does not exist in the database" in printed
    assert f"Creating/updating student with ID '{HONEST_ID}'" in printed and f"笔记 {HONEST}.txt" in printed


@pytest.mark.slow
def test_attnkit_grade_and_similarity_print_no_escape_of_the_students(tmp_path, repo_root):
    submitted = tmp_path / "submitted"
    _hostile_student(submitted / f"eve{EVIL}", repo_root / "release" / "attention")
    # no code to run (no child, a faster test): one markdown cell whose grade id is the attack
    markdown = {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": EVIL, "solution": True}},
                "source": EVIL}
    (submitted / f"eve{EVIL}" / "attention" / f"{NB01}.ipynb").write_text(json.dumps(
        {"cells": [markdown], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    _honest_student(submitted / HONEST)
    (submitted / f"forger\n{FORGED}").mkdir()  # a folder name that tries to print a line of attnkit's
    attnkit = [sys.executable, "-m", "autograder.cli", "-v"]
    status, graded = _run([*attnkit, "grade", str(submitted), "--out", str(tmp_path / "grades"), "--workers", "1",
                           "--timeout", "20"], tmp_path)
    assert status == 0 and raw_controls(graded) == []
    assert f"attnkit grade: eve{SHOWN}: graded, " in graded and f"attnkit grade: {HONEST}: graded, " in graded
    assert f"attnkit grade: forger\n  {FORGED}: graded, " in graded  # the forged line indented, not attnkit's
    assert not any(line.startswith(FORGED) for line in graded.splitlines())
    status, compared = _run([*attnkit, "similarity", str(submitted), "--out", str(tmp_path / "similarity"),
                             "--grades", str(tmp_path / "grades")], tmp_path)
    assert status == 0 and raw_controls(compared) == []
    assert not any(line.startswith(FORGED) for line in compared.splitlines())
    assert f"could not be read and were left out: eve{SHOWN} {NOTEBOOKS[1]}: " in compared
    assert "3 students have no readable solution cell (nothing submitted?): " in compared and HONEST in compared
