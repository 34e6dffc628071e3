"""What an exception raised by the student's code means, in the student's terms: a message key, maybe a misconception.

Judges call `explain_error` too (a probe that records the exception as data), so this module needs nothing but the
verdict type: the checks can import it without importing the runner that imports them.
"""

import re

from autograder.checking.check_types import Verdict
from autograder.safe_text import one_line

SHAPE_ERROR = re.compile(r"size of tensor|shape|must match|cannot be multiplied|mismatch|Expected size")


def explain_error(error, case):
    """Turn an exception the student's code raised into a message key (and a misconception when one fits)."""
    kind, text = str(error.get("type", "")), str(error.get("message", ""))
    if kind == "ProbeError":
        return Verdict(False, str(error.get("key", "error.other")), dict(error.get("fields") or {}))
    fields = {"type": kind, "detail": _short(text)}
    if kind == "NotImplementedError":
        return Verdict(False, "error.not_implemented", fields)
    if "view size is not compatible" in text:
        return Verdict(False, "error.view_non_contiguous", fields)
    if "same device" in text or "device type" in text:
        return Verdict(False, "error.device_mismatch", fields, misconception="mask_plain_attribute")
    if kind == "TypeError" and "@" in text and "Linear" in text:
        return Verdict(False, "error.other", fields, misconception="linear_as_matrix")
    if kind == "TypeError" and re.search(r"argument|positional|keyword", text):
        return Verdict(False, "error.wrong_signature", fields)
    if kind == "RuntimeError" and SHAPE_ERROR.search(text):
        num_tokens, context_length = case.get("num_tokens"), case.get("context_length")
        if num_tokens is not None and context_length is not None and num_tokens < context_length:
            if str(context_length) in text:
                return Verdict(False, "error.shape_mismatch", fields, misconception="mask_not_truncated")
        return Verdict(False, "error.shape_mismatch", fields)
    return Verdict(False, "error.other", fields)


def _short(text, limit=160):
    return one_line(text, limit)
