"""How long a grading step has run, in the child's own CPU time and in wall time: `StepClock`.

A step (a cell, an exercise's probes) is limited by the CPU time its child used (`cpu_seconds`), not by the wall
clock alone: on a shared machine another child's threads may slow this one down, and that time is not this
student's. A wall-clock limit (`wall_seconds`, larger) still stops code that waits without computing (sleep, a
blocked read). The child measures itself with CLOCK_PROCESS_CPUTIME_ID (every thread of the process); the grader
reads the kernel's count of the child's cgroup (autograder.isolation.cgroups.cpu_seconds) or /proc.
"""

import os
import time
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Reached", "StepClock", "StepLimit", "process_cpu_seconds"]


class Reached(StrEnum):
    """Which of a step's limits was reached."""

    CPU = "cpu"
    WALL = "wall"


@dataclass(frozen=True)
class StepLimit:
    cpu_seconds: float
    wall_seconds: float

    def describe(self, reached: Reached) -> str:
        """The limit, in the student's terms (the notes and the cell's output quote it)."""
        if reached == Reached.CPU:
            return f"ran past the {self.cpu_seconds:g} s limit of CPU time"
        return f"ran past the {self.wall_seconds:g} s wall-clock limit"


@dataclass(frozen=True)
class StepClock:
    """One step's start, on both clocks."""

    limit: StepLimit
    wall_start: float
    cpu_start: float

    @classmethod
    def start(cls, limit: StepLimit) -> "StepClock":
        return cls(limit, time.monotonic(), time.process_time())

    def reached(self) -> Reached | None:
        if time.process_time() - self.cpu_start > self.limit.cpu_seconds:
            return Reached.CPU
        if time.monotonic() - self.wall_start > self.limit.wall_seconds:
            return Reached.WALL
        return None

    def next_look(self) -> float:
        """Seconds until either limit could first be reached: CPU time grows at most one second per CPU per second."""
        cpu_left = self.limit.cpu_seconds - (time.process_time() - self.cpu_start)
        wall_left = self.limit.wall_seconds - (time.monotonic() - self.wall_start)
        return max(0.001, min(wall_left, cpu_left / _usable_cpus()))


def _usable_cpus() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def process_cpu_seconds(pid: int) -> float:
    """Another process's CPU time (user + system, every thread, living and gone) from /proc/<pid>/stat; 0.0 where it
    cannot be read (gone already). The fallback where the child has no cgroup that counts it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # the name, in parentheses, may hold anything
    except (OSError, IndexError):
        return 0.0
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15
    except (IndexError, ValueError):
        return 0.0
