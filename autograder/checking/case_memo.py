"""What the reference's variants give on a check's case, computed once per process.

The value variants' verdicts (autograder.course.value_variants) and the raising variants' errors
(autograder.course.error_variants) depend on the check (its probe, judge and expectations) and the case alone, never
on the learner's code: a grader that meets the same case in a whole class (one seed, the same cases for every
student) ran every variant through the full probe, gradients and slopes included, for each student whose check
failed there (issue 59: "expectations that depend on the case alone computed once per class"). Here they are kept,
keyed by what they are computed from, and handed out as immutable copies.

A run is remembered only when all it depends on can be read as plain data: a case of numbers, strings and tensors
(keyed by their dtype, shape and bytes), and functions named at a module's top level, or functools.partial of one
with plain arguments. A closure or lambda (whose captured state no name says) is computed each time, as before.
"""

import copy
import functools
import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["remembered", "remembered_cases"]

MAX_REMEMBERED = 4096  # runs kept (each a short list of strings); the oldest go first
MAX_KEY_DEPTH = 8  # nesting of a case's containers read into its key; deeper is not remembered


def _plain_key(value: object, depth: int = 0) -> Hashable:
    """`value` as hashable plain data, or raise _Unkeyable."""
    if depth > MAX_KEY_DEPTH:
        raise _Unkeyable
    if value is None or type(value) in (bool, int, float, str):
        return (type(value).__name__, value)
    if type(value) is torch.Tensor:
        tensor = value.detach()
        if tensor.device.type == "meta" or tensor.is_sparse or tensor.is_quantized:
            raise _Unkeyable
        data = tensor.cpu().contiguous()
        return ("tensor", str(data.dtype), tuple(data.shape), bool(value.requires_grad),
                hashlib.sha256(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"").hexdigest())
    if isinstance(value, list | tuple) and type(value) in (list, tuple):  # a subclass may compare as it likes
        return (type(value).__name__, tuple(_plain_key(item, depth + 1) for item in value))
    if isinstance(value, dict) and type(value) is dict:
        items = sorted(value.items(), key=lambda item: repr(item[0]))
        return ("dict", tuple((_plain_key(key, depth + 1), _plain_key(item, depth + 1)) for key, item in items))
    raise _Unkeyable


def _callable_key(function: object) -> Hashable:
    """A function by its module and name (a top-level one only), or a partial of one with plain arguments."""
    if type(function) is functools.partial:
        return ("partial", _callable_key(function.func), _plain_key(list(function.args)),
                _plain_key(dict(function.keywords)))
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name or "." in name:
        raise _Unkeyable  # a closure, a lambda or a method: state of its own that no name says
    return ("function", module, name)


class _Unkeyable(Exception):
    """Something a run depends on that plain data does not say."""


@dataclass(frozen=True)
class _Run:
    key: Hashable
    compute: Callable[[], list[Any]] = field(compare=False, hash=False)


@functools.lru_cache(maxsize=MAX_REMEMBERED)
def _remembered(run: _Run) -> list[Any]:
    return run.compute()


def remembered(kind: str, exercise: str, functions: Sequence[object], case: object,
               compute: Callable[[], list[Any]]) -> list[Any]:
    """`compute()` (plain data: [[mistake, text...], ...]), computed once per process for the same `kind`,
    exercise, check functions (probe, judge, expectations) and case; computed each time where any of them is not
    plain data. A copy each call: a caller may change what it is handed."""
    try:
        key = (kind, exercise, tuple(_callable_key(function) for function in functions), _plain_key(case))
    except _Unkeyable:
        return compute()
    return copy.deepcopy(_remembered(_Run(key, compute)))


def remembered_cases() -> Mapping[str, int]:
    """How many runs are kept, and how often one was reused (for tests and benchmarks)."""
    info = _remembered.cache_info()
    return {"kept": info.currsize, "reused": info.hits, "computed": info.misses}
