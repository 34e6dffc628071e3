"""Where grading time goes, stage by stage: `python -m devtools.bench` prints it.

A notebook's stages (StageTimes): the grading child's are timed by the grader from the events the child sends (it is
never asked to report its own times for anything but the bench: they decide no limit); the grader's own stages are
timed around the calls that do them. A class run's own phases (ClassTimes) are timed by `grade_class`.
"""

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, fields

__all__ = ["ClassTimes", "StageTimes"]


class _Stages:
    """Seconds per stage in float fields; `child_cpu` (CPU, not wall clock) is no stage."""

    @classmethod
    def stages(cls) -> tuple[str, ...]:
        """The wall-clock stages, in the order grading goes through them."""
        return tuple(field.name for field in fields(cls) if field.name != "child_cpu")  # type: ignore[arg-type]

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


@dataclass
class StageTimes(_Stages):
    """Seconds of one notebook's grading, per stage (wall clock), and the CPU seconds of its grading children."""

    intake: float = 0.0  # finding and hashing the student's file (a share of the student's), reading and planning it
    cgroup: float = 0.0  # the child's cgroups made (grader) and joined (child) while the notebook waits for them
    fork: float = 0.0  # the zygote's forks, the task's hand-over and the child's start, up to its first event
    workspace: float = 0.0  # the child's capped workdir with the student's files, and its removal afterwards
    sandbox: float = 0.0  # in the child: its own /proc, the seal, Landlock and seccomp, the shell's fresh namespace
    cells: float = 0.0  # the notebook's own code cells
    probes: float = 0.0  # the checks' probes calling the student's code
    exit: float = 0.0  # from the child's last event to its exit reaped
    judges: float = 0.0  # the reference's expectations, judges, diagnosis, messages, wrong-output fingerprints
    pages: float = 0.0  # the student's feedback page (a share of the student's)
    records: float = 0.0  # the student's document, JSON record and Gradescope results (a share of the student's)
    child_cpu: float = 0.0  # user + system CPU of the grading children, all stages together

    def __iadd__(self, other: "StageTimes") -> "StageTimes":
        for stage in (*self.stages(), "child_cpu"):
            self.add(stage, getattr(other, stage))
        return self


@dataclass
class ClassTimes(_Stages):
    """Seconds of one `grade_class` run, per phase, one after the other (they add up to the run's wall clock)."""

    intake: float = 0.0  # the students' folders opened, their files found and hashed, earlier records read
    notebooks: float = 0.0  # planning, sandbox and cgroups prepared, children run, judged and records written
    class_outputs: float = 0.0  # grades.csv, the class report and the manifest
