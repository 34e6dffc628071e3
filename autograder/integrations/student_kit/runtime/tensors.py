"""Tensors as plain JSON: {"dtype", "shape", "values"}, values flat, non-finite floats as strings.

JSON rather than torch.save or numpy's .npz: it can never run code when read (no pickle at all, not even a
restricted one), it is byte-for-byte deterministic (a zip archive stores timestamps), it needs no extra
dependency, and anyone can read what the kit stores. float32 values written by Python's shortest repr read
back exactly.
"""

import math
from collections.abc import Mapping
from typing import Any

import torch

__all__ = ["decode", "encode"]

TENSOR = "__tensor__"
# float16 and bfloat16 values are written as the Python floats they are exactly, and read back exactly.
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int64": torch.int64, "bool": torch.bool}
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


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
    flat = tensor.detach().cpu().reshape(-1)
    values: list[Any]
    if dtype == "bool":
        values = [int(v) for v in flat.tolist()]
    elif dtype == "int64":
        values = flat.tolist()
    else:
        values = [v if math.isfinite(v) else str(v) for v in flat.tolist()]
    return {TENSOR: dtype, "shape": list(tensor.shape), "values": values}


def _decode_tensor(record: Mapping[str, Any]) -> torch.Tensor:
    dtype = DTYPES[record[TENSOR]]
    values = [NON_FINITE[v] if isinstance(v, str) else v for v in record["values"]]
    return torch.tensor(values, dtype=dtype).reshape(record["shape"])
