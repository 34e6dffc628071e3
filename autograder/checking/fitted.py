"""Fitted families: a mistake named with the value the student used, when the reference with that value reproduces
their output (autograder.course.variants computes the candidates on the expectations side; here the judges, which
both kits run, only compare)."""

from collections.abc import Iterable

from torch import Tensor

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import REPRODUCED_BY, same
from autograder.checking.judging import fit_divisor

__all__ = ["name_fill", "reproducing_fills", "with_fit", "with_notebook_scale"]

FILL_MESSAGE = "attention.mask_fill"
REPRODUCING = "fills"  # a verdict's field: every candidate fill that reproduces the student's output on the case


def reproducing_fills(got: Tensor, expected: Tensor, fills: Iterable[tuple[float, Tensor]]) -> tuple[float, ...]:
    """The finite fills whose output is the student's and not the right one (several where the case cannot tell
    them apart: a row whose real scores are all far below every candidate)."""
    return tuple(fill for fill, output in fills if not same(output, expected) and same(got, output))


def _fill_mistake(fill: float) -> str:
    """0 is the fill of a student who thinks a zero score means no attention; any other finite value was meant to be
    low and is not low enough."""
    return "mask_fill_zero" if fill == 0 else "mask_fill_not_low_enough"


def name_fill(verdict: Verdict, fills: tuple[float, ...]) -> Verdict:
    """`verdict` with the fills that reproduce the student's output recorded (autograder.checking.results checks the
    named one against the other failing cases); named, with its value, only when one fill alone reproduces it."""
    if not fills:
        return verdict
    verdict.fields = {**verdict.fields, REPRODUCING: fills}
    if len(fills) == 1:
        verdict.message_key, verdict.fields["fill"] = FILL_MESSAGE, fills[0]
        verdict.misconception, verdict.evidence = _fill_mistake(fills[0]), Evidence.VARIANT
    return verdict


# Named by judging.located_fault from a divisor fitted to the student's own weights (softmax(scores / c) reproduces
# them): a fitted family, proven like a variant.
FITTED_SCALE_MISTAKES = frozenset({"scale_wrong_value", "size_from_notebook"})


def with_fit(verdict: Verdict, located: Verdict) -> Verdict:
    """`verdict` saying what `located` (judging.located_fault) found, keeping the list of variants that reproduce the
    case; a fitted scale is one more mistake that reproduces it."""
    listed = verdict.fields.get(REPRODUCED_BY, ())
    verdict.message_key, verdict.fields = located.message_key, dict(located.fields)
    fitted = located.misconception in FITTED_SCALE_MISTAKES
    if listed or fitted:
        verdict.fields[REPRODUCED_BY] = tuple(listed) + ((located.misconception,) if fitted else ())
    if verdict.misconception is None and not listed:
        verdict.misconception = located.misconception
        verdict.evidence = Evidence.VARIANT if fitted else None
    return verdict


SCALE_VARIANTS = frozenset({"missing_scaling", "scale_by_d_in", "scale_by_d_out", "scale_by_d_k",
                            "scale_by_num_tokens"})


def with_notebook_scale(verdict: Verdict, seen: Tensor | None, raw_scores: Tensor, notebook_sizes: Iterable[int],
                        right: float) -> Verdict:
    """A case a wrong-divisor variant reproduces is reproduced by a size of the notebook's example too when the
    divisor fitted to the student's weights is its root: recorded, so that the other failing cases decide which."""
    listed = tuple(verdict.fields.get(REPRODUCED_BY, ()))
    if seen is None or not SCALE_VARIANTS & set(listed):
        return verdict
    divisor = fit_divisor(seen, raw_scores)
    if divisor is None or abs(divisor - right) <= 1e-3 * right:
        return verdict
    if any(size > 1 and abs(divisor * divisor - size) <= 1e-3 * size for size in notebook_sizes):  # 1: no scale
        verdict.fields[REPRODUCED_BY] = (*listed, "size_from_notebook")
    return verdict
