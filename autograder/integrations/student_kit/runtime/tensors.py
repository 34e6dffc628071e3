"""Tensors as plain JSON: {"__tensor__": dtype, "shape", and "bytes" or "values"}.

A float tensor's values are its exact little-endian bytes in base64 ("bytes"): a fresh kernel's first check reads
them with one base64 decode, where parsing a million float literals (the kit's vectors, 8 MB as literals) and
turning the lists into tensors took ~0.5 s (issue 59). They read back bit for bit, non-finite values included. An
integer or boolean tensor's values stay a flat JSON list ("values").

JSON rather than torch.save or numpy's .npz: it can never run code when read (no pickle at all, not even a
restricted one), it is byte-for-byte deterministic (a zip archive stores timestamps), it needs no extra
dependency, and any JSON and base64 reader can audit what the kit stores.
"""

import base64
import math
import sys
from collections.abc import Mapping
from typing import Any

import torch

__all__ = ["decode", "encode"]

TENSOR = "__tensor__"
# float16 and bfloat16 values are written as the Python floats they are exactly, and read back exactly.
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int64": torch.int64, "bool": torch.bool}
FLOATS = ("float32", "float64", "float16", "bfloat16")


def encode(value: Any) -> Any:
    """`value` with every tensor (also inside dicts, lists and tuples) turned into JSON-ready data."""
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value)
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a non-finite float outside a tensor cannot be stored")
    return value


def decode(value: Any) -> Any:
    """The inverse of encode (tuples come back as lists)."""
    if isinstance(value, dict):
        if TENSOR in value:
            return _decode_tensor(value)
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value


def _encode_tensor(tensor: torch.Tensor) -> dict[str, Any]:
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        raise ValueError(f"cannot store a tensor of dtype {dtype}; storable: {', '.join(DTYPES)}")
    flat = tensor.detach().cpu().contiguous().reshape(-1)
    if dtype in FLOATS:
        raw = bytes(_little_endian(flat.view(torch.uint8).reshape(-1, flat.element_size())).reshape(-1).tolist())
        return {TENSOR: dtype, "shape": list(tensor.shape), "bytes": base64.b64encode(raw).decode("ascii")}
    values = [int(v) for v in flat.tolist()] if dtype == "bool" else flat.tolist()
    return {TENSOR: dtype, "shape": list(tensor.shape), "values": values}


def _decode_tensor(record: Mapping[str, Any]) -> torch.Tensor:
    dtype = DTYPES[record[TENSOR]]
    if "bytes" not in record:
        return torch.tensor(record["values"], dtype=dtype).reshape(record["shape"])
    raw = base64.b64decode(record["bytes"], validate=True)
    if not raw:  # torch.frombuffer refuses an empty buffer
        return torch.empty(record["shape"], dtype=dtype)
    size = torch.empty((), dtype=dtype).element_size()
    octets = _little_endian(torch.frombuffer(bytearray(raw), dtype=torch.uint8).reshape(-1, size))
    return octets.contiguous().view(dtype).reshape(record["shape"])


def _little_endian(octets: torch.Tensor) -> torch.Tensor:
    """Rows of one value's bytes, in native order, as little-endian (and back: the same swap)."""
    return octets if sys.byteorder == "little" else octets.flip(1)
