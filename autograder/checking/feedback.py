"""Feedback a student can read: a compact ✔/✘ table (the pictures are autograder.checking.pictures).

Takes the message catalogue as an argument (no checks, no reference): the live kit (autograder.running.rendering) and
the student kit render with the same code.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from autograder.checking.check_types import PASSED, CheckResult, Exercise, Status
from autograder.i18n import Messages, pick, render

MARKS: dict[str, str] = {Status.PASSED: "✔", Status.FAILED: "✘", Status.ERROR: "✘"}  # by status, as records hold it


@dataclass
class HintLadder:
    """When check(...) names the likely mistake: the first failing run shows only the symptom (which output, which
    row, the shapes, a picture); the mistake and its hint come on request (hint=True) or on the next run of the same
    exercise that still fails. One ladder per kernel: the notebook's check() keeps it for the session."""

    failed_last_time: set[str] = field(default_factory=set)

    def shows_hints(self, exercise_id: str, requested: bool | None) -> bool:
        """requested: True or False from check(..., hint=...); None lets the ladder decide."""
        return exercise_id in self.failed_last_time if requested is None else requested

    def remember(self, exercise_id: str, results: Iterable[CheckResult]) -> None:
        if all(result.status == PASSED for result in results):
            self.failed_last_time.discard(exercise_id)
        else:
            self.failed_last_time.add(exercise_id)


def table(exercise: Exercise, results: Sequence[CheckResult], lang: str, *, hidden: bool, messages: Messages,
          hints: bool = True) -> str:
    """The ✔/✘ table. Without `hints`, a failed check's known mistake is held back and one line says how to see
    it (the hint ladder); graded tables always show it."""
    title = pick(exercise.title, lang)
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    heading = render(messages, "heading.hidden" if hidden else "heading.public", lang, {"title": title})
    total = render(messages, "heading.score", lang, {"score": score, "max_score": max_score})
    lines = [f"{heading} — {total}"]
    if not hidden and exercise.points is not None:
        # What check(...) cannot show: how much of the exercise is graded later (the previews are worth nothing).
        passed = sum(result.status == PASSED for result in results)
        lines.append("  " + render(messages, "heading.progress", lang, {
            "passed": passed, "total": len(results), "points": exercise.points, "later": exercise.points - max_score}))
    for result in results:
        message = result.full_message if hints else result.message
        lines.append(f"  {MARKS.get(result.status, '✘')} {message}")
        lines.extend(f"      {detail}" for detail in result.details)
    if not hints and any(result.hint for result in results):
        lines.append("  " + render(messages, "heading.hint_held_back", lang))
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
        if self.defined and self.results and all(result.status == PASSED for result in self.results):
            return "done"
        if not self.defined or all(result.stub for result in self.results):
            return "not_started"
        return "failing"

    def counts(self) -> dict[str, Any]:
        public_points = sum(result.max_score for result in self.results)
        points = cast(float, self.exercise.points)  # a declared exercise's: autograder.course.exercises fills it in
        return {"passed": sum(result.status == PASSED for result in self.results), "total": len(self.results),
                "points": points, "later": points - public_points}


STATE_MARKS = {"done": "✔", "failing": "✘", "not_started": "·"}


def summary(notebook: str, progress: Sequence[ExerciseProgress], lang: str, *, messages: Messages) -> str:
    """check_all's table: for each exercise of the notebook its state (done, failing, not started), public checks
    passed and points in all and checked at grading; then the notebook's totals."""
    lines = []
    totals = {"passed": 0, "total": 0, "points": 0.0, "later": 0.0}
    for entry in progress:
        counts = entry.counts()
        for key in totals:
            totals[key] += counts[key]
        state = render(messages, f"summary.{entry.state}", lang)
        lines.append(f"  {STATE_MARKS[entry.state]} {pick(entry.exercise.title, lang)} — {state}")
        lines.append("      " + render(messages, "heading.progress", lang, counts))
    done = sum(entry.state == "done" for entry in progress)
    heading = render(messages, "summary.heading", lang, {"notebook": notebook, "done": done, "total": len(progress)})
    return "\n".join([heading, *lines, render(messages, "summary.total", lang) + " " +
                      render(messages, "heading.progress", lang, totals)])
