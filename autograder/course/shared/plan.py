"""Which probe a check runs, as plain data: how the grader tells the grading child what to probe.

A check's probe is a function of an exercise folder's `probe` module (autograder.course.<notebook>.<exercise>.probe),
possibly with plain leading arguments bound by `functools.partial` (a class name, an exercise id). `address_of` turns
it into a `ProbeAddress` (module, function, arguments) that can be pickled to a process which never imported the
checks; `resolve` turns it back there. The student kit names a public check's judge the same way, in a folder's
`judge` module (`JUDGE_ROLE`).
"""

import functools
import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checking.probing import OWN_SLOPE_FIELDS, run_probe, with_own_slopes_of
from autograder.checking.shared_builds import one_check
from autograder.checking.tensor_trace import OPERANDS, probe_with_raised_operands
from autograder.course.shared.roles import JUDGE_ROLE, PROBE_ROLE, in_role, modules_in_role

__all__ = [
    "ExerciseProbes", "JUDGE_ROLE", "PlannedCheck", "ProbeAddress", "address_of", "probe_checks",
    "resolve", "with_own_slopes", "with_own_slopes_taken",
]

PLAIN_ARGUMENTS = (str, int, float, bool)

ProbeData = dict[str, Any]


@dataclass(frozen=True)
class ProbeAddress:
    """A module-level function of one package, with plain leading arguments bound: a probe, or a kit's judge."""

    module: str  # a folder's probe module (or judge module) under autograder.course
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


def address_of(probe: Callable, role: str = PROBE_ROLE) -> ProbeAddress:
    """The address of a function of a folder's `role` module (optionally a partial with plain arguments)."""
    args: tuple[Any, ...] = ()
    if isinstance(probe, functools.partial):
        if probe.keywords or not all(isinstance(arg, PLAIN_ARGUMENTS) for arg in probe.args):
            raise TypeError(f"a probe may only bind plain positional arguments: {probe!r}")
        args, probe = tuple(probe.args), probe.func
    module, name = getattr(probe, "__module__", ""), getattr(probe, "__name__", "")
    if not in_role(module, role) or getattr(importlib.import_module(module), name, None) is not probe:
        raise TypeError(f"must be a module-level function of an exercise folder's {role} module: {module}.{name}")
    return ProbeAddress(module, name, args)


def resolve(address: ProbeAddress, role: str = PROBE_ROLE) -> Callable:
    """The function at `address`: only functions of a folder's `role` module are ever looked up."""
    if not in_role(address.module, role):
        raise ValueError(f"not an exercise folder's {role} module: {address.module}")
    function = getattr(importlib.import_module(address.module), address.function)
    return functools.partial(function, *address.args) if address.args else function


def probe_checks(checks: Sequence[PlannedCheck], namespace: Mapping[str, Any],
                 between: Callable[[], None] | None = None) -> dict[str, list[ProbeData]]:
    """{check id: [probe data per case]}; a check stops at its first case that raised. `between()` runs after each
    case (the grading child takes back what the student's code set on the process: hooks, handlers). No stand-in of
    autograder.checking.deferred_imports is open around the probes: a probe opens them around its own work on the meta
    device alone, so the student's code sees the modules a learner's own call sees. A check's cases share what its
    probe builds with autograder.checking.shared_builds.built_once (one_check: what is the same for every case)."""
    records: dict[str, list[ProbeData]] = {}
    for check in checks:
        probe = resolve(check.probe)
        records[check.check_id] = []
        with one_check():
            for case in check.cases:
                data = run_probe(probe, namespace, case)
                if between is not None:
                    between()
                if "error" in data:
                    data = _with_operands(probe, namespace, case, data, between)
                records[check.check_id].append(data)
                if "error" in data:
                    break
    return records


def _with_operands(probe: Callable, namespace: Mapping[str, Any], case: Mapping[str, Any], data: ProbeData,
                   between: Callable[[], None] | None) -> ProbeData:
    """`data` (a case that raised) with the shapes the op that raised read (tensor_trace.OPERANDS), from the case run
    once more under a trace that keeps no tensor: a known mistake is named from an error only when its variant's op
    read the same shapes, not only when the message's numbers coincide (autograder.checking.reproduction). As it is
    where the second run raised otherwise (code that counts its calls): its shapes are not this error's."""
    again = probe_with_raised_operands(probe, namespace, case)
    if between is not None:
        between()
    error, raised = data.get("error"), again.get("error")
    if (not isinstance(error, dict) or not isinstance(raised, dict) or OPERANDS not in raised
            or raised.get("type") != error.get("type") or raised.get("message") != error.get("message")):
        return data
    return {**data, "error": {**error, OPERANDS: raised[OPERANDS]}}


def with_own_slopes(checks: Sequence[PlannedCheck], namespace: Mapping[str, Any],
                    records: Mapping[str, Sequence[ProbeData]],
                    failed: Collection[str]) -> dict[str, list[ProbeData]] | None:
    """`records`, probed inside autograder.checking.probing.own_slopes_later(), with the own slopes of the `failed`
    checks' gradients: those checks probed once more (every case, as the first time), their slopes alone taken into
    the first run's records (with_own_slopes_taken). None where no failed check's probe reads a slope (nothing to
    judge again). A passing check needs none: a judge reads a slope only where a gradient is wrong, which fails it."""
    again = probe_checks([check for check in checks if check.check_id in failed], namespace)
    if not any(_has_own_slope(data) for per_case in again.values() for data in per_case):
        return None
    return with_own_slopes_taken(records, again)


def with_own_slopes_taken(records: Mapping[str, Sequence[ProbeData]],
                          again: Mapping[str, Sequence[Any]]) -> dict[str, list[ProbeData]]:
    """`records` with the own slopes of `again` ({check id: [a second look per case]}, or the slope fields alone, as
    a grading child sends them) taken in at their places, case by case (with_own_slopes_of); a case `again` lacks,
    or a check it lacks, stays as it is."""
    merged = {check_id: list(per_case) for check_id, per_case in records.items()}
    for check_id, per_case in again.items():
        if check_id in merged:
            merged[check_id] = [with_own_slopes_of(data, per_case[index]) if index < len(per_case) else data
                                for index, data in enumerate(merged[check_id])]
    return merged


def _has_own_slope(data: object) -> bool:
    return isinstance(data, dict) and any(key in OWN_SLOPE_FIELDS or _has_own_slope(value)
                                          for key, value in data.items())


def probe_modules() -> tuple[str, ...]:
    """Every exercise folder's probe module: what the grading child's zygote imports (and nothing else of the
    course)."""
    return modules_in_role(PROBE_ROLE)
