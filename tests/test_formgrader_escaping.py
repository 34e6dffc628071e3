"""Nothing a student's id or names hold runs in formgrader, and no such id or name enters the gradebook.

One course (the repository's nbgrader_config.py). Its honest students come in through `nbgrader db student import`
(an accent, CJK, a comma, `O'Brien`, quotes and `&` in their names); "hostile" is written into the gradebook file
directly, as a gradebook made before the course's guard holds it: an id that closes formgrader's
`var student_id = "..."` and makes an `<img onerror>`, and names that are tags. Both handed in notebook 01 (the
folders placed in submitted/ as collect places them), with a third, new student whose folder name is markup:
`nbgrader autograde` grades the first two and refuses the third (nbgrader_student_guard), as `nbgrader db student
add`/`import` and formgrader's student editor refuse such an id or name.

In Debian's Chromium, `attnkit course formgrader`'s server shows every page that names a student (the assignment's
submissions, the students, a student's assignments and notebooks, the notebook's submissions in the gradebook, the
submission page, and a student page whose id, taken from the URL, closes the script block): the payloads never set
the title or the marker global, the ids and names read as written (escaped once, never twice), and the pages'
scripts get the true id (their tables load). The control: the same pages rendered by nbgrader's own templates,
as formgrader builds them without the course's escaping, run the same payloads.
"""

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import artifacts_dir, start_chromium, wait_until

from autograder.integrations import course_formgrader, nbgrader_course

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
def binaries():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if chromium and chromedriver:
        return chromium, chromedriver
    if os.environ.get("CI"):
        pytest.fail("chromium and chromedriver are missing: .ci/run installs them in CI")
    pytest.skip("chromium and chromedriver not found (apt-get install chromium chromium-driver)")


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


# ---------------------------------------------------------------------------------------------
# formgrader's pages, in Chromium


@pytest.fixture(scope="module")
def server(course, workdir):
    """`attnkit course formgrader`'s server on the course: (base URL, token)."""
    root, _ = course
    with pytest.MonkeyPatch.context() as patch:
        for name, folder in (("JUPYTER_CONFIG_DIR", "jupyter-config"), ("JUPYTER_DATA_DIR", "jupyter-data"),
                             ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"), ("IPYTHONDIR", "ipython")):
            patch.setenv(name, str(workdir / folder))
        started = course_formgrader.start(root)
    try:
        yield started.base_url, started.token
    finally:
        course_formgrader.stop(started)


@pytest.fixture(scope="module")
def driver(binaries, workdir):
    browser = start_chromium(*binaries, workdir, PAGE_S)
    try:
        yield browser
    finally:
        browser.quit()


def submission_id(root, student):
    from nbgrader.api import Gradebook

    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:
        return gradebook.find_submission_notebook(NB01, ASSIGNMENT, student).id


def ran(driver):
    """What a payload left on the page just loaded."""
    time.sleep(SETTLE_S)
    found = []
    if driver.execute_script("return window.__xss || null") is not None:
        found.append("the marker global was set")
    if driver.title == "XSS":
        found.append("the title became 'XSS'")
    return found


def rows_holding(driver, text):
    from selenium.webdriver.common.by import By

    return [row for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
            if text in row.get_attribute("textContent")]


def error_message(student):
    """What formgrader's submissions page says when its Autograde request fails (manage_submissions.js)."""
    return f"There was an error autograding '{ASSIGNMENT}' for student '{student}'."


def control_pages(root, workdir, hostile_submission):
    """The pages that print a student's id or names, rendered by nbgrader's own templates as formgrader builds
    them, without the course's escaping: {name: file}. "modal" loads formgrader's scripts from its folder."""
    from jinja2 import Environment, FileSystemLoader
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    plain = Environment(loader=FileSystemLoader([handlers.template_path]))  # FormgradeExtension.init_tornado_settings'
    exporter = HTMLExporter(template_name="formgrade", extra_template_basedirs=[handlers.template_path])
    notebook = root / "autograded" / HOSTILE_ID / ASSIGNMENT / f"{NB01}.ipynb"
    resources = {"assignment_id": ASSIGNMENT, "notebook_id": NB01, "submission_id": hostile_submission, "index": 0,
                 "total": 2, "base_url": "", "student": HOSTILE_ID, "first_name": HOSTILE_FIRST,
                 "last_name": HOSTILE_LAST, "notebook_path": f"./autograded/{HOSTILE_ID}/{ASSIGNMENT}/{NB01}.ipynb"}
    pages = {
        "student": plain.get_template("manage_students_assignments.tpl").render(student_id=HOSTILE_ID, base_url=""),
        "student-notebooks": plain.get_template("manage_students_notebook_submissions.tpl").render(
            student_id=HOSTILE_ID, assignment_id=ASSIGNMENT, base_url=""),
        "reflected": plain.get_template("manage_students_assignments.tpl").render(student_id=REFLECTED_ID,
                                                                                   base_url=""),
        "modal": plain.get_template("manage_submissions.tpl").render(
            assignment_id=ASSIGNMENT, course_dir=str(root), base_url=Path(handlers.root_path).parent.as_uri()),
        "submission": exporter.from_filename(str(notebook), resources=resources)[0],
        "submission-names": exporter.from_filename(str(notebook), resources={
            **resources, "student": "c5", "notebook_path": "./autograded/c5"})[0],
        "submission-id": exporter.from_filename(str(notebook), resources={
            **resources, "student": UNNAMED_ID, "first_name": None, "last_name": None})[0],
    }
    files = {}
    for name, page in pages.items():
        files[name] = workdir / f"control-{name}.html"
        files[name].write_text(page, encoding="utf-8")
    return files


def put_student(base, token, student_id, **names):
    """formgrader's student editor (Add new student..., the pencil): its status."""
    request = urllib.request.Request(f"{base}/formgrader/api/student/{urllib.parse.quote(student_id, safe='')}",
                                     data=json.dumps(names).encode(), method="PUT",
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.browser
def test_formgraders_pages_run_nothing_of_a_students_id_or_names(driver, server, course, workdir):
    from selenium.webdriver.common.by import By

    root, _ = course
    base, token = server
    hostile_submission = submission_id(root, HOSTILE_ID)

    for name, page in control_pages(root, workdir, hostile_submission).items():
        driver.get(page.as_uri())
        if name == "modal":
            wait_until(driver, lambda: driver.execute_script("return typeof createModal === 'function'"), PAGE_S,
                       "formgrader's utils.js")
            driver.execute_script("createModal('error-modal', 'Error', arguments[0])", error_message(NEW_HOSTILE_ID))
        assert ran(driver), f"nbgrader's own {name} page ran nothing: the test could not see a payload run"

    def visit(path, ready, what):
        driver.get(f"{base}/formgrader/{path}")
        wait_until(driver, ready, PAGE_S, what)
        found = ran(driver)
        assert not found, (path, found)

    quoted = urllib.parse.quote(HOSTILE_ID, safe="")
    driver.get(f"{base}/formgrader?token={token}")  # logs the browser in
    visit(f"manage_submissions/{ASSIGNMENT}", lambda: rows_holding(driver, HOSTILE_ID), "the submissions' rows")
    assert rows_holding(driver, f"{HOSTILE_LAST}, {HOSTILE_FIRST}"), "the hostile names, as text"
    assert rows_holding(driver, f"{HONEST['s001'][1]}, {HONEST['s001'][0]}")
    rows_holding(driver, NEW_HOSTILE_ID)[0].find_element(By.CSS_SELECTOR, "td.autograde a").click()  # refused: 405
    dialog = wait_until(driver, lambda: [d for d in driver.find_elements(By.ID, "error-modal") if d.is_displayed()],
                        PAGE_S, "the Autograde error dialog")
    assert error_message(NEW_HOSTILE_ID) in dialog[0].text
    assert not ran(driver), ran(driver)
    visit("manage_students", lambda: rows_holding(driver, HOSTILE_ID), "the students' rows")
    assert rows_holding(driver, f"{HONEST['s002'][1]}, {HONEST['s002'][0]}")
    for path, row in ((f"manage_students/{quoted}", ASSIGNMENT), (f"manage_students/{quoted}/{ASSIGNMENT}", NB01)):
        visit(path, lambda row=row: rows_holding(driver, row), f"{path}'s table, loaded with the script's student_id")
        assert driver.execute_script("return student_id") == HOSTILE_ID
        assert HOSTILE_ID in driver.find_element(By.CSS_SELECTOR, ".breadcrumb").text
    visit(f"manage_students/{urllib.parse.quote(REFLECTED_ID, safe='')}",
          lambda: driver.find_elements(By.CSS_SELECTOR, ".breadcrumb"), "the breadcrumb")
    assert driver.execute_script("return student_id") == REFLECTED_ID
    visit(f"gradebook/{ASSIGNMENT}/{NB01}", lambda: len(rows_holding(driver, "Submission #")) == 3,
          "the notebook's three submissions")
    assert rows_holding(driver, f"{HOSTILE_LAST}, {HOSTILE_FIRST}")
    visit(f"submissions/{hostile_submission}/", lambda: driver.find_elements(By.CSS_SELECTOR, "input.score"),
          "the submission page's score inputs")
    shown = driver.find_element(By.CSS_SELECTOR, ".breadcrumb a.name-shown")
    assert shown.get_attribute("textContent").strip() == f"{HOSTILE_LAST}, {HOSTILE_FIRST}"
    assert urllib.parse.unquote(shown.get_attribute("href")).endswith(
        f"/autograded/{HOSTILE_ID}/{ASSIGNMENT}/{NB01}.ipynb")  # the true path, read back from the attribute
    driver.save_screenshot(str(artifacts_dir() / "formgrader-escaped-submission.png"))
    visit(f"submissions/{submission_id(root, UNNAMED_ID)}/",
          lambda: driver.find_elements(By.CSS_SELECTOR, "input.score"), "the unnamed student's submission page")
    shown = driver.find_element(By.CSS_SELECTOR, ".breadcrumb a.name-shown")
    assert shown.get_attribute("textContent").strip() == UNNAMED_ID
    visit(f"submissions/{submission_id(root, 's001')}/", lambda: driver.find_elements(By.CSS_SELECTOR, "input.score"),
          "the honest submission page")
    shown = driver.find_element(By.CSS_SELECTOR, ".breadcrumb a.name-shown").get_attribute("textContent").strip()
    assert shown == f"{HONEST['s001'][1]}, {HONEST['s001'][0]}"  # O'Brien "Bob" & Co, Zoë: escaped once, not twice

    # formgrader's student editor: the guard refuses there too, and keeps the honest names
    assert put_student(base, token, NEW_HOSTILE_ID, first_name="Eve") == 500
    assert put_student(base, token, "s002", first_name=HOSTILE_FIRST, last_name="雷") == 500
    assert put_student(base, token, "s003", first_name="Łukasz", last_name="D'Arcy & Söhne") == 200
    students = gradebook_students(root)
    assert NEW_HOSTILE_ID not in students and students["s002"] == HONEST["s002"]
    assert students["s003"] == ("Łukasz", "D'Arcy & Söhne")
