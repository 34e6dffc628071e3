"""Which of a case's declared steps move when one tensor of the module's state moves.

The notes compute each step of a module exercise from the module's state (its parameters and buffers). Moving one
parameter's values and computing the steps again tells which steps are computed from it: that is a fact about the
notes' computation on this case, and what ties a learner's departing step to a parameter their output does not use
(autograder.running.diagnosing). The full kit computes it from the learner's own state; the student kit, which has
no reference, stores it per public case at build time (autograder.course.kit_recording) for the weights it loads
into the learner's module, and reads it back here: both kits answer the same question the same way.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checking.departure import STEPS, StepValues, normalised_value, values_close
from autograder.checking.expectations import Expectations

__all__ = ["STEPS_MOVED", "ParameterMoves", "parameter_moves", "stored_parameter_moves", "stored_table"]

# The expectation the student kit stores per module case: for each tensor of the state, its shape and which
# declared steps move with it (stored_table's form).
STEPS_MOVED = "steps_moved"

# Errors the reference may raise on a moved state (the learner's run's data): nothing is proven, nothing stops.
_UNCOMPUTABLE = (KeyError, TypeError, RuntimeError, ValueError, IndexError, AttributeError)


@dataclass(frozen=True)
class ParameterMoves:
    """For one tensor of the state: the declared steps computed both before and after it moved (`declared`) and
    those of them whose values moved (`moved`)."""

    declared: frozenset[str]
    moved: frozenset[str]


def parameter_moves(expect: Callable[[dict[str, Any]], Expectations], record: Mapping[str, Any],
                    name: str) -> ParameterMoves | None:
    """What moving state tensor `name` of `record` (a probe's record of a module case) does to the steps `expect`
    computes from a record; None where the record holds no such tensor or the steps cannot be computed."""
    state = record.get("state")
    if not isinstance(state, Mapping) or not isinstance(state.get(name), torch.Tensor):
        return None
    parameter = state[name]
    try:  # the state is the learner's run's data: a tensor no arithmetic takes proves nothing, and stops nothing
        before = _values_by_step(expect(dict(record))[STEPS])
        moves = torch.randn(parameter.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        moved_record = {**record, "state": {**state, name: (parameter.double() + moves).to(parameter.dtype)}}
        after = _values_by_step(expect(moved_record)[STEPS])
    except _UNCOMPUTABLE:
        return None
    declared = frozenset(before) & frozenset(after)
    return ParameterMoves(declared, frozenset(step for step in declared
                                              if not _same_values(before[step], after[step])))


def stored_table(expect: Callable[[dict[str, Any]], Expectations], record: Mapping[str, Any]) -> dict[str, Any]:
    """What the student kit stores for a module case (STEPS_MOVED): each state tensor's shape and moves."""
    state = record.get("state")
    table: dict[str, Any] = {}
    for name, value in (state.items() if isinstance(state, Mapping) else ()):
        moves = parameter_moves(expect, record, name) if isinstance(value, torch.Tensor) else None
        if moves is not None:
            table[name] = {"shape": list(value.shape), "declared": sorted(moves.declared),
                           "moved": sorted(moves.moved)}
    return table


def stored_parameter_moves(table: Any, record: Mapping[str, Any], name: str) -> ParameterMoves | None:
    """The moves stored for tensor `name` (stored_table's form: hostile-safe, as any stored data), where the
    learner's state holds a tensor of that name and shape (the kit loaded the stored weights into it)."""
    state = record.get("state")
    entry = table.get(name) if isinstance(table, Mapping) else None
    if (not isinstance(entry, Mapping) or not isinstance(state, Mapping)
            or not isinstance(state.get(name), torch.Tensor) or list(state[name].shape) != entry.get("shape")):
        return None
    declared, moved = entry.get("declared"), entry.get("moved")
    if not isinstance(declared, list) or not isinstance(moved, list):
        return None
    return ParameterMoves(frozenset(map(str, declared)), frozenset(map(str, moved)))


def _values_by_step(steps: StepValues) -> dict[str, list[torch.Tensor]]:
    """Each declared step's values (its first declaration where a step is declared twice)."""
    values: dict[str, list[torch.Tensor]] = {}
    for entry in steps:
        values.setdefault(str(entry[0]), [value for value in entry[1] if isinstance(value, torch.Tensor)])
    return values


def _same_values(one: Sequence[torch.Tensor], other: Sequence[torch.Tensor]) -> bool:
    """Whether two declarations of a step hold the same values (a step's values before and after a tensor moved)."""
    return len(one) == len(other) and all(a.shape == b.shape and values_close(normalised_value(a), normalised_value(b))
                                          for a, b in zip(one, other, strict=True))
