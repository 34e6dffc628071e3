"""Judge-side tensor comparison and misconception matching."""

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.probing import dtype_name

__all__ = [
    "REPRODUCED_BY", "compare", "compare_named", "diagnose", "dtype_verdict", "largest_difference", "rename",
    "reproducing", "same", "same_gradient", "unravel",
]

ATOL = 1e-5
RTOL = 1e-4


def same(got: object, expected: object, atol: float = ATOL, rtol: float = RTOL) -> bool:
    """Same shape and values (NaN equals NaN: a wrong variant may produce NaN where the student's does)."""
    if not isinstance(got, torch.Tensor) or not isinstance(expected, torch.Tensor):
        return False
    if got.shape != expected.shape:
        return False
    if got.dtype == expected.dtype and got.is_floating_point():  # no copies: the comparison is the same
        return bool(torch.allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True))
    return bool(torch.allclose(got.to(torch.float64), expected.to(torch.float64), atol=atol, rtol=rtol, equal_nan=True))


def same_gradient(got: object, expected: object) -> bool:
    """Whether a gradient the student's code passed back is the reference's: the same shape and values, within
    float32's rounding of sums taken in another order (relative to the gradient's own size: a gradient of a step
    computed outside autograd differs by a share of its size, never by rounding)."""
    if not isinstance(got, torch.Tensor) or not isinstance(expected, torch.Tensor) or got.shape != expected.shape:
        return False
    ours, theirs = expected.to(torch.float64), got.to(torch.float64)
    size = float(ours.abs().max()) if ours.numel() else 0.0
    return bool(torch.allclose(theirs, ours, rtol=1e-3, atol=1e-5 * max(1.0, size)))


def largest_difference(got: torch.Tensor, expected: torch.Tensor) -> tuple[float, tuple[int, ...] | None]:
    """(difference, index) of the worst element; (inf, None) when shapes differ."""
    if got.shape != expected.shape:
        return float("inf"), None
    diff = (got.to(torch.float64) - expected.to(torch.float64)).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    flat = int(diff.argmax())
    return float(diff.max()), unravel(flat, tuple(diff.shape))


def unravel(flat: int, shape: Sequence[int]) -> tuple[int, ...]:
    """The index of element `flat` of a row-major tensor of `shape`, as torch.unravel_index gives it (which imports
    sympy on first use: half a second of a kernel's first failing check)."""
    index = []
    for size in reversed(shape):
        flat, position = divmod(flat, size)
        index.append(position)
    return tuple(reversed(index))


Variants = Mapping[str, Any] | Iterable[tuple[str, Any]]  # {misconception: wrong output} or such pairs


REPRODUCED_BY = "reproduced_by"  # a verdict's field: every mistake whose variant gives the student's output there


def reproducing(got: object, expected: object, variants: Variants) -> tuple[str, ...]:
    """Every misconception (once, in order) whose variant reproduces `got` and is not the right answer."""
    pairs = variants.items() if isinstance(variants, Mapping) else variants
    found = [name for name, wrong in pairs if wrong is not None and not same(wrong, expected) and same(got, wrong)]
    return tuple(dict.fromkeys(found))


def _name_reproduced(verdict: Verdict, found: tuple[str, ...]) -> Verdict:
    """`verdict` with the mistakes that reproduce it recorded (autograder.checking.results keeps a name only where it
    reproduces every failing case) and named when exactly one does: two that give the same output prove neither."""
    if found:
        verdict.fields = {**verdict.fields, REPRODUCED_BY: found}
    verdict.misconception = found[0] if len(found) == 1 else None
    verdict.evidence = None if verdict.misconception is None else Evidence.VARIANT
    return verdict


def diagnose(got: object, expected: object, variants: Variants) -> str | None:
    """The misconception whose wrong variant reproduces the student's output; None when none does, or when variants
    of two misconceptions do (the input cannot tell them apart).

    `variants` is a mapping {misconception: wrong output} or (misconception, wrong output) pairs (one mistake
    can be written several ways). A variant that happens to equal the correct answer on this input proves
    nothing, so it is skipped; an output that two different mistakes both give on this input proves neither (the
    notes' scores are symmetric: a max along the other axis and a max without keepdim then agree), so none is named.
    """
    found = reproducing(got, expected, variants)
    return found[0] if len(found) == 1 else None


def rename(verdict: Verdict, name: str) -> Verdict:
    """`verdict` naming `name` for the mistake its variant reproduced (the judge knows better words for it here, e.g.
    a dim ignored by a function called without one), in its list of what reproduces the case too."""
    old = verdict.misconception
    verdict.misconception = name
    if REPRODUCED_BY in verdict.fields:
        listed = verdict.fields[REPRODUCED_BY]
        verdict.fields[REPRODUCED_BY] = tuple(name if found == old else found for found in listed)
    return verdict


# Torch functions and ops that put the same numbers along other axes, as torch_recorders names them: the shape message
# names one only where the student's call ran it.
REGROUPING = ("view", "reshape", "squeeze", "unsqueeze", "flatten", "unflatten", "stack", "view_as", "reshape_as")
# The recorders list the torch functions called and the ATen ops they ran under one name each: these functions run
# the ATen op view themselves, so "view" beside one of them is not proven a call of the student's (issue 58: code
# that only reshaped was told it ran view). Said less, never more.
RUNS_VIEW = ("reshape", "flatten", "unflatten", "view_as", "reshape_as")


def _regrouping_calls(calls: Collection[str]) -> list[str]:
    """The regrouping functions among `calls` that the student's code is proven to call (see RUNS_VIEW)."""
    found = [name for name in REGROUPING if name in calls]
    if any(name in found for name in RUNS_VIEW):
        found = [name for name in found if name != "view"]
    return found


def compare(got: Any, expected: torch.Tensor, *, message_key: str, variants: Variants | None = None,
            input_shape: tuple[int, ...] | None = None, heatmap: bool = False,
            fields: Mapping[str, Any] | None = None, calls: Collection[str] = ()) -> Verdict:
    """Pass when got matches expected; otherwise fail, naming a misconception only when a variant matches. `calls`:
    the torch functions the student's call ran (torch_recorders), where the probe recorded them: a shape message
    names the regrouping ones among them, and presumes none it did not see."""
    if same(got, expected):
        return Verdict(True)
    fields = dict(fields or {})
    if isinstance(got, torch.Tensor) and got.shape != expected.shape:
        # The right numbers in another shape: regrouped, not computed wrong.
        regrouped = got.numel() == expected.numel() and same(got.reshape(expected.shape), expected)
        message_key = "shape.same_numbers" if regrouped else "shape.wrong"
        regrouping = _regrouping_calls(calls)
        if regrouped and regrouping:
            message_key = "shape.same_numbers_regrouped"
            fields["names"] = ", ".join(regrouping)
        fields.update(got_shape=tuple(got.shape), expected_shape=tuple(expected.shape))
    verdict = Verdict(False, message_key=message_key, fields=fields, expected=expected, got=got,
                      input_shape=input_shape, heatmap=heatmap)
    return _name_reproduced(verdict, reproducing(got, expected, variants or {}))


def compare_named(got: Any, expected: torch.Tensor, candidates: Variants, **kwargs: Any) -> Verdict:
    """compare.compare, naming the first candidate mistake that reproduces `got`."""
    verdict = compare(got, expected, **kwargs)
    if not verdict.passed:
        verdict.fields.pop(REPRODUCED_BY, None)
        _name_reproduced(verdict, reproducing(got, expected, candidates))
    return verdict


def dtype_verdict(prefix: str, got: torch.Tensor, expected_dtype: torch.dtype) -> Verdict:
    """Verdict(True) when `got` has `expected_dtype`; else the message `{prefix}.dtype`, with the fields
    got_dtype and expected_dtype (names such as "float32": messages write "torch.{got_dtype}" to show torch's)."""
    if got.dtype == expected_dtype:
        return Verdict(True)
    return Verdict(False, f"{prefix}.dtype",
                   {"got_dtype": dtype_name(got.dtype), "expected_dtype": dtype_name(expected_dtype)})
