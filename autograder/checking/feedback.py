"""Feedback a student can read: a compact ✔/✘ table, one row per cause of failure, with the hint ladder's rungs
(the pictures are autograder.checking.pictures).

Takes the message catalogue as an argument (no checks, no reference): the live kit (autograder.running.rendering) and
the student kit render with the same code.
"""

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autograder.checking.check_types import PASSED, CheckResult, Exercise, Status
from autograder.i18n import Messages, pick, render
from autograder.safe_text import one_line

MARKS: dict[str, str] = {Status.PASSED: "✔", Status.FAILED: "✘", Status.ERROR: "✘"}  # by status, as records hold it
RUNGS = (1, 2, 3)  # the hint ladder: the symptom and a question; the likely mistake and its hint; what to change
GRADED_RUNG = 2  # what graded output shows: never what to change
# Exception messages that can follow from an earlier named mistake (a plain list of heads makes later checks raise
# "expected m1 and m2 to have the same dtype"); a wrong signature or a missing name is a problem of its own.
FOLLOW_ON_KEYS = frozenset({"error.other", "error.shape_mismatch", "error.matmul_shapes", "error.broadcast_axis",
                            "error.view_size", "error.device_mismatch", "error.uncomparable"})
TITLE_COLUMNS = 60  # a folded check's title is cut to this width


@dataclass
class HintLadder:
    """Which rung of the hint ladder check(...) shows for each exercise. Rung 1 (a first failing run): the symptom
    (which output, which row, the shapes, a picture) and a question that leads to the cause. Rung 2 (hint=True, or
    the next run that still fails): the likely mistake and its hint. Rung 3 (only on request: hint=True once more
    after rung 2, or hint=3): what to change, in words. A rung with nothing to add (no known mistake reproduces the
    failure, or its ladder ends lower) says so and points to where the result first differs. A run where every check
    passes starts the ladder again. One ladder per kernel: the notebook's check() keeps it for the session."""

    last_rung: dict[str, int] = field(default_factory=dict)  # exercise id -> rung of its last failing run

    def rung(self, exercise_id: str, requested: bool | int | None) -> int:
        """The rung to show. requested: None lets the ladder decide (1, then 2, never 3); True asks for one rung
        more than the last run showed (at least 2); False keeps to rung 1; 1, 2 or 3 names the rung."""
        last = self.last_rung.get(exercise_id, 0)
        if requested is None:
            return 2 if last else 1
        if requested is False:
            return 1
        if requested is True:
            return min(RUNGS[-1], max(2, last + 1))
        if requested not in RUNGS:
            raise ValueError(f"hint={requested!r}: give True (one rung more), False, or a rung: 1, 2 or 3")
        return int(requested)

    def remember(self, exercise_id: str, results: Iterable[CheckResult], rung: int) -> None:
        # A run of an untouched stub is no attempt yet: the first wrong attempt after it still starts at rung 1.
        if all(result.status == PASSED or result.stub for result in results):
            self.last_rung.pop(exercise_id, None)
        else:
            self.last_rung[exercise_id] = rung


@dataclass(frozen=True)
class Progress:
    """Public checks passing and failing (previews included) and the points they leave at stake: the first line
    of check(...) and each exercise's line in check_all(...)."""

    passed: int
    total: int
    points: float  # the exercise's points in all, hidden checks included
    public_points: float  # what its public checks are worth (previews are worth nothing: their twins are hidden)
    secured: float  # what its passing public checks are worth

    @classmethod
    def of(cls, results: Sequence[CheckResult], points: float | None) -> "Progress":
        public_points = sum(result.max_score for result in results)
        return cls(sum(result.status == PASSED for result in results), len(results),
                   public_points if points is None else points, public_points, sum(r.score for r in results))

    def __add__(self, other: "Progress") -> "Progress":
        return Progress(self.passed + other.passed, self.total + other.total, self.points + other.points,
                        self.public_points + other.public_points, self.secured + other.secured)

    @property
    def done(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def line(self, lang: str, messages: Messages) -> str:
        """"✔ all … pass" only when every public check passes; otherwise what passes, what fails, what is at stake."""
        if self.done:
            return render(messages, "heading.progress_done", lang, {
                "total": self.total, "points": self.points, "later": self.points - self.public_points})
        return render(messages, "heading.progress", lang, {
            "passed": self.passed, "failed": self.total - self.passed, "total": self.total, "points": self.points,
            "stake": self.points - self.secured})


@dataclass
class Row:
    """One line of the ✔/✘ table and what it folds: a check shown in full, the checks that fail for the same
    reason, and the checks whose errors follow from it."""

    shown: CheckResult
    same: list[CheckResult] = field(default_factory=list)
    follow_on: list[CheckResult] = field(default_factory=list)


def rows(results: Sequence[CheckResult]) -> list[Row]:
    """The table's rows, in check order: each failure is shown in full the first time its cause appears, later
    failures with the same cause fold into its row, every untouched stub into the first stub's row, and an
    exception that can follow from an earlier named mistake into that mistake's row."""
    table_rows: list[Row] = []
    for result in results:
        cause = result.cause
        leader = None if cause is None else next(
            (row for row in table_rows if row.shown.cause is not None and (
                (result.stub and row.shown.stub) or row.shown.cause.same_as(cause))), None)
        if leader is not None:
            leader.same.append(result)
            continue
        if cause is not None and result.misconception is None and cause.message_key in FOLLOW_ON_KEYS:
            named = next((row for row in table_rows if row.shown.misconception is not None), None)
            if named is not None:
                named.follow_on.append(result)
                continue
        table_rows.append(Row(result))
    return table_rows


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


def _nothing_new(result: CheckResult, rung: int) -> str | None:
    """The key of the line that says a rung adds nothing to the one below (no known mistake reproduces the failure,
    or its ladder ends lower), so that a rung never shows the previous rung's text as if it were new; None when the
    rung adds something."""
    if rung == RUNGS[0] or result.ladder(rung) != result.ladder(rung - 1):
        return None
    return "ladder.nothing_known" if result.misconception is None else "ladder.no_more"


def _row_lines(row: Row, lang: str, messages: Messages, rung: int, total: int, *, hidden: bool = False) -> list[str]:
    shown = row.shown
    mark = MARKS.get(shown.status, "✘")
    if shown.stub:  # an untouched stub: one line for the exercise, not "not implemented yet" per check
        count = 1 + len(row.same)
        key = "fold.stub_all" if count == total else "fold.stub"
        return [f"  {mark} " + render(messages, key, lang, {"count": count, "total": total})]
    lines = [f"  {mark} {shown.message}"]
    lines.extend(f"      {detail}" for detail in shown.details)
    lines.extend(f"      {line}" for line in shown.ladder(rung))
    if not hidden and (nothing_new := _nothing_new(shown, rung)):
        lines.append("      " + render(messages, nothing_new, lang))
    if row.same:
        key = "fold.same_reason_one" if len(row.same) == 1 else "fold.same_reason"
        lines.append(f"  {mark} " + render(messages, key, lang, {
            "count": len(row.same), "titles": _short_titles(row.same, lang, messages)}))
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
          rung: int = GRADED_RUNG) -> str:
    """The ✔/✘ table, one row per cause of failure, each with the hint ladder's lines up to `rung`. check(...)'s
    table (not hidden) starts with the public checks passing and failing and the points at stake, and ends with a
    line saying how to see the next rung; a graded table (hidden) starts with the score."""
    if hidden:
        progress = render(messages, "heading.score", lang, {"score": sum(r.score for r in results),
                                                            "max_score": sum(r.max_score for r in results)})
    else:
        progress = Progress.of(results, exercise.points).line(lang, messages)
    lines = [render(messages, "heading.hidden" if hidden else "heading.public", lang,
                    {"title": pick(exercise.title, lang), "progress": progress})]
    table_rows = rows(results)
    for row in table_rows:
        lines.extend(_row_lines(row, lang, messages, rung, len(results), hidden=hidden))
    shown = [row.shown for row in table_rows]
    if not hidden and rung == 1 and any(result.mistake or result.hint for result in shown):
        lines.append("  " + render(messages, "ladder.next_mistake", lang))
    elif not hidden and rung == 2 and any(result.change for result in shown):
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
    line (public checks passing and failing, points at stake); then the notebook's totals."""
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

