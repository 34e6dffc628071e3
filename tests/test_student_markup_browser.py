"""Nothing a student wrote runs in the instructor's browser: formgrader's submission page and nbgrader's feedback
page, in Debian's Chromium.

One course (the repository's nbgrader_config.py), two students handed in the same notebook 01 with the attack
cells below and one honest markdown cell; `nbgrader autograde` grades notebook 01 in the sandbox, `nbgrader
generate_feedback` writes the feedback. "control" is the test's own proof that it can see a script run: its
autograded notebook is overwritten with the submitted cells (as nbgrader stored it before the sanitizer) and its
feedback made without the sanitizer, and on those pages the payloads must fire. On mallory's pages, served by a real
JupyterLab on 127.0.0.1 (formgrader) and from disk (feedback): the page title is unchanged, the marker global is
never set, the canary server on 127.0.0.1 gets no request (meta refresh, form, stylesheet, object, iframe loads,
images from another host, MathJax styles), the links and buttons a TA would click run nothing; and the honest cell
renders (heading, list, table, code, image, typeset math).

Both pages load MathJax from a CDN (nbconvert's template, with MathJax's Safe extension): here Chromium is pointed at
`MathJaxCdn`, an HTTPS server of the test's that answers for the CDN's host with Debian's MathJax 2.7.9
(libjs-mathjax), so the pages typeset math as a TA's browser does. Skipped without chromium, chromedriver and
libjs-mathjax, except in CI.
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
import ssl
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
# nbconvert's mathjax macro (both pages' templates call it with its default URL): MathJax 2 from cdnjs, with Safe.
CDN_HOST = "cdnjs.cloudflare.com"
CDN_MATHJAX = f"https://{CDN_HOST}/ajax/libs/mathjax/"
MATHJAX_CONFIG = "config=TeX-AMS_CHTML-full,Safe"
MATHJAX_ROOT = Path("/usr/share/javascript/mathjax")  # Debian's libjs-mathjax (MathJax 2.7.9)
# What the remote images and MathJax styles below ask the canary for, as the control pages show.
IMAGE_PATHS = {"/img-markdown", "/img-reference", "/img-srcset"}
IMAGE_PATHS_OVER_HTTP = {"/img-protocol-relative", "/img-backslash"}  # on a file:// page these name a file host
MATHJAX_PATHS = {"/mathjax-style", "/mathjax-mmltoken"}
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
        *remote_image_cells(canary),  # first: the unclosed <style> below makes the rest of a control page CSS
        *mathjax_cells(canary),
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


def remote_image_cells(canary):
    """Images loaded from the canary as the page opens (a tracking pixel), each asking for its own path."""
    host = canary.removeprefix("http://")
    return [f"![pixel]({canary}/img-markdown)", f"![pixel][p]\n\n[p]: {canary}/img-reference",
            f'<img src="//{host}/img-protocol-relative">', f'<img src="\\\\{host}\\img-backslash">',
            f'<img srcset="{canary}/img-srcset 1x">', f'<p style="background-image:url({canary}/css-url)">bg</p>']


def mathjax_cells(canary):
    """Math whose MathJax rendering loads from the canary (a style's cursor, which MathJax's Safe keeps), runs a
    script when clicked (`javascript:`, which Safe drops) or takes the grade's input id (which Safe drops)."""
    return [f"$\\style{{cursor:url({canary}/mathjax-style),auto}}{{s}}$",
            f'$\\mmlToken{{mi}}[style="cursor:url({canary}/mathjax-mmltoken),auto"]{{m}}$',
            f"$\\href{{javascript:top.__xss=1;fetch('{canary}/mathjax-href')}}{{h}}$",
            f"\\(\\cssId{{{GRADE_ID}}}{{i}}\\)"]


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


class MathJaxCdn:
    """An HTTPS server on 127.0.0.1 (a certificate made for the test) that answers for CDN_HOST with Debian's MathJax:
    `/ajax/libs/mathjax/VERSION/PATH` is MATHJAX_ROOT/PATH (latest.js from its unpacked sources)."""

    def __init__(self, workdir):
        certificate, key = workdir / "cdn.pem", workdir / "cdn.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        f"/CN={CDN_HOST}", "-keyout", str(key), "-out", str(certificate)], check=True,
                       capture_output=True)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                match = re.fullmatch(r"/ajax/libs/mathjax/[0-9.]+/([A-Za-z0-9_./-]+)", self.path.split("?")[0])
                relative = match.group(1) if match and ".." not in match.group(1) else None
                path = None if relative is None else MATHJAX_ROOT / (
                    "unpacked/latest.js" if relative == "latest.js" else relative)
                if path is None or not path.is_file():
                    self.send_error(404)
                    return
                body = path.read_bytes()
                self.send_response(200)
                kind = {".js": "text/javascript", ".woff": "font/woff", ".otf": "font/otf"}.get(path.suffix)
                self.send_header("Content-Type", kind or "application/octet-stream")
                self.send_header("Access-Control-Allow-Origin", "*")  # MathJax's fonts, from a file:// page too
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def chromium_flags(self):
        return (f"--host-resolver-rules=MAP {CDN_HOST} 127.0.0.1:{self.port}", "--ignore-certificate-errors")

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
    if chromium and chromedriver and (MATHJAX_ROOT / "MathJax.js").is_file() and shutil.which("openssl"):
        return chromium, chromedriver
    if os.environ.get("CI"):
        pytest.fail("chromium, chromedriver, libjs-mathjax or openssl is missing: .ci/run installs them in CI")
    pytest.skip("chromium, chromedriver, libjs-mathjax or openssl not found "
                "(apt-get install chromium chromium-driver libjs-mathjax openssl)")


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
def mathjax_cdn(binaries, workdir):
    with MathJaxCdn(workdir) as server:
        yield server


@pytest.fixture(scope="module")
def driver(binaries, workdir, mathjax_cdn):
    browser = start_chromium(*binaries, workdir, PAGE_S, extra_flags=mathjax_cdn.chromium_flags())
    try:
        yield browser
    finally:
        browser.quit()


def submission_id(course, student):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", nbgrader_course.COURSE_ID) as gradebook:
        return gradebook.find_submission_notebook(NB01, ASSIGNMENT, student).id


def typeset(driver):
    """MathJax's version once it has typeset the page (its queue has run up to here); "none" on a page without it."""
    driver.execute_script("window.__typeset = 'none'; if (window.MathJax && MathJax.Hub) { window.__typeset = null; "
                          "MathJax.Hub.Queue(function () { window.__typeset = MathJax.version; }); }")
    return wait_until(driver, lambda: driver.execute_script("return window.__typeset"), PAGE_S, "MathJax's typesetting")


def traces(driver, canary, title, asked=None):
    """What the payloads left on the page just loaded: after clicking what a TA might click (MathJax's links among
    them, once it has typeset). The paths the canary was asked for are added to `asked`."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    time.sleep(SETTLE_S)
    typeset(driver)
    clickable = [element for text in ("click-me", "submit-me", "focus")
                 for element in driver.find_elements(By.XPATH, f"//*[normalize-space(text())='{text}']")]
    for element in clickable + driver.find_elements(By.CSS_SELECTOR, ".MathJax_CHTML a"):
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
    if asked is not None:
        asked.update(canary.hits)
    canary.hits.clear()
    return found


def formgrader_page(driver, server, course, student):
    url, token = server
    driver.get(f"{url}/formgrader/submissions/{submission_id(course, student)}/?token={token}")


def assert_formgrader_page(driver):
    """formgrader's page itself came: its score inputs for the notebook's test cells."""
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
    assert cell.find_elements(By.CSS_SELECTOR, ".MathJax_CHTML"), "MathJax typeset nothing of the honest cell"


def assert_mathjax_is_nbconverts_with_safe(driver):
    """The page loaded MathJax as nbconvert's template does: from the CDN (latest.js, which adds MathJax.js), with
    the Safe extension."""
    from selenium.webdriver.common.by import By

    sources = [script.get_attribute("src") for script in driver.find_elements(By.CSS_SELECTOR, "script[src]")]
    assert [src for src in sources if src.startswith(CDN_MATHJAX)] == [
        f"{CDN_MATHJAX}2.7.7/MathJax.js?{MATHJAX_CONFIG}"], sources
    assert driver.execute_script("return MathJax.Extension.Safe.version") == "2.7.9"


def test_the_control_pages_run_the_payloads(driver, server, course, canary):
    """Without the sanitizer the same cells run on both pages: the checks below can see a script, a remote image
    and what MathJax (Safe and all) loads."""
    asked = set()
    feedback_page(driver, course, "control")
    assert traces(driver, canary, NB01, asked), "the unsanitized feedback page ran nothing: the test could not see it"
    assert IMAGE_PATHS | MATHJAX_PATHS | {"/css-url"} <= asked, asked
    asked.clear()
    formgrader_page(driver, server, course, "control")
    assert traces(driver, canary, NB01, asked), "the unsanitized formgrader page ran nothing: the test could not see it"
    assert IMAGE_PATHS | IMAGE_PATHS_OVER_HTTP | MATHJAX_PATHS | {"/css-url"} <= asked, asked


def test_formgraders_submission_page_runs_nothing_of_the_students(driver, server, course, canary):
    formgrader_page(driver, server, course, "mallory")
    found = traces(driver, canary, NB01)
    assert not found, found
    assert_formgrader_page(driver)
    assert_mathjax_is_nbconverts_with_safe(driver)
    from selenium.webdriver.common.by import By

    assert driver.find_element(By.ID, GRADE_ID).tag_name == "input"  # the grade's own input, not the heading
    driver.save_screenshot(str(artifacts_dir() / "formgrader-sanitized.png"))
    assert_honest_cell_renders(driver)


def test_the_feedback_page_runs_nothing_of_the_students(driver, course, canary):
    feedback_page(driver, course, "mallory")
    found = traces(driver, canary, NB01)
    assert not found, found
    assert_mathjax_is_nbconverts_with_safe(driver)
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
