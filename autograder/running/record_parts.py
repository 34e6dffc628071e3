"""The parts of a student's record an expect reads (expectations.reads_record), told apart to the byte.

The grader computes a check's expectations once for every student whose record holds the same values under the keys
its expect reads (autograder.running.runner.ClassExpectations): most of a class keeps the given constructor, so its
modules start from the same weights. `fingerprint` says when two such parts are the same: the same plain types
(exact types only, no subclass), the same tensors to the byte (dtype, shape, stride, offset and every byte: -0.0 is
not 0.0, each NaN its own bits), the same dict keys in the same order. What it cannot read so (another type, a
tensor off the CPU, more than MAX_PART_BYTES of tensor data) has no fingerprint and is never shared.
`RecordPart` is what the expect is handed: a copy of those keys alone, so that what it computes later (lazily, for
another student too) reads the very bytes that were compared, and a read of any other key is a loud error.
"""

import copy
import struct
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

import torch

__all__ = ["MAX_PART_BYTES", "RecordPart", "fingerprint"]

MAX_PART_BYTES = 1 << 20  # of tensor data in one record's part: larger parts are computed for their student alone
MAX_DEPTH = 12
ABSENT = ("absent",)  # a key the record does not hold (a case that raised keeps no weights)


class _TooLarge(Exception):
    """More tensor bytes than MAX_PART_BYTES, or a value fingerprint cannot read exactly."""


def fingerprint(record: Mapping[str, Any], keys: Sequence[str]) -> tuple[Hashable, int] | None:
    """(a hashable that is equal for two records exactly when their values under `keys` are, the tensor bytes it
    holds), or None when a value cannot be compared so."""
    budget = [MAX_PART_BYTES]
    try:
        found = tuple(_of(record[key], budget, 0) if key in record else ABSENT for key in keys)
    except (_TooLarge, RecursionError):
        return None
    return found, MAX_PART_BYTES - budget[0]


def _of(value: Any, budget: list[int], depth: int) -> Hashable:
    if depth > MAX_DEPTH:
        raise _TooLarge
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return (kind.__name__, value)
    if kind is float:
        return ("float", struct.pack("<d", value))  # its bits: -0.0 and each NaN apart
    if kind is torch.Tensor:
        return _tensor(value, budget)
    if kind in (list, tuple):
        return (kind.__name__, tuple(_of(item, budget, depth + 1) for item in value))
    if kind is dict:
        return ("dict", tuple((_of(name, budget, depth + 1), _of(item, budget, depth + 1))
                              for name, item in value.items()))
    raise _TooLarge


def _tensor(value: torch.Tensor, budget: list[int]) -> Hashable:
    if value.device.type != "cpu" or value.layout != torch.strided or value.is_quantized or value.is_conj() \
            or value.is_neg():
        raise _TooLarge
    size = value.numel() * value.element_size()
    budget[0] -= size
    if budget[0] < 0:
        raise _TooLarge
    flat = value.detach().contiguous().reshape(-1)
    data = flat.view(torch.uint8).numpy().tobytes() if size else b""
    return ("tensor", str(value.dtype), tuple(value.shape), tuple(value.stride()), value.storage_offset(),
            value.requires_grad, data)


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
