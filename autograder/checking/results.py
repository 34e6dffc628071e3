"""From a check's verdicts to the CheckResult a student reads: statuses, messages, misconceptions, details.

Everything here takes the message catalogue and the known misconceptions as arguments and needs neither the
checks nor the reference, so the live runner (autograder.running.runner) and the student kit
(autograder.integrations.student_kit) turn verdicts into exactly the same text.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import torch

from autograder.checking.check_types import (
    ERROR,
    FAILED,
    PASSED,
    Case,
    Cause,
    CheckResult,
    Evidence,
    Misconception,
    ProbeData,
    Status,
    Verdict,
)
from autograder.checking.compare import REPRODUCED_BY, unravel
from autograder.checking.diagnosis import explain_error, mistakes_raising
from autograder.checking.expectations import FAILING_ALIKE, RAISED, Expectations
from autograder.checking.fitted import name_fill
from autograder.checking.reproduction import RaisedError
from autograder.checking.text_width import columns
from autograder.i18n import Messages, pick, render

__all__ = [
    "check_result", "error_text", "failing_alike", "judge_cases", "named_mistake", "public_details", "refused_name",
    "verdict_text", "with_rungs",
]

MAX_SHOWN = 6  # values of expected/got printed per public failure
COLON = {"en": ": ", "zh": "："}  # between a detail's label and its value: full-width in a Chinese line
SEPARATOR = {"en": ", ", "zh": "，"}  # between the parts of a detail


class ScoredCheck(Protocol):
    """What a CheckResult is made from: the full kit's Check, or the student kit's stored copy of one."""

    @property
    def id(self) -> str: ...
    @property
    def exercise(self) -> str: ...
    @property
    def points(self) -> float: ...
    @property
    def hidden(self) -> bool: ...


class JudgedCheck(ScoredCheck, Protocol):
    """A check with its judge (a folder's judge module), which both kits run."""

    @property
    def judge(self) -> Callable[[ProbeData, Case, Expectations], Verdict]: ...


def judge_cases(check: JudgedCheck, cases: Sequence[Case], data_per_case: object,
                expectations_of: Callable[[int, ProbeData, Case], Expectations], lang: str, messages: Messages,
                misconceptions: Mapping[str, Misconception]) -> CheckResult:
    """One CheckResult from a check's cases and the probe data of each: the first failing case decides.

    `expectations_of(index, record, case)` gives the case's Expectations: computed from the reference by the full kit,
    read from the stored vectors by the student kit. The judge is the check's own, the same in both.
    """
    if not isinstance(data_per_case, list) or not data_per_case:
        return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages, misconceptions)
    for index, (case, data) in enumerate(zip(cases, data_per_case, strict=False)):
        if not isinstance(data, dict):
            return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages, misconceptions)
        if "error" in data:
            expected = expectations_of(index, data, case)
            raised = check_result(check, ERROR, explain_error(data["error"], case, expected), lang, messages,
                                  misconceptions)
            raised.reproduced_by = mistakes_raising(data["error"], expected)
            raised.failing_alike = failing_alike(error_text(data["error"]), expected)
            if _learner_raised(data["error"]):
                raised.failed_case = index  # the trace up to the raise still says which steps matched
            return raised
        expectations = expectations_of(index, data, case)
        try:
            verdict = check.judge(data, case, expectations)
        except Exception as exc:  # noqa: BLE001 - odd student output must cost the check, never the run
            verdict = Verdict(False, "error.uncomparable", {"type": type(exc).__name__})
        if not verdict.passed:
            later = list(zip(range(index + 1, len(cases)), cases[index + 1:], data_per_case[index + 1:], strict=False))
            verdict, reproducing = _reproduced_on_every_failing_case(check, verdict, later, expectations_of, case)
            verdict = _not_refuted_by_a_passing_case(verdict, index, misconceptions)
            result = check_result(check, FAILED, verdict, lang, messages, misconceptions)
            result.failed_case = index
            # Mistakes whose variant fails this check with the very same verdict: never named here on that alone
            # (a property many mistakes break tells none apart), but one another check proves explains it.
            result.reproduced_by = reproducing
            if verdict.misconception is None and verdict.got is None:  # values need their own numbers compared
                result.failing_alike = failing_alike(verdict_text(verdict), expectations)
            return result
    if len(data_per_case) < len(cases):
        return check_result(check, ERROR, Verdict(False, "error.no_result"), lang, messages, misconceptions)
    return check_result(check, PASSED, Verdict(True), lang, messages, misconceptions)


def verdict_text(verdict: Verdict) -> list[str]:
    """A failing verdict in plain form (JSON, which the student kit stores): its message key, then each field as
    "name=value", sorted; two verdicts with equal texts say the same thing with the same numbers."""
    fields = sorted(f"{name}={value}" for name, value in verdict.fields.items() if name not in CANDIDATE_FIELDS)
    return [verdict.message_key, *fields]


def error_text(error: Mapping[str, Any]) -> list[str]:
    """An error a probe reported in plain form: a ProbeError by its key and fields, any other exception by its type
    and normalised message (autograder.checking.reproduction: the operation and its numbers), and the shapes its op
    read where the run was traced."""
    if str(error.get("type", "")) == "ProbeError":
        given = error.get("fields")
        fields: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        return ["raised", "ProbeError", str(error.get("key", "")),
                *sorted(f"{name}={value}" for name, value in fields.items())]
    found = RaisedError.of(error)
    # The shapes its op read, where the run was traced: a message's numbers can coincide on other tensors.
    return ["raised", found.type, found.message, *([found.operands] if found.operands else [])]


def failing_alike(text: Sequence[str], expectations: Expectations) -> tuple[str, ...]:
    """The mistakes whose variant the same check fails on the same case as the learner's code did, `text` (a
    verdict_text or an error_text): FAILING_ALIKE, where the check's expectations give it
    (autograder.course.value_variants); none elsewhere."""
    if FAILING_ALIKE not in expectations:
        return ()
    try:
        plain = expectations[FAILING_ALIKE]
    except Exception:  # noqa: BLE001 - the variants' run is evidence or nothing: it never costs the check
        return ()
    text = list(text)
    found = [str(item[0]) for item in plain if isinstance(item, (list, tuple)) and item
             and [str(part) for part in item[1:]] == text]
    return tuple(dict.fromkeys(found))


def _not_refuted_by_a_passing_case(verdict: Verdict, failed_case: int,
                                   misconceptions: Mapping[str, Misconception]) -> Verdict:
    """`verdict` without its name when an earlier case of the check passed and the named mistake fails every case
    (a size chosen whatever the inputs): the learner's code does something else that coincides with it on this case
    (d_out = d_in // 2 is the whole output's width for one d_in only)."""
    named = misconceptions.get(verdict.misconception) if verdict.misconception else None
    if failed_case == 0 or named is None or not named.fails_every_case:
        return verdict
    verdict.misconception, verdict.evidence = None, None
    return verdict


def _learner_raised(error: Mapping[str, Any]) -> bool:
    """Whether the case's error is an exception the learner's code raised while computing (not an untouched stub,
    nor a probe's finding about what came back)."""
    return str(error.get("type", "")) not in ("NotImplementedError", "ProbeError")


# A fitted family's value (autograder.checking.fitted) and the field that lists every value reproducing a case.
FITTED_FIELDS = {"fill": "fills"}
# A verdict's fields that list candidates rather than say what failed: left out when two verdicts are compared.
CANDIDATE_FIELDS = frozenset({REPRODUCED_BY, *FITTED_FIELDS.values()})


def _reproduced_on_every_failing_case(check: JudgedCheck, verdict: Verdict, later: Sequence[tuple[int, Case, object]],
                                      expectations_of: Callable[[int, ProbeData, Case], Expectations],
                                      first: Case | None = None) -> tuple[Verdict, tuple[str, ...]]:
    """`verdict` (the first failing case's) named with the one mistake whose variant reproduces the student's output on
    it and on every later case whose values fail, or with no variant-proven name: a variant that reproduces one case by
    a coincidence of sizes proves nothing, and a case where two variants give one output names neither alone. Later
    cases that pass say nothing about it, nor do later ones that raise, except against a variant that does not raise
    there (`_not_raising_it`), nor does any failing case whose output holds no finite number (every overflow gives nan:
    `_no_finite_number`). A mistake of one of the call's sizes needs a failing case where that size tells it apart from
    the case's other sizes (`first`, the first failing case, and the later ones: the notes' 2 heads of size 1 give d_out
    = num_heads, so a divisor of either reproduces both). With it, every mistake of the table whose variant reproduces
    all those cases (named or not: another check of the attempt may tell them apart)."""
    silent = _no_finite_number(verdict)
    # An output of nan and inf alone names nothing: the later failing cases with numbers decide the name. What
    # gives it too stays listed, so that a mistake another check proves may explain it (autograder.checking.attempt).
    overflowing = reproduced(verdict)
    if silent:
        verdict.fields.pop(REPRODUCED_BY, None)
        if verdict.evidence is Evidence.VARIANT:
            verdict.misconception, verdict.evidence = None, None
    candidates: list[tuple[str, float | None]] | None = None if silent else overflowing
    if not overflowing:
        return verdict, ()
    failing_cases = 1
    failing = [] if first is None else [first]
    contradicted: set[str] = set()
    for index, case, data in later:
        if not isinstance(data, dict):
            continue
        if "error" in data:
            contradicted |= _not_raising_it(data["error"], overflowing, expectations_of, index, data, case)
            continue
        try:
            other = check.judge(data, case, expectations_of(index, data, case))
        except Exception:  # noqa: BLE001 - odd student output: no evidence either way
            continue
        if not other.passed:
            failing_cases += 1
            failing.append(case)
            if _no_finite_number(other):
                continue  # says nothing for or against a name, as a passing case does
            found = reproduced(other)
            candidates = found if candidates is None else [candidate for candidate in candidates
                                                           if candidate in found]
    if contradicted:
        overflowing = [candidate for candidate in overflowing if candidate[0] not in contradicted]
        if verdict.evidence is Evidence.VARIANT and verdict.misconception in contradicted:
            verdict.misconception, verdict.evidence = None, None
    if candidates is None:
        return verdict, tuple(name for name, value in overflowing if value is None and name not in GENERAL_NAMES)
    candidates = [candidate for candidate in candidates if candidate in overflowing]
    specific = [candidate for candidate in candidates if candidate[0] not in GENERAL_NAMES
                and (candidate[0] not in SIZE_DIVISORS or any(_tells_apart(candidate[0], case) for case in failing))]
    # A whole-number size of the call (d_k, num_tokens) explains the failing cases better than a number of the
    # student's own only when there are several (their sizes vary): on one case, a typed constant equal to that size
    # reproduces it as well (the similarity bench's students who divide by 3.0 met num_tokens = 3).
    coincidence = (failing_cases == 1 and bool(specific) and specific[0][0] in WHOLE_NUMBER_SIZES
                   and any(name == "scale_wrong_value" for name, _ in candidates))
    if len(specific) == 1 and not coincidence:
        candidates = specific
    if len(candidates) == 1:
        name, value = candidates[0]
        if value is None:
            verdict.misconception, verdict.evidence = name, Evidence.VARIANT
        else:
            name_fill(verdict, (value,))  # the one fitted value: its message and its mistake
    elif verdict.evidence is Evidence.VARIANT:
        verdict.misconception, verdict.evidence = None, None
    return verdict, tuple(name for name, value in candidates if value is None and name not in GENERAL_NAMES)


def _not_raising_it(error: Mapping[str, Any], candidates: Sequence[tuple[str, float | None]],
                    expectations_of: Callable[[int, ProbeData, Case], Expectations], index: int, data: ProbeData,
                    case: Case) -> set[str]:
    """The candidates refuted by a later case on which the learner's own code raised: those whose variant does not
    raise that very error there, where the check runs raising variants. The variant runs to an output where the
    learner's code stops, so the learner's code is not that variant (a mask cut to len(x) hides nothing on a batch
    of one, as a dropped fill does, and raises on every other batch)."""
    if not candidates or not _learner_raised(error):
        return set()
    try:
        expected = expectations_of(index, data, case)
        if RAISED not in expected:  # the check runs no raising variants: nothing is known of what they raise
            return set()
        raising = set(mistakes_raising(error, expected))
    except Exception:  # noqa: BLE001 - the variants' run is evidence or nothing: it never costs the check
        return set()
    return {name for name, _ in candidates if name not in raising}


def _no_finite_number(verdict: Verdict) -> bool:
    """Whether the learner's output on a failing case holds no finite number (every entry nan or inf): then no
    variant is proven by it, since every computation that overflows gives it (a softmax that shifts by the wrong
    amount overflows as the unshifted one does); a name needs a failing case whose numbers the variant gives."""
    got = verdict.got
    return isinstance(got, torch.Tensor) and got.numel() > 0 and (got.is_floating_point() or got.is_complex()) \
        and not bool(torch.isfinite(got).any())


# A mistake and the general family it is one value of: the scores divided by the wrong number (a fitted divisor)
# holds wherever a known wrong divisor reproduces a case; where both hold on every case, the known one is named.
GENERAL_FAMILIES = {name: "scale_wrong_value" for name in (
    "missing_scaling", "scale_by_d_in", "scale_by_d_out", "scale_by_d_k", "scale_by_num_tokens")}
# Explanations a known mistake of the call's own sizes is preferred to where both reproduce every failing case: the
# general wrong divisor, and a size of the notebook's example that the call's own size happens to equal.
GENERAL_NAMES = frozenset({"scale_wrong_value", "size_from_notebook"})
WHOLE_NUMBER_SIZES = frozenset({"scale_by_d_k", "scale_by_num_tokens"})


# Mistakes that divide the scores by one of the call's sizes: (that size, whether by its square root). num_tokens is
# left out: its variants divide by it and by its root, and one failing case never names it (WHOLE_NUMBER_SIZES).
SIZE_DIVISORS = {"scale_by_d_out": ("d_out", True), "scale_by_d_in": ("d_in", True),
                 "scale_by_d_k": ("head_dim", False)}
CASE_SIZES = ("d_in", "d_out", "num_heads", "head_dim", "num_tokens")


def _tells_apart(mistake: str, case: Case) -> bool:
    """Whether `case` tells the size-divisor `mistake` apart from dividing by any other size of the case (or its
    root): its divisor equals none of theirs. A case that does not give the mistake's own size (a judge's own
    inputs) is not read here: the variant's comparison alone decides, as before."""
    sizes = {name: case[name] for name in CASE_SIZES if isinstance(case.get(name), int)}
    same = {name: {name} for name in CASE_SIZES}
    if "head_dim" not in sizes and "d_out" in sizes:
        heads = sizes.get("num_heads", 1)
        sizes["head_dim"] = sizes["d_out"] // heads if heads > 1 and sizes["d_out"] % heads == 0 else sizes["d_out"]
        if heads <= 1:  # one head: its size is d_out itself, one quantity under two names
            same["head_dim"] = same["d_out"] = {"head_dim", "d_out"}
    own, by_root = SIZE_DIVISORS[mistake]
    if own not in sizes:
        return True
    divisor = sizes[own] ** 0.5 if by_root else float(sizes[own])
    others = [size for name, size in sizes.items() if name not in same[own] and size > 1]
    return not any(math.isclose(divisor, form) for size in others for form in (float(size), size ** 0.5))


def reproduced(verdict: Verdict) -> list[tuple[str, float | None]]:
    """What reproduces a failing case: (mistake, None) for each variant that does, (fitted field, value) for each
    fitted value that does; the name the verdict carries with VARIANT evidence when it lists none."""
    found: list[tuple[str, float | None]] = [(name, None) for name in verdict.fields.get(REPRODUCED_BY, ())]
    for value, listed in FITTED_FIELDS.items():
        found += [(value, float(candidate)) for candidate in verdict.fields.get(listed, ())]
    if not found and verdict.misconception is not None and verdict.evidence is Evidence.VARIANT:
        found = [(verdict.misconception, None)]
    general: list[tuple[str, float | None]] = [(GENERAL_FAMILIES[name], None) for name, _ in found
                                                if name in GENERAL_FAMILIES]
    return list(dict.fromkeys(found + general))


def check_result(check: ScoredCheck, status: Status, verdict: Verdict, lang: str, messages: Messages,
                 misconceptions: Mapping[str, Misconception]) -> CheckResult:
    """The CheckResult of `check` (anything with id, exercise, points, hidden) for one verdict; `misconceptions`
    maps a misconception id to its Misconception (the hint ladder's texts, each in both languages)."""
    key = verdict.message_key or f"{check.id}.title"
    # A hidden check uses the value-free form of a message when one exists.
    if check.hidden and f"{key}.hidden" in messages:
        key = f"{key}.hidden"
    title = render(messages, f"{check.id}.title", lang)
    fields = dict(verdict.fields)
    if check.hidden and "detail" in fields:
        # The student's own exception text can quote the hidden input (e.g. raise ValueError(repr(x))).
        fields["detail"] = render(messages, "label.detail_withheld", lang)
    message = title if status == PASSED else f"{title}{pick(COLON, lang)}{render(messages, key, lang, fields)}"
    misconception = named_mistake(verdict, check.exercise, misconceptions)
    result = CheckResult(
        id=check.id,
        exercise=check.exercise,
        score=float(check.points) if status == PASSED else 0.0,
        max_score=float(check.points),
        status=status,
        misconception=misconception,
        message=message,
        hidden=check.hidden,
        stub=verdict.message_key == "error.not_implemented",
        title=title,
        cause=None if status == PASSED else Cause(misconception, key, tuple(sorted(
            (name, str(value)) for name, value in fields.items()))),
    )
    if misconception:
        with_rungs(result, misconceptions[misconception], lang, messages)
    if not check.hidden and status == FAILED:
        result.details = public_details(verdict, lang, messages)
        if verdict.heatmap and verdict.expected is not None and verdict.got is not None:
            result.heatmap = (verdict.expected, verdict.got)
        result.head_layout = verdict.head_layout
        result.values_shown = (isinstance(verdict.expected, torch.Tensor) and isinstance(verdict.got, torch.Tensor)
                               or result.heatmap is not None or result.head_layout is not None)
    return result


def with_rungs(result: CheckResult, known: Misconception, lang: str, messages: Messages) -> None:
    """`result`'s ladder lines set to `known`'s texts: each rung a line with its label; a text the misconception does
    not have leaves its rung empty."""
    result.question = _ladder_line(messages, "ladder.question", known.question, lang)
    result.mistake = _ladder_line(messages, "label.misconception", known.name, lang)
    result.hint = _ladder_line(messages, "label.hint", known.hint, lang)
    result.change = _ladder_line(messages, "ladder.change", known.change, lang)


def named_mistake(verdict: Verdict, exercise: str, misconceptions: Mapping[str, Misconception]) -> str | None:
    """The mistake the verdict names, when the table knows it, it applies to `exercise` and the verdict carries
    evidence of a kind that proves it (Misconception.proven_by); None otherwise: an unproven name is never shown."""
    if verdict.misconception is None or refused_name(verdict, exercise, misconceptions) is not None:
        return None
    return verdict.misconception


def refused_name(verdict: Verdict, exercise: str, misconceptions: Mapping[str, Misconception]) -> str | None:
    """Why the name `verdict` carries is not shown on `exercise` (Misconception.refusal, or a name the table does
    not know); None when it is shown or there is none."""
    if verdict.misconception is None:
        return None
    known = misconceptions.get(verdict.misconception)
    if known is None:
        return f"{verdict.misconception} is not in the table of mistakes"
    return known.refusal(verdict, exercise)


def _ladder_line(messages: Messages, key: str, text: Mapping[str, str], lang: str) -> str:
    """One rung's line, `text` in `lang` after its label ("reproduced mistake — …"); "" when there is no text."""
    return render(messages, key, lang, {"text": pick(text, lang)}) if text else ""


def public_details(verdict: Verdict, lang: str, messages: Messages) -> list[str]:
    """The input (its shape, or its sizes by name, and a padding mask handed beside it), the expected and actual values
    around their largest difference (the same stretch of the same row on both sides, column under column, with the index
    of its first element), their whole shapes, and the largest difference where the judge compared: public checks only.
    Where the shapes differ there is no common place to look at: the first values of each are shown."""
    lines = []
    colon = pick(COLON, lang)
    if verdict.input_sizes:
        sizes = ", ".join(f"{name} = {size}" for name, size in verdict.input_sizes.items())
        lines.append(f"{render(messages, 'label.input', lang)}{colon}{sizes}")
    elif verdict.input_shape is not None:
        lines.append(f"{render(messages, 'label.input_shape', lang)}{colon}{tuple(verdict.input_shape)}")
    if verdict.input_mask is not None:
        rows = [[int(value) for value in row] for row in verdict.input_mask]
        lines.append(f"{render(messages, 'label.input_mask', lang)}{colon}{rows}")
    expected, got = verdict.expected, verdict.got
    if isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor):
        labels = _aligned_labels([render(messages, "label.expected", lang), render(messages, "label.got", lang)],
                                colon)
        shape = render(messages, "label.shape", lang)
        compared = _compared_only(got, expected, verdict.compared)
        diff, index = _differs_most(compared, expected)
        if index is None or diff == 0:
            lines.append(f"{labels[0]}{preview(expected, shape, colon)}")
            lines.append(f"{labels[1]}{preview(got, shape, colon)}")
            return lines
        start, values = _excerpts(expected, got, index)
        # A 0-d tensor's one value needs no index.
        where = pick(SEPARATOR, lang) + render(messages, "label.excerpt_from", lang, {"index": start}) if start else ""
        for label, tensor, shown in zip(labels, (expected, got), values, strict=True):
            lines.append(f"{label}{shape} {tuple(tensor.shape)}{where}{colon}{shown}")
        lines.append(render(messages, _difference_label(compared, expected, index), lang,
                            {"diff": diff, "index": index}))
    return lines


def _difference_label(got: torch.Tensor, expected: torch.Tensor, index: tuple[int, ...]) -> str:
    """The label of the element that differs most: a NaN against a number has no difference to quote (12r's
    rz-ca-08 read "largest difference inf" where its output held NaN), so that one is said as what it is."""
    theirs, ours = float(got.detach()[index]), float(expected.detach()[index])
    if math.isnan(theirs) and not math.isnan(ours):
        return "label.nan_got"
    if math.isnan(ours) and not math.isnan(theirs):
        return "label.nan_expected"
    return "label.largest_difference"


def _differs_most(got: torch.Tensor, expected: torch.Tensor) -> tuple[float, tuple[int, ...] | None]:
    """(difference, index) of the element where `got` is farthest from `expected`: equal values (the same infinity,
    NaN against NaN included) differ by 0, a nan or an infinity against anything else by inf; (inf, None) when the
    shapes differ."""
    if got.shape != expected.shape:
        return float("inf"), None
    theirs, ours = got.detach().cpu().to(torch.float64), expected.detach().cpu().to(torch.float64)
    diff = (theirs - ours).abs()
    diff = torch.where((theirs == ours) | (theirs.isnan() & ours.isnan()), torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    if diff.numel() == 0:
        return 0.0, None
    flat = int(diff.reshape(-1).argmax())
    return float(diff.reshape(-1)[flat]), unravel(flat, tuple(diff.shape))


def _excerpts(expected: torch.Tensor, got: torch.Tensor, index: tuple[int, ...]) -> tuple[tuple[int, ...], list[str]]:
    """The index of the first element shown, and expected's and got's values along the last axis around `index`
    (MAX_SHOWN of them, `index` among them), each value as wide as its column's widest: one column per element."""
    if not index:  # a 0-d tensor: its one value
        texts = [[_format_value(tensor.item())] for tensor in (expected, got)]
        return (), [f"[{text[0]}]" for text in texts]
    length, at = expected.shape[-1], index[-1]
    first = max(0, min(at - MAX_SHOWN // 2, length - MAX_SHOWN))
    last = min(length, first + MAX_SHOWN)
    texts = [[_format_value(value) for value in tensor.detach()[index[:-1]][first:last].tolist()]
             for tensor in (expected, got)]
    widths = [max(len(a), len(b)) for a, b in zip(*texts, strict=True)]
    before, after = ("…, " if first > 0 else ""), (", …" if last < length else "")
    shown = [f"[{before}{', '.join(value.rjust(width) for value, width in zip(column, widths, strict=True))}{after}]"
             for column in texts]
    return (*index[:-1], first), shown


def _aligned_labels(labels: Sequence[str], colon: str) -> list[str]:
    """Each label with its colon, padded to the widest (a Chinese character two columns wide), so what follows
    starts in the same column on every line."""
    widths = [columns(label + colon) for label in labels]
    return [label + colon + " " * (max(widths) - width) for label, width in zip(labels, widths, strict=True)]


def _format_value(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _compared_only(got: torch.Tensor, expected: torch.Tensor, compared: torch.Tensor | None) -> torch.Tensor:
    """`got` with expected's values where the judge did not compare (`compared`: bool over the leading axes), so
    the largest difference is one the check counted."""
    if compared is None or got.shape != expected.shape or tuple(compared.shape) != tuple(got.shape[:compared.dim()]):
        return got
    keep = compared.reshape(*compared.shape, *([1] * (got.dim() - compared.dim())))
    return torch.where(keep, got.to(torch.float64), expected.to(torch.float64))


def preview(tensor: torch.Tensor, shape_label: str = "shape", colon: str = ": ") -> str:
    """The whole shape and the first MAX_SHOWN values in memory order."""
    flat = tensor.detach().reshape(-1)[:MAX_SHOWN].tolist()
    values = ", ".join(_format_value(v) for v in flat)
    more = ", …" if tensor.numel() > MAX_SHOWN else ""
    return f"{shape_label} {tuple(tensor.shape)}{colon}[{values}{more}]"
