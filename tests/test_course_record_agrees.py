"""One course, every record of it agrees (issue 56, "Done when").

A course made as docs/instructor/setup.md's runbook makes it (its commands verbatim, through test_runbook's helpers,
up to the collect: the roster, the due date, the release, the rehearsal with the instructor's own login), then the
roster's three students hand in: s001 on time (a TA's manual grade on one cell), s002 25 hours late (the course's
10% per day started: 20%), s003 on time with notebook 04 done in its `-Copy1` (the original left untouched) and an
`Untitled.ipynb` beside them. nbgrader autogrades, the course's points change (`attnkit course points`, which keeps
the manual grade in proportion), nbgrader autogrades again, the feedback is generated, the rehearsal student is
removed (setup.md's section, verbatim), the Canvas and Moodle files are written from the LMS's own exports (export.md's
commands, verbatim) and the class report from the gradebook.

Then every record shows each student the same total: the gradebook (as nbgrader export counts it), formgrader's
pages in Chromium (its students and the assignment's submissions), the Canvas and the Moodle files, the class report
and the sum of the student's feedback pages; generate_feedback and every export exit 0. The expected totals come from
the gradebook's maximum, the points changed here, the manual grade and the late policy, never from a grader's output.
"""

import csv
import io
import os
import pwd
import re
import time
from fractions import Fraction
from pathlib import Path

import nbformat
import pytest
from browser_helpers import start_chromium, wait_until
from test_course_setup import _browser_binaries
from test_docs import REPO, page_commands
from test_quiet_autograde import handed_in
from test_runbook import (
    EXPORT,
    REMOVAL_SECTION,
    ROSTER_EXAMPLE,
    RUNBOOK_SECTION,
    SETUP,
    _bash,
    _formgrader_as_documented,
    _report_totals,
    _rows,
    _section_commands,
)

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.integrations.nbgrader_gradebook import read_assignment

pytestmark = pytest.mark.slow

ASSIGNMENT = "attention"
ON_TIME, LATE, COPIED = "s001", "s002", "s003"
DUE_UTC = "2027-01-15 09:00:00"  # setup.md's due date, 17:00 in Shanghai
HANDED_IN = {ON_TIME: "2027-01-14 20:00:00 UTC", LATE: "2027-01-16 10:00:00 UTC", COPIED: "2027-01-15 08:59:00 UTC"}
LATE_KEEPS = Fraction(8, 10)  # 25 hours late: two days started at the course's 10% per day
COPIED_NOTEBOOK = NOTEBOOKS[-1]  # s003 does this one in its -Copy1
GRADED_BY_HAND = ("01_attention_without_weights", "test_softmax_stable")  # s001's cell a TA marks down
HAND_GRADE = (3, 6)  # 3 of the cell's 6 points, before the course's points change
MOVED = ["--set", "softmax_naive.random=3", "--set", "softmax_stable.large=0"]  # softmax_stable 6 -> 5
STABLE_AFTER = 5


def _handed_in(course, student, timestamp, notebooks):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for name, notebook in notebooks.items():
        nbformat.write(notebook, folder / name)
    (folder / "timestamp.txt").write_text(timestamp, encoding="utf-8")  # as nbgrader submit writes it


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course after everything above; the outputs of the commands whose exit status the tests check."""
    home = tmp_path_factory.mktemp("home")
    course = home / "attnkit-course"
    login = pwd.getpwuid(os.getuid()).pw_name
    runbook = _section_commands(SETUP, RUNBOOK_SECTION)
    through_collect = runbook[:runbook.index("nbgrader collect attention") + 1]
    _bash(through_collect, home, cwd=REPO)
    assert (course / "submitted" / login / ASSIGNMENT).is_dir()

    release = {name: nbformat.read(course / "release" / ASSIGNMENT / f"{name}.ipynb", as_version=4)
               for name in NOTEBOOKS}
    solved = {name: handed_in(release[name], nbformat.read(course / "source" / ASSIGNMENT / f"{name}.ipynb",
                                                           as_version=4)) for name in NOTEBOOKS}
    _handed_in(course, ON_TIME, HANDED_IN[ON_TIME], {f"{name}.ipynb": solved[name] for name in NOTEBOOKS})
    _handed_in(course, LATE, HANDED_IN[LATE], {f"{name}.ipynb": solved[name] for name in NOTEBOOKS})
    _handed_in(course, COPIED, HANDED_IN[COPIED], {
        **{f"{name}.ipynb": solved[name] for name in NOTEBOOKS if name != COPIED_NOTEBOOK},
        f"{COPIED_NOTEBOOK}.ipynb": release[COPIED_NOTEBOOK],  # opened, left as released
        f"{COPIED_NOTEBOOK}-Copy1.ipynb": solved[COPIED_NOTEBOOK],  # the work
        "Untitled.ipynb": nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]),
    })

    _bash(["nbgrader autograde attention"], home, cwd=course)  # the runbook's line
    with _formgrader_as_documented(course, home) as session:  # the TA marks s001's cell down to 3 of 6
        notebook, cell = GRADED_BY_HAND
        submissions = session.json(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{notebook}")
        submission = next(item for item in submissions if item["student"] == ON_TIME)
        grade = next(item for item in session.json(f"/formgrader/api/grades?submission_id={submission['id']}")
                     if item["name"] == cell)
        assert grade["max_score"] == HAND_GRADE[1], grade
        status, text = session.call(f"/formgrader/api/grade/{grade['id']}", method="PUT",
                                    body={**grade, "manual_score": str(HAND_GRADE[0])})
        assert status == 200, text
    changed = _bash([f"attnkit course points {course} {' '.join(MOVED)}"], home, cwd=course)
    assert f"{ON_TIME}'s {notebook} {cell}: manual grade 3 of 6 -> 2.5 of 5" in changed.stdout, changed.stdout
    _bash(["nbgrader autograde attention --force"], home, cwd=course)
    feedback = _bash(["nbgrader generate_feedback attention"], home, cwd=course, status=None)

    removal = _bash(_section_commands(SETUP, REMOVAL_SECTION), home, cwd=REPO)
    assert "the gradebook (1 submission and their grades)" in removal.stdout, removal.stdout

    # The LMS's own exports, as an instructor downloads them into the course folder: Canvas's (with Canvas's Test
    # Student) and Moodle's Plain text file export, its students named by the roster's emails.
    roster = list(csv.DictReader(io.StringIO(ROSTER_EXAMPLE.read_text(encoding="utf-8"))))
    (course / "canvas-gradebook.csv").write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Attention (48213)\nPoints Possible,,,,,100\n"
        + "".join(f'"{row["last_name"]}, {row["first_name"]}",{number},90{number},{row["id"]},A,\n'
                  for number, row in enumerate(roster, start=1))
        + '"Student, Test",9,,,A,\n', encoding="utf-8")
    moodle = io.StringIO()
    writer = csv.writer(moodle, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["First name", "Last name", "ID number", "Institution", "Department", "Email address",
                     "Assignment: Attention (Real)", "Last downloaded from this course"])
    writer.writerows([row["first_name"], row["last_name"], "", "", "", row["email"], "-", str(int(time.time()))]
                     for row in roster)
    (course / "moodle-grades.csv").write_text(moodle.getvalue(), encoding="utf-8")
    exports = [command.line for command in page_commands(EXPORT)
               if command.section == "From an nbgrader course: the gradebook"]
    assert len(exports) == 2 and "--canvas" in exports[0] and "--moodle" in exports[1]
    exported = [_bash([line], home, cwd=course, status=None) for line in exports]
    report_line = next(line for line in runbook if line.startswith("attnkit report"))
    _bash([report_line], home, cwd=course)
    return home, course, roster, feedback, exported


def _expected(course):
    """Each roster student's total, from the gradebook's maximum and what this test did."""
    maximum = Fraction(read_assignment(course, ASSIGNMENT).max_score)
    assert maximum == sum(exercise.points for exercise in EXERCISES)  # the change moved points, kept the total
    kept = Fraction(HAND_GRADE[0], HAND_GRADE[1]) * STABLE_AFTER  # in proportion: 2.5 of 5
    return {ON_TIME: maximum - STABLE_AFTER + kept, LATE: maximum * LATE_KEEPS, COPIED: maximum}


def _records(home, course, roster, students):
    """{record: {student: total}} for `students`, from every record of the course."""
    by_email = {row["email"]: row["id"] for row in roster}
    grades = read_assignment(course, ASSIGNMENT)
    records = {
        "gradebook": {student: grades.submissions[student].total for student in students},
        "canvas": {row["SIS Login ID"]: float(row["Attention (48213)"])
                   for row in _rows(course / "attention-canvas.csv") if row["SIS Login ID"] in students},
        "moodle": {by_email[row["Email address"]]: float(row["Attention"])
                   for row in _rows(course / "attention-moodle.csv") if by_email[row["Email address"]] in students},
        "class report": {student: total for student, total in _report_totals(course).items() if student in students},
        "feedback": {student: _feedback_total(course, student) for student in students},
    }
    records.update(_formgraders_totals(home, course, students))
    return records


def _feedback_total(course, student):
    """The sum of the student's feedback pages' scores (each notebook's, its late penalty subtracted)."""
    pages = sorted((course / "feedback" / student / ASSIGNMENT).glob("*.html"))
    assert [page.stem for page in pages] == sorted(NOTEBOOKS), pages
    shown = [re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page.read_text(encoding="utf-8")) for page in pages]
    assert all(shown), pages
    return round(sum(float(found.group(1)) for found in shown), 2)


def _formgraders_totals(home, course, students):
    """What formgrader's students page and the assignment's submissions page show, in Chromium."""
    from selenium.webdriver.common.by import By

    seen = {}
    with _formgrader_as_documented(course, home) as session:
        driver = start_chromium(*_browser_binaries(), home, 60)
        try:
            driver.get(f"{session.url}/formgrader?token={session.token}")
            for name, page, id_column in (("formgrader's students", "manage_students", 1),
                                          ("formgrader's submissions", f"manage_submissions/{ASSIGNMENT}", 1)):
                driver.get(f"{session.url}/formgrader/{page}")

                def rows(page=page, id_column=id_column):
                    found = {}
                    for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr"):
                        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                        score = next((text for text in cells if re.fullmatch(r"[\d.]+ / [\d.]+", text)), None)
                        if len(cells) > id_column and cells[id_column] in students and score:
                            found[cells[id_column]] = float(score.split(" / ")[0])
                    return found if set(found) == set(students) else None

                seen[name] = wait_until(driver, rows, 60, f"{sorted(students)} on {page}")
        finally:
            driver.quit()
    return seen


def _agree(records, expected):
    for record, totals in records.items():
        assert totals == pytest.approx({student: float(total) for student, total in expected.items()}, abs=0.011), \
            (record, totals)


def test_every_record_shows_each_student_the_same_total(course):
    """s001 (the manual grade, kept in proportion through the points change) and s002 (late) agree everywhere; the
    exports exit 0 once the rehearsal student is removed, and Canvas's Test Student is left out, named."""
    home, root, roster, _, exported = course
    for ran in exported:
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    assert "Test Student" in exported[0].stderr
    expected = _expected(root)
    _agree(_records(home, root, roster, (ON_TIME, LATE)), {ON_TIME: expected[ON_TIME], LATE: expected[LATE]})
    assert {row["SIS Login ID"] for row in _rows(root / "attention-canvas.csv")} == {"", *(r["id"] for r in roster)}
    assert {row["Email address"] for row in _rows(root / "attention-moodle.csv")} == {r["email"] for r in roster}


def test_the_copy1_student_agrees_too_and_generate_feedback_exits_0(course):
    """s003's notebook 04 is graded from its -Copy1 on nbgrader's path, as attnkit grade grades it, and its
    Untitled.ipynb stops nobody's feedback: generate_feedback exits 0 and s003's total is the same everywhere."""
    home, root, roster, feedback, _ = course
    assert feedback.returncode == 0, feedback.stdout[-3000:] + feedback.stderr[-3000:]
    _agree(_records(home, root, roster, (COPIED,)), {COPIED: _expected(root)[COPIED]})


def test_no_page_keeps_the_removed_rehearsal_student(course):
    home, root, roster, _, _ = course
    login = pwd.getpwuid(os.getuid()).pw_name
    assert login not in _report_totals(root)
    assert not (root / "feedback" / login).exists() and not (root / "autograded" / login).exists()
    assert set(read_assignment(root, ASSIGNMENT).submissions) == {row["id"] for row in roster}
    assert Path(root / "removed").is_dir()
