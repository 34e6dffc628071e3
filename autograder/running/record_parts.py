"""The parts of a student's record an expect reads (expectations.reads_record), told apart to the byte.

The grader computes a check's expectations once for every student whose record holds the same values under the keys
its expect reads (autograder.running.runner.ClassExpectations): most of a class keeps the given constructor, so its
modules start from the same weights. `fingerprint` says when two such parts are the same
(autograder.checking.fingerprints: exact plain types, tensors to the byte with their stride and offset, dict keys in
order). What it cannot read so (another type, a tensor off the CPU, more than MAX_PART_BYTES of tensor data) has no
fingerprint and is never shared.
`RecordPart` is what the expect is handed: a copy of those keys alone, so that what it computes later (lazily, for
another student too) reads the very bytes that were compared, and a read of any other key is a loud error.
"""

import copy
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from autograder.checking.fingerprints import Unreadable, value_fingerprint

__all__ = ["MAX_PART_BYTES", "RecordPart", "fingerprint"]

MAX_PART_BYTES = 1 << 20  # of tensor data in one record's part: larger parts are computed for their student alone
ABSENT = ("absent",)  # a key the record does not hold (a case that raised keeps no weights)


def fingerprint(record: Mapping[str, Any], keys: Sequence[str]) -> tuple[Hashable, int] | None:
    """(a hashable that is equal for two records exactly when their values under `keys` are, the tensor bytes it
    holds), or None when a value cannot be compared so."""
    budget = [MAX_PART_BYTES]
    try:
        found = tuple(value_fingerprint(record[key], budget) if key in record else ABSENT for key in keys)
    except (Unreadable, RecursionError):
        return None
    return found, MAX_PART_BYTES - budget[0]


class RecordPart(Mapping[str, Any]):
    """A copy of the record's values under `keys`; reading another key is the grader's error (LookupError), never
    another student's data."""

    def __init__(self, record: Mapping[str, Any], keys: Sequence[str]) -> None:
        self._keys = tuple(keys)
        self._values = copy.deepcopy({key: record[key] for key in keys if key in record})

    def __getitem__(self, name: str) -> Any:
        if name not in self._keys:
            self._undeclared(name)
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @staticmethod
    def _undeclared(name: str) -> NoReturn:
        raise LookupError(f"an expect marked reads_record read {name!r}, which it does not declare")
