"""Grade notebooks: plan them, probe them in confined children, judge the data here. `grade_notebooks(...)`.

This process imports torch, the checks and the reference once; the children that run student code are forked
by autograder.isolation.zygote, which holds none of them. Judges run only here (`runner.judge_exercise`, the same
code and seed as `grade()` in a notebook, so honest submissions score what nbgrader gives them). A notebook is
judged when its child says it has probed everything: an exercise that failed asks that child to trace one failing
case, and its departure from the notes' steps is found here (autograder.grading.departures).
"""

import logging
import os
import re
import site
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import autograder
from autograder.checking.check_types import ERROR, FAILED, CheckResult
from autograder.course import catalog
from autograder.course.exercises import of_notebook
from autograder.course.shared.plan import with_own_slopes_taken
from autograder.grading.departures import trace_request, with_departure, with_departure_lost
from autograder.grading.wrong_outputs import with_wrong_outputs
from autograder.i18n import language, render
from autograder.isolation import sandbox, workspace
from autograder.isolation.child_task import ProbedAnswer, TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan, NotebookProblem, plan_notebook
from autograder.isolation.protected import protected_paths
from autograder.isolation.supervisor import ExerciseRecords, Job, Outcome, Untraced, probe_notebooks
from autograder.running.runner import DEFAULT_SEED, ClassExpectations, judge_exercise
from autograder.running.timing import StageTimes
from autograder.safe_text import clean, one_line

__all__ = [
    "GRADED", "GRADER_ERROR", "MAX_NOTES", "MISSING", "MODULES_LEFT_OUT", "NotebookInput", "NotebookResult", "Options",
    "UNREADABLE", "grade_notebooks", "tidy_notes", "unanswered_result", "with_causes_left_out",
]

logger = logging.getLogger(__name__)

GRADED, MISSING, UNREADABLE, GRADER_ERROR = "graded", "missing", "unreadable", "grader_error"


@dataclass(frozen=True)
class Options:
    limits: Limits = field(default_factory=Limits)
    seed: int = DEFAULT_SEED
    lang: str | None = None
    blocked: tuple[Path, ...] = ()  # more paths student code must not read: submissions, grades


@dataclass(frozen=True)
class NotebookInput:
    key: object  # the caller's handle (e.g. (student, notebook))
    path: Path
    notebook: str | None = None  # None: inferred from the file name or its graded cells
    notes: tuple[str, ...] = ()  # what the caller found out about the file (e.g. graded under another name)
    problems: tuple[str, ...] = ()  # what of that may change the grade, for the instructor (found by content)
    folder: Path | None = None  # the files the notebook's code may read; None: those beside it (nbgrader's path
    # grades its sanitized copy beside the files as handed in: autograder.integrations.nbgrader_lookahead)


@dataclass
class NotebookResult:
    key: object
    notebook: str
    path: str
    status: str  # graded, missing, unreadable, grader_error
    reason: str
    checks: list[CheckResult]
    notes: list[str] = field(default_factory=list)
    sha256: str = ""
    times: StageTimes = field(default_factory=StageTimes)  # where its grading time went (attnkit bench)
    cell_notes: dict[int, list[str]] = field(default_factory=dict)  # cell index -> the notes about that cell
    cell_outputs: dict[int, str] = field(default_factory=dict)  # cell index -> what it printed (capped)
    problems: list[str] = field(default_factory=list)  # what changed the grade, in grades.csv's problems column
    isolation_notes: list[str] = field(default_factory=list)  # protections its child's kernel lacked

    @property
    def score(self) -> float:
        return float(sum(check.score for check in self.checks))

    @property
    def max_score(self) -> float:
        return float(sum(check.max_score for check in self.checks))


@dataclass
class Grading:
    results: list[NotebookResult]
    isolation_notes: list[str]  # protections this kernel lacked (empty when fully confined)


def grade_notebooks(inputs: Iterable[NotebookInput], options: Options | None = None,
                    on_result: Callable[[NotebookResult], None] | None = None) -> Grading:
    """Grade each input; `on_result(result)` as each notebook is done. Results come back in input order."""
    options = options or Options()
    lang = options.lang or language()
    results: dict[int, NotebookResult] = {}
    jobs: list[Job] = []
    notes_of: dict[int, NotebookInput] = {}
    planning_seconds: dict[int, float] = {}  # the notebook read and planned: its intake, with the supervisor's part
    for position, item in enumerate(inputs):
        try:
            started = time.perf_counter()
            plan = plan_notebook(item.path, item.notebook)
            planning_seconds[position] = time.perf_counter() - started
            if _empty(plan):
                raise NotebookProblem(f"{clean(Path(item.path).name)} {EMPTY}")
        except Exception as problem:  # noqa: BLE001 - one file never stops the others
            if isinstance(problem, NotebookProblem):  # the student's file, said in the student's words
                status = MISSING if not Path(item.path).exists() else UNREADABLE
                reason = str(problem)
            else:  # planning never raises anything else for any file: a bug of the grader's, for this file only
                status, reason = GRADER_ERROR, f"grader error: {type(problem).__name__}: {one_line(problem, 300)}"
                logger.error("attnkit: internal error while reading %s: %s", clean(str(item.path)), reason)
            result = unanswered_result(item.key, item.notebook, item.path, status, reason, lang)
            _finish(result, item)
            results[position] = result
            if on_result:
                on_result(result)
            continue
        jobs.append(Job((position, item.key), plan, options.seed, item.folder))
        notes_of[position] = item

    isolation_notes: set[str] = set()
    expectations = ClassExpectations()  # what depends on a case alone, computed once for every notebook here
    early: dict[tuple[int, str], tuple[ExerciseRecords, list[CheckResult]]] = {}  # judged to answer "probed"

    def answer_probed(outcome: Outcome, exercises: tuple[str, ...]) -> ProbedAnswer:
        """The failed checks of each exercise (their own slopes read in a second look: the child's first probes
        read none) and the case of each to trace, from the exercises judged now."""
        position = cast(tuple[int, object], outcome.key)[0]
        requests: list[TraceRequest] = []
        failed: dict[str, tuple[str, ...]] = {}
        for exercise_id in exercises:
            records = outcome.records.get(exercise_id, {})
            try:
                results = judge_exercise(exercise_id, records, seed=options.seed, lang=lang, times=outcome.times,
                                         expectations=expectations)
                early[(position, exercise_id)] = (records, results)
                failed[exercise_id] = tuple(result.id for result in results if result.status == FAILED)
                with outcome.times.timing("judges"):
                    request = trace_request(exercise_id, results, records, options.seed)
            except Exception as error:  # noqa: BLE001 - judged again below, where a failure is this notebook's only
                logger.error("attnkit: internal error while judging %s to trace it: %s: %s",
                             clean(str(outcome.plan.path)), type(error).__name__, one_line(error, 300))
                continue
            if request is not None:
                requests.append(request)
        return ProbedAnswer({exercise_id: ids for exercise_id, ids in failed.items() if ids}, tuple(requests))

    def judged(outcome: Outcome) -> None:
        position, key = cast(tuple[int, object], outcome.key)  # as the Job above was given it
        isolation_notes.update(outcome.isolation_notes)
        outcome.times.add("intake", planning_seconds[position])
        judged_early = {exercise_id: early.pop((position, exercise_id)) for exercise_id in outcome.plan.exercises
                        if (position, exercise_id) in early}
        try:
            if outcome.grader_failure:  # logged where it was found (autograder.isolation.supervisor)
                raise _ChildSetUpFailed(outcome.grader_failure)
            result = _judge(key, outcome, options.seed, lang, judged_early, expectations)
        except _ChildSetUpFailed as failure:
            reason = f"grader error: {failure}"
            result = unanswered_result(key, outcome.plan.notebook, outcome.plan.path, GRADER_ERROR, reason, lang)
        except Exception as error:  # noqa: BLE001 - a judge that breaks on one notebook must not stop the rest
            reason = f"grader error: {type(error).__name__}: {one_line(error, 300)}"
            logger.error("attnkit: internal error while judging %s: %s", clean(str(outcome.plan.path)), reason)
            result = unanswered_result(key, outcome.plan.notebook, outcome.plan.path, GRADER_ERROR, reason, lang)
        _finish(result, notes_of[position])
        result.isolation_notes = sorted(outcome.isolation_notes)
        results[position] = result
        if on_result:
            on_result(result)

    if jobs:
        confinement = sandbox.prepare(
            options.limits.memory_mb,
            cpu_seconds=options.limits.attempt_cpu_seconds,
            blocked=_blocked_paths(options.blocked),
            readable=_readable_paths(),
        )
        probe_notebooks(jobs, options.limits, confinement, judged, answer_probed)
    return Grading([results[position] for position in sorted(results)], sorted(isolation_notes))


class _ChildSetUpFailed(Exception):
    """The grading child stopped before any of the notebook's code ran: the grader's failure, not the student's."""


def unanswered_result(key: object, notebook: str | None, path: str | os.PathLike[str], status: str, reason: str,
                      lang: str | None = None) -> NotebookResult:
    """A notebook that could not be run: every check of it at 0, each saying why."""
    lang = lang or language()
    checks: list[CheckResult] = []
    if notebook is not None:
        for exercise in of_notebook(notebook):
            for check in catalog.checks_of(exercise.id):
                title = render(catalog.MESSAGES, f"{check.id}.title", lang)
                checks.append(CheckResult(check.id, check.exercise, 0.0, float(check.points), ERROR, None,
                                          f"{title}: {reason}", check.hidden))
    return NotebookResult(key, notebook or "", str(path), status, reason, checks)


def _judge(key: object, outcome: Outcome, seed: int, lang: str,
           early: dict[str, tuple[ExerciseRecords, list[CheckResult]]],
           expectations: ClassExpectations) -> NotebookResult:
    """The notebook's result from its children's outcome; `early`: the exercises already judged to answer its child's
    "probed", kept where their records are still the ones judged (an exercise whose failed checks' own slopes came
    back is judged again with them taken in); `expectations`: what depends on a case alone, shared by the class."""
    plan, times = outcome.plan, outcome.times
    checks: list[CheckResult] = []
    for exercise_id in plan.exercises:
        records = outcome.records.get(exercise_id, {})
        own_slopes = outcome.own_slopes.get(exercise_id)
        if own_slopes:  # validated by the supervisor: bools at the places the probes write them
            records = with_own_slopes_taken(records, own_slopes)
        judged_records, results = early.get(exercise_id, (None, []))
        if judged_records is not records:
            results = judge_exercise(exercise_id, records, seed=seed, lang=lang, times=times,
                                     expectations=expectations)
        with times.timing("judges"):
            trace = outcome.traces.get(exercise_id)
            if trace is not None:
                request = TraceRequest(exercise_id, trace.check_id, trace.case)
                try:
                    results = with_departure(results, request, trace.tensors, records, seed)
                except Exception as error:  # noqa: BLE001 - a departure never costs a grade: none is known
                    logger.error("attnkit: internal error while finding where %s departs in %s: %s: %s",
                                 exercise_id, clean(str(plan.path)), type(error).__name__, one_line(error, 300))
                    results = with_departure_lost(results, trace.check_id, Untraced.GRADER)
            lost = outcome.untraced.get(exercise_id)
            if lost is not None:  # logged where it was lost (autograder.isolation.supervisor)
                results = with_departure_lost(results, lost.check_id, lost.why)
            elif trace is None and exercise_id not in outcome.answered and (
                    unasked := _unasked(exercise_id, results, records, seed)) is not None:
                logger.warning("attnkit: no departure traced for %s in %s: its grading process stopped before it "
                               "was asked for (the notebook was re-run without it)", exercise_id, clean(str(plan.path)))
                results = with_departure_lost(results, unasked.check_id, Untraced.NOT_ASKED)
            # for `attnkit similarity`
            checks.extend(with_wrong_outputs(exercise_id, results, records, seed, expectations))
    notes = [*plan.notes, *outcome.notes]
    explained = causes_left_out(notes)
    # The cells' own notes say the same (autograder.integrations.nbgrader_sandbox writes them into their cells).
    cell_notes = {index: [explained.get(note, note) for note in notes_of_cell]
                  for index, notes_of_cell in outcome.cell_notes.items()}
    problems = [MODULES_LEFT_OUT] if explained else []
    return NotebookResult(key, plan.notebook, str(plan.path), GRADED, "", checks,
                          [explained.get(note, note) for note in notes], plan.sha256, times, cell_notes=cell_notes,
                          cell_outputs=dict(outcome.cell_outputs), problems=problems)


def _unasked(exercise_id: str, results: Sequence[CheckResult], records: ExerciseRecords,
             seed: int) -> TraceRequest | None:
    """The case a child would have been asked to trace, for an exercise recorded by a child that stopped before it
    said "probed" (None: nothing failed, or nothing to trace); a judge that breaks here costs only the mark."""
    if all(result.status != FAILED for result in results):
        return None
    try:
        return trace_request(exercise_id, results, records, seed)
    except Exception:  # noqa: BLE001 - judged above already: only the mark is at stake
        return None


EMPTY = "has no code cells: an empty notebook, graded 0"
MODULES_LEFT_OUT = "files its code needed were left out of the copy for grading"
MAX_NOTES = 20  # per notebook: the rest are counted in the last one


def _empty(plan: NotebookPlan) -> bool:
    """No code at all: neither a cell to run nor a graded cell (no cells, or markdown only)."""
    return not any(step.kind == "cell" or step.index >= 0 for step in plan.steps)


def _finish(result: NotebookResult, item: NotebookInput) -> None:
    """The caller's notes first, then the notebook's, tidied; the caller's problems with the grading's."""
    result.notes = tidy_notes([*item.notes, *result.notes])
    result.problems = [*item.problems, *result.problems]


def tidy_notes(notes: Iterable[str]) -> list[str]:
    """`notes` an instructor can read, in linear time: each note once, in the order first seen, MAX_NOTES at most
    (the last one says how many more there were). Each cell keeps its own note, word for word: the nbgrader
    preprocessor matches them with the cells' notes."""
    tidy = list(dict.fromkeys(notes))  # a dict: membership in constant time, where a list scan made it quadratic
    if len(tidy) > MAX_NOTES:
        tidy[MAX_NOTES - 1:] = [f"and {len(tidy) - MAX_NOTES + 1:,} more notes like these"]
    return tidy


_CELL_ERROR = re.compile(r"^cell \d+: (ModuleNotFoundError|ImportError|NameError|FileNotFoundError): (.*)$")
_NO_MODULE = re.compile(r"No module named '([^'.]+)")


def with_causes_left_out(notes: Sequence[str]) -> list[str]:
    """`notes`, where a cell's NameError, ImportError or FileNotFoundError may come from a file the workspace left
    out (autograder.isolation.workspace's one note says what was): that cell's note says so."""
    explained = causes_left_out(notes)
    return [explained.get(note, note) for note in notes]


def causes_left_out(notes: Sequence[str]) -> dict[str, str]:
    """{note: the note saying what was left out that it may come from}, for the notes of with_causes_left_out."""
    left_out = next((note for note in notes if note.startswith(workspace.NOT_COPIED_NOTE)), "")
    if not left_out:
        return {}
    python = re.search(rf"\d {workspace.PYTHON}s? \(", left_out) is not None  # the group, not the rules after it
    explained: dict[str, str] = {}
    for note in notes:
        match = _CELL_ERROR.match(note)
        module = _NO_MODULE.search(match.group(2)) if match else None
        if module and (f"{module.group(1)}.py" in left_out or f"{module.group(1)}/" in left_out):
            explained[note] = f"{note} ({module.group(1)} is beside the notebook but was {LEFT_OUT})"
        elif match and (python or match.group(1) == "FileNotFoundError"):
            explained[note] = f"{note} (some files beside the notebook were {LEFT_OUT}: perhaps what this cell needs)"
    return explained


LEFT_OUT = "not copied for grading, see the note on what was left out"


def _blocked_paths(extra: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """What student code may not read: the protected paths (reference, checks, source, tests, git) and `extra`."""
    return (*protected_paths(), *map(Path, extra))


def _readable_paths() -> tuple[Path, ...]:
    """The interpreter, its libraries and site-packages, and the autograder package (minus what is blocked)."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
             Path(autograder.__file__).resolve().parent}
    paths.update(Path(value) for value in sysconfig.get_paths().values())
    paths.update(Path(value) for value in site.getsitepackages())
    repo, prefix = Path(autograder.__file__).resolve().parent.parent, Path(sys.prefix).resolve()
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        # The checkout itself ('' or pytest's test directory on sys.path) is never opened wholesale.
        inside_repo = path == repo or repo in path.parents or path in repo.parents
        if not inside_repo or path == prefix or prefix in path.parents:
            paths.add(path)
    return tuple(sorted(paths))

