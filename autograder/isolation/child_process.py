"""The grading child, forked from the zygote (autograder.isolation.zygote): `run_child(read_task, channel_fd,
cgroup_fds, seal, pid_namespace_refused, reply_fd)` never returns. The process it runs in never imported the
reference, a judge or the checks: it probes with the functions of the exercise folders' probe modules that the
task names, on the cases the task carries.

Before any student code: its own cgroups (autograder.isolation.cgroups, joined first, before it even reads its
task, so that everything after is counted there), its own process group, stdin/stdout/stderr on /dev/null and Python's
streams on a sink that counts and discards, every inherited descriptor closed but the channel, its
workspace (autograder.isolation.workspace: a capped tmpfs holding a copy of its own student's folder), a /proc
that shows its own PID namespace, where it is PID 1 and alone (autograder.isolation.namespaces), the grader's code
sealed (autograder.isolation.guards), the OS confinement
(autograder.isolation.sandbox). Then it runs the plan: each code cell through IPython's own shell, made in the
zygote and given a fresh `__main__` here (autograder.isolation.grading_shell), under a soft timeout (SIGALRM raises
StepTimeout in the student's frames once the step's own CPU time or its wall-clock limit is past, as
autograder.isolation.step_clock measures; again every 50 ms if they catch it), an error recorded and the
next cell run, like nbgrader with allow_errors; after each graded cell, the exercise's probes with the
grader's own code restored. Each step is announced before it starts and each exercise's probe data is
sent as soon as it exists, so a crash loses only the step that crashed.

Then one question to the grader, which judges (the child never does): "probed" (its exercises are all sent), and
the grader answers on the task pipe (autograder.isolation.child_task.ProbedAnswer) with the checks that failed and
the failing cases to trace, at most one per exercise (nothing for a notebook that passes). The probes above read no
own slope of a gradient (autograder.checking.probing.own_slopes_later): a judge reads one only where a gradient is
wrong, which fails its check. So each exercise with failed checks gets a step of its own first: those checks probed
once more, on the objects the exercise's probes were given, with the slopes read, and the slope fields alone sent
("slopes"; the grader takes them into the first records and judges again). Then each case to trace is a step of its
own: the probe runs once more on that case, under the tensor trace (autograder.checking.tensor_trace), on the same
objects, and the tensors the student's code made go back capped ("trace"); the grader finds where they depart from
the notes' steps.

The child never decides whose fault anything is. Whatever stops it (student code, or the grader's own code
failing on what student code left behind: a hook, a timer, a tensor subclass, an exception whose text raises)
ends it without a word of its own: it exits, and the grader names the step that was running as the student's
code stopping the grading process. After every student step the child takes its process back (`reclaim`):
profile and trace hooks, interval timers, signal handlers, the signal mask, the wakeup fd and gc callbacks the
student set are undone before any grader code runs (hooks and timers between probe calls too); encoding
(autograder.isolation.wire.plain_data) and describing an exception (autograder.checking.probing.describe_exception)
never call the student's methods, or do so under a guard and this alarm.
"""

import gc
import io
import os
import select
import signal
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from autograder.checking.probing import describe_exception, exception_type_name, own_slopes_later, own_slopes_only
from autograder.checking.tensor_trace import MAX_TRACE_ELEMENTS, trace_record, traced_probe
from autograder.course.shared.plan import ExerciseProbes, probe_checks, resolve
from autograder.isolation import cgroups, namespaces, sandbox, wire, workspace
from autograder.isolation.child_task import REPLY_HEADER, ProbedAnswer, TraceRequest
from autograder.isolation.grading_shell import GradingShell, shared_shell
from autograder.isolation.own_files import OwnFiles
from autograder.isolation.refusals import MAX_REFUSED
from autograder.isolation.step_clock import Reached, StepClock, StepLimit

if TYPE_CHECKING:
    from autograder.isolation.child_task import ChildTask, Step
    from autograder.isolation.guards import Seal

__all__ = ["run_child"]

RETRIGGER_SECONDS = 0.05
MAX_FD = 2**31 - 1
TIMEOUT_TYPE = "StepTimeout"
RECLAIM_TRIES = 16  # a hook that raises is dropped by CPython; one that does not is cleared on the first try
MAX_CELL_OUTPUT_CHARS = 2000  # of what a cell prints, sent to the grader (nbgrader's feedback shows it in the cell)
EXIT_FAILED = 70  # EX_SOFTWARE: the child could not finish (the parent reads the events, not this status)


class StepTimeout(BaseException):  # noqa: N818 - reads as what happened in a student's traceback
    """Raised in student code that ran past its step's time (a BaseException: `except Exception` won't eat it)."""


class _Sink(io.TextIOBase):
    """sys.stdout/sys.stderr of student code: counts characters and keeps the first MAX_CELL_OUTPUT_CHARS that a
    cell writes (shown in that cell of nbgrader's feedback); a flood costs nothing."""

    def __init__(self, fd: int, kept: "_CellOutput") -> None:
        super().__init__()
        self._fd = fd
        self._kept = kept  # shared by stdout and stderr: the cell's output, in the order written
        self.written = 0
        self.buffer = _BinarySink(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")  # as any text stream
        length = str.__len__(text)  # str's own methods: a str subclass is the student's
        self.written += length
        self._kept.keep(text, length)
        return length

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    @property
    def encoding(self) -> str:  # type: ignore[override]  # a fixed value: TextIOBase declares a writable attribute
        return "utf-8"


class _CellOutput:
    """What one cell wrote on stdout and stderr: the first MAX_CELL_OUTPUT_CHARS characters, and how many more."""

    def __init__(self) -> None:
        self.start()

    def start(self) -> None:
        self._parts: list[str] = []
        self._kept = 0
        self.dropped = 0

    def keep(self, text: str, length: int) -> None:
        room = max(0, MAX_CELL_OUTPUT_CHARS - self._kept)
        if room:
            self._parts.append(str.__getitem__(text, slice(0, room)))
        self._kept += min(room, length)
        self.dropped += max(0, length - room)

    def take(self) -> tuple[str, int]:
        """The cell's output so far (and how many characters were left out); starts the next cell's."""
        text, dropped = "".join(self._parts), self.dropped
        self.start()
        return text, dropped


class _BinarySink(io.RawIOBase):
    def __init__(self, sink: _Sink) -> None:
        super().__init__()
        self._sink = sink

    def write(self, data: Any) -> int:  # bytes-like, as RawIOBase.write takes
        self._sink.written += len(data)
        return len(data)

    def writable(self) -> bool:
        return True


@dataclass(frozen=True)
class _Joined:
    """When the child began (just forked) and when it was in its cgroups: for the bench's breakdown only."""

    began: float
    joined: float


class _Child:
    def __init__(self, task: "ChildTask", channel_fd: int, seal: "Seal", pid_namespace_refused: str | None,
                 joined: _Joined, reply_fd: int = -1) -> None:
        self.task = task
        self.joined = joined
        self.reply_fd = reply_fd  # the task pipe, where the grader answers "probed" (-1: no answer is read)
        self.probed: dict[str, dict[str, Any]] = {}  # exercise id -> the objects its probes were given
        self.pid_namespace_refused = pid_namespace_refused  # why the zygote could not make its PID namespace
        self.channel_fd = channel_fd
        self.namespace: dict[str, Any] = {}  # the notebook's __main__, once made
        self.shell: GradingShell | None = None  # IPython's shell that runs the cells, once it has the namespace
        self.seal = seal
        self.sinks: tuple[_Sink, ...] = ()
        self.output = _CellOutput()
        self.mid_frame = False  # a write failed part-way: another frame would not be read right
        self.space: workspace.Workspace | None = None  # once set up
        self.signals: _SignalState | None = None  # the grader's signal handlers and mask, before student code
        self.step_limit = StepLimit(task.timeout, task.wall_timeout or task.timeout)
        self.alarm = _Alarm()

    def send(self, event: dict[str, Any]) -> None:
        # When it happened, on the clock every process shares: the grader's stage times (attnkit bench) use it, so
        # time the grader spent elsewhere before reading the event is not counted as the child's.
        frame = memoryview(wire.encode({**event, "at": time.monotonic()}))
        self.mid_frame = True
        while frame:
            written = os.write(self.channel_fd, frame)
            frame = frame[written:]
        self.mid_frame = False

    def run(self) -> None:
        if self.task.nice:  # no CPU share of its own: at least the grader's loop comes first (threads inherit it)
            os.nice(self.task.nice)
        self.sinks = _detach(self.channel_fd, self.output, self.reply_fd)
        workspace_started = time.monotonic()
        self.space = space = _set_up_workdir(self.task)
        sandbox_started = time.monotonic()
        notes = space.isolation_notes + namespaces.process_notes(self.pid_namespace_refused, space.capped)
        self.seal.apply()
        notes += sandbox.confine(self.task.confinement, self.task.workdir)
        self.shell = shared_shell()  # the zygote's, as it was when it forked
        self.namespace = self.shell.start_notebook(OwnFiles(Path(os.path.realpath(self.task.workdir)),
                                                            self.task.notebook_name))
        self.signals = _SignalState.take()  # after the sandbox's own (SIGXFSZ ignored)
        # The child's own timings are for the bench's breakdown only (the grader checks they are plausible).
        self.send({"event": "hello", "notes": notes, "workspace_s": sandbox_started - workspace_started,
                   "sandbox_s": time.monotonic() - sandbox_started, "join_s": self.joined.joined - self.joined.began,
                   "joined_at": self.joined.joined,
                   "workspace": {"capped": space.capped, "notes": space.student_notes}})
        for step in self.task.steps:
            if step.kind == "cell" and step.index not in self.task.skip_cells:
                self.run_cell(step)
            elif step.kind == "exercise" and step.exercise not in self.task.skip_exercises:
                self.probe(step.exercise)
        if self.probed:
            self.send({"event": "probed"})
            answer = self.answer()
            for exercise_id, check_ids in answer.slopes.items():
                self.read_own_slopes(exercise_id, check_ids)
            for request in answer.traces:
                self.trace(request)
        self.send({"event": "done", "output_chars": sum(sink.written for sink in self.sinks)})

    def run_cell(self, step: "Step") -> None:
        self.send({"event": "start", "kind": "cell", "index": step.index})
        error = None
        self.output.start()
        self.alarm.arm(self.step_limit)
        caught = None
        shell = cast(GradingShell, self.shell)  # made in run() before any step
        try:
            GradingShell.take_refused(shell)  # what a probe's call of the student's code refused is not the cell's
            caught = GradingShell.run(shell, step.source)  # the cell's exception, caught by IPython
        except BaseException as exc:  # noqa: BLE001 - stopped inside IPython's own code (the alarm): a cell error
            caught = exc
        for _ in range(RECLAIM_TRIES):  # inline: a student's profile hook fires on this very call, once
            try:
                self.reclaim()
                break
            except BaseException:  # noqa: BLE001, S112 - CPython drops a hook that raised; the next try is clean
                continue
        else:
            raise RuntimeError("could not take the process back from the student's code")
        if caught is not None:
            error = self._timeout_error() if isinstance(caught, StepTimeout) else self._described(caught)
        output, dropped = self.output.take()
        refused, more_refused = self.refused()
        self.send({"event": "cell", "index": step.index, "error": error, "output": output, "output_dropped": dropped,
                   "disk_full": (self.space is not None and self.space.capped
                                 and workspace.what_is_full(self.task.workdir)) or False,
                   "refused": refused, "refused_more": more_refused})

    def refused(self) -> tuple[list[list[str]], int]:
        """What the cell's code asked for that grading refuses ([what, why] pairs: the class's method, plain str and
        int only: the shell is within the student's reach, and whatever they did to it costs them only these notes)."""
        if self.shell is None:
            return [], 0
        try:
            refused, more = GradingShell.take_refused(self.shell)
            kept = [[str.__str__(what), str.__str__(why)] for what, why in refused[:MAX_REFUSED]
                    if type(what) is str and type(why) is str]
            return kept, more if type(more) is int else 0
        except Exception:  # noqa: BLE001 - the student's doing: no notes
            return [], 0

    def reclaim(self) -> None:
        """Undo what student code set on the process (hooks, timers, handlers) before the grader's code runs."""
        self.alarm.disarm()
        _clear_hooks()
        if self.signals is not None:
            self.signals.restore()

    def between_cases(self) -> None:
        """Between two probe calls of the student's code, inside the step: hooks and timers cleared, the step's
        alarm kept (its handler put back). Handlers and the rest wait for the end of the step (`reclaim`)."""
        _clear_hooks()
        signal.signal(signal.SIGALRM, self.alarm)

    def probe(self, exercise_id: str) -> None:
        self.send({"event": "start", "kind": "exercise", "exercise": exercise_id})
        self.seal.restore()
        planned = self.task.probes[exercise_id]
        objects = {name: self.namespace[name] for name in planned.names if name in self.namespace}
        self.probed[exercise_id] = objects  # a later cell may rebind the names: a trace reads these
        records, failure = {}, None
        self.alarm.arm(self.step_limit)
        caught = None
        try:
            with own_slopes_later():  # read for the checks that fail alone, once the grader has judged (the answer)
                records = probe_checks(planned.checks, objects, between=self.between_cases)
        except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt from the student ends this exercise only
            caught = exc
        for _ in range(RECLAIM_TRIES):  # as in run_cell
            try:
                self.reclaim()
                break
            except BaseException:  # noqa: BLE001, S112 - CPython drops a hook that raised; the next try is clean
                continue
        else:
            raise RuntimeError("could not take the process back from the student's code")
        if caught is not None:
            failure = self._timeout_error() if isinstance(caught, StepTimeout) else self._described(caught)
        self.send({"event": "exercise", "exercise": exercise_id,
                   "records": _completed(planned, records, failure, self.task.timeout)})

    def answer(self) -> ProbedAnswer:
        """The grader's answer to "probed": which failed checks to probe again with their own slopes read, which
        failing cases to trace. It is waited for as long as the notebook's own total time (the task's
        `reply_seconds`), never a fixed time: the grader judges the notebook first, and a loaded grader may take
        long; its own deadlines, which its judging does not use up, stop a child that waits too long. Nothing when
        the student's code closed or read the pipe: the grader sees what it asked for not come, and says so
        (autograder.isolation.supervisor)."""
        seconds = self.task.reply_seconds
        try:
            header = _read_exactly(self.reply_fd, REPLY_HEADER.size, seconds)
            (length,) = REPLY_HEADER.unpack(header)
            if not 0 < length <= MAX_REPLY_BYTES:
                return ProbedAnswer()
            return ProbedAnswer.decoded(_read_exactly(self.reply_fd, length, seconds))
        except (OSError, ValueError, TypeError, KeyError, EOFError):
            return ProbedAnswer()

    def read_own_slopes(self, exercise_id: str, check_ids: tuple[str, ...]) -> None:
        """The failed checks of an exercise probed once more, with the own slopes of their gradients read, on the
        objects its probes were given; only the slope fields go back ("slopes": the grader validates them and takes
        them into the first records). Whatever stops it sends none: the grader judges without them."""
        planned, objects = self.task.probes.get(exercise_id), self.probed.get(exercise_id)
        checks = [check for check in planned.checks if check.check_id in check_ids] if planned is not None else []
        if not checks or objects is None:
            return
        self.send({"event": "start", "kind": "slopes", "exercise": exercise_id})
        self.seal.restore()
        self.alarm.arm(self.step_limit)
        slopes: dict[str, list[dict[str, Any]]] = {}
        try:
            again = probe_checks(checks, objects, between=self.between_cases)
            slopes = {check_id: [own_slopes_only(data) for data in per_case] for check_id, per_case in again.items()}
        except BaseException:  # noqa: BLE001 - whatever the student's code did: no slopes, the grader judges without
            slopes = {}
        for _ in range(RECLAIM_TRIES):  # as in run_cell
            try:
                self.reclaim()
                break
            except BaseException:  # noqa: BLE001, S112 - CPython drops a hook that raised; the next try is clean
                continue
        else:
            raise RuntimeError("could not take the process back from the student's code")
        self.send({"event": "slopes", "exercise": exercise_id,
                   "slopes": {check_id: per_case for check_id, per_case in slopes.items()
                              if any(per_case)}})

    def trace(self, request: TraceRequest) -> None:
        """One failing case's probe again, under the tensor trace, on the objects of its exercise's probes."""
        planned, objects = self.task.probes.get(request.exercise), self.probed.get(request.exercise)
        checks = planned.checks if planned is not None else ()
        check = next((check for check in checks if check.check_id == request.check_id), None)
        if check is None or objects is None or not 0 <= request.case < len(check.cases):
            return
        self.send({"event": "start", "kind": "trace", "exercise": request.exercise})
        self.seal.restore()
        self.alarm.arm(self.step_limit)
        tensors, stopped = None, ""
        try:
            record, traced = traced_probe(resolve(check.probe), objects, check.cases[request.case], MAX_TRACE_ELEMENTS)
            if "error" in record:  # the grader asks for a case its probe ran through: this run stopped early (the
                # alarm, memory), and its tensors, cut where it stopped, would misplace the departure
                stopped = "time" if self.alarm.reached is not None else "error"
            else:
                tensors = trace_record(traced) if traced is not None else None
                stopped = "" if tensors is not None else "cap"
        except BaseException:  # noqa: BLE001 - whatever the student's code did: no departure, and the grader says why
            stopped = "time" if self.alarm.reached is not None else "error"  # the grader's alarm, not a raise's type
        for _ in range(RECLAIM_TRIES):  # as in run_cell
            try:
                self.reclaim()
                break
            except BaseException:  # noqa: BLE001, S112 - CPython drops a hook that raised; the next try is clean
                continue
        else:
            raise RuntimeError("could not take the process back from the student's code")
        self.send({"event": "trace", "exercise": request.exercise, "check": request.check_id, "case": request.case,
                   "tensors": tensors, "stopped": stopped})

    def _timeout_error(self) -> dict[str, Any]:
        """The limit the grader's own alarm found reached (never the text of a StepTimeout student code raised)."""
        reached = self.alarm.reached or Reached.CPU
        return {"type": TIMEOUT_TYPE, "message": self.step_limit.describe(reached), "line": ""}

    def _described(self, exc: BaseException) -> dict[str, Any]:
        """describe_exception under the alarm: a student's __str__ that never returns is interrupted, and whatever
        goes wrong reading the exception leaves a description that names what could be read."""
        self.alarm.arm(StepLimit(DESCRIBE_SECONDS, DESCRIBE_SECONDS))
        try:
            return describe_exception(exc)
        except BaseException:  # noqa: BLE001 - the alarm, or a traceback that cannot be walked
            return {"type": exception_type_name(exc), "message": "", "line": ""}
        finally:
            self.alarm.disarm()


def run_child(read_task: "Callable[[], ChildTask]", channel_fd: int, cgroup_fds: tuple[int, ...], seal: "Seal",
              pid_namespace_refused: str | None, reply_fd: int = -1) -> None:
    """Join the cgroups of `cgroup_fds`, then run the task `read_task` waits for in this freshly forked process,
    streaming events to `channel_fd`; exits, never returns. `reply_fd` is the task pipe, left open after the task:
    the grader answers the child's "probed" there (-1: no answer is read).

    The join comes first, before the child waits for its task (it may be forked ahead of it: see
    autograder.isolation.zygote): everything it does from there on is counted in its cgroups, and no student code
    runs before. `seal` is the zygote's guards.Seal, taken once before it forked anything; `pid_namespace_refused`, why
    the zygote's middle process could not make the child's PID namespace (None: the child is PID 1 there). Anything
    that stops the run (a join the kernel refuses included) ends the process with EXIT_FAILED and nothing more said
    (see the module docstring): the grader decides.
    """
    status = 0
    try:
        began = time.monotonic()
        cgroups.join(cgroup_fds)
        joined = _Joined(began, time.monotonic())
        _Child(read_task(), channel_fd, seal, pid_namespace_refused, joined, reply_fd).run()
    except BaseException:  # noqa: BLE001 - whatever happens, this process must not return into the zygote
        status = EXIT_FAILED
    os._exit(status)


def _detach(channel_fd: int, output: _CellOutput, reply_fd: int = -1) -> tuple[_Sink, _Sink]:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    keep = sorted({0, 1, 2, channel_fd} | ({reply_fd} if reply_fd >= 0 else set()))
    for low, high in zip(keep, keep[1:] + [MAX_FD], strict=True):
        os.closerange(low + 1, high)  # close_range(2) on Linux: cheap however wide
    sys.stdin = io.StringIO("")
    sys.stdout, sys.stderr = _Sink(1, output), _Sink(2, output)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return sys.stdout, sys.stderr


def _set_up_workdir(task: "ChildTask") -> workspace.Workspace:
    """The capped workdir with the student's own files (before anything forbids mounts), then the cwd and HOME."""
    code = "\n".join(step.source for step in task.steps if step.kind == "cell")  # what it imports comes first
    space = workspace.set_up(task.workdir, task.folder, task.disk_mb, task.private_tmpfs, code)
    os.chdir(task.workdir)  # after the mount: the cwd is then the tmpfs, not the directory beneath it
    _point_home_at(task.workdir)
    return space


def _point_home_at(workdir: "str | os.PathLike[str]") -> None:
    for variable in ("HOME", "TMPDIR", "TEMP", "TMP", "MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        os.environ[variable] = str(workdir)
    os.environ["MPLBACKEND"] = "Agg"
    tempfile.tempdir = None  # forget the grader's choice; the next call reads TMPDIR


class _Alarm:
    """The SIGALRM handler of a step: it wakes up when either of the step's limits could first be reached, looks at
    the step's clocks (autograder.isolation.step_clock), and raises StepTimeout in the student's frames once one is
    past (then again every RETRIGGER_SECONDS); until then it sleeps again. A step slowed down by another child uses
    little CPU time of its own, so only its (larger) wall-clock limit can stop it."""

    def __init__(self) -> None:
        self.clock: StepClock | None = None
        self.reached: Reached | None = None

    def arm(self, limit: StepLimit) -> None:
        self.clock, self.reached = StepClock.start(limit), None
        signal.signal(signal.SIGALRM, self)  # student code may have replaced or ignored it
        signal.setitimer(signal.ITIMER_REAL, self.clock.next_look(), RETRIGGER_SECONDS)

    def disarm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.clock = None

    def __call__(self, _signum: int, frame: types.FrameType | None) -> None:
        # Only student code is interrupted: the grader's own bookkeeping frames let the alarm pass.
        if self.clock is None or (frame is not None and frame.f_code.co_filename == __file__):
            return
        reached = self.reached or self.clock.reached()
        if reached is None:
            signal.setitimer(signal.ITIMER_REAL, self.clock.next_look(), RETRIGGER_SECONDS)
            return
        self.reached = reached
        raise StepTimeout(self.clock.limit.describe(reached))


def _completed(planned: ExerciseProbes, records: dict[str, list[Any]], failure: dict[str, Any] | None,
               timeout: float) -> dict[str, list[Any]]:
    """Every check of the exercise gets data; a step timeout becomes the catalogue's timeout message."""
    completed = {}
    for check_id in planned.check_ids:
        data = records.get(check_id) or [{"error": failure or {"type": "ProbeError", "key": "error.no_result",
                                                                "fields": {}, "message": "", "line": ""}}]
        completed[check_id] = [_timeout_as_message(item, timeout) for item in data]
    return completed


def _timeout_as_message(item: Any, timeout: float) -> Any:
    error = item.get("error") if isinstance(item, dict) else None
    if isinstance(error, dict) and error.get("type") == TIMEOUT_TYPE:
        return {"error": {"type": "ProbeError", "key": "error.timeout", "fields": {"seconds": timeout},
                          "message": "", "line": ""}}
    return item


DESCRIBE_SECONDS = 1.0  # what an exception's __str__ may take before its message is given up
MAX_REPLY_BYTES = 64 * 1024


def _read_exactly(fd: int, size: int, seconds: float) -> bytes:
    """`size` bytes of the grader's answer, waiting at most `seconds` in all."""
    data = b""
    deadline = time.monotonic() + seconds
    while len(data) < size:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise EOFError("the grader did not answer")
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError("the task pipe was closed")
        data += chunk
    return data


def _clear_hooks() -> None:
    """Profile and trace hooks (this thread's and the ones new threads get) and the student's interval timers."""
    sys.setprofile(None)
    sys.settrace(None)
    threading.setprofile(None)  # type: ignore[arg-type]  # None clears the hook new threads get
    threading.settrace(None)  # type: ignore[arg-type]
    for timer in (signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)
    signal.set_wakeup_fd(-1)


class _SignalState:
    """The grader's signal handlers and mask, taken before student code and put back after each student step
    (SIGALRM is the grader's own: `_Alarm.arm` installs its handler each time); with them the interpreter's settings
    that would fire inside the grader's code or starve it: gc callbacks, the recursion limit, the switch interval."""

    def __init__(self, handlers: dict[int, Any], mask: set[int | signal.Signals]) -> None:
        self._handlers = handlers
        self._mask = mask
        self._gc_callbacks = list(gc.callbacks)
        self._recursion_limit = sys.getrecursionlimit()
        self._switch_interval = sys.getswitchinterval()

    @classmethod
    def take(cls) -> "_SignalState":
        handlers: dict[int, Any] = {}
        for signum in signal.valid_signals():
            if signum in (signal.SIGKILL, signal.SIGSTOP, signal.SIGALRM):
                continue
            try:
                handlers[signum] = signal.getsignal(signum)
            except (OSError, ValueError):
                continue
        return cls(handlers, signal.pthread_sigmask(signal.SIG_BLOCK, ()))

    def restore(self) -> None:
        # Ignored between steps: an alarm the student left pending or set from a thread cannot interrupt the
        # grader's code (`_Alarm.arm` puts the grader's handler back for the next step).
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        gc.callbacks[:] = self._gc_callbacks
        if sys.getrecursionlimit() < self._recursion_limit:  # raised for the student's own recursion: kept
            sys.setrecursionlimit(self._recursion_limit)
        sys.setswitchinterval(self._switch_interval)
        for signum, handler in self._handlers.items():
            if handler is not None and signal.getsignal(signum) is not handler:
                try:
                    signal.signal(signum, handler)
                except (OSError, ValueError):
                    continue
