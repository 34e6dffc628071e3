"""Grades into an LMS gradebook import file: `export(...)` behind `attnkit export`.

The grades come as `ClassGrades`: from an `attnkit grade` output (`read_grade_output` here) or, in an nbgrader
course, from nbgrader's gradebook (autograder.integrations.nbgrader_gradebook), the record there, which also lists
every student of the class with the email the roster gave them (nbgrader's Student.email).

Canvas (Grades > Import): the roster is Canvas's own gradebook export (Grades > Export). Its identity columns are
`Student, ID, SIS User ID, SIS Login ID, Section` (an `Integration ID` column is kept too when present), then one
column per assignment named `Name (assignment id)`, and a second row whose first cell is `Points Possible`. The file
written keeps the identity columns of the roster students it grades, the `Points Possible` row, and the assignment's
column with the attnkit total (a column Canvas does not know, e.g. each `--per-exercise` column, becomes a new
assignment on import, worth what its `Points Possible` cell says).

Moodle (Grades > Import > CSV file): one column identifies the user (mapped at import to the user field email,
username or ID number), one column per grade item (mapped to the item). The roster is Moodle's grade export
(Grades > Export > Plain text file: "First name", "Last name", "ID number", "Institution", "Department",
"Email address", a column per grade item, "Last downloaded from this course") or any CSV with the identifier column.
The "Last downloaded from this course" column is carried over: Moodle then refuses to import over a grade changed in
Moodle after the roster was downloaded.

Students are matched against one roster column: `match`, or else the identity column that matches the most rows. A
cell matches a student when it is the student's id (the folder name under submitted/, the gradebook's id) or, case
aside, the email the gradebook holds for them: Moodle's grade export names its students by email only.

Both LMSs overwrite a grade with whatever the file's cell holds, an empty cell included (Moodle clears the grade;
Canvas's import counts a blank where a grade is as a change), and leave the grades of a student the file does not
name as they are. So nothing is written that could overwrite a grade wrongly: a row matched to a graded student gets
the student's total; a row matched to a gradebook student who handed nothing in gets 0, as `nbgrader export` gives
it; a row matched to nobody is never written. With a gradebook, which lists the whole class, such a row means that the
roster and the gradebook disagree: the run refuses, writes nothing and names those rows (so does a row matched to two
students, or two rows to one student). An `attnkit grade` output lists only who handed something in: there such a
row is left out of the file with a note. Canvas's "Test Student" (the Student View user) is left out with a note
naming it. A graded student missing from the roster is listed; these go to FILE.notes.csv and `Export.notes`, and
the command exits 1 when a graded student is not in the roster.
"""

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.checking.check_types import Exercise
from autograder.course.exercises import EXERCISES
from autograder.integrations.course_roster import DEFAULT_ENCODING, roster_text
from autograder.outputs.documents import StudentDocument
from autograder.outputs.records import format_number, spreadsheet_text, write_atomically
from autograder.safe_text import clean, one_line

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
MOODLE_TIME_EXPORTED = "Last downloaded from this course"  # Moodle's export writes it; its import checks it
CANVAS_TEST_STUDENT = frozenset({"Test Student", "Student, Test"})  # the Student View user, by name and sortable name
NAMED_IN_A_MESSAGE = 10  # rows a refusal names before "and N more"
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
    students: Mapping[str, StudentGrade]  # the graded students, by id
    max_score: float  # the Points Possible of the total
    # Every student of the class, graded or not, by id, with the email the gradebook holds for them (None: none);
    # None when the source lists only the graded students (an `attnkit grade` output)
    enrolled: Mapping[str, str | None] | None = None


@dataclass
class Export:
    path: Path
    notes_path: Path
    rows: int  # roster students written
    matched_on: str
    column: str
    without_submission: list[str] = field(default_factory=list)  # roster students given 0
    left_out: list[str] = field(default_factory=list)  # roster rows not written (their LMS grade stays as it is)
    not_in_roster: list[str] = field(default_factory=list)  # graded students the roster lacks
    notes: list[tuple[str, str]] = field(default_factory=list)  # (student, note) for FILE.notes.csv


def export(grades: ClassGrades, roster_path: str | os.PathLike[str], out_path: str | os.PathLike[str],
           *, lms: str, id_column: str | None = None, per_exercise: bool = False, column: str | None = None,
           match: str | None = None, encoding: str = DEFAULT_ENCODING) -> Export:
    """Write the import file for `lms` ("canvas" or "moodle") and FILE.notes.csv beside it; return what was done.
    LmsError, with nothing written, when the roster cannot be used or a row of it cannot be matched (see above)."""
    header, rows = read_roster(roster_path, encoding)
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


def read_roster(path: str | os.PathLike[str],
                encoding: str = DEFAULT_ENCODING) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows as dicts) of a CSV roster; LmsError when it is not one."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_ROSTER_BYTES:
            raise LmsError(f"{clean(path)}: larger than {MAX_ROSTER_BYTES // 2**20} MB; is it the roster?")
        data = path.read_bytes()
    except OSError as error:
        raise LmsError(f"{clean(path)}: cannot read it ({error.strerror or error})") from None
    try:
        text = roster_text(data, encoding)  # LMS exports often start with a byte order mark
    except ValueError as error:
        raise LmsError(f"{clean(path)}, {error}") from None
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
    known = _Identities.of(grades)
    matched_on = _match_column(known, students, match, [name for name in CANVAS_MATCHABLE if name in header])
    extra = [(f"{column.split(' (')[0]}: {exercise.title['en']}", exercise) for exercise in EXERCISES] \
        if per_exercise else []
    result = Export(out_path, _notes_path(out_path), 0, matched_on, column)
    if others:
        result.notes.append(("", f"{others} roster rows without an ID (not students) were left out"))

    def name(row: dict[str, str]) -> str:
        return f"{row['Student'] or '(no name)'} (ID {row['ID']})"

    def test_student(row: dict[str, str]) -> bool:
        return row["Student"].strip() in CANVAS_TEST_STUDENT

    placed = _place(grades, known, students, matched_on, name, test_student, result)
    table = [[*identity, column, *(name for name, _ in extra)]]
    first_cell = points_rows[0]["Student"] if points_rows else POINTS_POSSIBLE
    table.append([first_cell if name == "Student" else "" for name in identity]
                 + [format_number(grades.max_score), *(str(exercise.points) for _, exercise in extra)])
    for row, student_id in placed:
        table.append([row[name] for name in identity] + _scores(grades, student_id, result, extra))
    _not_in_roster(grades, placed, matched_on, result)
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
    # A row without the identifier is no user to Moodle; its import would give the grade to the row above.
    students = [row for row in rows if row.get(identifier)]
    skipped = len(rows) - len(students)
    column = column or DEFAULT_COLUMN
    known = _Identities.of(grades)
    matched_on = _match_column(known, students, match, [name for name in MOODLE_MATCHABLE if name in header])
    extra = [(f"{column}: {exercise.title['en']}", exercise) for exercise in EXERCISES] if per_exercise else []
    result = Export(out_path, _notes_path(out_path), 0, matched_on, column)
    if skipped:
        result.notes.append(("", f"{skipped} roster rows have no {identifier} and were left out"))

    def name(row: dict[str, str]) -> str:
        parts = (row.get("First name"), row.get("Last name") or row.get("Surname"))
        return " ".join(part for part in parts if part) or "(no name)"

    placed = _place(grades, known, students, matched_on, name, lambda _row: False, result)
    # Moodle refuses to import a grade changed in Moodle after this column's time, unless "Force import" is ticked.
    stamp = [MOODLE_TIME_EXPORTED] if MOODLE_TIME_EXPORTED in header else []
    table = [[identifier, column, *(name for name, _ in extra), *stamp]]
    for row, student_id in placed:
        table.append([row[identifier], *_scores(grades, student_id, result, extra), *(row[name] for name in stamp)])
    _not_in_roster(grades, placed, matched_on, result)
    _write(out_path, table, result)
    return result


@dataclass(frozen=True)
class _Identities:
    """Whom a roster cell names: a student the grades know, by their id (exactly) or their email (case aside)."""

    ids: frozenset[str]
    emails: Mapping[str, frozenset[str]]  # casefolded email -> the ids of the students the gradebook gives it

    @classmethod
    def of(cls, grades: ClassGrades) -> "_Identities":
        known: dict[str, str | None] = {student_id: None for student_id in grades.students}
        known.update(grades.enrolled or {})
        emails: dict[str, set[str]] = {}
        for student_id, email in known.items():
            if email and email.strip():
                emails.setdefault(email.strip().casefold(), set()).add(student_id)
        return cls(frozenset(known), {email: frozenset(ids) for email, ids in emails.items()})

    def find(self, cell: str) -> frozenset[str]:
        """The students `cell` names: none, one, or several (an email the gradebook gives to more than one)."""
        cell = cell.strip()
        if not cell:
            return frozenset()
        found = self.emails.get(cell.casefold(), frozenset())
        return found | {cell} if cell in self.ids else found


def _match_column(known: _Identities, students: Sequence[dict[str, str]], match: str | None,
                  candidates: Sequence[str]) -> str:
    """The roster column that names the students: `match`, or the one whose cells name the most; LmsError when no
    cell of it names anyone the grades know."""
    if match is not None:
        if match not in candidates:
            raise LmsError(f"--match {match!r}: the roster has no such identity column (it has "
                           f"{', '.join(candidates) or 'none'})")
        column = match
    elif not candidates:
        raise LmsError("the roster has no column to match the students' ids against")
    else:
        counts = {name: sum(len(known.find(row.get(name, ""))) == 1 for row in students) for name in candidates}
        column = max(candidates, key=lambda name: counts[name])  # max keeps the first on a tie: the preferred one
    if known.ids and not any(known.find(row.get(column, "")) for row in students):
        where = f"the roster's {column}" if match is not None else f"none of the roster's {', '.join(candidates)}"
        raise LmsError(f"{where} holds a student id of the grades (the folder names under submitted/) or an email "
                       f"the gradebook holds; nothing was written. Say which column holds them with --match")
    return column


def _place(grades: ClassGrades, known: _Identities, students: Sequence[dict[str, str]], matched_on: str,
           name: Callable[[dict[str, str]], str], test_student: Callable[[dict[str, str]], bool],
           result: Export) -> list[tuple[dict[str, str], str]]:
    """(roster row, student id) for every row that gets a grade; LmsError naming the rows that cannot be placed.
    `name(row)` says whose row it is, in the LMS's words."""

    def describe(row: dict[str, str]) -> str:
        return f"{name(row)}, {matched_on} {row.get(matched_on) or '(empty)'}"

    placed: list[tuple[dict[str, str], str]] = []
    unknown: list[str] = []
    ambiguous: list[str] = []
    for row in students:
        found = known.find(row.get(matched_on, ""))
        if len(found) == 1:
            placed.append((row, next(iter(found))))
        elif found:
            ambiguous.append(f"{describe(row)} names {len(found)} students ({', '.join(sorted(found)[:3])})")
        elif test_student(row):
            _leave_out(row.get(matched_on) or name(row), f"Canvas's Test Student (the Student View user), "
                       f"{describe(row)}", result)
        elif grades.enrolled is None:
            _leave_out(row.get(matched_on) or name(row), f"no graded submission under this id, {describe(row)}",
                       result)
        else:
            unknown.append(describe(row))
    twice = {student_id for student_id, count in Counter(sid for _, sid in placed).items() if count > 1}
    ambiguous += [f"{describe(row)} and another row both name {student_id}"
                  for row, student_id in placed if student_id in twice]
    if ambiguous:
        raise LmsError(f"{len(ambiguous)} roster rows cannot be matched to one student each: {_listed(ambiguous)}; "
                       "nothing was written (an LMS file gives each of its rows the grade it holds)")
    if unknown:
        raise LmsError(
            f"{len(unknown)} roster students match no student of the gradebook by {matched_on} (its ids, and the "
            f"emails `attnkit course new --roster` put there): {_listed(unknown)}; nothing was written (writing 0 "
            "would overwrite their LMS grades). Add each to the gradebook (nbgrader db student add ID --email=EMAIL: "
            "then one without a submission gets 0), delete their rows from the roster file to leave their LMS grades "
            "as they are, or say which column holds the gradebook's ids with --match")
    result.rows = len(placed)
    return placed


def _leave_out(key: str, why: str, result: Export) -> None:
    """A roster row not written, named in the notes by `key` (its cell of the matched column, else its name)."""
    key = one_line(key, 200)
    result.left_out.append(key)
    result.notes.append((key, f"{one_line(why, 300)}: left out of the file, its grade in the LMS stays as it is"))


def _listed(items: Sequence[str]) -> str:
    """Items for a one-line message: cleaned, the first NAMED_IN_A_MESSAGE, then how many more."""
    shown = "; ".join(one_line(item, 200) for item in items[:NAMED_IN_A_MESSAGE])
    return shown + (f"; and {len(items) - NAMED_IN_A_MESSAGE} more" if len(items) > NAMED_IN_A_MESSAGE else "")


def _scores(grades: ClassGrades, student_id: str, result: Export, extra: Sequence[tuple[str, Exercise]]) -> list[str]:
    grade = grades.students.get(student_id)
    if grade is None:  # in the gradebook, nothing handed in: 0, as nbgrader export gives it
        result.without_submission.append(student_id)
        result.notes.append((student_id, "in the gradebook and the roster, no submission: 0"))
        return ["0", *("0" for _ in extra)]
    result.notes.extend((student_id, note) for note in grade.notes)
    return [format_number(grade.score),
            *(format_number(grade.exercises.get(exercise.id, 0.0)) for _, exercise in extra)]


def _not_in_roster(grades: ClassGrades, placed: Iterable[tuple[dict[str, str], str]], matched_on: str,
                   result: Export) -> None:
    in_roster = {student_id for _, student_id in placed}
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
