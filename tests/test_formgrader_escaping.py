"""No student id or name that is markup enters the gradebook.

One course (the repository's nbgrader_config.py). Its honest students come in through `nbgrader db student import`
(an accent, CJK, a comma, `O'Brien`, quotes and `&` in their names); "hostile" is written into the gradebook file
directly, as a gradebook made before the course's guard holds it: an id that closes formgrader's
`var student_id = "..."` and makes an `<img onerror>`, and names that are tags. Both handed in notebook 01 (the
folders placed in submitted/ as collect places them), with a third, new student whose folder name is markup:
`nbgrader autograde` grades the first two and refuses the third (nbgrader_student_guard), as `nbgrader db student
add`/`import` and formgrader's student editor refuse such an id or name.
"""

import contextlib
import shutil
import sqlite3
import subprocess

import pytest

from autograder.integrations import nbgrader_course

pytestmark = pytest.mark.slow

ASSIGNMENT = "attention"
NB01 = "01_attention_without_weights"
PAGE_S = 30
SETTLE_S = 1.0  # after load: an <img onerror> for a missing image has fired by then
PAYLOAD = "top.document.title='XSS';top.__xss=(top.__xss||0)+1"
# A folder name (no '/'): in `var student_id = "..."` it ends the string and runs PAYLOAD; in HTML it is an <img>.
HOSTILE_ID = f'c5";{PAYLOAD};"<img src=x onerror={PAYLOAD}>'
UNNAMED_ID = f'c7";{PAYLOAD};"<img src=x onerror={PAYLOAD}>'  # no names: the submission page shows the id
HOSTILE_FIRST = f'<img src=x onerror="{PAYLOAD}">'
HOSTILE_LAST = f'<svg onload="{PAYLOAD}">'
# Taken from a URL (a link a student sends the instructor): a '/' there closes formgrader's script block.
REFLECTED_ID = f"x</script><script>{PAYLOAD}</script>"
# A '#' cuts the URL of formgrader's Autograde request: it fails, and the error dialog names the student.
NEW_HOSTILE_ID = f"z9#\"><img src=x onerror={PAYLOAD}>"
HONEST = {"s001": ("Zoë", "O'Brien \"Bob\" & Co"), "s002": ("李", "雷, Jr.")}


def nbgrader(course, *args, check=True):
    command, env = nbgrader_course.nbgrader_command(course, *args)
    process = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True, check=False)
    if check:
        assert process.returncode == 0, f"nbgrader {' '.join(args)}:\n{process.stdout[-3000:]}{process.stderr[-3000:]}"
    return process


def gradebook_students(course):
    with contextlib.closing(sqlite3.connect(course / "gradebook.db")) as db:
        return {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, first_name, last_name FROM student")}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("formgrader-escaping")


@pytest.fixture(scope="module")
def course(workdir, repo_root):
    """The course with s001 and the two hostile students autograded (notebook 01), NEW_HOSTILE_ID refused; (root,
    autograde's output)."""
    root = nbgrader_course.make_course(workdir / "course", repo_root)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.SandboxedExecute.timeout = 10\n")
    release = nbgrader_course.generate_release(root)
    roster = workdir / "roster.csv"
    roster.write_text("id,first_name,last_name\n" + "".join(
        f'{student},{first},"{last.replace(chr(34), chr(34) * 2)}"\n' for student, (first, last) in HONEST.items()),
        encoding="utf-8")
    nbgrader(root, "db", "student", "import", str(roster))
    with contextlib.closing(sqlite3.connect(root / "gradebook.db")) as db, db:
        db.executemany("INSERT INTO student (id, first_name, last_name) VALUES (?, ?, ?)",
                       [(HOSTILE_ID, HOSTILE_FIRST, HOSTILE_LAST), (UNNAMED_ID, None, None)])
    for student in ("s001", HOSTILE_ID, UNNAMED_ID, NEW_HOSTILE_ID):
        shutil.copytree(release, root / "submitted" / student / ASSIGNMENT)
    graded = nbgrader(root, "autograde", ASSIGNMENT, f"--CourseDirectory.notebook_id={NB01}", "--force", check=False)
    return root, graded.stdout + graded.stderr


def test_no_unusable_id_or_name_enters_the_gradebook(course):
    """autograde (a submitted/ folder), `nbgrader db student add` and `import`, through the course's config."""
    root, autograde_log = course
    students = gradebook_students(root)
    assert NEW_HOSTILE_ID not in students
    assert (root / "autograded" / "s001" / ASSIGNMENT / f"{NB01}.ipynb").is_file()  # the class is graded
    assert (root / "autograded" / HOSTILE_ID / ASSIGNMENT / f"{NB01}.ipynb").is_file()  # made before the guard
    refusal = f"student refused by the gradebook: id {NEW_HOSTILE_ID!r}: use letters, digits"
    assert refusal in autograde_log, autograde_log[-3000:]
    assert {student: students[student] for student in HONEST} == HONEST  # accents, CJK, commas, quotes, & kept

    refused = nbgrader(root, "db", "student", "add", "c6\"><b>x", "--first-name=Ada", check=False)
    assert refused.returncode == 1
    assert refused.stderr.rstrip().splitlines()[-1] == ("nbgrader.api.InvalidEntry: student refused by the "
                                                       "gradebook: id 'c6\"><b>x': use letters, digits, '-', '_' or "
                                                       "'.' (not first)")
    refused = nbgrader(root, "db", "student", "add", "s001", f"--last-name={HOSTILE_LAST}", check=False)
    assert refused.returncode == 1 and "the last_name holds '<' or '>'" in refused.stderr
    roster = root.parent / "more.csv"
    roster.write_text(f"id,first_name,email\ns003,Grace,\ns004,{HOSTILE_FIRST.replace(chr(34), '')},\n"
                      "s005,Ann,\n", encoding="utf-8")
    refused = nbgrader(root, "db", "student", "import", str(roster), check=False)
    assert refused.returncode == 1 and "the first_name holds '<' or '>'" in refused.stderr
    after = gradebook_students(root)
    assert after[s := "s001"] == students[s] and "s003" in after  # the row before the refused one is in
    assert not {"c6\"><b>x", "s004", "s005"} & set(after)
