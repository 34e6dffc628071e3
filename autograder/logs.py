"""attnkit's messages on stderr, through `logging`: `configure(verbosity)`, called once per command by autograder.cli.

Every module logs to its own `logging.getLogger(__name__)`, under the "autograder" logger. The command's lines that
the README documents (`attnkit grade: N students ...`, `attnkit: internal error while grading ...`,
`attnkit: isolation: ...`) are INFO, WARNING or ERROR records printed as their bare message, so stderr reads as it
always has; progress and diagnostics are DEBUG, shown with `attnkit -v`. Used as a library without `configure`,
WARNING and above still reach stderr as bare messages (logging's last resort handler), INFO and below do not.
`configure` also makes every log line of the process terminal-safe (autograder.safe_logging): a student id, file
name or cell id in a line shows its escape and control characters, never sends them.
"""

import logging
import sys
from typing import TextIO

from autograder import safe_logging

__all__ = ["LOGGER", "StderrHandler", "configure"]

LOGGER = "autograder"
FORMAT = "%(message)s"  # the documented lines, exactly


class StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a record comes: a redirected or captured stderr gets the lines too."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)  # not StreamHandler's: it would keep the stream of this moment

    @property
    def stream(self) -> TextIO:  # type: ignore[override]  # a property where StreamHandler has an attribute
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass  # always sys.stderr


class ContinuedLinesIndented(logging.Formatter):
    """A message's second and later lines indented, as nbgrader's (tornado's) formatter does: a line a student id or
    file name carries after a newline never reads as a line of attnkit's own."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).replace("\n", "\n  ")


def configure(verbosity: int = 0) -> None:
    """attnkit's lines on stderr: INFO and above, DEBUG too with a verbosity of 1 or more. Idempotent: a second
    call (the tests run many commands in one process) replaces the handler of the first."""
    safe_logging.install()
    logger = logging.getLogger(LOGGER)
    for handler in [handler for handler in logger.handlers if isinstance(handler, StderrHandler)]:
        logger.removeHandler(handler)
    handler = StderrHandler()
    handler.setFormatter(ContinuedLinesIndented(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity > 0 else logging.INFO)
