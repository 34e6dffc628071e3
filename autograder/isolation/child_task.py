"""What the grader tells a grading child: plain data only, picklable into a process that never imported the checks.

The grader builds a `ChildTask` from the notebook's plan and the catalogue (which probe each check runs, on which
cases: autograder.running.runner.planned_probes); autograder.isolation.zygote forks the child that runs it. Nothing
here, nor anything it imports, knows the reference, a judge or an expected value.
"""

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.shared.plan import ExerciseProbes
from autograder.isolation.sandbox import Confinement

__all__ = ["ChildTask", "ProbedAnswer", "REPLY_HEADER", "Step", "TraceRequest"]

# The grader's answer to a child's "probed", on the child's task pipe: this header (the JSON's length), then a JSON
# object, the ProbedAnswer: {"slopes": [[exercise id, [check id, ...]], ...], "trace": [[exercise id, check id, case
# index], ...]}.
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


@dataclass(frozen=True)
class ProbedAnswer:
    """The grader's answer to a child's "probed": the checks of each exercise that failed, to probe once more with the
    own slopes of their gradients read (autograder.checking.probing.own_slopes_later: the first probes read none),
    and the failing cases to trace. Nothing for a notebook that passes."""

    slopes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # exercise id -> its failed checks' ids
    traces: tuple[TraceRequest, ...] = ()

    def encoded(self) -> bytes:
        """The answer as the child reads it (REPLY_HEADER, then the JSON)."""
        answer = json.dumps({"slopes": [[exercise, list(checks)] for exercise, checks in self.slopes.items()],
                             "trace": [[request.exercise, request.check_id, request.case]
                                       for request in self.traces]}).encode("utf-8")
        return REPLY_HEADER.pack(len(answer)) + answer

    @classmethod
    def decoded(cls, data: bytes) -> "ProbedAnswer":
        """The answer from its JSON (the part after REPLY_HEADER); ValueError, TypeError or KeyError where it is
        not one (the student's code may have written on the pipe)."""
        answer = json.loads(data)
        slopes = {str(exercise): tuple(str(check) for check in checks) for exercise, checks in answer["slopes"]}
        traces = tuple(TraceRequest(str(exercise), str(check), int(case)) for exercise, check, case in answer["trace"])
        return cls(slopes, traces)
