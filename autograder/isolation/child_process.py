"""The grading child, forked from the zygote (autograder.isolation.zygote): `run_child(task, channel_fd, seal)` never
returns. The process it runs in never imported the reference, a judge or the checks: it probes with the functions of
autograder.course.probes that the task names, on the cases the task carries.

Before any student code: its own process group, stdin/stdout/stderr on /dev/null and Python's
streams on a sink that counts and discards, every inherited descriptor closed but the channel, its
workspace (autograder.isolation.workspace: a capped tmpfs holding a copy of its own student's folder), the
grader's code sealed (autograder.isolation.guards), the OS confinement
(autograder.isolation.sandbox). Then it runs the plan: each code cell under a soft timeout (SIGALRM raises
StepTimeout in the student's frames, again every 50 ms if they catch it), an error recorded and the
next cell run, like nbgrader with allow_errors; after each graded cell, the exercise's probes with the
grader's own code restored. Each step is announced before it starts and each exercise's probe data is
sent as soon as it exists, so a crash loses only the step that crashed.

Student code is caught per cell and per exercise; an exception that reaches `run_child` comes from the
grader's own code (sealing, confining, encoding...): the child sends a "grader_error" event with the
traceback, best effort, so that the grader reports it as its own fault and not the student's.
"""

import builtins
import io
import os
import signal
import sys
import tempfile
import time
import traceback
import types

from autograder.checking.probing import describe_exception
from autograder.course.probes.plan import ExerciseProbes, probe_checks
from autograder.isolation import sandbox, wire, workspace
from autograder.isolation.cells import ShellStandIn, compile_cell, display_stand_in

RETRIGGER_SECONDS = 0.05
MAX_FD = 2**31 - 1
TIMEOUT_TYPE = "StepTimeout"
EXIT_FAILED = 70  # EX_SOFTWARE: the child could not finish (the parent reads the events, not this status)
MAX_TRACEBACK_CHARS = 3500  # the tail of a grader error's traceback (the channel keeps 4000 per string)


class StepTimeout(BaseException):  # noqa: N818 - reads as what happened in a student's traceback
    """Raised in student code that ran past its step's time (a BaseException: `except Exception` won't eat it)."""


class _Sink(io.TextIOBase):
    """sys.stdout/sys.stderr of student code: counts characters, keeps none (a flood costs nothing)."""

    def __init__(self, fd):
        super().__init__()
        self._fd = fd
        self.written = 0
        self.buffer = _BinarySink(self)

    def write(self, text):
        self.written += len(text)
        return len(text)

    def writable(self):
        return True

    def fileno(self):
        return self._fd

    @property
    def encoding(self):  # type: ignore[override]  # a fixed value: TextIOBase declares a writable attribute
        return "utf-8"


class _BinarySink(io.RawIOBase):
    def __init__(self, sink):
        super().__init__()
        self._sink = sink

    def write(self, data):
        self._sink.written += len(data)
        return len(data)

    def writable(self):
        return True


class _Child:
    def __init__(self, task, channel_fd, seal):
        self.task = task
        self.channel_fd = channel_fd
        self.namespace: dict = {}  # the notebook's __main__, once made
        self.seal = seal
        self.sinks: tuple[_Sink, ...] = ()
        self.mid_frame = False  # a write failed part-way: another frame would not be read right
        self.space: workspace.Workspace | None = None  # once set up

    def send(self, event):
        # When it happened, on the clock every process shares: the grader's stage times (attnkit bench) use it, so
        # time the grader spent elsewhere before reading the event is not counted as the child's.
        frame = memoryview(wire.encode({**event, "at": time.monotonic()}))
        self.mid_frame = True
        while frame:
            written = os.write(self.channel_fd, frame)
            frame = frame[written:]
        self.mid_frame = False

    def report_grader_error(self):
        """Best effort: tell the grader that its own code failed here, with the traceback's tail."""
        if self.mid_frame:
            return
        try:
            _disarm()
            self.send({"event": "grader_error", "traceback": traceback.format_exc()[-MAX_TRACEBACK_CHARS:]})
        except BaseException:  # noqa: BLE001, S110 - the channel may be what failed; the exit status remains
            pass

    def run(self):
        self.sinks = _detach(self.channel_fd)
        self.space = space = _set_up_workdir(self.task)
        self.seal.apply()
        notes = space.isolation_notes + sandbox.confine(self.task.confinement, self.task.workdir)
        self.namespace = _fresh_main()
        self.send({"event": "hello", "notes": notes,
                   "workspace": {"capped": space.capped, "notes": space.student_notes}})
        for step in self.task.steps:
            if step.kind == "cell" and step.index not in self.task.skip_cells:
                self.run_cell(step)
            elif step.kind == "exercise" and step.exercise not in self.task.skip_exercises:
                self.probe(step.exercise)
        self.send({"event": "done", "output_chars": sum(sink.written for sink in self.sinks)})

    def run_cell(self, step):
        self.send({"event": "start", "kind": "cell", "index": step.index})
        error = None
        _arm(self.task.timeout)
        try:
            exec(compile_cell(step.source, f"<cell {step.index}>"), self.namespace)  # noqa: S102 - student code
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: a cell error, not our exit
            _disarm()
            error = _timeout_error(self.task.timeout) if isinstance(exc, StepTimeout) else describe_exception(exc)
        _disarm()
        self.send({"event": "cell", "index": step.index, "error": error,
                   "disk_full": bool(self.space and self.space.capped) and workspace.is_full(self.task.workdir)})

    def probe(self, exercise_id):
        self.send({"event": "start", "kind": "exercise", "exercise": exercise_id})
        self.seal.restore()
        planned = self.task.probes[exercise_id]
        objects = {name: self.namespace[name] for name in planned.names if name in self.namespace}
        records, failure = {}, None
        _arm(self.task.timeout)
        try:
            records = probe_checks(planned.checks, objects)
        except BaseException as exc:  # noqa: BLE001 - a KeyboardInterrupt from the student ends this exercise only
            _disarm()
            failure = _timeout_error(self.task.timeout) if isinstance(exc, StepTimeout) else describe_exception(exc)
        _disarm()
        self.send({"event": "exercise", "exercise": exercise_id,
                   "records": _completed(planned, records, failure, self.task.timeout)})


def run_child(task, channel_fd, seal):
    """Run `task` in this freshly forked process, streaming events to `channel_fd`; exits, never returns.

    `seal` is the zygote's guards.Seal, taken once before it forked anything.
    """
    status, child = 0, None
    try:
        child = _Child(task, channel_fd, seal)
        child.run()
    except Exception as error:  # noqa: BLE001 - student code is caught per step: this is the grader's own
        status = EXIT_FAILED
        # MemoryError: the student's allocations may have left nothing for the grader, not our bug.
        if child is not None and not isinstance(error, MemoryError):
            child.report_grader_error()
    except BaseException:  # noqa: BLE001 - whatever happens, this process must not return into the grader
        status = EXIT_FAILED
    os._exit(status)


def _detach(channel_fd):
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    keep = sorted({0, 1, 2, channel_fd})
    for low, high in zip(keep, keep[1:] + [MAX_FD], strict=True):
        os.closerange(low + 1, high)  # close_range(2) on Linux: cheap however wide
    sys.stdin = io.StringIO("")
    sys.stdout, sys.stderr = _Sink(1), _Sink(2)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return sys.stdout, sys.stderr


def _set_up_workdir(task):
    """The capped workdir with the student's own files (before anything forbids mounts), then the cwd and HOME."""
    code = "\n".join(step.source for step in task.steps if step.kind == "cell")  # what it imports comes first
    space = workspace.set_up(task.workdir, task.folder, task.disk_mb, task.private_tmpfs, code)
    os.chdir(task.workdir)  # after the mount: the cwd is then the tmpfs, not the directory beneath it
    _point_home_at(task.workdir)
    return space


def _point_home_at(workdir):
    for variable in ("HOME", "TMPDIR", "TEMP", "TMP", "MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        os.environ[variable] = str(workdir)
    os.environ["MPLBACKEND"] = "Agg"
    tempfile.tempdir = None  # forget the grader's choice; the next call reads TMPDIR


def _fresh_main():
    """A new `__main__` module whose namespace the cells share, as in a Jupyter kernel."""
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    main.__dict__["get_ipython"] = _shell_getter(main.__dict__)
    main.__dict__["display"] = display_stand_in
    sys.modules["__main__"] = main
    return main.__dict__


def _shell_getter(namespace):
    shell = ShellStandIn(namespace)

    def get_ipython():
        return shell

    return get_ipython


def _on_alarm(_signum, frame):
    # Only student code is interrupted: the grader's own bookkeeping frames let the alarm pass.
    if frame is not None and frame.f_code.co_filename == __file__:
        return
    raise StepTimeout("ran past the time limit")


def _arm(seconds):
    signal.signal(signal.SIGALRM, _on_alarm)  # student code may have replaced or ignored it
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001), RETRIGGER_SECONDS)


def _disarm():
    signal.setitimer(signal.ITIMER_REAL, 0)


def _timeout_error(seconds):
    return {"type": TIMEOUT_TYPE, "message": f"ran past the {seconds:g} s limit", "line": ""}


def _completed(planned: ExerciseProbes, records, failure, timeout):
    """Every check of the exercise gets data; a step timeout becomes the catalogue's timeout message."""
    completed = {}
    for check_id in planned.check_ids:
        data = records.get(check_id) or [{"error": failure or {"type": "ProbeError", "key": "error.no_result",
                                                                "fields": {}, "message": "", "line": ""}}]
        completed[check_id] = [_timeout_as_message(item, timeout) for item in data]
    return completed


def _timeout_as_message(item, timeout):
    error = item.get("error") if isinstance(item, dict) else None
    if isinstance(error, dict) and error.get("type") == TIMEOUT_TYPE:
        return {"error": {"type": "ProbeError", "key": "error.timeout", "fields": {"seconds": timeout},
                          "message": "", "line": ""}}
    return item
