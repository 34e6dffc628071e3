"""The child-to-grader channel: tagged, length-prefixed frames of plain data.

The child calls `encode(event)`; the grader feeds bytes to a `FrameReader` and gets events back.
Events with tensors or tuples (an exercise's probe data) travel as `torch.save` and are read with
`torch.load(..., weights_only=True)`, which rebuilds tensors, numbers, strings and containers and
refuses anything else; events that JSON gives back exactly (cell started, cell raised...) travel as
JSON, as safe and far cheaper to read. Never plain pickle: the bytes come from a process the student
controls, and unpickling them would run their code in the grader. Frames and the stream are capped.
"""

import io
import json
import math
import struct

import torch

HEADER = struct.Struct(">cQ")  # kind (J: JSON, T: torch.save), payload length
JSON_FRAME, TORCH_FRAME = b"J", b"T"
MAX_FRAME_BYTES = 64 * 2**20
MAX_STREAM_BYTES = 512 * 2**20
MAX_TEXT = 4000  # characters kept of any string the child sends
MAX_DEPTH = 12


class ProtocolError(Exception):
    """The child sent something that is not a well-formed frame of plain data."""


def encode(event):
    """One frame: the event made plain, as JSON when it holds no tensor, else saved with torch.save."""
    event = plain_data(event)
    if _json_exact(event):
        payload = json.dumps(event).encode("utf-8")
        return HEADER.pack(JSON_FRAME, len(payload)) + payload
    buffer = io.BytesIO()
    torch.save(event, buffer)
    payload = buffer.getvalue()
    return HEADER.pack(TORCH_FRAME, len(payload)) + payload


def _json_exact(value):
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


def plain_data(value, depth=0):
    """Tensors (subclasses and views made plain copies), numbers, strings, lists, tuples, dicts: nothing else."""
    if depth > MAX_DEPTH:
        return "<nested too deeply>"
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, torch.Tensor):
        tensor = value.detach().as_subclass(torch.Tensor)
        if tensor.device.type == "meta":
            return tensor
        return tensor.to("cpu").contiguous().clone()
    if isinstance(value, torch.dtype | torch.device):
        return value
    if isinstance(value, dict):
        return {plain_data(key, depth + 1) if isinstance(key, str | int | tuple) else repr(type(key)):
                plain_data(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [plain_data(item, depth + 1) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    return f"<{type(value).__module__}.{type(value).__qualname__} object>"


class FrameReader:
    """Accumulates the bytes of one child and hands back complete, safely decoded events."""

    def __init__(self):
        self._buffer = bytearray()
        self._received = 0

    def feed(self, data):
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
            yield _decode(kind, payload)

    @property
    def pending(self):
        """Bytes of an unfinished frame (a child that died mid-write leaves some)."""
        return len(self._buffer)


def _decode(kind, payload):
    try:
        if kind == JSON_FRAME:
            event = json.loads(payload)
        elif kind == TORCH_FRAME:
            event = torch.load(io.BytesIO(payload), weights_only=True)
        else:
            raise ValueError(f"unknown frame kind {kind!r}")
    except Exception as error:  # noqa: BLE001 - any failure to decode is the child's fault, never the grader's
        raise ProtocolError(f"undecodable frame ({type(error).__name__})") from None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        raise ProtocolError("frame without an event")
    return event
