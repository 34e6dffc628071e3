"""What notebook cells call, in both kits: `check` for instant public feedback, `check_all` for a notebook's
summary and `grade` for a graded test cell.

One runtime, one source of expectations plugged in: the full kit's (autograder.running.in_notebook) computes them
from the reference, the student kit's (autograder.integrations.student_kit.runtime) reads them from its stored
vectors. Either way the checks' own probes and judges run here, and the tables are printed by the same code. The
student kit ships this module as it is: it imports nothing of the reference, the checks' declarations or the
catalogue (pyproject.toml's import-linter contracts).
"""

import dataclasses
import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from autograder.checking.attempt import one_diagnosis
from autograder.checking.check_types import FAILED, CheckResult, Exercise, Misconception
from autograder.checking.expectations import Expectations
from autograder.checking.feedback import (
    ExerciseProgress,
    HintLadder,
    defined_namespace,
    notebook_exercises,
    shown_in_full,
    summary,
    table,
)
from autograder.checking.notebook_display import show_table
from autograder.checking.pictures import pictures_of, show_svg
from autograder.checking.probing import grader_torch_state, own_slopes_later
from autograder.checking.results import judge_cases
from autograder.course.shared.plan import PlannedCheck, ProbeAddress, probe_checks, with_own_slopes
from autograder.i18n import language
from autograder.running.diagnosing import with_departures
from autograder.running.threads import single_threaded

__all__ = [
    "Messages", "NotebookRuntime", "RunnableCheck", "kernel_heap_settled", "probed_and_judged", "run_checks",
    "show_svg",
]

Messages = Mapping[str, Mapping[str, str]]

GRADE_UNAVAILABLE = {
    "en": "grade({exercise_id!r}, ...) is not available in the student kit: your instructor grades your notebook "
          "with the full kit. Use check(...) for feedback.",
    "zh": "学生版工具包中没有 grade({exercise_id!r}, ...)：老师会用完整版工具包为你的 notebook 评分。"
          "请用 check(...) 获得反馈。",
}


@dataclass(frozen=True)
class RunnableCheck:
    """One check as the runtime runs it: the check itself (id, exercise, points, hidden and its judge), its probe by
    address, its cases and, per case, what the reference says about it."""

    check: Any  # the full kit's Check or the student kit's StoredCheck: judge_cases reads the same fields of both
    probe: ProbeAddress
    cases: Callable[[], Sequence[dict[str, Any]]]  # called once for the probes and once for the judge
    expectations: Callable[[int, dict[str, Any], dict[str, Any]], Expectations]  # (index, record, case)
    graded_later: float = 0.0  # a preview: the points of the hidden check it previews (the progress line's)


class ExpectationSource(Protocol):
    """Where the runtime gets the course's exercises, words and checks, and what the reference says."""

    @property
    def grades(self) -> bool:
        """Whether `grade` can run: only a source with the hidden checks can."""

    @property
    def default_seed(self) -> int | None:
        """The seed the cases are drawn with when a cell names none (None: the source's cases are fixed)."""

    @property
    def messages(self) -> Messages: ...

    @property
    def misconceptions(self) -> Mapping[str, Misconception]: ...

    @property
    def exercises(self) -> Sequence[Exercise]:
        """Every exercise, in course order."""

    def exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id; a clear error for a typo in a notebook cell."""

    def checks(self, exercise_id: str, *, include_hidden: bool, seed: int | None) -> Sequence[RunnableCheck]:
        """The exercise's checks (public only unless include_hidden), their cases drawn with `seed`."""


def probed_and_judged(checks: Sequence[PlannedCheck], namespace: Mapping[str, Any],
                      judge: Callable[[Mapping[str, Sequence[dict[str, Any]]]], list[CheckResult]],
                      ) -> tuple[Mapping[str, Sequence[dict[str, Any]]], list[CheckResult]]:
    """The checks probed without the own slopes of their gradients and judged; then the checks that failed probed
    again with those slopes (autograder.course.shared.plan.with_own_slopes) and all judged again. A judge reads a
    slope only where a gradient is wrong, which fails its check, so a passing submission pays for none. The records
    the results were judged from, and the results. Shared by the notebook runtime and runner.run_exercise."""
    with single_threaded(), own_slopes_later():
        records: Mapping[str, Sequence[dict[str, Any]]] = probe_checks(checks, namespace)
    results = judge(records)
    failed = {result.id for result in results if result.status == FAILED}
    if not failed:
        return records, results
    with single_threaded():
        sloped = with_own_slopes(checks, namespace, records, failed)
    if sloped is None:
        return records, results
    return sloped, judge(sloped)


def run_checks(source: ExpectationSource, exercise_id: str, namespace: Mapping[str, Any], lang: str, *,
               include_hidden: bool, seed: int | None, diagnose: bool = False) -> list[CheckResult]:
    """One CheckResult per check of the exercise: the checks' probes on the student's objects, then their judges on
    the probe data and the source's expectations, in one thread and the grader's torch settings; then one diagnosis
    for the attempt (autograder.checking.attempt: a mistake proven on one check explains the others it reproduces);
    with `diagnose`, then where each failing check's computation departs from the notes' steps
    (autograder.running.diagnosing)."""
    with single_threaded():
        checks = source.checks(exercise_id, include_hidden=include_hidden, seed=seed)
        planned = tuple(PlannedCheck(run.check.id, run.probe, tuple(run.cases())) for run in checks)

        def judged(records: Mapping[str, Sequence[dict[str, Any]]]) -> list[CheckResult]:
            with grader_torch_state():  # judges compare in the grader's settings too, whatever a notebook cell set
                results = [dataclasses.replace(judge_cases(run.check, list(run.cases()), records.get(run.check.id),
                                                           run.expectations, lang, source.messages,
                                                           source.misconceptions),
                                               graded_later=run.graded_later) for run in checks]
            return one_diagnosis(results, lang, source.messages, source.misconceptions)

        records, results = probed_and_judged(planned, namespace, judged)
        if not diagnose:
            return results
        return with_departures(results, checks, records, namespace, lang, source.messages)


def kernel_heap_settled() -> None:
    """Put every object alive now out of the cyclic garbage collector's walks (gc.freeze), as a kernel's session
    starts (the import cell: torch and the kit already imported). Its first full collection would otherwise walk
    torch's ~170,000 objects, once, in whatever runs next: 0.04 to 0.3 s of a fresh kernel's first check (issue 59).
    Frozen objects are still freed when their last reference goes; only a cycle of them already unreachable now
    stays in memory, as the zygote's heap does (autograder.isolation.zygote)."""
    gc.freeze()


@dataclass
class NotebookRuntime:
    """`check`, `check_all` and `grade` for one kernel's session, with `source`'s expectations. The hint ladder
    remembers, for each exercise, the rung each cause of failure was last shown at."""

    source: ExpectationSource
    ladder: HintLadder = field(default_factory=HintLadder)

    def check(self, exercise_id: str, *objects: Any, hint: bool | int | None = None) -> None:
        """Run the public checks of one exercise and print what passed, what failed and why, one row per cause.

        A recognised mistake comes as a ladder of three rungs, one ladder per cause of failure (a new mistake
        starts at rung 1). Rung 1, its first failing run: the symptom and a question to answer. Rung 2, the next run
        that still fails with it or hint=True: the mistake and its concept. Rung 3, only on request (hint=True once
        more after rung 2, or hint=3): what to change, in words. hint=False keeps to rung 1; hint=1, 2 or 3 shows
        that rung. The table's last lines (», in the student's language) say how to see the next rung. A run where
        every check passes starts the exercise's ladders again.
        """
        lang = language()
        exercise = self.source.exercise(exercise_id)
        self.ladder.validate(hint)
        results = run_checks(self.source, exercise_id, exercise.namespace(objects), lang, include_hidden=False,
                             seed=self.source.default_seed, diagnose=True)
        steps = self.ladder.steps(exercise_id, results, hint)
        show_table(table(exercise, results, lang, hidden=False, messages=self.source.messages, steps=steps))
        self.ladder.remember(exercise_id, results, steps)
        for result in shown_in_full(results):  # a folded failure's picture would repeat its cause's
            for picture in pictures_of(result, self.source.messages, lang):
                show_svg(picture.svg, picture.alt)

    def check_all(self, notebook: str, namespace: Mapping[str, Any]) -> None:
        """Two lines per exercise of `notebook` (done, failing or not started; public checks passing and failing,
        points secured, graded later and on failing checks), then its totals. A notebook's last cell passes its own
        globals(): check_all("03_causal_attention", globals())."""
        lang = language()
        progress = []
        for exercise in notebook_exercises(notebook, self.source.exercises):
            defined = defined_namespace(exercise, namespace)
            results = run_checks(self.source, exercise.id, defined, lang, include_hidden=False,
                                 seed=self.source.default_seed)
            progress.append(ExerciseProgress(exercise, results, len(defined) == len(exercise.names)))
        print(summary(notebook, progress, lang, messages=self.source.messages))

    def grade(self, exercise_id: str, *objects: Any, seed: int | None = None) -> float | None:
        """Run every check of one exercise and return the score: nbgrader reads it as partial credit. The printed
        table comes from check messages only, which never hold hidden inputs or values. Without the hidden checks
        (the student kit), says so in the student's language and returns None."""
        lang = language()
        if not self.source.grades:
            print(GRADE_UNAVAILABLE[lang].format(exercise_id=exercise_id))
            return None
        exercise = self.source.exercise(exercise_id)
        seed = self.source.default_seed if seed is None else seed
        results = run_checks(self.source, exercise_id, exercise.namespace(objects), lang, include_hidden=True,
                             seed=seed)
        print(table(exercise, results, lang, hidden=True, messages=self.source.messages))
        return float(sum(result.score for result in results))
