"""From a check's verdicts to the CheckResult a student reads: statuses, messages, misconceptions, details.

Everything here takes the message catalogue as an argument and needs neither the checks nor the reference, so
the live runner (autograder.runner) and the student kit (autograder.student_kit) turn verdicts into exactly
the same text.
"""

import re

from autograder.compare import largest_difference
from autograder.i18n import render
from autograder.misconceptions import MISCONCEPTIONS_BY_ID
from autograder.model import ERROR, FAILED, PASSED, CheckResult, Verdict
from autograder.safe_text import one_line

SHAPE_ERROR = re.compile(r"size of tensor|shape|must match|cannot be multiplied|mismatch|Expected size")
MAX_SHOWN = 6  # values of expected/got printed per public failure


def judge_cases(check, cases, data_per_case, judge, lang, messages):
    """One CheckResult from a check's cases and the probe data of each: the first failing case decides."""
    if not isinstance(data_per_case, list) or not data_per_case:
        return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages)
    for case, data in zip(cases, data_per_case, strict=False):
        if not isinstance(data, dict):
            return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages)
        if "error" in data:
            return check_result(check, ERROR, explain_error(data["error"], case), lang, messages)
        try:
            verdict = judge(data, case)
        except Exception as exc:  # noqa: BLE001 - odd student output must cost the check, never the run
            verdict = Verdict(False, "error.uncomparable", {"type": type(exc).__name__})
        if not verdict.passed:
            return check_result(check, FAILED, verdict, lang, messages)
    if len(data_per_case) < len(cases):
        return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages)
    return check_result(check, PASSED, Verdict(True), lang, messages)


def explain_error(error, case):
    """Turn an exception the student's code raised into a message key (and a misconception when one fits)."""
    kind, text = str(error.get("type", "")), str(error.get("message", ""))
    if kind == "ProbeError":
        return Verdict(False, str(error.get("key", "error.other")), dict(error.get("fields") or {}))
    fields = {"type": kind, "detail": one_line(text, 160)}
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


def check_result(check, status, verdict, lang, messages):
    """The CheckResult of `check` (anything with id, exercise, points, hidden) for one verdict."""
    key = verdict.message_key or f"{check.id}.title"
    # A hidden check uses the value-free form of a message when one exists.
    if check.hidden and f"{key}.hidden" in messages:
        key = f"{key}.hidden"
    title = render(messages, f"{check.id}.title", lang)
    fields = dict(verdict.fields)
    if check.hidden and "detail" in fields:
        # The student's own exception text can quote the hidden input (e.g. raise ValueError(repr(x))).
        fields["detail"] = render(messages, "label.detail_withheld", lang)
    message = title if status == PASSED else f"{title}: {render(messages, key, lang, fields)}"
    misconception = verdict.misconception if verdict.misconception in MISCONCEPTIONS_BY_ID else None
    result = CheckResult(
        id=check.id,
        exercise=check.exercise,
        score=float(check.points) if status == PASSED else 0.0,
        max_score=float(check.points),
        status=status,
        misconception=misconception,
        message=message,
        hidden=check.hidden,
    )
    if misconception:
        known = MISCONCEPTIONS_BY_ID[misconception]
        name, hint = (known.name_zh, known.hint_zh) if lang == "zh" else (known.name_en, known.hint_en)
        result.message += f" [{render(messages, 'label.misconception', lang)}: {name}; " \
                          f"{render(messages, 'label.hint', lang)}: {hint}]"
    if not check.hidden and status == FAILED:
        result.details = public_details(verdict, lang, messages)
        if verdict.heatmap and verdict.expected is not None and verdict.got is not None:
            result.heatmap = (verdict.expected, verdict.got)
    return result


def public_details(verdict, lang, messages):
    """Input shape, a few expected and actual values and the largest difference: public checks only."""
    lines = []
    if verdict.input_shape is not None:
        lines.append(f"{render(messages, 'label.input_shape', lang)}: {tuple(verdict.input_shape)}")
    expected, got = verdict.expected, verdict.got
    if hasattr(expected, "shape") and hasattr(got, "shape"):
        lines.append(f"{render(messages, 'label.expected', lang)}: {preview(expected)}")
        lines.append(f"{render(messages, 'label.got', lang)}: {preview(got)}")
        diff, index = largest_difference(got, expected)
        if index is not None and diff > 0:
            lines.append(render(messages, "label.largest_difference", lang, {"diff": diff, "index": index}))
    return lines


def preview(tensor):
    flat = tensor.detach().reshape(-1)[:MAX_SHOWN].tolist()
    values = ", ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in flat)
    more = ", …" if tensor.numel() > MAX_SHOWN else ""
    return f"shape {tuple(tensor.shape)}: [{values}{more}]"
