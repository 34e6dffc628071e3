"""Where one notebook's grading time goes, stage by stage: `python -m devtools.bench` prints it.

The grading child's stages are timed by the grader from the events the child sends (it is never asked to report
its own times); the grader's own stages are timed around the calls that do them.
"""

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields

__all__ = ["StageTimes"]


@dataclass
class StageTimes:
    """Seconds of one notebook's grading, per stage (wall clock), and the CPU seconds of its grading children."""

    start: float = 0.0  # fork from the zygote, sandbox and workspace set-up, up to the child's first event
    cells: float = 0.0  # the notebook's own code cells
    probes: float = 0.0  # the checks' probes calling the student's code
    finish: float = 0.0  # from the child's last event to its exit reaped and its folder removed
    expectations: float = 0.0  # the reference's numbers, computed in the grader
    judging: float = 0.0  # judges, diagnosis and messages (expectations excluded)
    fingerprints: float = 0.0  # wrong outputs of failed hidden checks, for `attnkit similarity`
    writing: float = 0.0  # the student's record and feedback page (a share, per notebook)
    child_cpu: float = 0.0  # user + system CPU of the grading children, all stages together

    @classmethod
    def stages(cls) -> tuple[str, ...]:
        """The wall-clock stages, in the order grading goes through them."""
        return tuple(field.name for field in fields(cls) if field.name != "child_cpu")

    def add(self, stage: str, seconds: float) -> None:
        setattr(self, stage, getattr(self, stage) + seconds)

    @contextlib.contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - started)

    @property
    def total(self) -> float:
        return sum(getattr(self, stage) for stage in self.stages())
