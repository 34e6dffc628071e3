"""Run the student half of grading in forked, confined children: `probe_notebooks(jobs, limits, on_done)`.

The grader process is warm (torch, the checks and the reference imported once) and single-threaded:
it forks one child per notebook (autograder.student_process), at most `limits.workers` at a time,
and multiplexes their channels in one select loop. It enforces the hard limits the child cannot
enforce on itself: a step (cell or exercise) that runs `grace` seconds past its soft timeout, a
notebook past its total budget, a child that sends malformed data: SIGKILL to its process group.

A child that dies without saying "done" (segfault, os._exit, kill) loses only the step it was in:
the exercises it already reported are kept, the step is recorded (a crashed cell is skipped next
time, a crashed exercise gets an error result) and a fresh child re-runs the notebook without it,
up to `limits.max_attempts` children per notebook.
"""

import dataclasses
import gc
import os
import selectors
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

import torch

from autograder import catalog, guards, wire
from autograder.student_process import ChildTask, run_child

READ_CHUNK = 1 << 20


def default_workers():
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0  # seconds per cell and per exercise's probes (soft: interrupts the student's code)
    memory_mb: int = 2048  # address space a child may add to the warm grader's
    workers: int = field(default_factory=default_workers)
    grace: float = 2.0  # past the soft timeout, the child is killed
    budget_factor: float = 4.0  # a notebook's total time: budget_factor * timeout, over all its attempts
    max_attempts: int = 4


@dataclass(frozen=True)
class Job:
    key: object  # the caller's handle, given back with the outcome
    plan: object  # notebook_code.NotebookPlan
    seed: int


@dataclass
class Outcome:
    """What the children of one notebook reported: probe data per exercise, and what went wrong."""

    key: object
    plan: object
    records: dict = field(default_factory=dict)  # exercise id -> check id -> [probe data per case]
    notes: list = field(default_factory=list)  # cell errors and crashes, in the student's terms
    isolation_notes: set = field(default_factory=set)  # protections the kernel lacked
    attempts: int = 0


@dataclass
class _Attempt:
    job: object  # _JobState
    pid: int
    fd: int
    workdir: str
    started: float
    exit_fd: int | None = None  # a pidfd, readable once the child has exited (None: poll for the exit)
    reader: wire.FrameReader = field(default_factory=wire.FrameReader)
    step: tuple | None = None  # ("cell", index) or ("exercise", id) while it runs
    deadline: float = 0.0
    done: bool = False
    channel_open: bool = True
    kill_reason: str = ""


@dataclass
class _JobState:
    job: Job
    outcome: Outcome
    budget_end: float
    skip_cells: set = field(default_factory=set)
    crashed: set = field(default_factory=set)


def probe_notebooks(jobs, limits, confinement, on_done):
    """Probe every job's notebook in confined children; `on_done(outcome)` is called as each one finishes."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one core per child (they inherit it); the parent only judges
    try:
        _supervise(jobs, limits, confinement, on_done)
    finally:
        torch.set_num_threads(threads)


def _supervise(jobs, limits, confinement, on_done):
    pending = [_JobState(job, Outcome(job.key, job.plan), 0.0) for job in jobs]
    pending.reverse()
    running, finished = {}, []  # finished: (workdir, outcome or None) to clean up and judge
    selector = selectors.DefaultSelector()
    with tempfile.TemporaryDirectory(prefix="attnkit-children-") as scratch:
        try:
            while pending or running or finished:
                while pending and len(running) < max(1, limits.workers):
                    state = pending.pop()
                    if not state.budget_end:
                        state.budget_end = time.monotonic() + limits.budget_factor * limits.timeout
                    attempt = _start(state, limits, confinement, scratch)
                    running[attempt.pid] = attempt
                    selector.register(attempt.fd, selectors.EVENT_READ, attempt)
                    if attempt.exit_fd is not None:
                        selector.register(attempt.exit_fd, selectors.EVENT_READ, None)
                # Judged once the next children are started: the parent's work overlaps theirs.
                for workdir, outcome in finished:
                    shutil.rmtree(workdir, ignore_errors=True)
                    if outcome is not None:
                        on_done(outcome)
                finished.clear()
                if not running:
                    continue
                for key, _mask in selector.select(_wait_time(running)):
                    if key.data is not None:  # a channel; an exit_fd only wakes the loop up to reap below
                        _read(key.data, selector, limits)
                now = time.monotonic()
                for attempt in list(running.values()):
                    _enforce_deadlines(attempt, now, limits)
                    status = _reap(attempt)
                    if status is None:
                        continue
                    del running[attempt.pid]
                    _close_exit_fd(attempt, selector)
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
            for attempt in running.values():
                _kill(attempt)
                os.waitpid(attempt.pid, 0)
                _close_exit_fd(attempt, selector)
            selector.close()


def _start(state, limits, confinement, scratch):
    state.outcome.attempts += 1
    workdir = tempfile.mkdtemp(prefix="child-", dir=scratch)
    task = ChildTask(
        plan=state.job.plan,
        seed=state.job.seed,
        timeout=limits.timeout,
        workdir=workdir,
        confinement=confinement,
        skip_cells=frozenset(state.skip_cells),
        skip_exercises=frozenset(state.outcome.records) | frozenset(state.crashed),
    )
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    read_fd, write_fd = os.pipe()
    task = dataclasses.replace(task, seal=guards.prepare_seal())  # nothing runs between this and the fork
    pid = os.fork()
    if pid == 0:  # the child: never returns from run_child
        gc.freeze()  # the inherited heap is never traversed again, so it stays shared
        os.close(read_fd)
        run_child(task, write_fd)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child got there first, or already exited
    os.set_blocking(read_fd, False)
    now = time.monotonic()
    return _Attempt(state, pid, read_fd, workdir, now, exit_fd=_pidfd(pid),
                    deadline=now + limits.timeout + limits.grace)


def _pidfd(pid):
    """A descriptor that select() reports readable when the child exits (Linux >= 5.3); None elsewhere."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _close_exit_fd(attempt, selector):
    if attempt.exit_fd is not None:
        selector.unregister(attempt.exit_fd)
        os.close(attempt.exit_fd)
        attempt.exit_fd = None


def _wait_time(running):
    if not running:
        return 0
    if any(not attempt.channel_open and attempt.exit_fd is None for attempt in running.values()):
        return 0.02  # an exited or channel-closing child, and no pidfd to say when it is gone: poll
    earliest = min(attempt.deadline for attempt in running.values())
    return min(0.5, max(0.0, earliest - time.monotonic()))


def _read(attempt, selector, limits):
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
            _handle(attempt, event, limits)
    except wire.ProtocolError as problem:
        _kill(attempt, f"sent malformed data ({problem})")
        _close_channel(attempt, selector)
    return True


def _drain(attempt, selector, limits):
    """After the child exited: everything it wrote is in the pipe (nothing else can hold its write end)."""
    while attempt.channel_open and _read(attempt, selector, limits):
        pass
    _close_channel(attempt, selector)


def _close_channel(attempt, selector):
    if attempt.channel_open:
        selector.unregister(attempt.fd)
        os.close(attempt.fd)
        attempt.channel_open = False


def _handle(attempt, event, limits):
    """Apply one decoded event; anything unexpected is a ProtocolError."""
    state, plan = attempt.job, attempt.job.job.plan
    kind = event["event"]
    if kind == "hello":
        state.outcome.isolation_notes.update(str(note) for note in _list(event.get("notes")))
    elif kind == "start":
        if event.get("kind") == "cell" and isinstance(event.get("index"), int):
            attempt.step = ("cell", event["index"])
        elif event.get("kind") == "exercise" and event.get("exercise") in plan.exercises:
            attempt.step = ("exercise", event["exercise"])
        else:
            raise wire.ProtocolError("unknown step")
        attempt.deadline = time.monotonic() + limits.timeout + limits.grace
    elif kind == "cell":
        error = event.get("error")
        if isinstance(error, dict):
            state.outcome.notes.append(_cell_note(event.get("index"), error))
        attempt.step = None
    elif kind == "exercise":
        exercise_id = event.get("exercise")
        if exercise_id not in plan.exercises or exercise_id in state.outcome.records:
            raise wire.ProtocolError("unexpected exercise")
        state.outcome.records[exercise_id] = _valid_records(exercise_id, event.get("records"))
        attempt.step = None
    elif kind == "done":
        attempt.done = True
        attempt.step = None
        attempt.deadline = time.monotonic() + limits.grace  # it must exit now
    else:
        raise wire.ProtocolError(f"unknown event {kind!r}")


def _valid_records(exercise_id, records):
    """Keep each known check's list of dicts; a check with nothing usable gets nothing (judged as no result)."""
    records = records if isinstance(records, dict) else {}
    valid = {}
    for check in catalog.checks_of(exercise_id):
        data = records.get(check.id)
        if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
            valid[check.id] = data
    return valid


def _enforce_deadlines(attempt, now, limits):
    if attempt.kill_reason:
        return
    if now > attempt.job.budget_end:
        _kill(attempt, f"the notebook ran past its total time of {limits.budget_factor * limits.timeout:g} s")
    elif now > attempt.deadline:
        _kill(attempt, f"ran past the {limits.timeout:g} s limit and did not stop")


def _kill(attempt, reason=""):
    if reason and not attempt.kill_reason:
        attempt.kill_reason = reason
    for kill in (os.killpg, os.kill):
        try:
            kill(attempt.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _reap(attempt):
    try:
        pid, status = os.waitpid(attempt.pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if pid else None


def _settle(attempt, status, limits):
    """Record how the attempt ended; True when a fresh child should go on with the notebook."""
    state = attempt.job
    if attempt.done and not attempt.kill_reason:
        return False
    reason = attempt.kill_reason or _describe_exit(status)
    timed_out = "ran past" in reason
    if attempt.step is None:
        state.outcome.notes.append(f"the grading process stopped between steps: {reason}")
    elif attempt.step[0] == "cell":
        index = attempt.step[1]
        state.skip_cells.add(index)
        state.outcome.notes.append(f"cell {index}: {reason}; the notebook was re-run without it")
    else:
        exercise_id = attempt.step[1]
        state.crashed.add(exercise_id)
        state.outcome.records[exercise_id] = _error_records(exercise_id, timed_out, limits.timeout)
        state.outcome.notes.append(f"checking {exercise_id}: your code {reason}")
    missing = [e for e in attempt.job.job.plan.exercises if e not in state.outcome.records]
    out_of_time = time.monotonic() > state.budget_end
    return bool(missing) and state.outcome.attempts < limits.max_attempts and not out_of_time and \
        attempt.step is not None


def _finish(state):
    for exercise_id in state.job.plan.exercises:
        if exercise_id not in state.outcome.records:
            state.outcome.records[exercise_id] = _error_records(exercise_id, False, 0)


def _error_records(exercise_id, timed_out, seconds):
    key, fields = ("error.timeout", {"seconds": seconds}) if timed_out else ("error.no_result", {})
    error = {"type": "ProbeError", "key": key, "fields": fields, "message": "", "line": ""}
    return {check.id: [{"error": dict(error)}] for check in catalog.checks_of(exercise_id)}


def _describe_exit(status):
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        return {"SIGSEGV": "crashed (segmentation fault)", "SIGBUS": "crashed (bus error)",
                "SIGABRT": "aborted", "SIGKILL": "was killed (SIGKILL; out of memory?)",
                "SIGXCPU": "used up its CPU time"}.get(name, f"was killed by {name}")
    if os.WIFEXITED(status):
        return f"ended the process (exit status {os.WEXITSTATUS(status)}: os._exit or a fatal error)"
    return f"ended the process (status {status})"


def _cell_note(index, error):
    kind, message = str(error.get("type", "error")), " ".join(str(error.get("message", "")).split())
    if kind == "StepTimeout":
        return f"cell {index}: {message}; it was interrupted"
    message = message if len(message) <= 200 else message[:199] + "…"
    return f"cell {index}: {kind}: {message}" if message else f"cell {index}: {kind}"


def _list(value):
    return value if isinstance(value, list | tuple) else []

