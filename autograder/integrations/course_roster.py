"""A class roster (CSV) read for nbgrader's gradebook: `attnkit course new DIR --roster ROSTER.csv`.

The columns are nbgrader's own (`nbgrader db student import`): `id` (required), `first_name`, `last_name`, `email`;
other columns (an LMS export has many) are left out. Everything is checked before anything is written: a file that
is not CSV in its encoding (UTF-8 unless `encoding` names another), a missing `id` column, a row with the wrong number
of fields, an id nbgrader cannot use as a folder name, a duplicate id or a name with a control character or an angle
bracket stops with the line that has it.

`roster_text` decodes a roster for `attnkit export` too: UTF-8 with or without Excel's byte-order mark, or the
encoding the instructor names (`--encoding cp1252`: what Excel's plain "CSV" writes on a Western-European Windows);
bytes that are not text in it are refused with their line, never guessed at.

`id_problem` and `name_problem` are the rules every way into the gradebook applies (the roster, `nbgrader db student
add`/`import`, formgrader's student editor, autograde's new student: `nbgrader_student_guard`; collect's inbound
folder names). An id is a folder name, a URL path segment and a string in formgrader's scripts: letters, digits and
`-_.` only. A name is kept as written (accents, CJK, commas, `O'Brien`, `"Bob"`, `&`: formgrader's pages escape what
they print, `nbgrader_formgrader_escaping`), less control characters (a terminal's) and `<`/`>`, which no person's
name or e-mail address holds and which make a tag on any page that forgets to escape.
"""

import codecs
import csv
from dataclasses import dataclass
from pathlib import Path

from autograder.refusal import Refused
from autograder.safe_text import clean, one_line

__all__ = ["DEFAULT_ENCODING", "RosterStudent", "id_problem", "name_problem", "read_roster", "roster_text"]

ID_COLUMN = "id"
NAME_COLUMNS = ("first_name", "last_name", "email")
ID_CHARACTERS = frozenset("-_.")
MARKUP_CHARACTERS = frozenset("<>")
MAX_ROSTER_BYTES = 20_000_000  # a roster of 100,000 students is a few MB
DEFAULT_ENCODING = "utf-8"
ZIP_MAGIC = b"PK\x03\x04"  # an .xlsx (or .ods) workbook is a ZIP archive


@dataclass(frozen=True)
class RosterStudent:
    id: str
    first_name: str | None
    last_name: str | None
    email: str | None


def id_problem(student_id: str) -> str | None:
    """Why nbgrader cannot use `student_id` as a folder name (submitted/<id>/), or None."""
    if not student_id:
        return "an empty id"
    if student_id[0] == "." or not all(char.isalnum() or char in ID_CHARACTERS for char in student_id):
        return f"id {one_line(student_id, 80)!r}: use letters, digits, '-', '_' or '.' (not first)"
    return None


def roster_text(data: bytes, encoding: str = DEFAULT_ENCODING) -> str:
    """A roster file's bytes as text; ValueError saying where and what to do when they are not text in `encoding`."""
    try:
        name = codecs.lookup(encoding).name
        b"x".decode(name, "ignore")  # a codec that is no text encoding (base64, rot13) raises LookupError
    except LookupError:
        raise ValueError(f"--encoding {one_line(encoding, 40)!r} is not an encoding Python knows (e.g. utf-8, "
                         "cp1252, gbk)") from None
    if data.startswith(ZIP_MAGIC):
        raise ValueError("line 1: a ZIP file, such as an Excel workbook (.xlsx), not CSV text; save it as \"CSV "
                         "UTF-8\" (Excel: File > Save As > CSV UTF-8)")
    try:
        # utf-8-sig: Excel's "CSV UTF-8" starts with a byte-order mark, which is no part of the first column's name
        return data.decode("utf-8-sig" if name == "utf-8" else name)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        advice = ("save it as \"CSV UTF-8\" (Excel: File > Save As > CSV UTF-8), or name the encoding it is in with "
                  "--encoding: Excel's plain \"CSV\" is cp1252 on a Western-European Windows, gbk on a Chinese one")
        if name != "utf-8":
            advice = "give the encoding it was saved in with --encoding, or save it as \"CSV UTF-8\""
        shown = "UTF-8" if name == "utf-8" else name
        raise ValueError(f"line {line}: byte 0x{data[error.start]:02x} is not {shown} text; {advice}") from None


def name_problem(column: str, value: str | None) -> str | None:
    """Why `value` cannot be the student's `column` (first_name, last_name, email, ...) in the gradebook, or None."""
    if value is None:
        return None
    if clean(value, len(value)) != value or "\n" in value or "\t" in value:
        return f"the {column} holds a control character ({clean(value, 80)})"
    if MARKUP_CHARACTERS & set(value):
        return f"the {column} holds '<' or '>' ({one_line(value, 80)}): no name or address has them"
    return None


def read_roster(path: Path, encoding: str = DEFAULT_ENCODING) -> list[RosterStudent]:
    """The roster's students, in its order; Refused (with the file's line) when it cannot be used as it is."""
    if not path.is_file():
        raise Refused(f"roster {clean(path)}: no such file")
    if path.stat().st_size > MAX_ROSTER_BYTES:
        raise Refused(f"roster {clean(path)}: larger than {MAX_ROSTER_BYTES:,} bytes; is it a roster?")
    try:
        text = roster_text(path.read_bytes(), encoding)
    except ValueError as error:
        raise Refused(f"roster {clean(path)}, {error}") from None
    if "\x00" in text:
        raise Refused(f"roster {clean(path)} is not a CSV file (it holds NUL bytes)")
    try:
        rows = list(csv.reader(text.splitlines(), strict=True))
    except csv.Error as error:
        raise Refused(f"roster {clean(path)} is not a CSV file: {one_line(error)}") from None
    if not rows:
        raise Refused(f"roster {clean(path)} is empty; its first line names the columns: id,first_name,last_name,"
                      "email")
    header = [name.strip().lower() for name in rows[0]]
    if ID_COLUMN not in header:
        raise Refused(f"roster {clean(path)} has no '{ID_COLUMN}' column (its columns: "
                      f"{one_line(', '.join(rows[0]), 200)}); nbgrader's columns are id,first_name,last_name,email")
    duplicated = sorted({name for name in header if name and header.count(name) > 1})
    if duplicated:
        raise Refused(f"roster {clean(path)} names the column(s) {', '.join(duplicated)} twice")
    students: list[RosterStudent] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(field.strip() for field in row):
            continue  # a blank line
        if len(row) != len(header):
            raise Refused(f"roster {clean(path)}, line {line}: {len(row)} fields, the header has {len(header)}")
        fields = dict(zip(header, (field.strip() for field in row), strict=True))
        student_id = fields[ID_COLUMN]
        problem = id_problem(student_id)
        if problem:
            raise Refused(f"roster {clean(path)}, line {line}: {problem}")
        if student_id in seen:
            raise Refused(f"roster {clean(path)}, line {line}: id {student_id!r} again (first on line "
                          f"{seen[student_id]})")
        seen[student_id] = line
        for column in NAME_COLUMNS:
            problem = name_problem(column, fields.get(column, ""))
            if problem:
                raise Refused(f"roster {clean(path)}, line {line}: {problem}")
        students.append(RosterStudent(student_id, fields.get("first_name") or None, fields.get("last_name") or None,
                                      fields.get("email") or None))
    if not students:
        raise Refused(f"roster {clean(path)} names no student (only its header line)")
    return students
