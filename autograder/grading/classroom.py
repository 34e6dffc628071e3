"""Grade a class: `grade_class(submitted_dir, out_dir, options, progress)` behind `attnkit grade`.

SUBMITTED_DIR has nbgrader's layout, `<student_id>/attention/<notebook>.ipynb`; which file is which notebook
is autograder.grading.intake's decision (other layouts, zips, copies; links are never followed). Every student
gets a row, even with notebooks missing (0 points for those, and the reason). A student whose
`students/<id>.json` exists and whose submission hash (notebook bytes, seed, check catalogue) still
matches is not graded again, so a run that was interrupted picks up where it stopped.

With `shard=Shard(I, N)` only the students of that shard are graded (see autograder.grading.shards: a stable hash of the
student id), and OUT_DIR's files cover them only. Every run writes OUT_DIR/grading.json (the manifest `attnkit
merge` reads: seed, check catalogue, shard, students) and OUT_DIR/class_report.html (autograder.outputs.class_report).
"""

import contextlib
import functools
import hashlib
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, cast

import autograder
from autograder.course import catalog
from autograder.course.assignment import ASSIGNMENT
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import shards
from autograder.grading.intake import BY_CONTENT, Located, open_submission, student_folders
from autograder.grading.notebooks import (
    MISSING,
    NotebookInput,
    NotebookResult,
    Options,
    grade_notebooks,
    unanswered_result,
)
from autograder.grading.progress import Progress
from autograder.i18n import language
from autograder.isolation.notebook_plan import NotebookProblem, submitted_sha256
from autograder.isolation.protected import reference_locations
from autograder.outputs import class_report, records
from autograder.outputs.documents import StudentDocument
from autograder.running.timing import ClassTimes, StageTimes
from autograder.safe_text import clean, one_line

__all__ = ["ClassSummary", "grade_class", "open_student"]

logger = logging.getLogger(__name__)


@dataclass
class ClassSummary:
    students: list[str]
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already graded, submission unchanged
    documents: list[StudentDocument] = field(default_factory=list)
    isolation_notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    grades_csv: Path | None = None
    class_report: Path | None = None
    shard: shards.Shard | None = None
    grader_errors: dict[str, str] = field(default_factory=dict)  # student id -> "grader error: ..." (others graded)
    problems: list[str] = field(default_factory=list)  # class-wide outputs that could not be written
    times: ClassTimes = field(default_factory=ClassTimes)  # the run's phases (attnkit bench)
    notebook_times: StageTimes = field(default_factory=StageTimes)  # the stages of every notebook graded, summed


@dataclass
class _Student:
    id: str
    folder: Path
    submission_hash: str
    located: dict[str, Located]  # notebook -> intake.Located: the file to grade, or why there is none
    results: dict[str, NotebookResult] = field(default_factory=dict)  # by notebook
    intake_seconds: float = 0.0  # its folder opened and hashed: each notebook's intake takes a share


def grade_class(submitted_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], options: Options | None = None,
                progress: Progress | None = None, shard: shards.Shard | None = None) -> ClassSummary:
    """Grade every student folder in `submitted_dir` (those of `shard` only, if given) into `out_dir`.

    Returns what was done; raises shards.ShardError when `out_dir` holds the outputs of another shard, and
    records.OutputDiskFull when the disk holding `out_dir` is full: the students written so far are kept (a re-run
    skips them), the others get no file at all (never a "grader error" that is not theirs).
    """
    submitted_dir, out_dir = Path(submitted_dir), Path(out_dir)
    if not submitted_dir.is_dir():
        raise FileNotFoundError(f"no such directory: {submitted_dir}")
    # Notebooks extracted from students' zips live here until every one is graded.
    with tempfile.TemporaryDirectory(prefix="attnkit-zips-") as scratch, contextlib.ExitStack() as submissions:
        return _grade_class(submitted_dir, out_dir, options, progress, shard, Path(scratch), submissions)


def _grade_class(submitted_dir: Path, out_dir: Path, options: Options | None, progress: Progress | None,
                 shard: shards.Shard | None, scratch: Path, submissions: contextlib.ExitStack) -> ClassSummary:
    run_started = time.perf_counter()  # an elapsed time, compared with no deadline: perf_counter, as for every duration
    options = options or Options()
    options = Options(options.limits, options.seed, options.lang,
                      (*options.blocked, submitted_dir, out_dir, scratch))
    fingerprint = _catalogue_fingerprint()
    folders = [folder for folder in student_folders(submitted_dir) if shard is None or shard.contains(folder.name)]
    with records.stop_when_disk_full(out_dir):
        shards.claim(out_dir, ASSIGNMENT, options.seed, fingerprint, shard)
    run = _ClassRun(out_dir, options.seed, options.lang or language(), progress,
                    ClassSummary([folder.name for folder in folders], shard=shard))
    times = run.summary.times
    with times.timing("intake"):
        students = run.open_students(folders, fingerprint, scratch, submissions)
        run.start(students)
    with times.timing("notebooks"):
        inputs = run.notebook_inputs()  # the notebooks found; the missing ones are finished with their reason
        if inputs:
            logger.debug("attnkit grade: %d notebooks to run, %d workers", len(inputs), options.limits.workers)
            run.summary.isolation_notes = grade_notebooks(inputs, options, on_result=run.finished).isolation_notes
    run.summary.documents = [run.documents[folder.name] for folder in folders if folder.name in run.documents]
    with times.timing("class_outputs"):
        _write_class_outputs(run.summary, out_dir, options.seed, fingerprint)
    run.summary.seconds = time.perf_counter() - run_started
    return run.summary


@dataclass
class _ClassRun:
    """One run of `attnkit grade`: each student's document as it comes, and the summary it fills in."""

    out_dir: Path
    seed: int
    lang: str
    progress: Progress | None
    summary: ClassSummary
    documents: dict[str, StudentDocument] = field(default_factory=dict)  # by student id
    to_grade: dict[str, _Student] = field(default_factory=dict)  # the students graded this run, by id

    def open_students(self, folders: list[Path], fingerprint: str, scratch: Path,
                      submissions: contextlib.ExitStack) -> list[_Student]:
        """Each folder opened by the intake; one that cannot be is recorded as that student's grader error."""
        students: list[_Student] = []
        for folder in folders:
            started = time.perf_counter()
            try:
                students.append(open_student(folder, self.seed, fingerprint, scratch, submissions))
            except Exception as error:  # noqa: BLE001 - an unreadable folder is that student's problem alone
                self.record(folder.name, _raiser(error))
            else:
                students[-1].intake_seconds = time.perf_counter() - started
        return students

    def start(self, students: list[_Student]) -> None:
        """Keep the record of each student whose submission is unchanged since the last run; grade the others."""
        for student in students:
            earlier = records.read_student(self.out_dir, student.id)
            if earlier and earlier.get("submission_hash") == student.submission_hash:
                self.documents[student.id] = earlier
                self.summary.skipped.append(student.id)
                logger.debug("attnkit grade: %s: unchanged since the last run, its record kept", clean(student.id))
            else:
                self.to_grade[student.id] = student
        logger.debug("attnkit grade: %d students to grade, %d unchanged", len(self.to_grade),
                     len(self.summary.skipped))
        if self.progress:
            self.progress.start(len(self.to_grade))

    def notebook_inputs(self) -> list[NotebookInput]:
        """The notebooks to grade, in student order; a notebook not found is finished now, at 0 with its reason."""
        inputs: list[NotebookInput] = []
        for student in self.to_grade.values():
            for notebook in NOTEBOOKS:
                located = student.located[notebook]
                if located.path is not None:
                    found = (f"graded {located.shown} ({BY_CONTENT})",) if located.by_content else ()
                    inputs.append(NotebookInput((student.id, notebook), located.path, notebook, located.notes, found))
                else:
                    expected_path = student.folder / ASSIGNMENT / f"{notebook}.ipynb"
                    self.finished(unanswered_result((student.id, notebook), notebook, expected_path, MISSING,
                                                    located.reason, self.lang))
        return inputs

    def finished(self, result: NotebookResult) -> None:
        """One notebook graded; with the student's last one, the student's record is written."""
        key = cast(tuple[str, str], result.key)  # (student id, notebook), as notebook_inputs gave it
        student = self.to_grade[key[0]]
        student.results[key[1]] = result
        if len(student.results) == len(NOTEBOOKS):
            self._record_graded(student, [student.results[name] for name in NOTEBOOKS])

    def record(self, student_id: str, build: Callable[[], StudentDocument], times: StageTimes | None = None) -> None:
        self.documents[student_id] = _record_student(self.out_dir, student_id, build, self.seed, self.summary,
                                                     self.lang, times)

    def _record_graded(self, student: _Student, results: list[NotebookResult]) -> None:
        writing = StageTimes(intake=student.intake_seconds)
        self.record(student.id, functools.partial(records.student_document, student.id, ASSIGNMENT,
                                                  student.submission_hash, self.seed, results), writing)
        for notebook_result in results:  # one folder and one record per student: each notebook takes its share
            for stage in ("intake", "pages", "records"):
                notebook_result.times.add(stage, getattr(writing, stage) / len(results))
            self.summary.notebook_times += notebook_result.times
        self.summary.graded.append(student.id)
        logger.debug("attnkit grade: %s: graded, %s", clean(student.id),
                     ", ".join(f"{result.notebook} {result.score:g}/{result.max_score:g}" for result in results))
        if self.progress:
            self.progress.advance(student.id)


def _write_class_outputs(summary: ClassSummary, out_dir: Path, seed: int, fingerprint: str) -> None:
    """grades.csv, class_report.html (a broken report is a problem said, the grades kept) and the manifest."""
    with records.stop_when_disk_full(out_dir):
        summary.grades_csv = records.write_grades_csv(out_dir, summary.documents)
    try:
        with records.stop_when_disk_full(out_dir):
            summary.class_report = class_report.write_class_report(out_dir, summary.documents)
    except records.OutputDiskFull:
        raise
    except Exception as error:  # noqa: BLE001 - the grades are written; a broken report must not hide them
        summary.problems.append(f"class_report.html not written: {type(error).__name__}: {one_line(error, 300)}")
    with records.stop_when_disk_full(out_dir):
        shards.write_manifest(shards.Manifest(out_dir, ASSIGNMENT, seed, fingerprint, summary.shard, True,
                                              {d["student_id"]: d["submission_hash"] for d in summary.documents}))


def _record_student(out_dir: Path, student_id: str, build: Callable[[], StudentDocument], seed: int,
                    summary: ClassSummary, lang: str, times: StageTimes | None = None) -> StudentDocument:
    """The student's document, built by `build()` and written; when either fails, a grader-error record instead.

    One student's failure (odd text, a bug) must never cost the other students their grades: the record says
    "grader error: ..." (grades.csv shows it), holds what was graded, and has no submission hash, so the next run
    grades that student again. A full disk is nobody's fault: records.OutputDiskFull stops the run, this student
    written nowhere (each file is atomic: none is left half-written).
    """
    document = None
    times = times or StageTimes()
    try:
        with times.timing("records"):
            document = build()
        with records.stop_when_disk_full(out_dir):
            records.write_student(out_dir, document, lang, times)
        return document
    except records.OutputDiskFull:
        raise
    except Exception as error:  # noqa: BLE001 - contained: this student is marked, every other one goes on
        problem = f"grader error: {type(error).__name__}: {one_line(error, 300)}"
        summary.grader_errors[clean(student_id)] = problem
        failed = records.grader_error_document(student_id, ASSIGNMENT, seed, problem, document)
        with contextlib.suppress(Exception):  # the JSON record alone, best effort: grades.csv has the row anyway
            records.write_record(out_dir, failed)
        return failed


def _raiser(error: Exception) -> Callable[[], NoReturn]:
    def build() -> NoReturn:
        raise error
    return build


def open_student(folder: Path, seed: int, fingerprint: str, scratch: Path,
                 submissions: contextlib.ExitStack) -> _Student:
    """The student's folder opened by the intake (which file is which notebook) and its submission hash."""
    submission = submissions.enter_context(open_submission(folder, scratch_parent=scratch))
    digest = hashlib.sha256(f"{fingerprint}|seed={seed}".encode())
    for notebook, found in submission.located.items():
        digest.update(f"|{notebook}=".encode())
        if found.path is None:
            digest.update(found.reason.encode())  # the files listed in the reason are part of what was seen
            continue
        try:  # capped and never through a link, like grading's own read
            content = submitted_sha256(found.path)
        except NotebookProblem as problem:
            content = str(problem)
        # the name and the notes too: they decide what the record says about which file was graded
        digest.update("|".join((found.shown, *found.notes, content)).encode())
    return _Student(folder.name, folder, digest.hexdigest(), submission.located)


def _catalogue_fingerprint() -> str:
    """Changes when any grading code or the reference changes: grades from older code are not reused.

    Every .py file of the autograder package and of the reference counts (compare, variants, runner and the
    messages decide scores too, not only the checks), read from disk rather than from what is imported.
    """
    digest = hashlib.sha256()
    for part in [f"{e.id}:{e.notebook}:{e.points}" for e in EXERCISES] + \
            [f"{c.id}:{c.exercise}:{c.points}:{c.hidden}" for c in catalog.CHECKS]:
        digest.update(part.encode() + b"\n")
    for root in (Path(autograder.__file__).resolve().parent, *reference_locations()):
        for source in sorted(root.rglob("*.py")):
            digest.update(source.relative_to(root.parent).as_posix().encode() + source.read_bytes())
    return digest.hexdigest()

