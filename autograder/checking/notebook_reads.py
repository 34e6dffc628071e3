"""Integers a learner's code reads from the notebook instead of from what it is given (issue 58): a merge that reshapes
to the notebook's `b` and `num_tokens`, a forward that views with the notebook's `d_out`. Such code is right on the
notebook's own input and wrong on any other, where every check sees another symptom of one cause.

The names come from the code objects alone (the globals an exercise's function or class methods load, not the
attributes it reads), their values from the function's own globals, and only plain integers count. That the code
depends on them is proven by running a failing case again: with copies of the learner's functions and classes whose
globals are the same, twice, then with each of those integers changed; a result (or error) that is the same on the
two first runs and another on the third proves it. Never read from names or messages alone.
"""

import dis
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from autograder.checking.tensor_trace import recorded_output

__all__ = ["NotebookRead", "notebook_ints_read", "reads_change_the_run"]

MAX_READS = 8  # integers said at most: code reading more is said nothing of (a line of names teaches nothing)
MAX_VALUE = 10**9  # an integer said is a size: below this in magnitude
MAX_FUNCTIONS = 64  # functions of the learner's classes looked through at most
LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


@dataclass(frozen=True)
class NotebookRead:
    """A global the learner's code loads, bound in the notebook to a plain integer."""

    name: str
    value: int


def notebook_ints_read(objects: Iterable[object]) -> tuple[NotebookRead, ...]:
    """The notebook's integers the code of `objects` (the exercise's functions and classes) loads as globals, by
    name; () when there are none or more than MAX_READS. A bool is no size; an int subclass is not read (its text is
    the learner's)."""
    found: dict[str, int] = {}
    for function in _functions(objects):
        if _of_a_module(function):
            continue  # a library's function handed in (F.softmax): its globals are its module's, not the notebook's
        for name in sorted(_global_names(function.__code__)):
            value = function.__globals__.get(name)
            # A name is said in the feedback: a short ASCII identifier only, and a size-like number (no text of the
            # learner's beyond that; an int of thousands of digits cannot even be printed).
            if (type(value) is int and abs(value) < MAX_VALUE and name.isascii() and name.isidentifier()
                    and len(name) <= 40):  # noqa: E721 - exactly int: no subclass, whose repr is the learner's
                found.setdefault(name, value)
    if len(found) > MAX_READS:
        return ()
    return tuple(NotebookRead(name, value) for name, value in sorted(found.items()))


def reads_change_the_run(run: Callable[[Mapping[str, Any]], Mapping[str, Any]], namespace: Mapping[str, Any],
                         reads: tuple[NotebookRead, ...]) -> bool:
    """Whether the probe `run` (a namespace in, a record out) gives the same record twice on copies of `namespace`'s
    objects with their own globals, and another one when each integer of `reads` is one more: what the code does
    on that case depends on those notebook variables. False when `reads` is empty or the runs are not repeatable."""
    if not reads:
        return False
    try:
        same, again = _with_globals(namespace, {}), _with_globals(namespace, {})
        changed = _with_globals(namespace, {read.name: read.value + 1 for read in reads})
    except Exception:  # noqa: BLE001 - a class of the learner's that refuses a subclass (__init_subclass__): no proof
        return False
    first, second = run(same), run(again)
    if not _same_record(first, second):
        return False
    return not _same_record(first, run(changed))


def _of_a_module(function: types.FunctionType) -> bool:
    """Whether the function's globals are an imported module's (not the notebook's `__main__`)."""
    name = function.__globals__.get("__name__")
    module = sys.modules.get(name) if isinstance(name, str) and name != "__main__" else None
    return module is not None and getattr(module, "__dict__", None) is function.__globals__


def _functions(objects: Iterable[object]) -> Iterator[types.FunctionType]:
    count = 0
    for value in objects:
        candidates: Iterable[object]
        if isinstance(value, type):
            candidates = list(vars(value).values())
        elif isinstance(value, torch.nn.Module):
            candidates = list(vars(type(value)).values())
        else:
            candidates = [value]
        for candidate in candidates:
            function = _function_of(candidate)
            if function is not None and count < MAX_FUNCTIONS:
                count += 1
                yield function


def _function_of(value: object) -> types.FunctionType | None:
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    elif isinstance(value, types.MethodType):
        value = value.__func__
    return value if isinstance(value, types.FunctionType) else None


def _global_names(code: types.CodeType, depth: int = 0) -> set[str]:
    """The names `code` loads as globals, and the code objects nested in it (a comprehension, a lambda, a helper
    defined inside): LOAD_GLOBAL, never an attribute's name (`self.num_heads` is no global)."""
    names = {str(instruction.argval) for instruction in dis.get_instructions(code) if instruction.opname in LOADS}
    if depth < 4:
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                names |= _global_names(constant, depth + 1)
    return names


def _with_globals(namespace: Mapping[str, Any], changed: Mapping[str, int]) -> dict[str, Any]:
    """`namespace` with each function copied onto a copy of its globals, and each class subclassed with copies of
    its own functions, those globals holding `changed`'s values."""
    copies: dict[int, dict[str, Any]] = {}

    def globals_of(function: types.FunctionType) -> dict[str, Any]:
        key = id(function.__globals__)
        if key not in copies:
            copies[key] = {**function.__globals__, **{name: value for name, value in changed.items()
                                                      if name in function.__globals__}}
        return copies[key]

    def copied(function: types.FunctionType) -> types.FunctionType:
        twin = types.FunctionType(function.__code__, globals_of(function), function.__name__, function.__defaults__,
                                  function.__closure__)
        twin.__kwdefaults__ = function.__kwdefaults__
        twin.__qualname__ = function.__qualname__
        return twin

    result: dict[str, Any] = {}
    for name, value in namespace.items():
        if isinstance(value, types.FunctionType):
            result[name] = copied(value)
        elif isinstance(value, type):
            own = {key: member for key, member in vars(value).items() if isinstance(member, types.FunctionType)}
            # A subclass: `super()` in a copied method still finds the class it was written in (its __class__ cell).
            result[name] = type(value.__name__, (value,), {key: copied(member) for key, member in own.items()})
        else:
            result[name] = value
    return result


def _same_record(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two probe records say the same: the same error (type and text), or outputs equal in shape, dtype and
    every entry (NaN where NaN)."""
    error, other_error = one.get("error"), other.get("error")
    if error is not None or other_error is not None:
        if not (isinstance(error, Mapping) and isinstance(other_error, Mapping)):
            return False
        return (error.get("type"), error.get("message")) == (other_error.get("type"), other_error.get("message"))
    output, other_output = recorded_output(one), recorded_output(other)
    if output is None or other_output is None:
        return output is None and other_output is None
    if output.shape != other_output.shape or output.dtype != other_output.dtype:
        return False
    first, second = output.detach().cpu(), other_output.detach().cpu()
    if first.is_floating_point():
        return bool(torch.equal(torch.isnan(first), torch.isnan(second))) and bool(
            torch.equal(first.nan_to_num(0.0), second.nan_to_num(0.0)))
    return bool(torch.equal(first, second))
