"""Which probe a check runs, as plain data: how the grader tells the grading child what to probe.

A check's probe is a function of this package, possibly with plain leading arguments bound by
`functools.partial` (a class name, an exercise id). `address_of` turns it into a `ProbeAddress` (module, function,
arguments) that can be pickled to a process which never imported the checks; `resolve` turns it back there. The
student kit names a public check's judge the same way, in autograder.course.judges (`JUDGES_PACKAGE`).
"""

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checking.probing import run_probe

PACKAGE = __name__.rpartition(".")[0]
JUDGES_PACKAGE = PACKAGE.rpartition(".")[0] + ".judges"
PLAIN_ARGUMENTS = (str, int, float, bool)

ProbeData = dict[str, Any]


@dataclass(frozen=True)
class ProbeAddress:
    """A module-level function of one package, with plain leading arguments bound: a probe, or a kit's judge."""

    module: str  # a module of autograder.course.probes (or .judges)
    function: str  # a module-level callable there
    args: tuple[Any, ...] = ()  # plain leading arguments (str, int, float, bool)


@dataclass(frozen=True)
class PlannedCheck:
    """One check as the grading child sees it: its id, its probe and the cases to run it on."""

    check_id: str
    probe: ProbeAddress
    cases: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class ExerciseProbes:
    """What the grading child needs to probe one exercise: the notebook names to pass, and its checks."""

    exercise_id: str
    names: tuple[str, ...]
    checks: tuple[PlannedCheck, ...]

    @property
    def check_ids(self) -> tuple[str, ...]:
        return tuple(check.check_id for check in self.checks)


def address_of(probe: Callable, package: str = PACKAGE) -> ProbeAddress:
    """The address of a function of `package` (optionally a partial with plain arguments)."""
    args: tuple[Any, ...] = ()
    if isinstance(probe, functools.partial):
        if probe.keywords or not all(isinstance(arg, PLAIN_ARGUMENTS) for arg in probe.args):
            raise TypeError(f"a probe may only bind plain positional arguments: {probe!r}")
        args, probe = tuple(probe.args), probe.func
    module, name = getattr(probe, "__module__", ""), getattr(probe, "__name__", "")
    if not module.startswith(package + ".") or getattr(importlib.import_module(module), name, None) is not probe:
        raise TypeError(f"must be a module-level function of {package}: {module}.{name}")
    return ProbeAddress(module, name, args)


def resolve(address: ProbeAddress, package: str = PACKAGE) -> Callable:
    """The function at `address`: only functions of `package` are ever looked up."""
    if not address.module.startswith(package + "."):
        raise ValueError(f"not a module of {package}: {address.module}")
    function = getattr(importlib.import_module(address.module), address.function)
    return functools.partial(function, *address.args) if address.args else function


def probe_checks(checks: Sequence[PlannedCheck], namespace: Mapping[str, Any],
                 between: Callable[[], None] | None = None) -> dict[str, list[ProbeData]]:
    """{check id: [probe data per case]}; a check stops at its first case that raised. `between()` runs after each
    case (the grading child takes back what the student's code set on the process: hooks, handlers)."""
    records: dict[str, list[ProbeData]] = {}
    for check in checks:
        probe = resolve(check.probe)
        records[check.check_id] = []
        for case in check.cases:
            data = run_probe(probe, namespace, case)
            if between is not None:
                between()
            records[check.check_id].append(data)
            if "error" in data:
                break
    return records
