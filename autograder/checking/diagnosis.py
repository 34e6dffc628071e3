"""What an exception raised by the student's code means, in the student's terms: a message key (the symptom, on the
student's own line) and, only when one is reproduced, a mistake.

The message comes from the exception's text; a mistake never does. A mistake is named only when its raising variant,
run by the check's probe on the same case, raised the same error (autograder.checking.reproduction; the variants'
errors are the expectation RAISED, which the student kit stores for its public cases). Judges call
`explain_error` too (a probe that records the exception as data), so this module needs nothing but the verdict and
expectation types: the checks can import it without importing the runner that imports them.
"""

import re
from collections.abc import Mapping
from typing import Any

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.expectations import RAISED
from autograder.checking.reproduction import VariantError, raising_the_same, reproducing
from autograder.safe_text import one_line

__all__ = ["explain_error", "mistakes_raising"]

SHAPE_ERROR = re.compile(r"size of tensor|shape|must match|cannot be multiplied|mismatch|Expected size")
MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
BROADCAST = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
                       r"dimension (\d+)")
VIEW_SIZE = re.compile(r"shape '\[([\d, -]+)\]' is invalid for input of size (\d+)")
AXIS_RANGE = re.compile(r"Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (-?\d+)\)")
# The student's function called as the exercise's signature gives: a keyword it renamed, or a parameter it added.
UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '(\w+)'")
ARITY = re.compile(r"takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:was|were) given")
# What Python says when a call's arguments do not fit the function's parameters (not "float() argument must be ...",
# a value of the wrong type inside code that is not the student's).
CALL_BINDING = re.compile(r"positional|keyword|multiple values for argument|takes no arguments")
MISSING_ARGUMENT = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: '(\w+)'")
# A transpose as code writes it (an attribute or a call), not a word inside a name such as split_without_transpose.
TRANSPOSE = re.compile(r"\.(?:T|mT|t|H|mH)\b|\b(?:transpose|permute|swapaxes|swapdims|movedim)\s*\(")
# `.transpose(1, 2)` (spaces removed) on an operand of a product: before `@` or right after it, or inside matmul(...).
TRANSPOSED_OPERAND = re.compile(r"transpose\(1,2\)\)*@|@[\w.\[\]:,]*\.transpose\(1,2\)|matmul\([^;]*transpose\(1,2\)")
LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation"
# Two dtypes met in one op: torch words it per op ("mat1 and mat2 must have the same dtype", "expected m1 and m2 to
# have the same dtype", "expected scalar type Float but found Double"), one symptom whichever op raised it.
DTYPE_MISMATCH = re.compile(r"have the same dtype|expected scalar type \w+ but found \w+|"
                            r"[Ff]ound dtype \w+ but expected \w+")
DEVICE_MISMATCH = ("same device", "device type")


def _located_shape_error(text: str, line: str, fields: Mapping[str, Any]) -> Verdict | None:
    """A shape error placed on the student's own line, with the operation and the axis; None if unknown."""
    at = {**fields, "line": one_line(line, 120)}
    compact = line.replace(" ", "")
    if SHAPE_ERROR.search(text) and TRANSPOSED_OPERAND.search(compact):
        # Right on (b, num_tokens, d) tensors; on the heads' four axes it pairs heads with tokens. Only a shape error
        # of a product whose operand is that transpose: a transpose of the product's result pairs nothing.
        return Verdict(False, "error.transpose_4d", at)
    if (found := MATMUL.search(text)) is not None:
        rows, inner, other_inner, cols = found.groups()
        return Verdict(False, "error.matmul_shapes", {**at, "left": f"({rows}, {inner})",
                                                      "right": f"({other_inner}, {cols})"})
    if (found := BROADCAST.search(text)) is not None:
        size_a, size_b, axis = found.groups()
        return Verdict(False, "error.broadcast_axis", {**at, "axis": int(axis), "a": int(size_a), "b": int(size_b)})
    if (found := VIEW_SIZE.search(text)) is not None:
        shape, size = found.groups()
        return Verdict(False, "error.view_size", {**at, "shape": f"({shape})", "size": int(size)})
    if (found := AXIS_RANGE.search(text)) is not None:
        rank, axis = found.groups()
        if int(rank) == 1:  # torch gives a 0-d tensor the range of a 1-D one: [-1, 0] is either (12w's wy-cv-10)
            return Verdict(False, "error.axis_out_of_range_at_most_one", {**at, "axis": int(axis)})
        return Verdict(False, "error.axis_out_of_range", {**at, "rank": int(rank), "axis": int(axis)})
    return None


def explain_error(error: Mapping[str, Any], case: Mapping[str, Any],
                  expected: Mapping[str, Any] | None = None) -> Verdict:
    """Turn an exception the student's code raised into a message key, and name a mistake when `expected` (the
    expectations of `case`) holds the errors of raising variants (RAISED) and exactly one mistake's variant raised
    this very error on the case. The text alone never names one, whatever sizes of the case it mentions."""
    verdict = symptom(error)
    if verdict.message_key == "error.not_implemented" or str(error.get("type", "")) == "ProbeError":
        return verdict
    mistake = reproducing(error, _raised_by_variants(expected))
    if mistake is not None:
        verdict.misconception, verdict.evidence = mistake, Evidence.ERROR
    return verdict


def mistakes_raising(error: Mapping[str, Any], expected: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Every mistake whose raising variant raised this very error on the case, whether or not it is the only one."""
    return raising_the_same(error, _raised_by_variants(expected))


def _raised_by_variants(expected: Mapping[str, Any] | None) -> list[VariantError]:
    """The variants' errors on the case (RAISED, in its plain form); none where the expectations hold none (a check
    without raising variants, a kit built before them) or hold something else."""
    if expected is None:
        return []
    try:
        return [VariantError.from_plain(item) for item in expected[RAISED]]
    except (KeyError, TypeError, ValueError):
        return []


def symptom(error: Mapping[str, Any]) -> Verdict:
    """The exception as a message key with its fields: what went wrong, where, on which shapes; never a mistake."""
    kind, text = str(error.get("type", "")), str(error.get("message", ""))
    if kind == "ProbeError":
        return Verdict(False, str(error.get("key", "error.other")), dict(error.get("fields") or {}))
    fields = {"type": kind, "detail": _short(text)}
    if kind == "NotImplementedError":
        return Verdict(False, "error.not_implemented", fields)
    if "view size is not compatible" in text:
        # "after transpose, call .contiguous()" only where the code transposed before the view; otherwise the input
        # itself was not contiguous, and the view asked for a shape its memory order cannot give.
        code = str(error.get("code") or error.get("line") or "")
        if TRANSPOSE.search(code) is None:
            return Verdict(False, "error.view_non_contiguous_input", fields)
        return Verdict(False, "error.view_non_contiguous", fields)
    if any(words in text for words in DEVICE_MISMATCH):
        return Verdict(False, "error.device_mismatch", fields)
    if kind == "TypeError" and (found := UNEXPECTED_KEYWORD.search(text)) is not None:
        return Verdict(False, "error.unexpected_keyword", {**fields, "keyword": found.group(1)})
    if kind == "TypeError" and (found := MISSING_ARGUMENT.search(text)) is not None:
        return Verdict(False, "error.missing_argument", {**fields, "name": found.group(1)})
    if kind == "TypeError" and ARITY.search(text) is not None:  # the call itself: the student's function takes
        return Verdict(False, "error.wrong_signature", fields)  # other parameters than the exercise passes
    line = str(error.get("line", ""))
    if kind == "TypeError" and line and re.search(r"argument|positional|keyword", text):
        # Raised inside the student's code (a size that is a float, say): the call of the student's function was
        # fine, so the signature is not the matter.
        return Verdict(False, "error.argument_type", {**fields, "line": one_line(line, 120)})
    if kind == "TypeError" and CALL_BINDING.search(text):  # the call itself: Python could not bind its arguments
        return Verdict(False, "error.wrong_signature", fields)
    if kind == "RuntimeError" and LEAF_IN_PLACE in text:
        return Verdict(False, "error.leaf_in_place", fields)
    if kind == "RuntimeError" and DTYPE_MISMATCH.search(text):
        # Said at the learner's line where there is one: each check's op may word the error differently, the line
        # is the same (feedback folds by it).
        if line:
            return Verdict(False, "error.dtype_mismatch_at", {**fields, "line": one_line(line, 120)})
        return Verdict(False, "error.dtype_mismatch", fields)
    if kind in ("RuntimeError", "IndexError") and line and (located := _located_shape_error(text, line, fields)):
        return located
    if kind == "RuntimeError" and SHAPE_ERROR.search(text):
        return Verdict(False, "error.shape_mismatch", fields)
    return Verdict(False, "error.other", fields)


def _short(text: str, limit: int = 160) -> str:
    return one_line(text, limit)
