"""attnkit export: Canvas's and Moodle's gradebook import CSVs, checked against their documented layouts.

Canvas (Grades > Import, the layout of its own Grades > Export): identity columns Student, ID, SIS User ID,
SIS Login ID, Section; a "Points Possible" row right under the header; one column per assignment, named
"Name (id)" for an existing one. Moodle (Grades > Import > CSV): a user-identifier column and a column per grade
item, mapped at import. The grade records are written here as `attnkit grade` writes them; the expected numbers
are computed from those records.
"""

import csv
import json

import pytest

from autograder import cli
from autograder.course.exercises import EXERCISES
from autograder.integrations.lms import CANVAS_REQUIRED, POINTS_POSSIBLE, exercise_points
from autograder.outputs import class_report

ASSIGNMENT_COLUMN = "Attention (48213)"


def _record(student_id, fraction):
    """A record whose every check earned `fraction` of its points (checks named by exercise)."""
    checks = [{"id": f"{exercise.id}.hidden", "exercise": exercise.id, "score": exercise.points * fraction,
               "max_score": float(exercise.points), "status": "passed", "misconception": None, "message": "",
               "hidden": True} for exercise in EXERCISES]
    total = sum(check["score"] for check in checks)
    return {"student_id": student_id, "assignment": "attention", "submission_hash": "x", "seed": 0, "score": total,
            "max_score": 100.0, "notebooks": [{"notebook": "all", "status": "graded", "reason": "", "path": "",
                                               "sha256": "", "notes": [], "score": total, "max_score": 100.0,
                                               "checks": checks}]}


@pytest.fixture
def grades(tmp_path):
    folder = tmp_path / "grades"
    (folder / "students").mkdir(parents=True)
    records = {"ann": _record("ann", 1.0), "bob": _record("bob", 0.5), "eve": _record("eve", 0.25)}
    for student_id, record in records.items():
        (folder / "students" / f"{student_id}.json").write_text(json.dumps(record))
    class_report.write_class_report(folder, list(records.values()))
    return folder, records


def _canvas_roster(path, rows, extra_columns=(ASSIGNMENT_COLUMN,)):
    with path.open("w", newline="", encoding="utf-8-sig") as handle:  # Canvas's export starts with a BOM
        writer = csv.writer(handle)
        writer.writerow([*CANVAS_REQUIRED, *extra_columns, "Current Score"])
        writer.writerow(["    Points Possible", "", "", "", "", *("100.00" for _ in extra_columns), "(read only)"])
        writer.writerows(rows)
    return path


def _read(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_canvas_import_file_has_the_documented_layout(tmp_path, grades, capsys):
    folder, records = grades
    roster = _canvas_roster(tmp_path / "roster.csv", [
        ["Lovelace, Ann", "101", "S101", "ann", "Section 1", "", "88.5%"],
        ["Bobbins, Bob", "102", "S102", "bob", "Section 2", "", ""],
        ["=cmd|' /C calc'!A0", "103", "S103", "dan", "Section 2", "", ""],  # no submission, hostile name
    ])
    out = tmp_path / "canvas.csv"
    status = cli.main(["export", str(folder), "--canvas", str(roster), "--out", str(out)])
    rows = _read(out)
    assert rows[0] == [*CANVAS_REQUIRED, ASSIGNMENT_COLUMN]  # read-only columns such as Current Score are left out
    assert rows[1][0].strip() == POINTS_POSSIBLE and rows[1][1:5] == ["", "", "", ""]
    assert float(rows[1][5]) == records["ann"]["max_score"]
    by_login = {row[3]: row for row in rows[2:]}
    assert float(by_login["ann"][5]) == records["ann"]["score"]
    assert float(by_login["bob"][5]) == records["bob"]["score"]
    assert float(by_login["dan"][5]) == 0 and by_login["dan"][0].startswith("'=")  # quoted: not a formula
    assert len(rows) == 2 + 3  # every roster student, no one else
    # eve is graded but not in the roster: reported, never dropped silently, and the exit status says so.
    assert status == 1
    err = capsys.readouterr().err
    assert "eve" in err and "dan" in err
    notes = _read(out.with_name(out.name + ".notes.csv"))
    assert notes[0] == ["student", "note"]
    assert {row[0] for row in notes[1:]} == {"dan", "eve"}
    assert "canvas.csv" in (folder / class_report.FILE_NAME).read_text()  # the class report links the file


@pytest.mark.slow
def test_canvas_per_exercise_columns_carry_points_possible(tmp_path, grades):
    folder, records = grades
    roster = _canvas_roster(tmp_path / "roster.csv", [["Lovelace, Ann", "101", "S101", "ann", "S1", "", ""],
                                                      ["Bobbins, Bob", "102", "S102", "bob", "S1", "", ""],
                                                      ["Eve", "103", "S103", "eve", "S1", "", ""]])
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", str(folder), "--canvas", str(roster), "--out", str(out), "--per-exercise"]) == 0
    rows = _read(out)
    assert len(rows[0]) == len(CANVAS_REQUIRED) + 1 + len(EXERCISES)
    assert [float(value) for value in rows[1][6:]] == [float(exercise.points) for exercise in EXERCISES]
    bob = next(row for row in rows if row[3] == "bob")
    points = exercise_points(records["bob"])
    assert [float(value) for value in bob[6:]] == [points[exercise.id] for exercise in EXERCISES]
    assert sum(float(value) for value in bob[6:]) == pytest.approx(float(bob[5]))


@pytest.mark.slow
def test_moodle_import_file_identifier_and_grade_columns(tmp_path, grades):
    folder, records = grades
    roster = tmp_path / "moodle.csv"
    roster.write_text("First name,Last name,ID number,Institution,Department,Email address,Username\n"
                      "Ann,Lovelace,1001,,,ann@uni.example,ann\nBob,Bobbins,1002,,,bob@uni.example,bob\n"
                      "Eve,Evans,1003,,,eve@uni.example,eve\n")
    out = tmp_path / "moodle.csv.out"
    assert cli.main(["export", str(folder), "--moodle", str(roster), "--id-column", "email", "--out", str(out)]) == 0
    rows = _read(out)
    assert rows[0] == ["Email address", "Attention"]
    assert {row[0]: float(row[1]) for row in rows[1:]} == {
        f"{student_id}@uni.example": record["score"] for student_id, record in records.items()}
    assert cli.main(["export", str(folder), "--moodle", str(roster), "--id-column", "idnumber", "--out", str(out),
                     "--per-exercise"]) == 0
    rows = _read(out)
    assert rows[0][0] == "ID number" and len(rows[0]) == 2 + len(EXERCISES)
    assert rows[1][0] == "1001" and float(rows[1][1]) == records["ann"]["score"]


@pytest.mark.parametrize("content, needle", [
    ("Name,Login\nAnn,ann\n", "lacks Canvas's column"),
    (b"\xff\xfe\x00garbage\x00", "not UTF-8"),
    ("", "empty"),
    ("Student,ID,SIS User ID,SIS Login ID,Section,A (1),B (2)\n    Points Possible,,,,,1,1\n", "--column"),
])
def test_bad_canvas_rosters_are_refused_with_status_2(tmp_path, grades, capsys, content, needle):
    folder, _ = grades
    roster = tmp_path / "roster.csv"
    if isinstance(content, bytes):
        roster.write_bytes(content)
    else:
        roster.write_text(content)
    out = tmp_path / "out.csv"
    assert cli.main(["export", str(folder), "--canvas", str(roster), "--out", str(out)]) == 2
    assert needle in capsys.readouterr().err
    assert not out.exists()


def test_moodle_needs_its_identifier_column(tmp_path, grades, capsys):
    folder, _ = grades
    roster = tmp_path / "moodle.csv"
    roster.write_text("First name,Last name,Email address\nAnn,L,ann\n")
    assert cli.main(["export", str(folder), "--moodle", str(roster), "--id-column", "username",
                     "--out", str(tmp_path / "x.csv")]) == 2
    assert "Username" in capsys.readouterr().err
    assert cli.main(["export", str(folder), "--moodle", str(roster), "--out", str(tmp_path / "x.csv")]) == 2
    assert cli.main(["export", str(tmp_path / "nowhere"), "--moodle", str(roster), "--id-column", "email",
                     "--out", str(tmp_path / "x.csv")]) == 2
