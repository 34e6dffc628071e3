"""What the reference's variants give on a check's case, computed once per process.

The value variants' verdicts (autograder.course.value_variants) and the raising variants' errors
(autograder.course.error_variants) depend on the check (its probe, judge and expectations) and the case alone, never
on the learner's code: a grader that meets the same case in a whole class (one seed, the same cases for every
student) ran every variant through the full probe, gradients and slopes included, for each student whose check
failed there (issue 59: "expectations that depend on the case alone computed once per class"). Here they are kept,
keyed by what they are computed from, and handed out as immutable copies.

A run is remembered only when all it depends on can be read as plain data: a case read to the byte as a student's
record part is (autograder.checking.fingerprints: tensors with their dtype, shape, stride and bytes, floats by their
bits), and functions named at a module's top level, or functools.partial of one with such arguments. A closure or
lambda (whose captured state no name says) is computed each time, as before.
"""

import contextlib
import copy
import functools
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from autograder.checking.fingerprints import Unreadable, value_fingerprint

__all__ = ["computed_afresh", "remembered", "remembered_cases"]

MAX_REMEMBERED = 4096  # runs kept (each a short list of strings); the oldest go first
MAX_CASE_BYTES = 1 << 20  # of tensor data in a case (and a partial's arguments): a larger one is computed each time


def _case_key(value: object) -> str:
    """A digest of `value` read to the byte (fingerprints.value_fingerprint), or raise Unreadable: what is kept is
    the digest, so that a case's tensors are not held again as keys."""
    return hashlib.sha256(repr(value_fingerprint(value, [MAX_CASE_BYTES])).encode()).hexdigest()


def _callable_key(function: object) -> Hashable:
    """A function by its module and name (a top-level one only), or a partial of one with plain arguments."""
    if type(function) is functools.partial:
        return ("partial", _callable_key(function.func), _case_key([list(function.args), dict(function.keywords)]))
    module, name = getattr(function, "__module__", None), getattr(function, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name or "." in name:
        raise Unreadable  # a closure, a lambda or a method: state of its own that no name says
    return ("function", module, name)


class _Kept:
    """The runs kept, least recently used first out, and how often one was reused. Only the key and the result are
    kept: never the computation, which holds the case and the check's objects."""

    def __init__(self, size: int) -> None:
        self.size, self.reused, self.computed = size, 0, 0
        self.results: OrderedDict[Hashable, list[Any]] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], list[Any]]) -> list[Any]:
        if key in self.results:
            self.reused += 1
            self.results.move_to_end(key)
            return self.results[key]
        self.computed += 1
        result = self.results[key] = compute()
        if len(self.results) > self.size:
            self.results.popitem(last=False)
        return result


_AFRESH: ContextVar[bool] = ContextVar("attnkit_case_memo_afresh", default=False)
_KEPT = _Kept(MAX_REMEMBERED)  # one per process: what it holds depends on the reference and the cases alone


def remembered(kind: str, exercise: str, functions: Sequence[object], case: object,
               compute: Callable[[], list[Any]]) -> list[Any]:
    """`compute()` (plain data: [[mistake, text...], ...]), computed once per process for the same `kind`,
    exercise, check functions (probe, judge, expectations) and case; computed each time where any of them is not
    plain data. A copy each call: a caller may change what it is handed."""
    if _AFRESH.get():
        return compute()
    try:
        key = (kind, exercise, tuple(_callable_key(function) for function in functions), _case_key(case))
    except (Unreadable, RecursionError):
        return compute()
    return copy.deepcopy(_KEPT.get(key, compute))


@contextlib.contextmanager
def computed_afresh() -> Iterator[None]:
    """While open, every run is computed, none read from or added to what is kept: what is built for others (the
    student kit's stored expectations) owes nothing to what this process computed before."""
    token = _AFRESH.set(True)
    try:
        yield
    finally:
        _AFRESH.reset(token)


def remembered_cases() -> Mapping[str, int]:
    """How many runs are kept, and how often one was reused (for tests and benchmarks)."""
    return {"kept": len(_KEPT.results), "reused": _KEPT.reused, "computed": _KEPT.computed}
