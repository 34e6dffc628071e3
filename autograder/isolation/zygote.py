"""The zygote: a warm process that never imported the reference, the checks or a judge, and forks every grading child.

The grader (the parent) imports the reference and the judges; student code must never run in a process that holds
them, not even in memory the child could dig out with `gc.get_objects()`. So the children are not forked from the
parent. `Zygote.fork_ahead(channel_fd, cgroup_folders)` asks a separate interpreter, started with `python -m
autograder.isolation.zygote` and a fixed minimal environment, which imported torch, the probes (every exercise
folder's probe module) and the child's own code and warmed them up once. It forks twice: the middle process makes
the PID namespace whose PID 1 the child is (autograder.isolation.namespaces: the child sees no other process), forks
it and exits at once, so the grading child is re-parented to the grader, which has made itself a child subreaper
(PR_SET_CHILD_SUBREAPER) and therefore waits for it, times it and kills it exactly as it would its own child.

The channel is a Unix socket pair made before the zygote starts: a request is a header sent with the child's
descriptors (SCM_RIGHTS), its event pipe, the read end of a task pipe and its cgroup folders (opened by the grader,
which made them); the reply is the new child's pid (0: it could not fork). The zygote never sees a task: the grader
writes the pickled autograder.isolation.child_task.ChildTask (trusted data: it comes from the grader) into the task
pipe, and only the child reads it. So no student's cells ever pass through the zygote's memory, where every later
child would inherit them (freed pages included). The grader keeps the task pipe's write end: it answers the child's
"probed" there (which failing cases to trace: autograder.isolation.child_process). When the grader goes, the
zygote goes too (PR_SET_PDEATHSIG, and end of file on the socket).

A child is forked ahead of its task (`Zygote.fork_ahead`): it moves itself into its cgroups first thing, then waits
for its task. Moving a process between cgroups waits for the kernel (an RCU grace period, 10 to 15 ms a move on
cgroup v1, more under load), and so do the zygote's two forks: the grader asks for the next child as soon as it has
started one, without waiting for the answer, and reads the pid only when it needs that child (`ForkedAhead.take`).
The wait then overlaps the running children's work instead of holding up the next notebook; the child is in its
cgroups before it reads its task, so before any student code, as before."""

import atexit
import ctypes
import functools
import gc
import importlib
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.isolation.child_task import ChildTask
    from autograder.isolation.guards import Seal

__all__ = ["ForkedAhead", "WaitingChild", "Zygote", "ZygoteError", "shared_zygote"]

HEADER = struct.Struct("!Q")
MAX_CGROUP_FOLDERS = 6  # a child's cgroup folders in one request (v1: memory, pids, cpu, cpuacct; v2: one)
# The requests, each with the child's descriptors: fork a child in a PID namespace of its own (where the kernel
# allows: autograder.isolation.namespaces), or in the zygote's (Limits.private_pids off).
FORK_IN_OWN_PID_NAMESPACE, FORK = 1, 2
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
ZYGOTE_MODULE = __name__ if __name__ != "__main__" else "autograder.isolation.zygote"
# The zygote's (and so every grading child's) whole environment: these fixed values, plus the variables named in
# PASSED_VARIABLES when the grader has them (what the interpreter and its libraries need to run and to compute
# right on this machine). Nothing that identifies or authorises the grader (tokens, keys, paths of the course).
FIXED_VARIABLES = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
PASSED_VARIABLES = ("LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE",
                    "OPENBLAS_L2_SIZE")


class ZygoteError(RuntimeError):
    """The zygote could not be started or stopped answering: a fault of the grader's, never of a student's."""


# --- the grader's side -------------------------------------------------------------------------------------------


class Zygote:
    """The grader's handle on its zygote, started on first use and again if it died (or this process forked)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None  # the channel, once the zygote said it is ready
        self._starting: socket.socket | None = None  # the channel while it starts
        self._owner = 0

    def fork_ahead(self, channel_fd: int, cgroup_folders: tuple[Path, ...] = (),
                   private_pids: bool = True) -> "ForkedAhead":
        """Ask for a grading child that joins `cgroup_folders`, then waits for its task (`WaitingChild.hand_over`),
        writing its events to `channel_fd` (the caller keeps its own copy of it); the answer is read by
        `ForkedAhead.take`, and the child is this process's own child from then on. One request at a time: take it
        before the next."""
        connection = self._running()
        if len(cgroup_folders) > MAX_CGROUP_FOLDERS:
            raise ZygoteError(f"a grading child joins at most {MAX_CGROUP_FOLDERS} cgroups")
        opened: list[int] = []
        task_read, task_write = os.pipe()
        try:
            for folder in cgroup_folders:
                opened.append(os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
            request = FORK_IN_OWN_PID_NAMESPACE if private_pids else FORK
            socket.send_fds(connection, [HEADER.pack(request)], [channel_fd, task_read, *opened])
        except OSError as error:
            os.close(task_write)
            self.close()
            raise ZygoteError(f"the grading zygote stopped answering ({error})") from error
        finally:
            for fd in (task_read, *opened):
                os.close(fd)
        return ForkedAhead(self, connection, task_write)

    def resident_bytes(self) -> int:
        """The zygote's resident memory: what a child may copy of it (copy-on-write) without allocating anything."""
        self._running()
        assert self._process is not None
        try:
            with open(f"/proc/{self._process.pid}/statm", encoding="ascii") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    def close(self) -> None:
        for channel in (self._socket, self._starting):
            if channel is not None:
                channel.close()
        self._socket = self._starting = None
        if self._process is not None and self._owner == os.getpid():
            self._process.kill()
            self._process.wait()
        self._process = None

    def spawn(self) -> None:
        """Start the zygote now without waiting for it: its imports and warm-up overlap the grader's own."""
        if self._owner != os.getpid() or self._process is None or self._process.poll() is not None:
            self._launch()

    def _running(self) -> socket.socket:
        self.spawn()
        if self._socket is None:
            self._wait_until_ready()
        assert self._socket is not None
        return self._socket

    def _launch(self) -> None:
        _become_subreaper()
        self._socket = None  # a forked copy of this process leaves its parent's zygote alone
        self._starting, zygote_end = socket.socketpair()
        root = _package_root()
        with zygote_end:
            self._process = subprocess.Popen(
                [sys.executable, "-m", ZYGOTE_MODULE, str(zygote_end.fileno())],
                pass_fds=(zygote_end.fileno(),), env=_zygote_environment(root), cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self._owner = os.getpid()

    def _wait_until_ready(self) -> None:
        assert self._process is not None and self._starting is not None
        grader_end, self._starting = self._starting, None
        try:
            _receive(grader_end, HEADER.size)  # "ready": its imports and warm-up are done
        except EOFError:
            status = self._process.wait()
            grader_end.close()
            self._process = None
            raise ZygoteError(f"the grading zygote did not start (exit status {status}; its error is above)") from None
        self._socket = grader_end


class ForkedAhead:
    """A request the zygote is answering: `take` reads the new child's pid (waiting only if it is not there yet)."""

    def __init__(self, zygote: Zygote, connection: socket.socket, task_write: int) -> None:
        self._zygote, self._connection, self._task_write = zygote, connection, task_write

    def take(self) -> "WaitingChild":
        """The child, in its cgroups (or about to be) and waiting for its task; ZygoteError if there is none."""
        try:
            (pid,) = HEADER.unpack(_receive(self._connection, HEADER.size))
        except (OSError, EOFError) as error:
            os.close(self._task_write)
            self._zygote.close()
            raise ZygoteError(f"the grading zygote stopped answering ({error})") from error
        if not pid:
            os.close(self._task_write)
            raise ZygoteError("the grading zygote could not fork a child (out of processes or memory?)")
        return WaitingChild(pid, self._task_write)


class WaitingChild:
    """A grading child (this process's own, see the module docstring) waiting for its task: `hand_over` gives it,
    `discard` ends a child that will not get one (it reads the end of its task pipe and exits)."""

    def __init__(self, pid: int, task_write: int) -> None:
        self.pid = pid
        self._task_write: int | None = task_write

    def hand_over(self, task: "ChildTask") -> int:
        """Give the child its task; returns the write end of its task pipe, which the caller keeps (and closes): the
        grader answers the child's "probed" there."""
        payload = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        task_write = self._task_write
        assert task_write is not None, "a task is handed over once"
        self._task_write = None
        try:
            _hand_over(task_write, payload)
        except BaseException:
            os.close(task_write)
            raise
        return task_write

    def discard(self) -> None:
        """End the child without a task and reap it."""
        self._close()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    def _close(self) -> None:
        if self._task_write is not None:
            os.close(self._task_write)
            self._task_write = None


@functools.cache
def shared_zygote() -> Zygote:
    """This process's zygote: started on first use (or early, by `spawn`), kept warm for the next class, stopped when
    this process ends (the `attnkit` command stops it before; a process that grades in-process, such as a test run,
    here rather than by the parent-death signal, which leaves its handle on a running process to the collector)."""
    zygote = Zygote()
    atexit.register(zygote.close)
    return zygote


def _zygote_environment(root: Path) -> dict[str, str]:
    """The zygote's environment: fixed values, a few runtime variables, and where to import attnkit from."""
    environment = dict(FIXED_VARIABLES)
    environment.update({name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ})
    environment["PYTHONPATH"] = str(root)  # the grader's own copy of attnkit (the zygote forgets it once started)
    return environment


def _become_subreaper() -> None:
    """Make this process adopt its orphaned descendants (the grading children); Linux only."""
    if not sys.platform.startswith("linux"):
        raise ZygoteError("attnkit grades student code on Linux only (it needs PR_SET_CHILD_SUBREAPER)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise ZygoteError(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")


def _package_root() -> Path:
    import autograder  # here, not at the top: this module also runs as the zygote's __main__

    return Path(autograder.__file__).resolve().parent.parent


def _hand_over(task_write: int, payload: bytes) -> None:
    """Write the task to the child's own pipe (it reads it as soon as it exists). A child that died before
    reading it leaves a broken pipe: the grader sees that child end without a word, like any other crash."""
    data = memoryview(HEADER.pack(len(payload)) + payload)
    try:
        while data:
            data = data[os.write(task_write, data):]
    except BrokenPipeError:
        return


def _read_task(task_fd: int) -> "ChildTask":
    """In the new child: the task the grader wrote into its pipe (left open: the grader answers there later)."""
    (length,) = HEADER.unpack(_read_pipe(task_fd, HEADER.size))
    payload = _read_pipe(task_fd, length)
    if len(payload) != length:
        raise EOFError("the grader's task was cut short")
    return pickle.loads(payload)  # noqa: S301 - from the grader, over a pipe it made for this child only


def _read_pipe(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError("the other end closed the channel")
        data += chunk
    return data


# --- the zygote's side -------------------------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    connection = socket.socket(fileno=int(argv[1]))
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the grader's to handle (it kills the children)
    os.environ.pop("PYTHONPATH", None)  # sys.path has it; the children's environment does not need it
    seal = load()
    try:
        connection.sendall(HEADER.pack(os.getpid()))
    except OSError:  # the grader is gone (it stopped before it needed a child): nothing to serve, nothing to say
        return
    serve(connection, seal)


def load() -> "Seal":
    """Import and warm up everything a grading child runs; returns the grader code's seal (autograder.isolation.guards).

    Only the probe side is imported: torch, every exercise folder's probe module, the child's code and IPython's
    shell that runs the cells (autograder.isolation.grading_shell). Never the
    reference, the checks, the catalogue or a judge; tests/test_zygote.py looks for them as an attacker would.
    """
    import torch

    torch.set_num_threads(1)  # one core per child; the children inherit it
    plan = importlib.import_module("autograder.course.shared.plan")
    for name in plan.probe_modules():
        importlib.import_module(name)
    importlib.import_module("autograder.isolation.child_process")
    importlib.import_module("autograder.isolation.grading_shell").shared_shell()  # IPython's, before the seal
    _warm_up(torch)
    guards = importlib.import_module("autograder.isolation.guards")
    seal = guards.prepare_seal()
    gc.collect()
    gc.freeze()  # the children never traverse the inherited heap: its pages stay shared
    return seal


def _warm_up(torch: types.ModuleType) -> None:
    """Pay torch's first-use costs once here instead of in every child (lazy dispatch tables, the meta device,
    autograd, the modes the probes record with). Plain layers and ops only: nothing of an exercise's answer."""
    from autograder.checking.torch_recorders import DeviceMixWatch, FunctionCalls
    from autograder.course.shared.inputs import probe_device_kind

    device = probe_device_kind()
    with torch.random.fork_rng(devices=[]):
        layer = torch.nn.Linear(4, 6).double()
        layer.register_buffer("ones", torch.ones(3, 3).triu(1))
        x = torch.rand(2, 3, 4, dtype=torch.float64, requires_grad=True)
        with FunctionCalls():
            y = torch.nn.functional.dropout(layer(x), 0.5, training=True).view(2, 3, 2, 3).transpose(1, 2)
        y.contiguous().exp().sum().backward()
        on_device = layer.to(device)
        with DeviceMixWatch():
            on_device(torch.zeros(2, 4, dtype=torch.float64, device=device)).masked_fill(
                torch.zeros(2, 6, dtype=torch.bool, device=device), 0.0)
        torch.nn.MultiheadAttention(4, 2, batch_first=True).state_dict()


def serve(connection: socket.socket, seal: "Seal") -> None:
    """Fork a grading child per request until the grader closes the channel."""
    while True:
        try:
            header, fds, _flags, _address = socket.recv_fds(connection, HEADER.size, 2 + MAX_CGROUP_FOLDERS)
        except OSError:
            return
        if not header:
            return
        header += _receive(connection, HEADER.size - len(header))
        (request,) = HEADER.unpack(header)
        try:
            pid = _fork_child(fds[0], fds[1], tuple(fds[2:]), seal, connection, request) if len(fds) >= 2 else 0
        finally:
            for fd in fds:
                os.close(fd)
        try:
            connection.sendall(HEADER.pack(pid))
        except OSError:  # the grader is gone: its subreaper role went with it, and so does this
            return


def _fork_child(channel_fd: int, task_fd: int, cgroup_fds: tuple[int, ...], seal: "Seal", connection: socket.socket,
                request: int) -> int:
    """Fork the grading child through a middle process that exits at once; the child's pid, or 0. The child joins
    the cgroups of `cgroup_fds`, then reads its task from `task_fd` (see the module docstring). The middle process
    first makes the PID namespace whose PID 1 the child is (a process that unshares one does not move into it; its
    next child does)."""
    from autograder.isolation.child_process import run_child
    from autograder.isolation.namespaces import enter_pid_namespace

    pid_read, pid_write = os.pipe()
    try:
        middle = os.fork()
    except OSError:
        os.close(pid_read)
        os.close(pid_write)
        return 0
    if middle == 0:  # the middle process: fork the child, tell its pid, exit (the grader adopts the child)
        status = 0
        try:
            os.close(pid_read)
            connection.close()
            pid_namespace_refused = enter_pid_namespace(wanted=request == FORK_IN_OWN_PID_NAMESPACE)
            child = os.fork()
            if child == 0:
                os.close(pid_write)
                run_child(functools.partial(_read_task, task_fd), channel_fd, cgroup_fds, seal,
                          pid_namespace_refused, task_fd)  # never returns
            os.write(pid_write, HEADER.pack(child))
        except BaseException:  # noqa: BLE001 - this process must never return into the zygote's loop
            status = 1
        os._exit(status)
    os.close(pid_write)
    with os.fdopen(pid_read, "rb") as reader:
        data = reader.read(HEADER.size)
    os.waitpid(middle, 0)  # once it is reaped, the child has been re-parented to the grader
    return HEADER.unpack(data)[0] if len(data) == HEADER.size else 0


if __name__ == "__main__":
    main(sys.argv)
