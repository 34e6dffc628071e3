"""Whether a known mistake reproduces an exception the student's code raised: the mistake's variant of the reference,
run on the same case, raised the same kind of error at the same operation with the same shapes.

The practical test of "same operation, same shapes": the exception's type and its message, normalised (runs of
whitespace, memory addresses), are equal, and so are the shapes of the tensors the op that raised read, where the
run was traced (autograder.checking.tensor_trace.OPERANDS). A message's numbers alone can coincide on tensors that
are other things: "size 5 against 7" is the scores' 5 tokens against a 7-token mask in one program and 5 features
against 7 tokens in another. Words or numbers found inside a message prove nothing.
The variants' errors are computed on the expectations side (autograder.course.error_variants) and handed over in
their plain form (`VariantError.plain`: JSON, which the student kit stores for its public cases); this module only
compares, so the student kit ships it.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["OPERANDS", "RaisedError", "VariantError", "normalised", "operand_shapes", "raising_the_same", "reproducing"]

# Addresses differ from run to run ("<object at 0x7f...>"); what is left of the message is the operation's own.
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
OPERANDS = "operands"  # autograder.checking.tensor_trace.OPERANDS (the student kit ships this module alone)
MAGNITUDE = re.compile(r"[0-9.e+-]+|inf|nan")  # tensor_trace's "%.3g" of a sum of absolute values, or a count
MAX_OPERANDS, MAX_DIMS = 8, 8  # tensor_trace.MAX_RAISED_OPERANDS; the course's tensors have at most 4 axes
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
    """An exception as the comparison sees it: its type's name, its normalised message and the shapes the op that
    raised read ("" where the run was not traced, or the raise was no torch op's)."""

    type: str
    message: str
    operands: str = ""

    @classmethod
    def of(cls, error: Mapping[str, Any]) -> "RaisedError":
        """From an exception description (autograder.checking.probing.describe_exception), with its OPERANDS."""
        return cls(str(error.get("type", "")), normalised(str(error.get("message", ""))),
                   operand_shapes(error.get(OPERANDS)))


def operand_shapes(shapes: object) -> str:
    """The shapes an op that raised read, each with its magnitude where the trace read one, as one text
    ("(2, 6, 6)~41.2 (6, 6)~15"); "" for none recorded, "?" for anything that is not what the trace writes (a list
    of at most MAX_OPERANDS lists of at most MAX_DIMS ints, then at most one short text), so that it equals no
    traced run's."""
    if shapes is None:
        return ""
    if type(shapes) is not list or len(shapes) > MAX_OPERANDS or not all(_operand(shape) for shape in shapes):
        return "?"
    return " ".join("(" + ", ".join(str(size) for size in shape if type(size) is int) + ")"
                    + "".join(f"~{size}" for size in shape if type(size) is str) for shape in shapes)


def _operand(shape: object) -> bool:
    """Whether `shape` is what the trace writes for one operand: its sizes, then its magnitude or nothing."""
    if type(shape) is not list:
        return False
    sizes, magnitude = (shape[:-1], shape[-1:]) if shape and type(shape[-1]) is str else (shape, [])
    return (len(sizes) <= MAX_DIMS and all(type(size) is int for size in sizes)
            and all(len(text) <= 12 and MAGNITUDE.fullmatch(text) is not None for text in magnitude))


@dataclass(frozen=True)
class VariantError:
    """What the reference with one mistake raised on a case."""

    mistake: str
    error: RaisedError

    def plain(self) -> list[str]:
        """[mistake, type, message, operands]: how expectations carry it (and the student kit stores it)."""
        return [self.mistake, self.error.type, self.error.message, self.error.operands]

    @classmethod
    def from_plain(cls, item: Sequence[object]) -> "VariantError":
        """The inverse of `plain` (a kit stored before the operands: three parts, no operands); a ValueError for
        anything else."""
        if (isinstance(item, str | bytes) or len(item) not in (3, 4)
                or not all(isinstance(part, str) for part in item)):
            raise ValueError(f"not a variant's error: {item!r:.80}")
        mistake, kind, message, *operands = (str(part) for part in item)
        return cls(mistake, RaisedError(kind, normalised(message), *operands))


def reproducing(error: Mapping[str, Any], raised: Iterable[VariantError]) -> str | None:
    """The one mistake whose variant raised the student's error; None when none did, when the student's error has
    no message to compare (a ProbeError, an empty text), or when variants of two different mistakes raised it (the
    error then tells them apart no better than a guess)."""
    mistakes = raising_the_same(error, raised)
    return mistakes[0] if len(mistakes) == 1 else None


def raising_the_same(error: Mapping[str, Any], raised: Iterable[VariantError]) -> tuple[str, ...]:
    """Every mistake whose variant raised the student's error (type and whole message, numbers included, and the
    shapes its op read), in the variants' order; none for an error with no message to compare."""
    student = RaisedError.of(error)
    if not student.message or student.type == "ProbeError":
        return ()
    return tuple(dict.fromkeys(variant.mistake for variant in raised if variant.error == student))
