"""The instructor's class report, OUT_DIR/class_report.html, written by `attnkit grade` and `attnkit merge`.

One self-contained page (plots inline as base64 SVG in img elements, every text escaped): the distribution of the
total and of each notebook's score (a histogram each), the misconceptions the judges recognised, most frequent
first, with how many students each affected (a bar plot, and a table with the English and Chinese names from
autograder.course.catalog), and every student's row: total, each notebook, named mistakes and a relative link to
their feedback page (autograder.outputs.report_students).
A student counts once per misconception, however many checks it failed. Beside the named mistakes, where the class
goes wrong: per exercise, students counted by the first of the notes' steps their run departs from (the
`departure_step` grading keeps in each record: autograder.grading.departures), named in English and Chinese.

Plots are SVG drawn by hand (autograder.outputs.report_plots); their text is English, as the page's headings are,
but for the misconceptions' names, which the bar plot gives in English and Chinese, as the table does.

Later commands link what they made of the grades from this report (`attnkit similarity`, `attnkit export`):
`add_link(grades_dir, label, target)` keeps the link in GRADES_DIR/report_links.json and writes the report again;
`_present_links(grades_dir)` is what the report shows, the recorded links whose target still exists.
In an nbgrader course (OUT_DIR inside the course folder, beside nbgrader_config.py) the report says where
`nbgrader generate_feedback` wrote its pages, as text: a link never leaves OUT_DIR.

The page says which record its totals are (`TotalsRecord`): `attnkit grade`'s own (students/<id>.json), which in an
nbgrader course is not the gradebook (no manual grade, extra credit or late penalty, only the students who handed
something in), or, written by `attnkit report COURSE` (autograder.integrations.gradebook_report), the gradebook's.
"""

import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from autograder.checking.pictures import svg_data_url
from autograder.course.assignment import ASSIGNMENT
from autograder.course.catalog import MESSAGES, MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID, NOTEBOOKS, exercise_title, of_notebook
from autograder.i18n import render as render_message
from autograder.outputs import records
from autograder.outputs.documents import StudentDocument
from autograder.outputs.report_plots import bars_svg, histogram_svg
from autograder.outputs.report_students import feedback_hrefs, student_rows
from autograder.templating import render

__all__ = [
    "DepartureCount", "FILE_NAME", "TotalsRecord", "add_link", "class_report_html", "departure_counts",
    "misconception_counts", "records_of_attnkit_grade", "write_class_report",
]

FILE_NAME = "class_report.html"
TEMPLATE = "class_report.html.j2"
LINKS_FILE = "report_links.json"
MAX_BARS = 20  # the bar plot shows the most frequent misconceptions; the table lists them all
GRADES_CSV = "grades.csv"  # beside the report (autograder.outputs.records.write_grades_csv)
NBGRADER_CONFIG = "nbgrader_config.py"
NBGRADER_GRADEBOOK = "gradebook.db"
ATTNKIT_GRADE_RECORDS = "Totals from attnkit grade's records (students/<id>.json, as grades.csv has them)."
NBGRADER_FEEDBACK = "feedback"  # nbgrader's feedback folder: COURSE/feedback/<student>/<assignment>/*.html


@dataclass(frozen=True)
class TotalsRecord:
    """Which record the report's totals come from, as the page says it, and what it says of single students."""

    says: str  # the page's line
    student_notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # by student id, the Notes column
    feedback_links: bool = True  # a column of links to attnkit's feedback pages (OUT_DIR/feedback/<id>.html)


def records_of_attnkit_grade(out_dir: str | os.PathLike[str]) -> TotalsRecord:
    """The record of a report written from `attnkit grade`'s (or `attnkit merge`'s) records in OUT_DIR."""
    if _nbgrader_course(out_dir) is None:
        return TotalsRecord(ATTNKIT_GRADE_RECORDS)
    return TotalsRecord(
        "Totals from attnkit grade's records, not the gradebook: formgrader's manual grades, extra credit and late "
        "penalties are not in them, and only the students who handed something in have a row. The gradebook's totals "
        "(what formgrader, the feedback, nbgrader export and attnkit export show), every student of the class a row: "
        "attnkit report COURSE_DIR.")


@dataclass(frozen=True)
class MisconceptionCount:
    id: str
    name_en: str
    name_zh: str
    students: int  # students with at least one check naming it
    exercises: tuple[str, ...]  # where it was seen


@dataclass(frozen=True)
class DepartureCount:
    """How many students' runs of one exercise first depart from the notes at one step."""

    exercise: str
    step: str  # the step's id (its names: the message `step.<id>`)
    name_en: str
    name_zh: str
    students: int


@dataclass(frozen=True)
class ScoreDistribution:
    name: str  # a notebook, or "total"
    max_score: float
    scores: tuple[float, ...]  # one per student
    not_graded: int  # students whose notebook was missing or unreadable


def misconception_counts(documents: Sequence[StudentDocument]) -> list[MisconceptionCount]:
    """Every misconception named in the students' records, by students affected (most first, then by id)."""
    students: dict[str, set[str]] = {}
    exercises: dict[str, set[str]] = {}
    for document in documents:
        for notebook in document.get("notebooks", ()):
            for check in notebook.get("checks", ()):
                misconception = check.get("misconception")
                if misconception:
                    students.setdefault(misconception, set()).add(document["student_id"])
                    exercises.setdefault(misconception, set()).add(check.get("exercise", ""))
    counts: list[MisconceptionCount] = []
    for misconception_id, affected in students.items():
        known = MISCONCEPTIONS_BY_ID.get(misconception_id)
        counts.append(MisconceptionCount(
            misconception_id,
            known.name["en"] if known else misconception_id,
            known.name["zh"] if known else "",
            len(affected),
            tuple(sorted(exercises[misconception_id] - {""}, key=_exercise_order)),
        ))
    return sorted(counts, key=lambda count: (-count.students, count.id))


def departure_counts(documents: Sequence[StudentDocument]) -> list[DepartureCount]:
    """Per exercise (course order), students by the first of the notes' steps their run departs from, most first;
    a student counts once per exercise (the first of its checks, in record order, that says where)."""
    students: dict[tuple[str, str], set[str]] = {}
    for document in documents:
        seen: set[str] = set()
        for notebook in document.get("notebooks", ()):
            for check in notebook.get("checks", ()):
                step, exercise = check.get("departure_step"), check.get("exercise", "")
                if not step and check.get("departure_lost"):  # asked for and lost: said, not left out (issue 58)
                    step = NOT_COMPUTED
                if isinstance(step, str) and step and isinstance(exercise, str) and exercise not in seen:
                    seen.add(exercise)
                    students.setdefault((exercise, step), set()).add(document["student_id"])
    counts = [DepartureCount(exercise, step, _step_name(step, "en"), _step_name(step, "zh"), len(affected))
              for (exercise, step), affected in students.items()]
    return sorted(counts, key=lambda count: (_exercise_order(count.exercise), -count.students, count.step))


# The row of the students whose departure grading asked for and did not compute (a record's `departure_lost`).
NOT_COMPUTED = "not_computed"
NOT_COMPUTED_NAMES = {"en": "not computed (its trace was lost: see the grader's log)",
                      "zh": "未计算（追踪丢失：见评分日志）"}


def _step_name(step: str, lang: str) -> str:
    """The notes' name of a step; an id the catalogue does not know (an older or edited record) as it is."""
    if step == NOT_COMPUTED:
        return NOT_COMPUTED_NAMES[lang]
    key = f"step.{step}"
    return render_message(MESSAGES, key, lang) if key in MESSAGES else (step if lang == "en" else "")


def _score_distributions(documents: Sequence[StudentDocument]) -> list[ScoreDistribution]:
    """The total's distribution, then each notebook's, in course order."""
    total_max = float(sum(exercise.points or 0 for exercise in EXERCISES))
    distributions = [ScoreDistribution("total", total_max,
                                       tuple(float(document["score"]) for document in documents), 0)]
    for name in NOTEBOOKS:
        scores: list[float] = []
        not_graded = 0
        for document in documents:
            by_name = {notebook["notebook"]: notebook for notebook in document.get("notebooks", ())}
            notebook = by_name.get(name)
            scores.append(float(notebook["score"]) if notebook else 0.0)
            not_graded += notebook is None or notebook.get("status") != "graded"
        max_score = float(sum(exercise.points or 0 for exercise in of_notebook(name)))
        distributions.append(ScoreDistribution(name, max_score, tuple(scores), not_graded))
    return distributions


def write_class_report(out_dir: str | os.PathLike[str], documents: Sequence[StudentDocument],
                       title: str = "attnkit class report", record: TotalsRecord | None = None,
                       course: str | os.PathLike[str] | None = None) -> Path:
    """OUT_DIR/class_report.html. `record`: where the totals come from (default: attnkit grade's records in
    OUT_DIR); `course`: the nbgrader course whose feedback pages the page names (default: OUT_DIR's parent, where
    it is one)."""
    path = Path(out_dir) / FILE_NAME
    grades_csv = GRADES_CSV if (Path(out_dir) / GRADES_CSV).is_file() else ""
    nbgrader_feedback = _nbgrader_feedback_folder(_nbgrader_course(out_dir) if course is None else Path(course))
    record = record or records_of_attnkit_grade(out_dir)
    records.write_atomically(path, class_report_html(
        documents, title, _present_links(out_dir),
        feedback_hrefs(out_dir, documents) if record.feedback_links else None, grades_csv,
        str(nbgrader_feedback / "<student>" / ASSIGNMENT) if nbgrader_feedback else "", record))
    return path


def _nbgrader_course(out_dir: str | os.PathLike[str]) -> Path | None:
    """OUT_DIR's parent when it is an nbgrader course folder (its nbgrader_config.py or gradebook), else None."""
    course = Path(out_dir).resolve().parent
    return course if any((course / name).is_file() for name in (NBGRADER_CONFIG, NBGRADER_GRADEBOOK)) else None


def _nbgrader_feedback_folder(course: Path | None) -> Path | None:
    """COURSE/feedback when `course` is an nbgrader course that has run generate_feedback, else None."""
    if course is not None and (course / NBGRADER_CONFIG).is_file() and (course / NBGRADER_FEEDBACK).is_dir():
        return course / NBGRADER_FEEDBACK
    return None


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class Column:
    short: str  # the notebook's number, as the student table's heading
    name: str


@dataclass(frozen=True)
class ScoreRow:
    """One row of the score table, as shown (numbers formatted)."""
    name: str
    mean: str
    median: str
    min: str
    max: str
    full_marks: int
    not_graded: str  # "" for the total


@dataclass(frozen=True)
class Histogram:
    alt: str
    src: Markup  # the grader's own SVG as a data URL
    caption: str


@dataclass(frozen=True)
class DepartureRow:
    exercise: str  # the exercise's title
    step: str
    name_en: str
    name_zh: str
    students: int
    share: str


@dataclass(frozen=True)
class MisconceptionRow:
    rank: int
    id: str
    name_en: str
    name_zh: str
    students: int
    share: str
    exercises: str


def class_report_html(documents: Sequence[StudentDocument], title: str = "attnkit class report",
                      links: Iterable[tuple[str, str]] = (), feedback: Mapping[str, str] | None = None,
                      grades_csv: str = "", nbgrader_feedback: str = "", record: TotalsRecord | None = None) -> str:
    """The page; `links`: [(label, href)] to outputs made from these grades (similarity, LMS exports);
    `feedback`: {student id: href} of the feedback pages there are (report_students.feedback_hrefs); `grades_csv`:
    the href of grades.csv, "" when there is none; `nbgrader_feedback`: where nbgrader's feedback pages are, or "";
    `record`: where the totals come from (default: attnkit grade's records, outside an nbgrader course)."""
    documents = list(documents)
    record = record or TotalsRecord(ATTNKIT_GRADE_RECORDS)
    rows = student_rows(documents, feedback or {}, record.student_notes)
    distributions = _score_distributions(documents)
    counts = misconception_counts(documents)
    assignments = sorted({str(document.get("assignment", "")) for document in documents} - {""})
    context = {
        "heading": f"{title}: {', '.join(assignments)}" if assignments else title,
        "students": len(documents),
        "summary": _summary(distributions[0]),
        "links": [Link(label, href) for label, href in links],
        "rows": [_score_row(distribution) for distribution in distributions] if documents else [],
        "histograms": [_histogram(distribution) for distribution in distributions] if documents else [],
        "misconceptions": [_misconception_row(rank, count, len(documents))
                           for rank, count in enumerate(counts, start=1)],
        "with_misconception": sum(1 for document in documents if _has_misconception(document)),
        "bar_plot": _data_url(_misconception_svg(counts)) if counts else "",
        "departures": [DepartureRow(exercise_title(count.exercise), count.step, count.name_en, count.name_zh,
                                    count.students, f"{100.0 * count.students / len(documents):.0f}%")
                       for count in departure_counts(documents)],
        "notebooks": [Column(name[:2], name) for name in NOTEBOOKS],
        "student_rows": rows,
        "grades_csv": grades_csv,
        "nbgrader_feedback": nbgrader_feedback,
        "record": record.says,
        "feedback_column": record.feedback_links,
        "notes_column": any(row.notes for row in rows),
    }
    return render(__package__, TEMPLATE, **context)


def _score_row(distribution: ScoreDistribution) -> ScoreRow:
    scores = distribution.scores
    return ScoreRow(distribution.name, f"{statistics.fmean(scores):.1f}", _number(statistics.median(scores)),
                    _number(min(scores)), f"{_number(max(scores))} / {_number(distribution.max_score)}",
                    sum(score >= distribution.max_score for score in scores),
                    str(distribution.not_graded) if distribution.name != "total" else "")


def _histogram(distribution: ScoreDistribution) -> Histogram:
    label = "Total" if distribution.name == "total" else distribution.name
    svg = histogram_svg(distribution.scores, distribution.max_score, label,
                        f"points (out of {_number(distribution.max_score)})")
    return Histogram(f"histogram of {label} scores", _data_url(svg), label)


def _misconception_row(rank: int, count: MisconceptionCount, students: int) -> MisconceptionRow:
    return MisconceptionRow(rank, count.id, count.name_en, count.name_zh, count.students,
                            f"{100.0 * count.students / students:.0f}%",
                            ", ".join(exercise_title(exercise) for exercise in count.exercises))


def _data_url(svg: str) -> Markup:
    """The grader's own picture as an img src (pictures.svg_data_url: nothing in it HTML would read as markup)."""
    return Markup(svg_data_url(svg))


def _misconception_svg(counts: Sequence[MisconceptionCount]) -> str:
    """A horizontal bar per misconception (the MAX_BARS most frequent, the most frequent on top), students affected;
    each named in English and Chinese, whole."""
    shown = list(counts[:MAX_BARS])
    return bars_svg([(count.name_en, count.name_zh) if count.name_zh else (count.name_en,) for count in shown],
                    [count.students for count in shown], "students affected",
                    "bar plot of misconceptions by students affected")


def _summary(total: ScoreDistribution) -> str:
    if not total.scores:
        return "nothing graded"
    return (f"total: mean {statistics.fmean(total.scores):.1f}, median {_number(statistics.median(total.scores))} "
            f"(out of {_number(total.max_score)})")


def _has_misconception(document: StudentDocument) -> bool:
    return any(check.get("misconception") for notebook in document.get("notebooks", ())
               for check in notebook.get("checks", ()))


def _exercise_order(exercise_id: str) -> tuple[int, str]:
    order = list(EXERCISES_BY_ID)
    return (order.index(exercise_id) if exercise_id in EXERCISES_BY_ID else len(order), exercise_id)


def _number(value: float) -> str:
    return records.format_number(value)


def _present_links(grades_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """[(label, href)] of the recorded links whose target exists, href relative to GRADES_DIR."""
    grades_dir = Path(grades_dir)
    links: list[tuple[str, str]] = []
    for label, target in _recorded(grades_dir).items():
        if Path(target).exists():
            links.append((label, Path(os.path.relpath(target, grades_dir.resolve())).as_posix()))
    return links


def add_link(grades_dir: str | os.PathLike[str], label: str, target: str | os.PathLike[str]) -> bool:
    """Record a link to `target` under `label` and write the class report again; False when there is no report."""
    grades_dir = Path(grades_dir)
    if not (grades_dir / FILE_NAME).exists():
        return False
    recorded = _recorded(grades_dir)
    recorded[label] = str(Path(target).resolve())
    records.write_atomically(grades_dir / LINKS_FILE, json.dumps(recorded, indent=2, ensure_ascii=False))
    documents = [document for path in sorted((grades_dir / "students").glob("*.json"))
                 if (document := records.read_student(grades_dir, path.stem)) is not None]
    write_class_report(grades_dir, documents)
    return True


def _recorded(grades_dir: str | os.PathLike[str]) -> dict[str, str]:
    try:
        recorded = json.loads((Path(grades_dir) / LINKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(label): str(target) for label, target in recorded.items()} if isinstance(recorded, dict) else {}
