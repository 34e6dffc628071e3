"""`attnkit similarity SUBMITTED_DIR --out OUT [--base ...] [--grades GRADES_DIR]`: `run_similarity(...)`.

Reads the solution cells (autograder.similarity_inputs), grades the class first when no GRADES_DIR is given
(into OUT/grades, with `attnkit grade`'s progress bar; a later run can pass `--grades OUT/grades`), scores the
pairs (autograder.similarity) and writes similarity.csv and similarity.html (autograder.similarity_report), and
links the page from the grades' class_report.html (autograder.report_links).
"""

import time
from dataclasses import dataclass
from pathlib import Path

from autograder import report_links, similarity, similarity_inputs, similarity_report


@dataclass
class SimilarityRun:
    analysis: similarity.Analysis
    csv: Path
    html: Path
    seconds: float
    grades_dir: Path | None


def run_similarity(submitted_dir, out_dir, *, base=(), grades_dir=None, grade=None, progress=None, log=None,
                   threshold=similarity.FLAG_THRESHOLD, shown=similarity_report.SHOWN, workers=1):
    """Analyse the class in `submitted_dir`; `grade(submitted_dir, grades_dir)` grades it when `grades_dir` is
    None (and is then given OUT/grades). `log(line)` reports each stage."""
    started = time.monotonic()
    log = log or (lambda line: None)
    submitted_dir, out_dir = Path(submitted_dir), Path(out_dir)
    if not submitted_dir.is_dir():
        raise similarity_inputs.InputError(f"no such directory: {submitted_dir}")
    base_code = similarity_inputs.read_base(base)  # a bad --base is refused before any grading
    if grades_dir is None and grade is not None:
        grades_dir = out_dir / "grades"
        log(f"grading the class first (for behavioural evidence) into {grades_dir}")
        grade(submitted_dir, grades_dir)
    behaviours, notes = ({}, ["no grading record: code evidence only"]) if grades_dir is None \
        else similarity_inputs.read_behaviours(grades_dir)
    log("reading and fingerprinting the solution cells")
    students = similarity_inputs.read_class(submitted_dir, base_code, progress, workers)
    if progress:
        progress.finish()
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
    csv_path = similarity_report.write_csv(out_dir, analysis)
    html_path = similarity_report.write_html(out_dir, analysis, students, shown, base_code)
    if grades_dir is not None:
        try:
            report_links.add_link(grades_dir, "Similarity evidence (attnkit similarity)", html_path)
        except OSError as error:  # the evidence is written; a read-only grades folder only loses the link
            analysis.notes.append(f"class_report.html not updated with the link: {error}")
    return SimilarityRun(analysis, csv_path, html_path, time.monotonic() - started, grades_dir)


def _near_duplicates(notes):
    """datasketch's MinHash LSH (the `course` extra), or None with a note saying what is missed without it."""
    try:
        from autograder.near_duplicates import near_duplicate_pairs
    except ImportError:
        notes.append("datasketch is not installed (pip install -c constraints.txt -e '.[course]'): copies of "
                     "typical code, which share no rare fingerprint, may be missed")
        return None
    return near_duplicate_pairs
