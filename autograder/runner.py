"""Run an exercise's checks in two halves: probe the student's code, then judge the data.

`probe_exercise` touches the student's objects and returns plain data only; `judge_exercise`
needs nothing but that data, the seed and the reference. `run_exercise` does both in one process
(the notebook); autograder.isolation runs the first half in a sandboxed child process.
"""

import contextlib
import random
import re

import torch

from autograder import catalog
from autograder.compare import largest_difference
from autograder.exercises import exercise as find_exercise
from autograder.i18n import language, render
from autograder.misconceptions import MISCONCEPTIONS_BY_ID
from autograder.model import ERROR, FAILED, PASSED, CheckResult, Verdict
from autograder.output_fingerprint import output_fingerprint
from autograder.probing import run_probe
from autograder.safe_text import one_line

DEFAULT_SEED = 20260
SHAPE_ERROR = re.compile(r"size of tensor|shape|must match|cannot be multiplied|mismatch|Expected size")
MAX_SHOWN = 6  # values of expected/got printed per public failure
MAX_WRONG_CASES = 4  # hidden cases fingerprinted per failed check (autograder.output_fingerprint)


def cases_for(check, seed):
    """The check's cases for this seed: the same on the probe side and the judge side."""
    return check.cases(random.Random(f"{seed}/{check.id}"))


@contextlib.contextmanager
def single_threaded():
    """Checks use tiny tensors: a second intra-op thread only adds waiting (10x slower on a busy 2-core box).

    The student's own setting is restored afterwards.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def probe_exercise(exercise_id, namespace, *, seed=DEFAULT_SEED, include_hidden=True):
    """{check id: [probe data per case]}; a check stops at its first case that raised."""
    with single_threaded():
        return _probe_checks(catalog.checks_of(exercise_id, include_hidden=include_hidden), namespace, seed)


def _probe_checks(checks, namespace, seed):
    records = {}
    for check in checks:
        records[check.id] = []
        for case in cases_for(check, seed):
            data = run_probe(check.probe, namespace, case)
            records[check.id].append(data)
            if "error" in data:
                break
    return records


def judge_exercise(exercise_id, records, *, seed=DEFAULT_SEED, include_hidden=True, lang=None):
    """One CheckResult per check, from probe data alone."""
    lang = lang or language()
    with single_threaded():
        return [
            _judge_check(check, records.get(check.id), seed, lang)
            for check in catalog.checks_of(exercise_id, include_hidden=include_hidden)
        ]


def run_exercise(exercise_id, namespace, *, seed=DEFAULT_SEED, include_hidden=True, lang=None):
    find_exercise(exercise_id)
    records = probe_exercise(exercise_id, namespace, seed=seed, include_hidden=include_hidden)
    return judge_exercise(exercise_id, records, seed=seed, include_hidden=include_hidden, lang=lang)


def _judge_check(check, data_per_case, seed, lang):
    cases = cases_for(check, seed)
    if not isinstance(data_per_case, list) or not data_per_case:
        return _result(check, ERROR, Verdict(False, "error.no_result"), lang)
    for index, (case, data) in enumerate(zip(cases, data_per_case, strict=False)):
        if not isinstance(data, dict):
            return _result(check, ERROR, Verdict(False, "error.no_result"), lang)
        if "error" in data:
            result = _result(check, ERROR, explain_error(data["error"], case), lang)
            return _with_wrong_outputs(result, check, cases, data_per_case, index)
        verdict = _verdict(check, data, case)
        if not verdict.passed:
            result = _result(check, FAILED, verdict, lang)
            return _with_wrong_outputs(result, check, cases, data_per_case, index)
    if len(data_per_case) < len(cases):
        return _result(check, ERROR, Verdict(False, "error.no_result"), lang)
    return _result(check, PASSED, Verdict(True), lang)


def _verdict(check, data, case):
    try:
        return check.judge(data, case)
    except Exception as exc:  # noqa: BLE001 - odd student output must cost the check, never the run
        return Verdict(False, "error.uncomparable", {"type": type(exc).__name__})


def _with_wrong_outputs(result, check, cases, data_per_case, first_wrong):
    """`result` with `wrong_outputs`: "check#case:fingerprint" of each hidden case answered wrong.

    For `attnkit similarity` (autograder.output_fingerprint): the first wrong case is known; the next few are
    judged too, since a right answer on them must not be fingerprinted. Public checks are left out: their cases
    are the notes' examples, which every student sees.
    """
    if not check.hidden:
        return result
    for index in range(first_wrong, min(len(data_per_case), len(cases), first_wrong + MAX_WRONG_CASES)):
        data = data_per_case[index]
        if not isinstance(data, dict):
            break
        if index > first_wrong and "error" not in data and _verdict(check, data, cases[index]).passed:
            continue
        fingerprint = output_fingerprint(data)
        if fingerprint:
            result.wrong_outputs.append(f"{check.id}#{index}:{fingerprint}")
    return result


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


def _result(check, status, verdict, lang):
    messages = catalog.MESSAGES
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
        result.details = _public_details(verdict, lang)
        if verdict.heatmap and verdict.expected is not None and verdict.got is not None:
            result.heatmap = (verdict.expected, verdict.got)
    return result


def _public_details(verdict, lang):
    """Input shape, a few expected and actual values and the largest difference: public checks only."""
    messages = catalog.MESSAGES
    lines = []
    if verdict.input_shape is not None:
        lines.append(f"{render(messages, 'label.input_shape', lang)}: {tuple(verdict.input_shape)}")
    expected, got = verdict.expected, verdict.got
    if hasattr(expected, "shape") and hasattr(got, "shape"):
        lines.append(f"{render(messages, 'label.expected', lang)}: {_preview(expected)}")
        lines.append(f"{render(messages, 'label.got', lang)}: {_preview(got)}")
        diff, index = largest_difference(got, expected)
        if index is not None and diff > 0:
            lines.append(render(messages, "label.largest_difference", lang, {"diff": diff, "index": index}))
    return lines


def _preview(tensor):
    flat = tensor.detach().reshape(-1)[:MAX_SHOWN].tolist()
    values = ", ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in flat)
    more = ", …" if tensor.numel() > MAX_SHOWN else ""
    return f"shape {tuple(tensor.shape)}: [{values}{more}]"
