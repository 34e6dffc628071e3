"""In an nbgrader course the gradebook is the record: `attnkit export COURSE` and `nbgrader export` read it.

A real course of one notebook (01) and two students, autograded by nbgrader in attnkit's sandbox: alice on time
(no timestamp.txt, as when a TA copies a submission by hand), bob late under nbgrader's "zero" late policy. Then,
as a TA in formgrader would, a manual grade and extra credit are PUT through formgrader's HTTP API (a jupyter
server with nbgrader's formgrader extension, on 127.0.0.1, logged in with a token; the PUT carries the XSRF cookie
and header formgrader's page sends, and the form's values as strings, as its inputs give them). The Canvas and
Moodle files must show nbgrader's totals after those changes: autograded + manual + extra credit - late penalty.
Expected numbers come from the catalogue's points and the changes made here, and are checked against nbgrader's
own export as well.
"""

import contextlib
import csv
import http.cookiejar
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import start_chromium, wait_until

from autograder import cli
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.integrations import nbgrader_course
from autograder.integrations.course_formgrader import free_port
from autograder.integrations.lms import CANVAS_REQUIRED
from autograder.integrations.nbgrader_export import NO_SUBMISSION, NO_TIMESTAMP

NB01 = "01_attention_without_weights"
ASSIGNMENT = nbgrader_course.ASSIGNMENT
DUE = "2026-01-01 00:00:00"
LATE = "2026-01-02 00:00:00"
# What a TA changes in formgrader: (student, exercise) -> the form's fields, as strings (the inputs' values).
MANUAL_LOSS = 2  # alice's softmax_naive marked down by this much
ALICE_EXTRA, BOB_EXTRA = "1.5", "2"
HOSTILE_FIRST_NAME = '=HYPERLINK("http://attacker.example","x")'
HOSTILE_ID = "=cmd|' /C calc'!A0"  # a hub user name nbgrader's exchange would collect as is
SERVER_START_S = 90

pytestmark = pytest.mark.slow


def _points(notebook):
    return sum(exercise.points for exercise in EXERCISES if exercise.notebook == notebook)


@pytest.fixture(scope="module")
def course(repo_root, tmp_path_factory):
    from nbgrader.api import Gradebook

    root = nbgrader_course.make_course(tmp_path_factory.mktemp("gradebook") / "course", repo_root)
    for notebook in (root / "source" / ASSIGNMENT).glob("*.ipynb"):  # one notebook keeps the run short
        if notebook.stem != NB01:
            notebook.unlink()
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    nbgrader_course.generate_release(root)
    with Gradebook(f"sqlite:///{root / nbgrader_course.GRADEBOOK}", nbgrader_course.COURSE_ID) as gradebook:
        gradebook.update_or_create_assignment(ASSIGNMENT, duedate=f"{DUE} UTC")
        gradebook.update_or_create_student("alice", last_name="Lovelace, Jr.", first_name=HOSTILE_FIRST_NAME)
        gradebook.update_or_create_student("bob")  # no name, as nbgrader autograde adds a student
        gradebook.update_or_create_student("carol", last_name="Nohand", first_name="Carol")  # never submits
    # Never submits. Written into the file: the course's guard refuses such an id now (nbgrader_student_guard,
    # installed in this process by any test that loaded the course's config here); a gradebook made before it, or a
    # hub's user name in another course, may hold one, and the export must still show it as text.
    with contextlib.closing(sqlite3.connect(root / nbgrader_course.GRADEBOOK)) as db, db:
        db.execute("INSERT INTO student (id, first_name, last_name) VALUES (?, ?, ?)",
                   (HOSTILE_ID, "Mallory", "Nohand"))
    solved = root / "source" / ASSIGNMENT
    nbgrader_course.submit(root, "alice", solved)
    nbgrader_course.submit(root, "bob", solved)
    (root / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt").write_text(f"{LATE} UTC")
    nbgrader_course.autograde(root)
    return root


# --- formgrader, driven over HTTP as its page does ------------------------------------------------------------------


class Formgrader:
    """A browser's session with formgrader: logged in by the token once, then cookies (login and _xsrf) only."""

    def __init__(self, url, token):
        self.url, self.token = url, token
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def call(self, path, method="GET", body=None, timeout=30):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        xsrf = next((cookie.value for cookie in self.cookies if cookie.name == "_xsrf"), None)
        if method != "GET" and xsrf:
            headers["X-CSRFToken"] = xsrf  # what formgrader's backbone_xsrf.js sends on save
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with self.opener.open(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8")

    def json(self, path):
        status, text = self.call(path)
        assert status == 200, (path, status, text[:500])
        return json.loads(text)


@contextlib.contextmanager
def formgrader(course_root, workdir):
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.update({
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),  # nbgrader runs alembic
        "JUPYTER_CONFIG_DIR": str(workdir / "config"), "JUPYTER_DATA_DIR": str(workdir / "data"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"), "IPYTHONDIR": str(workdir / "ipython"),
        "JUPYTER_TOKEN": token,  # never on a command line: any process on the machine reads those
    })
    command = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={course_root}"]
    log = workdir / "server.log"
    with open(log, "wb") as handle:  # formgrader reads nbgrader_config.py from its working directory
        server = subprocess.Popen(command, cwd=course_root, env=env, stdin=subprocess.DEVNULL, stdout=handle,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    session = Formgrader(f"http://127.0.0.1:{port}", token)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, f"jupyter server exited:\n{log.read_text(errors='replace')[-3000:]}"
            with contextlib.suppress(OSError):
                if session.call(f"/formgrader?token={token}", timeout=5)[0] == 200:  # logs in: sets the cookie
                    break
            assert time.monotonic() < deadline, f"no formgrader in {SERVER_START_S} s:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)
        yield session
    finally:
        with contextlib.suppress(OSError, urllib.error.URLError):
            session.call("/api/shutdown", method="POST", body={}, timeout=5)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def _grade_in_formgrader(session, student, exercise_id, **fields):
    """Find the student's grade cell through formgrader's API and save `fields` as its grading form does."""
    submissions = session.json(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NB01}")
    submission = next(item for item in submissions if item["student"] == student)
    grades = session.json(f"/formgrader/api/grades?submission_id={submission['id']}")
    grade = next(item for item in grades if item["name"] == f"test_{exercise_id}")
    status, text = session.call(f"/formgrader/api/grade/{grade['id']}", method="PUT", body={**grade, **fields})
    assert status == 200, text
    return session.json(f"/formgrader/api/grade/{grade['id']}")


@pytest.fixture(scope="module")
def graded_by_hand(course, tmp_path_factory):
    """The course after a TA's changes in formgrader; returns the grades formgrader reports back."""
    naive = EXERCISES_BY_ID["softmax_naive"].points
    with formgrader(course, tmp_path_factory.mktemp("formgrader")) as session:
        changed = [
            _grade_in_formgrader(session, "alice", "softmax_naive", manual_score=str(naive - MANUAL_LOSS),
                                 extra_credit=None),
            _grade_in_formgrader(session, "alice", "context_vectors", manual_score=None, extra_credit=ALICE_EXTRA),
            _grade_in_formgrader(session, "bob", "softmax_stable", manual_score=None, extra_credit=BOB_EXTRA),
        ]
    return course, changed


def _expected_totals():
    full = _points(NB01)
    # bob handed in late under the "zero" policy: his penalty is his whole autograded score
    return {"alice": full - MANUAL_LOSS + float(ALICE_EXTRA), "bob": full + float(BOB_EXTRA) - full}


def _read(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _canvas_roster(path, logins):
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CANVAS_REQUIRED, "Attention (48213)"])
        writer.writerow(["    Points Possible", "", "", "", "", "100.00"])
        for number, login in enumerate(logins, start=101):
            writer.writerow([login.title(), str(number), f"S{number}", login, "Section 1", ""])
    return path


def test_formgrader_changes_reach_the_canvas_and_moodle_files(graded_by_hand, tmp_path, capsys):
    course, changed = graded_by_hand
    assert float(changed[0]["manual_score"]) == EXERCISES_BY_ID["softmax_naive"].points - MANUAL_LOSS
    expected = _expected_totals()

    roster = _canvas_roster(tmp_path / "canvas-roster.csv", ["alice", "bob", "carol"])
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out), "--per-exercise"]) == 0
    rows = _read(out)
    header = rows[0]
    assert header[:6] == [*CANVAS_REQUIRED, "Attention (48213)"]
    assert float(rows[1][5]) == _points(NB01)  # Points Possible: the gradebook's assignment, one notebook here
    by_login = {row[3]: dict(zip(header, row, strict=True)) for row in rows[2:]}
    # carol is in the gradebook and handed nothing in: 0, as nbgrader export gives it
    assert {login: float(row["Attention (48213)"]) for login, row in by_login.items()} == {**expected, "carol": 0.0}
    column = {exercise.id: f"Attention: {exercise.title['en']}" for exercise in EXERCISES}
    alice = by_login["alice"]
    assert float(alice[column["softmax_naive"]]) == EXERCISES_BY_ID["softmax_naive"].points - MANUAL_LOSS
    assert float(alice[column["context_vectors"]]) == EXERCISES_BY_ID["context_vectors"].points + float(ALICE_EXTRA)
    assert float(alice[column["causal_mask"]]) == 0.0  # a notebook this course does not have
    notes = {(row[0], row[1]) for row in _read(out.with_name(out.name + ".notes.csv"))[1:]}
    assert any(student == "bob" and "late penalty" in note for student, note in notes), notes
    assert any(student == "alice" and "formgrader" in note and "test_softmax_naive" in note for student, note in notes)
    assert ("carol", "in the gradebook and the roster, no submission: 0") in notes

    roster = tmp_path / "moodle-roster.csv"
    roster.write_text("First name,Last name,Email address,Username\nAlice,L,alice@uni.example,alice\n"
                      "Bob,B,bob@uni.example,bob\n", encoding="utf-8")
    out = tmp_path / "moodle.csv"
    assert cli.main(["export", str(course), "--moodle", str(roster), "--id-column", "email", "--out", str(out)]) == 0
    assert {row[0]: float(row[1]) for row in _read(out)[1:]} == {
        f"{student}@uni.example": total for student, total in expected.items()}

    # the same totals as nbgrader's own export of the gradebook
    with nbgrader_course.export_grades(course).open(newline="", encoding="utf-8") as handle:
        nbgrader_rows = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    assert {student: nbgrader_rows[student] for student in expected} == expected


def test_a_graded_student_missing_from_the_roster_exits_1(graded_by_hand, tmp_path, capsys):
    course, _ = graded_by_hand
    roster = _canvas_roster(tmp_path / "roster.csv", ["alice"])
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 1
    assert "bob" in capsys.readouterr().err
    notes = _read(out.with_name(out.name + ".notes.csv"))
    assert any(row[0] == "bob" and "not in the roster" in row[1] for row in notes)


def test_a_roster_student_unknown_to_the_gradebook_is_refused_and_nothing_is_written(graded_by_hand, tmp_path,
                                                                                     capsys):
    """dan is on the LMS roster, not in the gradebook: 0 would overwrite his LMS grade on a guess."""
    course, _ = graded_by_hand
    roster = _canvas_roster(tmp_path / "roster.csv", ["alice", "bob", "dan"])
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Dan (ID 103), SIS Login ID dan" in err and "nothing was written" in err
    assert not out.exists() and not out.with_name(out.name + ".notes.csv").exists()


def test_nbgrader_export_names_timestamps_and_quoting(graded_by_hand):
    course, _ = graded_by_hand
    path = nbgrader_course.export_grades(course)
    text = path.read_text(encoding="utf-8")
    assert "None" not in text
    with path.open(newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"alice", "bob", "carol", "'" + HOSTILE_ID}  # shown as text, never run
    alice, bob, carol = rows["alice"], rows["bob"], rows["carol"]
    assert alice["last_name"] == "Lovelace, Jr."  # a comma stays inside its cell
    assert alice["first_name"] == "'" + HOSTILE_FIRST_NAME  # shown as text, never run as a formula
    assert alice["timestamp"] == NO_TIMESTAMP  # copied by hand: nbgrader recorded none
    assert bob["timestamp"].startswith(LATE) and float(bob["late_submission_penalty"]) == _points(NB01)
    assert (bob["last_name"], bob["first_name"]) == ("", "")
    assert carol["timestamp"] == NO_SUBMISSION and float(carol["score"]) == 0.0
    assert (carol["first_name"], carol["last_name"]) == ("Carol", "Nohand")
    assert alice["duedate"].startswith(DUE)


def test_formgraders_pages_show_each_total_less_its_late_penalty(graded_by_hand, tmp_path):
    """bob's late penalty (the "zero" policy: his whole autograded score) is subtracted on every formgrader page that
    shows a total, as in the export; the total columns say so. Read through its API and seen in Chromium."""
    from selenium.webdriver.common.by import By
    from test_course_setup import _browser_binaries

    from autograder.integrations.nbgrader_formgrader_late import LABEL

    course, _ = graded_by_hand
    expected, full = _expected_totals(), _points(NB01)
    with formgrader(course, tmp_path) as session:
        students = {row["id"]: row["score"] for row in session.json("/formgrader/api/students")}
        assert {student: students[student] for student in expected} == expected
        submissions = {row["student"]: row for row in session.json(f"/formgrader/api/submissions/{ASSIGNMENT}")}
        assert {student: submissions[student]["score"] for student in expected} == expected
        assert submissions["bob"]["late_submission_penalty"] == full and submissions["bob"]["code_score"] > full
        (bobs,) = session.json("/formgrader/api/student_submissions/bob")
        assert bobs["score"] == expected["bob"]
        (bobs,) = session.json(f"/formgrader/api/student_notebook_submissions/bob/{ASSIGNMENT}")
        assert bobs["score"] == expected["bob"]
        notebooks = {row["student"]: row["score"]
                     for row in session.json(f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NB01}")}
        assert {student: notebooks[student] for student in expected} == expected

        driver = start_chromium(*_browser_binaries(), tmp_path, 60)
        try:
            driver.get(f"{session.url}/formgrader?token={session.token}")
            for page in ("manage_students", f"manage_submissions/{ASSIGNMENT}", "manage_students/bob",
                         f"manage_students/bob/{ASSIGNMENT}", f"gradebook/{ASSIGNMENT}/{NB01}"):
                driver.get(f"{session.url}/formgrader/{page}")
                bob = f"{expected['bob']:g} / {full:g}"
                wait_until(driver, lambda: any(bob in row.text  # noqa: B023 -- read at once
                                               for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")),
                           60, f"bob's {bob} on {page}")
                headers = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "table thead th")]
                assert any(header.endswith(LABEL) for header in headers), (page, headers)
        finally:
            driver.quit()


# --- refusals (no nbgrader run) -------------------------------------------------------------------------------------


def test_a_file_that_is_not_a_gradebook_is_refused_and_left_as_it_was(tmp_path, capsys):
    roster = _canvas_roster(tmp_path / "roster.csv", ["alice"])
    course = tmp_path / "course"
    course.mkdir()
    fake = course / nbgrader_course.GRADEBOOK
    fake.write_bytes(b"")  # an empty file: nbgrader would create its tables in it
    before = fake.read_bytes()
    out = tmp_path / "out.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 2
    assert "not a readable nbgrader gradebook" in capsys.readouterr().err
    assert fake.read_bytes() == before and not out.exists()
    shutil.copyfile(roster, fake)  # text, not SQLite
    assert cli.main(["export", str(fake), "--canvas", str(roster), "--out", str(out)]) == 2
    assert not out.exists()


def test_a_course_without_a_gradebook_or_the_assignment_is_refused(tmp_path, capsys):
    from nbgrader.api import Gradebook

    roster = _canvas_roster(tmp_path / "roster.csv", ["alice"])
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    out = tmp_path / "out.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 2
    assert "autograde the submissions first" in capsys.readouterr().err
    with Gradebook(f"sqlite:///{course / nbgrader_course.GRADEBOOK}", "attnkit") as gradebook:
        gradebook.add_assignment("week1")
        gradebook.add_student("alice")
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no assignment 'attention'" in err and "week1" in err  # the gradebook's assignments are named
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out), "--assignment", "week1"]) == 0
    assert _read(out)[2][5] == "0"  # alice, in the gradebook and the roster, submitted nothing
    grades = tmp_path / "grades"
    (grades / "students").mkdir(parents=True)
    assert cli.main(["export", str(grades), "--canvas", str(roster), "--out", str(out), "--assignment", "x"]) == 2
