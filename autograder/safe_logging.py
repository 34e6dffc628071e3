"""Log lines that are safe on a terminal, whatever text of a student's they carry: `install()`.

nbgrader logs the student ids, file names and cell grade ids it handles, and attnkit logs file names: all of them
the student's. A grade id holding OSC 52 writes the instructor's clipboard, OSC 0 retitles the window, CSI erases
the line that said what happened. `install()` sets a LogRecord factory that makes every record of the process safe
when it is formatted: its message (the format with its arguments filled in), its exception text (the formatted
traceback) and its stack text pass through autograder.safe_text, so control and escape characters, C1 controls, bidi
overrides and line separators are shown as escapes (`\\x1b`), not sent, while Chinese, accents and emoji stay as
they are. Line breaks and tabs are kept: tracebacks and nbgrader's own tables need them.

A factory, not a filter: nbgrader's applications (traitlets) build their handlers themselves and build them again
whenever a log setting changes, so a filter on a handler is lost; every record, of any logger and to any handler
(a console, nbgrader's --logfile, formgrader's server log), is made by the factory. It is process-wide by nature,
so `install()` is idempotent: the course's nbgrader_config.py may be loaded more than once.
"""

import logging
import warnings
from typing import Any

from autograder.safe_text import clean

__all__ = ["install"]

# Nothing nbgrader or attnkit logs is cut: only what acts on a terminal is changed.
NO_LIMIT = 2**62
_MARK = "attnkit_terminal_safe"  # on the factory install() sets: how a second install() knows it is there


def _terminal_safe(text: object) -> str:
    """`text` with every character that acts on a terminal shown as an escape; nothing cut."""
    return clean(text, NO_LIMIT)


class TerminalSafeRecord(logging.LogRecord):
    """A LogRecord whose message, exception text and stack text come out terminal-safe (see the module)."""

    def getMessage(self) -> str:  # noqa: N802 - logging's name
        return _terminal_safe(super().getMessage())

    # Formatters store the formatted traceback in exc_text and print it as it is: it is made safe as it is read.
    @property
    def exc_text(self) -> str | None:
        text = self.__dict__.get("exc_text")
        return None if text is None else _terminal_safe(text)

    @exc_text.setter
    def exc_text(self, value: str | None) -> None:
        self.__dict__["exc_text"] = value

    @property
    def stack_info(self) -> str | None:
        text = self.__dict__.get("stack_info")
        return None if text is None else _terminal_safe(text)

    @stack_info.setter
    def stack_info(self, value: str | None) -> None:
        self.__dict__["stack_info"] = value


def install() -> None:
    """Every log record this process makes from now on is terminal-safe (see the module), and so are the Python
    warnings it prints (nbformat's quote a notebook's cell ids). Idempotent."""
    _install_warning_format()
    previous = logging.getLogRecordFactory()
    if getattr(previous, _MARK, False):
        return
    safe_classes: dict[type[logging.LogRecord], type[logging.LogRecord]] = {}

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        # A record another factory made keeps its class's behaviour, with the safe reading on top.
        kind = type(record)
        if kind not in safe_classes:
            safe_classes[kind] = _safe_class(kind)
        record.__class__ = safe_classes[kind]
        return record

    setattr(factory, _MARK, True)
    logging.setLogRecordFactory(factory)


def _install_warning_format() -> None:
    """warnings.formatwarning made terminal-safe: a warning is printed as before, with the same words."""
    previous = warnings.formatwarning
    if getattr(previous, _MARK, False):
        return

    def formatwarning(*args: Any, **kwargs: Any) -> str:
        return _terminal_safe(previous(*args, **kwargs))

    setattr(formatwarning, _MARK, True)
    warnings.formatwarning = formatwarning


def _safe_class(kind: type[logging.LogRecord]) -> type[logging.LogRecord]:
    if issubclass(kind, TerminalSafeRecord):
        return kind
    if kind is logging.LogRecord:
        return TerminalSafeRecord
    return type(f"TerminalSafe{kind.__name__}", (TerminalSafeRecord, kind), {})
