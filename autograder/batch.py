"""Grade a class: `grade_class(submitted_dir, out_dir, options, progress)` behind `attnkit grade`.

SUBMITTED_DIR has nbgrader's layout, `<student_id>/attention/<notebook>.ipynb`. Every student gets a
row, even with notebooks missing (0 points for those, and the reason). A student whose
`students/<id>.json` exists and whose submission hash (notebook bytes, seed, check catalogue) still
matches is not graded again, so a run that was interrupted picks up where it stopped.

With `shard=Shard(I, N)` only the students of that shard are graded (see autograder.shards: a stable hash of the
student id), and OUT_DIR's files cover them only. Every run writes OUT_DIR/grading.json (the manifest `attnkit
merge` reads: seed, check catalogue, shard, students) and OUT_DIR/class_report.html (autograder.class_report).
"""

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import autograder
import solutions
from autograder import catalog, class_report, exports, shards
from autograder.course import ASSIGNMENT
from autograder.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import MISSING, NotebookInput, Options, grade_notebooks, unanswered_result
from autograder.i18n import language


@dataclass
class ClassSummary:
    students: list[str]
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already graded, submission unchanged
    documents: list[dict] = field(default_factory=list)
    isolation_notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    grades_csv: Path | None = None
    class_report: Path | None = None
    shard: shards.Shard | None = None


@dataclass
class _Student:
    id: str
    folder: Path
    submission_hash: str
    paths: dict  # notebook -> Path of the submitted file (existing or not)
    results: dict = field(default_factory=dict)  # notebook -> NotebookResult


def grade_class(submitted_dir, out_dir, options=None, progress=None, shard=None):
    """Grade every student folder in `submitted_dir` (those of `shard` only, if given) into `out_dir`.

    Returns what was done; raises shards.ShardError when `out_dir` holds the outputs of another shard.
    """
    started = time.monotonic()
    submitted_dir, out_dir = Path(submitted_dir), Path(out_dir)
    if not submitted_dir.is_dir():
        raise FileNotFoundError(f"no such directory: {submitted_dir}")
    options = options or Options()
    options = Options(options.limits, options.seed, options.lang, (*options.blocked, submitted_dir, out_dir))
    lang = options.lang or language()
    fingerprint = _catalogue_fingerprint()
    folders = [folder for folder in _student_folders(submitted_dir) if shard is None or shard.contains(folder.name)]
    shards.claim(out_dir, ASSIGNMENT, options.seed, fingerprint, shard)
    students = [_student(folder, options.seed, fingerprint) for folder in folders]
    summary = ClassSummary([student.id for student in students], shard=shard)
    documents = {}
    to_grade = []
    for student in students:
        earlier = exports.read_student(out_dir, student.id)
        if earlier and earlier.get("submission_hash") == student.submission_hash:
            documents[student.id] = earlier
            summary.skipped.append(student.id)
        else:
            to_grade.append(student)
    if progress:
        progress.start(len(to_grade))

    by_id = {student.id: student for student in to_grade}

    def finished(result):
        student = by_id[result.key[0]]
        student.results[result.key[1]] = result
        if len(student.results) == len(NOTEBOOKS):
            document = exports.student_document(student.id, ASSIGNMENT, student.submission_hash, options.seed,
                                                [student.results[name] for name in NOTEBOOKS])
            exports.write_student(out_dir, document)
            documents[student.id] = document
            summary.graded.append(student.id)
            if progress:
                progress.advance(student.id)

    inputs = []
    for student in to_grade:
        for notebook in NOTEBOOKS:
            path = student.paths[notebook]
            if path.is_file():
                inputs.append(NotebookInput((student.id, notebook), path, notebook))
            else:
                finished(unanswered_result((student.id, notebook), notebook, path, MISSING,
                                           _missing_reason(student, notebook), lang))
    if inputs:
        grading = grade_notebooks(inputs, options, on_result=finished)
        summary.isolation_notes = grading.isolation_notes
    summary.documents = [documents[student.id] for student in students if student.id in documents]
    summary.grades_csv = exports.write_grades_csv(out_dir, summary.documents)
    summary.class_report = class_report.write_class_report(out_dir, summary.documents)
    shards.write_manifest(shards.Manifest(out_dir, ASSIGNMENT, options.seed, fingerprint, shard, True,
                                          {d["student_id"]: d["submission_hash"] for d in summary.documents}))
    summary.seconds = time.monotonic() - started
    return summary


def _student_folders(submitted_dir):
    return sorted((path for path in submitted_dir.iterdir() if path.is_dir() and not path.name.startswith(".")),
                  key=lambda path: path.name)


def _student(folder, seed, fingerprint):
    paths = {notebook: folder / ASSIGNMENT / f"{notebook}.ipynb" for notebook in NOTEBOOKS}
    digest = hashlib.sha256(f"{fingerprint}|seed={seed}".encode())
    for notebook, path in paths.items():
        digest.update(f"|{notebook}=".encode())
        digest.update(hashlib.sha256(path.read_bytes()).hexdigest().encode() if path.is_file() else b"missing")
    return _Student(folder.name, folder, digest.hexdigest(), paths)


def _catalogue_fingerprint():
    """Changes when any grading code or the reference changes: grades from older code are not reused.

    Every .py file of the autograder and solutions packages counts (compare, variants, runner and the
    messages decide scores too, not only the checks), read from disk rather than from what is imported.
    """
    digest = hashlib.sha256()
    for part in [f"{e.id}:{e.notebook}:{e.points}" for e in EXERCISES] + \
            [f"{c.id}:{c.exercise}:{c.points}:{c.hidden}" for c in catalog.CHECKS]:
        digest.update(part.encode() + b"\n")
    for package in (autograder, solutions):
        root = Path(package.__file__).resolve().parent
        for source in sorted(root.rglob("*.py")):
            digest.update(source.relative_to(root.parent).as_posix().encode() + source.read_bytes())
    return digest.hexdigest()


def _missing_reason(student, notebook):
    if not (student.folder / ASSIGNMENT).is_dir():
        return f"not submitted (no {ASSIGNMENT}/ folder)"
    return f"not submitted (no {ASSIGNMENT}/{notebook}.ipynb)"
