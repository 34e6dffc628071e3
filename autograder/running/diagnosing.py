"""The diagnosis stage of check(...), between judging and rendering: for each failing public check that names no
known mistake (and is not folded under an earlier one of the same message), where the learner's computation first
departs from the notes' steps, proven by their own run (autograder.checking.departure). Failures departing at one
step are then one row of the table (autograder.checking.feedback.rows).

Runs only when a check failed (a passing check pays nothing): the failing case's probe is run once more under the
tensor trace (autograder.checking.tensor_trace), in the process that ran the probes, and the steps come from the
case's expectations (the reference's, computed; or the student kit's, stored). Both kits run it: it imports no
reference, declaration or catalogue.
"""

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import torch

from autograder.checking.check_types import FAILED, CheckResult
from autograder.checking.departure import STEPS, Departure, departure_line, find_departure
from autograder.checking.expectations import Expectations
from autograder.checking.feedback import rows
from autograder.checking.tensor_trace import traced_probe
from autograder.course.shared.plan import ProbeAddress, resolve
from autograder.i18n import Messages

__all__ = ["DiagnosedCheck", "with_departures"]


class DiagnosedCheck(Protocol):
    """What the stage needs of a check the runtime ran: its probe, its cases and its expectations per case."""

    @property
    def probe(self) -> ProbeAddress: ...
    @property
    def cases(self) -> Callable[[], Sequence[dict[str, Any]]]: ...
    @property
    def expectations(self) -> Callable[[int, dict[str, Any], dict[str, Any]], Expectations]: ...


def with_departures(results: Sequence[CheckResult], checks: Sequence[DiagnosedCheck],
                    records: Mapping[str, Sequence[dict[str, Any]]], namespace: Mapping[str, Any], lang: str,
                    messages: Messages) -> list[CheckResult]:
    """`results` (one per check of `checks`, in order), each failing public one that names no mistake with its
    departure line and step (so that the table folds the failures departing at one step into one row); the others
    as they are. A failure folded under another of the same message is not traced again: it reads the same."""
    diagnosed: list[CheckResult] = []
    for result, check in zip(results, checks, strict=True):
        departure = None
        if (result.status == FAILED and not result.hidden and result.misconception is None
                and result.failed_case is not None and not _reads_as_before(result, diagnosed)):
            departure = _departure(result, check, records.get(result.id, ()), namespace)
        line = "" if departure is None else departure_line(departure, lang, messages)
        diagnosed.append(dataclasses.replace(result, departure=line, departure_step=departure.step or "")
                         if line and departure is not None else result)
    return diagnosed


def _reads_as_before(result: CheckResult, earlier: Sequence[CheckResult]) -> bool:
    """Whether the table already folds `result` under an earlier row (the same cause, read without departures)."""
    return any(row.shown is not result and any(same is result for same in row.same) for row in rows([*earlier, result]))


def _departure(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
               namespace: Mapping[str, Any]) -> Departure | None:
    index = result.failed_case
    cases = check.cases()
    if index is None or index >= len(cases) or index >= len(records):
        return None
    case = cases[index]
    expectations = check.expectations(index, records[index], case)
    if STEPS not in set(expectations):
        return None
    steps = expectations[STEPS]
    record, traced = traced_probe(resolve(check.probe), namespace, case)
    output = record.get("output")
    return find_departure(steps, traced, output if isinstance(output, torch.Tensor) else None)
