"""What an exception raised by the student's code means, in the student's terms: a message key, maybe a misconception.

Judges call `explain_error` too (a probe that records the exception as data), so this module needs nothing but the
verdict type: the checks can import it without importing the runner that imports them.
"""

import re
from collections.abc import Mapping
from typing import Any

from autograder.checking.check_types import Verdict
from autograder.safe_text import one_line

SHAPE_ERROR = re.compile(r"size of tensor|shape|must match|cannot be multiplied|mismatch|Expected size")
MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
BROADCAST = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
                       r"dimension (\d+)")
VIEW_SIZE = re.compile(r"shape '\[([\d, -]+)\]' is invalid for input of size (\d+)")
AXIS_RANGE = re.compile(r"Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (-?\d+)\)")
# The student's function called as the exercise's signature gives: a keyword it renamed, or a parameter it added.
UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '(\w+)'")
MISSING_ARGUMENT = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: '(\w+)'")
# A transpose as code writes it (an attribute or a call), not a word inside a name such as split_without_transpose.
TRANSPOSE = re.compile(r"\.(?:T|mT|t|H|mH)\b|\b(?:transpose|permute|swapaxes|swapdims|movedim)\s*\(")
LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation"


def located_shape_error(text: str, line: str, fields: Mapping[str, Any]) -> Verdict | None:
    """A shape error placed on the student's own line, with the operation and the axis; None if unknown."""
    at = {**fields, "line": one_line(line, 120)}
    compact = line.replace(" ", "")
    if "transpose(1,2)" in compact and ("@" in compact or "matmul" in compact):
        # Right on (b, num_tokens, d) tensors; on the heads' four axes it pairs heads with tokens.
        return Verdict(False, "error.transpose_4d", at)
    if (found := MATMUL.search(text)) is not None:
        rows, inner, other_inner, cols = found.groups()
        verdict = Verdict(False, "error.matmul_shapes", {**at, "left": f"({rows}, {inner})",
                                                          "right": f"({other_inner}, {cols})"})
        if ".weight" in line and "@" in line:
            verdict.misconception = "linear_as_matrix"
        return verdict
    if (found := BROADCAST.search(text)) is not None:
        size_a, size_b, axis = found.groups()
        return Verdict(False, "error.broadcast_axis", {**at, "axis": int(axis), "a": int(size_a), "b": int(size_b)})
    if (found := VIEW_SIZE.search(text)) is not None:
        shape, size = found.groups()
        return Verdict(False, "error.view_size", {**at, "shape": f"({shape})", "size": int(size)})
    if (found := AXIS_RANGE.search(text)) is not None:
        rank, axis = found.groups()
        return Verdict(False, "error.axis_out_of_range", {**at, "rank": int(rank), "axis": int(axis)})
    return None


def explain_error(error: Mapping[str, Any], case: Mapping[str, Any]) -> Verdict:
    """Turn an exception the student's code raised into a message key (and a misconception when one fits)."""
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
    if "same device" in text or "device type" in text:
        return Verdict(False, "error.device_mismatch", fields, misconception="mask_plain_attribute")
    if kind == "TypeError" and "@" in text and "Linear" in text:
        return Verdict(False, "error.other", fields, misconception="linear_as_matrix")
    if kind == "TypeError" and (found := UNEXPECTED_KEYWORD.search(text)) is not None:
        return Verdict(False, "error.unexpected_keyword", {**fields, "keyword": found.group(1)})
    if kind == "TypeError" and (found := MISSING_ARGUMENT.search(text)) is not None:
        return Verdict(False, "error.missing_argument", {**fields, "name": found.group(1)})
    if kind == "TypeError" and re.search(r"argument|positional|keyword", text):
        return Verdict(False, "error.wrong_signature", fields)
    if kind == "RuntimeError" and LEAF_IN_PLACE in text:
        return Verdict(False, "error.leaf_in_place", fields, misconception="copy_without_no_grad")
    line = str(error.get("line", ""))
    if kind in ("RuntimeError", "IndexError") and line and (located := located_shape_error(text, line, fields)):
        if located.message_key == "error.view_size" and view_batch_from_elsewhere(text, case):
            located.misconception = "size_from_notebook"
        if located.message_key == "error.broadcast_axis":
            num_tokens, context_length = case.get("num_tokens"), case.get("context_length")
            if num_tokens is not None and context_length is not None and num_tokens < context_length \
                    and str(context_length) in text:
                located.misconception = "mask_not_truncated"
        return located
    if kind == "RuntimeError" and SHAPE_ERROR.search(text):
        num_tokens, context_length = case.get("num_tokens"), case.get("context_length")
        if num_tokens is not None and context_length is not None and num_tokens < context_length:
            if str(context_length) in text:
                return Verdict(False, "error.shape_mismatch", fields, misconception="mask_not_truncated")
        return Verdict(False, "error.shape_mismatch", fields)
    return Verdict(False, "error.other", fields)


def view_batch_from_elsewhere(text: str, case: Mapping[str, Any]) -> bool:
    """Whether a failed view asked for another batch size than the input's own, the rest of its shape fitting: the
    batch size was read from somewhere else (a variable of the notebook), not from the input."""
    found, batch = VIEW_SIZE.search(text), case.get("batch")
    if found is None or not isinstance(batch, int):
        return False
    shape = [int(size) for size in found.group(1).split(",") if size.strip()]
    if len(shape) < 2 or any(size <= 0 for size in shape):
        return False
    rest = 1
    for size in shape[1:]:
        rest *= size
    return shape[0] != batch and rest * batch == int(found.group(2))


def _short(text: str, limit: int = 160) -> str:
    return one_line(text, limit)
