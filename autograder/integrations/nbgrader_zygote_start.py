"""Starting attnkit's zygote early in nbgrader's process, and having that process end quickly.

nbgrader makes the course's exporter (autograder.integrations.nbgrader_renamed) before it calls the pre-convert hook,
whose imports (torch, the checks) take seconds: the exporter starts the zygote then, where the autograde call grades in
the sandbox, so that the zygote's own imports overlap them. This lives apart from the sandboxed preprocessor
(autograder.integrations.nbgrader_sandbox), which imports the look-ahead, which imports the exporter's module: the
exporter can then start the zygote without that cycle. The preprocessor is recognised by its dotted name.
"""

import atexit
import functools
import gc
import platform
import sys

from autograder.isolation import sandbox
from autograder.isolation.zygote import shared_zygote

__all__ = ["SANDBOXED_EXECUTE", "sandbox_problems", "start_zygote_early"]

SANDBOXED_EXECUTE = "autograder.integrations.nbgrader_sandbox.SandboxedExecute"


def sandbox_problems() -> list[str]:
    """Why this machine cannot run attnkit's sandbox (empty when it can), asked of the kernel before any grading."""
    problems = []
    if not sys.platform.startswith("linux"):
        problems.append(f"it needs Linux (this is {sys.platform})")
    else:
        if platform.machine() not in sandbox.SYSCALLS:
            problems.append(f"its seccomp filter has no syscall table for {platform.machine()}")
        if sandbox.landlock_abi() < 1:
            problems.append("the kernel has no Landlock (Linux >= 5.13 with Landlock enabled)")
    return problems


def start_zygote_early(converter: object) -> None:
    """Start the zygote when nbgrader makes an autograde call's exporter, where that call grades in the sandbox: its
    imports (torch, the checks) then overlap those of nbgrader's process, which the course's pre-convert hook pays
    before the first notebook; SandboxedExecute's own start came after them. Nothing where the call grades in the
    kernel or the sandbox cannot run here (the first notebook says why)."""
    listed = getattr(converter, "autograde_preprocessors", None)
    if not isinstance(listed, list) or not any(_is_sandboxed_execute(entry) for entry in listed):
        return
    if not sandbox_problems():
        _quick_teardown_at_exit()  # registered before the zygote's close, so it runs after it (atexit is LIFO)
        shared_zygote().spawn()


@functools.cache
def _quick_teardown_at_exit() -> None:
    """Have nbgrader's process end in a fraction of the time: with torch, nbgrader and the class's results loaded, the
    interpreter's own collections at shutdown scan every object again and again (1.7 s of a 16 s bench run of the
    sandboxed autograde). Registered once, so it runs after the handlers registered later (the zygote's close)."""
    atexit.register(_collect_then_freeze)


def _collect_then_freeze() -> None:
    """Collect what is garbage now (its finalizers run, as they would at shutdown), then move every survivor out of
    the collector's reach: what shutdown's collections would scan is what the process holds to the end."""
    gc.collect()
    gc.freeze()


def _is_sandboxed_execute(entry: object) -> bool:
    """Whether an entry of Autograde.autograde_preprocessors (a class or its dotted name) is SandboxedExecute or a
    subclass of it, told by name so that this module need not import it."""
    if entry == SANDBOXED_EXECUTE:
        return True
    return isinstance(entry, type) and any(f"{klass.__module__}.{klass.__qualname__}" == SANDBOXED_EXECUTE
                                           for klass in entry.__mro__)
