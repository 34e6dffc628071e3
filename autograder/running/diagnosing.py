"""The diagnosis stage of check(...), between judging and rendering: for each failing public check that names no
known mistake (and is not folded under an earlier one of the same message), where the learner's computation first
departs from the notes' steps, proven by their own run (autograder.checking.departure); for an exception their code
raised, the steps it reproduced before it raised. Failures departing at one step are then one row of the table
(autograder.checking.feedback.rows).

Runs only when a check failed (a passing check pays nothing): the failing case's probe is run once more under the
tensor trace (autograder.checking.tensor_trace), in the process that ran the probes, and the steps come from the
case's expectations (the reference's, computed; or the student kit's, stored). Both kits run it: it imports no
reference, declaration or catalogue.
"""

import dataclasses
import functools
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import torch

from autograder.checking.check_types import ERROR, FAILED, CheckResult, DepartureKind
from autograder.checking.count_difference import (
    COUNT_PARTS,
    SeenCount,
    count_fact,
    count_fits,
    count_line,
    refuted_count_facts,
)
from autograder.checking.departure import (
    STEPS,
    Departure,
    StepValues,
    departure_line,
    find_departure,
    listed,
    matches_up_to_layout,
    normalised_value,
    recorded_output,
    relation_reproduced,
    values_close,
)
from autograder.checking.expectations import Expectations
from autograder.checking.feedback import CAUSE_STATED_KEYS, rows
from autograder.checking.gradient_departure import (
    GRAPH_STEPS,
    NEIGHBOUR,
    OWN_SLOPE_KEYS,
    find_gradient_departure,
    gradient_line,
)
from autograder.checking.notebook_reads import notebook_ints_read, reads_change_the_run
from autograder.checking.parameter_moves import STEPS_MOVED, parameter_moves, stored_parameter_moves
from autograder.checking.probing import own_slopes_later, run_probe
from autograder.checking.tensor_trace import graph_traced_probe, traced_probe_with_raise
from autograder.course.shared.plan import ProbeAddress, resolve
from autograder.i18n import Messages, render
from autograder.safe_text import one_line

__all__ = ["DiagnosedCheck", "with_departures"]

# A call of the learner's function that does not fit its signature: no step of theirs ran.
CALL_KEYS = frozenset({"error.wrong_signature", "error.unexpected_keyword", "error.missing_argument"})


class DiagnosedCheck(Protocol):
    """What the stage needs of a check the runtime ran: its probe, its cases and its expectations per case."""

    @property
    def probe(self) -> ProbeAddress: ...
    @property
    def cases(self) -> Callable[[], Sequence[dict[str, Any]]]: ...
    @property
    def expectations(self) -> Callable[[int, dict[str, Any], dict[str, Any]], Expectations]: ...


def with_departures(results: Sequence[CheckResult], checks: Sequence[DiagnosedCheck],
                    records: Mapping[str, Sequence[dict[str, Any]]], namespace: Mapping[str, Any], lang: str,
                    messages: Messages) -> list[CheckResult]:
    """`results` (one per check of `checks`, in order), each failing public one that names no mistake with its
    departure line and step (so that the table folds the failures departing at one step into one row); the others
    as they are. A failure folded under another of the same message is not traced again: it reads the same. Code
    that raised where no step could be compared is told its own line that raised (`_raised_at`). A failure with no
    line of its own whose result the relation proven on an earlier check of its exercise reproduces is that
    check's cause (`_same_relation`): the table folds it under that check's row, never "no known mistake"."""
    diagnosed: list[CheckResult] = []
    proven: list[tuple[CheckResult, Departure]] = []  # the checks whose departure a relation of values proves
    or_next: dict[int, str] = {}  # a raise before one step "or the next" (Departure.or_next), by its place
    # The steps each departure's case leaves open (Departure.fits), or the facts a count fits (count_fits), by place.
    fits: dict[int, tuple[str, ...]] = {}
    refuted: dict[str, frozenset[str]] = {}  # the count facts each exercise's recorded counts refute
    for result, check in zip(results, checks, strict=True):
        departure = None
        raised = result.status == ERROR
        looked_for = result.status in (FAILED, ERROR) and _diagnosed(result, diagnosed)
        if looked_for:
            departure = _departure(result, check, records.get(result.id, ()), namespace)
            if departure is not None and not raised and not departure.compared:
                # The trace holds none of the learner's tensors (an integer mask, a slice of a tensor made before
                # the call): "your code made no tensor that could be compared" would be false of code that made one.
                departure = None
            if departure is not None and raised:
                departure = dataclasses.replace(departure, raised=True)
        value_line = "" if departure is None else departure_line(departure, lang, messages)
        line = value_line
        if looked_for:
            line = _with_gradient(value_line, departure, result, check, records.get(result.id, ()), namespace,
                                  lang, messages)
        if value_line and departure is not None and line.startswith(value_line):
            if departure.or_next is not None:
                or_next[len(diagnosed)] = departure.or_next
            fits[len(diagnosed)] = departure.fits
            diagnosed.append(dataclasses.replace(result, departure=line,
                                                 departure_step=departure.step or departure.last,
                                                 departure_kind=_kind(departure)))
            proven.append((result, departure))
        elif line:  # the gradient's alone: no step departs in value (folded by its message, as a raise's line is)
            diagnosed.append(dataclasses.replace(result, departure=line))
        elif departure is None and raised and looked_for and (
                at := _raised_at(result, records.get(result.id, ()), lang, messages, answer_files(namespace))):
            diagnosed.append(dataclasses.replace(result, departure=at, departure_kind=DepartureKind.RAISED_ONLY))
        elif departure is None and not raised and looked_for and (
                counted := _failing_count(result, check, records.get(result.id, ()))) is not None:
            if result.exercise not in refuted:  # read once an exercise, from every count its checks recorded
                refuted[result.exercise] = refuted_count_facts(_counts_seen(results, checks, records, result.exercise))
            facts_refuted = refuted[result.exercise]
            fits[len(diagnosed)] = count_fits(counted.got, counted.right, counted.plain)
            diagnosed.append(dataclasses.replace(
                result, departure=count_line(counted.got, counted.right, counted.plain, lang, messages,
                                             refuted=facts_refuted),
                departure_kind=DepartureKind.COUNT,
                count_fact=count_fact(counted.got, counted.right, counted.plain, refuted=facts_refuted)))
        elif looked_for and not raised and (near := _near_departure(result, check, records.get(result.id, ()),
                                                                    namespace)) is not None:
            # A gradient check's case where the values depart too; or a gradient that is the learner's function's own
            # slope, not the notes': the function differs from theirs near this case, and on the case beside it
            # their own run departs at a step. One cause with a value check departing there (feedback._same_cause).
            near_case, near_departure = near
            fits[len(diagnosed)] = near_departure.fits
            lead = "" if near_case is None else render(messages, "departure.near_input", lang,
                                                       {"input": _vector_text(near_case)})
            diagnosed.append(dataclasses.replace(result, departure=departure_line(near_departure, lang, messages, lead),
                                                 departure_step=near_departure.step or "",
                                                 departure_kind=_kind(near_departure)))
        elif looked_for and (same := _same_relation(result, check, records.get(result.id, ()), proven)) is not None:
            # The step the learner's result is on this case: the returned one, or the last in another axis order.
            key, shown_step = (("departure.same_returned", same.returned) if same.returned is not None
                               else ("departure.same_relation", same.step))
            diagnosed.append(dataclasses.replace(result, departure=render(messages, "label.departure", lang, {
                "text": render(messages, key, lang, {"step": render(messages, f"step.{shown_step}", lang)})}),
                departure_step=same.step or same.last))
        else:
            diagnosed.append(result)
    folded = _unused_parameter_folds(_or_next_folded(diagnosed, or_next), checks, records, proven, lang, messages)
    return _fitting_folded(_notebook_reads_told(folded, checks, records, namespace, lang, messages), fits)


def _notebook_reads_told(diagnosed: list[CheckResult], checks: Sequence[DiagnosedCheck],
                         records: Mapping[str, Sequence[dict[str, Any]]], namespace: Mapping[str, Any], lang: str,
                         messages: Messages) -> list[CheckResult]:
    """Each failing public check that names no mistake and says no step with its facts, whose failing case runs
    otherwise when the notebook's integers the learner's code reads change (notebook_reads): told that, in one line
    for every such check (one cause). A check whose result departs at a step of the notes keeps its line: the
    variables may not be what its case shows; one that raised is told them (where it raised says no more why)."""
    reads = notebook_ints_read(namespace.values())
    if not reads:
        return diagnosed
    told = [render(messages, "notebook_reads.read", lang, {"name": read.name, "value": read.value}) for read in reads]
    line = render(messages, "label.notebook_reads", lang, {"text": render(
        messages, "notebook_reads.one" if len(reads) == 1 else "notebook_reads.many", lang,
        {"reads": listed(told, lang)})})
    result_list: list[CheckResult] = []
    for result, check in zip(diagnosed, checks, strict=True):
        index = result.failed_case
        if (result.hidden or result.misconception is not None or result.status not in (FAILED, ERROR)
                or index is None or (result.status == FAILED and result.departure
                                     and result.departure_kind == DepartureKind.DEPARTS)):
            result_list.append(result)
            continue
        cases = check.cases()
        if index < len(cases) and reads_change_the_run(functools.partial(_run_case, resolve(check.probe), cases[index]),
                                                       namespace, reads):
            result = dataclasses.replace(result, departure=line, departure_kind=DepartureKind.NOTEBOOK_READS,
                                         departure_step="")
        result_list.append(result)
    return result_list


def _run_case(probe: Callable[[Mapping[str, Any], Any], Any], case: dict[str, Any],
              namespace: Mapping[str, Any]) -> dict[str, Any]:
    return run_probe(probe, namespace, case)


def _or_next_folded(diagnosed: list[CheckResult], or_next: Mapping[int, str]) -> list[CheckResult]:
    """`diagnosed`, each raise said to come before a step or the next one given that next step as its own where
    another check of its exercise departs there: both are that step's (one cause, one row; the raise names it)."""
    for index, step_id in or_next.items():
        shown = diagnosed[index]
        if any(other is not shown and other.exercise == shown.exercise and other.departure_step == step_id
               for other in diagnosed):
            diagnosed[index] = dataclasses.replace(shown, departure_step=step_id)
    return diagnosed


# Lines that locate a step by what the learner's tensors hold there: a step another check adopts.
LOCATING_KINDS = frozenset({DepartureKind.DEPARTS, DepartureKind.STEP_ALONE})


def _fitting_folded(diagnosed: list[CheckResult], fits: Mapping[int, tuple[str, ...]]) -> list[CheckResult]:
    """`diagnosed`, each departure whose case leaves open a step (Departure.fits) where another check of its
    exercise is shown to depart given that step: the earliest such one (12u's uy-ss-15: the exponentials, where
    [1000, 1000] shifted is 0 throughout and proves nothing; uy-sn-13: the sums, where one entry's sum is its
    exponential); each count that proves no fact of its own, given the fact another check's count proves, where
    its module fits it (count_fits; 12u's uz-pc-11: 16 fewer, a 16-entry mask or a 16-entry weight). Both are then
    one cause, one row, shown by the check that proves it."""
    located = {(result.exercise, result.departure_step) for result in diagnosed
               if result.departure_step and result.misconception is None and result.status in (FAILED, ERROR)
               and result.departure_kind in LOCATING_KINDS}
    counted = {(result.exercise, result.count_fact) for result in diagnosed
               if result.count_fact and result.misconception is None and result.departure_kind == DepartureKind.COUNT}
    for index, left_open in fits.items():
        result = diagnosed[index]
        if result.misconception is not None:
            continue
        if result.departure_kind == DepartureKind.COUNT:
            fact = next((fact for fact in left_open if (result.exercise, fact) in counted), None)
            if not result.count_fact and fact is not None:
                diagnosed[index] = dataclasses.replace(result, count_fact=fact, cause_adopted=True)
            continue
        if not result.departure_step:
            continue  # told otherwise since (the notebook's integers it reads)
        adopted = next((step_id for step_id in left_open if (result.exercise, step_id) in located), None)
        if adopted is not None and adopted != result.departure_step:
            diagnosed[index] = dataclasses.replace(result, departure_step=adopted, cause_adopted=True)
    return diagnosed


def _kind(departure: Departure) -> DepartureKind:
    """What the departure's line states: a departing step and what the code holds there, the step alone (no fact
    read from a tensor of the learner's, no step returned instead), or (none departs) the result against the
    notes' steps (the last step in another shape, or an earlier step returned)."""
    if departure.step is None:
        return DepartureKind.STEPS_MATCH
    if departure.held_unproven and departure.compared:
        return DepartureKind.UNPROVEN  # departure_line says the case does not show where it departs
    return DepartureKind.STEP_ALONE if not departure.facts and departure.returned is None else DepartureKind.DEPARTS


def _same_relation(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
                   proven: Sequence[tuple[CheckResult, Departure]]) -> Departure | None:
    """The departure of the first earlier check of `result`'s exercise whose proven relation, applied to the
    notes' step on `result`'s failing case, reproduces the learner's result there (departure.relation_reproduced);
    None where none does, or the case declares no steps. Its own trace may have proven nothing: a case that does not
    tell the relation apart, or the probe's own making of the input holding the step (a round trip's input)."""
    earlier = [departure for shown, departure in proven if shown.exercise == result.exercise]
    found = _case_steps(result, check, records) if earlier and result.status == FAILED else None
    index = result.failed_case
    if found is None or index is None or not isinstance(records[index], dict):
        return None
    _case, steps = found
    output = recorded_output(records[index])
    return next((departure for departure in earlier if relation_reproduced(departure, steps, output)), None)


def _near_departure(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
                    namespace: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Departure] | None:
    """For a check that judges a gradient and declares a case beside its failing one (NEIGHBOUR): where the
    learner's values depart from the notes' steps on the failing case itself, when their result there is not the
    notes' (None for the case: the check's own); else, for a gradient that is their function's own slope and not
    the notes' (OWN_SLOPE_KEYS), where they depart on the case beside it. None where no step departs (nothing
    proven: no line is said)."""
    found = _case_expectations(result, check, records)  # the expectations read once: both entries come from them
    if found is None or result.cause is None:
        return None
    case, expectations = found
    near, own_steps = _entry(expectations, NEIGHBOUR), _entry(expectations, GRAPH_STEPS)
    if near is None or own_steps is None:
        return None
    try:
        near_case, near_steps = near
    except (TypeError, ValueError):
        return None
    if (departure := _value_departure(check, namespace, case, own_steps)) is not None:
        return None, departure
    if result.cause.message_key not in OWN_SLOPE_KEYS or not isinstance(near_case, dict):
        return None
    departure = _value_departure(check, namespace, near_case, near_steps)
    return None if departure is None else (near_case, departure)


def _value_departure(check: DiagnosedCheck, namespace: Mapping[str, Any], case: dict[str, Any],
                     steps: StepValues) -> Departure | None:
    """Where the learner's run on `case` departs from `steps` in value, when it returned a result that is not the
    notes' and a step departs; None else."""
    if not steps:
        return None
    with own_slopes_later():  # the probe's own finite differences (its largest |entry|) are no step of theirs
        record, traced, _raised_at = traced_probe_with_raise(resolve(check.probe), namespace, case)
    output = recorded_output(record)
    if traced is None or "error" in record or output is None or any(
            values_close(normalised_value(output), normalised_value(value)) for value in steps[-1][1]):
        return None
    departure = find_departure(steps, traced, output, raised=False, raised_at=None)
    if departure.step is None or not departure.compared or _holds_step(output, steps, departure.step):
        return None
    return departure


def _vector_text(case: Mapping[str, Any]) -> str:
    """A neighbour's entries as the learner reads a vector, [1000.25, 999.75] (its first six, then an ellipsis)."""
    values = case.get("values")
    if not isinstance(values, list) or not all(type(value) in (int, float) for value in values):
        return "[…]"
    shown = ", ".join(f"{value:g}" for value in values[:6])
    return f"[{shown}{', …' if len(values) > 6 else ''}]"


def _diagnosed(result: CheckResult, earlier: Sequence[CheckResult]) -> bool:
    """Whether the stage looks for `result`'s departure (see with_departures)."""
    return (not result.hidden and result.misconception is None and result.failed_case is not None
            and not _cause_stated(result) and not _reads_as_before(result, earlier))


def _raised_at(result: CheckResult, records: Sequence[dict[str, Any]], lang: str, messages: Messages,
               answer: frozenset[str]) -> str:
    """For code that raised where no step of the notes could be compared (the exercise declares none, or the case's
    steps need what the raise left unrecorded): where it raised, when the traceback has a line outside the
    grader's and torch's code and the message above does not quote it already; "" else. The line is the learner's
    own only when it is in their answer (`answer`: the files their exercise's objects were defined in); a line of
    other code (the class the notebook gives) is told as such, with the learner's line that called it."""
    index = result.failed_case
    if index is None or index >= len(records) or (result.cause is not None and dict(result.cause.fields).get("line")):
        return ""
    error = records[index].get("error") if isinstance(records[index], dict) else None
    line = error.get("line") if isinstance(error, dict) else None
    if not isinstance(error, dict) or type(line) is not str or not line.strip():
        return ""
    frames = _frames(error)
    if not frames or frames[-1].line != line.strip():  # unknown whose line it is: none is quoted as theirs
        return ""
    if frames[-1].file in answer:
        text = render(messages, "departure.raised_at_line", lang, {"line": one_line(line, 120)})
    else:
        callers = [frame for frame in frames if frame.file in answer and frame.line]
        fields = {"line": one_line(line, 120), "function": one_line(frames[-1].function, 80)}
        if callers:
            text = render(messages, "departure.raised_outside_called", lang,
                          {**fields, "caller": one_line(callers[-1].line, 120)})
        else:
            text = render(messages, "departure.raised_outside", lang, fields)
    return render(messages, "label.raised", lang, {"text": text})


@dataclasses.dataclass(frozen=True)
class _Frame:
    """One frame of a traceback outside the grader's and torch's code (autograder.checking.probing)."""

    file: str
    function: str
    line: str


def _frames(error: Mapping[str, Any]) -> list[_Frame]:
    """The error's frames, outermost first; [] where they are missing or not as probing writes them."""
    frames = error.get("frames")
    if not isinstance(frames, list | tuple):
        return []
    read = []
    for frame in frames:
        if not isinstance(frame, list | tuple) or len(frame) != 3 or not all(type(part) is str for part in frame):
            return []
        read.append(_Frame(*frame))
    return read


def answer_files(namespace: Mapping[str, Any]) -> frozenset[str]:
    """The files (a notebook's cells) that the learner's answer was defined in: each function's, and each function
    of each class's own attributes. Read through `type`'s and functions' own getters: a learner's class cannot put
    a property in their way."""
    files: set[str] = set()
    for value in namespace.values():
        functions = [value]
        if isinstance(value, type):
            functions = list(_TYPE_DICT(value).values())
        for function in functions:
            if isinstance(function, staticmethod | classmethod):
                function = function.__func__
            if type(function) is types.FunctionType:
                filename = _FUNCTION_CODE(function).co_filename
                if type(filename) is str:
                    files.add(filename)
    return frozenset(files)


_TYPE_DICT = vars(type)["__dict__"].__get__
_FUNCTION_CODE = vars(types.FunctionType)["__code__"].__get__


def _failing_count(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]]) -> SeenCount | None:
    """For a wrong count (a check whose expectations hold the module's parts, COUNT_PARTS, and whose record holds
    the learner's count): the learner's count on the failing case beside the module's, which
    autograder.checking.count_difference reads; None else, and for a right count."""
    index = result.failed_case
    cases = check.cases()
    if index is None or index >= len(cases) or index >= len(records) or not isinstance(records[index], dict):
        return None
    expectations = check.expectations(index, records[index], cases[index])
    if COUNT_PARTS not in set(expectations) or "count" not in set(expectations):
        return None
    got, right = records[index].get("count"), expectations["count"]
    if type(got) is not int or type(right) is not int or got == right:  # a bool is no count
        return None
    return SeenCount(got, right, expectations[COUNT_PARTS])


def _counts_seen(results: Sequence[CheckResult], checks: Sequence[DiagnosedCheck],
                 records: Mapping[str, Sequence[dict[str, Any]]], exercise: str) -> list[SeenCount]:
    """Every count the learner's code gave on a case of `exercise`'s checks, passing or failing, beside the
    module's right count and parts (COUNT_PARTS)."""
    seen: list[SeenCount] = []
    for result, check in zip(results, checks, strict=True):
        if result.exercise != exercise:
            continue
        cases = check.cases()
        for index, record in enumerate(records.get(result.id, ())):
            if index >= len(cases) or not isinstance(record, dict) or type(record.get("count")) is not int:
                continue
            expectations = check.expectations(index, record, cases[index])
            if COUNT_PARTS in set(expectations) and type(expectations.get("count")) is int:
                seen.append(SeenCount(record["count"], expectations["count"], expectations[COUNT_PARTS]))
    return seen


def _cause_stated(result: CheckResult) -> bool:
    """Whether the failure's message already says what the learner's line does wrong (a call that does not fit the
    given signature, a transpose of the heads' axes): the steps would add nothing to it."""
    return result.cause is not None and result.cause.message_key in CAUSE_STATED_KEYS | CALL_KEYS


def _reads_as_before(result: CheckResult, earlier: Sequence[CheckResult]) -> bool:
    """Whether the table already folds `result` under an earlier row (the same cause, read without departures)."""
    return any(row.shown is not result and any(same is result for same in row.same) for row in rows([*earlier, result]))


def _departure(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
               namespace: Mapping[str, Any]) -> Departure | None:
    found = _case_steps(result, check, records)
    if found is None:
        return None
    case, steps = found
    record, traced, raised_at = traced_probe_with_raise(resolve(check.probe), namespace, case)
    if traced is None:  # the cap cut the trace before the call's output: a step it lacks is not proven to depart
        return None
    error = record.get("error")
    if raised_at is not None and not (isinstance(error, dict) and raised_at.message
                                      and error.get("message") == raised_at.message
                                      and (frames := _frames(error)) and frames[-1].file in answer_files(namespace)):
        # Not the raise the probe recorded (one the code caught and went on from), or not one of the learner's
        # own lines (the probe's, or the class the notebook gives): its operands are not said as theirs.
        raised_at = None
    output = recorded_output(record)
    departure = find_departure(steps, traced, output, raised=result.status == ERROR, raised_at=raised_at)
    if departure.step is None and result.status == ERROR:
        # A run that raised returned nothing: every step held is this case's coincidence (one token's context
        # vectors are its input), not a result it made. Its own line that raised is said instead (_raised_at).
        return None
    if departure.step is not None and output is not None and _holds_step(output, steps, departure.step):
        # The result the function returns holds that step (a tensor the trace did not see whole: a buffer filled
        # in place, another dtype): "none of the tensors your code made holds it" would be false.
        return None
    return departure


def _holds_step(output: torch.Tensor, steps: StepValues, step_id: str) -> bool:
    """Whether `output` holds the declared step `step_id`'s numbers on one of its routes, as find_departure matches a
    step: in its own shape where the step is `shaped`, else in a right program's layout, transposed only where the
    step is not `ordered`."""
    got = normalised_value(output)
    for entry in steps:
        if str(entry[0]) != step_id:
            continue
        ordered, shaped = len(entry) > 3 and bool(entry[3]), len(entry) > 4 and bool(entry[4])
        for value in entry[1]:
            expected = normalised_value(value)
            if values_close(got, expected) if shaped else matches_up_to_layout(got, expected, transposed=not ordered):
                return True
    return False


def _case_steps(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
                keys: Sequence[str] = (STEPS,)) -> tuple[dict[str, Any], Any] | None:
    """The failing case and its declared steps (the first of `keys` its expectations hold); None where the check
    declares none or they cannot be computed."""
    found = _case_expectations(result, check, records)
    if found is None:
        return None
    case, expectations = found
    key = next((key for key in keys if key in set(expectations)), None)
    entry = None if key is None else _entry(expectations, key)
    return None if entry is None else (case, entry)


def _case_expectations(result: CheckResult, check: DiagnosedCheck,
                       records: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], Expectations] | None:
    """The failing case and the check's expectations on it; None where it has no failing case."""
    index = result.failed_case
    cases = check.cases()
    if index is None or index >= len(cases) or index >= len(records):
        return None
    return cases[index], check.expectations(index, records[index], cases[index])


def _entry(expectations: Expectations, key: str) -> Any:
    """The expectations' entry `key`; None where they lack it or cannot compute it."""
    try:
        return expectations[key] if key in set(expectations) else None
    except (KeyError, TypeError):  # a raising call's record lacks what the steps are computed from (a module's state)
        return None
    except (RuntimeError, ValueError, IndexError):
        # Steps computed with the learner's own weights, which have shapes no step can be computed with (layers
        # built as nn.Linear(d_out, d_in)): no steps to compare; the check's own message says what is wrong.
        return None


# The failure says the learner's code raised when called on an input of a graph (its own phase: not backward).
GRAPH_RAISED_KEYS = frozenset({"function.call_raised_in_graph"})


def _with_gradient(line: str, departure: Departure | None, result: CheckResult, check: DiagnosedCheck,
                   records: Sequence[dict[str, Any]], namespace: Mapping[str, Any], lang: str,
                   messages: Messages) -> str:
    """`line` (the value departure's, or "") with what the failing case's run with gradients on shows: alone where
    `line` is "", the first step whose right value autograd did not record, or the step the code raised before on
    an input of a graph; after a raise `line` tells, the step of those it reproduced that autograd did not record."""
    in_graph = result.cause is not None and result.cause.message_key in GRAPH_RAISED_KEYS
    raised_after = bool(line) and departure is not None and departure.raised
    found = None if line and not (in_graph or raised_after) else _case_steps(result, check, records,
                                                                             (STEPS, GRAPH_STEPS))
    if found is None:
        return line
    case, steps = found
    _record, traced = graph_traced_probe(resolve(check.probe), namespace, case)
    if traced is None:
        return line
    gradient = find_gradient_departure(steps, traced)
    if gradient is None:
        return line
    if line and not in_graph:
        if departure is None or gradient.cut is None or gradient.cut not in departure.matched:
            return line
        return render(messages, "departure.join", lang).join(
            [line, gradient_line(dataclasses.replace(gradient, connected=()), False, lang, messages)])
    # Nothing departs in value; or the code raised on an input of a graph, which the run with gradients off (where
    # the values were read) never gave it: what the run with gradients on shows is said instead.
    text = gradient_line(gradient, result.status == ERROR or in_graph, lang, messages)
    return render(messages, "label.departure", lang, {"text": text}) if text else line


# A module-contract failure proving that the output does not use a parameter (autograder.course.module_contract).
PARAMETER_UNUSED_KEY = "contract.parameter_unused"


def _unused_parameter_folds(diagnosed: Sequence[CheckResult], checks: Sequence[DiagnosedCheck],
                            records: Mapping[str, Sequence[dict[str, Any]]],
                            proven: Sequence[tuple[CheckResult, Departure]], lang: str,
                            messages: Messages) -> list[CheckResult]:
    """`diagnosed` with each failure proving a parameter unused (the output stays as it was when the parameter's
    values move) tied to an earlier check of its exercise whose departing step the notes compute from that
    parameter (_unused_parameter_step): the earlier row says so, and the table folds the contract's failure under
    it (feedback._same_cause): one cause, one message. Nothing is tied where the values prove no link (the departing
    step does not move with the parameter)."""
    departures = {result.id: departure for result, departure in proven}
    tied = list(diagnosed)
    for position, result in enumerate(tied):
        if result.status != FAILED or result.cause is None or result.cause.message_key != PARAMETER_UNUSED_KEY:
            continue
        name = dict(result.cause.fields).get("name", "")
        for earlier, (shown, check) in enumerate(zip(tied[:position], checks, strict=False)):
            departure = departures.get(shown.id)
            if (departure is None or departure.step is None or shown.exercise != result.exercise
                    or shown.misconception is not None or shown.departure_step != departure.step
                    or not _unused_parameter_step(shown, check, records.get(shown.id, ()), departure, name)):
                continue
            link = render(messages, "departure.parameter_unused", lang, {
                "step": render(messages, f"step.{departure.step}", lang), "name": one_line(name)})
            if link not in shown.departure:
                tied[earlier] = dataclasses.replace(
                    shown, departure=render(messages, "departure.join", lang).join([shown.departure, link]))
            tied[position] = dataclasses.replace(result, cause_of_step=departure.step)
            break
    return tied


def _unused_parameter_step(result: CheckResult, check: DiagnosedCheck, records: Sequence[dict[str, Any]],
                           departure: Departure, name: str) -> bool:
    """Whether, on `result`'s failing case, the notes' departing step is computed from parameter `name` of the
    learner's module: moving the parameter's values (in the module's state the case's steps are computed from) moves
    that step's values (autograder.checking.parameter_moves; the student kit reads what its build stored for the
    weights it loaded). The steps before it the learner's code reproduced may move too: a tensor computed from the
    parameter and then left out of the output is the same cause."""
    index = result.failed_case
    cases = check.cases()
    if not name or index is None or index >= len(records) or index >= len(cases) or not isinstance(
            records[index], dict):
        return False
    record, case = records[index], cases[index]
    expectations = check.expectations(index, record, case)
    if STEPS_MOVED in set(expectations):
        moves = stored_parameter_moves(expectations[STEPS_MOVED], record, name)
    else:
        moves = parameter_moves(lambda moved: check.expectations(index, moved, case), record, name)
    if moves is None or departure.step is None or departure.step not in moves.declared:
        return False
    # Steps the learner's code reproduced may move with it too (keys computed, then left unused): the departing
    # step is then the first the notes compute from the parameter that the learner's output does not follow.
    return departure.step in moves.moved and all(step in moves.declared for step in departure.matched)
