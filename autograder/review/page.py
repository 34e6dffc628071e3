"""`attnkit similarity`'s outputs: OUT/similarity.csv and OUT/similarity.html (autograder.review.similarity decides).

similarity.csv: one row per flagged pair, highest score first; columns `student_a, student_b, score, code_overlap,
shared_wrong_outputs, shared_misconceptions, evidence` (numbers in [0, 1]; shared_wrong_outputs a count of hidden
cases; shared_misconceptions the ids, `;`-separated). Student text is made spreadsheet-safe.

similarity.html: one self-contained page; the pairs ranked, and for each of the first `shown` pairs the two
students' solution cells side by side with the passages they share (outside the base code) highlighted, and the
behavioural evidence in words. Every piece of student text is escaped. The page says, first, that this is
evidence for a human and never a verdict.
"""

import csv
import html
import io
from pathlib import Path

from autograder.course.exercises import exercise_title
from autograder.course.misconceptions import MISCONCEPTIONS_BY_ID
from autograder.outputs.records import spreadsheet_text, write_atomically
from autograder.safe_text import clean

CSV_NAME, HTML_NAME = "similarity.csv", "similarity.html"
COLUMNS = ("student_a", "student_b", "score", "code_overlap", "shared_wrong_outputs", "shared_misconceptions",
           "evidence")
MAX_SHOWN_CHARS = 200_000  # of one cell
SHOWN = 50  # pairs shown side by side in the page (all flagged pairs are in the table and the CSV)
DISCLAIMER_EN = ("This page is evidence for a human to read, never a verdict. Similar code and shared mistakes "
                 "can be innocent (the book, the notes, a study group the course allows); talk to the students "
                 "before concluding anything. Nothing here changes a grade.")
DISCLAIMER_ZH = ("本页只是供人工判断的证据，绝不是结论。相似的代码和相同的错误可能另有正当原因"
                 "（教材、讲义、课程允许的学习小组）；下结论之前请先与学生沟通。本页内容不会改变任何成绩。")


def evidence_text(pair, class_size):
    """The pair's evidence in words, e.g. "both produce the same wrong output on 3 hidden cases of
    MultiHeadAttention.forward; 2 of 240 students produce it"."""
    return "; ".join(evidence_parts(pair, class_size))


def evidence_parts(pair, class_size):
    """The pieces of `evidence_text`, one per piece of evidence."""
    parts = []
    if pair.code_overlap > 0:
        little = "" if pair.code_confidence >= 1 else \
            f", but little distinctive code to compare: counted at {pair.code_confidence:.0%}"
        parts.append(f"code: {pair.code_overlap:.0%} of the weighted fingerprints shared outside the base code "
                     f"({pair.passages} shared fingerprints{little})")
    for shared in pair.shared_outputs:
        cases = "1 hidden case" if shared.cases == 1 else f"{shared.cases} hidden cases"
        known = " (a known misconception's output)" if shared.explained else ""
        parts.append(f"both produce the same wrong output{known} on {cases} of {exercise_title(shared.exercise)}; "
                     f"{shared.students} of {class_size} students produce it")
    for shared in pair.shared_misconceptions:
        parts.append(f"same misconception \"{_misconception_name(shared.id)}\"; {shared.students} of {class_size} "
                     "students have it")
    return parts


def write_csv(out_dir, analysis):
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


def write_html(out_dir, analysis, students, shown=SHOWN, base_code=None):
    path = Path(out_dir) / HTML_NAME
    write_atomically(path, similarity_html(analysis, students, shown, base_code))
    return path


def similarity_html(analysis, students, shown=SHOWN, base_code=None):
    """The page; with `base_code` (autograder.review.inputs.BaseCode) every shared passage is highlighted,
    without it the shared winnowed fingerprints only."""
    escape = html.escape
    by_id = {student.id: student for student in students}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>attnkit similarity</title>',
        "<style>body{font-family:sans-serif;max-width:90em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;"
        "vertical-align:top}td.n{text-align:right}.notice{background:#fff8c5;border:1px solid #d4a72c;"
        "padding:.6em 1em}.cells{display:grid;grid-template-columns:1fr 1fr;gap:.6em}"
        "pre{background:#f6f8fa;padding:.5em;margin:0;white-space:pre-wrap;font-size:.85em;overflow-x:auto}"
        "mark{background:#ffd8a8}h3{margin-bottom:.2em}.label{font-size:.85em;color:#57606a;margin:.6em 0 .2em}"
        "section.pair{border-top:2px solid #d0d7de;margin-top:2em}</style></head><body>",
        "<h1>attnkit similarity</h1>",
        f"<p class=\"notice\" id=\"notice\"><strong>{escape(DISCLAIMER_EN)}</strong><br>"
        f"<span lang=\"zh\">{escape(DISCLAIMER_ZH)}</span></p>",
        f"<p>{analysis.students} students ({analysis.with_behaviour} with a grading record); "
        f"{analysis.candidates} pairs shared some rare evidence and were scored; "
        f"{len(analysis.pairs)} flagged.</p>",
        "<p>Highlighted in the code: passages the two students share outside the base code (the release's starter "
        "code, the reference and the --base files), compared with names and literals set aside.</p>",
    ]
    parts.extend(f"<p class=\"note\">{escape(clean(note))}</p>" for note in analysis.notes)
    if not analysis.pairs:
        parts.append("<p>No pair of students shares enough rare evidence to be flagged.</p>")
    else:
        parts.append("<table id=\"pairs\"><tr><th>#</th><th>Student A</th><th>Student B</th><th>Score</th>"
                     "<th>Code overlap</th><th>Same wrong outputs</th><th>Evidence</th></tr>")
        for rank, pair in enumerate(analysis.pairs, start=1):
            link = f"<a href=\"#pair-{rank}\">{rank}</a>" if rank <= shown else str(rank)
            parts.append(
                f"<tr class=\"pair\" data-a=\"{escape(pair.student_a)}\" data-b=\"{escape(pair.student_b)}\">"
                f"<td class=\"n\">{link}</td><td>{escape(pair.student_a)}</td><td>{escape(pair.student_b)}</td>"
                f"<td class=\"n\">{pair.score:.2f}</td><td class=\"n\">{pair.code_overlap:.0%}</td>"
                f"<td class=\"n\">{pair.shared_wrong_outputs}</td>"
                f"<td>{escape(evidence_text(pair, analysis.students))}</td></tr>")
        parts.append("</table>")
        if len(analysis.pairs) > shown:
            parts.append(f"<p>The first {shown} pairs are shown side by side below; similarity.csv lists all.</p>")
    for rank, pair in enumerate(analysis.pairs[:shown], start=1):
        parts.extend(_pair_section(rank, pair, by_id, analysis, base_code))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _pair_section(rank, pair, by_id, analysis, base_code):
    escape = html.escape
    shared = analysis.shared_hashes.get((pair.student_a, pair.student_b), set())
    first, second = by_id.get(pair.student_a), by_id.get(pair.student_b)
    parts = [f"<section class=\"pair\" id=\"pair-{rank}\">",
             f"<h2>#{rank}: {escape(pair.student_a)} and {escape(pair.student_b)} (score {pair.score:.2f})</h2>",
             "<ul>"]
    parts.extend(f"<li>{escape(item)}</li>" for item in evidence_parts(pair, analysis.students))
    parts.append("</ul>")
    if first is None or second is None:
        return [*parts, "</section>"]
    labels = list(dict.fromkeys([label for label, _ in first.cells] + [label for label, _ in second.cells]))
    if base_code is not None:
        marked_a, marked_b = _shared_passages(first, second, base_code), _shared_passages(second, first, base_code)
    else:
        marked_a, marked_b = _marked_cells(first, shared), _marked_cells(second, shared)
    quiet = 0
    for label in labels:
        if label not in marked_a and label not in marked_b:
            quiet += 1
            continue
        parts.append(f"<p class=\"label\">{escape(label)}</p><div class=\"cells\">")
        for student, marked in ((first, marked_a), (second, marked_b)):
            source = next((code for cell_label, code in student.cells if cell_label == label), None)
            body = _highlighted(source, marked.get(label, [])) if source is not None else "<em>(no such cell)</em>"
            parts.append(f"<pre title=\"{escape(student.id)}\">{body}</pre>")
        parts.append("</div>")
    if quiet:
        parts.append(f"<p class=\"label\">{quiet} more solution cells share no passage outside the base code.</p>")
    parts.append("</section>")
    return parts


def _marked_cells(student, shared):
    """{cell label: [(start, end)]} of the student's passages whose fingerprint the other student has too."""
    marked = {}
    for index, fingerprint in student.fingerprints:
        if fingerprint.hash in shared:
            marked.setdefault(student.cells[index][0], []).append((fingerprint.start, fingerprint.end))
    return marked


def _shared_passages(student, other, base_code):
    """{cell label: [(start, end)]}: the student's passages found in the other student's cell of the same name."""
    theirs = dict(other.cells)
    marked = {}
    for label, source in student.cells:
        if label in theirs:
            spans = base_code.shared_spans(source, theirs[label])
            if spans:
                marked[label] = spans
    return marked


def _highlighted(source, spans):
    """`source`, escaped, with the union of `spans` inside <mark>."""
    source = source[:MAX_SHOWN_CHARS]
    merged = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, position = [], 0
    for start, end in merged:
        out.append(_shown(source[position:start]))
        out.append(f"<mark>{_shown(source[start:end])}</mark>")
        position = end
    out.append(_shown(source[position:]))
    return "".join(out)


def _shown(text):
    """Student code as page text: control and bidi characters made visible (safe_text), then escaped."""
    return html.escape(clean(text, MAX_SHOWN_CHARS))


def _misconception_name(misconception_id):
    known = MISCONCEPTIONS_BY_ID.get(misconception_id)
    return known.name["en"] if known else misconception_id
