"""Feedback a student can read: a compact ✔/✘ table, one row per cause of failure, with the hint ladder's rungs
(the pictures are autograder.checking.pictures).

Takes the message catalogue as an argument (no checks, no reference): the live kit (autograder.running.rendering) and
the student kit render with the same code.
"""

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograder.checking.check_types import PASSED, Cause, CheckResult, DepartureKind, Exercise, Status
from autograder.i18n import Messages, pick, render
from autograder.safe_text import one_line

__all__ = [
    "CAUSE_STATED_KEYS", "ExerciseProgress", "GRADED_RUNG", "HintLadder", "LadderCause", "MARKS", "Step",
    "defined_namespace",
    "notebook_exercises", "rows", "shown_in_full", "summary", "table",
]

MARKS: dict[str, str] = {Status.PASSED: "✔", Status.FAILED: "✘", Status.ERROR: "✘"}  # by status, as records hold it
RUNGS = (1, 2, 3)  # the hint ladder: the symptom and a question; the mistake and its concept; what to change
GRADED_RUNG = 2  # what graded output shows: never what to change
# Exception messages that can follow from an earlier named mistake (a plain list of heads makes later checks raise
# "expected m1 and m2 to have the same dtype"); a wrong signature or a missing name is a problem of its own. Such an
# error is folded under the mistake's row, worded as an error that may or may not come from it: nothing proves it.
FOLLOW_ON_KEYS = frozenset({"error.other", "error.shape_mismatch", "error.matmul_shapes", "error.broadcast_axis",
                            "error.view_size", "error.device_mismatch", "error.dtype_mismatch",
                            "error.dtype_mismatch_at", "error.uncomparable"})
TITLE_COLUMNS = 60  # a folded check's title is cut to this width
# Messages that already say what the learner's own line does wrong (read from their code and the exception): a rung
# with nothing to add says so instead of "no known mistake", which would read as if the message were unsure.
# A module built with the wrong settings (to_torch_multihead's batch_first, sizes, dtype, dropout) departs before
# every step the notes compute: its message names the setting, and no step would be the first that differs.
# A tensor argument the call changed (judging.argument_changed), or a module argument given parameters or stripped of
# them, is said as the fact read from it: no step departs.
CAUSE_STATED_KEYS = frozenset({"error.transpose_4d", "error.unexpected_keyword", "error.missing_argument",
                               "torch_equivalence.batch_first", "torch_equivalence.sizes", "torch_equivalence.dtype",
                               "torch_equivalence.dropout", "torch_equivalence.dropout_not_a_rate",
                               "transfer_weights.dtype_changed",
                               *(f"argument.{part}{end}" for part in ("", "part_")
                                 for end in ("values_changed", "reshaped", "layout_changed", "metadata_changed",
                                             "written")),
                               # a parameter added to or taken from the mha to_torch_multihead is handed
                               *(f"argument.part_{change}{named}" for change in ("added", "removed")
                                 for named in ("", "_unnamed"))})


@dataclass(frozen=True)
class LadderCause:
    """What one ladder follows: the named mistake when the result names one (whichever check shows it), else the
    failure's message key at the first check that fails with it."""

    mistake: str | None
    message_key: str = ""
    check: str = ""

    @classmethod
    def of(cls, result: CheckResult) -> "LadderCause":
        if result.misconception is not None:
            return cls(result.misconception)
        return cls(None, "" if result.cause is None else result.cause.message_key, result.id)


@dataclass(frozen=True)
class Step:
    """The rung one cause is shown at, and whether its last run already showed that rung or a higher one: shown
    again at the top of its ladder (hint=True or hint=3 once more, a plain run of a ladder that ends at rung 2), the
    row says there is no more instead of repeating itself silently."""

    rung: int
    again: bool = False


@dataclass
class HintLadder:
    """Which rung of the hint ladder check(...) shows for each cause of failure of each exercise: a ladder per
    mistake, not per exercise, so a new mistake starts at rung 1 whatever the one before it reached. Rung 1 (a cause's
    first failing run): the symptom (which output, which row, the shapes, a picture) and a question that leads to the
    cause. Rung 2 (hint=True, or the next run that still fails with that cause): the mistake and its concept. Rung 3
    (only on request: hint=True once more after rung 2, or hint=3): what to change, in words. A rung with nothing to
    add (no known mistake reproduces the failure, or its ladder ends lower, or it is asked for again at the top of
    its ladder) says so and points to where the result first differs. A run where every check passes starts the
    exercise's ladders again. One set of ladders per kernel: the notebook's check() keeps it for the session."""

    # exercise id -> the rung each cause was last shown at; a cause missing from a later run keeps its rung
    shown: dict[str, dict[LadderCause, int]] = field(default_factory=dict)

    @staticmethod
    def validate(requested: bool | int | None) -> None:
        """A clear error for a hint= that is no rung, before any check runs."""
        if requested is not None and not isinstance(requested, bool) and requested not in RUNGS:
            raise ValueError(f"hint={requested!r}: give True (one rung more), False, or a rung: 1, 2 or 3")

    def step(self, exercise_id: str, cause: LadderCause, requested: bool | int | None) -> Step:
        """The rung to show for `cause`. requested: None lets the ladder decide (1, then 2, never 3); True asks for
        one rung more than the cause's last run showed (at least 2); False keeps to rung 1; 1, 2 or 3 names it."""
        self.validate(requested)
        last = self.shown.get(exercise_id, {}).get(cause, 0)
        if requested is None:
            rung = 2 if last else 1
        elif requested is True:
            rung = min(RUNGS[-1], max(2, last + 1))
        else:
            rung = 1 if requested is False else int(requested)
        return Step(rung, again=last >= rung)

    def steps(self, exercise_id: str, results: Sequence[CheckResult],
              requested: bool | int | None) -> dict[LadderCause, Step]:
        """The step of each cause the table shows in full (an untouched stub is no attempt: it has none)."""
        return {LadderCause.of(row.shown): self.step(exercise_id, LadderCause.of(row.shown), requested)
                for row in rows(results) if row.shown.status != PASSED and not row.shown.stub}

    def remember(self, exercise_id: str, results: Iterable[CheckResult], shown: Mapping[LadderCause, Step]) -> None:
        # A run of an untouched stub is no attempt yet: the first wrong attempt after it still starts at rung 1.
        if all(result.status == PASSED or result.stub for result in results):
            self.shown.pop(exercise_id, None)
        else:
            self.shown.setdefault(exercise_id, {}).update({cause: step.rung for cause, step in shown.items()})


@dataclass(frozen=True)
class Progress:
    """Public checks passing and failing (previews included) and where the exercise's points stand: the first line
    of check(...) and each exercise's line in check_all(...). A point is secured by a passing public check, graded
    later on new values when the hidden check's preview passes (not secured: other values may fail), and on a
    failing check when that check, or the preview of its hidden twin, fails."""

    passed: int
    total: int
    points: float  # the exercise's points in all, hidden checks included
    secured: float  # what its passing public checks are worth
    failing: float  # what its failing public checks and the hidden twins of its failing previews are worth

    @classmethod
    def of(cls, results: Sequence[CheckResult], points: float | None) -> "Progress":
        shown = sum(result.max_score + result.graded_later for result in results)
        return cls(sum(result.status == PASSED for result in results), len(results),
                   shown if points is None else points, sum(result.score for result in results),
                   sum(result.max_score + result.graded_later for result in results if result.status != PASSED))

    def __add__(self, other: "Progress") -> "Progress":
        return Progress(self.passed + other.passed, self.total + other.total, self.points + other.points,
                        self.secured + other.secured, self.failing + other.failing)

    @property
    def done(self) -> bool:
        return self.total > 0 and self.passed == self.total

    @property
    def later(self) -> float:
        """Points of hidden checks not failing now: graded later, on new values (rounded: points are sums of
        fractions, and a difference of sums may be off by a last bit)."""
        return max(0.0, round(self.points - self.secured - self.failing, 9))

    def line(self, lang: str, messages: Messages) -> str:
        """"✔ all … pass" only when every public check passes; otherwise what passes and fails, and of the points
        what is secured, what is graded later and what is on failing checks (a part worth 0 is left out)."""
        if self.done:
            return render(messages, "heading.progress_done", lang, {
                "total": self.total, "points": self.points, "later": self.later})
        parts = [render(messages, f"progress.{part}", lang, {"points": points})
                 for part, points in (("secured", self.secured), ("later", self.later), ("failing", self.failing))
                 if points > 0 or part == "failing" and self.secured <= 0 and self.later <= 0]
        return render(messages, "heading.progress", lang, {
            "passed": self.passed, "failed": self.total - self.passed, "total": self.total, "points": self.points,
            "parts": render(messages, "progress.separator", lang).join(parts)})


@dataclass
class Row:
    """One line of the ✔/✘ table and what it folds: a check shown in full, the checks that fail for the same
    reason, and the checks whose errors follow from it."""

    shown: CheckResult
    same: list[CheckResult] = field(default_factory=list)
    follow_on: list[CheckResult] = field(default_factory=list)
    # Unnamed failures whose output has the named one's wrong shape, its axes grown and shrunk alike.
    same_shape: list[CheckResult] = field(default_factory=list)


def rows(results: Sequence[CheckResult]) -> list[Row]:
    """The table's rows, in check order: each failure is shown in full the first time its cause appears, later
    failures with the same cause fold into its row, every untouched stub into the first stub's row, and an
    exception that may follow from an earlier named mistake into that mistake's row (worded as an error only)."""
    table_rows: list[Row] = []
    for result in results:
        cause = result.cause
        leader = None if cause is None else next(
            (row for row in table_rows if row.shown.cause is not None and (
                (result.stub and row.shown.stub) or _same_cause(row.shown, result))), None)
        if leader is not None:
            if leader.shown.cause_adopted and not result.cause_adopted:
                # The check whose own case shows the step leads the row (Row.same keeps the order they ran in).
                leader.same.insert(0, leader.shown)
                leader.shown = result
            else:
                leader.same.append(result)
            continue
        rearranged = _shape_change(result)
        if rearranged is not None and result.misconception is None:
            named = next((row for row in table_rows if row.shown.misconception is not None
                          and _shape_change(row.shown) == rearranged), None)
            if named is not None:
                named.same_shape.append(result)
                continue
        grown = _shape_growth(result)
        if grown is not None and result.misconception is None and not result.departure:
            # No step of the notes traced on this check (a contract check declares none): an output whose shape is
            # wrong as a localised row's is (the same axes grow and shrink) is told so under that row, not as a
            # cause of its own with "no known mistake".
            located = next((row for row in table_rows if row.shown.misconception is None and row.shown.departure
                            and _shape_growth(row.shown) == grown), None)
            if located is not None:
                located.same_shape.append(result)
                continue
        if cause is not None and result.misconception is None and cause.message_key in FOLLOW_ON_KEYS:
            named = next((row for row in table_rows if row.shown.misconception is not None), None)
            if named is not None:
                named.follow_on.append(result)
                continue
        table_rows.append(Row(result))
    return table_rows


# The output's shape, as the judges report it (a value check's; the module contract's on another device).
WRONG_SHAPE_KEYS = frozenset({"shape.wrong", "shape.wrong.hidden", "contract.output_shape_on_device",
                              "contract.output_shape_on_device.hidden"})
SHAPE_TEXT = re.compile(r"\((\d+(?:, \d+)*),?\)")


def _reported_shapes(result: CheckResult, keys: frozenset[str]) -> tuple[list[int], list[int]] | None:
    """The learner's and the expected shape a failure of one of `keys` reports (its got_shape and expected_shape);
    None for any other failure or a field that is not a shape."""
    if result.cause is None or result.cause.message_key not in keys:
        return None
    fields = dict(result.cause.fields)
    got, expected = (SHAPE_TEXT.fullmatch(fields.get(name, "")) for name in ("got_shape", "expected_shape"))
    if got is None or expected is None:
        return None
    theirs, ours = ([int(size) for size in found.group(1).split(", ")] for found in (got, expected))
    return theirs, ours


def _shape_change(result: CheckResult) -> tuple[int, ...] | None:
    """How a wrong output's shape differs from the expected one when it holds as many numbers: per axis -1 (shrunk),
    0 or 1 (grown); None for any other failure. Two failures with one change have the same numbers in the same wrong
    arrangement (heads joined along the tokens on every input, whatever its sizes)."""
    shapes = _reported_shapes(result, WRONG_SHAPE_KEYS)
    if shapes is None or math.prod(shapes[0]) != math.prod(shapes[1]):
        return None
    return _shape_growth(result)


def _shape_growth(result: CheckResult) -> tuple[int, ...] | None:
    """Per axis of a wrong output's shape: -1 (shrunk), 0 or 1 (grown) against the expected one, whatever the
    numbers it holds; None for any other failure, or shapes of different ranks."""
    shapes = _reported_shapes(result, WRONG_SHAPE_KEYS)
    if shapes is None:
        return None
    theirs, ours = shapes
    if len(theirs) != len(ours) or theirs == ours:
        return None
    return tuple((a > b) - (a < b) for a, b in zip(theirs, ours, strict=True))


def _same_cause(shown: CheckResult, other: CheckResult) -> bool:
    """Whether `other` fails for the reason `shown` shows: the same named mistake (a check without evidence of it is
    not folded under it as if proven, whatever its message); or, neither naming one, the same first step departing
    from the notes (autograder.running.diagnosing), or both raised with the same where-it-raised line and message,
    the same message with the same fields, or (both public) the
    same message reading the same, or the same error message at the same line of the learner's, whose shapes differ
    only because each check gives its own input."""
    if shown.cause is None or other.cause is None:
        return False
    if shown.misconception is None and other.cause_of_step and other.cause_of_step == shown.departure_step:
        return True  # the parameter `other` finds unused is the one the notes compute `shown`'s departing step from
    if shown.misconception is not None or other.misconception is not None:
        return shown.misconception == other.misconception
    if shown.departure_step and shown.departure_step == other.departure_step:
        return True  # both computations first depart from the notes at the same step: one cause, one message
    if (shown.departure_kind == other.departure_kind == DepartureKind.NOTEBOOK_READS
            and shown.departure == other.departure):
        return True  # the same notebook variables, proven on each check's own input to change what the code does
    if shown.count_fact and shown.count_fact == other.count_fact:
        return True  # each count is the same fact of its own module (how many tensors it has; none): one cause
    if (changed := _argument_changed(shown.cause)) is not None and changed == _argument_changed(other.cause):
        return True  # the same call changed the same tensor it was given, each check's sizes counted: one cause
    if shown.cause.message_key in COUNT_AGAINST_FIXED_KEYS and shown.cause.message_key == other.cause.message_key:
        return True  # each check's sizes give the learner's count its own value; every check asks the same one
    if (shown.status == other.status == Status.ERROR and not shown.departure_step and not other.departure_step
            and shown.departure and shown.departure == other.departure
            and shown.cause.message_key == other.cause.message_key):
        # The same where-it-raised line (the same line raised the same error, called from the same line of the
        # learner's): each check's input only changes the values the error message quotes. One cause, one message.
        return True
    if shown.cause.same_as(other.cause):
        return True
    edit = _size_one_edit(shown)
    if edit is not None and edit == _size_one_edit(other) and not (
            shown.departure_step and other.departure_step and shown.departure_step != other.departure_step):
        return True  # the output has the same axes of size 1 added (or dropped) at the same end on both inputs
    merged = _axes_joined(shown)
    if merged is not None and merged == _axes_joined(other) and not (
            shown.departure_step and other.departure_step and shown.departure_step != other.departure_step):
        return True  # the output has the same two neighbouring axes joined into one on both inputs
    fact = _learner_fact(shown.cause) if shown.cause.message_key == other.cause.message_key else None
    if fact is not None and fact == _learner_fact(other.cause):
        return True  # the learner's object holds the same wrong values whatever each check asks for
    if shown.hidden or other.hidden or shown.cause.message_key != other.cause.message_key:
        return False
    # The same error at the same line of the learner's: each check's input gives it its own sizes, one cause.
    line = dict(shown.cause.fields).get("line")
    return _symptom(shown) == _symptom(other) or bool(line) and line == dict(other.cause.fields).get("line")


# Messages that say a count of the learner's object against one every check asks for, whatever its sizes (two heads
# in exercise 3.2): a count that follows each check's sizes (d_in - 1 heads) is one cause on every check.
COUNT_AGAINST_FIXED_KEYS = frozenset({"two_dimensional_wrapper.head_count"})


# A call that changed the values of a tensor it was given (autograder.course.messages "argument.*"): the fields
# besides the counts and shapes name the call, the argument and the part of it; those are each check's own sizes.
ARGUMENT_CHANGED_KEYS = frozenset({"argument.values_changed", "argument.part_values_changed"})
ARGUMENT_COUNT_FIELDS = frozenset({"differ", "size", "shape_before", "shape_after"})


def _argument_changed(cause: Cause) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """(message key, the fields naming what changed) for a failure saying the learner's call changed the values of a
    tensor it was given; None for any other failure."""
    if cause.message_key not in ARGUMENT_CHANGED_KEYS:
        return None
    return cause.message_key, tuple(item for item in cause.fields if item[0] not in ARGUMENT_COUNT_FIELDS)


# The messages that report the learner's output shape against the asked one (fields got_shape, expected_shape).
SHAPE_REPORT_KEYS = WRONG_SHAPE_KEYS | {"shape.same_numbers", "shape.same_numbers_regrouped"}


def _size_one_edit(result: CheckResult) -> tuple[str, int] | None:
    """How a wrong output's shape is the expected one with axes of size 1 added or dropped at one end, and nothing
    else changed: ("added_first", 1) for (1, 6, 2) against (6, 2), ("dropped_first", 1) for (3, 4) against
    (1, 3, 4), the same at the last end; None for any other failure or shape. The same edit on two checks' own
    inputs, whatever their sizes, is one fact of the code (an unsqueeze, an index with None, a squeeze that fires
    on a batch of one): one cause."""
    shapes = _reported_shapes(result, SHAPE_REPORT_KEYS)
    if shapes is None:
        return None
    theirs, ours = shapes
    longer, shorter, kind = (theirs, ours, "added") if len(theirs) > len(ours) else (ours, theirs, "dropped")
    count = len(longer) - len(shorter)
    if count <= 0:
        return None
    if longer[count:] == shorter and all(size == 1 for size in longer[:count]):
        first = (f"{kind}_first", count)
        # Sizes of 1 at both ends (a (1, 1) against (1,)): the end cannot be told, so no edit is read.
        return None if longer[:-count] == shorter and all(size == 1 for size in longer[-count:]) else first
    if longer[:-count] == shorter and all(size == 1 for size in longer[-count:]):
        return f"{kind}_last", count
    return None


def _axes_joined(result: CheckResult) -> int | None:
    """Where a wrong output's shape is the expected one with two neighbouring axes joined into one and nothing else
    changed: the first of the two axes (0 for (4, 6, 2) against (2, 2, 6, 2), and for (3, 5, 4) against
    (1, 3, 5, 4)); None for any other failure or shape, or where two places give that shape (a size 1 beside the
    pair). The same join on two checks' own inputs, whatever their sizes, is one fact of the code (a reshape that
    folds the heads into the batch): one cause."""
    shapes = _reported_shapes(result, SHAPE_REPORT_KEYS)
    if shapes is None:
        return None
    theirs, ours = shapes
    places = [axis for axis in range(len(ours) - 1)
              if theirs == [*ours[:axis], ours[axis] * ours[axis + 1], *ours[axis + 2:]]]
    return places[0] if len(places) == 1 else None


def _learner_fact(cause: Cause) -> tuple[tuple[str, str], ...] | None:
    """What a message comparing the learner's values with the asked ones (fields `got_<name>` against `<name>` or
    `expected_<name>`) says of the learner's object: each compared name whose value departs, with the learner's
    value. Two checks asking for other values whose learner's values depart in the same names with the same values
    (dropout 0.0 where 0.5 and where 0.3 were asked; float32 for a float64 and for a bfloat16 input) show one fact
    of the code, so one cause; None for a message that compares nothing, or where nothing departs."""
    fields = dict(cause.fields)
    fact = []
    for name, learner in fields.items():
        if not name.startswith("got_") or name.endswith("_shape"):
            continue  # a shape follows each check's own input: the shape rules below read it
        asked = [fields[key] for key in (name.removeprefix("got_"), "expected_" + name.removeprefix("got_"))
                 if key in fields]
        if len(asked) != 1:
            return None  # a learner's value with nothing (or two things) to compare it with: no fact read here
        if learner != asked[0]:
            fact.append((name, learner))
    return tuple(fact) or None


def _symptom(result: CheckResult) -> str:
    """The message without the check's title before it: what the failure says, whichever check it is."""
    return result.message.removeprefix(result.title)


def shown_in_full(results: Sequence[CheckResult]) -> list[CheckResult]:
    """The results whose message, details and picture the table shows (one per cause)."""
    return [row.shown for row in rows(results)]


def _short_titles(results: Sequence[CheckResult], lang: str, messages: Messages) -> str:
    titles = [_shortened(result.title or result.id) for result in results]
    return render(messages, "fold.separator", lang).join(titles)


def _shortened(title: str) -> str:
    """The title cut after a whole word once it is wider than TITLE_COLUMNS (a Chinese character is two columns
    wide, and a Chinese title may be cut at any character)."""
    text, columns = one_line(title), 0
    for end, char in enumerate(text):
        columns += 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if columns > TITLE_COLUMNS:
            cut = text[:end]
            space = cut.rfind(" ")
            return (cut[:space] if space > end // 2 else cut).rstrip(" ,;:，；：") + "…"
    return text


# The "no further hint" line under a rung-2 line without a named mistake, by what that line states (issue 58).
STATED_KEYS = {DepartureKind.DEPARTS: "ladder.departure_stated", DepartureKind.RAISED_ONLY: "ladder.raised_stated",
               DepartureKind.STEPS_MATCH: "ladder.result_stated", DepartureKind.STEP_ALONE: "ladder.step_stated",
               DepartureKind.COUNT: "ladder.count_stated", DepartureKind.NOTEBOOK_READS: "ladder.reads_stated",
               DepartureKind.UNPROVEN: "ladder.unproven_stated"}


def _nothing_new(result: CheckResult, step: Step, named_above: bool = False, located_above: bool = False) -> str | None:
    """The key of the line that says a rung adds nothing new (no known mistake reproduces the failure, or its ladder
    ends lower, or the last run already showed this, the top of its ladder), so that a rung never shows the previous
    rung's text as if it were new; None when the rung adds something or a rung above it is still to come."""
    if result.status == PASSED or step.rung == RUNGS[0]:
        return None
    adds = result.ladder(step.rung) != result.ladder(step.rung - 1)
    at_top = result.ladder(step.rung) == result.ladder(RUNGS[-1])
    if adds and not (step.again and at_top):
        return None
    if result.misconception is None and result.cause is not None and result.cause.message_key in CAUSE_STATED_KEYS:
        return _cause_stated_key(result.cause)
    if result.misconception is None and result.departure and not named_above:
        # Rung 2 said where the computation first departs and how: "no known mistake" would read as if nothing
        # had been found. A line that says only where the code raised states no departing step (issue 58).
        return STATED_KEYS[result.departure_kind]
    key = "ladder.nothing_known" if result.misconception is None else "ladder.no_more"
    if result.misconception is None and named_above:
        # Not "no known mistake" under a row that names one: the attempt has a known mistake, just not proven here.
        key = "ladder.nothing_known_besides"
    elif result.misconception is None and located_above and not result.departure:
        # Not "no known mistake" beside a row that locates the step where the computation departs (issue 58).
        key = "ladder.nothing_known_beside_departure"
    # It points to what the row shows: values (or their picture), else the line an error names, else the message.
    if result.values_shown and not _same_numbers_shown(result):
        return key
    line = dict(result.cause.fields).get("line") if result.cause is not None else None
    return f"{key}_at_line" if line else f"{key}_in_message"


def _same_numbers_shown(result: CheckResult) -> bool:
    """Whether the values the row shows are the expected ones under another shape ("the numbers are right"): no
    entry of them differs, so "where your result first differs (the values above)" would point at nothing (issue
    58); the message says what is wrong instead."""
    return result.cause is not None and result.cause.message_key.startswith("shape.same_numbers")


def _cause_stated_key(cause: Cause) -> str:
    """The line for a message that already says what is wrong: "your line" only when the message quotes the
    learner's line (its `line` field); a message naming no line (a size, a dtype, a keyword) is not said to."""
    return "ladder.cause_stated" if dict(cause.fields).get("line") else "ladder.cause_stated_in_message"


def _row_lines(row: Row, lang: str, messages: Messages, step: Step, total: int, *, hidden: bool = False,
               named_above: bool = False, located_above: bool = False, said: set[str] | None = None) -> list[str]:
    shown = row.shown
    mark = MARKS.get(shown.status, "✘")
    if shown.stub:  # an untouched stub: one line for the exercise, not "not implemented yet" per check
        count = 1 + len(row.same)
        key = "fold.stub_all" if count == total else "fold.stub"
        return [f"  {mark} " + render(messages, key, lang, {"count": count, "total": total})]
    lines = [f"  {mark} {shown.message}"]
    lines.extend(f"      {detail}" for detail in shown.details)
    lines.extend(f"      {line}" for line in shown.ladder(step.rung))
    if not hidden and (nothing_new := _nothing_new(shown, step, named_above, located_above)):
        line = render(messages, nothing_new, lang)
        if said is None or line not in said:  # a line with nothing new is said once per table, not per check
            lines.append("      " + line)
        if said is not None:
            said.add(line)
    if row.same:
        key = "fold.same_reason_one" if len(row.same) == 1 else "fold.same_reason"
        lines.append(f"  {mark} " + render(messages, key, lang, {
            "count": len(row.same), "titles": _short_titles(row.same, lang, messages)}))
    if row.same_shape:
        key = "fold.same_shape_one" if len(row.same_shape) == 1 else "fold.same_shape"
        lines.append(f"  {mark} " + render(messages, key, lang, {
            "count": len(row.same_shape), "titles": _short_titles(row.same_shape, lang, messages)}))
    if row.follow_on:
        key = "fold.follow_on_one" if len(row.follow_on) == 1 else "fold.follow_on"
        lines.append(f"  {mark} " + render(messages, key, lang, {
            "count": len(row.follow_on), "titles": _short_titles(row.follow_on, lang, messages)}))
        raised = dict.fromkeys(result.cause.raised for result in row.follow_on  # a hidden check's text is withheld
                               if not result.hidden and result.cause is not None and result.cause.raised is not None)
        for kind, detail in raised:  # each distinct exception once, labelled as the library's words
            words = "fold.raised_by_torch" if kind == "RuntimeError" else "fold.raised_by_python"
            lines.append("      " + render(messages, words, lang, {"type": kind, "detail": detail}))
    return lines


def table(exercise: Exercise, results: Sequence[CheckResult], lang: str, *, hidden: bool, messages: Messages,
          rung: int = GRADED_RUNG, steps: Mapping[LadderCause, Step] | None = None) -> str:
    """The ✔/✘ table, one row per cause of failure, each with the hint ladder's lines up to its rung: the cause's
    step in `steps` (check(...)'s ladder per mistake), else `rung`. check(...)'s table (not hidden) starts with the
    public checks passing and failing and where the points stand, and ends with a line for each next rung there
    is to see; a graded table (hidden) starts with the score."""
    if hidden:
        progress = render(messages, "heading.score", lang, {"score": sum(r.score for r in results),
                                                            "max_score": sum(r.max_score for r in results)})
    else:
        progress = Progress.of(results, exercise.points).line(lang, messages)
    lines = [render(messages, "heading.hidden" if hidden else "heading.public", lang,
                    {"title": pick(exercise.title, lang), "progress": progress})]
    table_rows = rows(results)
    shown_at = [(row, (steps or {}).get(LadderCause.of(row.shown), Step(rung))) for row in table_rows]
    named = any(row.shown.misconception is not None for row in table_rows)
    located = any(row.shown.misconception is None and row.shown.departure_step for row in table_rows)
    said: set[str] = set()
    for row, step in shown_at:
        lines.extend(_row_lines(row, lang, messages, step, len(results), hidden=hidden, named_above=named,
                                located_above=located, said=said))
    if not hidden:
        failing = [(row.shown, step.rung) for row, step in shown_at if row.shown.status != PASSED]
        if any(at == 1 and (result.mistake or result.hint) for result, at in failing):
            lines.append("  " + render(messages, "ladder.next_mistake", lang))
        if any(at == 2 and result.change for result, at in failing):
            lines.append("  " + render(messages, "ladder.next_change", lang))
    explanation = f"{exercise.id}.explanation"
    if not hidden and explanation in messages and results and all(r.status == PASSED for r in results):
        lines.append("  " + render(messages, explanation, lang))  # the why, only after the student's own answer
    return "\n".join(lines)


def notebook_exercises(notebook: str, exercises: Iterable[Exercise]) -> list[Exercise]:
    """The exercises of one notebook, in course order; a clear error naming the notebooks for a typo."""
    chosen = [exercise for exercise in exercises if exercise.notebook == notebook]
    if not chosen:
        known = ", ".join(sorted({exercise.notebook for exercise in exercises}))
        raise ValueError(f"unknown notebook {notebook!r}; known notebooks: {known}")
    return chosen


def defined_namespace(exercise: Exercise, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """{name: object} of the exercise's names the notebook defines; `defined` says whether all of them are."""
    return {name: namespace[name] for name in exercise.names if name in namespace}


@dataclass(frozen=True)
class ExerciseProgress:
    """One exercise in check_all: its public results, and whether the notebook defines all its names yet."""

    exercise: Exercise  # the full kit's, or the kit's stored copy
    results: list[CheckResult]
    defined: bool

    @property
    def state(self) -> str:
        """'done' (every public check passes), 'not_started' (names missing, or only stubs) or 'failing'."""
        if self.defined and self.progress.done:
            return "done"
        if not self.defined or all(result.stub for result in self.results):
            return "not_started"
        return "failing"

    @property
    def progress(self) -> Progress:
        return Progress.of(self.results, self.exercise.points)


STATE_MARKS = {"done": "✔", "failing": "✘", "not_started": "·"}


def summary(notebook: str, progress: Sequence[ExerciseProgress], lang: str, *, messages: Messages) -> str:
    """check_all's table: for each exercise of the notebook its state (done, failing, not started) and its progress
    line (public checks passing and failing; points secured, graded later and on failing checks); then the
    notebook's totals."""
    lines = []
    totals = Progress(0, 0, 0.0, 0.0, 0.0)
    for entry in progress:
        totals += entry.progress
        state = render(messages, f"summary.{entry.state}", lang)
        lines.append(f"  {STATE_MARKS[entry.state]} " + render(messages, "summary.exercise", lang, {
            "title": pick(entry.exercise.title, lang), "state": state}))
        lines.append("      " + entry.progress.line(lang, messages))
    done = sum(entry.state == "done" for entry in progress)
    heading = render(messages, "summary.heading", lang, {"notebook": notebook, "done": done, "total": len(progress)})
    total = render(messages, "summary.total", lang, {"progress": totals.line(lang, messages)})
    return "\n".join([heading, *lines, total])

