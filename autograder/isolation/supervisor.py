"""Run the student half of grading in forked, confined children: `probe_notebooks(jobs, limits, on_done)`.

The grader process holds the checks and the reference; it never forks a child from itself. One child per
notebook (autograder.isolation.child_process) is forked by the zygote (autograder.isolation.zygote), a warm
process that never imported them, and adopted by the grader; at most `limits.workers` run at a time, and the
grader multiplexes their channels in one select loop. While notebooks are waiting, the next child is asked for as
soon as one is started (`limits.fork_ahead`), and the first one before the class's own set-up (the protected
paths and lines, the cases): it joins its cgroups and waits for its task while the grader and the others work.
It enforces the hard limits the child cannot enforce on itself: a step (cell or exercise) that runs `grace` seconds
past its soft timeout, in the child's own CPU time (the kernel's count of its cgroup, else /proc:
autograder.isolation.step_clock) or in wall time (a larger limit, for code that waits), a notebook past its total
budget, a child that sends malformed data, a child without a capped tmpfs whose files pass `limits.disk_mb`
(autograder.isolation.workspace.disk_usage, every DISK_POLL seconds): SIGKILL to its process group.

A child that dies without saying "done" (segfault, os._exit, kill) loses only the step it was in:
the exercises it already reported are kept, the step is recorded (a crashed cell is skipped next
time, a crashed exercise gets an error result) and a fresh child re-runs the notebook without it,
up to `limits.max_attempts` children per notebook and within its total time.

The child never decides whose fault it is: only the grader's own failure here, on data it produced, is a
grader error. Whatever a child sends, fails to send or sends malformed (an event kind outside CHILD_EVENTS, a
second hello, a step it did not start, a "grader_error" student code wrote itself) is the student's code
stopping the grading process, named so in the notes, and the rest of the notebook is graded as for a crash.
Nothing a child says is logged as attnkit's own error.

Once a child has probed its exercises it says "probed", and the grader answers on the child's task pipe
(`answer_probed(outcome, exercises)`, the caller's: it judges them) with the checks that failed and the failing
cases to trace; nothing for a notebook that passes, so a passing notebook costs its child neither. The child's
probes read no own slope of a gradient; it probes the failed checks once more with them read and sends the slope
fields alone ("slopes"), hostile data like the rest: bools at the places the probes write them, in the cases the
child recorded (`_valid_own_slopes`), else refused with one log line; kept in `Outcome.own_slopes`, taken into the
records by the caller before it judges. A "trace" comes back as hostile data: read by
autograder.checking.tensor_trace.traced_of_record, refused with one log line when it is not what a child writes or
passes a cap. A child that crashes, runs out of time or sends malformed data after "probed" only goes without its
slopes (its wrong gradients go without their proven cause: the message says none is proven) and its departures:
its exercises are all recorded, and graded as they are.
"""

import dataclasses
import functools
import logging
import os
import selectors
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from autograder.checking.check_types import Untraced
from autograder.checking.probing import OWN_SLOPE_FIELDS
from autograder.checking.tensor_trace import TracedTensor, traced_of_record
from autograder.course import catalog
from autograder.course.shared.plan import ExerciseProbes
from autograder.isolation import cgroups as child_cgroups
from autograder.isolation import wire, workspace
from autograder.isolation.cgroups import ChildCgroups, LimitsReached
from autograder.isolation.child_task import ChildTask, ProbedAnswer, TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.isolation.protected import is_protected, protected_paths
from autograder.isolation.refusals import PLAIN_WORDS, because
from autograder.isolation.sandbox import Confinement
from autograder.isolation.step_clock import process_cpu_seconds
from autograder.isolation.withholding import Withholder, protected_lines
from autograder.isolation.zygote import ForkedAhead, WaitingChild, Zygote, ZygoteError, shared_zygote
from autograder.running.runner import planned_probes
from autograder.running.timing import StageTimes
from autograder.safe_text import clean, one_line

__all__ = [
    "AnswerProbed", "BUDGET", "CHILD_NICE", "CRASH", "DepartureTrace", "ExerciseRecords", "Job", "LostDeparture",
    "Outcome", "PROTOCOL", "TIMEOUT", "Untraced", "lose_departure", "own_folder", "probe_notebooks",
]

logger = logging.getLogger(__name__)

READ_CHUNK = 1 << 20
MAX_CELL_OUTPUT_CHARS = 2000  # what a cell printed, as the child keeps it (autograder.isolation.child_process)


class Ending(StrEnum):
    """How an attempt was ended: killed at a step's hard limit, at the notebook's total time, for malformed
    data, or the child died on its own (segfault, os._exit...)."""

    TIMEOUT = "timeout"
    BUDGET = "budget"
    PROTOCOL = "protocol"
    CRASH = "crash"
    DISK = "disk"  # killed for writing more than Limits.disk_mb (only where the child has no capped tmpfs)


TIMEOUT, BUDGET, PROTOCOL, CRASH, DISK = Ending.TIMEOUT, Ending.BUDGET, Ending.PROTOCOL, Ending.CRASH, Ending.DISK
DISK_POLL = 0.1  # seconds between two looks at an uncapped child's files
CPU_POLL = 0.2  # seconds between two looks at a running step's CPU time
CPU_LIMIT_SLACK = 0.5  # RLIMIT_CPU is checked on the scheduler's tick: the count may stop just short of it
CHILD_NICE = 5  # a child without a CPU share of its own runs below the grader (autograder.isolation.cgroups)
# The only events a child may send (autograder.isolation.child_process): anything else is a protocol error.
CHILD_EVENTS = frozenset({"hello", "start", "cell", "exercise", "probed", "slopes", "trace", "done"})


ProbeRecord = dict[str, Any]  # one case's probe data, or {"error": ...}
ExerciseRecords = dict[str, list[ProbeRecord]]  # check id -> [probe data per case]


@dataclass(frozen=True)
class Job:
    key: object  # the caller's handle, given back with the outcome
    plan: NotebookPlan
    seed: int
    folder: Path | None = None  # the folder whose files the child gets; None: the notebook's own (own_folder)


@dataclass(frozen=True)
class DepartureTrace:
    """A failing case's trace from the child: the check and case it was asked for, the tensors the student's code
    made there (validated: autograder.checking.tensor_trace.traced_of_record)."""

    check_id: str
    case: int
    tensors: tuple[TracedTensor, ...]


@dataclass
class Outcome:
    """What the children of one notebook reported: probe data per exercise, and what went wrong."""

    key: object
    plan: NotebookPlan
    records: dict[str, ExerciseRecords] = field(default_factory=dict)  # exercise id -> check id -> [data per case]
    notes: list[str] = field(default_factory=list)  # cell errors and crashes, in the student's terms
    cell_notes: dict[int, list[str]] = field(default_factory=dict)  # cell index -> the notes above about that cell
    cell_outputs: dict[int, str] = field(default_factory=dict)  # cell index -> what it printed (capped by the child)
    isolation_notes: set[str] = field(default_factory=set)  # protections the kernel lacked
    attempts: int = 0
    times: StageTimes = field(default_factory=StageTimes)  # the child's stages, timed from its events
    grader_failure: str = ""  # the grader's own failure, in its own words (never the child's): see _settle
    traces: dict[str, DepartureTrace] = field(default_factory=dict)  # exercise id -> its failing case's trace
    untraced: dict[str, "LostDeparture"] = field(default_factory=dict)  # exercise id -> the trace asked for, lost
    # The exercises a child's "probed" was answered for: the others were recorded by a child that stopped before it
    # said "probed" (a crash, a later step's timeout), and their departure was never asked for (Untraced.NOT_ASKED).
    answered: set[str] = field(default_factory=set)
    # exercise id -> check id -> [the own slopes of each case's gradients, the slope fields alone at their places]:
    # what the child read in its second look at the failed checks (validated: _valid_own_slopes). The caller takes
    # them into `records` before it judges (autograder.course.shared.plan.with_own_slopes_taken).
    own_slopes: dict[str, ExerciseRecords] = field(default_factory=dict)


# What a child may say of its own trace that stopped ("stopped"): anything else reads as its process stopping.
CHILD_STOPPED = {Untraced.TIME.value: Untraced.TIME, Untraced.ERROR.value: Untraced.ERROR,
                 Untraced.CAP.value: Untraced.CAP}


@dataclass(frozen=True)
class LostDeparture:
    """A failing case the grader asked a child to trace, whose departure was not computed, and why."""

    check_id: str
    case: int
    why: Untraced


# The caller's answer to a child's "probed": (the outcome so far, the exercises this child probed) -> the failed
# checks to read the own slopes of, and the cases to trace.
AnswerProbed = Callable[[Outcome, tuple[str, ...]], ProbedAnswer]


@dataclass
class _Attempt:
    job: "_JobState"
    pid: int
    fd: int
    workdir: str
    started: float
    reply_fd: int | None = None  # the write end of the child's task pipe, where "probed" is answered
    started_clock: float = 0.0  # time.monotonic() before its workdir, cgroup and fork: the fork stage starts there
    exit_fd: int | None = None  # a pidfd, readable once the child has exited (None: poll for the exit)
    reader: wire.FrameReader = field(default_factory=wire.FrameReader)
    step: tuple[str, Any] | None = None  # ("cell", index) or ("exercise", id) while it runs
    last_cell: int | None = None  # the latest cell this child finished: whatever runs between steps, it started
    deadline: float = 0.0
    done: bool = False
    channel_open: bool = True
    kill_kind: Ending | None = None  # None while it has not ended in one of these ways
    kill_reason: str = ""  # the same, in the student's terms
    disk_watched: bool = True  # until the child's first hello says its workdir is a capped tmpfs
    hello_seen: bool = False
    step_started: float = 0.0  # when the running step's "start" event came
    last_event: float = 0.0  # when the child's latest event came
    next_disk_check: float = 0.0
    cgroup_folders: tuple[Path, ...] = ()  # the child's cgroups (autograder.isolation.cgroups), removed once reaped
    cpu_counter: child_cgroups.CpuCounter | None = None  # reads their CPU count (made on the first read)
    cgroup_seconds: float = 0.0  # the grader's making of them, inside the fork stage (the bench's breakdown)
    cpu_deadline: float = float("inf")  # the running step's hard limit, in the child's own CPU seconds
    cpu_limit: float = 0.0  # the child's RLIMIT_CPU (autograder.isolation.sandbox); 0: not known
    cpu_used: float = 0.0  # once reaped: the CPU time the kernel counted for it (rusage)
    limits_reached: LimitsReached = field(default_factory=LimitsReached)  # read from its cgroups once it exited
    probed: list[str] = field(default_factory=list)  # the exercises this child sent (its traces may be asked for)
    answered: bool = False  # its "probed" was answered: only slopes, traces and done may follow
    asked: dict[str, TraceRequest] = field(default_factory=dict)  # exercise id -> the case it was asked to trace
    slopes_asked: dict[str, tuple[str, ...]] = field(default_factory=dict)  # exercise id -> its failed checks
    grader_seconds: float = 0.0  # the grader's time spent answering it, excused to every notebook (see _excuse)

    def cpu_seconds(self) -> float:
        """The child's CPU time so far: its cgroup's count (every thread it ever ran), else /proc's."""
        if self.cpu_counter is None or self.cpu_counter.folders is not self.cgroup_folders:
            self.cpu_counter = child_cgroups.CpuCounter(self.cgroup_folders)
        counted = self.cpu_counter.seconds()
        return counted if counted is not None else process_cpu_seconds(self.pid)


@dataclass
class _Forked:
    """A child asked of the zygote before its notebook is chosen: its cgroups made, its channel open; the zygote's
    answer is read when the child is needed (`ForkedAhead.take`)."""

    request: ForkedAhead
    fd: int  # the read end of its channel
    cgroup_folders: tuple[Path, ...]
    confinement: Confinement  # the run's, or without memory accounting where its cgroups could not be made
    cgroup_seconds: float  # the grader's making of its cgroups
    fork_seconds: float  # the grader's asking for it

    def discard(self) -> None:
        """The child is not needed: ended and reaped, its channel closed (its cgroups are the caller's)."""
        try:
            self.request.take().discard()
        except ZygoteError:
            pass
        os.close(self.fd)


@dataclass
class _JobState:
    job: Job
    outcome: Outcome
    budget_end: float
    skip_cells: set[int] = field(default_factory=set)
    crashed: set[str] = field(default_factory=set)
    probes: dict[str, ExerciseProbes] = field(default_factory=dict)  # told to every attempt's child
    withholder: Withholder | None = None  # what the child says is filtered through it (see isolation.withholding)
    answer_probed: AnswerProbed | None = None  # None: "probed" is answered with nothing to read again or trace


def probe_notebooks(jobs: Iterable[Job], limits: Limits, confinement: Confinement,
                    on_done: Callable[[Outcome], None], answer_probed: AnswerProbed | None = None) -> None:
    """Probe every job's notebook in confined children; `on_done(outcome)` is called as each one finishes;
    `answer_probed` answers each child's "probed" (see the module's docstring; None: nothing is read again or
    traced)."""
    _supervise(jobs, limits, confinement, on_done, shared_zygote(), answer_probed)


def _supervise(jobs: Iterable[Job], limits: Limits, confinement: Confinement, on_done: Callable[[Outcome], None],
               zygote: Zygote, answer_probed: AnswerProbed | None = None) -> None:
    cgroups, no_cgroup = _child_cgroups(limits, zygote)
    confinement = dataclasses.replace(confinement, memory_accounted=cgroups is not None)
    pending = [_JobState(job, Outcome(job.key, job.plan), 0.0, answer_probed=answer_probed) for job in jobs]
    for state in pending:
        state.outcome.isolation_notes.update([no_cgroup] if no_cgroup else [])
    pending.reverse()
    running: dict[int, _Attempt] = {}
    finished: list[tuple[str, Outcome | None]] = []  # (workdir, outcome or None) to clean up and judge
    selector = selectors.DefaultSelector()
    ahead: _Forked | None = None  # the next child, asked for before it is needed (Limits.fork_ahead)
    with tempfile.TemporaryDirectory(prefix="attnkit-children-") as scratch:
        try:
            if pending and limits.fork_ahead:  # the first child's forks and cgroup move overlap the set-up below
                ahead = _fork(limits, confinement, zygote, cgroups)
            protected = protected_paths()  # once for the class: finding the check code's files walks the package
            while pending or running or finished:
                while pending and len(running) < max(1, limits.workers):
                    state = pending.pop()
                    if not state.budget_end:
                        state.budget_end = time.monotonic() + limits.budget
                    attempt = _start(state, limits, confinement, scratch, zygote, cgroups, ahead, protected)
                    ahead = None
                    running[attempt.pid] = attempt
                    selector.register(attempt.fd, selectors.EVENT_READ, attempt)
                    if attempt.exit_fd is not None:
                        selector.register(attempt.exit_fd, selectors.EVENT_READ, None)
                if pending and ahead is None and limits.fork_ahead:
                    # Its forks and its cgroup move overlap the running children's work and the judging below.
                    ahead = _fork(limits, confinement, zygote, cgroups)
                # Judged once the next children are started: the parent's work overlaps theirs.
                judging = time.monotonic()  # monotonic, not perf_counter: it moves the monotonic deadlines
                for workdir, outcome in finished:
                    cleaned = time.perf_counter()
                    shutil.rmtree(workdir, ignore_errors=True)
                    if outcome is not None:
                        outcome.times.add("workspace", time.perf_counter() - cleaned)
                        on_done(outcome)
                if finished:
                    _excuse(time.monotonic() - judging, running.values(), pending)
                finished.clear()
                if not running:
                    continue
                for key, _mask in selector.select(_wait_time(running)):
                    if key.data is not None:  # a channel; an exit_fd only wakes the loop up to reap below
                        _read(key.data, selector, limits)
                answering = sum(attempt.grader_seconds for attempt in running.values())
                if answering:  # judging a notebook to answer its "probed" is the grader's time, no child's
                    _excuse(answering, running.values(), pending)
                    for attempt in running.values():
                        attempt.grader_seconds = 0.0
                now = time.monotonic()
                for attempt in list(running.values()):
                    _enforce_deadlines(attempt, now, limits)
                    _enforce_disk_quota(attempt, now, limits)
                    status = _reap(attempt)
                    if status is None:
                        continue
                    del running[attempt.pid]
                    _close_exit_fd(attempt, selector)
                    attempt.limits_reached = child_cgroups.limits_reached(attempt.cgroup_folders)
                    _leave_cgroups(cgroups, attempt)
                    if attempt.channel_open:
                        _drain(attempt, selector, limits)
                    retry = _settle(attempt, status, limits)
                    if retry:
                        pending.append(attempt.job)
                        finished.append((attempt.workdir, None))
                    else:
                        _finish(attempt.job)
                        finished.append((attempt.workdir, attempt.job.outcome))
        finally:
            if ahead is not None:
                ahead.discard()
                if cgroups is not None and ahead.cgroup_folders:
                    cgroups.leave(ahead.cgroup_folders)
            for attempt in running.values():
                _kill(attempt)
                os.waitpid(attempt.pid, 0)
                if attempt.reply_fd is not None:
                    os.close(attempt.reply_fd)
                _close_exit_fd(attempt, selector)
                _leave_cgroups(cgroups, attempt)
            selector.close()
            if cgroups is not None:
                cgroups.close()


def _child_cgroups(limits: Limits, zygote: Zygote) -> tuple[ChildCgroups | None, str]:
    """(ChildCgroups, "") for this run's children, or (None, the isolation note saying why there are none).

    A child's memory limit: what it may allocate (--memory), its workspace tmpfs, and the zygote's resident pages,
    which copy-on-write may charge to the child without it allocating anything new."""
    if not limits.memory_cgroup:
        return None, "no memory cgroup for grading children (turned off: Limits.memory_cgroup)"
    memory = (limits.memory_mb + limits.disk_mb) * 2**20 + zygote.resident_bytes()
    cgroups, why_not = ChildCgroups.open(memory)
    return cgroups, "" if cgroups is not None else f"no memory cgroup for grading children ({why_not})"


def _leave_cgroups(cgroups: ChildCgroups | None, attempt: _Attempt) -> None:
    if cgroups is not None and attempt.cgroup_folders:
        cgroups.leave(attempt.cgroup_folders)
        attempt.cgroup_folders = ()


def _fork(limits: Limits, confinement: Confinement, zygote: Zygote, cgroups: ChildCgroups | None) -> _Forked:
    """Make a child's cgroups and ask the zygote for the child (which joins them, then waits for its task)."""
    making = time.monotonic()
    folders, confinement = _child_cgroup(cgroups, confinement)
    asking = time.monotonic()
    read_fd, write_fd = os.pipe()
    try:
        request = zygote.fork_ahead(write_fd, folders, limits.private_pids)
    except BaseException:
        os.close(read_fd)
        if cgroups is not None and folders:
            cgroups.leave(folders)
        raise
    finally:
        os.close(write_fd)
    return _Forked(request, read_fd, folders, confinement, asking - making, time.monotonic() - asking)


def _start(state: _JobState, limits: Limits, confinement: Confinement, scratch: str, zygote: Zygote,
           cgroups: ChildCgroups | None = None, ahead: _Forked | None = None,
           protected: tuple[Path, ...] | None = None) -> _Attempt:
    """Start the job's next attempt in `ahead`, the child forked ahead for it, or else in one forked now.
    `protected`: the protected paths (autograder.isolation.protected), found once for the class."""
    state.outcome.attempts += 1
    plan = state.job.plan
    if not state.probes:  # the cases are plain data computed here, where the checks are
        with state.outcome.times.timing("intake"):
            state.probes = {exercise_id: _planned(exercise_id, state.job.seed) for exercise_id in plan.exercises}
            state.withholder = Withholder(protected_lines(), (step.source for step in plan.steps))
    clock = time.monotonic()
    if ahead is None:  # forked now: its making and asking fall inside the wait timed from `clock`
        forked = _fork(limits, confinement, zygote, cgroups)
        cgroup_seconds = forked.cgroup_seconds
    else:  # forked earlier, in the grader's loop: that time is still this notebook's
        forked, cgroup_seconds = ahead, 0.0
        state.outcome.times.add("cgroup", ahead.cgroup_seconds)
        state.outcome.times.add("fork", ahead.fork_seconds)
    folders, confinement = forked.cgroup_folders, forked.confinement
    try:
        child = forked.request.take()
    except BaseException:
        os.close(forked.fd)
        if cgroups is not None and folders:
            cgroups.leave(folders)
        raise
    workdir = tempfile.mkdtemp(prefix="child-", dir=scratch)
    task = ChildTask(
        steps=plan.steps,
        probes=state.probes,
        timeout=limits.timeout,
        wall_timeout=limits.wall_timeout,
        reply_seconds=limits.budget,
        notebook_name=Path(plan.path).name,
        nice=0 if folders and cgroups is not None and cgroups.shares_cpu else CHILD_NICE,
        workdir=Path(workdir),
        confinement=confinement,
        skip_cells=frozenset(state.skip_cells),
        skip_exercises=frozenset(state.outcome.records) | frozenset(state.crashed),
        folder=own_folder(plan.path, state.job.folder, protected),
        disk_mb=limits.disk_mb,
        private_tmpfs=limits.private_tmpfs,
        private_pids=limits.private_pids,
    )
    return _started(state, child, forked.fd, workdir, task, limits, clock, folders, cgroup_seconds)


def _started(state: _JobState, child: WaitingChild, read_fd: int, workdir: str, task: ChildTask, limits: Limits,
             clock: float, folders: tuple[Path, ...], cgroup_seconds: float) -> _Attempt:
    """The child, given its task, as an attempt the loop watches."""
    pid = child.pid
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child got there first, or already exited
    exit_fd = _pidfd(pid)
    reply_fd = child.hand_over(task)  # kept open: the grader answers the child's "probed" there
    os.set_blocking(read_fd, False)
    now = time.monotonic()
    os.set_blocking(reply_fd, False)  # a child that does not read its answer never holds the grader up
    return _Attempt(state, pid, read_fd, workdir, now, reply_fd, started_clock=clock, exit_fd=exit_fd,
                    deadline=now + limits.wall_timeout + limits.grace, cgroup_folders=folders,
                    cgroup_seconds=cgroup_seconds, cpu_limit=task.confinement.cpu_seconds)


def _child_cgroup(cgroups: ChildCgroups | None, confinement: Confinement) -> tuple[tuple[Path, ...], Confinement]:
    """(the next child's cgroup folders, its confinement). Where none can be made for it, the child goes without,
    confined as when the run has none (seccomp refuses what only a cgroup would count): never unaccounted."""
    if cgroups is None:
        return (), confinement
    try:
        return cgroups.make(), confinement
    except OSError as error:
        logger.warning("attnkit: no cgroup for a grading child (%s): memfd and SysV memory refused to it", error)
        return (), dataclasses.replace(confinement, memory_accounted=False)


@functools.cache
def _planned(exercise_id: str, seed: int) -> ExerciseProbes:
    """The exercise's probes and cases: the same for every student of a class, so computed once."""
    return planned_probes(exercise_id, seed=seed)


def _pidfd(pid: int) -> int | None:
    """A descriptor that select() reports readable when the child exits (Linux >= 5.3); None elsewhere."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _close_exit_fd(attempt: _Attempt, selector: selectors.BaseSelector) -> None:
    if attempt.exit_fd is not None:
        selector.unregister(attempt.exit_fd)
        os.close(attempt.exit_fd)
        attempt.exit_fd = None


def _wait_time(running: dict[int, _Attempt]) -> float:
    if not running:
        return 0
    if any(not attempt.channel_open and attempt.exit_fd is None for attempt in running.values()):
        return 0.02  # an exited or channel-closing child, and no pidfd to say when it is gone: poll
    earliest = min(min(attempt.deadline, attempt.job.budget_end) for attempt in running.values())
    return min(0.5, _disk_poll_wait(running), _cpu_poll_wait(running), max(0.0, earliest - time.monotonic()))


def _cpu_poll_wait(running: dict[int, _Attempt]) -> float:
    return CPU_POLL if any(attempt.cpu_deadline < float("inf") for attempt in running.values()) else 0.5


def _read(attempt: _Attempt, selector: selectors.BaseSelector, limits: Limits) -> bool:
    """Read what the channel holds; False when nothing was there yet."""
    try:
        data = os.read(attempt.fd, READ_CHUNK)
    except BlockingIOError:
        return False
    except OSError:
        data = b""
    if not data:
        _close_channel(attempt, selector)
        return True
    try:
        for event in attempt.reader.feed(data):
            _handle(attempt, cast(Withholder, attempt.job.withholder).event(event), limits)  # set by _start
    except wire.ProtocolError as problem:
        _kill(attempt, PROTOCOL, f"stopped the grading process: it sent the grader what it does not accept ({problem})")
        _close_channel(attempt, selector)
    return True


def _drain(attempt: _Attempt, selector: selectors.BaseSelector, limits: Limits) -> None:
    """After the child exited: everything it wrote is in the pipe (nothing else can hold its write end)."""
    while attempt.channel_open and _read(attempt, selector, limits):
        pass
    _close_channel(attempt, selector)


def _close_channel(attempt: _Attempt, selector: selectors.BaseSelector) -> None:
    if attempt.reply_fd is not None:
        os.close(attempt.reply_fd)
        attempt.reply_fd = None
    if attempt.channel_open:
        selector.unregister(attempt.fd)
        os.close(attempt.fd)
        attempt.channel_open = False


def _event_time(attempt: _Attempt, event: dict[str, Any]) -> float:
    """When the child says the event happened, if that is plausible (after its fork, not in the future); else now.
    Used for attnkit bench's stage times only, never for a limit: a child may say anything."""
    now, said = time.monotonic(), event.get("at")
    if isinstance(said, float) and attempt.started_clock <= said <= now:
        return said
    return now


def _time_event(attempt: _Attempt, event: dict[str, Any], now: float) -> None:
    """Account the time up to this event to the stage it ends (workspace and fork, a cell, a probe)."""
    kind = event["event"]
    times = attempt.job.outcome.times
    if kind == "hello":
        _time_hello(attempt, event, now)
    elif kind == "start":
        attempt.step_started = now
    elif kind in ("cell", "exercise", "slopes", "trace") and attempt.step_started:
        times.add("cells" if kind == "cell" else "probes", now - attempt.step_started)
        attempt.step_started = 0.0
    attempt.last_event = now


def _time_hello(attempt: _Attempt, event: dict[str, Any], now: float) -> None:
    """Split the wait up to the child's first event into its stages: the child's own timings of its workdir, its
    sandbox and its cgroup join (only what of the join fell inside the wait), each taken where plausible, else none;
    the grader's making of the cgroups; the rest is the fork (the zygote's forks, the hand-over, the child's start)."""
    times = attempt.job.outcome.times
    left = now - attempt.started_clock

    def said(name: str, at_most: float) -> float:
        value = event.get(name)
        return value if isinstance(value, float) and 0.0 <= value <= at_most else 0.0

    workspace = said("workspace_s", left)
    sandbox = said("sandbox_s", left - workspace)
    joined_at = event.get("joined_at")
    join = said("join_s", left - workspace - sandbox)
    if isinstance(joined_at, float):
        join = min(join, max(0.0, joined_at - attempt.started_clock))
    cgroup = min(left - workspace - sandbox, attempt.cgroup_seconds + join)
    for stage, seconds in (("workspace", workspace), ("sandbox", sandbox), ("cgroup", cgroup)):
        times.add(stage, seconds)
    times.add("fork", max(0.0, left - workspace - sandbox - cgroup))


def _handle(attempt: _Attempt, event: dict[str, Any], limits: Limits) -> None:
    """Apply one decoded event; anything unexpected is a ProtocolError."""
    state, plan = attempt.job, attempt.job.job.plan
    kind = event["event"]
    _check_order(attempt, kind)
    _time_event(attempt, event, _event_time(attempt, event))
    if kind == "hello":
        attempt.hello_seen = True
        state.outcome.isolation_notes.update(one_line(note, 300) for note in _list(event.get("notes")))
        _note_workspace(attempt, event)
    elif kind == "start":
        if attempt.step is not None:
            raise wire.ProtocolError("a step started inside another")
        if event.get("kind") == "cell" and attempt.answered:
            raise wire.ProtocolError("a cell after probed")
        if event.get("kind") == "cell" and type(event.get("index")) is int:
            attempt.step = ("cell", event["index"])
        elif (event.get("kind") == "exercise" and event.get("exercise") in plan.exercises
              and not attempt.answered):
            attempt.step = ("exercise", event["exercise"])
        elif event.get("kind") == "slopes" and event.get("exercise") in attempt.slopes_asked:
            attempt.step = ("slopes", event["exercise"])
        elif event.get("kind") == "trace" and event.get("exercise") in attempt.asked:
            attempt.step = ("trace", event["exercise"])
        else:
            raise wire.ProtocolError("unknown step")
        attempt.deadline = time.monotonic() + limits.wall_timeout + limits.grace
        attempt.cpu_deadline = attempt.cpu_seconds() + limits.timeout + limits.grace
    elif kind == "cell":
        if attempt.step != ("cell", event.get("index")):
            raise wire.ProtocolError("a cell it did not start")
        error = event.get("error")
        output = event.get("output")
        if isinstance(output, str) and output:
            dropped = event.get("output_dropped")
            more = f"\n[... {dropped:,} more characters not kept]" if type(dropped) is int and dropped > 0 else ""
            state.outcome.cell_outputs[event["index"]] = clean(output, MAX_CELL_OUTPUT_CHARS) + more
        if isinstance(error, dict):
            _note_cell(state.outcome, event.get("index"), _cell_note(event.get("index"), error))
        _note_refused(state.outcome, event)
        full = event.get("disk_full")  # its capped tmpfs is full: the student's writes failed
        if full == workspace.SPACE:
            _note_cell(state.outcome, event.get("index"), f"cell {event.get('index')}: "
                       f"{workspace.full_note(limits.disk_mb)}: writing more failed (No space left on device)")
        elif full == workspace.FILES:
            _note_cell(state.outcome, event.get("index"), f"cell {event.get('index')}: "
                       f"{workspace.too_many_files_note()}: creating more failed (No space left on device)")
        attempt.last_cell = attempt.step[1]
        attempt.step = None
        attempt.cpu_deadline = float("inf")  # between steps only the grader's code runs: the wall clock limits it
    elif kind == "exercise":
        exercise_id = cast(str, event.get("exercise"))  # the running step's, checked next
        if attempt.step != ("exercise", exercise_id) or exercise_id in state.outcome.records:
            raise wire.ProtocolError("unexpected exercise")
        state.outcome.records[exercise_id] = _valid_records(exercise_id, event.get("records"))
        attempt.probed.append(exercise_id)
        attempt.step = None
        attempt.cpu_deadline = float("inf")
    elif kind == "probed":
        if attempt.step is not None or attempt.answered:
            raise wire.ProtocolError("probed out of order")
        if any(exercise_id not in state.outcome.records for exercise_id in plan.exercises):
            raise wire.ProtocolError("probed before its exercises")  # the child says it after every one
        attempt.answered = True
        _answer(attempt)
    elif kind == "slopes":
        exercise_id = cast(str, event.get("exercise"))
        if attempt.step != ("slopes", exercise_id):
            raise wire.ProtocolError("slopes it did not start")
        check_ids = attempt.slopes_asked.pop(exercise_id)
        attempt.step = None
        attempt.cpu_deadline = float("inf")
        _keep_own_slopes(attempt, exercise_id, check_ids, event.get("slopes"))
    elif kind == "trace":
        exercise_id = cast(str, event.get("exercise"))
        if attempt.step != ("trace", exercise_id):
            raise wire.ProtocolError("a trace it did not start")
        asked = attempt.asked.pop(exercise_id)
        attempt.step = None
        attempt.cpu_deadline = float("inf")
        _keep_trace(attempt, asked, event)
    else:  # "done"
        if attempt.step is not None:
            raise wire.ProtocolError("done inside a step")
        attempt.done = True
        for exercise_id in attempt.slopes_asked:
            lose_own_slopes(state.outcome, exercise_id, "its grading process went on without reading them")
        attempt.slopes_asked = {}
        for request in attempt.asked.values():  # asked for, never traced: the child stopped waiting for the answer
            lose_departure(state.outcome, request, Untraced.NOT_TRACED, "its grading process went on without "
                           "tracing it (it stopped waiting for the grader's answer, or its task pipe was taken)")
        attempt.asked = {}
        attempt.deadline = time.monotonic() + limits.grace  # it must exit now
        attempt.cpu_deadline = float("inf")


def _answer(attempt: _Attempt) -> None:
    """Answer the child's "probed" on its task pipe: the failed checks to read the own slopes of, the failing cases
    to trace, from the caller (who judges)."""
    state = attempt.job
    started = time.monotonic()
    answer = state.answer_probed(state.outcome, tuple(attempt.probed)) if state.answer_probed else ProbedAnswer()
    state.outcome.answered.update(attempt.probed)
    attempt.grader_seconds += time.monotonic() - started
    attempt.asked = {request.exercise: request for request in answer.traces if request.exercise in attempt.probed}
    attempt.slopes_asked = {exercise_id: tuple(check_ids) for exercise_id, check_ids in answer.slopes.items()
                            if exercise_id in attempt.probed and check_ids}
    try:
        if attempt.reply_fd is not None:  # small: the pipe holds it whole
            os.write(attempt.reply_fd, ProbedAnswer(attempt.slopes_asked, tuple(attempt.asked.values())).encoded())
    except OSError as error:  # the child is gone or its pipe is full of what the student wrote: no traces
        for exercise_id in attempt.slopes_asked:
            lose_own_slopes(state.outcome, exercise_id,
                            f"the grader's answer could not be sent ({one_line(error, 100)})")
        attempt.slopes_asked = {}
        for request in attempt.asked.values():
            lose_departure(state.outcome, request, Untraced.NOT_TRACED,
                           f"the grader's answer could not be sent ({one_line(error, 100)})")
        attempt.asked = {}


def _keep_own_slopes(attempt: _Attempt, exercise_id: str, check_ids: tuple[str, ...], slopes: object) -> None:
    """The own slopes the child read for the failed checks it was asked for, read as hostile data
    (_valid_own_slopes); refused with one log line, and the exercise judged without them."""
    try:
        valid = _valid_own_slopes(slopes, check_ids, attempt.job.outcome.records.get(exercise_id, {}))
    except ValueError as refused:
        lose_own_slopes(attempt.job.outcome, exercise_id, f"they were refused: {one_line(refused, 200)}")
        return
    if valid:
        attempt.job.outcome.own_slopes[exercise_id] = valid


# Where the probes write an own slope (autograder.checking.probing.OWN_SLOPE_FIELDS): a function's probe, one bool in
# its record; a module's (probing.module_gradients), in the record of a backward pass the case's record holds under a
# key of its own, one bool for its input and one for each name of the parameters that record holds ("state").
FUNCTION_SLOPE = "gradient_is_own_slope"
INPUT_SLOPE, PARAMETER_SLOPES = "input_own_slope", "own_slopes"


def _valid_own_slopes(slopes: object, check_ids: tuple[str, ...], records: ExerciseRecords) -> ExerciseRecords:
    """The child's own slopes of `check_ids` (the failed checks it was asked for), as the grader takes them: for each
    check, a list no longer than its recorded cases, each case's slopes only at the places its probe writes them in
    that case's record (_valid_case_slopes). ValueError for anything else (the student's code may have written it)."""
    if not isinstance(slopes, dict):
        raise ValueError("not a mapping of checks")
    valid: ExerciseRecords = {}
    for check_id, per_case in slopes.items():
        recorded = records.get(check_id) if check_id in check_ids else None
        if recorded is None:
            raise ValueError(f"slopes of a check it was not asked for ({one_line(check_id, 80)!r})")
        if not isinstance(per_case, list) or len(per_case) > len(recorded):
            raise ValueError(f"not a list of at most {len(recorded)} cases for {one_line(check_id, 80)!r}")
        valid[check_id] = [_valid_case_slopes(case, record) for case, record in zip(per_case, recorded, strict=False)]
    return valid


def _valid_case_slopes(sent: object, record: ProbeRecord) -> dict[str, Any]:
    """`sent`, one case's slopes, where it holds a bool under FUNCTION_SLOPE and, under a key where `record` holds a
    module's backward pass, that pass's slopes (_valid_backward_slopes); ValueError for anything else."""
    if not isinstance(sent, dict):
        raise ValueError("a case's slopes are not a mapping")
    valid: dict[str, Any] = {}
    for key, value in sent.items():
        if key == FUNCTION_SLOPE and type(value) is bool:
            valid[key] = value
        elif key not in OWN_SLOPE_FIELDS and _backward_pass(record.get(key)):
            valid[key] = _valid_backward_slopes(value, record[key])
        else:
            raise ValueError(f"{one_line(key, 60)!r} is not an own slope at a place its probe writes one")
    return valid


def _backward_pass(value: object) -> bool:
    """Whether a record's value is a module's backward pass as probing.module_gradients records it."""
    return isinstance(value, dict) and isinstance(value.get("state"), dict) and isinstance(value.get("parameters"),
                                                                                             dict)


def _valid_backward_slopes(sent: object, backward: dict[str, Any]) -> dict[str, Any]:
    """A backward pass's slopes: a bool under INPUT_SLOPE, a bool for each of some of its parameters' names under
    PARAMETER_SLOPES; ValueError for anything else."""
    if not isinstance(sent, dict):
        raise ValueError("a backward pass's slopes are not a mapping")
    valid: dict[str, Any] = {}
    for key, value in sent.items():
        if key == INPUT_SLOPE and type(value) is bool:
            valid[key] = value
        elif key == PARAMETER_SLOPES and isinstance(value, dict) and all(
                name in backward["state"] and type(own) is bool for name, own in value.items()):
            valid[key] = dict(value)
        else:
            raise ValueError(f"{one_line(key, 60)!r} is not an own slope of a module's backward pass")
    return valid


def lose_own_slopes(outcome: Outcome, exercise_id: str, detail: str) -> None:
    """One safe log line: the own slopes of an exercise's failed checks were asked for and not taken. Its wrong
    gradients are judged without them (each says no cause is proven, as where a slope cannot be read): its grade is
    what it would be with them."""
    logger.warning("attnkit: no own slopes read for %s in %s: %s", clean(exercise_id),
                   clean(str(outcome.plan.path)), one_line(detail, 300))


def _keep_trace(attempt: _Attempt, asked: TraceRequest, event: dict[str, Any]) -> None:
    """The trace of the case the child was asked for, read as hostile data; refused with one log line."""
    state = attempt.job
    if event.get("check") != asked.check_id or event.get("case") != asked.case:
        raise wire.ProtocolError("a trace of a case it was not asked for")
    tensors = event.get("tensors")
    if tensors is None:  # the child's own cap, or the student's code stopped the trace: no departure
        stopped = event.get("stopped")
        why = CHILD_STOPPED.get(stopped, Untraced.STOPPED) if isinstance(stopped, str) else Untraced.STOPPED
        lose_departure(state.outcome, asked, why, f"its trace stopped ({why.value})")
        return
    try:
        traced = traced_of_record(tensors)
    except ValueError as refused:
        lose_departure(state.outcome, asked, Untraced.REFUSED, f"its trace was refused: {one_line(refused, 200)}")
        return
    state.outcome.traces[asked.exercise] = DepartureTrace(asked.check_id, asked.case, traced)


def lose_departure(outcome: Outcome, request: TraceRequest, why: Untraced, detail: str) -> None:
    """Keep in `outcome` that the departure of `request` was not computed, and why, with one safe log line: a
    departure is never lost silently (the record says it was not computed rather than reading as another
    diagnosis)."""
    outcome.untraced[request.exercise] = LostDeparture(request.check_id, request.case, why)
    logger.warning("attnkit: no departure traced for %s in %s: %s", clean(request.exercise),
                   clean(str(outcome.plan.path)), one_line(detail, 300))


def _check_order(attempt: _Attempt, kind: str) -> None:
    """A known kind, the hello first and once, nothing after done: else the child was not speaking for itself."""
    if kind not in CHILD_EVENTS:
        raise wire.ProtocolError(f"an event the grader does not know ({one_line(kind, 40)!r})")
    if (kind == "hello") == attempt.hello_seen or attempt.done:
        raise wire.ProtocolError("an event out of order")


def _valid_records(exercise_id: str, records: object) -> ExerciseRecords:
    """Keep each known check's list of dicts; a check with nothing usable gets nothing (judged as no result)."""
    records = records if isinstance(records, dict) else {}
    valid = {}
    for check in catalog.checks_of(exercise_id):
        data = records.get(check.id)
        if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
            valid[check.id] = [_valid_error(item) for item in data]
    return valid


ERROR_TEXT_FIELDS = ("type", "message", "line", "key", "code")  # "code": the failing function up to its line


def _valid_error(item: ProbeRecord) -> ProbeRecord:
    """A case's data whose "error" is what the child's probes write (text fields, fields a mapping), else the error
    of a check without a result: what reaches a judge or the diagnosis has the shape they read."""
    error = item.get("error")
    if error is None:
        return item
    well_formed = (isinstance(error, dict) and isinstance(error.get("type"), str)
                   and all(isinstance(error.get(name, ""), str) for name in ERROR_TEXT_FIELDS)
                   and isinstance(error.get("fields", {}), dict))
    if well_formed:
        return item
    return {"error": {"type": "ProbeError", "key": "error.no_result", "fields": {}, "message": "", "line": ""}}


def _excuse(seconds: float, running: Iterable[_Attempt], pending: Iterable[_JobState]) -> None:
    """Move the deadlines of the running children and the budgets of the notebooks begun on by `seconds` that the
    grader spent on other notebooks (judging, writing): no notebook is charged for the grader's work on another's,
    however long that took (a classmate's flood of notes, a slow disk)."""
    for attempt in running:
        attempt.deadline += seconds
        attempt.job.budget_end += seconds
    for state in pending:
        if state.budget_end:
            state.budget_end += seconds


def _enforce_deadlines(attempt: _Attempt, now: float, limits: Limits) -> None:
    if attempt.kill_kind:
        return
    if now > attempt.job.budget_end:
        _kill(attempt, BUDGET, f"the notebook ran past its total time of {limits.budget:g} s")
    elif now > attempt.deadline:
        _kill(attempt, TIMEOUT, f"ran past the {limits.wall_timeout:g} s wall-clock limit and did not stop")
    elif attempt.cpu_deadline < float("inf") and attempt.cpu_seconds() > attempt.cpu_deadline:
        _kill(attempt, TIMEOUT, f"ran past the {limits.timeout:g} s limit of CPU time and did not stop")


def own_folder(notebook_path: str | os.PathLike[str], folder: str | os.PathLike[str] | None = None,
               protected: Iterable[Path] | None = None) -> Path | None:
    """The folder whose files the notebook may read: its own (or `folder`, where the caller grades the notebook
    beside another copy of its files), unless it lies in a protected path (a notebook checked inside the checkout,
    e.g. source/ or tests/, must not get the reference's files beside it). `protected`: protected_paths(), found
    once for a class by the caller (None: found now)."""
    chosen = Path(folder) if folder is not None else Path(notebook_path).parent
    return None if is_protected(chosen, protected) else chosen


def _note_workspace(attempt: _Attempt, event: dict[str, Any]) -> None:
    """The hello is the grader's own (sent before student code, and only once: _check_order): whether the workdir
    is capped, and which of the student's files were left out."""
    space = cast(dict[str, Any], event.get("workspace") if isinstance(event.get("workspace"), dict) else {})
    attempt.disk_watched = space.get("capped") is not True
    notes = attempt.job.outcome.notes
    for note in _list(space.get("notes")):
        note = one_line(note, 300)
        if note not in notes:  # every attempt copies the same folder
            notes.append(note)


def _enforce_disk_quota(attempt: _Attempt, now: float, limits: Limits) -> None:
    """An uncapped child's workdir (and the files it keeps open there) past limits.disk_mb: SIGKILL."""
    if attempt.kill_kind or not attempt.disk_watched or now < attempt.next_disk_check:
        return
    attempt.next_disk_check = now + DISK_POLL
    if workspace.disk_usage(attempt.workdir, attempt.pid) > limits.disk_mb * 2**20:
        _kill(attempt, DISK, workspace.full_note(limits.disk_mb))
        shutil.rmtree(attempt.workdir, ignore_errors=True)  # give the space back now, not when the class ends


def _disk_poll_wait(running: dict[int, _Attempt]) -> float:
    return DISK_POLL if any(attempt.disk_watched for attempt in running.values()) else 0.5


def _kill(attempt: _Attempt, kind: Ending | None = None, reason: str = "") -> None:
    if kind and not attempt.kill_kind:
        attempt.kill_kind, attempt.kill_reason = kind, reason
    for kill in (os.killpg, os.kill):
        try:
            kill(attempt.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _reap(attempt: _Attempt) -> int | None:
    try:
        pid, status, usage = os.wait4(attempt.pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    if not pid:
        return None
    times = attempt.job.outcome.times
    attempt.cpu_used = usage.ru_utime + usage.ru_stime
    times.add("child_cpu", attempt.cpu_used)
    if attempt.last_event:
        times.add("exit", time.monotonic() - attempt.last_event)
    return status


def _settle(attempt: _Attempt, status: int, limits: Limits) -> bool:
    """Record how the attempt ended; True when a fresh child should go on with the notebook."""
    state = attempt.job
    if not attempt.hello_seen:
        # It ended before its hello, which it sends before any of the student's code: only the grader's own
        # set-up ran (fork, workspace, sandbox). That failure is the grader's, said in the grader's words.
        how = attempt.kill_reason or _ending(attempt, status)
        state.outcome.grader_failure = f"the grading process stopped before running any of the notebook's code ({how})"
        logger.error("attnkit: internal error while grading %s: %s", clean(str(state.job.plan.path)),
                     state.outcome.grader_failure)
        return False
    if attempt.done and not attempt.kill_kind:
        return False
    if attempt.answered:  # every exercise was recorded: what stopped it now costs only its slopes and departures
        how = one_line(attempt.kill_reason or _ending(attempt, status), 200)
        for exercise_id in attempt.slopes_asked:
            lose_own_slopes(state.outcome, exercise_id, f"its grading process {how} while reading them")
        attempt.slopes_asked = {}
        for request in attempt.asked.values():
            lose_departure(state.outcome, request, Untraced.STOPPED, f"its grading process {how} while tracing")
        attempt.asked = {}
        return False
    if not attempt.kill_kind:
        attempt.kill_kind, attempt.kill_reason = CRASH, _ending(attempt, status)
    kind, reason, step = attempt.kill_kind, attempt.kill_reason, attempt.step
    if step is None and attempt.last_cell is not None and kind in (PROTOCOL, CRASH):
        # Between steps only the grader's code runs, beside what the student's cells left running (a thread):
        # the latest cell is the one to go without, as when it crashes itself.
        step = ("cell", attempt.last_cell)
    if step is None:  # nothing to skip: a fresh child would do the same
        state.outcome.notes.append(f"the grading process stopped between steps: {reason}")
        return False
    if step[0] == "cell":
        state.skip_cells.add(step[1])
        note = f"cell {step[1]}: your code {reason}" if kind == PROTOCOL else f"cell {step[1]}: {reason}"
    else:
        exercise_id = step[1]
        state.crashed.add(exercise_id)
        seconds = limits.budget if kind == BUDGET else limits.timeout
        state.outcome.records[exercise_id] = _error_records(exercise_id, kind in (TIMEOUT, BUDGET), seconds)
        note = f"checking {exercise_id}: {reason}" if kind == BUDGET else f"checking {exercise_id}: your code {reason}"
    missing = [e for e in state.job.plan.exercises if e not in state.outcome.records]
    cell = step[1] if step[0] == "cell" else None
    if not missing:  # every exercise has its result: nothing to re-run for
        _note_cell(state.outcome, cell, note)
        return False
    why_not = _why_not_rerun(attempt, limits)
    if why_not is None:
        _note_cell(state.outcome, cell, f"{note}; the notebook was re-run without it")
        return True
    _note_cell(state.outcome, cell,
               f"{note}; the rest of the notebook was not run" + (f" ({why_not})" if why_not else ""))
    return False


def _why_not_rerun(attempt: _Attempt, limits: Limits) -> str | None:
    """None when a fresh child may go on with the notebook; else why not ("" when the note already says it)."""
    if attempt.kill_kind == BUDGET:
        return ""
    if time.monotonic() > attempt.job.budget_end:
        return f"its total time of {limits.budget:g} s was used up"
    if attempt.job.outcome.attempts >= limits.max_attempts:
        return f"it had already been run {attempt.job.outcome.attempts} times"
    return None


def _finish(state: _JobState) -> None:
    for exercise_id in state.job.plan.exercises:
        if exercise_id not in state.outcome.records:
            state.outcome.records[exercise_id] = _error_records(exercise_id, False, 0)


def _error_records(exercise_id: str, timed_out: bool, seconds: float) -> ExerciseRecords:
    key, fields = ("error.timeout", {"seconds": seconds}) if timed_out else ("error.no_result", {})
    error = {"type": "ProbeError", "key": key, "fields": fields, "message": "", "line": ""}
    return {check.id: [{"error": dict(error)}] for check in catalog.checks_of(exercise_id)}


def _ending(attempt: _Attempt, status: int) -> str:
    """How a child that was not killed by the grader ended, naming the kernel's limit it reached where one was:
    its memory cgroup's OOM kill, the RLIMIT_CPU of the whole attempt (SIGKILL at its hard limit), its threads."""
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGKILL, signal.SIGXCPU)
    if killed and attempt.limits_reached.memory:
        how = "was killed at its memory limit (SIGKILL from the kernel's OOM killer)"
    elif killed and attempt.cpu_limit and attempt.cpu_used >= attempt.cpu_limit - CPU_LIMIT_SLACK:
        how = (f"used up the {attempt.cpu_limit:g} s of CPU time one run of the notebook may take and was killed "
               f"({signal.Signals(os.WTERMSIG(status)).name})")
    else:
        how = _describe_exit(status)
    if attempt.limits_reached.pids:
        how += f" (it had reached its limit of {child_cgroups.PIDS_MAX} threads)"
    return how


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        return {"SIGSEGV": "crashed (segmentation fault)", "SIGBUS": "crashed (bus error)",
                "SIGABRT": "aborted", "SIGKILL": "was killed (SIGKILL)",
                "SIGXCPU": "used up its CPU time"}.get(name, f"was killed by {name}")
    if os.WIFEXITED(status):
        return f"ended the process (exit status {os.WEXITSTATUS(status)}: os._exit or a fatal error)"
    return f"ended the process (status {status})"


MAX_REFUSED_NOTES = 20  # per cell: a child may say anything


def _note_refused(outcome: Outcome, event: dict[str, Any]) -> None:
    """A note under the cell for each thing its code asked for that the grading child refused (a magic or a shell
    command that starts a program, torch.compile...: autograder.isolation.grading_shell), with why in the grader's
    words, once per cell however often the notebook is re-run."""
    index, refused, more = event.get("index"), _list(event.get("refused")), event.get("refused_more")
    notes = [f"cell {index}: {one_line(pair[0], 80)}: {because(pair[1])}" for pair in refused[:MAX_REFUSED_NOTES]
             if isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)]
    if type(more) is int and more > 0:
        notes.append(f"cell {index}: {more:,} more magics or commands {PLAIN_WORDS}")
    for note in notes:
        if note not in outcome.cell_notes.get(index, []) if isinstance(index, int) else note not in outcome.notes:
            _note_cell(outcome, index, note)


def _note_cell(outcome: Outcome, index: object, note: str) -> None:
    """A note of the notebook's, also filed under its cell (an int index; None: no cell) for the cell's output."""
    outcome.notes.append(note)
    if isinstance(index, int):
        outcome.cell_notes.setdefault(index, []).append(note)


def _cell_note(index: object, error: dict[str, Any]) -> str:
    kind, message = one_line(error.get("type", "error"), 80), one_line(error.get("message", ""), 200)
    if kind == "StepTimeout":
        return f"cell {index}: {message}; it was interrupted"
    return f"cell {index}: {kind}: {message}" if message else f"cell {index}: {kind}"


def _list(value: object) -> list[Any] | tuple[Any, ...]:
    return value if isinstance(value, list | tuple) else []

