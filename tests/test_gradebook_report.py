"""`attnkit report COURSE_DIR`: an nbgrader course's class report reads the gradebook, and the late policy.

A real course of one notebook (01), autograded by nbgrader in attnkit's sandbox after a due date set with the command
docs/instructor/setup.md shows: alice hands in the solved notebook on time, and a TA then marks one of her cells down
and gives extra credit (saved through nbgrader's Gradebook API, the write formgrader's grading form makes); bob hands in
the solved notebook 25 hours late (two days started: the course's policy takes 20%); dana hands in a mistake the
checks name; carol and a roster student with a hostile id hand in nothing; erin's folder reaches submitted/ after the
autograde. alice's notebook carries a record of attnkit's checks she forged herself (full points, a mistake she did
not make): the sandboxed autograde writes its own over it.

The report must give each student the gradebook's total (checked against `nbgrader export`'s own and attnkit export's
Canvas file), a row for every student (carol and the hostile id marked as without a submission, erin as not
autograded), and say where its totals come from; bob's total must be the same on the report, the feedback page, the
exports and what formgrader's pages read less the penalty they leave out.
"""

import contextlib
import csv
import html
import json
import os
import re
import sqlite3

import pytest

from autograder import cli
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID, NOTEBOOKS
from autograder.integrations import nbgrader_course
from autograder.integrations.gradebook_report import _notebook_metadata
from autograder.integrations.lms import CANVAS_REQUIRED
from autograder.integrations.nbgrader_formgrader_late import LatePenalisedAPI
from autograder.integrations.nbgrader_gradebook import read_assignment, read_gradebook
from autograder.integrations.nbgrader_late_penalty import PerDayLatePenalty
from autograder.integrations.nbgrader_record import RECORD_KEY, read_record
from autograder.outputs.class_report import write_class_report
from devtools.class_fixtures import BY_ID, build_notebook

NB01 = NOTEBOOKS[0]
ASSIGNMENT = nbgrader_course.ASSIGNMENT
DUE = "2026-01-01 00:00:00 UTC"
LATE = "2026-01-02 01:00:00 UTC"  # 25 hours late: two days started
ON_TIME = "2025-12-31 12:00:00 UTC"
MANUAL_LOSS, EXTRA = 2.0, 1.5  # alice's softmax_naive marked down, extra credit on context_vectors
HOSTILE_ID = "<img src=x onerror=alert(1)>"
FORGED_MISTAKE = "mask_includes_diagonal"  # a mistake of notebook 03: nothing in notebook 01 can name it
MISTAKE = BY_ID["mistake-softmax-dim0"]


def _full(notebook=NB01):
    return float(sum(exercise.points for exercise in EXERCISES if exercise.notebook == notebook))


def _forged_record():
    """What a student might write into her notebook's metadata: full points on every exercise of 01, and a mistake."""
    checks = [{"id": f"{exercise.id}.forged", "exercise": exercise.id, "score": float(exercise.points),
               "max_score": float(exercise.points), "status": "passed", "misconception": FORGED_MISTAKE,
               "message": "forged", "hidden": False} for exercise in EXERCISES if exercise.notebook == NB01]
    return {"version": 1, "seed": 0, "checks": checks}


def _hand_in(root, student, notebook, stamp):
    folder = root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")


@pytest.fixture(scope="module")
def course(repo_root, tmp_path_factory):
    from nbgrader.api import Gradebook

    root = nbgrader_course.make_course(tmp_path_factory.mktemp("report") / "course", repo_root)
    for notebook in (root / "source" / ASSIGNMENT).glob("*.ipynb"):  # one notebook keeps the run short
        if notebook.stem != NB01:
            notebook.unlink()
    nbgrader_course.generate_release(root)
    # The due date as docs/instructor/setup.md sets it (the command's own words, in the course folder).
    nbgrader_course.run_nbgrader(root, "db", "assignment", "add", ASSIGNMENT, f"--duedate={DUE}")
    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:
        for student in ("alice", "bob", "carol", "dana"):
            gradebook.update_or_create_student(student, email=f"{len(student)}@example.org")
    # Written into the file: the course's guard refuses such an id (nbgrader_student_guard, installed in this process
    # by any earlier test that loaded the course's config here); a gradebook made before it may hold one.
    with contextlib.closing(sqlite3.connect(root / nbgrader_course.GRADEBOOK)) as db, db:
        db.execute("INSERT INTO student (id, email) VALUES (?, ?)", (HOSTILE_ID, f"{len(HOSTILE_ID)}@example.org"))
    solved = build_notebook(BY_ID["solved"], NB01, repo_root)
    forged = build_notebook(BY_ID["solved"], NB01, repo_root)
    forged.metadata[RECORD_KEY] = _forged_record()
    _hand_in(root, "alice", forged, ON_TIME)
    _hand_in(root, "bob", solved, LATE)
    _hand_in(root, "dana", build_notebook(MISTAKE, NB01, repo_root), ON_TIME)
    nbgrader_course.autograde(root)
    _hand_in(root, "erin", solved, ON_TIME)  # collected after the autograde: not graded yet
    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:  # formgrader's form's write
        naive = gradebook.find_grade("test_softmax_naive", NB01, ASSIGNMENT, "alice")
        naive.manual_score = EXERCISES_BY_ID["softmax_naive"].points - MANUAL_LOSS
        context = gradebook.find_grade("test_context_vectors", NB01, ASSIGNMENT, "alice")
        context.extra_credit = EXTRA
        gradebook.db.commit()
    return root


def _student_rows(page):
    """{student id: [cell texts]} of the report's student table, ids and cells as a browser shows them."""
    rows = {}
    for data_id, body in re.findall(r'<tr class="student" data-id="([^"]*)">(.*?)</tr>', page, re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)]
        rows[html.unescape(data_id)] = cells
    return rows


def _header(page):
    (header,) = re.findall(r'<table id="students"><tr>(.*?)</tr>', page, re.S)
    return [html.unescape(cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", header)]


@pytest.fixture(scope="module")
def report(course):
    assert cli.main(["report", str(course)]) == 0
    return (course / "class_report.html").read_text(encoding="utf-8")


def _nbgrader_export(course):
    nbgrader_course.export_grades(course)
    with (course / "grades.csv").open(newline="", encoding="utf-8") as handle:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_the_reports_totals_are_the_gradebooks_and_every_student_has_a_row(course, report):
    rows = _student_rows(report)
    header = _header(report)
    total = {student: float(cells[header.index("Total")]) for student, cells in rows.items()}
    gradebook = read_gradebook(course, ASSIGNMENT)
    enrolled = set(gradebook.enrolled or {})
    assert set(rows) == enrolled | {"erin"}  # every roster student, and the one not autograded yet
    assert {student: grade.score for student, grade in gradebook.students.items()} == \
        {student: total[student] for student in gradebook.students}
    exported = _nbgrader_export(course)  # nbgrader's own sums, every student of the gradebook
    assert exported == {student: total[student] for student in exported}
    full = _full()
    assert total["alice"] == full - MANUAL_LOSS + EXTRA  # formgrader's manual grade and extra credit count
    assert total["bob"] == pytest.approx(full * 0.8)  # 25 hours late: 20% off under the course's policy
    assert total["carol"] == total[HOSTILE_ID] == total["erin"] == 0

    notes = {student: cells[header.index("Notes")] for student, cells in rows.items()}
    assert "no submission: 0" in notes["carol"] and "no submission: 0" in notes[HOSTILE_ID]
    assert "not autograded yet" in notes["erin"]
    assert "late by 1 d 1 h" in notes["bob"] and f"formgrader's pages show {full:g}" in notes["bob"]
    assert "formgrader's grades count" in notes["alice"]
    notebook_cell = header.index(NB01[:2])
    assert rows["carol"][notebook_cell] == "0 (no submission)" and rows["erin"][notebook_cell] == "0 (not autograded)"
    assert "Feedback" not in header  # nbgrader's pages are named as a folder, not linked

    said = html.unescape(re.search(r'<p id="record">(.*?)</p>', report, re.S).group(1))
    assert said.startswith("Totals from the gradebook (") and "late penalties subtracted" in said
    assert "due 2026-01-01 00:00 UTC" in said and "no grading run" in said
    assert HOSTILE_ID not in report and html.escape(HOSTILE_ID) in report  # the id is text


@pytest.mark.slow
def test_the_mistakes_are_the_sandboxes_record_not_the_students(course, report):
    rows = _student_rows(report)
    mistakes = _header(report).index("Named mistakes")
    assert MISCONCEPTIONS_BY_ID[FORGED_MISTAKE].name["en"] not in report  # alice's forged record was replaced
    named = MISCONCEPTIONS_BY_ID[MISTAKE.misconception].name["en"]
    assert named in rows["dana"][mistakes]
    assert rows["alice"][mistakes] == rows["bob"][mistakes] == ""
    metadata = _notebook_metadata(course, ("autograded", "alice", ASSIGNMENT, f"{NB01}.ipynb"))
    checks = read_record(metadata)
    assert checks and all(not check["id"].endswith(".forged") for check in checks)


@pytest.mark.slow
def test_the_departing_steps_are_the_sandboxes_record_too(course, report):
    # One source of truth: the step nbgrader's sandboxed autograde kept in dana's record is the report's count.
    # Her softmax over the columns of the notes' symmetric scores equals their weights transposed, but a transpose
    # of what the scores read (x @ x.T, unchanged by it) proves nothing: she departs at the weights (issue 58).
    metadata = _notebook_metadata(course, ("autograded", "dana", ASSIGNMENT, f"{NB01}.ipynb"))
    assert {check.get("departure_step") for check in read_record(metadata)} - {None} == {"weights"}
    assert '<tr class="departure" data-step="weights" data-students="1">' in report
    assert report.count('<tr class="departure"') == 1  # alice and bob pass: no step of theirs


@pytest.mark.slow
def test_a_late_students_total_is_the_same_on_every_page(course, report):
    """bob's total: the gradebook, the report, nbgrader export, attnkit export, the feedback page, and what formgrader's
    student pages read (the course's LatePenalisedAPI, their backend: nbgrader's NbGraderAPI less the penalty)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    submission = read_assignment(course, ASSIGNMENT).submissions["bob"]
    full = _full()
    assert submission.seconds_late == 25 * 3600 and submission.late_penalty == pytest.approx(full * 0.2)
    total = submission.total

    header = _header(report)
    assert float(_student_rows(report)["bob"][header.index("Total")]) == pytest.approx(total)
    assert _nbgrader_export(course)["bob"] == pytest.approx(total)

    roster = course / "canvas-roster.csv"
    roster.write_text(",".join([*CANVAS_REQUIRED, "Attention (1)"]) + "\nPoints Possible,,,,,100\n"
                      + "".join(f"{student},{number},,{student},A,\n"
                                for number, student in enumerate(("alice", "bob", "carol", "dana"), start=1)),
                      encoding="utf-8")
    out = course / "canvas.csv"
    assert cli.main(["export", str(course), "--canvas", str(roster), "--out", str(out)]) == 0
    with out.open(newline="", encoding="utf-8") as handle:
        canvas = {row["SIS Login ID"]: row["Attention (1)"] for row in csv.DictReader(handle)}
    assert float(canvas["bob"]) == pytest.approx(total)

    nbgrader_course.generate_feedback(course)
    page = (course / "feedback" / "bob" / ASSIGNMENT / f"{NB01}.html").read_text(encoding="utf-8")
    shown = re.search(r"\(Score: ([\d.]+) / ([\d.]+)\)", page)
    assert float(shown.group(1)) == pytest.approx(total, abs=0.01)  # the page rounds to 2 places
    assert f"Late submission penalty (Score: -{submission.late_penalty:.1f}" in page

    config = Config()
    config.merge(PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config())
    api = LatePenalisedAPI(coursedir=CourseDirectory(config=config), config=config)
    (on_page,) = api.get_student_submissions("bob")  # the student page's assignments table
    assert on_page["score"] == pytest.approx(total) and on_page["late_submission_penalty"] == submission.late_penalty
    (nbgraders,) = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config).get_student_submissions("bob")
    assert nbgraders["score"] == full  # nbgrader's own: before the penalty


def test_the_course_policy_takes_a_tenth_per_day_started_and_keeps_nbgraders_two():
    from traitlets.config import Config

    plugin = PerDayLatePenalty()
    assert plugin.late_submission_penalty("s", 18.0, 1) == pytest.approx(1.8)
    assert plugin.late_submission_penalty("s", 18.0, 24 * 3600) == pytest.approx(1.8)
    assert plugin.late_submission_penalty("s", 18.0, 24 * 3600 + 1) == pytest.approx(3.6)
    assert plugin.late_submission_penalty("s", 18.0, 40 * 24 * 3600) == 18.0  # never more than the points
    config = Config()
    config.LateSubmissionPlugin.penalty_method = "zero"  # nbgrader's own setting reaches the course's plugin
    assert PerDayLatePenalty(config=config).late_submission_penalty("s", 18.0, 5) == 18.0
    config.LateSubmissionPlugin.penalty_method = "none"
    assert PerDayLatePenalty(config=config).late_submission_penalty("s", 18.0, 5) is None


def test_the_course_config_sets_the_policy(repo_root):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert config.AssignLatePenalties.plugin_class == "autograder.integrations.nbgrader_late_penalty.PerDayLatePenalty"
    assert config.PerDayLatePenalty.percent_per_day == 10


def test_attnkit_grades_report_says_its_totals_are_not_the_gradebooks(tmp_path):
    course = tmp_path / "course"
    (course / "grades").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    page = html.unescape(write_class_report(course / "grades", []).read_text(encoding="utf-8"))
    assert "Totals from attnkit grade's records, not the gradebook" in page
    assert "attnkit report COURSE_DIR" in page
    alone = html.unescape(write_class_report(tmp_path / "grades", []).read_text(encoding="utf-8"))  # no course
    assert "Totals from attnkit grade's records" in alone and "not the gradebook" not in alone


def test_a_record_not_in_the_shape_written_is_no_record():
    good = _forged_record()
    assert read_record({RECORD_KEY: good})
    for bad in (None, [], {"version": 2, "checks": []}, {"version": 1, "checks": "x"},
                {"version": 1, "checks": [{**good["checks"][0], "score": float("nan")}]},
                {"version": 1, "checks": [{**good["checks"][0], "hidden": "yes"}]},
                {"version": 1, "checks": [{**good["checks"][0], "status": "<b>"}]},
                {"version": 1, "checks": [good["checks"][0]] * 1001}):
        assert read_record({RECORD_KEY: bad}) is None, bad
    shown = read_record({RECORD_KEY: {"version": 1, "checks": [{**good["checks"][0], "id": "a\x1b[31m"}]}})
    assert shown[0]["id"] == "a\\x1b[31m"  # cleaned


def test_an_autograded_notebook_is_read_without_following_a_link(tmp_path):
    folder = tmp_path / "autograded" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    secret = tmp_path / "elsewhere.ipynb"
    secret.write_text(json.dumps({"metadata": {RECORD_KEY: _forged_record()}}), encoding="utf-8")
    (folder / f"{NB01}.ipynb").symlink_to(secret)
    assert _notebook_metadata(tmp_path, ("autograded", "alice", ASSIGNMENT, f"{NB01}.ipynb")) is None
    os.symlink(folder, tmp_path / "autograded" / "mallory")  # a student folder that is a link
    assert _notebook_metadata(tmp_path, ("autograded", "mallory", f"{NB01}.ipynb")) is None
    assert _notebook_metadata(tmp_path, ("autograded", "..", "elsewhere.ipynb")) is None
    (folder / "02.ipynb").write_text("not json", encoding="utf-8")
    assert _notebook_metadata(tmp_path, ("autograded", "alice", ASSIGNMENT, "02.ipynb")) == {}
    assert _notebook_metadata(tmp_path, ("autograded", "alice", ASSIGNMENT, "none.ipynb")) is None
