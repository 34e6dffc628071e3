"""What the grader tells a grading child: plain data only, picklable into a process that never imported the checks.

The grader builds a `ChildTask` from the notebook's plan and the catalogue (which probe each check runs, on which
cases: autograder.running.runner.planned_probes); autograder.isolation.zygote forks the child that runs it. Nothing
here, nor anything it imports, knows the reference, a judge or an expected value.
"""

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder.course.shared.plan import ExerciseProbes
from autograder.isolation.sandbox import Confinement

__all__ = ["ChildTask", "REPLY_HEADER", "Step", "TraceRequest"]

# The grader's answer to a child's "probed", on the child's task pipe: this header (the JSON's length), then a JSON
# list of [exercise id, check id, case index], the TraceRequests.
REPLY_HEADER = struct.Struct(">Q")


@dataclass(frozen=True)
class Step:
    kind: str  # "cell" or "exercise"
    index: int  # cell index in the notebook; for an exercise, the graded cell's index (-1: deleted)
    source: str = ""  # cell source
    exercise: str = ""


@dataclass(frozen=True)
class ChildTask:
    """One attempt at one notebook: what to run, what to probe, what to skip (steps that crashed an earlier one)."""

    steps: tuple[Step, ...]
    probes: Mapping[str, ExerciseProbes]  # exercise id -> its checks' probes and cases
    timeout: float  # CPU seconds per cell and per exercise's probes (autograder.isolation.step_clock)
    workdir: Path
    confinement: Confinement
    skip_cells: frozenset[int] = frozenset()
    skip_exercises: frozenset[str] = frozenset()
    folder: Path | None = None  # the student's own folder, copied into the workdir (None: nothing to copy)
    disk_mb: int = 64  # the files a notebook may write while grading (autograder.isolation.workspace)
    private_tmpfs: bool = True  # try a tmpfs of disk_mb in the child's own mount namespace
    private_pids: bool = True  # fork it in a PID namespace of its own, with its own /proc (the zygote reads it)
    wall_timeout: float = 0.0  # wall-clock seconds per step (0: the same as timeout)
    nice: int = 0  # added to its scheduling niceness (where it has no CPU share in a cgroup)
    notebook_name: str = ""  # the graded notebook's file name: a %run of it (its copy) runs it inside itself
    # How long the child waits for the grader's answer to "probed": the notebook's own total time (Limits.budget),
    # not a fixed time that a loaded grader's judging could outlast (issue 58: a departure lost under load).
    reply_seconds: float = 120.0


@dataclass(frozen=True)
class TraceRequest:
    """A failing case the grader asks the child to run once more under the tensor trace (one per exercise at most)."""

    exercise: str
    check_id: str
    case: int
