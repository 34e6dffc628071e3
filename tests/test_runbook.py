"""The instructor's runbook end to end, as the pages show it, in a temporary HOME: `attnkit course new` with a
roster, the due date, release, a rehearsing student's submission, collect, autograde, feedback, the class report from
the gradebook (docs/instructor/setup.md's section, every command verbatim), then formgrader opened with `attnkit
course formgrader`, a manual grade saved through its HTTP API as its grading page saves it, the class report written
again (the manual grade in its total) and the LMS files written by docs/instructor/export.md's own commands from the
course folder: the manual grade is in Canvas's; Moodle's own grade export is matched on the roster's
emails and names the rehearsing login, which setup.md's "Remove the rehearsal student" command then takes out of the
gradebook, formgrader's list, the course's folders and the exchange (`nbgrader collect` brings nothing back), after
which the export exits 0.

test_docs.py leaves the runbook's section to this test (SECTIONS_RUN_BY_TEST), so it runs once per suite.
"""

import contextlib
import csv
import datetime
import html
import io
import json
import os
import pwd
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from test_docs import REPO, git_status, page_commands, run_here
from test_gradebook_export import Formgrader

from autograder.course.exercises import EXERCISES_BY_ID
from autograder.integrations.nbgrader_gradebook import read_assignment

SETUP = REPO / "docs" / "instructor" / "setup.md"
EXPORT = REPO / "docs" / "instructor" / "export.md"
ROSTER_EXAMPLE = REPO / "docs" / "instructor" / "roster-example.csv"
RUNBOOK_SECTION = "A course of your own, step by step"
REMOVAL_SECTION = "Remove the rehearsal student"
GRADED_BY_HAND = "softmax_naive"  # the rehearsal hands in the untouched release (0): the TA gives this one full marks


def _section_commands(page, section):
    """The section's commands that test_docs.py lets run here (formgrader's server is started below instead)."""
    commands = [command.line for command in run_here(page_commands(page)) if command.section == section]
    assert commands, f"{page.name} has no console command under {section!r}"
    return commands


def _bash(lines, home, cwd, timeout=1200, status=0):
    """The lines verbatim, in order, in one bash with HOME set, as a reader pastes them into a terminal; its exit
    status must be `status` (None: any, for the caller to check)."""
    script = "set -euo pipefail\n" + "".join(f"echo '>>> {line}'\n{line}\n" for line in lines)
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                         env={**os.environ, "HOME": str(home)})
    assert status is None or ran.returncode == status, f"{ran.stdout[-4000:]}\n{ran.stderr[-4000:]}"
    return ran


@contextlib.contextmanager
def _formgrader_as_documented(course, home):
    """`attnkit course formgrader DIR`, as setup.md shows it; yields a logged-in session on the URL it printed."""
    env = {**os.environ, "HOME": str(home),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "course", "formgrader", str(course)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                               start_new_session=True)
    try:
        line = process.stdout.readline()  # printed once the server answers
        assert "open http://127.0.0.1:" in line, f"no URL printed:\n{line}{process.stdout.read()}"
        url = urlsplit(line.split("open ", 1)[1].strip())
        token = parse_qs(url.query)["token"][0]
        session = Formgrader(f"{url.scheme}://{url.netloc}", token)
        status, _ = session.call(f"/formgrader?token={token}")  # logs in as the browser does: sets the cookies
        assert status == 200
        yield session
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _give_full_marks(session, student, exercise_id):
    submissions = session.json(f"/formgrader/api/submitted_notebooks/attention/{_notebook_of(exercise_id)}")
    submission = next(item for item in submissions if item["student"] == student)
    grades = session.json(f"/formgrader/api/grades?submission_id={submission['id']}")
    grade = next(item for item in grades if item["name"] == f"test_{exercise_id}")
    assert grade["auto_score"] == 0, grade  # the untouched release
    full = str(EXERCISES_BY_ID[exercise_id].points)  # formgrader's form sends text
    status, text = session.call(f"/formgrader/api/grade/{grade['id']}", method="PUT",
                                body={**grade, "manual_score": full})
    assert status == 200, text


def _notebook_of(exercise_id):
    return Path(EXERCISES_BY_ID[exercise_id].notebook).stem


def _rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


@pytest.mark.slow
def test_the_runbook_from_course_new_to_the_lms_files_with_a_manual_grade_between(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    course = home / "attnkit-course"
    student = pwd.getpwuid(os.getuid()).pw_name  # setup.md's rehearsal: the instructor's own login is the student

    before = git_status()
    _bash(_section_commands(SETUP, RUNBOOK_SECTION), home, cwd=REPO)
    assert git_status() == before  # nothing written into the checkout
    assert (course / "submitted" / student / "attention").is_dir()
    assert len(list((course / "feedback" / student / "attention").glob("*.html"))) == 4
    assert len(list((home / "rehearsal" / "attention" / "feedback").glob("*/*.html"))) == 4  # fetched back
    assert "s001,Lovelace,Ada" in (course / "grades.csv").read_text(encoding="utf-8").replace('"', "")
    grades = read_assignment(course, "attention")
    assert grades.duedate == datetime.datetime(2027, 1, 15, 9, 0)  # 17:00 in Shanghai, stored in UTC
    assert _report_totals(course) == {**dict.fromkeys(_roster_ids(), 0.0), student: 0.0}  # every student a row

    with _formgrader_as_documented(course, home) as session:
        _give_full_marks(session, student, GRADED_BY_HAND)
    report_line = next(line for line in _section_commands(SETUP, RUNBOOK_SECTION) if line.startswith("attnkit report"))
    _bash([report_line], home, cwd=course)
    points = EXERCISES_BY_ID[GRADED_BY_HAND].points
    assert _report_totals(course)[student] == points  # the manual grade, read from the gradebook: no grading run

    # The LMS's own exports, as an instructor downloads them into the course folder (the rosters export.md names):
    # Canvas's, with the rehearsing login as a Canvas user and Canvas's Test Student; Moodle's Plain text export as
    # Moodle writes it, its students named by the emails of docs/instructor/roster-example.csv.
    (course / "canvas-gradebook.csv").write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Attention (48213)\n"
        "Points Possible,,,,,100\n"
        f"Rehearsal,1,9001,{student},A,\n"
        "\"Lovelace, Ada\",2,9002,s001,A,\n"
        "\"Student, Test\",3,,,A,\n", encoding="utf-8")
    roster = list(csv.DictReader(io.StringIO(ROSTER_EXAMPLE.read_text(encoding="utf-8"))))
    exported = str(int(time.time()))
    moodle = io.StringIO()
    writer = csv.writer(moodle, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(["First name", "Last name", "ID number", "Institution", "Department", "Email address",
                     "Assignment: Attention (Real)", "Last downloaded from this course"])
    writer.writerows([row["first_name"], row["last_name"], "", "", "", row["email"], "-", exported] for row in roster)
    (course / "moodle-grades.csv").write_text(moodle.getvalue(), encoding="utf-8")
    canvas_line, moodle_line = [command.line for command in page_commands(EXPORT)
                                if command.section == "From an nbgrader course: the gradebook"]
    assert "--canvas" in canvas_line and "--moodle" in moodle_line
    export = _bash([canvas_line], home, cwd=course)
    assert "Traceback" not in export.stderr and "Test Student" in export.stderr  # left out, and named

    canvas = {row["SIS Login ID"]: row for row in _rows(course / "attention-canvas.csv")}
    assert float(canvas[student]["Attention (48213)"]) == points  # 0 autograded, then the manual grade
    assert float(canvas["s001"]["Attention (48213)"]) == 0  # in the gradebook and on the roster, no submission: 0
    assert set(canvas) == {"", student, "s001"} and canvas[""]["Student"] == "Points Possible"  # no Test Student

    # Moodle's roster does not know the rehearsing login: the class is written (by the roster's emails), the login
    # named once, and the command exits 1 until the rehearsal student is removed (setup.md's next section).
    before = _bash([moodle_line], home, cwd=course, status=1)
    assert sum(f": {student}: " in line for line in before.stderr.splitlines()) == 1, before.stderr
    emails = {row["email"] for row in roster}
    assert {row["Email address"]: float(row["Attention"]) for row in _rows(course / "attention-moodle.csv")} == \
        dict.fromkeys(emails, 0.0)  # the roster's students handed nothing in

    exchange = course / "exchange" / "attnkit"
    assert any(path.name.startswith(f"{student}+") for path in (exchange / "inbound").iterdir())
    released = set((exchange / "feedback").iterdir())
    assert len(released) == 4
    removal = _bash(_section_commands(SETUP, REMOVAL_SECTION), home, cwd=REPO)
    assert "the gradebook (1 submission and their grades)" in removal.stdout, removal.stdout
    for folder in ("submitted", "autograded", "feedback"):
        assert not (course / folder / student).exists()
    assert not any(path.name.startswith(f"{student}+") for path in (exchange / "inbound").iterdir())
    assert not any(path.exists() for path in released)  # the feedback released to the login, found by its secret
    (kept,) = (course / "removed").iterdir()
    assert (kept / "submitted" / student / "attention").is_dir() and (kept / "gradebook.json").is_file()
    assert _formgraders_students(course) == {row["id"] for row in roster}  # "None, None" no more
    _bash(["nbgrader collect attention"], home, cwd=course)  # the exchange no longer hands the login back
    assert not (course / "submitted" / student).exists()

    after = _bash([moodle_line], home, cwd=course)  # every export: the class, and exit 0
    assert f": {student}: " not in after.stderr
    assert {row["Email address"] for row in _rows(course / "attention-moodle.csv")} == emails


def _roster_ids():
    return {row["id"] for row in csv.DictReader(io.StringIO(ROSTER_EXAMPLE.read_text(encoding="utf-8")))}


def _report_totals(course):
    """{student id: total} of COURSE/class_report.html's student table, which says its totals are the gradebook's."""
    page = (course / "class_report.html").read_text(encoding="utf-8")
    assert '<p id="record">Totals from the gradebook (' in page
    rows = re.findall(r'<tr class="student" data-id="([^"]*)"><td>[^<]*</td><td class="n">([^<]*)</td>', page)
    return {html.unescape(student): float(total) for student, total in rows}


def _formgraders_students(course):
    """The student ids formgrader lists: nbgrader's NbGraderAPI (formgrader's backend), configured as the course, in a
    process of its own (the course's config chooses the course's points, which a process that graded refuses)."""
    script = ("import json; from nbgrader.apps import NbGraderAPI; from nbgrader.coursedir import CourseDirectory; "
              "from traitlets.config import Config; from traitlets.config.loader import PyFileConfigLoader; "
              "config = Config(); config.merge(PyFileConfigLoader('nbgrader_config.py', path='.').load_config()); "
              "print(json.dumps([s['id'] for s in NbGraderAPI(coursedir=CourseDirectory(config=config), "
              "config=config).get_students()]))")
    listed = subprocess.run([sys.executable, "-c", script], cwd=course, capture_output=True, text=True, check=True)
    return set(json.loads(listed.stdout.strip().splitlines()[-1]))
