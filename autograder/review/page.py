"""`attnkit similarity`'s outputs: OUT/similarity.csv and OUT/similarity.html (autograder.review.similarity decides).

similarity.csv: one row per flagged pair, highest score first; columns `student_a, student_b, score, code_overlap,
shared_wrong_outputs, shared_misconceptions, evidence` (numbers in [0, 1]; shared_wrong_outputs a count of hidden
cases; shared_misconceptions the ids, `;`-separated). Student text is made spreadsheet-safe.

similarity.html: one self-contained page; the pairs ranked, and for each of the first `shown` pairs the two
students' solution cells side by side with the passages they share (outside the base code) highlighted, and the
behavioural evidence in words (rendered from templates/similarity.html.j2, which escapes every piece of student
text). The page says, first, that this is evidence for a human and never a verdict.
"""

import csv
import io
import math
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import exercise_title
from autograder.outputs.records import spreadsheet_text, write_atomically
from autograder.review.similarity import Analysis, Pair, StudentCode
from autograder.safe_text import clean
from autograder.templating import render

if TYPE_CHECKING:
    from autograder.review.inputs import BaseCode

__all__ = ["COLUMNS", "DISCLAIMER_EN", "SHOWN", "evidence_text", "similarity_html", "write_csv", "write_html"]

CSV_NAME, HTML_NAME = "similarity.csv", "similarity.html"
TEMPLATE = "similarity.html.j2"
COLUMNS = ("student_a", "student_b", "score", "code_overlap", "shared_wrong_outputs", "shared_misconceptions",
           "evidence")
MAX_SHOWN_CHARS = 200_000  # of one cell
SHOWN = 50  # pairs shown side by side in the page (all flagged pairs are in the table and the CSV)
DISCLAIMER_EN = ("This page is evidence for a human to read, never a verdict. Similar code and shared mistakes "
                 "can be innocent (the book, the notes, a study group the course allows); talk to the students "
                 "before concluding anything. Nothing here changes a grade.")
DISCLAIMER_ZH = ("本页只是供人工判断的证据，绝不是结论。相似的代码和相同的错误可能另有正当原因"
                 "（教材、讲义、课程允许的学习小组）；下结论之前请先与学生沟通。本页内容不会改变任何成绩。")


def evidence_text(pair: Pair, class_size: int) -> str:
    """The pair's evidence in words, e.g. "both produce the same wrong output on 3 hidden cases of
    MultiHeadAttention.forward; 2 of 240 students produce it"."""
    return "; ".join(_evidence_parts(pair, class_size))


def _evidence_parts(pair: Pair, class_size: int) -> list[str]:
    """The pieces of `evidence_text`, one per piece of evidence."""
    parts: list[str] = []
    if pair.code_overlap > 0:
        little = "" if pair.code_confidence >= 1 else \
            f"; little rare code in common, so it counts at {pair.code_confidence:.0%}"
        pairs_in_class = class_size * (class_size - 1) // 2
        parts.append(f"code: {pair.passages} shared fingerprints outside the base code, worth {pair.code_evidence:g} "
                     f"by rarity ({pair.code_overlap:.0%} of the pair's weighted fingerprints){little}; more shared "
                     f"rare code than {_percent_below(pair.code_percentile)} of the {pairs_in_class:,} pairs in this "
                     "class")
    for shared in pair.shared_outputs:
        cases = "1 hidden case" if shared.cases == 1 else f"{shared.cases} hidden cases"
        known = " (a known misconception's output)" if shared.explained else ""
        parts.append(f"both produce the same wrong output{known} on {cases} of {exercise_title(shared.exercise)}; "
                     f"{shared.students} of {class_size} students produce it")
    for misconception in pair.shared_misconceptions:
        parts.append(f"same misconception \"{_misconception_name(misconception.id)}\"; {misconception.students} of "
                     f"{class_size} students have it")
    return parts


def _percent_below(share: float) -> str:
    """A share as a percentage rounded down (99.96 % reads 99.9 %: never more than the class shows)."""
    return f"{math.floor(share * 1000) / 10:.1f} %"


def write_csv(out_dir: str | os.PathLike[str], analysis: Analysis) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for pair in analysis.pairs:
        writer.writerow([spreadsheet_text(pair.student_a), spreadsheet_text(pair.student_b), f"{pair.score:.4f}",
                         f"{pair.code_overlap:.4f}", pair.shared_wrong_outputs,
                         ";".join(shared.id for shared in pair.shared_misconceptions),
                         spreadsheet_text(evidence_text(pair, analysis.students))])
    path = Path(out_dir) / CSV_NAME
    write_atomically(path, buffer.getvalue())
    return path


def write_html(out_dir: str | os.PathLike[str], analysis: Analysis, students: Iterable[StudentCode], shown: int = SHOWN,
               base_code: "BaseCode | None" = None) -> Path:
    path = Path(out_dir) / HTML_NAME
    write_atomically(path, similarity_html(analysis, students, shown, base_code))
    return path


@dataclass(frozen=True)
class PairRow:
    """One flagged pair's row of the table, as shown."""
    rank: int
    student_a: str
    student_b: str
    score: str
    code_overlap: str
    shared_wrong_outputs: int
    evidence: str


@dataclass(frozen=True)
class Segment:
    """A piece of a student's cell, control and bidi characters made visible; `marked`: shared with the other."""
    text: str
    marked: bool


@dataclass(frozen=True)
class CellSide:
    student: str
    segments: tuple[Segment, ...] | None  # None: the student has no cell of this name


@dataclass(frozen=True)
class SharedCell:
    label: str
    sides: tuple[CellSide, CellSide]


@dataclass(frozen=True)
class PairSection:
    """A pair shown side by side: the evidence, then each solution cell where they share a passage."""
    rank: int
    student_a: str
    student_b: str
    score: str
    evidence: tuple[str, ...]
    cells: tuple[SharedCell, ...]
    quiet: int  # solution cells with no shared passage, not shown


def similarity_html(analysis: Analysis, students: Iterable[StudentCode], shown: int = SHOWN,
                    base_code: "BaseCode | None" = None) -> str:
    """The page; with `base_code` (autograder.review.inputs.BaseCode) every shared passage is highlighted,
    without it the shared winnowed fingerprints only."""
    by_id = {student.id: student for student in students}
    rows = [PairRow(rank, pair.student_a, pair.student_b, f"{pair.score:.2f}", f"{pair.code_overlap:.0%}",
                    pair.shared_wrong_outputs, evidence_text(pair, analysis.students))
            for rank, pair in enumerate(analysis.pairs, start=1)]
    sections = [_pair_section(rank, pair, by_id, analysis, base_code)
                for rank, pair in enumerate(analysis.pairs[:shown], start=1)]
    return render(__package__, TEMPLATE, disclaimer_en=DISCLAIMER_EN, disclaimer_zh=DISCLAIMER_ZH,
                  students=analysis.students, with_behaviour=analysis.with_behaviour,
                  candidates=analysis.candidates, notes=[clean(note) for note in analysis.notes], rows=rows,
                  shown=shown, sections=sections)


def _pair_section(rank: int, pair: Pair, by_id: Mapping[str, StudentCode], analysis: Analysis,
                  base_code: "BaseCode | None") -> PairSection:
    shared = analysis.shared_hashes.get((pair.student_a, pair.student_b), set())
    first, second = by_id.get(pair.student_a), by_id.get(pair.student_b)
    evidence = tuple(_evidence_parts(pair, analysis.students))
    section = PairSection(rank, pair.student_a, pair.student_b, f"{pair.score:.2f}", evidence, (), 0)
    if first is None or second is None:
        return section
    labels = list(dict.fromkeys([label for label, _ in first.cells] + [label for label, _ in second.cells]))
    if base_code is not None:
        marked_a, marked_b = _shared_passages(first, second, base_code), _shared_passages(second, first, base_code)
    else:
        marked_a, marked_b = _marked_cells(first, shared), _marked_cells(second, shared)
    cells: list[SharedCell] = []
    quiet = 0
    for label in labels:
        if label not in marked_a and label not in marked_b:
            quiet += 1
            continue
        sides: list[CellSide] = []
        for student, marked in ((first, marked_a), (second, marked_b)):
            source = next((code for cell_label, code in student.cells if cell_label == label), None)
            segments = _highlighted(source, marked.get(label, [])) if source is not None else None
            sides.append(CellSide(student.id, segments))
        cells.append(SharedCell(label, (sides[0], sides[1])))
    return PairSection(rank, pair.student_a, pair.student_b, section.score, evidence, tuple(cells), quiet)


def _marked_cells(student: StudentCode, shared: Collection[int]) -> dict[str, list[tuple[int, int]]]:
    """{cell label: [(start, end)]} of the student's passages whose fingerprint the other student has too."""
    marked: dict[str, list[tuple[int, int]]] = {}
    for index, fingerprint in student.fingerprints:
        if fingerprint.hash in shared:
            marked.setdefault(student.cells[index][0], []).append((fingerprint.start, fingerprint.end))
    return marked


def _shared_passages(student: StudentCode, other: StudentCode,
                     base_code: "BaseCode") -> dict[str, list[tuple[int, int]]]:
    """{cell label: [(start, end)]}: the student's passages found in the other student's cell of the same name."""
    theirs = dict(other.cells)
    marked: dict[str, list[tuple[int, int]]] = {}
    for label, source in student.cells:
        if label in theirs:
            spans = base_code.shared_spans(source, theirs[label])
            if spans:
                marked[label] = spans
    return marked


def _highlighted(source: str, spans: Iterable[tuple[int, int]]) -> tuple[Segment, ...]:
    """`source` as segments, the union of `spans` marked."""
    source = source[:MAX_SHOWN_CHARS]
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    segments: list[Segment] = []
    position = 0
    for start, end in merged:
        segments.append(Segment(_shown(source[position:start]), False))
        segments.append(Segment(_shown(source[start:end]), True))
        position = end
    segments.append(Segment(_shown(source[position:]), False))
    return tuple(segments)


def _shown(text: str) -> str:
    """Student code as page text: control and bidi characters made visible (safe_text); the template escapes it."""
    return clean(text, MAX_SHOWN_CHARS)


def _misconception_name(misconception_id: str) -> str:
    known = MISCONCEPTIONS_BY_ID.get(misconception_id)
    return known.name["en"] if known else misconception_id
