"""Judge-side tensor comparison and misconception matching."""

from collections.abc import Iterable, Mapping
from typing import Any

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.probing import dtype_name

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


def largest_difference(got: torch.Tensor, expected: torch.Tensor) -> tuple[float, tuple[int, ...] | None]:
    """(difference, index) of the worst element; (inf, None) when shapes differ."""
    if got.shape != expected.shape:
        return float("inf"), None
    diff = (got.to(torch.float64) - expected.to(torch.float64)).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    flat = int(diff.argmax())
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), diff.shape))
    return float(diff.max()), index


Variants = Mapping[str, Any] | Iterable[tuple[str, Any]]  # {misconception: wrong output} or such pairs


def diagnose(got: object, expected: object, variants: Variants) -> str | None:
    """The misconception whose wrong variant reproduces the student's output; None when none does.

    `variants` is a mapping {misconception: wrong output} or (misconception, wrong output) pairs (one mistake
    can be written several ways). A variant that happens to equal the correct answer on this input proves
    nothing, so it is skipped; an output that two different mistakes both give on this input proves neither (the
    notes' scores are symmetric: a max along the other axis and a max without keepdim then agree), so none is named.
    """
    pairs = variants.items() if isinstance(variants, Mapping) else variants
    reproducing = {misconception for misconception, wrong in pairs
                   if wrong is not None and not same(wrong, expected) and same(got, wrong)}
    return reproducing.pop() if len(reproducing) == 1 else None


def compare(got: Any, expected: torch.Tensor, *, message_key: str, variants: Variants | None = None,
            input_shape: tuple[int, ...] | None = None, heatmap: bool = False,
            fields: Mapping[str, Any] | None = None) -> Verdict:
    """Pass when got matches expected; otherwise fail, naming a misconception only when a variant matches."""
    if same(got, expected):
        return Verdict(True)
    fields = dict(fields or {})
    if isinstance(got, torch.Tensor) and got.shape != expected.shape:
        # The right numbers in another shape: a squeeze, view or reshape at the end, not the computation.
        regrouped = got.numel() == expected.numel() and same(got.reshape(expected.shape), expected)
        message_key = "shape.same_numbers" if regrouped else "shape.wrong"
        fields.update(got_shape=tuple(got.shape), expected_shape=tuple(expected.shape))
    named = diagnose(got, expected, variants or {})
    return Verdict(
        False,
        message_key=message_key,
        fields=fields,
        misconception=named,
        evidence=None if named is None else Evidence.VARIANT,
        expected=expected,
        got=got,
        input_shape=input_shape,
        heatmap=heatmap,
    )


def compare_named(got: Any, expected: torch.Tensor, candidates: Variants, **kwargs: Any) -> Verdict:
    """compare.compare, naming the first candidate mistake that reproduces `got`."""
    verdict = compare(got, expected, **kwargs)
    if not verdict.passed:
        verdict.misconception = diagnose(got, expected, candidates)
        verdict.evidence = None if verdict.misconception is None else Evidence.VARIANT
    return verdict


def dtype_verdict(prefix: str, got: torch.Tensor, expected_dtype: torch.dtype) -> Verdict:
    """Verdict(True) when `got` has `expected_dtype`; else the message `{prefix}.dtype`, with the fields
    got_dtype and expected_dtype (names such as "float32": messages write "torch.{got_dtype}" to show torch's)."""
    if got.dtype == expected_dtype:
        return Verdict(True)
    return Verdict(False, f"{prefix}.dtype",
                   {"got_dtype": dtype_name(got.dtype), "expected_dtype": dtype_name(expected_dtype)})
