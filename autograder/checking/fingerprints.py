"""Plain values told apart to the byte: the key two computations share only where their inputs are the same.

`value_fingerprint` reads exact plain types (no subclass: one may compare as it likes), floats by their bits (-0.0 is
not 0.0, each NaN its own), tensors by dtype, shape, stride, storage offset, requires_grad and every byte, and dicts
with their keys in order. What it cannot read so (another type, a tensor off the CPU or not strided, more tensor
bytes than the caller's budget, nesting deeper than MAX_DEPTH) raises Unreadable: the caller then shares nothing.
Used for the parts of a student's record an expect reads (autograder.running.record_parts) and for the cases the
reference's variants run on (autograder.checking.case_memo).
"""

import struct
from collections.abc import Hashable
from typing import Any

import torch

__all__ = ["MAX_DEPTH", "Unreadable", "value_fingerprint"]

MAX_DEPTH = 12


class Unreadable(Exception):
    """A value that cannot be read exactly as plain data, or more tensor bytes than the budget allows."""


def value_fingerprint(value: Any, budget: list[int], depth: int = 0) -> Hashable:
    """A hashable equal for two values exactly when they are the same to the byte; `budget` ([bytes left]) is
    spent on tensor data (Unreadable once it runs out)."""
    if depth > MAX_DEPTH:
        raise Unreadable
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return (kind.__name__, value)
    if kind is float:
        return ("float", struct.pack("<d", value))  # its bits: -0.0 and each NaN apart
    if kind is torch.Tensor:
        return _tensor(value, budget)
    if kind in (list, tuple):
        return (kind.__name__, tuple(value_fingerprint(item, budget, depth + 1) for item in value))
    if kind is dict:
        return ("dict", tuple((value_fingerprint(name, budget, depth + 1), value_fingerprint(item, budget, depth + 1))
                              for name, item in value.items()))
    raise Unreadable


def _tensor(value: torch.Tensor, budget: list[int]) -> Hashable:
    if value.device.type != "cpu" or value.layout != torch.strided or value.is_quantized or value.is_conj() \
            or value.is_neg():
        raise Unreadable
    size = value.numel() * value.element_size()
    budget[0] -= size
    if budget[0] < 0:
        raise Unreadable
    flat = value.detach().contiguous().reshape(-1)
    data = flat.view(torch.uint8).numpy().tobytes() if size else b""
    return ("tensor", str(value.dtype), tuple(value.shape), tuple(value.stride()), value.storage_offset(),
            value.requires_grad, data)
