"""How long, how much memory and disk, and how many at once: the limits of the grading children.

Light on purpose (no torch, no checks): the command line reads the defaults for its --help.
"""

import os
from dataclasses import dataclass, field

__all__ = ["CPU_LIMIT_MARGIN", "MAX_FILE_BYTES", "Limits", "default_workers"]

# A submitted file, outputs included: read at most this much (a guard for the grader's own memory, far above what
# plots add to an honest notebook). Here, not beside the notebook reader, so that nbgrader's collect step, which
# checks it, imports no course and no torch.
MAX_FILE_BYTES = 512 * 2**20

# Added to a notebook's budget to make the kernel's CPU limit on one attempt (RLIMIT_CPU): the supervisor's own
# budget kill, with its clear note, comes first for a child that computes on one thread; the kernel's stops the rest.
CPU_LIMIT_MARGIN = 5.0  # seconds


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0  # CPU seconds per cell and per exercise's probes (soft: interrupts the student's code)
    # A step's wall-clock limit, in timeouts: for code that waits without computing (sleep, a blocked read). It is
    # never the limit that stops a step slowed by another child: the CPU one counts only the child's own time.
    wall_factor: float = 2.0
    memory_mb: int = 2048  # address space a child may add to the warm grader's
    workers: int = field(default_factory=default_workers)
    grace: float = 2.0  # past the soft timeout, the child is killed
    budget_factor: float = 4.0  # a notebook's total wall time, in timeouts, over all its attempts (see budget)
    max_attempts: int = 4
    disk_mb: int = 64  # files a notebook may write while grading (a tmpfs of this size, or the parent's watch)
    private_tmpfs: bool = True  # False: never try the tmpfs, always watch the workdir on disk (as when refused)
    private_pids: bool = True  # False: no PID namespace, the child sees every process in /proc (as when refused)
    memory_cgroup: bool = True  # False: never try a cgroup per child (seccomp then refuses memfd, SysV shm...)
    # False: fork each child when its notebook starts, waiting for its forks and cgroup move (as the first child does)
    fork_ahead: bool = True

    @property
    def wall_timeout(self) -> float:
        """A step's wall-clock limit (its CPU limit is `timeout`)."""
        return self.wall_factor * self.timeout

    @property
    def budget(self) -> float:
        """A notebook's total wall-clock time, over all its attempts."""
        return self.budget_factor * self.timeout

    @property
    def attempt_cpu_seconds(self) -> float:
        """The CPU time one attempt at a notebook may take, all its threads together (the kernel's limit)."""
        return self.budget + CPU_LIMIT_MARGIN
