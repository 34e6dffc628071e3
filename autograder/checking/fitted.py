"""Fitted families: a mistake named with the value the student used, when the reference with that value reproduces
their output (autograder.course.variants computes the candidates on the expectations side; here the judges, which
both kits run, only compare)."""

from collections.abc import Iterable

from torch import Tensor

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import same

FILL_MESSAGE = "attention.mask_fill"
REPRODUCING = "fills"  # a verdict's field: every candidate fill that reproduces the student's output on the case


def reproducing_fills(got: Tensor, expected: Tensor, fills: Iterable[tuple[float, Tensor]]) -> tuple[float, ...]:
    """The finite fills whose output is the student's and not the right one (several where the case cannot tell
    them apart: a row whose real scores are all far below every candidate)."""
    return tuple(fill for fill, output in fills if not same(output, expected) and same(got, output))


def fill_mistake(fill: float) -> str:
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
        verdict.misconception, verdict.evidence = fill_mistake(fills[0]), Evidence.VARIANT
    return verdict
