"""The grading child's own namespaces: its mounts, and its processes (it sees no other).

Without a PID namespace a grading child lists /proc and reads every process's command line and status: Landlock
keeps other processes' environment and memory from it (those need ptrace access), not /proc/<pid>/cmdline, which
any process may read. A JupyterLab started with its token on its command line, or any secret passed as an
argument, would come back in the student's feedback. So each child gets a PID namespace of its own, whose
processes are its own only, and a /proc that shows that namespace:

  1. `enter_pid_namespace()`, in the zygote's middle process (autograder.isolation.zygote), just before it forks
     the grading child. A process that unshares CLONE_NEWPID stays where it is; its next child is PID 1 of the new
     namespace: the grading child. As root, the namespace alone; otherwise with a user namespace of its own that
     maps only its own uid and gid (`own_namespace`), where the kernel allows unprivileged ones. The grader, outside,
     sees the child under its usual pid: it adopts it as a subreaper, reads its /proc/<pid>/stat and fd, and kills
     it as before.
  2. `mount_own_proc()`, in the child, before the sandbox forbids mounts: a fresh proc, read-only (as Landlock
     keeps /proc; and a kernel knob that uid 0 could write stays unwritable where Landlock is missing), mounted on
     /proc in the child's own mount namespace (the workspace's, or one made here: `private_mounts`). /proc then
     lists the child alone: its pid is 1, its parent's 0.

PID 1 of a namespace, for a child that cannot fork (seccomp): it has no orphans to reap, and when it ends the
namespace goes with it. The kernel delivers to it only the signals it has a handler for when they come from inside
its namespace (itself): a signal the student sends their own process with the default action (SIGTERM, SIGKILL,
SIGSEGV by `os.kill`) is ignored rather than ending it, and `os.abort()` ends it with SIGSEGV (glibc's last resort)
rather than SIGABRT. From outside it, and from the kernel, nothing changes: the grader's SIGKILL, the OOM killer's,
RLIMIT_CPU's and a real fault end it, and the step alarm has its handler. `os.getppid()` is 0 there: the grader has
no pid the student's code can name.

Where the kernel refuses either half, the child runs as before, and its notes name what is missing.
"""

import ctypes
import os
from pathlib import Path

__all__ = ["enter_pid_namespace", "mount_own_proc", "own_namespace", "private_mounts", "process_notes"]

# include/uapi/linux/sched.h, mount.h
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x1, 0x2, 0x4, 0x8, 0x4000, 0x40000
TURNED_OFF = "turned off: Limits.private_pids"
SEEN = "student code can list the other processes in /proc and read their command lines"


def own_namespace(flags: int) -> str | None:
    """unshare(`flags`) for this process; without the privilege that takes, with a user namespace of its own that
    keeps only its own uid and gid (where the kernel allows unprivileged ones: the sandbox drops the capabilities it
    holds there). None when done, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) == 0:
        return None
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | flags) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    return _map_ids(uid, gid)


def private_mounts() -> str | None:
    """A mount namespace of this process's own, from which no mount propagates to the grader's; None when done,
    else why not."""
    why_not = own_namespace(CLONE_NEWNS)
    if why_not is not None:
        return why_not
    # A shared "/" would propagate what is mounted here (the workspace's tmpfs, /proc) to the grader's mounts.
    if ctypes.CDLL(None, use_errno=True).mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"making mounts private: {os.strerror(ctypes.get_errno())}"
    return None


def enter_pid_namespace(wanted: bool = True) -> str | None:
    """In the zygote's middle process, before it forks the grading child: make the child's PID namespace (see the
    module docstring); None when done, else why not (for `process_notes`)."""
    if not wanted:
        return TURNED_OFF
    return own_namespace(CLONE_NEWPID)


def mount_own_proc(mounts_private: bool) -> str | None:
    """In the grading child, PID 1 of its namespace: mount that namespace's proc on /proc (in a mount namespace of its
    own: the workspace's when `mounts_private`); None when done, else why not."""
    if not mounts_private:
        why_not = private_mounts()
        if why_not is not None:
            return why_not
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    if ctypes.CDLL(None, use_errno=True).mount(b"proc", b"/proc", b"proc", flags, None) != 0:
        return f"mounting /proc: {os.strerror(ctypes.get_errno())}"
    return None


def process_notes(pid_namespace_refused: str | None, mounts_private: bool) -> list[str]:
    """In the grading child, before the sandbox: its own /proc where it has its own PID namespace
    (`pid_namespace_refused` is None, from `enter_pid_namespace`); the isolation notes for what is missing."""
    if pid_namespace_refused is not None:
        return [f"no PID namespace for grading children ({pid_namespace_refused}): {SEEN}"]
    why_not = mount_own_proc(mounts_private)
    if why_not is not None:
        return [f"no /proc of their own for grading children ({why_not}): {SEEN}"]
    return []


def _map_ids(uid: int, gid: int) -> str | None:
    """In the new user namespace keep our own uid and gid (no other id exists there)."""
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError as error:
        return f"user namespace id maps: {error.strerror}"
    return None
