"""Progress of `attnkit grade` on stderr: a bar redrawn in place on a terminal, nothing otherwise.

The caller prints the final summary line itself, terminal or not.
"""

import sys
import time
from typing import TextIO

from autograder.safe_text import one_line

__all__ = ["Progress"]

BAR_WIDTH = 30


class Progress:
    def __init__(self, stream: TextIO | None = None, label: str = "students") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total = 0
        self.done = 0
        self.started = time.monotonic()

    def start(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()
        self._draw("")

    def advance(self, item: str) -> None:
        self.done += 1
        self._draw(item)

    def finish(self) -> None:
        if self.interactive and self.total:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _draw(self, item: str) -> None:
        if not self.interactive or not self.total:
            return
        elapsed = time.monotonic() - self.started
        filled = BAR_WIDTH * self.done // self.total
        remaining = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        eta = f" eta {remaining:.0f}s" if self.done and self.done < self.total else ""
        # the item is a student's folder name: shown, never sent to the terminal as it is
        self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total} "
                          f"{self.label} {elapsed:.0f}s{eta} {one_line(item, 80)}"[:200])
        self.stream.flush()
