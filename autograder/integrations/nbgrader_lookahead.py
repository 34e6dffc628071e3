"""Grade ahead of `nbgrader autograde`: the submitted notebooks of a run, graded on every core while nbgrader works.

nbgrader hands `SandboxedExecute` one sanitized notebook at a time and spends about as long on its own bookkeeping
(sanitizing, the gradebook) as attnkit spends grading. At the run's first notebook, `look_ahead(...)` starts a
background thread that grades, in nbgrader's order and `Limits.workers` at a time, every submitted notebook the run
is about to autograde, straight from `submitted/` (attnkit restores given cells from the release as nbgrader's
OverwriteCells does). A sanitized notebook then takes the result graded ahead only when it is the same grading
input: the same notebook, the same cells to run and exercises to check (its plan), and the same other files beside
it. Anything else (an instructor's source that differs from attnkit's release, a file added by nbgrader) is graded
on the spot, so a result is never borrowed from different code. Grading always happens in the sandbox, through
`grade_notebooks`, one supervisor at a time (`GRADING_LOCK`), a few notebooks at a time so that the process can
exit soon after nbgrader stops.
"""

import functools
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.notebooks import NotebookInput, NotebookResult, Options, grade_notebooks, tidy_notes
from autograder.isolation.notebook_plan import NotebookPlan, NotebookProblem, plan_notebook

logger = logging.getLogger(__name__)

# One grading at a time per process: formgrader runs autograde in its server's threads, and the zygote's channel and
# the children it hands over belong to one supervisor at a time.
GRADING_LOCK = threading.Lock()
# A folder with more files than this beside its notebook is not compared: that notebook is graded on the spot.
MAX_NEIGHBOURS = 2000


@dataclass(frozen=True)
class Run:
    """One `nbgrader autograde` run, as its settings say: where, whom (a glob), whether --force, graded how."""

    submitted: Path  # the course's submitted/ folder
    autograded: Path
    assignment: str
    students: str  # CourseDirectory.student_id: "*" or one id
    force: bool
    notebooks: tuple[str, ...]  # the assignment's notebooks attnkit grades
    options: Options


@dataclass(frozen=True)
class Submitted:
    """One notebook the run is about to autograde: whose, which, and where it was handed in."""

    student: str
    notebook: str
    path: Path


def about_to_autograde(run: Run) -> list[Submitted]:
    """The submitted notebooks of the run's students, in nbgrader's order; without --force, a student whose autograded
    folder already holds every notebook they handed in is skipped, as nbgrader skips it."""
    found: list[Submitted] = []
    for folder in sorted(run.submitted.glob(f"{run.students}/{run.assignment}")):
        student = folder.parent.name
        handed_in = [name for name in run.notebooks if (folder / f"{name}.ipynb").is_file()]
        graded = run.autograded / student / run.assignment
        if not run.force and handed_in and all((graded / f"{name}.ipynb").is_file() for name in handed_in):
            continue
        found.extend(Submitted(student, name, folder / f"{name}.ipynb") for name in handed_in)
    return found


@dataclass(frozen=True)
class GradingInput:
    """What decides a grade, apart from the limits and seed: the plan's cells and exercises, and the files beside."""

    notebook: str
    steps: tuple
    exercises: tuple[str, ...]
    neighbours: tuple[tuple[str, int], ...] | None  # (relative path, size) of the other files; None: too many

    @classmethod
    def of(cls, plan: NotebookPlan) -> "GradingInput":
        return cls(plan.notebook, plan.steps, plan.exercises, neighbours(plan.path.parent))


def neighbours(folder: Path) -> tuple[tuple[str, int], ...] | None:
    """The regular files under `folder` other than notebooks, with their sizes; None past MAX_NEIGHBOURS entries."""
    found: list[tuple[str, int]] = []
    for directory, subdirectories, files in os.walk(folder):  # links to folders are not followed
        subdirectories[:] = [name for name in subdirectories if name != ".ipynb_checkpoints"]
        for name in files:
            if name.endswith(".ipynb"):
                continue
            path = Path(directory) / name
            if len(found) >= MAX_NEIGHBOURS:
                return None
            if path.is_file() and not path.is_symlink():
                found.append((str(path.relative_to(folder)), path.stat().st_size))
    return tuple(sorted(found))


class LookAhead:
    """The results graded ahead for one autograde run, filled by a background thread as they come."""

    def __init__(self, run: Run) -> None:
        self._inputs: dict[tuple[str, str], GradingInput] = {}
        self._results: dict[tuple[str, str], NotebookResult] = {}
        self._plan_notes: dict[tuple[str, str], frozenset[str]] = {}
        self._ready = threading.Condition()
        self._finished = False
        jobs = []
        for item in about_to_autograde(run):
            try:
                plan = plan_notebook(item.path, item.notebook)
            except NotebookProblem:
                continue  # nbgrader's sanitizing will say what it thinks of it; graded on the spot if it gets here
            key = (item.student, item.notebook)
            self._inputs[key], self._plan_notes[key] = GradingInput.of(plan), frozenset(plan.notes)
            jobs.append(NotebookInput(key, item.path, item.notebook))
        self._thread = threading.Thread(target=self._grade, args=(jobs, run.options), name="attnkit-look-ahead")
        self._thread.start()

    def _grade(self, jobs: list[NotebookInput], options: Options) -> None:
        # In chunks, the lock taken for each: a notebook graded on the spot waits for one chunk at most, and when the
        # main thread is gone (nbgrader finished, stopped or was interrupted) this thread stops after its chunk
        # instead of grading the rest of the class before the process may exit.
        chunk = 2 * max(1, options.limits.workers)
        logger.info("attnkit: grading %d submitted notebooks ahead of nbgrader, %d at a time, in the sandbox",
                    len(jobs), options.limits.workers)
        try:
            for start in range(0, len(jobs), chunk):
                if not threading.main_thread().is_alive():
                    break
                with GRADING_LOCK:
                    grade_notebooks(jobs[start:start + chunk], options, on_result=self._store)
        except Exception:  # noqa: BLE001 - every notebook is then graded on the spot: slower, never wrong
            logger.exception("attnkit: grading ahead stopped; the remaining notebooks are graded one by one")
        finally:
            with self._ready:
                self._finished = True
                self._ready.notify_all()

    def _store(self, result: NotebookResult) -> None:
        with self._ready:
            self._results[result.key] = result  # type: ignore[index]
            self._ready.notify_all()

    def result_for(self, student: str, plan: NotebookPlan) -> NotebookResult | None:
        """The result graded ahead for this sanitized notebook's plan, waiting for it; None when it was not graded
        ahead or from another input (then the caller grades it)."""
        key = (student, plan.notebook)
        if self._inputs.get(key) != GradingInput.of(plan):
            return None
        with self._ready:
            self._ready.wait_for(lambda: key in self._results or self._finished)
            stored = self._results.get(key)
        if stored is None:
            return None
        # The sanitized plan's notes (nbgrader restored the given cells) in place of those of the submitted file.
        reported = [note for note in stored.notes if note not in self._plan_notes[key]]
        stored.notes[:] = tidy_notes([*plan.notes, *reported])
        return stored


@functools.lru_cache(maxsize=1)  # one run at a time; a later run with other students or settings replaces it
def look_ahead(run: Run) -> LookAhead:
    """The run's LookAhead, started at its first notebook."""
    return LookAhead(run)
