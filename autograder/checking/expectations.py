"""What the reference says about one case, handed to a judge through one interface.

A check is declared once: its judge reads the reference's numbers by name from an `Expectations` and never learns
where they came from. The full kit computes them from the reference when the judge first asks (most cases pass on
the first comparison, so the wrong variants are never computed for them); the student kit reads the same names from
its stored vectors, which the build computed with the very same declaration.
"""

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

__all__ = [
    "Expectations", "FAILING_ALIKE", "RAISED", "WEIGHTS", "case_alone", "no_expectations", "reads_case_alone",
    "reads_record", "record_keys_read",
]

ExpectT = TypeVar("ExpectT", bound=Callable[..., "Expectations"])
# The mark case_alone sets on an expect function (or a functools.partial of one).
_CASE_ALONE = "__expectations_from_case_alone__"
# The mark reads_record sets: the record's keys the expect reads besides the case.
_RECORD_KEYS = "__expectations_from_record_keys__"

# The weights the other expectations were computed with (the student's own, in the full kit). No judge reads them:
# the student kit's build stores them in the case, and the probe loads them into the student's module
# (autograder.course.shared.loading), so that the stored expectations hold for it.
WEIGHTS = "weights"
# The errors the course's raising variants give on the case (autograder.checking.reproduction.VariantError, each in
# its plain form): read only by the diagnosis of an exception the student's code raised.
RAISED = "raised"
# The verdicts the course's value variants get from the same check on the case, in plain form
# (autograder.course.value_variants): read only where a property check fails, to find the mistakes that fail it alike.
FAILING_ALIKE = "failing_alike"


class Expectations(Mapping[str, Any]):
    """Named values, each computed on first use (`computed`) or given as it is (`stored`)."""

    def __init__(self, sources: Mapping[str, Callable[[], Any]]) -> None:
        self._sources = dict(sources)
        self._values: dict[str, Any] = {}

    @classmethod
    def computed(cls, **sources: Callable[[], Any]) -> "Expectations":
        return cls(sources)

    @classmethod
    def stored(cls, values: Mapping[str, Any]) -> "Expectations":
        expectations = cls({})
        expectations._values = dict(values)
        return expectations

    def __getitem__(self, name: str) -> Any:
        if name not in self._values:
            try:
                source = self._sources[name]
            except KeyError:
                raise KeyError(f"no expectation named {name!r}; known: {', '.join(self)}") from None
            self._values[name] = source()
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._values, *self._sources]))

    def __len__(self) -> int:
        return len(self._values.keys() | self._sources.keys())

    def materialised(self) -> dict[str, Any]:
        """Every value, computed now: what the student kit stores."""
        return {name: self[name] for name in self}


def case_alone(expect: ExpectT) -> ExpectT:
    """Marks a check's `expect(record, case)` as reading the case alone, never the student's record: the grader
    computes its Expectations once per case for a whole class (autograder.running.runner.ClassExpectations), not once
    per student. tests/test_class_expectations.py holds every marked expect to it."""
    setattr(expect, _CASE_ALONE, True)
    return expect


def reads_case_alone(expect: Callable[..., Any]) -> bool:
    """Whether `expect` (or the function a functools.partial binds) is marked case_alone."""
    while True:
        if getattr(expect, _CASE_ALONE, False):
            return True
        if not isinstance(expect, functools.partial):
            return False
        expect = expect.func


def reads_record(*keys: str) -> Callable[[ExpectT], ExpectT]:
    """Marks a check's `expect(record, case)` as reading the case and these keys of the student's record alone (the
    weights a module started with, what its layers saw): the grader computes its Expectations once per case for
    every student whose values under those keys are the same to the byte (autograder.running.runner.
    ClassExpectations), and hands the expect a record holding those keys only (any other read is the grader's error).
    tests/test_class_expectations.py holds every marked expect to it."""
    def mark(expect: ExpectT) -> ExpectT:
        setattr(expect, _RECORD_KEYS, tuple(keys))
        return expect
    return mark


def record_keys_read(expect: Callable[..., Any]) -> tuple[str, ...] | None:
    """The record keys `expect` (or the function a functools.partial binds) is marked reads_record with; None when
    it is not marked."""
    while True:
        keys = getattr(expect, _RECORD_KEYS, None)
        if keys is not None:
            return tuple(keys)
        if not isinstance(expect, functools.partial):
            return None
        expect = expect.func


@case_alone
def no_expectations(record: Mapping[str, Any], case: Mapping[str, Any]) -> Expectations:
    """For checks whose judge needs no reference (the case itself says what is right)."""
    return Expectations({})
