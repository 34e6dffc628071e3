"""`attnkit similarity SUBMITTED_DIR --out OUT [--base ...] [--grades GRADES_DIR]`: `run_similarity(...)`.

Reads the solution cells (autograder.review.inputs), grades the class first when no GRADES_DIR is given
(into OUT/grades, with `attnkit grade`'s progress bar; a later run can pass `--grades OUT/grades`), scores the
pairs (autograder.review.similarity) and writes similarity.csv and similarity.html (autograder.review.page), and
links the page from the grades' class_report.html (autograder.outputs.class_report).
"""

import importlib.util
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.progress import Progress
from autograder.outputs import class_report
from autograder.review import inputs, page, similarity

__all__ = ["SimilarityRun", "run_similarity"]


@dataclass
class SimilarityRun:
    analysis: similarity.Analysis
    csv: Path
    html: Path
    seconds: float
    grades_dir: Path | None


def run_similarity(submitted_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
                   base: Iterable[str | os.PathLike[str]] = (), grades_dir: Path | None = None,
                   grade: Callable[[Path, Path], object] | None = None, progress: Progress | None = None,
                   log: Callable[[str], object] | None = None, threshold: float | None = similarity.FLAG_THRESHOLD,
                   shown: int = page.SHOWN, workers: int = 1) -> SimilarityRun:
    """Analyse the class in `submitted_dir`; `grade(submitted_dir, grades_dir)` grades it when `grades_dir` is
    None (and is then given OUT/grades). `log(line)` reports each stage."""
    started = time.monotonic()
    log = log or (lambda line: None)
    submitted_dir, out_dir = Path(submitted_dir), Path(out_dir)
    threshold = similarity.FLAG_THRESHOLD if threshold is None else threshold
    if not 0.0 <= threshold <= 1.0:  # 0 lists every candidate pair (tests, benchmarks)
        raise inputs.InputError("--threshold must be in (0, 1]")
    if not submitted_dir.is_dir():
        raise inputs.InputError(f"no such directory: {submitted_dir}")
    if grades_dir is not None and not (Path(grades_dir) / "students").is_dir():
        raise inputs.InputError(f"--grades {grades_dir}: no students/ folder (is it an `attnkit grade` output?)")
    if out_dir.resolve() == submitted_dir.resolve() or submitted_dir.resolve() in out_dir.resolve().parents:
        raise inputs.InputError("--out must not be inside SUBMITTED_DIR")
    base_code = inputs.read_base(base)  # a bad --base is refused before any grading
    if grades_dir is None and grade is not None:
        grades_dir = out_dir / "grades"
        log(f"grading the class first (for behavioural evidence) into {grades_dir}")
        grade(submitted_dir, grades_dir)
    behaviours, notes = ({}, ["no grading record: code evidence only"]) if grades_dir is None \
        else inputs.read_behaviours(grades_dir)
    log("reading and fingerprinting the solution cells")
    students = inputs.read_class(submitted_dir, base_code, progress, workers)
    if progress:
        progress.finish()
    unreadable = [f"{student.id} {problem}" for student in students for problem in student.unreadable]
    if unreadable:
        notes.append(f"{len(unreadable)} notebooks handed in could not be read and were left out: "
                     f"{'; '.join(unreadable[:10])}{'; ...' if len(unreadable) > 10 else ''}")
    unread = [student.id for student in students if not student.cells]
    if unread:
        notes.append(f"{len(unread)} students have no readable solution cell (nothing submitted?): "
                     f"{', '.join(unread[:10])}{', ...' if len(unread) > 10 else ''}")
    missing = sorted({student.id for student in students} - set(behaviours)) if grades_dir is not None else []
    if missing:
        notes.append(f"{len(missing)} students have no grading record (code evidence only): "
                     f"{', '.join(missing[:10])}{', ...' if len(missing) > 10 else ''}")
    log(f"scoring pairs ({len(students)} students, {base_code.sources} base sources excluded)")
    analysis = similarity.analyse(students, {s.id: behaviours[s.id] for s in students if s.id in behaviours},
                                  threshold=threshold, near_duplicates=_near_duplicates(notes))
    analysis.notes.extend(notes)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = page.write_csv(out_dir, analysis)
    html_path = page.write_html(out_dir, analysis, students, shown, base_code)
    if grades_dir is not None:
        try:
            class_report.add_link(grades_dir, "Similarity evidence (attnkit similarity)", html_path)
        except OSError as error:  # the evidence is written; a read-only grades folder only loses the link
            analysis.notes.append(f"class_report.html not updated with the link: {error}")
    return SimilarityRun(analysis, csv_path, html_path, time.monotonic() - started, grades_dir)


def _near_duplicates(notes: list[str]) -> Callable[[Mapping[str, set[int]]], set[tuple[str, str]]] | None:
    """datasketch's MinHash LSH (the `course` extra), or None with a note saying what is missed without it."""
    if importlib.util.find_spec("datasketch") is None:
        notes.append("datasketch is not installed (pip install -c constraints.txt -e '.[course]'): copies of "
                     "typical code, which share no rare fingerprint, may be missed")
        return None
    return similarity.near_duplicate_pairs
