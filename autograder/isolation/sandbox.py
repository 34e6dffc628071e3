"""Operating-system confinement of a grading child, applied after fork and before student code runs.

`prepare(...)` builds, once per run in the parent, what every child gets; `confine(confinement, workdir)`
applies it in the child. In order, it:
  0. enters an IPC namespace of its own: SysV segments, message queues and semaphores and POSIX message queues
     the student makes are the namespace's and are destroyed with it, when the child ends;
  1. sets resource limits: address space (the warm parent's size plus the memory budget), CPU seconds,
     file size, open files, no core dumps;
  2. builds a Landlock ruleset (Linux >= 5.13, unprivileged): the filesystem becomes read-only where
     Python and torch live and invisible elsewhere; the child's working directory is the only writable
     place; `blocked` paths (the reference `solutions/`, the hidden checks, the source notebooks,
     other students' submissions, the grades) cannot be read even where their parent is allowed;
     nothing may be executed; with ABI >= 4 no TCP; with ABI >= 6 no signal or abstract socket
     reaches a process outside the child (the grader, other students' children);
  3. drops every capability when running as root (root could raise its limits, load kernel modules,
     reboot...); the uid stays 0 because the interpreter may live in a root-only home directory;
  4. sets no_new_privs, enforces the Landlock ruleset, and installs a seccomp filter that refuses to
     create processes (fork, vfork, clone without CLONE_THREAD), to run programs, to open sockets of any
     address family (socket, socketpair; io_uring, which could open them another way), to enter new or
     other namespaces (unshare, setns, clone with a CLONE_NEW* flag) and to make the process undumpable
     (which would hide its open files from the grader's disk watch); clone3 gets ENOSYS, so that libc
     starts threads with clone, whose flags the filter can read. A child outside a memory cgroup
     (autograder.isolation.cgroups) is also refused memfd_create, shmget, msgget and mq_open, whose memory
     RLIMIT_AS does not count; one without its own IPC namespace, shmget, msgget, semget and mq_open.

Each layer that the kernel does not offer is skipped and named in the returned notes: grading still
works, and the log says which protection was missing. Everything here uses raw syscalls through ctypes.
"""

import ctypes
import functools
import os
import platform
import resource
import signal
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Confinement", "SYSCALLS", "confine", "landlock_abi", "prepare"]

# --- Landlock (include/uapi/linux/landlock.h) ------------------------------------------------
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV  # the only ones a file rule takes
READ = FS_READ_FILE | FS_READ_DIR
WRITE = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO
         | FS_MAKE_SYM | FS_REFER | FS_TRUNCATE)
# Where a Python interpreter, its shared libraries and /proc live: readable, never writable.
SYSTEM_ROOTS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev")

# --- seccomp (include/uapi/linux/seccomp.h, filter.h, audit.h) ---------------------------------
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, PR_SET_DUMPABLE = 38, 22, 2, 4
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x45, 0x06
SECCOMP_DATA_NR, SECCOMP_DATA_ARCH, SECCOMP_DATA_ARG0 = 0, 4, 16  # offsets; ARG0: its low 32 bits (little endian)
CLONE_THREAD = 0x00010000
CLONE_NEWIPC = 0x08000000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (CLONE_NEWTIME only exists for unshare and clone3)
CLONE_NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
EPERM, ENOSYS = 1, 38


@dataclass(frozen=True)
class SyscallTable:
    """One architecture's syscall numbers, as the seccomp filter needs them."""

    audit_arch: int
    refused: tuple[tuple[str, int], ...]  # always EPERM
    clone: int  # allowed for a new thread only, never with a new namespace
    clone3: int  # ENOSYS: its flags live in memory BPF cannot read, and libc then falls back to clone
    prctl: int  # allowed, except PR_SET_DUMPABLE (which would hide /proc/<pid>/fd from the grader)
    # Memory only a cgroup counts (a memfd or a SysV segment grows without a mapping, so RLIMIT_AS misses it):
    # refused when the child has no memory cgroup.
    unaccounted: tuple[tuple[str, int], ...] = ()
    # Kernel objects that outlive their process unless its IPC namespace dies with it: refused without one.
    ipc: tuple[tuple[str, int], ...] = ()


SYSCALLS = {
    "x86_64": SyscallTable(0xC000003E, (
        ("fork", 57), ("vfork", 58), ("execve", 59), ("execveat", 322),
        ("socket", 41), ("socketpair", 53),  # every address family: AF_UNIX by path, UDP, netlink...
        ("unshare", 272), ("setns", 308),  # new or other namespaces (a user namespace brings capabilities back)
        ("io_uring_setup", 425),  # io_uring opens sockets and files without the syscalls above
    ), clone=56, clone3=435, prctl=157,
        unaccounted=(("memfd_create", 319), ("shmget", 29), ("msgget", 68), ("mq_open", 240)),
        ipc=(("shmget", 29), ("msgget", 68), ("semget", 64), ("mq_open", 240))),
    "aarch64": SyscallTable(0xC00000B7, (
        ("execve", 221), ("execveat", 281), ("socket", 198), ("socketpair", 199), ("unshare", 97),
        ("setns", 268), ("io_uring_setup", 425),
    ), clone=220, clone3=435, prctl=167,
        unaccounted=(("memfd_create", 279), ("shmget", 194), ("msgget", 186), ("mq_open", 180)),
        ipc=(("shmget", 194), ("msgget", 186), ("semget", 190), ("mq_open", 180))),
}
X32_SYSCALL_BIT = 0x40000000
# --- capabilities (include/uapi/linux/capability.h, prctl.h) --------------------------------------
PR_CAPBSET_READ, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 23, 24, 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine(), -1)


@dataclass(frozen=True)
class Confinement:
    """What every grading child of one run gets; the filesystem walk is done once, in the parent."""

    memory_mb: int
    cpu_seconds: int
    read_rules: tuple[Path, ...]  # Landlock: readable beneath each (blocked subtrees already cut out)
    landlock: int  # the kernel's Landlock ABI, 0 when missing
    max_file_mb: int = 64
    max_open_files: int = 256
    memory_accounted: bool = False  # the child is in a memory cgroup (autograder.isolation.cgroups)


def prepare(memory_mb: float, cpu_seconds: float, blocked: Iterable[str | os.PathLike[str]] = (),
            readable: Iterable[str | os.PathLike[str]] = ()) -> Confinement:
    """Build the run's Confinement: readable = SYSTEM_ROOTS + `readable`, minus everything beneath `blocked`."""
    blocked_paths = _Blocked(tuple(_real(path) for path in blocked))
    rules: list[Path] = []
    seen: set[Path] = set()
    for root in [Path(root) for root in SYSTEM_ROOTS] + [Path(path) for path in readable]:
        _collect_beneath(_real(root), blocked_paths, seen, rules)
    return Confinement(int(memory_mb), int(cpu_seconds), tuple(rules), landlock_abi())


def confine(confinement: Confinement, workdir: str | os.PathLike[str]) -> list[str]:
    """Confine the calling process (a freshly forked child); returns notes on protections the kernel lacks."""
    notes: list[str] = []
    private_ipc = _private_ipc(notes)  # while it may still make a namespace (capabilities, no seccomp yet)
    _set_limits(confinement)
    ruleset = _landlock_ruleset(confinement, Path(workdir), notes)
    _drop_capabilities(notes)
    _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if ruleset is not None:
        if _syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            notes.append(f"Landlock: restrict_self failed ({os.strerror(ctypes.get_errno())}); files not confined")
        os.close(ruleset)
    refused = _refused_for(confinement.memory_accounted, private_ipc)
    if refused:
        notes.append(f"refused to student code: {', '.join(refused)} (" + "; ".join(filter(None, (
            "" if confinement.memory_accounted else "no memory cgroup counts what they hold",
            "" if private_ipc else "no IPC namespace of its own"))) + ")")
    _forbid_new_processes(notes, refused)
    return notes


def _refused_for(memory_accounted: bool, private_ipc: bool) -> tuple[str, ...]:
    """The syscalls refused beyond the fixed ones, by name, for a child with or without a memory cgroup and an IPC
    namespace of its own."""
    table = SYSCALLS.get(platform.machine())
    if table is None:
        return ()
    names = [] if memory_accounted else [name for name, _number in table.unaccounted]
    names += [] if private_ipc else [name for name, _number in table.ipc]
    return tuple(dict.fromkeys(names))


def _private_ipc(notes: list[str]) -> bool:
    """A new IPC namespace: the student's SysV segments, message queues, semaphores and POSIX message queues are
    the namespace's and go with it when the child ends (nothing outlives the child)."""
    if platform.system() != "Linux":
        return False
    if _libc().unshare(CLONE_NEWIPC) != 0:
        notes.append(f"no IPC namespace for grading children ({os.strerror(ctypes.get_errno())}): "
                     "SysV IPC and POSIX message queues are refused to student code")
        return False
    return True


def _set_limits(confinement: Confinement) -> None:
    def limit(kind: int, value: int) -> None:
        _soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))

    address_space = _address_space_bytes() + confinement.memory_mb * 2**20
    limit(resource.RLIMIT_AS, address_space)
    limit(resource.RLIMIT_CPU, max(1, int(confinement.cpu_seconds)))
    limit(resource.RLIMIT_FSIZE, confinement.max_file_mb * 2**20)
    limit(resource.RLIMIT_NOFILE, confinement.max_open_files)
    limit(resource.RLIMIT_CORE, 0)
    # Over the file-size limit a write fails with EFBIG instead of killing the process.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _address_space_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


# --- Landlock ----------------------------------------------------------------------------------


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    if platform.system() != "Linux" or platform.machine() not in SYSCALLS:
        return 0
    version = _syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, version)


def _landlock_ruleset(confinement: Confinement, workdir: Path, notes: list[str]) -> int | None:
    abi = confinement.landlock
    if abi < 1:
        notes.append("Landlock unavailable (Linux < 5.13 or disabled): student code can read any file this "
                     "user can, solutions/ included, and write where this user can")
        return None
    handled_fs = FS_EXECUTE | READ | WRITE | FS_MAKE_CHAR | FS_MAKE_BLOCK
    if abi < 2:
        handled_fs &= ~FS_REFER
    if abi < 3:
        handled_fs &= ~FS_TRUNCATE
    if abi >= 5:
        handled_fs |= FS_IOCTL_DEV
    attr = struct.pack("<Q", handled_fs)
    if abi >= 4:
        attr += struct.pack("<Q", NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6:
        attr += struct.pack("<Q", SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    else:
        notes.append(f"Landlock ABI {abi} < 6: student code may signal other processes of this user")
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(SYS_LANDLOCK_CREATE_RULESET, buffer, len(attr), 0)
    if ruleset < 0:
        notes.append(f"Landlock: create_ruleset failed ({os.strerror(ctypes.get_errno())}); files not confined")
        return None
    for path in confinement.read_rules:
        _add_rule(ruleset, path, READ & handled_fs)
    _add_rule(ruleset, _real(workdir), (READ | WRITE) & handled_fs)
    _add_rule(ruleset, Path("/dev/null"), (FS_READ_FILE | FS_WRITE_FILE) & handled_fs)
    return ruleset


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


class _Blocked:
    """The blocked paths, and every folder above one, as sets: what `_collect_beneath` asks of each path it visits
    (a set lookup per ancestor instead of a walk of every blocked path's parents)."""

    def __init__(self, paths: tuple[Path, ...]) -> None:
        self.paths = frozenset(paths)
        self.above = frozenset(parent for path in paths for parent in path.parents)

    def covers(self, path: Path) -> bool:
        """`path` is blocked or lies beneath a blocked path."""
        return path in self.paths or not self.paths.isdisjoint(path.parents)

    def beneath(self, path: Path) -> bool:
        """A blocked path lies beneath `path`."""
        return path in self.above


def _collect_beneath(path: Path, blocked: _Blocked, seen: set[Path], rules: list[Path]) -> None:
    """Rules for `path`, except beneath any blocked path: descend around blocked subtrees."""
    if path in seen or not path.exists():
        return
    seen.add(path)
    if blocked.covers(path):
        return
    if not blocked.beneath(path):
        rules.append(path)
        return
    # `path` holds a blocked subtree: allow each of its entries separately (the directory itself is not
    # listable then, which nothing in a grading child needs).
    try:
        entries = sorted(path.iterdir())
    except OSError:
        return
    for entry in entries:
        _collect_beneath(_real(entry), blocked, seen, rules)


def _add_rule(ruleset: int, path: Path, rights: int) -> None:
    if not os.path.isdir(path):
        rights &= FILE_RIGHTS
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        attr = struct.pack("<Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        buffer = ctypes.create_string_buffer(attr, len(attr))
        _syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, buffer, 0)
    finally:
        os.close(fd)


# --- privileges and seccomp ------------------------------------------------------------------


def _drop_capabilities(notes: list[str]) -> None:
    """Root keeps its uid (the interpreter may live in a root-only home) but loses every capability.

    So does a child that holds capabilities for another reason: in the user namespace that its private
    workspace needed (autograder.isolation.workspace), it is root of that namespace until now.
    """
    if os.geteuid() != 0 and not _has_capabilities():
        return
    libc = _libc()
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    capability = 0
    while libc.prctl(PR_CAPBSET_READ, capability, 0, 0, 0) >= 0:
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
        capability += 1
    header = struct.pack("<Ii", LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two {effective, permitted, inheritable} triples, all zero
    header_buffer, data_buffer = ctypes.create_string_buffer(header, 8), ctypes.create_string_buffer(data, 24)
    if _syscall(SYS_CAPSET, header_buffer, data_buffer) != 0:
        notes.append(f"capset failed ({os.strerror(ctypes.get_errno())}): student code keeps root's capabilities")


def _has_capabilities() -> bool:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            lines = [line.split() for line in status if line.startswith(("CapPrm:", "CapEff:"))]
    except OSError:
        return True  # cannot tell: dropping what is not held is harmless
    return any(int(fields[1], 16) for fields in lines)


def _seccomp_program(table: SyscallTable, extra: tuple[str, ...] = ()) -> list[tuple[int, int, int, int]]:
    """The BPF filter: refuse new processes, programs, sockets and namespaces, and the `extra` syscalls of the
    table's `unaccounted` and `ipc` lists named there; allow everything else."""

    def stmt(code: int, k: int) -> tuple[int, int, int, int]:
        return (code, 0, 0, k)

    def jump_if(k: int, true_offset: int, false_offset: int = 0) -> tuple[int, int, int, int]:
        return (BPF_JEQ_K, true_offset, false_offset, k)

    deny, allow = SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW
    program = [
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_ARCH),
        jump_if(table.audit_arch, 1),
        stmt(BPF_RET_K, deny),  # a foreign syscall ABI (i386 via int 0x80): refuse everything
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_NR),
        (BPF_JSET_K, 0, 1, X32_SYSCALL_BIT),
        stmt(BPF_RET_K, deny),
    ]
    numbers = {name: number for name, number in table.unaccounted + table.ipc}
    refused = list(table.refused) + [(name, numbers[name]) for name in extra if name in numbers]
    for _name, number in refused:
        program += [jump_if(number, 0, 1), stmt(BPF_RET_K, deny)]
    # glibc falls back to clone when clone3 says ENOSYS; clone3's flags live in memory BPF cannot read.
    program += [jump_if(table.clone3, 0, 1), stmt(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS)]
    program += [
        jump_if(table.prctl, 0, 4),
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_ARG0),  # the option
        jump_if(PR_SET_DUMPABLE, 0, 1),
        stmt(BPF_RET_K, deny),
        stmt(BPF_RET_K, allow),
    ]
    program += [
        jump_if(table.clone, 0, 5),
        stmt(BPF_LD_W_ABS, SECCOMP_DATA_ARG0),  # the clone flags
        (BPF_JSET_K, 0, 2, CLONE_THREAD),  # not a thread: a new process
        (BPF_JSET_K, 1, 0, CLONE_NEW_NAMESPACES),  # a thread in a new namespace
        stmt(BPF_RET_K, allow),
        stmt(BPF_RET_K, deny),
    ]
    program.append(stmt(BPF_RET_K, allow))
    return program


def _forbid_new_processes(notes: list[str], extra: tuple[str, ...] = ()) -> None:
    arch = platform.machine()
    if arch not in SYSCALLS:
        notes.append(f"seccomp: no syscall table for {arch}; student code may start processes, open sockets "
                     "and enter new namespaces")
        return
    program = _seccomp_program(SYSCALLS[arch], tuple(extra))
    filters = (SockFilter * len(program))(*(SockFilter(*instruction) for instruction in program))
    fprog = SockFprog(len(program), ctypes.cast(filters, ctypes.POINTER(SockFilter)))
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        notes.append(f"seccomp unavailable ({os.strerror(ctypes.get_errno())}): student code may start processes, "
                     "open sockets (AF_UNIX by path, UDP) and enter new namespaces")


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


@functools.cache  # loaded once, in the grader (prepare() asks the kernel's Landlock ABI): children inherit it
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return libc


def _syscall(number: int, *args: Any) -> int:
    converted = [ctypes.c_long(arg) if isinstance(arg, int) else arg for arg in args]
    return _libc().syscall(ctypes.c_long(number), *converted)
