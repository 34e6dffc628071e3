"""Grades into an LMS gradebook import file: `export(...)` behind `attnkit export`.

The grades come as `ClassGrades`: from an `attnkit grade` output (`read_grade_output` here) or, in an nbgrader
course, from nbgrader's gradebook (autograder.integrations.nbgrader_gradebook), the record there.

Canvas (Grades > Import): the roster is Canvas's own gradebook export (Grades > Export). Its identity columns are
`Student, ID, SIS User ID, SIS Login ID, Section` (an `Integration ID` column is kept too when present), then one
column per assignment named `Name (assignment id)`, and a second row whose first cell is `Points Possible`. The file
written keeps the identity columns of every roster student, the `Points Possible` row, and the assignment's column
with the attnkit total (a column Canvas does not know, e.g. each `--per-exercise` column, becomes a new assignment
on import, worth what its `Points Possible` cell says).

Moodle (Grades > Import > CSV file): one column identifies the user (mapped at import to email address, username or
ID number), one column per grade item (mapped to the item). The roster is a Moodle grade export (Grades > Export >
Plain text file) or any CSV with the identifier column: `Email address`, `Username` or `ID number`.

Students are matched on their id (the folder name under submitted/) against one roster column: `match`,
or else the identity column that matches the most students. Nothing is dropped silently: a roster student
without a grading record gets 0 and a note; what the grades say of a student (a grader error, a late penalty)
is a note too; a graded student missing from the roster is listed; both go to
FILE.notes.csv and to `Export.notes`, and the command exits 1 when a graded student is not in the roster.
"""

import csv
import io
import json
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.checking.check_types import Exercise
from autograder.course.exercises import EXERCISES
from autograder.outputs.documents import StudentDocument
from autograder.outputs.records import format_number, spreadsheet_text, write_atomically
from autograder.safe_text import clean

__all__ = [
    "CANVAS_REQUIRED", "ClassGrades", "Export", "LmsError", "POINTS_POSSIBLE", "StudentGrade", "exercise_points",
    "export", "read_grade_output",
]

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_REQUIRED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_MATCHABLE = ("SIS Login ID", "SIS User ID", "ID", "Integration ID")  # preference order on a tie
POINTS_POSSIBLE = "Points Possible"
MOODLE_ID_COLUMNS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
MOODLE_MATCHABLE = ("Username", "Email address", "ID number")
DEFAULT_COLUMN = "Attention"
MAX_ROSTER_BYTES = 64 * 2**20


class LmsError(ValueError):
    """The roster or the grades cannot be used (missing columns, unreadable CSV): nothing was written."""


@dataclass(frozen=True)
class StudentGrade:
    """One graded student as the LMS file shows them."""

    score: float  # the total the LMS gets
    exercises: Mapping[str, float]  # points per exercise id, for --per-exercise
    notes: tuple[str, ...] = ()  # what FILE.notes.csv says of this student


@dataclass(frozen=True)
class ClassGrades:
    students: Mapping[str, StudentGrade]  # by student id
    max_score: float  # the Points Possible of the total


@dataclass
class Export:
    path: Path
    notes_path: Path
    rows: int  # roster students written
    matched_on: str
    column: str
    without_submission: list[str] = field(default_factory=list)  # roster students given 0
    not_in_roster: list[str] = field(default_factory=list)  # graded students the roster lacks
    notes: list[tuple[str, str]] = field(default_factory=list)  # (student, note) for FILE.notes.csv


def export(grades: ClassGrades, roster_path: str | os.PathLike[str], out_path: str | os.PathLike[str],
           *, lms: str, id_column: str | None = None, per_exercise: bool = False, column: str | None = None,
           match: str | None = None) -> Export:
    """Write the import file for `lms` ("canvas" or "moodle") and FILE.notes.csv beside it; return what was done."""
    header, rows = read_roster(roster_path)
    if lms == "canvas":
        return _canvas(grades, header, rows, Path(out_path), per_exercise, column, match)
    if lms == "moodle":
        return _moodle(grades, header, rows, Path(out_path), id_column, per_exercise, column, match)
    raise LmsError(f"unknown LMS {lms!r}")


def read_grade_output(grades_dir: str | os.PathLike[str]) -> ClassGrades:
    """The grades of an `attnkit grade` (or `attnkit merge`) output."""
    records = _read_records(grades_dir)
    students: dict[str, StudentGrade] = {}
    for student_id, record in records.items():
        notes = (f"graded with a grader error ({clean(record['grader_error'], 200)}): grade again before importing",) \
            if record.get("grader_error") else ()
        students[student_id] = StudentGrade(float(record.get("score", 0.0)), exercise_points(record), notes)
    scores = [float(record.get("max_score", 0.0)) for record in records.values() if record.get("max_score")]
    return ClassGrades(students, max(scores) if scores else float(sum(exercise.points or 0 for exercise in EXERCISES)))


def _read_records(grades_dir: str | os.PathLike[str]) -> dict[str, StudentDocument]:
    """{student id: record} from GRADES_DIR/students/*.json."""
    folder = Path(grades_dir) / "students"
    if not folder.is_dir():
        raise LmsError(f"{grades_dir}: no students/ folder (is it an `attnkit grade` or `attnkit merge` output?)")
    records: dict[str, StudentDocument] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            records[str(record["student_id"])] = record
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise LmsError(f"{path}: not a readable attnkit record ({type(error).__name__}); grade again") from None
    return records


def read_roster(path: str | os.PathLike[str]) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows as dicts) of a CSV roster; LmsError when it is not one."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_ROSTER_BYTES:
            raise LmsError(f"{path}: larger than {MAX_ROSTER_BYTES // 2**20} MB; is it the roster?")
        text = path.read_bytes().decode("utf-8-sig")  # LMS exports often start with a byte order mark
    except OSError as error:
        raise LmsError(f"{path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise LmsError(f"{path}: not UTF-8 text; export the roster again as CSV (UTF-8)") from None
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise LmsError(f"{path}: not a readable CSV file ({error})") from None
    table = [row for row in table if any(cell.strip() for cell in row)]
    if not table:
        raise LmsError(f"{path}: empty")
    header = [cell.strip() for cell in table[0]]
    if len(set(header)) != len(header):
        raise LmsError(f"{path}: the header repeats a column name")
    rows: list[dict[str, str]] = []
    for number, row in enumerate(table[1:], start=2):
        if len(row) > len(header):
            raise LmsError(f"{path}: line {number} has {len(row)} cells, the header {len(header)}")
        rows.append(dict(zip(header, [cell.strip() for cell in row] + [""] * (len(header) - len(row)), strict=True)))
    return header, rows


def exercise_points(record: StudentDocument) -> dict[str, float]:
    """{exercise id: points earned} from a record's checks."""
    points = {exercise.id: 0.0 for exercise in EXERCISES}
    for notebook in record.get("notebooks", ()):
        for check in notebook.get("checks", ()):
            if check.get("exercise") in points:
                points[check["exercise"]] += float(check.get("score", 0.0))
    return points


def _canvas(grades: ClassGrades, header: list[str], rows: list[dict[str, str]], out_path: Path,
            per_exercise: bool, column: str | None, match: str | None) -> Export:
    missing = [name for name in CANVAS_REQUIRED if name not in header]
    if missing:
        raise LmsError(f"the roster lacks Canvas's column(s) {', '.join(missing)}: use the CSV from Canvas's "
                       "Grades > Export (columns Student, ID, SIS User ID, SIS Login ID, Section)")
    points_rows = [row for row in rows if row["Student"].strip() == POINTS_POSSIBLE]
    # Every Canvas user has an ID; rows without one (Points Possible, an old export's "Muted" row) are no students.
    students = [row for row in rows if row["ID"].strip()]
    others = len(rows) - len(points_rows) - len(students)
    identity = [name for name in header if name in CANVAS_IDENTITY]
    column = column or _canvas_assignment_column(header, identity)
    matched_on = _match_column(grades.students, students, match, [name for name in CANVAS_MATCHABLE if name in header])
    extra = [(f"{column.split(' (')[0]}: {exercise.title['en']}", exercise) for exercise in EXERCISES] \
        if per_exercise else []
    result = Export(out_path, _notes_path(out_path), len(students), matched_on, column)
    if others:
        result.notes.append(("", f"{others} roster rows without an ID (not students) were left out"))
    table = [[*identity, column, *(name for name, _ in extra)]]
    first_cell = points_rows[0]["Student"] if points_rows else POINTS_POSSIBLE
    table.append([first_cell if name == "Student" else "" for name in identity]
                 + [format_number(grades.max_score), *(str(exercise.points) for _, exercise in extra)])
    for row in students:
        scores = _scores(grades, row[matched_on], result, extra)
        table.append([row[name] for name in identity] + scores)
    _not_in_roster(grades, students, matched_on, result)
    _write(out_path, table, result)
    return result


def _canvas_assignment_column(header: Sequence[str], identity: Collection[str]) -> str:
    """The roster's one assignment column, or the one named Attention...; a new "Attention" column when none."""
    assignments = [name for name in header if name not in identity and name.endswith(")") and " (" in name]
    if len(assignments) == 1:
        return assignments[0]
    named = [name for name in assignments if name.lower().startswith(DEFAULT_COLUMN.lower())]
    if len(named) == 1:
        return named[0]
    if not assignments:
        return DEFAULT_COLUMN
    raise LmsError(f"the roster has {len(assignments)} assignment columns ({', '.join(assignments[:5])}"
                   f"{', ...' if len(assignments) > 5 else ''}): say which with --column \"NAME (ID)\"")


def _moodle(grades: ClassGrades, header: list[str], rows: list[dict[str, str]], out_path: Path,
            id_column: str | None, per_exercise: bool, column: str | None, match: str | None) -> Export:
    if id_column not in MOODLE_ID_COLUMNS:
        raise LmsError(f"--id-column must be one of {', '.join(MOODLE_ID_COLUMNS)}")
    identifier = MOODLE_ID_COLUMNS[id_column]
    if identifier not in header:
        raise LmsError(f"the roster has no \"{identifier}\" column (for --id-column {id_column}); its columns: "
                       f"{', '.join(header[:12])}")
    students = [row for row in rows if row.get(identifier)]
    skipped = len(rows) - len(students)
    column = column or DEFAULT_COLUMN
    matched_on = _match_column(grades.students, students, match, [name for name in MOODLE_MATCHABLE if name in header])
    extra = [(f"{column}: {exercise.title['en']}", exercise) for exercise in EXERCISES] if per_exercise else []
    result = Export(out_path, _notes_path(out_path), len(students), matched_on, column)
    if skipped:
        result.notes.append(("", f"{skipped} roster rows have no {identifier} and were left out"))
    table = [[identifier, column, *(name for name, _ in extra)]]
    for row in students:
        table.append([row[identifier], *_scores(grades, row[matched_on], result, extra)])
    _not_in_roster(grades, students, matched_on, result)
    _write(out_path, table, result)
    return result


def _match_column(records: Mapping[str, StudentGrade], students: Sequence[dict[str, str]], match: str | None,
                  candidates: Sequence[str]) -> str:
    """The roster column whose values are the attnkit student ids: `match`, or the one matching most students."""
    if match is not None:
        if match not in candidates:
            raise LmsError(f"--match {match!r}: the roster has no such identity column (it has "
                           f"{', '.join(candidates) or 'none'})")
        return match
    if not candidates:
        raise LmsError("the roster has no column to match the students' ids against")
    counts = {name: sum(row.get(name, "") in records for row in students) for name in candidates}
    best = max(candidates, key=lambda name: counts[name])  # max keeps the first on a tie: the preferred one
    if records and not counts[best]:
        raise LmsError(f"no graded student id matches the roster's {', '.join(candidates)}: the ids are the folder "
                       "names under submitted/; say which column holds them with --match")
    return best


def _scores(grades: ClassGrades, student_id: str, result: Export, extra: Sequence[tuple[str, Exercise]]) -> list[str]:
    grade = grades.students.get(student_id)
    if grade is None:
        result.without_submission.append(student_id)
        result.notes.append((student_id, "in the roster, no graded submission: 0"))
        return ["0", *("0" for _ in extra)]
    result.notes.extend((student_id, note) for note in grade.notes)
    return [format_number(grade.score),
            *(format_number(grade.exercises.get(exercise.id, 0.0)) for _, exercise in extra)]


def _not_in_roster(grades: ClassGrades, students: Iterable[dict[str, str]], matched_on: str, result: Export) -> None:
    in_roster = {row[matched_on] for row in students}
    for student_id in sorted(set(grades.students) - in_roster):
        result.not_in_roster.append(student_id)
        result.notes.append((student_id, f"graded ({format_number(grades.students[student_id].score)} points) "
                                         f"but not in the roster's {matched_on} column: not exported"))


def _notes_path(out_path: Path) -> Path:
    return out_path.with_name(out_path.name + ".notes.csv")


def _write(out_path: Path, table: Iterable[Iterable[str]], result: Export) -> None:
    write_atomically(out_path, _csv_text([[spreadsheet_text(cell) for cell in row] for row in table]))
    notes = [["student", "note"], *([spreadsheet_text(s), spreadsheet_text(n)] for s, n in result.notes)]
    write_atomically(result.notes_path, _csv_text(notes))


def _csv_text(table: Iterable[Iterable[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(table)
    return buffer.getvalue()
