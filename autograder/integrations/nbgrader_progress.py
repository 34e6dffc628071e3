"""Progress lines of an `nbgrader autograde` run: "graded 37 of 120 notebooks (12 s)", and a line per student.

nbgrader logs each notebook it sanitizes and autogrades, never how far the run is. `SandboxedExecute` counts the
notebooks it has graded against the run's count (nbgrader_lookahead.about_to_autograde: the notebooks this run is
about to autograde, known at its first one) and logs a line at a rate that suits the class: after every notebook
for a small class, else every twentieth of the run or when `interval_s` has passed since the last line, whichever
comes first, and always after the last notebook. After a student's last notebook it logs their line, "s001: 4
notebooks graded in the sandbox, 72/100" (`StudentTally`): with the progress lines, all an autograde run says by
default (autograder.integrations.nbgrader_quiet_log).
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Progress", "StudentTally"]

# Up to this many notebooks (10 students of the four-notebook assignment) a line follows each notebook.
SMALL_RUN = 40
STEPS = 20  # a larger run: a line every 1/STEPS of it...
INTERVAL_S = 30.0  # ...or after this many seconds without one


@dataclass
class Progress:
    """How far one autograde run is; `notebook_done()` after each notebook says what to log, if anything."""

    total: int
    interval_s: float = INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    started: float = field(init=False)
    last_line: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.last_line = self.clock()

    @property
    def every(self) -> int:
        """A line after every this many notebooks (at the latest)."""
        return 1 if self.total <= SMALL_RUN else -(-self.total // STEPS)

    def notebook_done(self) -> str | None:
        """Count one notebook graded; the line to log now, or None."""
        self.done += 1
        self.total = max(self.total, self.done)  # a notebook nbgrader grades that the count missed: never "5 of 4"
        now = self.clock()
        if self.done < self.total and self.done % self.every and now - self.last_line < self.interval_s:
            return None
        self.last_line = now
        noun = "notebook" if self.total == 1 else "notebooks"
        return f"graded {self.done} of {self.total} {noun} ({now - self.started:.0f} s)"


@dataclass
class StudentTally:
    """One student's notebooks graded so far in an autograde call; `line()` is what is said after their last one."""

    student: str
    notebooks: int = 0
    score: float = 0.0
    max_score: float = 0.0

    def add(self, score: float, max_score: float) -> None:
        self.notebooks += 1
        self.score += score
        self.max_score += max_score

    def line(self) -> str:
        noun = "notebook" if self.notebooks == 1 else "notebooks"
        return f"{self.student}: {self.notebooks} {noun} graded in the sandbox, {self.score:g}/{self.max_score:g}"
