"""`attnkit course remove-student DIR ID` (docs/instructor/setup.md, "Remove the rehearsal student").

A course laid out as nbgrader leaves it after the rehearsal (docs/instructor/setup.md, steps 4 and 5), built here by
hand in a temporary folder: the gradebook (nbgrader's Gradebook API) with two roster students and the rehearsing
login `root`, each graded student's folder in submitted/, autograded/ and feedback/ (with nbgrader's timestamp and
submission secret), their submissions in the exchange's inbound/ and their feedback released to the exchange under the
name `nbgrader release_feedback` gives it. Before the removal the LMS export names `root` once and exits 1; after it,
`root` is gone from the gradebook, from what formgrader shows (nbgrader's own NbGraderAPI, formgrader's backend) and
from every folder, everything is kept in DIR/removed/, and the export exits 0. The removal never acts through a link
and refuses an id nbgrader cannot have made. tests/test_runbook.py runs the page's own command on a real rehearsal.
"""

import csv
import json
import os
import time

import pytest
from nbgrader.utils import notebook_hash

from autograder import cli
from autograder.integrations import nbgrader_gradebook_warnings
from autograder.integrations.course_students import remove_student
from autograder.integrations.lms import MOODLE_TIME_EXPORTED
from autograder.refusal import Refused

NOTEBOOK, CELL = "01_attention_without_weights", "test_softmax_naive"
REHEARSAL = "root"  # the instructor's login, as the rehearsal left it
ROSTER = {"s001": ("Ada", "Lovelace", "ada@example.org"), "s002": ("Grace", "Hopper", "grace@example.org")}
GRADED = {"s001": 7.0, REHEARSAL: 0.0}  # s002 hands nothing in
STAMP = "2026-01-05 10:00:00.000000 UTC"

pytestmark = pytest.mark.slow  # nbgrader's gradebook: a few seconds a course


def _course(tmp_path):
    """The course after a rehearsal and one real submission (see the module's docstring)."""
    from nbgrader.api import Gradebook

    nbgrader_gradebook_warnings.install()
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    course.mkdir()
    (exchange / "attnkit" / "inbound").mkdir(parents=True)
    (exchange / "attnkit" / "feedback").mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.CourseDirectory.course_id = 'attnkit'\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course / 'gradebook.db'}'\n", encoding="utf-8")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attnkit") as gradebook:
        gradebook.add_assignment("attention")
        gradebook.add_notebook(NOTEBOOK, "attention")
        gradebook.add_grade_cell(CELL, NOTEBOOK, "attention", max_score=10, cell_type="code")
        for student_id, (first, last, email) in ROSTER.items():
            gradebook.update_or_create_student(student_id, first_name=first, last_name=last, email=email)
        gradebook.update_or_create_student(REHEARSAL)  # as autograde adds a login it does not know
        for student_id, score in GRADED.items():
            gradebook.add_submission("attention", student_id)
            grade = gradebook.find_grade(CELL, NOTEBOOK, "attention", student_id)
            grade.auto_score, grade.needs_manual_grade = score, False
            gradebook.db.commit()
    for student_id in GRADED:
        for folder in ("submitted", "autograded"):
            handed_in = course / folder / student_id / "attention"
            handed_in.mkdir(parents=True)
            (handed_in / f"{NOTEBOOK}.ipynb").write_text("{}", encoding="utf-8")
            (handed_in / "timestamp.txt").write_text(STAMP, encoding="utf-8")
        feedback = course / "feedback" / student_id / "attention"
        feedback.mkdir(parents=True)
        (feedback / f"{NOTEBOOK}.html").write_text(f"<p>{student_id}</p>", encoding="utf-8")
        (feedback / "timestamp.txt").write_text(STAMP, encoding="utf-8")
        secret = f"secret-of-{student_id}"
        (feedback / "submission_secret.txt").write_text(secret, encoding="utf-8")
        released = exchange / "attnkit" / "feedback" / f"{notebook_hash(secret=secret, notebook_id=NOTEBOOK)}.html"
        released.write_text(f"<p>{student_id}</p>", encoding="utf-8")
        inbound = exchange / "attnkit" / "inbound" / f"{student_id}+attention+{STAMP}+x7Yq"
        inbound.mkdir()
        (inbound / f"{NOTEBOOK}.ipynb").write_text("{}", encoding="utf-8")
    return course, exchange


def _moodle_roster(path):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL)
        writer.writerow(["First name", "Last name", "ID number", "Institution", "Department", "Email address",
                         "Assignment: Attention (Real)", MOODLE_TIME_EXPORTED])
        for first, last, email in ROSTER.values():
            writer.writerow([first, last, "", "", "", email, "-", str(int(time.time()))])
    return path


def _formgraders_students(course, exchange):
    """The students and submissions formgrader lists: nbgrader's NbGraderAPI, formgrader's backend, on the course."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.Exchange.root = str(exchange)
    coursedir = CourseDirectory(root=str(course), course_id="attnkit",
                                db_url=f"sqlite:///{course / 'gradebook.db'}")
    api = NbGraderAPI(coursedir=coursedir, config=config)
    return ({student["id"] for student in api.get_students()},
            {submission["student"] for submission in api.get_submissions("attention")})


def _everything_under(folder):
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_the_rehearsal_student_is_taken_out_of_everything_and_kept_aside(tmp_path, capsys):
    course, exchange = _course(tmp_path)
    roster = _moodle_roster(tmp_path / "moodle-grades.csv")
    out = tmp_path / "attention-moodle.csv"
    export = ["export", str(course), "--moodle", str(roster), "--id-column", "email", "--out", str(out)]
    assert cli.main(export) == 1  # root is graded and on no LMS roster: named once, the others written
    err = capsys.readouterr().err
    assert sum(f": {REHEARSAL}: " in line for line in err.splitlines()) == 1, err
    assert {row[0] for row in list(csv.reader(out.open(encoding="utf-8")))[1:]} == \
        {email for _, _, email in ROSTER.values()}
    assert _formgraders_students(course, exchange) == ({*ROSTER, REHEARSAL}, {*GRADED})
    others_before = {path: path.read_bytes() for path in (*course.rglob("s00*"), *exchange.rglob("s00*"))
                     if path.is_file()}

    assert cli.main(["course", "remove-student", str(course), REHEARSAL]) == 0
    said = capsys.readouterr().out
    assert "the gradebook (1 submission and their grades)" in said
    for shown in ("submitted/root", "autograded/root", "feedback/root", f"inbound/root+attention+{STAMP}+x7Yq",
                  "the exchange's feedback/"):
        assert shown in said, said

    students, submissions = _formgraders_students(course, exchange)
    assert students == set(ROSTER) and submissions == {"s001"}  # formgrader lists root nowhere, not even "None, None"
    for folder in ("submitted", "autograded", "feedback"):
        assert not (course / folder / REHEARSAL).exists()
    assert not [path for path in (exchange / "attnkit" / "inbound").iterdir() if path.name.startswith("root+")]
    assert len(list((exchange / "attnkit" / "feedback").iterdir())) == 1  # s001's
    assert others_before == {path: path.read_bytes() for path in others_before}  # the class untouched
    (kept,) = (course / "removed").iterdir()
    assert kept.name.startswith(f"{REHEARSAL}-")
    record = json.loads((kept / "gradebook.json").read_text(encoding="utf-8"))
    assert record["student"]["id"] == REHEARSAL and len(record["submissions"]) == 1
    assert {"submitted/root/attention/timestamp.txt", "autograded/root/attention/timestamp.txt",
            "feedback/root/attention/submission_secret.txt", f"inbound/root+attention+{STAMP}+x7Yq"} <= \
        set(_everything_under(kept))
    assert len(list((kept / "released_feedback").iterdir())) == 1

    assert cli.main(export) == 0  # every export now: the class, nobody else
    assert f": {REHEARSAL}: " not in capsys.readouterr().err


@pytest.mark.parametrize("student_id", ["../etc", "root/..", "", ".hidden", "root\x1b[2J", "*", "root+x"])
def test_an_id_nbgrader_cannot_have_made_is_refused_and_nothing_changes(tmp_path, student_id, capsys):
    course, exchange = _course(tmp_path)
    before = _everything_under(tmp_path)
    assert cli.main(["course", "remove-student", str(course), student_id]) == 2
    assert "nothing was changed" in capsys.readouterr().err
    assert _everything_under(tmp_path) == before


def test_no_such_student_or_course_is_refused(tmp_path):
    course, _ = _course(tmp_path)
    with pytest.raises(Refused, match="no student 'nobody'"):
        remove_student(course, "nobody")
    assert not (course / "removed").exists()
    with pytest.raises(Refused, match="holds no course"):
        remove_student(tmp_path / "exchange", REHEARSAL)


def test_links_are_moved_as_links_and_never_followed_out_of_the_course(tmp_path):
    """A student's entry that is a link (in submitted/, in the exchange's inbound/) is moved as the link: what it
    points to, outside the course, is left as it was; a course folder that is a link is not acted in at all."""
    course, exchange = _course(tmp_path)
    outside = tmp_path / "outside"
    (outside / "root" / "attention").mkdir(parents=True)
    (outside / "root" / "attention" / "precious.ipynb").write_text("keep me", encoding="utf-8")
    (outside / "inbound-target").mkdir()
    (outside / "inbound-target" / "precious.txt").write_text("keep me too", encoding="utf-8")
    # autograded/ replaced by a link to a folder outside holding a "root"; submitted/root a link out
    autograded = course / "autograded"
    os.rename(autograded, tmp_path / "autograded-moved-away")
    autograded.symlink_to(outside)
    for path in (course / "submitted" / REHEARSAL,):
        os.rename(path, tmp_path / "submitted-root-moved-away")
        path.symlink_to(outside / "root")
    linked_inbound = exchange / "attnkit" / "inbound" / f"root+attention+{STAMP}+Lnk0"
    linked_inbound.symlink_to(outside / "inbound-target")
    before = _everything_under(outside)

    removed = remove_student(course, REHEARSAL)
    assert _everything_under(outside) == before
    assert (outside / "root" / "attention" / "precious.ipynb").read_text(encoding="utf-8") == "keep me"
    assert any("autograded is a link: left alone" in note for note in removed.notes), removed.notes
    assert (removed.kept_in / "submitted" / REHEARSAL).is_symlink()  # the link itself, kept
    assert (removed.kept_in / "inbound" / linked_inbound.name).is_symlink()
    assert not (course / "submitted" / REHEARSAL).is_symlink() and not linked_inbound.is_symlink()
    assert autograded.is_symlink() and (outside / "root").is_dir()


def test_a_removed_folder_that_is_a_link_is_refused(tmp_path):
    course, _ = _course(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (course / "removed").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Refused, match="is not a folder; nothing was changed"):
        remove_student(course, REHEARSAL)
    assert (course / "submitted" / REHEARSAL).is_dir() and not any((tmp_path / "elsewhere").iterdir())


def test_a_student_whose_name_starts_alike_is_left_alone(tmp_path):
    """Only the entries nbgrader's collect reads as root's: not rootkit's, nor a user 'root+x' (split from the
    right as collect splits it)."""
    course, exchange = _course(tmp_path)
    inbound = exchange / "attnkit" / "inbound"
    (inbound / f"rootkit+attention+{STAMP}+a1").mkdir()
    (inbound / f"root+x+attention+{STAMP}+a2").mkdir()
    (course / "submitted" / "rootkit").mkdir()
    remove_student(course, REHEARSAL)
    assert sorted(path.name for path in inbound.iterdir()) == sorted(
        [f"rootkit+attention+{STAMP}+a1", f"root+x+attention+{STAMP}+a2", f"s001+attention+{STAMP}+x7Yq"])
    assert (course / "submitted" / "rootkit").is_dir()
