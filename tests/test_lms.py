"""attnkit export: Canvas's and Moodle's gradebook import CSVs, checked against their documented layouts.

Canvas (Grades > Import, the layout of its own Grades > Export): identity columns Student, ID, SIS User ID,
SIS Login ID, Section; a "Points Possible" row right under the header; one column per assignment, named
"Name (id)" for an existing one. Moodle (Grades > Import > CSV): a user-identifier column and a column per grade
item, mapped at import. The grade records are written here as `attnkit grade` writes them; the expected numbers
are computed from those records.

In an nbgrader course the gradebook is the record, and it lists the whole class with the emails of the roster that
`attnkit course new --roster` read: a gradebook is made here with nbgrader's Gradebook API from such a roster (as
`course new` fills it), with one graded cell per submission, and Moodle's own grade export ("Plain text file", written
here as Moodle writes it) is matched on its "Email address" column. Expected totals are read back from nbgrader.
"""

import csv
import json
import time

import pytest

from autograder import cli
from autograder.course.exercises import EXERCISES
from autograder.integrations.course_roster import read_roster
from autograder.integrations.lms import CANVAS_REQUIRED, MOODLE_TIME_EXPORTED, POINTS_POSSIBLE, exercise_points
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
        ["=cmd|' /C calc'!A0", "102", "S102", "bob", "Section 2", "", ""],  # a hostile name
        ["Dobbs, Dan", "103", "S103", "dan", "Section 2", "", ""],  # no graded submission
    ])
    out = tmp_path / "canvas.csv"
    status = cli.main(["export", str(folder), "--canvas", str(roster), "--out", str(out)])
    rows = _read(out)
    assert rows[0] == [*CANVAS_REQUIRED, ASSIGNMENT_COLUMN]  # read-only columns such as Current Score are left out
    assert rows[1][0].strip() == POINTS_POSSIBLE and rows[1][1:5] == ["", "", "", ""]
    assert float(rows[1][5]) == records["ann"]["max_score"]
    by_login = {row[3]: row for row in rows[2:]}
    assert float(by_login["ann"][5]) == records["ann"]["score"]
    assert float(by_login["bob"][5]) == records["bob"]["score"] and by_login["bob"][0].startswith("'=")  # not a formula
    # dan has no record: an `attnkit grade` output cannot tell "handed nothing in" from "another id", so his row is
    # left out (his Canvas grade stays as it is), never written as 0 nor blank (which Canvas imports as a change)
    assert set(by_login) == {"ann", "bob"} and len(rows) == 2 + 2
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


# --- an nbgrader course's gradebook, with the roster's emails ---------------------------------------------------------

COURSE_ROSTER = (  # what `attnkit course new --roster` reads (docs/instructor/roster-example.csv's columns)
    "id,first_name,last_name,email\n"
    "s001,Ada,Lovelace,ada@example.org\n"
    "s002,李,雷,LiLei@Example.org\n"
    "s003,Grace,Hopper,grace@example.org\n"
    "s004,Alan,Turing,alan@example.org\n"
)
AUTOGRADED = {"s001": 9.5, "s002": 4.0, "s003": 0.0}  # s004 hands nothing in
NOTEBOOK, CELL, CELL_POINTS = "01_attention_without_weights", "test_softmax_naive", 10


def _gradebook_course(folder, roster_text, autograded):
    """A course folder whose gradebook holds the roster's students (as `course new` adds them) and their submissions,
    each with one autograded cell."""
    from nbgrader.api import Gradebook

    folder.mkdir()
    (folder / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    roster = folder / "roster.csv"
    roster.write_text(roster_text, encoding="utf-8")
    with Gradebook(f"sqlite:///{folder / 'gradebook.db'}", "attnkit") as gradebook:
        gradebook.add_assignment("attention")
        gradebook.add_notebook(NOTEBOOK, "attention")
        gradebook.add_grade_cell(CELL, NOTEBOOK, "attention", max_score=CELL_POINTS, cell_type="code")
        for student in read_roster(roster):
            gradebook.update_or_create_student(student.id, first_name=student.first_name,
                                               last_name=student.last_name, email=student.email)
        for student_id, score in autograded.items():
            gradebook.add_submission("attention", student_id)
            grade = gradebook.find_grade(CELL, NOTEBOOK, "attention", student_id)
            grade.auto_score, grade.needs_manual_grade = score, False  # as nbgrader's SaveAutoGrades leaves it
            gradebook.db.commit()
    return folder


def _nbgrader_totals(course):
    """{student id: the submission's score, as nbgrader computes it}, and {student id: email}."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attnkit") as gradebook:
        totals = {submission.student.id: float(submission.score)
                  for submission in gradebook.find_assignment("attention").submissions}
        return totals, {student.id: student.email for student in gradebook.students}


@pytest.fixture(scope="module")
def gradebook_course(tmp_path_factory):
    return _gradebook_course(tmp_path_factory.mktemp("lms") / "course", COURSE_ROSTER, AUTOGRADED)


def _moodle_grade_export(path, students, exported=None):
    """Moodle's Grades > Export > Plain text file: every field quoted, the user fields Moodle exports by default, a
    column per grade item ("-" where there is no grade) and the time of the export, as Moodle writes them."""
    exported = int(time.time()) if exported is None else exported
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        writer.writerow(["First name", "Last name", "ID number", "Institution", "Department", "Email address",
                         "Assignment: Attention (Real)", MOODLE_TIME_EXPORTED])
        for first, last, email in students:
            writer.writerow([first, last, "", "", "", email, "-", str(exported)])
    return path, str(exported)


MOODLE_CLASS = [("Ada", "Lovelace", "ada@example.org"), ("李", "雷", "lilei@example.org"),
                ("Grace", "Hopper", "GRACE@example.org"), ("Alan", "Turing", "alan@example.org")]


@pytest.mark.slow
def test_moodles_own_grade_export_is_matched_on_the_gradebooks_emails(gradebook_course, tmp_path):
    """docs/instructor/export.md's Moodle command on Moodle's real export: every student by the email the roster put
    in the gradebook (case aside), the one who handed nothing in at 0, Moodle's export time carried over."""
    roster, exported = _moodle_grade_export(tmp_path / "moodle-grades.csv", MOODLE_CLASS)
    out = tmp_path / "attention-moodle.csv"
    status = cli.main(["export", str(gradebook_course), "--moodle", str(roster), "--id-column", "email",
                       "--out", str(out)])
    assert status == 0
    rows = _read(out)
    assert rows[0] == ["Email address", "Attention", MOODLE_TIME_EXPORTED]
    totals, emails = _nbgrader_totals(gradebook_course)
    by_email = {email.casefold(): student_id for student_id, email in emails.items()}
    written = {row[0]: float(row[1]) for row in rows[1:]}
    assert written == {email: totals.get(by_email[email.casefold()], 0.0) for _, _, email in MOODLE_CLASS}
    assert written["alan@example.org"] == 0 and "s004" not in totals  # in the gradebook, nothing handed in
    assert {row[2] for row in rows[1:]} == {exported}


@pytest.mark.slow
def test_a_roster_student_the_gradebook_lacks_is_refused_named_and_nothing_is_written(gradebook_course, tmp_path,
                                                                                     capsys):
    stranger = ("Mallory\x1b]0;owned\x07", "=HYPERLINK(\"x\")", "mallory@elsewhere.example")
    roster, _ = _moodle_grade_export(tmp_path / "moodle-grades.csv", [*MOODLE_CLASS, stranger])
    out = tmp_path / "attention-moodle.csv"
    assert cli.main(["export", str(gradebook_course), "--moodle", str(roster), "--id-column", "email",
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "mallory@elsewhere.example" in err and "nothing was written" in err
    assert "Mallory\\x1b]0;owned\\x07" in err and "\x1b" not in err  # named, its escape shown, never sent
    assert not out.exists() and not out.with_name(out.name + ".notes.csv").exists()


@pytest.mark.slow
def test_the_issues_moodle_path_no_longer_zeroes_the_class(tmp_path, capsys):
    """Issue 56: a gradebook whose ids are not emails (the students autograde added, no roster) and Moodle's export.
    The documented command refused, and `--match "Email address"`, which the refusal advised, wrote every student at
    0: both now refuse, write nothing and name the rows."""
    course = _gradebook_course(tmp_path / "course", "id\ns001\ns002\ns003\n", AUTOGRADED)
    roster, _ = _moodle_grade_export(tmp_path / "moodle-grades.csv", MOODLE_CLASS[:3])
    out = tmp_path / "attention-moodle.csv"
    for extra in ([], ["--match", "Email address"]):
        assert cli.main(["export", str(course), "--moodle", str(roster), "--id-column", "email", "--out", str(out),
                         *extra]) == 2
        assert "Email address" in capsys.readouterr().err
        assert not out.exists() and not out.with_name(out.name + ".notes.csv").exists()


@pytest.mark.slow
def test_canvas_test_student_is_named_and_left_out_and_a_stranger_is_refused(gradebook_course, tmp_path, capsys):
    rows = [["Lovelace, Ada", "101", "S101", "s001", "A", ""], ["Lei, Li", "102", "S102", "s002", "A", ""],
            ["Turing, Alan", "104", "S104", "s004", "A", ""],
            ["Student, Test", "999", "", "", "A", ""]]  # Canvas's Student View user: no SIS ids
    roster = _canvas_roster(tmp_path / "canvas-gradebook.csv", rows, extra_columns=(ASSIGNMENT_COLUMN,))
    out = tmp_path / "attention-canvas.csv"
    status = cli.main(["export", str(gradebook_course), "--canvas", str(roster), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and "s003" in err  # graded, not on this roster: named, the rest written
    totals, _ = _nbgrader_totals(gradebook_course)
    written = {row[3]: float(row[5]) for row in _read(out)[2:]}
    assert written == {"s001": totals["s001"], "s002": totals["s002"], "s004": 0.0}
    notes = _read(out.with_name(out.name + ".notes.csv"))
    test_student = [note for note in notes if "Test Student" in note[1]]
    assert [row[0] for row in test_student] == ["Student, Test (ID 999)"] and "left out" in test_student[0][1]

    stranger = _canvas_roster(tmp_path / "with-a-stranger.csv", [*rows, ["Doe, Jane", "105", "S105", "jdoe", "A", ""]],
                              extra_columns=(ASSIGNMENT_COLUMN,))
    out.unlink()
    assert cli.main(["export", str(gradebook_course), "--canvas", str(stranger), "--out", str(out)]) == 2
    assert "Doe, Jane" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_two_roster_rows_for_one_student_or_an_email_shared_by_two_are_refused(tmp_path, capsys):
    course = _gradebook_course(tmp_path / "course", "id,email\ns001,same@example.org\ns002,same@example.org\n"
                               "s003,grace@example.org\n", AUTOGRADED)
    out = tmp_path / "out.csv"
    for students in ([("A", "B", "same@example.org"), ("G", "H", "grace@example.org")],
                     [("G", "H", "grace@example.org"), ("G", "H", "Grace@example.org")]):
        roster, _ = _moodle_grade_export(tmp_path / "moodle.csv", students)
        assert cli.main(["export", str(course), "--moodle", str(roster), "--id-column", "email",
                         "--out", str(out)]) == 2
        assert "cannot be matched to one student each" in capsys.readouterr().err and not out.exists()


def test_a_roster_saved_as_excels_plain_csv_is_refused_with_its_line_or_read_with_its_encoding(tmp_path, grades,
                                                                                               capsys):
    folder, records = grades
    roster = tmp_path / "moodle.csv"
    roster.write_bytes("Email address,Username\nann@x,ann\nbéb@x,bob\n".encode("cp1252"))
    out = tmp_path / "out.csv"
    args = ["export", str(folder), "--moodle", str(roster), "--id-column", "username", "--out", str(out)]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "line 3: byte 0xe9 is not UTF-8 text" in err and "--encoding" in err and not out.exists()
    assert cli.main([*args, "--encoding", "cp1252"]) == 1  # eve is not on this roster
    assert {row[0]: float(row[1]) for row in _read(out)[1:]} == {"ann": records["ann"]["score"],
                                                                 "bob": records["bob"]["score"]}
    assert cli.main([*args, "--encoding", "no-such-codec"]) == 2
    assert "not an encoding" in capsys.readouterr().err
