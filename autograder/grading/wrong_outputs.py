"""What a student's code answered wrong on hidden cases, kept in the grading record for `attnkit similarity`.

`with_wrong_outputs(exercise_id, results, records, seed)` adds "check#case:fingerprint" strings to each failed
hidden check's result (`results` as `judge_exercise` returns them for the probe `records`): one per wrong case,
never for a right answer (a right answer is what everyone should produce and is evidence of nothing).
`attnkit similarity` (autograder.review) then looks for pairs of students whose code produced the same wrong
output on the same hidden case, weighted by how few students share it. Public checks are left
out: their cases are the notes' examples, which every student sees.

`output_fingerprint(data)` is a short, stable summary of probe data. Two formulations of the same computation
differ in the last bits of a float (`x / sqrt(d)` against `x * d ** -0.5`), so a tensor is not hashed bit for bit:
it is summarised by its dtype, its shape, where it is NaN or infinite, its size (sum of absolute values, 4
significant digits) and a few fixed random projections of its finite values relative to that size (4 decimals).
Equal outputs then agree (a rounding boundary falls between two summaries only rarely), different ones do not.
"""

import functools
import hashlib
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from autograder.checking.check_types import PASSED, Case, Check, CheckResult, ProbeData
from autograder.checking.expectations import Expectations
from autograder.course import catalog
from autograder.running.runner import ClassExpectations, cases_for

__all__ = ["MAX_WRONG_CASES", "output_fingerprint", "with_wrong_outputs"]

PROJECTIONS = 6
SIGNIFICANT_DIGITS = 4
DIGEST_BYTES = 8  # 16 hex characters
MAX_DEPTH = 16
MAX_WRONG_CASES = 4  # hidden cases looked at per failed check, from its first wrong one
# Exceptions that say "not done", not "done wrong": every student who skipped the exercise shares them.
NOT_ANSWERS = ("NotImplementedError",)


def output_fingerprint(data: object) -> str | None:
    """16 hex characters summarising probe data (tensors, numbers, strings, lists, dicts); None for "no answer"."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and (error.get("type") in NOT_ANSWERS or error.get("key") == "error.missing_name"):
        return None
    digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
    _feed(digest, data, 0)
    return digest.hexdigest()


def with_wrong_outputs(exercise_id: str, results: list[CheckResult], records: Mapping[str, Any],
                       seed: int, expectations: ClassExpectations | None = None) -> list[CheckResult]:
    """`results` (one per check of the exercise, in catalogue order), failed hidden ones with `wrong_outputs`;
    `expectations`: the class's, as the judges had them (runner.ClassExpectations)."""
    checks = catalog.checks_of(exercise_id)
    if len(checks) != len(results):  # not a full judged run: nothing to pair results with
        return results
    shared = expectations or ClassExpectations()
    return [_with_wrong_outputs(result, check, cases_for(check, seed), records.get(check.id),
                                functools.partial(shared.of, check, seed))
            for check, result in zip(checks, results, strict=True)]


def _with_wrong_outputs(result: CheckResult, check: Check, cases: Sequence[Case], data_per_case: object,
                        expectations_of: Callable[[int, ProbeData, Case], Expectations] | None = None) -> CheckResult:
    """`result` with `wrong_outputs` filled in when it is a failed hidden check; `expectations_of(index, data, case)`
    as the judges had them (default: the check's expect for this record).

    The judge stopped at the first wrong case; the few after it are judged again here, since a right answer on
    them must not be fingerprinted.
    """
    if not check.hidden or result.status == PASSED or not isinstance(data_per_case, list):
        return result

    def passes(index: int, data: ProbeData) -> bool:
        try:
            expected = (expectations_of or (lambda _index, record, case: check.expect(record, case)))(
                index, data, cases[index])
            return check.judge(data, cases[index], expected).passed
        except Exception:  # noqa: BLE001 - odd student output is a wrong answer, as the judge itself counts it
            return False

    answered = list(itertools.takewhile(lambda data: isinstance(data, dict), data_per_case[:len(cases)]))
    first_wrong = next((index for index, data in enumerate(answered)
                        if "error" in data or not passes(index, data)), None)
    if first_wrong is None:
        return result
    for index in range(first_wrong, min(len(answered), first_wrong + MAX_WRONG_CASES)):
        data = answered[index]
        if index > first_wrong and "error" not in data and passes(index, data):
            continue
        fingerprint = output_fingerprint(data)
        if fingerprint:
            result.wrong_outputs.append(f"{check.id}#{index}:{fingerprint}")
    return result


def _feed(digest: "hashlib.blake2b", value: object, depth: int) -> None:
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


def _feed_tensor(digest: "hashlib.blake2b", tensor: torch.Tensor) -> None:
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


def _rounded(value: float) -> str:
    if not math.isfinite(value):
        return repr(value)
    return f"{value:.{SIGNIFICANT_DIGITS - 1}e}" if value else "0"
