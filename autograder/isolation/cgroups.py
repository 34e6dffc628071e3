"""A cgroup per grading child, so that the kernel counts all of its memory and CPU: `ChildCgroups.open(limits)`.

RLIMIT_AS (autograder.isolation.sandbox) counts what a child maps, not what it writes into files held in memory:
a memfd, SysV shared memory or its tmpfs workspace grow without a mapping. A memory cgroup counts every page the
child's processes charge, mapped or not, so its limit stops them; a pids cgroup caps its threads. The grader makes
one cgroup of its own beneath its current one in each controller (cgroup v1: the memory and pids hierarchies; v2:
the unified one, where the controllers must be enabled for it) and one per child beneath that (`make`), named in
the zygote's request; the child moves itself in (`join`) first thing, before it reads its task, so before its
workspace and any student code (the move waits for the kernel's RCU grace period, about 10 ms: paid in the child,
forked ahead of its task, while the grader works on, not in the grader's loop: see autograder.isolation.zygote).
The grader removes the child's cgroup once the child is reaped, and its own when the run ends.

CPU: where the cpu controller can be had (v1: the cpu and cpuacct hierarchies; v2: +cpu in the unified one), every
child gets the same share (cpu.shares / cpu.weight), whatever its number of threads: a child spinning 127 threads
gets the CPU of one child, not of 127 classmates. The kernel's count of the child's CPU time (cpuacct.usage, or
cpu.stat's usage_usec) is what the grader's step limit reads (`cpu_seconds`); and before removing a reaped child's
cgroup the grader reads which of its limits the kernel enforced (`limits_reached`: an OOM kill, threads refused).

Where the kernel or the permissions refuse (no cgroup filesystem, not root, v2 without delegation), `open` returns
None with the reason; the children are then confined without it, and seccomp refuses the calls whose memory only a
cgroup would count (memfd_create, shmget, msgget, mq_open: see autograder.isolation.sandbox).
"""

import errno
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CGROUP_ROOT", "CPU_SHARES", "CPU_SHARE_FILES", "CPU_WEIGHT", "ChildCgroups", "CpuCounter", "LimitsReached",
    "PIDS_MAX",
    "cpu_seconds", "join", "limits_reached",
]

logger = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
PIDS_MAX = 128  # threads of one child (torch's and the student's): fork is refused anyway
# One share per child, the same for all (the kernels' defaults, written so that nothing inherited changes them).
CPU_SHARES, CPU_WEIGHT = 1024, 100
CPU_SHARE_FILES = frozenset({"cpu.shares", "cpu.weight"})
RMDIR_TRIES = 50  # a reaped child's cgroup may stay busy for a moment while the kernel lets it go
RMDIR_PAUSE = 0.01


@dataclass(frozen=True)
class _Controller:
    """One place where the child's limits are written: a v1 hierarchy, or the v2 unified one (both limits)."""

    root: Path  # the grader's own cgroup for its children, which it made
    files: tuple[tuple[str, str], ...]  # (file, what to write: "{memory}" is the limit in bytes) per child


@dataclass(frozen=True)
class LimitsReached:
    """Which of a child's cgroup limits the kernel enforced, read before its cgroup is removed."""

    memory: bool = False  # the OOM killer killed a task of it at its memory limit
    pids: bool = False  # a thread was refused at PIDS_MAX


class ChildCgroups:
    """The grader's cgroups for its children in one run; a child's cgroups are made by `make` (the child `join`s
    them) and removed by `leave`."""

    def __init__(self, controllers: tuple[_Controller, ...], memory_bytes: int) -> None:
        self._controllers = controllers
        self._memory = memory_bytes
        self._count = 0

    @classmethod
    def open(cls, memory_bytes: int) -> "tuple[ChildCgroups | None, str]":
        """(cgroups, "") where a memory (and, in v1, a pids) cgroup can be made; else (None, why not)."""
        try:
            controllers = _v1_controllers() or _v2_controllers()
        except OSError as error:
            return None, f"cgroups: {error.strerror or error}"
        if not controllers:
            return None, "no writable memory cgroup"
        return cls(controllers, memory_bytes), ""

    @property
    def shares_cpu(self) -> bool:
        """Every child gets the same CPU share, and its CPU time is the kernel's count of its cgroup."""
        return any(name in CPU_SHARE_FILES for controller in self._controllers for name, _value in controller.files)

    def make(self) -> tuple[Path, ...]:
        """Make the next child's cgroups with their limits; the folders, for the child to `join`."""
        self._count += 1
        made: list[Path] = []
        try:
            for controller in self._controllers:
                folder = controller.root / f"child-{self._count}"
                folder.mkdir()
                made.append(folder)
                for name, value in controller.files:
                    _write_if_present(folder / name, value.format(memory=self._memory))
        except OSError:
            self.leave(tuple(made))
            raise
        return tuple(made)

    def leave(self, folders: tuple[Path, ...]) -> None:
        """Remove a reaped child's cgroups (its pages are handed to the parent cgroup by the kernel)."""
        for folder in folders:
            _remove(folder)

    def close(self) -> None:
        for controller in self._controllers:
            _remove(controller.root)


def cpu_seconds(folders: tuple[Path, ...]) -> float | None:
    """The CPU time the kernel counted for the child's cgroup (all its threads, living and gone); None where none of
    its folders counts it."""
    return CpuCounter(folders).seconds()


class CpuCounter:
    """`cpu_seconds` of one child's cgroups, read again and again (the grader's loop reads it after every batch of
    events): the file that answered is remembered and read alone next time, with plain os calls; where it no
    longer answers, every folder is tried again, as `cpu_seconds` tries them."""

    def __init__(self, folders: tuple[Path, ...]) -> None:
        self.folders = folders
        self._counting: tuple[str, bool] | None = None  # the file that answered, and whether it is cpu.stat

    def seconds(self) -> float | None:
        if self._counting is not None:
            path, keyed = self._counting
            try:
                return _usage_usec(path) / 1e6 if keyed else int(_small_file(path)) / 1e9
            except (OSError, ValueError):
                self._counting = None
        for folder in self.folders:
            usage = str(folder / "cpuacct.usage")
            try:
                seconds = int(_small_file(usage)) / 1e9
            except (FileNotFoundError, ValueError):
                pass
            else:
                self._counting = (usage, False)
                return seconds
            stat = str(folder / "cpu.stat")
            usec = _keyed(Path(stat)).get("usage_usec")
            if usec is not None:
                self._counting = (stat, True)
                return usec / 1e6
        return None


def _small_file(path: str) -> str:
    """A cgroup file's whole text (a few lines), read with os calls alone."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode()


def _usage_usec(path: str) -> int:
    """cpu.stat's usage_usec, read as `_keyed` reads it (ValueError where the line is gone)."""
    for line in _small_file(path).splitlines():
        key, _space, value = line.partition(" ")
        if key == "usage_usec" and value.strip().isdigit():
            return int(value)
    raise ValueError("no usage_usec")


def limits_reached(folders: tuple[Path, ...]) -> LimitsReached:
    """What the kernel did at the child's limits (v1: memory.oom_control, pids.events; v2: memory.events,
    pids.events); nothing where the files are missing."""
    memory = pids = False
    for folder in folders:
        memory = memory or _keyed(folder / "memory.oom_control").get("oom_kill", 0) > 0
        memory = memory or _keyed(folder / "memory.events").get("oom_kill", 0) > 0
        pids = pids or _keyed(folder / "pids.events").get("max", 0) > 0
    return LimitsReached(memory=memory, pids=pids)


def _keyed(path: Path) -> dict[str, int]:
    """A cgroup file of "key value" lines as numbers; {} where it is missing or unreadable."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    found = {}
    for line in lines:
        key, _space, value = line.partition(" ")
        if value.strip().isdigit():
            found[key] = int(value)
    return found


def join(folders: tuple[int, ...]) -> None:
    """In the new child, before anything else: move this process into its cgroups, each given as a descriptor of its
    folder (which this closes); OSError if it cannot."""
    try:
        for folder in folders:
            procs = os.open("cgroup.procs", os.O_WRONLY | os.O_CLOEXEC, dir_fd=folder)
            try:
                os.write(procs, str(os.getpid()).encode())
            finally:
                os.close(procs)
    finally:
        for folder in folders:
            os.close(folder)


def _write_if_present(path: Path, value: str) -> None:
    """memory.memsw.* and memory.swap.* exist only where swap is accounted; every other file must take the value."""
    try:
        path.write_text(value)
    except FileNotFoundError:
        if "memsw" not in path.name and "swap" not in path.name:
            raise


def _remove(folder: Path) -> None:
    for _ in range(RMDIR_TRIES):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY:
                logger.warning("attnkit: could not remove the cgroup %s: %s", folder, error.strerror)
                return
            time.sleep(RMDIR_PAUSE)
    logger.warning("attnkit: the cgroup %s stayed busy; it is left behind", folder)


def _own_cgroups() -> dict[str, str]:
    """{controller or "" for v2: this process's cgroup path} from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _number, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _v1_controllers() -> tuple[_Controller, ...]:
    own = _own_cgroups()
    memory = CGROUP_ROOT / "memory"
    if "memory" not in own or not (memory / "memory.limit_in_bytes").exists():
        return ()
    limits = (("memory.limit_in_bytes", "{memory}"), ("memory.memsw.limit_in_bytes", "{memory}"))
    controllers = [_Controller(_grader_folder(memory, own["memory"]), limits)]
    optional = (("pids", (("pids.max", str(PIDS_MAX)),)), ("cpu", (("cpu.shares", str(CPU_SHARES)),)),
                ("cpuacct", ()))  # cpuacct: no limit, the child's folder holds the kernel's count of its CPU time
    at = {memory.resolve(): 0}  # hierarchy -> its controller's index
    for name, files in optional:
        hierarchy = CGROUP_ROOT / name
        if name not in own or not (hierarchy / "cgroup.procs").exists():
            continue
        index = at.get(hierarchy.resolve())
        if index is not None:  # co-mounted ("cpu,cpuacct"): one folder takes both controllers' files
            merged = controllers[index]
            controllers[index] = _Controller(merged.root, merged.files + files)
            continue
        try:
            controllers.append(_Controller(_grader_folder(hierarchy, own[name]), files))
        except OSError:
            logger.debug("attnkit: no %s cgroup for grading children", name, exc_info=True)
            continue
        at[hierarchy.resolve()] = len(controllers) - 1
    return tuple(controllers)


def _v2_controllers() -> tuple[_Controller, ...]:
    own = _own_cgroups()
    if "" not in own or not (CGROUP_ROOT / "cgroup.controllers").exists():
        return ()
    root = _grader_folder(CGROUP_ROOT, own[""])
    files = (("memory.max", "{memory}"), ("memory.swap.max", "0"), ("pids.max", str(PIDS_MAX)))
    try:
        # Children of this folder get the controllers only if it hands them down (it holds no process itself).
        (root / "cgroup.subtree_control").write_text("+memory +pids")
    except OSError:
        _remove(root)
        raise
    try:  # cpu is not delegated everywhere: without it, the children still get memory and pids
        (root / "cgroup.subtree_control").write_text("+cpu")
    except OSError:
        logger.debug("attnkit: no cpu controller for grading children", exc_info=True)
        return (_Controller(root, files),)  # usage_usec is in every v2 cgroup's cpu.stat: still counted
    return (_Controller(root, files + (("cpu.weight", str(CPU_WEIGHT)),)),)


def _grader_folder(hierarchy: Path, own: str) -> Path:
    folder = hierarchy / own.lstrip("/") / f"attnkit-{os.getpid()}"
    folder.mkdir(exist_ok=True)
    return folder
