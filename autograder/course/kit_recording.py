"""Build time: what the student kit stores for a public check, computed from the check's own declaration.

For each public case the check's probe runs on the reference, exactly as it runs on a student's code, and the
check's `expect` turns that data into the expectations its judge reads. The kit stores the case, the weights those
expectations hold for (the probe loads them into the student's module: autograder.course.shared.loading) and the
expectations themselves; it then runs the same probe and the same judge. Nothing here is written per check, so a
new public check needs nothing here. This module runs the reference: it is as protected as the checks, and the kit
never carries it.
"""

from dataclasses import dataclass
from typing import Any

from attnkit import solutions
from autograder.checking.case_memo import computed_afresh
from autograder.checking.check_types import Check
from autograder.checking.departure import STEPS
from autograder.checking.expectations import WEIGHTS
from autograder.checking.parameter_moves import STEPS_MOVED, stored_table
from autograder.checking.probing import run_probe
from autograder.course.shared.loading import LOAD_WEIGHTS

__all__ = ["record_case"]


@dataclass(frozen=True)
class RecordedCase:
    """One public case as the kit stores it: the live case (plus the weights to load, if any) and what to expect."""

    case: dict[str, Any]
    expected: dict[str, Any]


def record_case(check: Check, case: dict[str, Any], names: tuple[str, ...]) -> RecordedCase:
    """The case's expectations for the reference's weights under the case's seed; `names` are the notebook names
    the exercise's checks receive (its Exercise's names)."""
    data = run_probe(check.probe, {name: getattr(solutions, name) for name in names}, case)
    if "error" in data:
        raise RuntimeError(f"{check.id}: the reference failed its own probe: {data['error']}")
    with computed_afresh():  # the same bytes from any process, whatever it graded before (a fresh CLI build's)
        expected = check.expect(data, case).materialised()
        if STEPS in expected and isinstance(data.get("state"), dict):
            # Which steps each tensor of the module's state moves: the kit cannot move the reference's (it has none).
            expected[STEPS_MOVED] = stored_table(lambda record: check.expect(record, case), data)
    weights = expected.pop(WEIGHTS, None)
    return RecordedCase(dict(case) if weights is None else {**case, LOAD_WEIGHTS: weights}, expected)
