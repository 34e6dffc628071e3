"""The course as students and an instructor live it, on a real JupyterHub, in Chromium.

devtools.hub builds the two environments (the students' with only the student kit, the instructor's with the full
attnkit), creates three Linux users with the prefix `attnkit-hubtest-` under a fresh root folder, and starts
JupyterHub with PAM logins and LocalProcessSpawner. Then, in order:

1. the instructor generates and releases the assignment (nbgrader, as that user) and sees it in formgrader;
2. two students log in, fetch it from the Assignments panel, open notebook 03 with causal_mask filled in (one
   right; one hiding the diagonal too and, hostile, replacing `autograder.grade` so that a grader running in its
   kernel would give it full marks), run its check (feedback, with a heatmap for the mistake, from the student
   kit), press Validate and submit from the Assignments panel;
3. a student's kernel environment cannot import the reference or the checks, nor read the other student's home or
   the exchange's inbound submissions;
4. the instructor collects, grades with `attnkit grade` and with `nbgrader autograde`, which grades in attnkit's
   sandbox (the course's nbgrader_config.py): the two agree on notebook 03 and the hostile student gets the honest
   grade; then generates and releases feedback;
5. each student fetches the feedback and sees their score in it, and the hostile one the named mistake and the
   heatmap of its mask.

Screenshots of every step go to $ATTNKIT_ARTIFACTS/hub (default /tmp/attnkit-artifacts). The users and the root are
removed at the end, also after a failure. Outside CI the test skips where root, Debian's python3, node, npm,
chromium or chromedriver are missing; in CI (`.ci/run` installs them) it fails instead.
"""

import contextlib
import csv
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from browser_helpers import CHROMIUM_FLAGS, artifacts_dir, menu, output_lines, shown_images, visible_panel, wait_until

from autograder.integrations import nbgrader_course
from devtools import hub

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PREFIX = "attnkit-hubtest-"
NOTEBOOK = "03_causal_attention.ipynb"
CHECK_SOURCE = 'check("causal_mask", causal_mask)'
STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()"
BODIES = {
    "right": "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)",
    # hides the diagonal too, and replaces the grading function a graded cell imports in the kernel
    "wrong": "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))\n\n\n"
             "import autograder  # noqa: E402\n\nautograder.grade = lambda *args, **kwargs: 6.0\n",
}
LOGIN_S = 120  # a first spawn imports JupyterLab as a new user on a busy 2-core box
RUN_S = 90


def skip_or_fail(reason):
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: .ci/run installs what the hub test needs in CI")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def site():
    missing = hub.missing_requirements()
    missing += [tool for tool in ("chromium", "chromedriver") if not shutil.which(tool)]
    if missing:
        skip_or_fail("the JupyterHub test needs " + "; ".join(missing))
    hub.remove_site(Path("/nonexistent"), PREFIX)  # users a crashed run left behind
    shutil.rmtree(artifacts_dir() / "hub", ignore_errors=True)  # no screenshot of an earlier run left to mislead
    root = Path(tempfile.mkdtemp(prefix="attnkit-hubtest-"))
    root.chmod(0o755)
    started = time.monotonic()
    environments = hub.build_environments()
    site = hub.new_site(root, PREFIX)
    hub_process = None
    try:
        hub.create_site(site)
        hub_process = hub.start_hub(site, environments)
        yield site, environments, started
    finally:
        if hub_process is not None:
            hub.stop_hub(hub_process)
        hub.remove_site(root, PREFIX)


@pytest.fixture(scope="module")
def driver(site):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="attnkit-hubtest-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")
        browser = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)
    browser.set_page_load_timeout(60)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def shot(driver, name):
    folder = artifacts_dir() / "hub"
    folder.mkdir(exist_ok=True)
    driver.save_screenshot(str(folder / f"{name}.png"))


@contextlib.contextmanager
def step(driver, site_, name):
    """A screenshot when the step is done, or one and the hub's log when it fails."""
    try:
        yield
    except BaseException as error:
        if not isinstance(error, (pytest.skip.Exception, KeyboardInterrupt)):
            with contextlib.suppress(Exception):
                shot(driver, f"{name}-failure")
            error.add_note(f"JupyterHub log:\n{hub.hub_log_tail(site_, lines=15)}")
        raise
    shot(driver, name)


def log_in(driver, site_, user):
    """A fresh login (the previous user's cookies dropped) that ends in the user's JupyterLab."""
    from selenium.webdriver.common.by import By

    # The hub's logout ends the previous user's session; clearing every cookie also drops the per-server ones.
    driver.get(f"{site_.url}/hub/logout")
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(f"{site_.url}/hub/login")
    wait_until(driver, lambda: driver.find_elements(By.ID, "username_input"), 30, "the hub's login form")
    driver.find_element(By.ID, "username_input").send_keys(user)
    driver.find_element(By.ID, "password_input").send_keys(site_.password)
    driver.find_element(By.ID, "login_submit").click()
    wait_until(driver, lambda: f"/user/{user}/lab" in driver.current_url
             and driver.find_elements(By.CSS_SELECTOR, "#jp-main-dock-panel"), LOGIN_S, f"{user}'s JupyterLab")


def open_assignments(driver):
    from selenium.webdriver.common.by import By

    menu(driver, "Nbgrader", "Assignment List")
    return wait_until(driver, lambda: [panel for panel in driver.find_elements(By.CSS_SELECTOR, "#assignments")
                                     if panel.is_displayed()], 30, "the Assignments panel")[0]


def click_button(driver, panel, label, what):
    from selenium.webdriver.common.by import By

    # Plain buttons (the Assignments panel) and JupyterLab's toolbar buttons (Validate) alike.
    buttons = "button, jp-button, .jp-ToolbarButtonComponent"
    button = wait_until(driver, lambda: [b for b in panel.find_elements(By.CSS_SELECTOR, buttons)
                                       if b.text.strip() == label and b.is_displayed()], 60, what)[0]
    button.click()


def fill_stub(site_, environments, student, body):
    """The student's edit, saved as that user: causal_mask filled in their fetched copy of notebook 03."""
    path = site_.home(student) / "attention" / NOTEBOOK
    script = (
        "import sys, nbformat\n"
        "path, stub, body = sys.argv[1:]\n"
        "nb = nbformat.read(path, as_version=4)\n"
        "cells = [c for c in nb.cells if 'def causal_mask(' in c.source and stub in c.source]\n"
        "assert len(cells) == 1, len(cells)\n"
        "cells[0].source = cells[0].source.replace(stub, body)\n"
        "nbformat.write(nb, path)\n"
    )
    hub.run_as(site_, student, environments.student, ["python", "-c", script, str(path), STUB, body])


def run_check(driver, site_, student):
    """Open notebook 03, run everything above the causal_mask check, then the check; its output cell."""
    from selenium.webdriver.common.by import By

    driver.get(f"{site_.url}/user/{student}/lab/tree/attention/{NOTEBOOK}")
    panel = wait_until(driver, lambda: visible_panel(driver), 60, f"{student}'s notebook 03")
    wait_until(driver, lambda: panel.find_elements(By.CSS_SELECTOR,
                                                 '.jp-Notebook-ExecutionIndicator[data-status="idle"]'),
             90, "an idle kernel")
    sources = [cell.source for cell in nbformat.read(site_.home(student) / "attention" / NOTEBOOK, as_version=4).cells]
    cells = wait_until(driver, lambda: [cells for cells in [panel.find_elements(By.CSS_SELECTOR, ".jp-Cell")]
                                      if len(cells) == len(sources)], 60, f"the {len(sources)} cells of notebook 03")[0]
    index = next(i for i, source in enumerate(sources) if CHECK_SOURCE in source)
    check_cell = cells[index]
    check_cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt").click()
    above = cells[index - 1].find_element(By.CSS_SELECTOR, ".jp-InputPrompt")
    # On a busy box JupyterLab can drop the command (its menu entry not enabled yet): asked again until the cell
    # above the check has run, so the check never runs before the code it checks.
    for attempt in range(3):
        menu(driver, "Run", "Run All Above Selected Cell")
        try:
            wait_until(driver, lambda: re.fullmatch(r"\[\d+\]:", above.text.strip()), RUN_S / 3,
                       "the cells above the check")
            break
        except AssertionError:
            if attempt == 2:
                raise
    menu(driver, "Run", "Run Selected Cell and Do not Advance")
    prompt = check_cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt")
    wait_until(driver, lambda: re.fullmatch(r"\[\d+\]:", prompt.text.strip())
             and check_cell.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"), RUN_S, "the check's output")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", cells[index - 1])
    return panel, check_cell


def validate(driver, panel):
    """nbgrader's Validate button on the notebook's toolbar; the dialog's text."""
    from selenium.webdriver.common.by import By

    click_button(driver, panel, "Validate", "the Validate button")
    dialog = wait_until(driver, lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog"), RUN_S,
                      "the validation dialog")[0]
    return dialog.text


def close_dialog(driver):
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog-footer button"):
        button.click()
        return


def instructor_runs(site_, environments, *command):
    return hub.run_as(site_, site_.instructor, environments.instructor, list(command), cwd=site_.course)


def attnkit_scores(grades_csv):
    with open(grades_csv, newline="", encoding="utf-8") as handle:
        return {row["student_id"]: float(row[Path(NOTEBOOK).stem]) for row in csv.DictReader(handle)}


def test_the_course_round_trip_on_jupyterhub(site, driver, capsys):
    from selenium.webdriver.common.by import By

    site_, environments, started = site
    instructor, students = site_.instructor, dict(zip(("right", "wrong"), site_.students, strict=True))

    # 1. The instructor makes the student version and releases it to the exchange.
    instructor_runs(site_, environments, "nbgrader", "generate_assignment", "attention", "--force")
    instructor_runs(site_, environments, "nbgrader", "release_assignment", "attention")
    with step(driver, site_, "01-instructor-formgrader"):
        log_in(driver, site_, instructor)
        driver.get(f"{site_.url}/user/{instructor}/formgrader")
        released = re.compile(r"attention\s+None\s+released")
        wait_until(driver, lambda: released.search(driver.find_element(By.TAG_NAME, "body").text), 60,
                 "the released assignment in formgrader")

    # 2. Each student fetches it, fills causal_mask, runs the check, validates and submits.
    for kind, student in students.items():
        with step(driver, site_, f"02-{kind}-fetched"):
            log_in(driver, site_, student)
            assignments = open_assignments(driver)
            click_button(driver, assignments, "Fetch", "the Fetch button of the released assignment")
            wait_until(driver, lambda student=student: (site_.home(student) / "attention" / NOTEBOOK).exists(), 60,
                     "the fetched notebooks in the student's home")
        fill_stub(site_, environments, student, BODIES[kind])
        with step(driver, site_, f"03-{kind}-check"):
            panel, check_cell = run_check(driver, site_, student)
            lines = output_lines(check_cell)
            marks = [line[0] for line in lines if line[:1] in ("✔", "✘")]
            assert marks, lines
            if kind == "right":
                assert set(marks) == {"✔"}, lines
            else:
                assert "✘" in marks, lines
                assert shown_images(driver, check_cell), "the wrong mask's feedback shows no heatmap"
        with step(driver, site_, f"04-{kind}-validate"):
            report = validate(driver, panel)
            # Validate runs the notebook as the student's server sees it; its graded cells hold hidden tests only,
            # so it reports success whatever the check said (docs/instructor/index.md).
            assert "Validation Results" in report and "There was an error" not in report, report
        close_dialog(driver)
        with step(driver, site_, f"05-{kind}-submitted"):
            assignments = open_assignments(driver)
            click_button(driver, assignments, "Submit", "the Submit button of the fetched assignment")
            wait_until(driver, lambda student=student: any(f"{student}+attention+" in path.name
                                         for path in (site_.exchange / hub.COURSE_ID / "inbound").iterdir()),
                     60, "the submission in the exchange's inbound")

    # 3. What a student's kernel environment can reach (the kernel is this python, run as the student): no
    # reference, no hidden checks (the kit's public judges read stored vectors), not the other student's home, and
    # no listing of the exchange's inbound folder, where each submission's name ends in 72 random bits.
    right, wrong = students["right"], students["wrong"]
    inbound = site_.exchange / hub.COURSE_ID / "inbound"
    # Nor can they open from disk the reference in the instructor's environment or the instructor's source notebooks.
    reference = next(environments.instructor.glob(
        "lib/python3*/site-packages/attnkit/solutions/n03_causal_attention.py"))
    source = site_.course / "source" / "attention" / NOTEBOOK
    assert reference.is_file() and source.is_file()
    probe = hub.run_as(site_, right, environments.student, ["python", "-c", (
        "import importlib.util, os, sys\n"
        "def found(module):\n"
        "    try:\n"
        "        return importlib.util.find_spec(module) is not None\n"
        "    except ModuleNotFoundError:  # its parent package is not there either\n"
        "        return False\n"
        "for module in ('attnkit.solutions', 'autograder.course.variants', 'autograder.course.catalog'):\n"
        "    print(module, found(module))\n"
        "for label, path in zip(('other-home', 'inbound', 'reference', 'source'), sys.argv[1:]):\n"
        "    try:\n"
        "        os.listdir(path) if os.path.isdir(path) else open(path).close()\n"
        "        print(label, True)\n"
        "    except PermissionError:\n"
        "        print(label, False)\n"
    ), str(site_.home(wrong)), str(inbound), str(reference), str(source)])
    reach = dict(line.split() for line in probe.stdout.splitlines())
    assert reach == {"attnkit.solutions": "False", "autograder.course.variants": "False",
                     "autograder.course.catalog": "False", "other-home": "False", "inbound": "False",
                     "reference": "False", "source": "False"}, probe.stdout
    for submission in inbound.iterdir():
        assert len(submission.name.split("+")[-1]) == 12, f"{submission.name}: no random part to its name"

    # 4. The instructor collects, grades with both graders, and releases nbgrader's feedback.
    instructor_runs(site_, environments, "nbgrader", "collect", "attention")
    instructor_runs(site_, environments, "attnkit", "grade", "submitted", "--out", "attnkit-grades")
    instructor_runs(site_, environments, "nbgrader", "autograde", "attention")
    ours = attnkit_scores(site_.course / "attnkit-grades" / "grades.csv")
    theirs = {student: notebooks[Path(NOTEBOOK).stem]
              for student, notebooks in nbgrader_course.read_scores(site_.course).items()}
    assert ours == pytest.approx(theirs) and set(ours) == set(site_.students), (ours, theirs)
    # the mask that hides the diagonal earns less, from nbgrader too: its patched grade() never ran
    assert ours[right] == 6 and ours[wrong] < 6, ours
    instructor_runs(site_, environments, "nbgrader", "generate_feedback", "attention")
    instructor_runs(site_, environments, "nbgrader", "release_feedback", "attention")

    # 5. Each student fetches the feedback and reads their score in it.
    for kind, student in students.items():
        with step(driver, site_, f"06-{kind}-feedback"):
            log_in(driver, site_, student)
            assignments = open_assignments(driver)
            click_button(driver, assignments, "Fetch Feedback", "the Fetch Feedback button")
            feedback = site_.home(student) / "attention" / "feedback"
            pages = wait_until(driver, lambda feedback=feedback: list(feedback.glob(f"*/{Path(NOTEBOOK).stem}.html")),
                               60, "the feedback page in the student's home")
            relative = pages[0].relative_to(site_.home(student))
            driver.get(f"{site_.url}/user/{student}/files/{relative}")
            body = wait_until(driver, lambda: driver.find_element(By.TAG_NAME, "body").text, 30, "the feedback page")
            score = f"{ours[student]:g}"
            assert re.search(rf"Score:\s*{re.escape(score)}(\.0+)?\s*/", body), body[:500]
            assert "Graded checks for The causal mask" in body, body[:2000]  # attnkit's verdicts, from the sandbox
            if kind == "wrong":
                assert "reproduced mistake — the mask also hides the diagonal" in body, body[:3000]
                # nbconvert's page puts an SVG output in .output_svg as an img; shown where the screenshot is taken
                images = [image for image in driver.find_elements(By.CSS_SELECTOR, ".output_svg img")
                          if driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0",
                                                   image)]
                assert images, "no heatmap in the feedback page"
                driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", images[0])
    with capsys.disabled():  # the round trip's time, for docs/instructor/index.md and the note
        print(f"\ntest_jupyterhub: the round trip took {time.monotonic() - started:.0f} s "
              f"(environments, users, hub, two students, grading, feedback)")
