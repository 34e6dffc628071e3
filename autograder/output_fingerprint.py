"""A short, stable fingerprint of what a student's code produced on one hidden case: `output_fingerprint(data)`.

`attnkit grade` keeps one per hidden case the judge found wrong (never for a right answer: a right answer is
what everyone should produce and is evidence of nothing). `attnkit similarity` then looks for pairs of students
whose code produced the same wrong output on the same hidden case, weighted by how few students share it.

Two formulations of the same computation differ in the last bits of a float (`x / sqrt(d)` against
`x * d ** -0.5`), so a tensor is not hashed bit for bit: it is summarised by its dtype, its shape, where it is
NaN or infinite, its size (sum of absolute values, 4 significant digits) and a few fixed random projections of
its finite values relative to that size (4 decimals). Equal outputs then agree (a rounding boundary falls
between two summaries only rarely), different ones do not.
"""

import hashlib
import math

import torch

PROJECTIONS = 6
SIGNIFICANT_DIGITS = 4
DIGEST_BYTES = 8  # 16 hex characters
MAX_DEPTH = 16
# Exceptions that say "not done", not "done wrong": every student who skipped the exercise shares them.
NOT_ANSWERS = ("NotImplementedError",)


def output_fingerprint(data):
    """16 hex characters summarising probe data (tensors, numbers, strings, lists, dicts); None for "no answer"."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and (error.get("type") in NOT_ANSWERS or error.get("key") == "error.missing_name"):
        return None
    digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
    _feed(digest, data, 0)
    return digest.hexdigest()


def _feed(digest, value, depth):
    if depth > MAX_DEPTH:
        digest.update(b"<deep>")
    elif isinstance(value, torch.Tensor):
        _feed_tensor(digest, value)
    elif isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value, key=str):
            digest.update(str(key).encode("utf-8", "replace") + b":")
            _feed(digest, value[key], depth + 1)
        digest.update(b"}")
    elif isinstance(value, list | tuple):
        digest.update(b"[")
        for item in value:
            _feed(digest, item, depth + 1)
        digest.update(b"]")
    elif isinstance(value, float):
        digest.update(f"f{_rounded(value)};".encode())
    elif isinstance(value, bool | int | None):
        digest.update(f"{value!r};".encode())
    else:
        digest.update(f"{type(value).__name__}:{value}".encode("utf-8", "replace") + b";")


def _feed_tensor(digest, tensor):
    digest.update(f"T{tensor.dtype}{tuple(tensor.shape)}".encode())
    if tensor.device.type == "meta" or tensor.numel() == 0:
        return
    values = tensor.detach().to("cpu").reshape(-1)
    if not (values.is_floating_point() or values.is_complex()):
        digest.update(hashlib.blake2b(values.to(torch.int64).numpy().tobytes(), digest_size=8).digest())
        return
    values = values.to(torch.float64) if not values.is_complex() else values.abs().to(torch.float64)
    finite = torch.isfinite(values)
    digest.update(hashlib.blake2b(finite.numpy().tobytes() + torch.isnan(values).numpy().tobytes(),
                                  digest_size=8).digest())
    values = torch.where(finite, values, torch.zeros_like(values))
    directions = torch.rand(PROJECTIONS, values.numel(), generator=torch.Generator().manual_seed(values.numel()),
                            dtype=torch.float64)
    # Projections are rounded relative to the tensor's size, so a projection near zero is not all noise.
    scale = float(values.abs().sum())
    digest.update(f"s{_rounded(scale)};".encode())
    for projection in (directions @ values).tolist():
        digest.update(f"{round(projection / scale, SIGNIFICANT_DIGITS) if scale else 0.0:+.{SIGNIFICANT_DIGITS}f};"
                      .encode())


def _rounded(value):
    if not math.isfinite(value):
        return repr(value)
    return f"{value:.{SIGNIFICANT_DIGITS - 1}e}" if value else "0"
