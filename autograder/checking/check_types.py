"""The types checks are declared and judged with: exercises, checks, verdicts, misconceptions and results.

A check has three parts. Its probe runs the student's code and returns plain data (tensors,
shapes, exception descriptions, call counts); its expectations are what the reference says for the
case (autograder.checking.expectations); its judge compares the data with them and decides. The
judge never sees the student's live objects, so probes can run in another process (see
autograder.isolation.supervisor) while judges run in a clean one, and it never sees the reference
itself, so the student kit runs the same judge on expectations it stored.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from autograder.checking.expectations import Expectations, no_expectations, reads_case_alone, record_keys_read

__all__ = [
    "Case", "Cause", "Check", "CheckResult", "DepartureKind", "ERROR", "Evidence", "Exercise", "FAILED", "HeadLayout",
    "Misconception", "PASSED", "ProbeData", "Status", "TokenHead", "Untraced", "Verdict",
]


class Untraced(StrEnum):
    """Why a departure the grader asked for was not computed (autograder.isolation.supervisor sets it): kept in the
    student's record (CheckResult.departure_lost) and logged once, so that the feedback and the class report can say
    so, never silently. Here, below both, so that the pages (autograder.outputs) read the same values."""

    NOT_TRACED = "not_traced"  # the child went on without tracing it: it stopped waiting, or its pipe was taken
    TIME = "time"  # the trace ran past the step's own limit
    ERROR = "error"  # the student's code raised under the trace
    CAP = "cap"  # the student's code made more tensors than a trace keeps
    REFUSED = "refused"  # what came back is not what a child writes
    STOPPED = "stopped"  # the grading process was killed or crashed while tracing
    GRADER = "grader"  # the grader failed finding the departure (autograder.grading.notebooks)
    NOT_ASKED = "not_asked"  # recorded by a child that stopped before "probed": the re-run does not probe it again


class DepartureKind(StrEnum):
    """What a check's rung-2 line states when it names no step where the computation departs (issue 58): the
    ladder's "no further hint" line under it says only what that line says."""

    DEPARTS = ""  # it names the step where the computation first departs from the notes
    RAISED_ONLY = "raised_only"  # where the code raised: no step of the notes was compared
    STEPS_MATCH = "steps_match"  # every step matches: the result is the last step in another shape, or an earlier one
    STEP_ALONE = "step_alone"  # the departing step alone: no fact read from the learner's tensors there
    COUNT = "count"  # how a count differs from the module's trainable parameters (count_difference)
    UNPROVEN = "unproven"  # the case's step is one number throughout, which a tensor of theirs holds: no step shown
    NOTEBOOK_READS = "notebook_reads"  # the notebook's integers the code reads, proven to change its run


class Status(StrEnum):
    """What a check says of the student's code. A str: records, CSV and JSON carry "passed", "failed", "error"."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


PASSED, FAILED, ERROR = Status.PASSED, Status.FAILED, Status.ERROR


class Evidence(StrEnum):
    """How a named mistake was proven on the student's own case (autograder.course.mistakes declares which kinds
    prove each mistake; autograder.checking.results names one only with such evidence).

    VARIANT: the reference with that mistake (a knob of autograder.course.variants, its value fitted where the
    family has one) gives the student's output on the failing case. ERROR: the mistake's variant, run on the same
    input, raises the same kind of error at the same operation with the same shapes. FACT: a fact read from the
    student's object or graph (a parameter the output does not depend on, a plain attribute where a buffer belongs).
    """

    VARIANT = "variant"
    ERROR = "error"
    FACT = "fact"

ProbeData = dict[str, Any]
Case = dict[str, Any]


# A check's case and record, as its exercise types them (TypedDicts beside its probe): a Check built with a judge or
# an expect whose parameters are the other way round, or of another exercise's types, is a type error.
CaseT = TypeVar("CaseT", bound=Mapping[str, Any])
RecordT = TypeVar("RecordT", bound=Mapping[str, Any])


TokenHead = tuple[int, int]  # (token, head): where one feature of a split or merged output came from


@dataclass(frozen=True)
class HeadLayout:
    """Where each feature of a split or merged output came from, as the reference puts it and as the student's output
    holds it, for a block diagram (autograder.checking.pictures): rows are the output's tokens, columns its features,
    `head_dim` to a head; a cell is the (token, head) of the input feature whose value it holds, None where no
    feature of the input holds it. Derived from the outputs themselves (autograder.checking.pictures.head_layout)."""

    head_dim: int
    expected: tuple[tuple[TokenHead | None, ...], ...]
    received: tuple[tuple[TokenHead | None, ...], ...]


@dataclass
class Verdict:
    """A judge's decision on one case.

    `message_key` names a message in the catalogue; `fields` fill it in and must hold only
    indices, names and counts (never input or expected values: hidden checks show the message).
    `expected`/`got` are shown only by public checks, whole as the student's code returned them; `heatmap` asks for
    a picture of them, `head_layout` for a block diagram of where the heads' features landed.
    """

    passed: bool
    message_key: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    misconception: str | None = None
    evidence: Evidence | None = None  # how `misconception` was proven; a name without it is never shown
    expected: Any = None
    got: Any = None
    input_shape: tuple[int, ...] | None = None
    heatmap: bool = False
    # A function of sizes (causal_mask(num_tokens)) has no input tensor: its inputs by name, {"num_tokens": 6}.
    input_sizes: dict[str, int] = field(default_factory=dict)
    # A padding mask the case hands forward beside its input, row by row (1 real, 0 padding): shown under the input's
    # shape by a public check, since which tokens are padded decides what is right.
    input_mask: tuple[tuple[int, ...], ...] | None = None
    # Bool over expected's leading axes: the positions the judge compared (the queries that see a real token); the
    # largest difference shown is looked for there only. None: every position.
    compared: Any = None
    head_layout: HeadLayout | None = None


@dataclass(frozen=True, kw_only=True)
class Check(Generic[CaseT, RecordT]):
    """One property of one exercise, worth `points` when every case passes; built by keyword, its title a field.

    `expect` holds the reference (full kit only); `probe` and `judge` do not: a public check's probe and judge are
    functions of its exercise folder's `probe` and `judge` modules (autograder.course.<notebook>.<exercise>), which
    the student kit ships as they are.
    """

    id: str
    exercise: str
    points: float
    hidden: bool
    title: Mapping[str, str]  # {"en": ..., "zh": ...}: what the check asks, in the table and "What is graded"
    # The thing observed first, then the case: probe(namespace, case), judge(record, case, expectations),
    # expect(record, case).
    cases: Callable[[Any], list[CaseT]]  # random.Random -> plain-data case specs
    probe: Callable[[Mapping[str, Any], CaseT], RecordT]  # (notebook namespace, case) -> record
    judge: Callable[[RecordT, CaseT, Expectations], Verdict]  # (record, case, expectations) -> verdict
    expect: Callable[[RecordT, CaseT], Expectations] = no_expectations  # (record, case) -> expectations
    preview: bool = False  # a public twin of a hidden check (autograder.course.catalog): run by check(), never graded

    @property
    def expect_from_case(self) -> bool:
        """Whether `expect` reads the case alone (marked expectations.case_alone): one per case serves a class."""
        return reads_case_alone(self.expect)

    @property
    def expect_record_keys(self) -> tuple[str, ...] | None:
        """The record keys `expect` reads besides the case (marked expectations.reads_record), None where unmarked:
        students whose values there are the same to the byte share one computation."""
        return record_keys_read(self.expect)


@dataclass(frozen=True)
class Exercise:
    """One graded exercise, declared in its folder's declaration (autograder.course.declaration.Declaration).

    `names` are the notebook names its checks receive, in the order the notebook passes them:
    `check("causal_mask", causal_mask)`. `points` is left out of a declaration: autograder.course.exercises
    fills in the sum of its checks' points, so points are written once, on the checks. `minutes` and
    `difficulty` feed the notebook's overview table (autograder.integrations.source_notebooks refuses an exercise
    without them).
    """

    id: str
    notebook: str
    names: tuple[str, ...]
    title: Mapping[str, str]  # {"en": ..., "zh": ...}
    points: float | None = None
    minutes: int = 0  # a typical student's time for it, stated in the notebook's overview; 0: not stated yet
    difficulty: int = 0  # 1 follows the text, 2 needs thought about shapes, 3 puts several ideas together

    def namespace(self, objects: tuple[Any, ...]) -> dict[str, Any]:
        """{name: object} for `check(id, *objects)`; a clear TypeError when a notebook cell passes too few or many."""
        if len(objects) != len(self.names):
            expected = ", ".join(self.names)
            raise TypeError(f"check({self.id!r}, ...) takes {len(self.names)} object(s): {expected}")
        return dict(zip(self.names, objects, strict=True))


@dataclass(frozen=True)
class Misconception:
    """A known wrong idea, recognised by its own evidence in the student's outputs (a wrong variant of the reference
    that reproduces them, or what the probe saw). Its words are the hint ladder's (autograder.checking.feedback):
    rung 1 is the check's symptom with `question`, a question whose answer leads to the cause; rung 2 is `name`
    (the reproduced mistake) with `hint` (the concept); rung 3, only on request, is `change`: what to change, in words.
    No rung holds code, a formula, a shape to type or an expected answer."""

    id: str
    name: Mapping[str, str]  # {"en": ..., "zh": ...}, as every bilingual text (autograder.i18n)
    hint: Mapping[str, str]
    question: Mapping[str, str] = field(default_factory=dict)  # rung 1; empty: the symptom alone
    change: Mapping[str, str] = field(default_factory=dict)  # rung 3; empty: the ladder stops at rung 2
    # Where it may be named (exercise ids) and what proves it (autograder.course.mistakes); empty: never shown.
    exercises: frozenset[str] = frozenset()
    evidence: frozenset[Evidence] = frozenset()
    # A choice made whatever the inputs (a constant size): it fails every case of a check it is named on, so a case of
    # the same check that passes refutes it (autograder.checking.results; issue 58).
    fails_every_case: bool = False

    def refusal(self, verdict: "Verdict", exercise: str) -> str | None:
        """Why `verdict` may not name this mistake on `exercise` (not an exercise it applies to, no evidence, or
        evidence of a kind that does not prove it); None when it may."""
        if exercise not in self.exercises:
            return f"{self.id} does not apply to exercise {exercise}"
        if verdict.evidence is None:
            return f"{self.id} named without evidence"
        if verdict.evidence not in self.evidence:
            return f"{self.id} is not proven by {verdict.evidence.value} evidence"
        return None

    def proven_by(self, verdict: "Verdict", exercise: str) -> bool:
        """Whether `verdict` names this mistake with evidence of a declared kind, on an exercise it applies to."""
        return self.refusal(verdict, exercise) is None


@dataclass(frozen=True)
class Cause:
    """Why a check failed, as far as telling two failures of one exercise apart goes: the misconception named, the
    message's key and its fields (for an exception: its type and text). check(...)'s table shows one failure per
    cause and folds the others into one line (autograder.checking.feedback)."""

    misconception: str | None
    message_key: str
    fields: tuple[tuple[str, str], ...]  # the message's fields as text, sorted by name

    def same_as(self, other: "Cause") -> bool:
        """The same named mistake, or the same message with the same fields."""
        if self.misconception is not None and self.misconception == other.misconception:
            return True
        return (self.message_key, self.fields) == (other.message_key, other.fields)

    @property
    def raised(self) -> tuple[str, str] | None:
        """(type, text) of the exception the student's code raised, when the message only quotes it."""
        found = dict(self.fields)
        if self.message_key == "error.other" and "type" in found and "detail" in found:
            return found["type"], found["detail"]
        return None


@dataclass
class CheckResult:
    """What one check says of a student's code. `message` names the symptom; the hint ladder's rungs
    (autograder.checking.feedback.HintLadder) are lines in the result's language, each with its label, empty when no
    known mistake fits or the mistake has no such text: `question` (rung 1, beside the symptom), `mistake` and `hint`
    (rung 2: the reproduced mistake and the concept, on request or on the next failing run) and `change` (rung 3,
    what to change in words, only on request). Graded records carry rungs 1 and 2 (`full_message`)."""

    id: str
    exercise: str
    score: float
    max_score: float
    status: Status
    misconception: str | None
    message: str
    hidden: bool
    details: list[str] = field(default_factory=list)  # public checks only: shapes, values, differences
    heatmap: tuple[Any, Any] | None = None  # (expected, got) 2-D tensors, public checks only
    head_layout: HeadLayout | None = None  # a block diagram of the heads' features, public checks only
    wrong_outputs: list[str] = field(default_factory=list)  # hidden checks: "check#case:fingerprint" of wrong cases
    hint: str = ""  # rung 2: "hint — the concept"
    stub: bool = False  # the code still raises NotImplementedError: not started rather than wrong
    title: str = ""  # the check's title in the result's language: what a folded line names
    cause: Cause | None = None  # None when the check passed
    question: str = ""  # rung 1: "ask yourself — a question whose answer leads to the cause"
    mistake: str = ""  # rung 2: "reproduced mistake — its name"
    change: str = ""  # rung 3: "what to change — in words"
    graded_later: float = 0.0  # a preview: what its hidden twin is worth, graded later on new values
    failed_case: int | None = None  # the index of the case that decided a failure (the first failing one)
    departure: str = ""  # rung 2 when no mistake is named: where the computation first departs from the notes' steps
    values_shown: bool = False  # its details show expected and actual values, or a picture of them (public only)
    # The mistakes whose variants reproduce this check's failure (every failing case's output, or the very error it
    # raised), whether or not they tell each other apart here: a mistake proven on another check of the attempt
    # explains this one too when it is among them (autograder.checking.attempt).
    reproduced_by: tuple[str, ...] = ()
    # The mistakes whose reference variant this check fails with the very same verdict (message and numbers) or
    # error: a property many mistakes break names none of them here, but one that another check proves explains it
    # (autograder.course.value_variants, autograder.checking.attempt).
    failing_alike: tuple[str, ...] = ()
    departure_step: str = ""  # the notes' step `departure` names: failures departing at one step are one cause
    # `departure_step` is another check's, proven there, which this check's case leaves open (its own line says
    # only what this case shows): the table shows that check's row and folds this one under it.
    step_adopted: bool = False
    # Why the departure grading asked for was not computed (Untraced, above: the trace was
    # stopped, refused, or never run); "" when it was, or none was asked for. Never lost silently (issue 58).
    departure_lost: str = ""
    departure_kind: DepartureKind = DepartureKind.DEPARTS  # what `departure` states (DepartureKind)
    # A named failure proven to be the cause of another check's departure at this step (a parameter the output
    # does not use, from which the notes compute that step: autograder.running.diagnosing._unused_parameter_step):
    # the table folds it under that check's row.
    cause_of_step: str = ""
    # What a wrong count is on its own case, proven from the module's parts (count_difference.count_fact): checks
    # whose counts are each the same fact of their own module (how many tensors it has; none) are one cause.
    count_fact: str = ""

    def ladder(self, rung: int) -> list[str]:
        """The ladder's lines up to `rung` (1: the question; 2: the mistake and the hint too, or where the computation
        departs from the notes; 3: the change too)."""
        shown = [(1, self.question), (2, self.mistake), (2, self.hint), (2, self.departure), (3, self.change)]
        return [line for level, line in shown if line and level <= rung]

    @property
    def full_message(self) -> str:
        """The message and rungs 1 and 2 of the ladder, one per line: what graded records and reports carry."""
        return "\n".join([self.message, *self.ladder(2)])
