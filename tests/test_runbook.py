"""The instructor's runbook end to end, as the pages show it, in a temporary HOME: `attnkit course new` with a
roster, release, a rehearsing student's submission, collect, autograde, feedback (docs/instructor/setup.md's
section, every command verbatim), then formgrader opened with `attnkit course formgrader`, a manual grade saved
through its HTTP API as its grading page saves it, and the LMS files written by docs/instructor/export.md's own
commands from the course folder: the manual grade is in both.

test_docs.py leaves the runbook's section to this test (SECTIONS_RUN_BY_TEST), so it runs once per suite.
"""

import contextlib
import csv
import io
import os
import pwd
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from test_docs import REPO, git_status, page_commands, run_here
from test_gradebook_export import Formgrader

from autograder.course.exercises import EXERCISES_BY_ID

SETUP = REPO / "docs" / "instructor" / "setup.md"
EXPORT = REPO / "docs" / "instructor" / "export.md"
RUNBOOK_SECTION = "A course of your own, step by step"
GRADED_BY_HAND = "softmax_naive"  # the rehearsal hands in the untouched release (0): the TA gives this one full marks


def _section_commands(page, section):
    """The section's commands that test_docs.py lets run here (formgrader's server is started below instead)."""
    commands = [command.line for command in run_here(page_commands(page)) if command.section == section]
    assert commands, f"{page.name} has no console command under {section!r}"
    return commands


def _bash(lines, home, cwd, timeout=1200):
    """The lines verbatim, in order, in one bash with HOME set, as a reader pastes them into a terminal."""
    script = "set -euo pipefail\n" + "".join(f"echo '>>> {line}'\n{line}\n" for line in lines)
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                         env={**os.environ, "HOME": str(home)})
    assert ran.returncode == 0, f"{ran.stdout[-4000:]}\n{ran.stderr[-4000:]}"
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

    with _formgrader_as_documented(course, home) as session:
        _give_full_marks(session, student, GRADED_BY_HAND)

    # The LMS's own exports, as an instructor downloads them into the course folder (the rosters export.md names).
    (course / "canvas-gradebook.csv").write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Attention (48213)\n"
        "Points Possible,,,,,100\n"
        f"Rehearsal,1,9001,{student},A,\n"
        "\"Lovelace, Ada\",2,9002,s001,A,\n", encoding="utf-8")
    (course / "moodle-grades.csv").write_text(
        f"First name,Surname,Email address\nRe,Hearsal,{student}\nAda,Lovelace,s001\n", encoding="utf-8")
    export_lines = [command.line for command in page_commands(EXPORT)
                    if command.section == "From an nbgrader course: the gradebook"]
    assert len(export_lines) == 2, export_lines  # Canvas, Moodle
    export = _bash(export_lines, home, cwd=course)
    assert "Traceback" not in export.stderr

    points = EXERCISES_BY_ID[GRADED_BY_HAND].points
    canvas = {row["SIS Login ID"]: row for row in _rows(course / "attention-canvas.csv")}
    assert float(canvas[student]["Attention (48213)"]) == points  # 0 autograded, then the manual grade
    assert float(canvas["s001"]["Attention (48213)"]) == 0  # on the roster, no submission: 0 and a note
    moodle = {row["Email address"]: row for row in _rows(course / "attention-moodle.csv")}
    assert float(moodle[student]["Attention"]) == points
