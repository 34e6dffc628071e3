"""Grade ahead of `nbgrader autograde`: the submitted notebooks of a run, graded on every core while nbgrader works.

nbgrader hands `SandboxedExecute` one sanitized notebook at a time and spends about as long on its own bookkeeping
(sanitizing, the gradebook) as attnkit spends grading. At the run's first notebook, `look_ahead(...)` starts a
background thread that grades, in nbgrader's order and `Limits.workers` at a time, every submitted notebook the run
is about to autograde, each student's as soon as they are staged; attnkit restores given cells from the release as
nbgrader's OverwriteCells does.

Both modes grade a notebook beside the same folder, laid out by one function (`stage`) from what the student handed
in: their own files after nbgrader's ignore rules and attnkit's refusals of links, hard links and special files
(autograder.integrations.nbgrader_intake), the instructor's files over them, every notebook they handed in, as
handed in (`%run ./02_….ipynb`, `%run ./00_setup.ipynb` or `json.load(open("02_….ipynb"))` from notebook 01 reads
the student's own whether or not nbgrader has converted it yet, as `attnkit grade` reads it; their other notebooks
never reach `autograded/`, where nbgrader's generate_feedback would take each for a submitted one), and under each
notebook's name the file OwnFilesOnly grades as it (an edited `-Copy1` beside the untouched original). Grading on
the spot never grades beside `autograded/`, whose notebooks depend on how far nbgrader is (no 02 yet while 01 is
graded; nbgrader's graded 01, its given cells restored, while 02 is) and on earlier runs (`--notebook`): it stages
the submission afresh (`staged`).
A sanitized notebook then takes the result graded ahead only when it is the same grading input: the same notebook,
the same cells to run and exercises to check (its plan), and the same files beside it, notebooks included, by
content (`grading_digest` of both staged folders; a folder too large to digest never matches). Anything else (an
instructor's source that differs from attnkit's release, a file handed in again since it was staged) is graded on
the spot, so a result is never borrowed from a different input. The results live for one autograde call (kept on its
converter): formgrader's next click starts afresh. Grading always happens in the sandbox, through `grade_notebooks`,
one supervisor at a time (`GRADING_LOCK`), `CHUNK_PER_WORKER` notebooks a worker at a time so that the process can
exit soon after nbgrader stops.
"""

import contextlib
import hashlib
import itertools
import logging
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.notebooks import NotebookInput, NotebookResult, Options, grade_notebooks, tidy_notes
from autograder.integrations.nbgrader_intake import (
    assignment_notebooks,
    graded_files,
    handed_in,
    place_notebooks_beside,
    place_own_files,
    read_own_notebook,
)
from autograder.integrations.nbgrader_progress import Progress
from autograder.integrations.nbgrader_renamed import notebooks_to_convert
from autograder.isolation.notebook_plan import NotebookPlan, plan_notebook
from autograder.isolation.workspace import NOT_COPIED

__all__ = [
    "CHUNK_PER_WORKER", "GRADING_LOCK", "GradingInput", "LookAhead", "MAX_NEIGHBOURS", "Run", "grading_digest",
    "look_ahead", "stage", "staged",
]

logger = logging.getLogger(__name__)

# One grading at a time per process: formgrader runs autograde in its server's threads, and the zygote's channel and
# the children it hands over belong to one supervisor at a time.
GRADING_LOCK = threading.Lock()
# A staged folder with more entries or bytes than these is not compared: its notebooks are graded on the spot.
MAX_NEIGHBOURS = 2000
MAX_NEIGHBOUR_BYTES = 256 * 2**20
# Notebooks graded ahead in one grade_notebooks call, per worker (see LookAhead._grade): 16 on two cores.
CHUNK_PER_WORKER = 8
ATTRIBUTE = "_attnkit_look_ahead"  # where an autograde call's LookAhead is kept, on that call's converter


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
    ignore: tuple[str, ...] = ()  # CourseDirectory.ignore: what nbgrader's copy leaves out
    source: Path | None = None  # source/<assignment>: the instructor's files Autograde copies over the student's
    instructor_files: frozenset[str] = frozenset()  # their paths below `source`
    notebook_id: str = "*"  # CourseDirectory.notebook_id (`--notebook`, a glob): `notebooks` are those it matches


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
        # those under another name too, as the course converts; none where nbgrader's glob finds no file to convert
        names = notebooks_to_convert(folder, run.notebooks, run.notebook_id)
        graded = run.autograded / student / run.assignment
        if not run.force and names and all((graded / f"{name}.ipynb").is_file() for name in names):
            continue
        found.extend(Submitted(student, name, folder / f"{name}.ipynb") for name in names)
    return found


@dataclass(frozen=True)
class GradingInput:
    """What decides a grade, apart from the limits and seed: the plan's cells and exercises, and the files beside."""

    notebook: str
    steps: tuple
    exercises: tuple[str, ...]
    files: str | None  # grading_digest of the folder beside; None: not taken (too many files), never matches

    @classmethod
    def of(cls, plan: NotebookPlan, beside: Path) -> "GradingInput":
        """The input of grading `plan` beside the staged folder `beside` (see `stage`)."""
        return cls(plan.notebook, plan.steps, plan.exercises, grading_digest(beside))

    def matches(self, other: "GradingInput | None") -> bool:
        return other is not None and self.files is not None and other.files is not None and self == other


def grading_digest(folder: Path) -> str | None:
    """SHA-256 of everything in a staged folder that a grading child may read: the name and kind of every entry the
    sandbox's workspace looks at (autograder.isolation.workspace: not NOT_COPIED), notebooks included (the workspace
    copies those the code names, as in `%run ./02_….ipynb`, the graded one's own file too), and each regular file's
    content; no link followed. None past MAX_NEIGHBOURS entries or MAX_NEIGHBOUR_BYTES bytes."""
    digest, entries, total = hashlib.sha256(), 0, 0
    for directory, folders, files in os.walk(folder):  # links to folders are listed, never followed
        folders[:] = sorted(name for name in folders if name not in NOT_COPIED)
        below = Path(directory)
        for name in sorted([*folders, *files]):
            if name in NOT_COPIED:
                continue
            entries += 1
            if entries > MAX_NEIGHBOURS:
                return None
            path = below / name
            relative = path.relative_to(folder).as_posix().encode("utf-8", "surrogateescape")
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                return None
            kind = b"file" if stat.S_ISREG(mode) else b"folder" if stat.S_ISDIR(mode) else b"other"
            digest.update(b"%d:%s:%s:" % (len(relative), relative, kind))
            if kind == b"file":
                content = _content_digest(path)
                if content is None:
                    return None
                size, sha = content
                total += size
                if total > MAX_NEIGHBOUR_BYTES:
                    return None
                digest.update(sha)
    return digest.hexdigest()


def _content_digest(path: Path) -> tuple[int, bytes] | None:
    """(size, SHA-256) of the regular file at `path`, opened without following a link; None if it cannot be."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest, size = hashlib.sha256(), 0
        while block := os.read(fd, 2**20):
            size += len(block)
            if size > MAX_NEIGHBOUR_BYTES:
                return None
            digest.update(block)
        return size, digest.digest()
    except OSError:
        return None
    finally:
        os.close(fd)


def stage(run: Run, student: str, notebooks: list[str], into: Path) -> list[str]:
    """Lay out in `into` the folder that every notebook of `student` is graded beside, ahead and on the spot: their
    own files, after nbgrader's ignore rules and attnkit's refusals (autograder.integrations.nbgrader_intake), the
    instructor's files copied over them, every notebook they handed in, as handed in (their other notebooks too:
    `%run ./00_setup.ipynb` reads the student's own, in both modes; read without following a link; one changed since
    it was scanned is left out, as place_own_files leaves out a file), and under each of the run's notebooks' names
    the file OwnFilesOnly grades as it (the file `attnkit grade` grades: an edited `-Copy1` beside the untouched
    original, a copy found by content). The same for every call of one run, whichever `notebooks` it names, so that
    the folders staged ahead and on the spot digest alike. Returns those of `notebooks` staged (graded from a file of
    the student's)."""
    parts = (student, run.assignment)
    submission = handed_in(run.submitted, parts, run.ignore, assignment_notebooks(run.source))
    into.mkdir(mode=0o700)
    place_own_files(submission, run.submitted, parts, into)
    if run.source is not None:
        for relative in sorted(run.instructor_files):
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(run.source / relative, target)
    place_notebooks_beside(submission, run.submitted, parts, into)
    for name in submission.notebooks:
        with contextlib.suppress(OSError):
            (into / name).write_bytes(read_own_notebook(run.submitted, parts, name))
    graded = graded_files(run.submitted, parts, run.notebooks, submission)  # as OwnFilesOnly will choose each
    for notebook, chosen in graded.items():
        if chosen.data is not None:
            (into / f"{notebook}.ipynb").write_bytes(chosen.data)
    return [notebook for notebook in notebooks if notebook in graded and graded[notebook].data is not None]


@contextlib.contextmanager
def staged(run: Run, student: str) -> Iterator[Path]:
    """The folder a notebook of `student` is graded beside on the spot: laid out by `stage` now, as grading ahead
    laid it out, in a private temporary folder removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="attnkit-beside-"))
    try:
        stage(run, student, [], scratch / "beside")
        yield scratch / "beside"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class LookAhead:
    """The results graded ahead for one autograde call, filled by a background thread as they come."""

    def __init__(self, run: Run) -> None:
        self.run = run
        # How far nbgrader is through the run, counted by SandboxedExecute (autograder.integrations.nbgrader_progress).
        self.progress = Progress(len(about_to_autograde(run)))
        self._inputs: dict[tuple[str, str], GradingInput] = {}
        self._results: dict[tuple[str, str], NotebookResult] = {}
        self._plan_notes: dict[tuple[str, str], frozenset[str]] = {}
        self._ready = threading.Condition()
        self._planned = False
        self._finished = False
        self._thread = threading.Thread(target=self._work, name="attnkit-look-ahead")
        self._thread.start()

    def _work(self) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="attnkit-ahead-"))
        try:
            self._grade(self._planned_jobs(scratch), self.run.options)
        except Exception:  # noqa: BLE001 - every notebook is then graded on the spot: slower, never wrong
            logger.exception("attnkit: grading ahead stopped; the remaining notebooks are graded one by one")
        finally:
            with self._ready:
                self._planned = self._finished = True
                self._ready.notify_all()
            shutil.rmtree(scratch, ignore_errors=True)

    def _planned_jobs(self, scratch: Path) -> Iterator[NotebookInput]:
        """Stage and plan every notebook about to be autograded, student after student, each student and each notebook
        on its own: whatever one of them raises leaves that notebook to be graded on the spot, never the others. Each
        student's notebooks are yielded as soon as they are planned, so that grading starts before the whole class is
        staged; their inputs are kept (`result_for` waits for a notebook's own, or for the end of planning)."""
        by_student: dict[str, list[str]] = {}
        for item in about_to_autograde(self.run):
            by_student.setdefault(item.student, []).append(item.notebook)
        for index, (student, notebooks) in enumerate(by_student.items()):
            folder = scratch / str(index)
            try:
                staged = stage(self.run, student, notebooks, folder)
            except Exception:  # noqa: BLE001 - that student's notebooks are graded on the spot
                logger.warning("attnkit: %r's submission could not be staged for grading ahead", student, exc_info=True)
                continue
            jobs = []
            for notebook in staged:
                key = (student, notebook)
                try:
                    plan = plan_notebook(folder / f"{notebook}.ipynb", notebook)
                    grading_input = GradingInput.of(plan, folder)
                except Exception:  # noqa: BLE001 - NotebookProblem, or anything a malformed file raises
                    continue  # nbgrader's sanitizing will say what it thinks of it; graded on the spot if it gets here
                with self._ready:
                    self._inputs[key], self._plan_notes[key] = grading_input, frozenset(plan.notes)
                    self._ready.notify_all()
                jobs.append(NotebookInput(key, plan.path, notebook))
            yield from jobs
        with self._ready:
            self._planned = True
            self._ready.notify_all()

    def _grade(self, jobs: Iterator[NotebookInput], options: Options) -> None:
        # In chunks of CHUNK_PER_WORKER notebooks a worker, the lock taken for each: a notebook graded on the spot
        # waits for one chunk at most, and when the main thread is gone (nbgrader finished, stopped or was
        # interrupted) this thread stops after its chunk instead of grading the rest of the class before the process
        # may exit. Within a chunk the children are forked ahead and the case-only expectations computed once
        # (grade_notebooks): the larger the chunk, the fewer times the pipeline starts empty and drains.
        size = CHUNK_PER_WORKER * max(1, options.limits.workers)
        logger.info("attnkit: grading %d submitted notebooks ahead of nbgrader, %d at a time, in the sandbox",
                    self.progress.total, options.limits.workers)
        while threading.main_thread().is_alive():
            chunk = list(itertools.islice(jobs, size))
            if not chunk:
                break
            with GRADING_LOCK:
                grade_notebooks(chunk, options, on_result=self._store)

    def _store(self, result: NotebookResult) -> None:
        with self._ready:
            self._results[result.key] = result  # type: ignore[index]
            self._ready.notify_all()

    def result_for(self, student: str, plan: NotebookPlan, beside: Path) -> NotebookResult | None:
        """The result graded ahead for this sanitized notebook's plan, graded on the spot beside the staged folder
        `beside` (`staged`), waiting for it; None when it was not graded ahead or from another input (then the caller
        grades it)."""
        key = (student, plan.notebook)
        with self._ready:
            self._ready.wait_for(lambda: key in self._inputs or self._planned)
            planned = self._inputs.get(key)
        if not GradingInput.of(plan, beside).matches(planned):
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


def look_ahead(run: Run, call: object) -> LookAhead:
    """The LookAhead of one autograde call, kept on `call` (the converter nbgrader makes for each `nbgrader autograde`
    and for each click of formgrader's Autograde button): never shared by two calls, so a later click after a
    resubmission never takes a result graded from an earlier one."""
    current = getattr(call, ATTRIBUTE, None)
    if isinstance(current, LookAhead) and current.run == run:
        return current
    current = LookAhead(run)
    setattr(call, ATTRIBUTE, current)
    return current
