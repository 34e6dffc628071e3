"""Where a graded attempt first departs from the notes' steps, found in the grader from the child's trace.

The grading child never decides anything and holds no reference: the grader judges an exercise's probe data, and
for an exercise that failed asks the child (autograder.isolation.supervisor's answer to "probed") to trace one
case, `trace_request`: the first failing case of the first failing check whose expectations declare the notes'
steps. The child sends back the tensors the student's code made on it (autograder.checking.tensor_trace), and
`with_departure` runs the reference's steps on that case here and finds the first one the student's run does not
reproduce (autograder.checking.departure), kept as that check's `departure_step` in the student's record: the class
report counts students by it, per exercise. A passing exercise asks for nothing, so it costs nothing more.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from autograder.checking.check_types import FAILED, Check, CheckResult
from autograder.checking.departure import STEPS, find_departure, recorded_output
from autograder.checking.probing import grader_torch_state
from autograder.checking.tensor_trace import TracedTensor
from autograder.course import catalog
from autograder.isolation.child_task import TraceRequest
from autograder.running.runner import cases_for
from autograder.running.threads import single_threaded

__all__ = ["trace_request", "with_departure", "with_departure_lost"]

Records = Mapping[str, Sequence[dict[str, Any]]]


def trace_request(exercise_id: str, results: Sequence[CheckResult], records: Records,
                  seed: int) -> TraceRequest | None:
    """The one case of the exercise to trace: the first failing case of its first failing check (in check order)
    whose expectations declare the notes' steps; None when every check passed or none declares them."""
    checks = {check.id: check for check in catalog.checks_of(exercise_id)}
    for result in results:
        check = checks.get(result.id)
        if result.status != FAILED or result.failed_case is None or check is None:
            continue
        if _steps(check, records, result.failed_case, seed) is not None:
            return TraceRequest(exercise_id, result.id, result.failed_case)
    return None


def with_departure(results: Sequence[CheckResult], request: TraceRequest, traced: Sequence[TracedTensor],
                   records: Records, seed: int) -> list[CheckResult]:
    """`results` with the traced check's `departure_step`: the first of the notes' steps the student's tensors do
    not reproduce on the traced case ("" where every step appears, or where the case does not show it:
    Departure.located_step)."""
    check = next((check for check in catalog.checks_of(request.exercise) if check.id == request.check_id), None)
    steps = None if check is None else _steps(check, records, request.case, seed)
    if steps is None:
        return list(results)
    output = recorded_output(records[request.check_id][request.case])
    with single_threaded(), grader_torch_state():
        departure = find_departure(steps, traced, output)
    return [dataclasses.replace(result, departure_step=departure.located_step) if result.id == request.check_id
            else result for result in results]


def with_departure_lost(results: Sequence[CheckResult], check_id: str, why: str) -> list[CheckResult]:
    """`results` with the traced check marked: its departure was asked for and not computed, and `why`
    (autograder.checking.check_types.Untraced). Its record says so, rather than reading as a run with no departure."""
    return [dataclasses.replace(result, departure_step="", departure_lost=why) if result.id == check_id else result
            for result in results]


def _steps(check: Check[Any, Any], records: Records, index: int, seed: int) -> Any:
    """The case's declared steps (the reference's, computed here), or None when the check declares none."""
    data = records.get(check.id, ())
    cases = cases_for(check, seed)
    if index >= len(data) or index >= len(cases) or "error" in data[index]:
        return None
    with single_threaded(), grader_torch_state():
        expectations = check.expect(data[index], cases[index])
        if STEPS not in set(expectations):
            return None
        try:
            return expectations[STEPS]
        except (KeyError, TypeError):  # the steps read what the record lacks: a module with other parameter names,
            return None  # or heads it does not register (issue 58); no steps to trace, as check(...) reads it
        except (RuntimeError, ValueError, IndexError):
            # Steps computed with the student's own weights, of shapes no step can be computed with (W_query built
            # (d_out, d_in) for x @ W_query): none to trace, as check(...) reads it (diagnosing._entry), never an
            # internal error in the instructor's log (12w's wy-v1-15).
            return None
