"""Regrade some exercises of a class already graded: `attnkit grade SUBMITTED_DIR --out OUT_DIR --exercise ID`.

The notebooks holding those exercises are graded again for every student of OUT_DIR's earlier run; in each record
the checks of those exercises are replaced and every other check is kept as it was, then the notebook's and the
record's totals, the feedback pages, grades.csv, the class report and the manifest are rewritten. Each file is
written atomically, and the manifest says `complete: false` while they are, so an interrupted regrade is seen (and the
same command finishes it: merging again gives the same records).

Refused, before anything is written, when OUT_DIR holds no complete earlier run, when that run used another seed or
other points (autograder.course.course_settings), or when the class changed since: a student added or gone, a
notebook submitted again (its bytes differ from those graded), a record that is a grader error. Then grade the class
in full instead. A record keeps its earlier submission hash, so a later full run grades again whatever older code
graded.
"""

import contextlib
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from autograder.course import catalog
from autograder.course.assignment import ASSIGNMENT
from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS, exercise
from autograder.grading import shards
from autograder.grading.classroom import open_student
from autograder.grading.intake import student_folders
from autograder.grading.notebooks import GRADED, NotebookInput, NotebookResult, Options, grade_notebooks
from autograder.grading.progress import Progress
from autograder.i18n import language
from autograder.outputs import class_report, records
from autograder.outputs.documents import NotebookDocument, StudentDocument
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = ["RegradeSummary", "regrade_exercises"]

logger = logging.getLogger(__name__)
POINTS_TOLERANCE = 1e-9


@dataclass
class RegradeSummary:
    exercises: tuple[str, ...]
    notebooks: tuple[str, ...]
    students: list[str]
    documents: list[StudentDocument] = field(default_factory=list)
    changed: dict[str, tuple[float, float]] = field(default_factory=dict)  # student -> (total before, after)
    grades_csv: Path | None = None
    isolation_notes: list[str] = field(default_factory=list)


def regrade_exercises(submitted_dir: Path, out_dir: Path, exercise_ids: Sequence[str], options: Options,
                      progress: Progress | None = None) -> RegradeSummary:
    """Grade `exercise_ids` again for every student of OUT_DIR's earlier run; see the module docstring."""
    exercises = tuple(dict.fromkeys(_known(exercise_id) for exercise_id in exercise_ids))
    notebooks = tuple(name for name in NOTEBOOKS if any(EXERCISES_BY_ID[e].notebook == name for e in exercises))
    manifest = shards.read_manifest(out_dir)
    if manifest is None or not manifest.complete:
        raise Refused(f"{out_dir} holds no complete earlier run of `attnkit grade` to regrade: grade the class "
                      "first (without --exercise)")
    if manifest.seed != options.seed:
        raise Refused(f"{out_dir} was graded with --seed {manifest.seed}, not {options.seed}: regrade with the "
                      "same seed, or grade the class in full")
    earlier = _earlier_records(out_dir, sorted(manifest.students), options.seed)
    folders = {folder.name: folder for folder in student_folders(submitted_dir)
               if manifest.shard is None or manifest.shard.contains(folder.name)}
    if set(folders) != set(earlier):
        added, gone = sorted(set(folders) - set(earlier)), sorted(set(earlier) - set(folders))
        raise Refused(f"the class changed since {out_dir}'s run (new: {_names(added)}; gone: {_names(gone)}): "
                      "grade the class in full")
    summary = RegradeSummary(exercises, notebooks, sorted(earlier))
    results = _graded(submitted_dir, out_dir, [folders[name] for name in summary.students], notebooks, options,
                      progress, summary)
    merged = {student_id: _merged(earlier[student_id], results[student_id], exercises, notebooks)
              for student_id in summary.students}
    _write(out_dir, manifest, merged, options, summary)
    return summary


def _known(exercise_id: str) -> str:
    try:
        return exercise(exercise_id).id
    except KeyError as unknown:
        raise Refused(str(unknown.args[0])) from None


def _names(ids: Sequence[str]) -> str:
    return ", ".join(clean(name) for name in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "") \
        if ids else "none"


def _earlier_records(out_dir: Path, student_ids: Sequence[str], seed: int) -> dict[str, StudentDocument]:
    """Every student's earlier record, each checked against the current points and seed."""
    points = {check.id: float(check.points) for check in catalog.GRADED_CHECKS}
    found: dict[str, StudentDocument] = {}
    for student_id in student_ids:
        document = records.read_student(out_dir, student_id)
        if document is None or document.get("grader_error") or document.get("seed") != seed:
            raise Refused(f"{out_dir}: {clean(student_id)}'s record is missing, a grader error or of another seed: "
                          "grade the class in full")
        for notebook in document["notebooks"]:
            for check in notebook["checks"]:
                if check["id"] in points and abs(check["max_score"] - points[check["id"]]) > POINTS_TOLERANCE:
                    raise Refused(f"{out_dir} was graded with other points ({check['id']} was worth "
                                  f"{check['max_score']:g}, now {points[check['id']]:g}; course_settings.toml "
                                  "changed?): grade the class in full")
        found[student_id] = document
    return found


def _graded(submitted_dir: Path, out_dir: Path, folders: Sequence[Path], notebooks: Sequence[str], options: Options,
            progress: Progress | None, summary: RegradeSummary) -> dict[str, dict[str, NotebookDocument]]:
    """{student: {notebook: the notebook's new record}} for `notebooks`; a notebook the intake finds no file for
    keeps its earlier record (its absence was graded then)."""
    documents: dict[str, dict[str, NotebookDocument]] = {folder.name: {} for folder in folders}
    with tempfile.TemporaryDirectory(prefix="attnkit-zips-") as scratch, contextlib.ExitStack() as submissions:
        options = Options(options.limits, options.seed, options.lang,
                          (*options.blocked, submitted_dir, out_dir, Path(scratch)))
        inputs = []
        for folder in folders:
            student = open_student(folder, options.seed, "", Path(scratch), submissions)
            for notebook in notebooks:
                located = student.located[notebook]
                if located.path is not None:
                    inputs.append(NotebookInput((folder.name, notebook), located.path, notebook, located.notes))
        if progress:
            progress.start(len(inputs))

        def finished(result: NotebookResult) -> None:
            student_id, notebook = cast(tuple[str, str], result.key)
            document = records.student_document(student_id, ASSIGNMENT, "", options.seed, [result])
            documents[student_id][notebook] = document["notebooks"][0]
            if progress:
                progress.advance(f"{student_id} {notebook}")

        if inputs:
            summary.isolation_notes = grade_notebooks(inputs, options, on_result=finished).isolation_notes
    return documents


def _merged(earlier: StudentDocument, regraded: dict[str, NotebookDocument], exercises: Sequence[str],
            regraded_notebooks: Sequence[str]) -> StudentDocument:
    """The earlier record with the checks of `exercises` taken from `regraded`; refused for a notebook whose
    submitted bytes or status differ from what was graded then (one graded then and gone now included)."""
    notebooks: list[NotebookDocument] = []
    for notebook in earlier["notebooks"]:
        new = regraded.get(notebook["notebook"])
        if new is None:
            if notebook["notebook"] in regraded_notebooks and notebook["status"] == GRADED:
                raise Refused(f"{clean(earlier['student_id'])}'s {notebook['notebook']} was graded, and is gone "
                              "now: grade the class in full")
            notebooks.append(notebook)
            continue
        if new["sha256"] != notebook["sha256"] or new["status"] != notebook["status"]:
            raise Refused(f"{clean(earlier['student_id'])}'s {notebook['notebook']} changed since it was graded "
                          f"({notebook['status']}, now {new['status']}; or submitted again): grade the class in full")
        kept = {check["id"]: check for check in notebook["checks"]}
        # In the new run's (the catalogue's) order: the regraded exercises' checks new, the others as they were;
        # an earlier check the catalogue no longer has stays, at the end.
        checks = [check if check["exercise"] in exercises else kept.pop(check["id"])
                  for check in new["checks"] if check["exercise"] in exercises or check["id"] in kept]
        new_ids = {check["id"] for check in checks}
        checks += [check for check in kept.values()
                   if check["id"] not in new_ids and check["exercise"] not in exercises]
        merged = cast(NotebookDocument, {**notebook, "checks": checks})
        merged["score"] = sum(check["score"] for check in checks)
        merged["max_score"] = sum(check["max_score"] for check in checks)
        notebooks.append(merged)
    return cast(StudentDocument, {**earlier, "notebooks": notebooks,
                                  "score": sum(notebook["score"] for notebook in notebooks),
                                  "max_score": sum(notebook["max_score"] for notebook in notebooks)})


def _write(out_dir: Path, manifest: shards.Manifest, merged: dict[str, StudentDocument], options: Options,
           summary: RegradeSummary) -> None:
    """Records, then grades.csv and the class report, with the manifest incomplete in between."""
    lang = options.lang or language()
    with records.stop_when_disk_full(out_dir):
        shards.write_manifest(shards.Manifest(out_dir, manifest.assignment, manifest.seed, manifest.catalogue,
                                              manifest.shard, False, manifest.students))
        for student_id in summary.students:
            before = records.read_student(out_dir, student_id)
            records.write_student(out_dir, merged[student_id], lang)
            if before is not None and before["score"] != merged[student_id]["score"]:
                summary.changed[student_id] = (before["score"], merged[student_id]["score"])
        summary.documents = [merged[student_id] for student_id in summary.students]
        summary.grades_csv = records.write_grades_csv(out_dir, summary.documents)
        class_report.write_class_report(out_dir, summary.documents)
        shards.write_manifest(shards.Manifest(out_dir, manifest.assignment, manifest.seed, manifest.catalogue,
                                              manifest.shard, True, manifest.students))
