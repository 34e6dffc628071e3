"""The child-to-grader channel: tagged, length-prefixed frames of plain data.

The child calls `encode(event)`; the grader feeds bytes to a `FrameReader` and gets events back. Three kinds of
frame, the cheapest that carries the event exactly:
  J  events that JSON gives back exactly (cell started, cell raised...): JSON alone;
  B  events with tensors or tuples (an exercise's probe data), the usual case: a JSON skeleton in which each
     tensor is a tagged reference to raw bytes appended after it (dtype, shape; dense dtypes of RAW_DTYPES only),
     rebuilt with torch.frombuffer, so nothing is ever unpickled;
  T  the rare rest (a meta tensor, an exotic dtype): `torch.save`, read with `torch.load(..., weights_only=True)`,
     which rebuilds tensors, numbers, strings and containers and refuses anything else.
Never plain pickle: the bytes come from a process the student controls, and unpickling them would run their code
in the grader. Frames and the stream are capped, and
every string of a decoded event goes through autograder.safe_text.clean before the grader sees it.
"""

import io
import json
import math
import struct
from collections.abc import Iterator
from typing import Any

import torch

from autograder.checking.probing import below_student_code
from autograder.safe_text import clean_data

__all__ = ["FrameReader", "HEADER", "ProtocolError", "TORCH_FRAME", "encode", "plain_data"]

HEADER = struct.Struct(">cQ")  # kind (J: JSON, B: JSON + raw tensor bytes, T: torch.save), payload length
JSON_FRAME, BINARY_FRAME, TORCH_FRAME = b"J", b"B", b"T"
INDEX = struct.Struct(">Q")  # a binary frame's JSON length
# Dtypes a binary frame carries as raw bytes (anything else, meta tensors included, goes through torch.save).
RAW_DTYPES = {str(dtype).removeprefix("torch."): dtype for dtype in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)}
DTYPES = {str(value).removeprefix("torch."): value for value in vars(torch).values() if isinstance(value, torch.dtype)}
MAX_DIMS = 64
MAX_FRAME_BYTES = 64 * 2**20
MAX_STREAM_BYTES = 512 * 2**20
MAX_TEXT = 4000  # characters kept of any string the child sends
MAX_DEPTH = 12


class ProtocolError(Exception):
    """The child sent something that is not a well-formed frame of plain data."""


def encode(event: dict[str, Any]) -> bytes:
    """One frame: the event made plain, as JSON when it holds no tensor, else saved with torch.save."""
    event = plain_data(event)
    if _json_exact(event):
        payload = json.dumps(event).encode("utf-8")
        return HEADER.pack(JSON_FRAME, len(payload)) + payload
    blobs: list[bytes] = []
    try:
        header = json.dumps(_tagged(event, blobs)).encode("utf-8")
    except _NotRaw:
        pass
    else:
        payload = b"".join([INDEX.pack(len(header)), header, *blobs])
        return HEADER.pack(BINARY_FRAME, len(payload)) + payload
    buffer = io.BytesIO()
    torch.save(event, buffer)
    payload = buffer.getvalue()
    return HEADER.pack(TORCH_FRAME, len(payload)) + payload


def _json_exact(value: object) -> bool:
    """True when JSON gives back exactly this value (no tensors, tuples, non-string keys or NaN)."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_exact(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_exact(item) for key, item in value.items())
    return False


class _NotRaw(Exception):  # noqa: N818 - internal signal: this event needs torch.save
    pass


def _tagged(value: object, blobs: list[bytes]) -> Any:
    """Plain data (from plain_data) as JSON: lists stay lists, everything else is a one-key object."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_tagged(item, blobs) for item in value]
    if isinstance(value, tuple):
        return {"t": [_tagged(item, blobs) for item in value]}
    if isinstance(value, dict):
        return {"d": [[_tagged(key, blobs), _tagged(item, blobs)] for key, item in value.items()]}
    if isinstance(value, torch.dtype):
        return {"dt": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"dv": str(value)}
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        if (type(value) is not torch.Tensor or value.layout != torch.strided or value.device.type != "cpu"
                or RAW_DTYPES.get(dtype) is not value.dtype or value.is_conj() or value.is_neg()
                or value.requires_grad or not value.is_contiguous() or value.storage_offset() != 0):
            raise _NotRaw
        data = value.reshape(-1).view(torch.uint8).numpy().tobytes() if value.numel() else b""
        blobs.append(data)
        return {"x": [dtype, list(value.shape), list(value.stride()), len(data)]}  # odd strides of size-1 dims kept
    raise _NotRaw


def _untagged(value: object, blobs: "_Blobs", depth: int = 0) -> Any:
    """The inverse of _tagged, for bytes from the child: anything but what _tagged writes is an error."""
    if depth > 2 * MAX_DEPTH + 4:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_untagged(item, blobs, depth + 1) for item in value]
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError("not a tagged value")
    (tag, content), = value.items()
    if tag == "t" and isinstance(content, list):
        return tuple(_untagged(item, blobs, depth + 1) for item in content)
    if tag == "d" and isinstance(content, list):
        pairs = [(_untagged(pair[0], blobs, depth + 1), _untagged(pair[1], blobs, depth + 1))
                 for pair in content if isinstance(pair, list) and len(pair) == 2]
        if len(pairs) != len(content):
            raise ValueError("bad mapping")
        return dict(pairs)
    if tag == "dt" and isinstance(content, str) and content in DTYPES:
        return DTYPES[content]
    if tag == "dv" and isinstance(content, str):
        return torch.device(content)
    if tag == "x" and isinstance(content, list) and len(content) == 4:
        return blobs.tensor(*content)
    raise ValueError("not a tagged value")


class _Blobs:
    """The raw tensor bytes after a binary frame's JSON, handed out in order, each exactly once."""

    def __init__(self, data: memoryview) -> None:
        self._data = data
        self._offset = 0

    def tensor(self, dtype: object, shape: object, stride: object, size: object) -> torch.Tensor:
        if dtype not in RAW_DTYPES or not isinstance(shape, list) or len(shape) > MAX_DIMS:
            raise ValueError("bad tensor")
        if not isinstance(stride, list) or len(stride) != len(shape) or type(size) is not int:
            raise ValueError("bad tensor")
        if not all(type(n) is int and n >= 0 for n in shape + stride):
            raise ValueError("bad tensor")
        dtype = RAW_DTYPES[dtype]
        if math.prod(shape) * dtype.itemsize != size or self._offset + size > len(self._data):
            raise ValueError("bad tensor size")
        if size == 0:
            return torch.empty_strided(shape, stride, dtype=dtype)
        data = bytearray(self._data[self._offset:self._offset + size])
        self._offset += size
        return torch.frombuffer(data, dtype=torch.uint8).view(dtype).as_strided(shape, stride)

    def finish(self) -> None:
        if self._offset != len(self._data):
            raise ValueError("trailing bytes")


def plain_data(value: Any, depth: int = 0) -> Any:
    """Tensors (subclasses and views made plain copies), numbers, strings, lists, tuples, dicts: nothing else.

    Never runs a method of the student's: containers and scalars are read through the built-in types' own
    methods (a dict subclass's items() or a str subclass's slicing is not called), and a tensor is taken to a
    plain torch.Tensor below __torch_function__ and any dispatch mode (`plain_tensor`). What cannot be read that
    way raises; the child then stops, which the grader names as the student's code stopping it."""
    if depth > MAX_DEPTH:
        return "<nested too deeply>"
    kind = type(value)
    if value is None or kind is bool:
        return value
    if issubclass(kind, int):
        return int.__int__(value)
    if issubclass(kind, float):
        return float.__float__(value)
    if issubclass(kind, str):
        return str.__getitem__(value, slice(0, MAX_TEXT))
    if issubclass(kind, torch.Tensor):
        return plain_tensor(value)
    if kind is torch.dtype or kind is torch.device:
        return value
    if issubclass(kind, dict):
        return {_plain_key(key, depth): plain_data(item, depth + 1) for key, item in dict.items(value)}
    if issubclass(kind, list):
        return [plain_data(item, depth + 1) for item in list.__iter__(value)]
    if issubclass(kind, tuple):
        return tuple(plain_data(item, depth + 1) for item in tuple.__iter__(value))
    return f"<{_type_name(kind)} object>"


def _plain_key(key: object, depth: int) -> Any:
    kind = type(key)
    if issubclass(kind, str | int | tuple):
        return plain_data(key, depth + 1)
    return f"<{_type_name(kind)}>"


def _type_name(kind: type) -> str:
    """module.qualname of a class, read through type's own getters (a metaclass's properties are not called)."""
    module = vars(type)["__module__"].__get__(kind, type)
    name = vars(type)["__qualname__"].__get__(kind, type)
    module = str.__getitem__(module, slice(0, 100)) if issubclass(type(module), str) else "?"
    return f"{module}.{str.__getitem__(name, slice(0, 100))}"


def plain_tensor(value: torch.Tensor) -> torch.Tensor:
    """A plain, contiguous CPU copy of a tensor (or of a tensor subclass) made without running student code:
    __torch_function__ is off (subclasses and modes) and the student's dispatch modes are set aside while it is
    copied; a wrapper subclass without real data fails here, as it should."""
    with below_student_code(value):
        tensor = value if type(value) is torch.Tensor else torch.Tensor.as_subclass(value, torch.Tensor)
        tensor = tensor.detach()
        if tensor.device.type == "meta":
            return tensor
        return tensor.to("cpu").contiguous().clone()


class FrameReader:
    """Accumulates the bytes of one child and hands back complete, safely decoded events."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._received = 0

    def feed(self, data: bytes) -> Iterator[dict[str, Any]]:
        """Yield each complete event as soon as it is decoded: events before a bad frame still count."""
        self._received += len(data)
        if self._received > MAX_STREAM_BYTES:
            raise ProtocolError(f"sent more than {MAX_STREAM_BYTES // 2**20} MB")
        self._buffer.extend(data)
        while len(self._buffer) >= HEADER.size:
            kind, length = HEADER.unpack_from(self._buffer)
            if length > MAX_FRAME_BYTES:
                raise ProtocolError(f"frame of {length} bytes")
            if len(self._buffer) < HEADER.size + length:
                break
            payload = bytes(self._buffer[HEADER.size:HEADER.size + length])
            del self._buffer[:HEADER.size + length]
            # Every string the child sends is the student's to choose: made safe once, here.
            yield clean_data(_decode(kind, payload))

    @property
    def pending(self) -> int:
        """Bytes of an unfinished frame (a child that died mid-write leaves some)."""
        return len(self._buffer)


def _decode(kind: bytes, payload: bytes) -> dict[str, Any]:
    try:
        if kind == JSON_FRAME:
            event = json.loads(payload)
        elif kind == BINARY_FRAME:
            (length,) = INDEX.unpack_from(payload)
            start = INDEX.size + length
            if start > len(payload):
                raise ValueError("short frame")
            blobs = _Blobs(memoryview(payload)[start:])
            event = _untagged(json.loads(payload[INDEX.size:start]), blobs)
            blobs.finish()
        elif kind == TORCH_FRAME:
            event = torch.load(io.BytesIO(payload), weights_only=True)
        else:
            raise ValueError(f"unknown frame kind {kind!r}")
    except Exception as error:  # noqa: BLE001 - any failure to decode is the child's fault, never the grader's
        raise ProtocolError(f"undecodable frame ({type(error).__name__})") from None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        raise ProtocolError("frame without an event")
    return event
