"""Nothing a student wrote runs in the instructor's browser: formgrader's submission page and nbgrader's feedback
page, in Debian's Chromium.

One course (the repository's nbgrader_config.py), two students handed in the same notebook 01 with the attack
cells below and one honest markdown cell; `nbgrader autograde` grades notebook 01 in the sandbox, `nbgrader
generate_feedback` writes the feedback. "control" is the test's own proof that it can see a script run: its
autograded notebook is overwritten with the submitted cells (as nbgrader stored it before the sanitizer) and its
feedback made without the sanitizer, and on those pages the payloads must fire. On mallory's pages, served by a real
JupyterLab on 127.0.0.1 (formgrader) and from disk (feedback): the page title is unchanged, the marker global is
never set, the canary server on 127.0.0.1 gets no request (meta refresh, form, stylesheet, object, iframe loads), the
links and buttons a TA would click run nothing; and the honest cell renders (heading, list, table, code, image).
Skipped without chromium and chromedriver, except in CI.
"""

import contextlib
import html
import http.server
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser_helpers import artifacts_dir, start_chromium, wait_until
from test_page_templates import _document, _similarity_inputs

from autograder.integrations import nbgrader_course
from autograder.outputs.class_report import class_report_html
from autograder.outputs.feedback_page import feedback_html
from autograder.review.page import similarity_html

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NB01 = "01_attention_without_weights"
ASSIGNMENT = "attention"
STUDENTS = ("mallory", "control")
GRADE_ID = "test_softmax_naive"  # an autograded test cell of notebook 01
SERVER_START_S = 60
PAGE_S = 30
SETTLE_S = 1.5  # after load: an iframe's srcdoc, an animation's onbegin, a meta refresh have fired by then
HONEST_MARKER = "Honest heading 7f3a"
HONEST = f"""## {HONEST_MARKER}

My reading of the scores, with $q \\cdot k^T < 1$:

- first point
- second point

| token | weight |
|:------|-------:|
| cat   | 0.75   |

```python
if a < b:
    print("<b>not markup</b>")
```

![my figure](figures/mine.png)
"""


def payload(canary):
    """JavaScript that leaves every trace the test looks for: the title, a global, a request to the canary."""
    return (f"top.document.title='XSS';top.__xss=(top.__xss||0)+1;"
            f"fetch('{canary}/js').catch(function(){{}})")


def attack_cells(canary):
    js = payload(canary)
    markdown = [
        f'<img src=x onerror="{js}">',
        f'<details open ontoggle="{js}"><summary>s</summary>d</details>',
        f"<iframe srcdoc='<script>{js.replace(chr(39), chr(34))}</script>'></iframe>",
        f"[click-me](javascript:{js.replace(' ', '')})",
        f'<a href="jav&#x09;ascript:{js}">click-me</a>',
        f'<svg><animate onbegin="{js}" attributeName="x" dur="1s"/></svg>',
        f'<math><mtext><table><mglyph><style><img src=x onerror="{js}">',
        f'<img srcset="x 1x" onerror="{js}">',
        f'<meta http-equiv="refresh" content="0;url={canary}/meta">',
        f'<form action="{canary}/form"><button>submit-me</button></form>',
        f'<link rel="stylesheet" href="{canary}/css">',
        f'<object data="{canary}/object"></object>',
        f'<iframe src="{canary}/iframe"></iframe>',
        f'<x tabindex="1" autofocus onfocus="{js}">focus</x>',
        f"<script>{js}</script>",
        "![svg](data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iYWxlcnQoMSkiLz4=)",
    ]
    cells = [nbformat.v4.new_markdown_cell(source) for source in markdown]
    cells.append(nbformat.v4.new_raw_cell(f'<img src=x onerror="{js}">', metadata={"raw_mimetype": "text/html"}))
    # mistune gives a heading an id from its text: formgrader finds this grade's score input by the same id
    cells.append(nbformat.v4.new_markdown_cell(f"# {GRADE_ID}"))
    cells.append(nbformat.v4.new_markdown_cell("tagged", metadata={"tags": [f'x" onmouseover="{js}']}))
    return cells


def code_cell_with_outputs(canary):
    """A student's cell handed in with outputs that would run: nbgrader and the sandbox replace them."""
    js = payload(canary)
    return nbformat.v4.new_code_cell("shown = 1", outputs=[nbformat.v4.new_output("display_data", data={
        "text/html": f'<img src=x onerror="{js}">', "application/javascript": js, "text/plain": "shown"})])


class Canary:
    """An HTTP server on 127.0.0.1 that records every request path (what a blocked load would have asked)."""

    def __init__(self):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hits.append(self.path)
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.server.shutdown()
        self.server.server_close()


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
    return tmp_path_factory.mktemp("markup-browser")


@pytest.fixture(scope="module")
def canary():
    with Canary() as server:
        yield server


def nbgrader(course, *args):
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    process = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                             text=True, check=False)
    assert process.returncode == 0, f"nbgrader {' '.join(args)}:\n{process.stdout[-3000:]}{process.stderr[-3000:]}"
    return process


@pytest.fixture(scope="module")
def course(binaries, workdir, repo_root, canary):
    """The course with both students' notebook 01 autograded and their feedback generated (control's unsanitized)."""
    root = nbgrader_course.make_course(workdir / "course", repo_root)
    exchange = workdir / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"c.Exchange.root = {str(exchange)!r}\nc.SandboxedExecute.timeout = 10\n")
    release = nbgrader_course.generate_release(root)
    notebook = nbformat.read(release / f"{NB01}.ipynb", as_version=4)
    notebook.cells[1:1] = [*attack_cells(canary.url), nbformat.v4.new_markdown_cell(HONEST),
                           code_cell_with_outputs(canary.url)]
    notebook.metadata["title"] = "</title><script>top.__xss=1</script>"
    submitted = workdir / "submitted-notebooks"
    shutil.copytree(release, submitted)
    nbformat.write(notebook, submitted / f"{NB01}.ipynb")
    for student in STUDENTS:
        nbgrader_course.submit(root, student, submitted)
    nbgrader(root, "autograde", ASSIGNMENT, f"--CourseDirectory.notebook_id={NB01}", "--force")
    # control: what autograded/ held before the sanitizer, and feedback made without it
    autograded = nbformat.read(root / "autograded" / "control" / ASSIGNMENT / f"{NB01}.ipynb", as_version=4)
    attacks = len(attack_cells(canary.url)) + 1
    autograded.cells[1:1 + attacks] = notebook.cells[1:1 + attacks]
    nbformat.write(autograded, root / "autograded" / "control" / ASSIGNMENT / f"{NB01}.ipynb")
    nbgrader(root, "generate_feedback", ASSIGNMENT, f"--CourseDirectory.notebook_id={NB01}", "--force",
             "--student=mallory")
    nbgrader(root, "generate_feedback", ASSIGNMENT, f"--CourseDirectory.notebook_id={NB01}", "--force",
             "--student=control", "--GenerateFeedback.preprocessors=['nbgrader.preprocessors.GetGrades',"
             "'nbconvert.preprocessors.CSSHTMLHeaderPreprocessor']")
    return root


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(course, workdir):
    """JupyterLab (with nbgrader's formgrader) on 127.0.0.1 serving the course; (url, token)."""
    port, token = free_port(), secrets.token_hex(16)
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
               JUPYTER_CONFIG_DIR=str(workdir / "jupyter-config"), JUPYTER_DATA_DIR=str(workdir / "jupyter-data"),
               JUPYTER_RUNTIME_DIR=str(workdir / "jupyter-runtime"), IPYTHONDIR=str(workdir / "ipython"),
               JUPYTER_TOKEN=token)  # never on a command line: any process on the machine reads those
    log = workdir / "jupyterlab.log"
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--ServerApp.root_dir={course}", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(log, "wb") as log_file:
        process = subprocess.Popen(command, cwd=course, env=env, stdin=subprocess.DEVNULL, stdout=log_file,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert process.poll() is None, f"JupyterLab exited:\n{log.read_text(errors='replace')[-3000:]}"
            with contextlib.suppress(OSError, urllib.error.URLError):
                request = urllib.request.Request(f"{url}/api/status", headers={"Authorization": f"token {token}"})
                with urllib.request.urlopen(request, timeout=2) as response:
                    if response.status == 200:
                        break
            assert time.monotonic() < deadline, f"JupyterLab did not answer:\n{log.read_text(errors='replace')}"
            time.sleep(0.25)
        yield url, token
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def driver(binaries, workdir):
    browser = start_chromium(*binaries, workdir, PAGE_S)
    try:
        yield browser
    finally:
        browser.quit()


def submission_id(course, student):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", nbgrader_course.COURSE_ID) as gradebook:
        return gradebook.find_submission_notebook(NB01, ASSIGNMENT, student).id


def traces(driver, canary, title):
    """What the payloads left on the page just loaded: after clicking what a TA might click."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    time.sleep(SETTLE_S)
    for text in ("click-me", "submit-me", "focus"):
        for element in driver.find_elements(By.XPATH, f"//*[normalize-space(text())='{text}']"):
            with contextlib.suppress(WebDriverException):  # a covered or moved element: clicked as far as it goes
                element.click()
    time.sleep(SETTLE_S)
    found = []
    with contextlib.suppress(WebDriverException):  # a page navigated away (meta refresh) cannot be asked
        if driver.execute_script("return window.__xss || null") is not None:
            found.append("the marker global was set")
    if driver.title != title:
        found.append(f"the title became {driver.title!r}")
    if canary.hits:
        found.append(f"the canary was asked for {sorted(set(canary.hits))}")
    canary.hits.clear()
    return found


def formgrader_page(driver, server, course, student):
    url, token = server
    driver.get(f"{url}/formgrader/submissions/{submission_id(course, student)}/?token={token}")


def assert_formgrader_page(driver):
    """formgrader's page itself came: its score inputs for the notebook's test cells (its scripts stop early here,
    where MathJax cannot load from its CDN, both with and without the sanitizer)."""
    from selenium.webdriver.common.by import By

    wait_until(driver, lambda: driver.find_elements(By.CSS_SELECTOR, "input.score"), PAGE_S,
               "formgrader's score inputs")


def feedback_page(driver, course, student):
    driver.get((course / "feedback" / student / ASSIGNMENT / f"{NB01}.html").as_uri())


def assert_honest_cell_renders(driver):
    from selenium.webdriver.common.by import By

    headings = [h for h in driver.find_elements(By.TAG_NAME, "h2") if HONEST_MARKER in h.text]
    assert headings, "the honest heading is not on the page"
    cell = headings[0].find_element(By.XPATH, "./ancestor::div[contains(@class, 'text_cell_render')][1]")
    assert [li.text for li in cell.find_elements(By.TAG_NAME, "li")] == ["first point", "second point"]
    assert [td.text for td in cell.find_elements(By.CSS_SELECTOR, "table td")] == ["cat", "0.75"]
    assert 'print("<b>not markup</b>")' in cell.find_element(By.TAG_NAME, "pre").text
    assert cell.find_element(By.TAG_NAME, "img").get_attribute("src").endswith("figures/mine.png")
    assert "My reading of the scores" in cell.text


def test_the_control_pages_run_the_payloads(driver, server, course, canary):
    """Without the sanitizer the same cells run on both pages: the checks below can see a script."""
    feedback_page(driver, course, "control")
    assert traces(driver, canary, NB01), "the unsanitized feedback page ran nothing: the test could not see it"
    formgrader_page(driver, server, course, "control")
    assert traces(driver, canary, NB01), "the unsanitized formgrader page ran nothing: the test could not see it"


def test_formgraders_submission_page_runs_nothing_of_the_students(driver, server, course, canary):
    formgrader_page(driver, server, course, "mallory")
    found = traces(driver, canary, NB01)
    assert not found, found
    assert_formgrader_page(driver)
    from selenium.webdriver.common.by import By

    assert driver.find_element(By.ID, GRADE_ID).tag_name == "input"  # the grade's own input, not the heading
    driver.save_screenshot(str(artifacts_dir() / "formgrader-sanitized.png"))
    assert_honest_cell_renders(driver)


def test_the_feedback_page_runs_nothing_of_the_students(driver, course, canary):
    feedback_page(driver, course, "mallory")
    found = traces(driver, canary, NB01)
    assert not found, found
    driver.save_screenshot(str(artifacts_dir() / "feedback-sanitized.png"))
    assert_honest_cell_renders(driver)


def test_autograded_keeps_the_honest_cell_as_written_and_notes_the_rest(course):
    submitted = nbformat.read(course / "submitted" / "mallory" / ASSIGNMENT / f"{NB01}.ipynb", as_version=4)
    graded = nbformat.read(course / "autograded" / "mallory" / ASSIGNMENT / f"{NB01}.ipynb", as_version=4)
    honest = [cell.source for cell in graded.cells if HONEST_MARKER in cell.source]
    assert honest == [HONEST]
    attacks = len(attack_cells("http://127.0.0.1:1"))
    changed = [index for index, (before, cell) in enumerate(zip(submitted.cells, graded.cells, strict=True))
               if cell.cell_type != "code" and before.source != cell.source]
    assert changed == list(range(1, attacks))  # the attack cells (the heading among them), and no other text cell
    assert graded.cells[attacks].source == "tagged" and graded.cells[attacks].metadata.tags == []  # its tag only
    assert all(graded.cells[index].source.startswith("<p><em>attnkit changed") for index in changed)
    assert "title" not in graded.metadata
    outputs = [cell.outputs for cell in graded.cells if cell.source == "shown = 1"]
    assert outputs == [[]], outputs  # the handed-in outputs are gone; the cell printed nothing in the sandbox
    assert json.dumps(graded.metadata).count("script") == 0


def test_attnkits_own_pages_run_nothing_of_the_students(driver, workdir, canary):
    """attnkit's feedback page, class report and similarity page print student text (ids, notes, messages, code)
    escaped: the same payloads, in every field a student controls, run nothing there either."""
    js = payload(canary.url)
    hostile = f'<script>{js}</script>"><img src=x onerror="{js}"><svg onload="{js}">\' onmouseover=\'{js}'
    pages = {"feedback": feedback_html(_document(hostile), "en"),
             "class-report": class_report_html([_document(hostile), _document("plain")]),
             "similarity": similarity_html(*_similarity_inputs(hostile))}
    for name, page in pages.items():
        path = workdir / f"attnkit-{name}.html"
        path.write_text(page, encoding="utf-8")
        title = re.search(r"<title>(.*?)</title>", page, re.DOTALL).group(1)
        driver.get(path.as_uri())
        assert driver.title == html.unescape(title), name
        found = traces(driver, canary, html.unescape(title))
        assert not found, (name, found)
