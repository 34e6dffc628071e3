"""A quiet `nbgrader autograde` log: one line per student and the progress lines, the details on request: `install()`.

nbgrader logs some ten INFO lines per notebook it autogrades ("Sanitizing ...", "Converting notebook ...", "Writing
29882 bytes to ...", "Autograding ...") and a few per student ("Creating/updating student with ID ...", "Overwriting
files with master versions ...", "Setting destination file permissions ..."), and attnkit's SandboxedExecute one per
notebook with its score: 329 lines for 8 students, about 12,000 for 300, in which a warning about a student is lost.
`install()` sets a LogRecord factory that makes those routine lines of an autograde run DEBUG records, so that
nbgrader's handlers (its console and its --logfile, both at the run's log level) leave them out by default; what is
left is attnkit's line per student ("attnkit: s001: 4 notebooks graded in the sandbox, 72/100"), its progress lines
("attnkit: graded 12 of 32 notebooks (14 s)") and every warning and error, untouched.

Only INFO records are ever changed, and only those whose format is one of ROUTINE, made by the module that logs it,
on an autograde run's logger (`AutogradeApp`): a warning or an error, about a student or anything else, is never
hidden. Where the run was given a log level (`--log-level=INFO`, `--debug`, or any `log_level` setting in its
config), nothing is changed: `nbgrader autograde attention --log-level=INFO` shows every line as nbgrader logs it.

A factory, as autograder.safe_logging's and for the same reason: traitlets builds its handlers again whenever a log
setting changes, so a filter on them would be lost. Idempotent: the course's nbgrader_config.py may be loaded twice.
"""

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["AUTOGRADE_LOGGER", "ROUTINE", "install"]

AUTOGRADE_LOGGER = "AutogradeApp"  # traitlets names an application's logger after its class
# (the module that logs it, its format): the lines said for every notebook or student of an autograde run.
ROUTINE = frozenset({
    ("autograde", "Creating/updating student with ID '%s': %s"),
    ("autograde", "%s submitted at %s"),
    ("autograde", "Overwriting files with master versions from the source directory"),
    ("autograde", "Copying %s -> %s"),
    ("autograde", "Sanitizing %s"),
    ("autograde", "Autograding %s"),
    ("base", "Converting notebook %s"),
    ("base", "Copying %s -> %s"),
    ("base", "Setting destination file permissions to %s"),
    ("files", "Making directory %s"),
    ("files", "Writing %i bytes to %s"),
    ("nbgrader_sandbox", "attnkit: %s/%s %s in the sandbox: %g/%g"),
})
_MARK = "attnkit_quiet_autograde"  # on the factory install() sets: how a second install() knows it is there


def install() -> None:
    """The routine INFO lines of an autograde run become DEBUG records unless the run was given a log level (see
    the module). Idempotent."""
    previous: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()
    if getattr(previous, _MARK, False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _is_routine(record) and not _level_was_given():
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return record

    setattr(factory, _MARK, True)
    logging.setLogRecordFactory(factory)


def _is_routine(record: logging.LogRecord) -> bool:
    """An INFO line of an autograde run said for every notebook or student (ROUTINE)."""
    return (record.levelno == logging.INFO and record.name == AUTOGRADE_LOGGER
            and isinstance(record.msg, str) and (record.module, record.msg) in ROUTINE)


def _level_was_given() -> bool:
    """Whether the running nbgrader application was given a log level, on its command line or in a config file."""
    from traitlets.config import Application

    if not Application.initialized():
        return False
    config = Application.instance().config
    return any(isinstance(section, dict) and "log_level" in section for section in config.values())
