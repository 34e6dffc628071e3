"""Whether a known mistake reproduces an exception the student's code raised: the mistake's variant of the reference,
run on the same case, raised the same kind of error at the same operation with the same shapes.

The practical test of "same operation, same shapes": the exception's type and its message, normalised (runs of
whitespace, memory addresses), are equal. Torch's messages name the operation's shapes and axes, so two errors with
equal text come from the same operation on the same shapes; words or numbers found inside a message prove nothing.
The variants' errors are computed on the expectations side (autograder.course.error_variants) and handed over in
their plain form (`VariantError.plain`: JSON, which the student kit stores for its public cases); this module only
compares, so the student kit ships it.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RaisedError", "VariantError", "normalised", "raising_the_same", "reproducing"]

# Addresses differ from run to run ("<object at 0x7f...>"); what is left of the message is the operation's own.
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
WHITESPACE = re.compile(r"\s+")


# torch 2.15 names the operator before some of its messages ("mm: mat1 and mat2 shapes cannot be multiplied ..."),
# where 2.13, which computes the student kit's stored errors, does not: the name is dropped on both sides, so an
# error reproduces under every torch of the kit's range (devtools/kit_torch_matrix.py). The shapes stay.
OPERATOR_PREFIX = re.compile(r"^[a-z_][a-z0-9_]*: ")


def normalised(text: str) -> str:
    """The message with runs of whitespace made one space, memory addresses made one placeholder and a leading
    operator name (torch 2.15's "mm: ") dropped."""
    return OPERATOR_PREFIX.sub("", WHITESPACE.sub(" ", ADDRESS.sub("0x?", text)).strip())


@dataclass(frozen=True)
class RaisedError:
    """An exception as the comparison sees it: its type's name and its normalised message."""

    type: str
    message: str

    @classmethod
    def of(cls, error: Mapping[str, Any]) -> "RaisedError":
        """From an exception description (autograder.checking.probing.describe_exception)."""
        return cls(str(error.get("type", "")), normalised(str(error.get("message", ""))))


@dataclass(frozen=True)
class VariantError:
    """What the reference with one mistake raised on a case."""

    mistake: str
    error: RaisedError

    def plain(self) -> list[str]:
        """[mistake, type, message]: how expectations carry it (and the student kit stores it)."""
        return [self.mistake, self.error.type, self.error.message]

    @classmethod
    def from_plain(cls, item: Sequence[object]) -> "VariantError":
        """The inverse of `plain`; a ValueError for anything else."""
        if isinstance(item, str | bytes) or len(item) != 3 or not all(isinstance(part, str) for part in item):
            raise ValueError(f"not a variant's error: {item!r:.80}")
        mistake, kind, message = (str(part) for part in item)
        return cls(mistake, RaisedError(kind, normalised(message)))


def reproducing(error: Mapping[str, Any], raised: Iterable[VariantError]) -> str | None:
    """The one mistake whose variant raised the student's error; None when none did, when the student's error has
    no message to compare (a ProbeError, an empty text), or when variants of two different mistakes raised it (the
    error then tells them apart no better than a guess)."""
    mistakes = raising_the_same(error, raised)
    return mistakes[0] if len(mistakes) == 1 else None


def raising_the_same(error: Mapping[str, Any], raised: Iterable[VariantError]) -> tuple[str, ...]:
    """Every mistake whose variant raised the student's error (type and whole message, numbers included), in the
    variants' order; none for an error with no message to compare."""
    student = RaisedError.of(error)
    if not student.message or student.type == "ProbeError":
        return ()
    return tuple(dict.fromkeys(variant.mistake for variant in raised if variant.error == student))
