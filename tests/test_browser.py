"""A student's view in a real browser: JupyterLab shows the check feedback, nbgrader's buttons and pages work.

Debian's Chromium and chromedriver drive a JupyterLab started here on 127.0.0.1, in a temporary course
(the committed release notebooks, the source notebooks and nbgrader_config.py), through Selenium with
Selenium Manager off: the driver's path is given, nothing is downloaded. Notebook 03 is opened twice,
with a correct `causal_mask` and with one that also hides the diagonal; the cells up to its check cell
run from the Run menu, and the tests read the output area as the student sees it. The wrong copy climbs the hint
ladder: its check cell run once (rung 1: the symptom and a question), run again (rung 2: the reproduced mistake and its
hint), then the cell below it, `check(..., hint=3)` (rung 3: what to change); one screenshot per rung. Then nbgrader's
Validate button and the formgrader page. The wrong copy is opened a third time in a kernel of its own that
has only the student kit installed (tests/student_kit_env.py): the same feedback, from stored vectors. A third copy
has a right causal_mask and a second masking route that no known mistake reproduces: its rung 2 says where the
computation departs from the notes' steps, in English in the full kit and in Chinese in the student kit (the student
guides' pictures, docs/_static/ladder-masking_routes-departure-rung2-*.png).
After grading: the wrong copy, handed in with the other notebooks untouched and autograded in the sandbox by the
course's `nbgrader autograde`, in formgrader's grading view; attnkit's feedback page and class report opened from
disk, a student's link in the report followed. Their screenshots are docs/instructor/feedback.md's pictures.

`.ci/run` installs chromium and chromium-driver. Without them these tests skip, except in CI (CI set),
where a missing browser fails them. Screenshots go to $ATTNKIT_ARTIFACTS (default /tmp/attnkit-artifacts),
never into the repository.
"""

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser_helpers import (
    artifacts_dir,
    menu,
    output_lines,
    shown_images,
    start_chromium,
    visible_panel,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "03_causal_attention.ipynb"
CHECK_SOURCE = 'check("causal_mask", causal_mask)'
RUNG_3_SOURCE = 'check("causal_mask", causal_mask, hint=3)'  # below the check cell in the wrong copies
MISCONCEPTION = "mask_includes_diagonal"
STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()"
SOLUTIONS = {
    "correct": "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)",
    # The classic slip: the diagonal is masked too, so a token cannot see itself.
    "wrong": "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))",
}
# A learner who scales the scores this route is handed (the notes scale them before calling it): no mistake of the
# table reproduces it, so rung 2 says where the computation departs from the notes' steps (issue 58).
DEPARTS_CHECK_SOURCE = 'check("masking_routes", causal_weights_renormalised, causal_weights_neg_inf)'
DEPARTS = {
    "causal_weights_renormalised": "    keep = torch.tril(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1], "
                                   "device=attn_weights.device))\n    masked = attn_weights * keep\n"
                                   "    return masked / masked.sum(dim=-1, keepdim=True)",
    "causal_weights_neg_inf": "    num_tokens = attn_scores.shape[-1]\n"
                              "    mask = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), "
                              "diagonal=1)\n    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)\n"
                              "    return torch.softmax(masked / num_tokens ** 0.5, dim=-1)",
}
# Bounds, in seconds: each is far above what a 2-core machine needs (the module takes about 45 s there once the
# student kit's venv exists, a minute with the departure copies), and no wait outlasts TOTAL_S from the server's
# start, so a hung step cannot keep the module past 3.5 minutes.
TOTAL_S = 210
SERVER_START_S = 45
PAGE_S = 30
KERNEL_S = 45
RUN_S = 60
VALIDATE_S = 60
# What an app page must not show (formgrader's error pages and its exchange warning say these).
ERROR_MARKERS = ("traceback", "error", "does not exist", "could not be")
PYTHON_KERNEL = "Python 3 (ipykernel)"
KIT_KERNEL = ("attnkit-student-kit", "Student kit")  # (kernelspec name, display name)


_deadline = [float("inf")]  # set when the server starts


def time_left(timeout):
    """timeout, or less where the module's TOTAL_S runs out first."""
    return max(1.0, min(timeout, _deadline[0] - time.monotonic()))


# ---------------------------------------------------------------------------------------------
# the browser, the course, the server


@pytest.fixture(scope="module")
def browser_binaries():
    """(chromium, chromedriver): skip where they are missing, unless this is CI."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if chromium and chromedriver:
        return chromium, chromedriver
    missing = " and ".join(name for name, path in (("chromium", chromium), ("chromedriver", chromedriver)) if not path)
    message = f"{missing} not found (apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}: .ci/run installs them in CI")
    pytest.skip(message)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def course(workdir, repo_root):
    """The course root JupyterLab serves: nbgrader_config.py, source/, release/, and the two student copies."""
    root = workdir / "course"
    shutil.copytree(repo_root / "source", root / "source")
    shutil.copytree(repo_root / "release" / "attention", root / "release" / "attention")
    exchange = workdir / "exchange"  # formgrader warns on every page without a writable exchange
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    config = (repo_root / "nbgrader_config.py").read_text(encoding="utf-8")
    config += f"\nc.Exchange.root = {str(exchange)!r}\n"
    (root / "nbgrader_config.py").write_text(config, encoding="utf-8")

    release = root / "release" / "attention" / NOTEBOOK
    for name, body in SOLUTIONS.items():
        nb = nbformat.read(release, as_version=4)
        stubs = [cell for cell in nb.cells if "def causal_mask(" in cell.source and STUB in cell.source]
        assert len(stubs) == 1, f"{NOTEBOOK}: expected one causal_mask stub, found {len(stubs)}"
        stubs[0].source = stubs[0].source.replace(STUB, body)
        if name == "wrong":  # the student asks for the third rung in a cell of their own, below the check
            at = next(i for i, cell in enumerate(nb.cells) if CHECK_SOURCE in cell.source)
            nb.cells.insert(at + 1, nbformat.v4.new_code_cell(RUNG_3_SOURCE))
        (root / "student").mkdir(exist_ok=True)
        nbformat.write(nb, root / "student" / f"{Path(NOTEBOOK).stem}_{name}.ipynb")
        if name == "wrong":  # the same student, reading Chinese, in a kernel with only the student kit
            nb.metadata["kernelspec"] = {"name": KIT_KERNEL[0], "display_name": KIT_KERNEL[1], "language": "python"}
            stubs[0].source = 'import os\nos.environ["ATTNKIT_LANG"] = "zh"\n' + stubs[0].source
            nbformat.write(nb, root / "student" / f"{Path(NOTEBOOK).stem}_{name}_student_kit.ipynb")
    write_departing_copies(release, root / "student")
    return root


def write_departing_copies(release, student):
    """Notebook 03 with a right causal_mask and the two masking routes, one of them scaled (DEPARTS): in the full
    kit's kernel, and in Chinese in the student kit's."""
    nb = nbformat.read(release, as_version=4)
    for name, body in {"causal_mask": SOLUTIONS["correct"], **DEPARTS}.items():
        stubs = [cell for cell in nb.cells if f"def {name}(" in cell.source and STUB in cell.source]
        assert len(stubs) == 1, f"{NOTEBOOK}: expected one {name} stub, found {len(stubs)}"
        stubs[0].source = stubs[0].source.replace(STUB, body)
    nbformat.write(nb, student / f"{Path(NOTEBOOK).stem}_departs.ipynb")
    nb.metadata["kernelspec"] = {"name": KIT_KERNEL[0], "display_name": KIT_KERNEL[1], "language": "python"}
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    first.source = 'import os\nos.environ["ATTNKIT_LANG"] = "zh"\n' + first.source
    nbformat.write(nb, student / f"{Path(NOTEBOOK).stem}_departs_student_kit.ipynb")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lab:
    def __init__(self, url, token, log):
        self.url, self.token, self.log = url, token, log

    def request(self, path, method="GET", timeout=10):
        """(status, body) of an authenticated request to the server."""
        headers = {"Authorization": f"token {self.token}"}
        request = urllib.request.Request(self.url + path, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8", "replace")

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def write_json(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def jupyter_environment(workdir, kit_python):
    """The server's environment: this interpreter's bin/ first on PATH, Jupyter's state in workdir."""
    jupyter = workdir / "jupyter"
    # The kernel is this interpreter, the one with autograder installed, whatever else is on the machine:
    # JUPYTER_PATH comes before every other kernelspec directory.
    write_json(jupyter / "path" / "kernels" / "python3" / "kernel.json", {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": PYTHON_KERNEL,
        "language": "python",
    })
    # A student's kernel on a hub: the student kit's venv, where neither the reference nor the checks exist.
    write_json(jupyter / "path" / "kernels" / KIT_KERNEL[0] / "kernel.json", {
        "argv": [str(kit_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": KIT_KERNEL[1],
        "language": "python",
    })
    settings = jupyter / "config" / "lab" / "user-settings" / "@jupyterlab"
    # Every cell in the DOM (no windowing), and no news toast over the notebook.
    write_json(settings / "notebook-extension" / "tracker.jupyterlab-settings", {"windowingMode": "none"})
    write_json(settings / "apputils-extension" / "notification.jupyterlab-settings",
               {"fetchNews": "false", "checkForUpdates": False})
    env = dict(os.environ)
    env.update({
        # nbgrader's server extensions shell out to alembic, which lives next to the venv's python.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        "JUPYTER_PATH": str(jupyter / "path"),
        "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
        "JUPYTER_DATA_DIR": str(jupyter / "data"),
        "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
        "IPYTHONDIR": str(workdir / "ipython"),
        "ATTNKIT_LANG": "en",
        "PYTHONUNBUFFERED": "1",
    })
    return env


@pytest.fixture(scope="module")
def lab(browser_binaries, course, workdir, student_kit_venv):
    """A JupyterLab server on 127.0.0.1 serving the course; always shut down (its kernels too)."""
    port, token = free_port(), secrets.token_hex(16)
    log = workdir / "jupyterlab.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={course}",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    environment = jupyter_environment(workdir, student_kit_venv.python)
    environment["JUPYTER_TOKEN"] = token  # never on a command line: any process on the machine reads those
    with open(log, "wb") as log_file:
        server = subprocess.Popen(command, cwd=course, env=environment, stdin=subprocess.DEVNULL,
                                  stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    lab = Lab(f"http://127.0.0.1:{port}", token, log)
    _deadline[0] = time.monotonic() + TOTAL_S
    try:
        deadline = time.monotonic() + time_left(SERVER_START_S)
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited with {server.returncode}:\n{lab.log_tail()}")
            with contextlib.suppress(OSError):
                if lab.request("/api/status", timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not answer within {SERVER_START_S} s:\n{lab.log_tail()}")
            time.sleep(0.25)
        status, body = lab.request("/api/kernelspecs")
        argv = json.loads(body)["kernelspecs"]["python3"]["spec"]["argv"] if status == 200 else body
        assert argv[0] == sys.executable, f"JupyterLab's python3 kernel is not {sys.executable}: {argv}"
        yield lab
    finally:
        stop_server(lab, server)


def stop_server(lab, server):
    """Ask the server to shut down (it stops its kernels), then end its process group if anything is left."""
    with contextlib.suppress(OSError):
        lab.request("/api/shutdown", method="POST", timeout=5)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    # Kernels live in the server's process group (start_new_session): none may outlive the test.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(server.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def driver(browser_binaries, workdir):
    browser = start_chromium(*browser_binaries, workdir, PAGE_S, browser_log=True)
    try:
        yield browser
    finally:
        browser.quit()


# ---------------------------------------------------------------------------------------------
# driving JupyterLab


def wait_for(driver, condition, timeout, what):
    """wait_until, bounded by what is left of the module's TOTAL_S."""
    bounded = time_left(timeout)
    spent = " (the module's time is spent)" if bounded < timeout else ""
    return wait_until(driver, condition, bounded, what + spent)


@contextlib.contextmanager
def screenshot_on_failure(driver, lab, name):
    """A failing step leaves a screenshot and the server log's tail behind."""
    try:
        yield
    except BaseException as error:
        if not isinstance(error, (pytest.skip.Exception, KeyboardInterrupt)):
            path = artifacts_dir() / f"{name}-failure.png"
            with contextlib.suppress(Exception):
                driver.save_screenshot(str(path))
            error.add_note(f"screenshot: {path}\nJupyterLab log:\n{lab.log_tail()}")
        raise


def open_notebook(driver, lab, course, path, kernel=PYTHON_KERNEL):
    """Open a notebook in a fresh JupyterLab workspace; (panel, cell elements, cell sources) once its kernel is idle."""
    from selenium.webdriver.common.by import By

    sources = [cell.source for cell in nbformat.read(course / path, as_version=4).cells]
    driver.get_log("browser")  # drop what earlier pages logged
    # ?reset: a fresh workspace, so the notebook opened before this one is not restored beside it.
    driver.get(f"{lab.url}/lab/tree/{path}?reset&token={lab.token}")
    panel = wait_for(driver, lambda: visible_panel(driver), PAGE_S, f"JupyterLab to show {path}")
    cells = wait_for(driver, lambda: [cells for cells in [panel.find_elements(By.CSS_SELECTOR, ".jp-Cell")]
                                      if len(cells) == len(sources)], PAGE_S, f"the {len(sources)} cells of {path}")[0]
    status_bar = driver.find_element(By.ID, "jp-main-statusbar")
    wait_for(driver, lambda: f"{kernel} | Idle" in status_bar.text
             and panel.find_elements(By.CSS_SELECTOR, '.jp-Notebook-ExecutionIndicator[data-status="idle"]'),
             KERNEL_S, f"an idle {kernel} kernel in the status bar")
    return panel, cells, sources


def run_through_check(driver, lab, course, name, kernel=PYTHON_KERNEL, copy=None, check_source=CHECK_SOURCE):
    """Open the student's copy, run every cell above its check (the causal_mask check unless told), then the check;
    return its cell."""
    from selenium.webdriver.common.by import By

    relative = f"student/{Path(NOTEBOOK).stem}_{copy or name}.ipynb"
    _panel, cells, sources = open_notebook(driver, lab, course, relative, kernel)
    index = next(i for i, source in enumerate(sources) if check_source in source)
    check_cell = cells[index]
    check_cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt").click()
    wait_for(driver, lambda: "jp-mod-active" in check_cell.get_attribute("class"), 5, "the check cell to be selected")
    menu(driver, "Run", "Run All Above Selected Cell")
    menu(driver, "Run", "Run Selected Cell and Do not Advance")

    prompt = check_cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt")
    wait_for(driver, lambda: re.fullmatch(r"\[\d+\]:", prompt.text.strip())
             and check_cell.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"), RUN_S, "the check cell's output")
    for cell in cells[: index + 1]:
        errors = cell.find_elements(By.CSS_SELECTOR, '[data-mime-type="application/vnd.jupyter.error"]')
        assert not errors, f"a cell above the check raised:\n{errors[0].text}"
    # The student's code and the feedback below it, on one screen.
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", cells[index - 1])
    return check_cell


def run_again(driver, check_cell):
    """Run the check cell (again), as a student who has not changed the code yet; wait for the new output."""
    from selenium.webdriver.common.by import By

    prompt = check_cell.find_element(By.CSS_SELECTOR, ".jp-InputPrompt")
    before = prompt.text.strip()
    prompt.click()
    menu(driver, "Run", "Run Selected Cell and Do not Advance")
    wait_for(driver, lambda: re.fullmatch(r"\[\d+\]:", prompt.text.strip()) and prompt.text.strip() != before
             and check_cell.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"), RUN_S, "the check's second run")


def expected_feedback(causal_mask_source, monkeypatch, *, hint=1, lang="en"):
    """The lines `check` prints for this causal_mask at one rung of the hint ladder, computed here in-process."""
    from autograder import check

    monkeypatch.setenv("ATTNKIT_LANG", lang)
    namespace = {}
    exec("import torch\n" + causal_mask_source, namespace)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check("causal_mask", namespace["causal_mask"], hint=hint)
    return [line.strip() for line in output.getvalue().splitlines() if line.strip()]


def causal_mask_source(name):
    return f"def causal_mask(num_tokens):\n{SOLUTIONS[name]}\n"


def assert_no_console_errors(driver, lab, app):
    """No SEVERE browser-console entry from the server's own pages and scripts since the last look."""
    entries = driver.get_log("browser")
    errors = [entry for entry in entries if entry["level"] == "SEVERE" and lab.url in entry["message"]]
    assert not errors, f"{app} logged errors in the browser console: {errors}"


def save_screenshot(driver, name):
    path = artifacts_dir() / f"{name}.png"
    time.sleep(0.3)  # let the scroll settle
    assert driver.save_screenshot(str(path)), f"could not save {path}"
    return path


# ---------------------------------------------------------------------------------------------
# the tests


def test_correct_causal_mask_shows_only_check_marks(driver, lab, course, monkeypatch):
    with screenshot_on_failure(driver, lab, "causal_mask-correct"):
        cell = run_through_check(driver, lab, course, "correct")
        lines = output_lines(cell)
        save_screenshot(driver, "causal_mask-correct")
        marks = [line for line in lines if line.startswith("✔")]
        assert marks, f"no ✔ line in the check cell's output: {lines}"
        assert not [line for line in lines if "✘" in line], f"a ✘ for a correct causal_mask: {lines}"
        assert marks == [line for line in expected_feedback(causal_mask_source("correct"), monkeypatch)
                         if line.startswith("✔")]
        assert not shown_images(driver, cell), "a heatmap for a correct mask"
        assert_no_console_errors(driver, lab, "JupyterLab")


def rung_3_cell(driver, check_cell):
    """The cell below the check cell, `check(..., hint=3)`, scrolled to the top of the screen."""
    from selenium.webdriver.common.by import By

    cell = check_cell.find_element(By.XPATH, "following-sibling::div[contains(@class, 'jp-Cell')][1]")
    assert RUNG_3_SOURCE in cell.text, cell.text
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", cell)
    return cell


def has_change(lang):
    """Whether the mistake's ladder reaches a third rung (its misconception says what to change), and its label."""
    from autograder.course.catalog import MESSAGES, MISCONCEPTIONS_BY_ID

    return bool(MISCONCEPTIONS_BY_ID[MISCONCEPTION].change), MESSAGES["ladder.change"][lang].split("{")[0]


def test_mask_hiding_the_diagonal_climbs_the_three_rungs(driver, lab, course, monkeypatch):
    from selenium.webdriver.common.by import By

    wrong = causal_mask_source("wrong")
    with screenshot_on_failure(driver, lab, "causal_mask-wrong"):
        cell = run_through_check(driver, lab, course, "wrong")
        wait_for(driver, lambda: shown_images(driver, cell), PAGE_S, "the heatmap to load")
        lines = output_lines(cell)
        save_screenshot(driver, "causal_mask-wrong-rung1-en")
        failures = [line for line in lines if line.startswith("✘")]
        assert failures, f"no ✘ line for a mask that hides the diagonal: {lines}"
        # Rung 1 (autograder/course/n03_causal_attention/ex1_causal_mask/declaration.py, mask.hides): the symptom, a
        # picture and the question; the mistake is held back, and the last line says how to see it.
        assert "your mask hides token 0 from token 0" in failures[0], failures
        assert lines == expected_feedback(wrong, monkeypatch, hint=1)
        assert not [line for line in lines if line.startswith(("reproduced mistake", "✔"))], lines
        assert lines[-1].startswith("» the reproduced mistake and a hint"), lines
        # The table is HTML that wraps at words (JupyterLab breaks printed text anywhere, mid-word too).
        table = cell.find_elements(By.CSS_SELECTOR, '[data-mime-type="text/html"] .attnkit-check')
        assert table, "check(...)'s table is not shown as HTML"
        wrapping = "return getComputedStyle(arguments[0].lastElementChild).wordBreak"
        assert driver.execute_script(wrapping, table[0]) == "normal"
        # Rung 2: the same code run again names the mistake (mask_includes_diagonal) and its hint.
        run_again(driver, cell)
        wait_for(driver, lambda: "reproduced mistake" in " ".join(output_lines(cell)), RUN_S, "the named mistake")
        lines = output_lines(cell)
        save_screenshot(driver, "causal_mask-wrong-rung2-en")
        assert lines == expected_feedback(wrong, monkeypatch, hint=2)
        assert "reproduced mistake — the mask also hides the diagonal" in lines, lines
        # Rung 3, on request in the cell below: what to change, in words (when the misconception says it).
        below = rung_3_cell(driver, cell)
        run_again(driver, below)
        change, label = has_change("en")
        lines = output_lines(below)
        save_screenshot(driver, "causal_mask-wrong-rung3-en")
        assert lines == expected_feedback(wrong, monkeypatch, hint=3)
        assert any(line.startswith(label) for line in lines) == change, lines
        assert not [line for line in lines if line.startswith("»")], lines
        assert_no_console_errors(driver, lab, "JupyterLab")


def test_student_kit_kernel_shows_the_same_feedback_in_chinese(driver, lab, course, monkeypatch):
    with screenshot_on_failure(driver, lab, "causal_mask-student-kit"):
        cell = run_through_check(driver, lab, course, "wrong", kernel=KIT_KERNEL[1], copy="wrong_student_kit")
        wait_for(driver, lambda: shown_images(driver, cell), PAGE_S, "the heatmap to load")
        lines = output_lines(cell)
        save_screenshot(driver, "causal_mask-student-kit-rung1-zh")
        # The kit's stored vectors give exactly what the full kit's live check prints (computed here in-process).
        wrong = causal_mask_source("wrong")
        assert lines == expected_feedback(wrong, monkeypatch, lang="zh")
        run_again(driver, cell)
        wait_for(driver, lambda: "重现出的错误" in " ".join(output_lines(cell)), RUN_S, "the named mistake")
        lines = output_lines(cell)
        save_screenshot(driver, "causal_mask-student-kit-rung2-zh")
        assert lines == expected_feedback(wrong, monkeypatch, hint=2, lang="zh")
        below = rung_3_cell(driver, cell)
        run_again(driver, below)
        lines = output_lines(below)
        save_screenshot(driver, "causal_mask-student-kit-rung3-zh")
        assert lines == expected_feedback(wrong, monkeypatch, hint=3, lang="zh")
        assert_no_console_errors(driver, lab, "JupyterLab")


def departing_feedback(monkeypatch, *, lang):
    """The lines `check` prints for the DEPARTS routes on its second run in a fresh session (rung 2), computed here
    in-process as the kernel's run them."""
    from autograder.running.in_notebook import NotebookRuntime, ReferenceExpectations

    monkeypatch.setenv("ATTNKIT_LANG", lang)
    namespace = {}
    for name, body in DEPARTS.items():
        exec(f"import torch\ndef {name}({'attn_weights' if 'renormalised' in name else 'attn_scores'}):\n{body}\n",
             namespace)
    session, output = NotebookRuntime(ReferenceExpectations()), io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()):
        session.check("masking_routes", *(namespace[name] for name in DEPARTS))
    with contextlib.redirect_stdout(output):
        session.check("masking_routes", *(namespace[name] for name in DEPARTS))
    return [line.strip() for line in output.getvalue().splitlines() if line.strip()]


@pytest.mark.parametrize(("kernel", "copy", "lang", "words"), [
    (PYTHON_KERNEL, "departs", "en", "where it departs — your code reproduces the notes' causal mask, masked attention "
                                     "scores, then departs from them at the attention weights"),
    (KIT_KERNEL[1], "departs_student_kit", "zh",
     "从哪里开始不同：你的代码算出了与笔记相同的因果掩码、填入掩码后的注意力分数，从注意力权重开始不同"),
], ids=["en", "zh"])
def test_rung_2_says_where_the_computation_departs(driver, lab, course, monkeypatch, kernel, copy, lang, words):
    """A mistake no table entry reproduces: rung 2 names the notes' steps the learner's run reproduced and the first
    it did not, in the learner's language, in the full kit and in the student kit (docs/student-guide*.md's
    pictures)."""
    name = f"masking_routes-departure-rung2-{lang}"
    with screenshot_on_failure(driver, lab, name):
        cell = run_through_check(driver, lab, course, "departs", kernel=kernel, copy=copy,
                                 check_source=DEPARTS_CHECK_SOURCE)
        assert not [line for line in output_lines(cell) if line.startswith(words[:12])]  # rung 1 holds it back
        run_again(driver, cell)
        wait_for(driver, lambda: any(line.startswith(words) for line in output_lines(cell)), RUN_S,
                 "the departure line")
        lines = output_lines(cell)
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", cell)
        save_screenshot(driver, name)
        assert lines == departing_feedback(monkeypatch, lang=lang)
        assert_no_console_errors(driver, lab, "JupyterLab")


def test_nbgrader_validate_button_shows_results(driver, lab, course):
    from selenium.webdriver.common.by import By

    with screenshot_on_failure(driver, lab, "validate"):
        panel, _cells, _sources = open_notebook(driver, lab, course, f"student/{Path(NOTEBOOK).stem}_correct.ipynb")
        buttons = [b for b in panel.find_elements(By.CSS_SELECTOR, ".jp-Toolbar-item.jp-ToolbarButton")
                   if b.text.strip() == "Validate"]
        assert buttons, "nbgrader's Validate button is missing from the notebook toolbar"
        buttons[0].find_element(By.CSS_SELECTOR, "jp-button").click()
        dialog = wait_for(driver, lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog"), VALIDATE_S,
                          "nbgrader's validation dialog")[0]
        text = dialog.text
        assert "Validation Results" in text, text
        assert "There was an error running the validate command" not in text, text
        assert "Success! Your notebook passes all the tests." in text, text
        assert "nbgrader-SuccessDialog" in dialog.get_attribute("class"), text
        dialog.find_element(By.CSS_SELECTOR, ".jp-Dialog-button.jp-mod-accept").click()
        wait_for(driver, lambda: not driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog"), 5, "the dialog to close")
        assert_no_console_errors(driver, lab, "JupyterLab")


def test_formgrader_page_loads(driver, lab):
    from selenium.webdriver.common.by import By

    status, body = lab.request("/formgrader")
    assert status == 200, f"/formgrader answered {status}:\n{body[:2000]}"
    with screenshot_on_failure(driver, lab, "formgrader"):
        driver.get_log("browser")  # drop what earlier pages logged
        driver.get(f"{lab.url}/formgrader?token={lab.token}")
        # The assignment row comes from formgrader's API, which reads the course's gradebook and source/.
        wait_for(driver, lambda: [row for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
                                  if row.text.split()[:1] == ["attention"]], PAGE_S, "the assignment 'attention'")
        text = driver.find_element(By.TAG_NAME, "body").text
        shown = [marker for marker in ERROR_MARKERS if marker in text.lower()]
        assert not shown, f"formgrader shows {shown}:\n{text}"
        assert_no_console_errors(driver, lab, "formgrader")


def test_attnkits_feedback_page_leads_with_what_lost_points(driver, tmp_path):
    """attnkit grade's page for a mask that hides the diagonal, beside a solved exercise: the lost points, their
    message and heatmap on top; what passed folded until its summary is clicked; nothing refused by the page's CSP."""
    from selenium.webdriver.common.by import By

    from attnkit import solutions
    from autograder.grading.notebooks import NotebookResult
    from autograder.outputs import records
    from autograder.running.runner import run_exercise

    namespace = {}
    exec("import torch\n" + causal_mask_source("wrong"), namespace)
    results = run_exercise("causal_mask", {"causal_mask": namespace["causal_mask"]}, lang="en")
    solved = {name: getattr(solutions, name) for name in ("causal_weights_renormalised", "causal_weights_neg_inf")}
    results += run_exercise("masking_routes", solved, lang="en")
    notebook = NotebookResult("s", Path(NOTEBOOK).stem, NOTEBOOK, "graded", "", results)
    records.write_student(tmp_path, records.student_document("s", "attention", "hash", 1, [notebook]), "en")
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get((tmp_path / "feedback" / "s.html").as_uri())
    image = wait_until(driver, lambda: [img for img in driver.find_elements(By.CSS_SELECTOR, ".lost img") if
                                        driver.execute_script("return arguments[0].naturalWidth > 0", img)],
                       PAGE_S, "the heatmap on the feedback page")[0]
    assert "they differ in 6 of 36 cells" in image.get_attribute("alt")
    lost = driver.find_element(By.CSS_SELECTOR, "section.lost-points")
    summary = driver.find_element(By.CSS_SELECTOR, "details summary")
    assert "your mask hides token 0 from token 0" in lost.text and "reproduced mistake" in lost.text
    assert lost.location["y"] < summary.location["y"] and "checks passed" in summary.text
    passed = driver.find_elements(By.CSS_SELECTOR, "details tr.passed")
    assert passed and not any(row.is_displayed() for row in passed)  # folded
    save_screenshot(driver, "feedback-page-en")
    summary.click()
    wait_until(driver, lambda: all(row.is_displayed() for row in passed), 5, "the passed checks to unfold")
    refused = [entry for entry in driver.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert not refused, refused


# ---------------------------------------------------------------------------------------------
# after grading: formgrader's autograded view and attnkit's class report (docs/instructor/feedback.md's screenshots)

AUTOGRADED_STUDENT = "wrong-mask"
AUTOGRADE_S = 300
# A student folder named as students do name them: a space, brackets and '#' (a URL's fragment, unless encoded).
ODD_STUDENT = "lee (late) #2"


@pytest.fixture(scope="module")
def autograded(course, lab, workdir):
    """The wrong causal_mask copy handed in with the other three notebooks untouched, autograded in attnkit's
    sandbox by the course's own `nbgrader autograde`. The server waits meanwhile: the module's clock (TOTAL_S)
    is moved on by the time autograding took."""
    from autograder.integrations import nbgrader_course

    started = time.monotonic()
    handed_in = workdir / "handed-in"
    shutil.copytree(course / "release" / "attention", handed_in)
    shutil.copyfile(course / "student" / f"{Path(NOTEBOOK).stem}_wrong.ipynb", handed_in / NOTEBOOK)
    nbgrader_course.generate_release(course)  # the gradebook's assignment, notebooks and graded cells
    nbgrader_course.submit(course, AUTOGRADED_STUDENT, handed_in)
    nbgrader_course.autograde(course, [AUTOGRADED_STUDENT])
    assert time.monotonic() - started < AUTOGRADE_S
    _deadline[0] += time.monotonic() - started
    return course / "autograded" / AUTOGRADED_STUDENT / "attention" / NOTEBOOK


def test_formgraders_autograded_view_shows_attnkits_verdicts(driver, lab, autograded):
    from nbgrader.api import Gradebook
    from selenium.webdriver.common.by import By

    from autograder.integrations.nbgrader_course import COURSE_ID

    # The gradebook nbgrader autograde wrote (the course's default, gradebook.db in its root): the submission's id.
    with Gradebook(f"sqlite:///{autograded.parents[3] / 'gradebook.db'}", COURSE_ID) as gradebook:
        submission = gradebook.find_submission_notebook(Path(NOTEBOOK).stem, "attention", AUTOGRADED_STUDENT).id
    with screenshot_on_failure(driver, lab, "formgrader-autograded"):
        driver.get_log("browser")
        driver.get(f"{lab.url}/formgrader/submissions/{submission}/?token={lab.token}")
        # A graded cell: nbgrader's panel (its code and the score box), then its output, attnkit's verdicts.
        graded = wait_for(driver, lambda: [cell for cell in driver.find_elements(By.CSS_SELECTOR, "div.cell")
                                           if cell.find_elements(By.CSS_SELECTOR, ".nbgrader_cell input.score")
                                           and "reproduced mistake" in cell.text], PAGE_S,
                          "the causal_mask graded cell with attnkit's named mistake")[0]
        assert "✘" in graded.text, graded.text
        # The cell's heading (its score box) just below formgrader's fixed navigation bar.
        driver.execute_script("arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -70)", graded)
        # For the picture only: formgrader's script fills the score box from its API a moment after the page.
        score = graded.find_element(By.CSS_SELECTOR, "input.score")
        with contextlib.suppress(AssertionError):
            wait_for(driver, lambda: score.get_attribute("value"), 10, "the score box")
        save_screenshot(driver, "formgrader-autograded-en")
        # nbconvert's template loads MathJax from a CDN, which this offline machine cannot reach; formgrader's
        # script then stops at `MathJax.Hub`. Any other error counts.
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
                  and lab.url in entry["message"] and "MathJax is not defined" not in entry["message"]]
        assert not errors, f"formgrader logged errors in the browser console: {errors}"


def _report_class():
    """Twelve students: solved, one notebook missing, and the mistakes the catalogue names most, as records."""
    from test_class_report import _check_ids, _document

    from autograder.course.exercises import NOTEBOOKS

    scaled, mask, softmax = (_check_ids(exercise) for exercise in ("self_attention_v1", "causal_mask",
                                                                    "softmax_naive"))
    mistakes = [
        [], [(scaled[0], "missing_scaling")], [(mask[0], "mask_inverted")],
        [(scaled[0], "missing_scaling"), (softmax[0], "softmax_wrong_dim")], [], [(mask[0], "mask_inverted")],
        [(scaled[1], "missing_scaling")], [], [(softmax[0], "softmax_wrong_dim")], [], [(scaled[0], "missing_scaling")],
    ]
    documents = [_document(f"student-{number:02}", named) for number, named in enumerate(mistakes, start=1)]
    return [*documents, _document(ODD_STUDENT, [(mask[0], "mask_inverted")], missing=(NOTEBOOKS[3],))]


def test_the_class_report_lists_every_student_with_a_working_link(driver, tmp_path):
    """attnkit grade's class report opened from disk: a row per student; a student's link opens that student's
    feedback page, '#' and spaces in the id included."""
    from selenium.webdriver.common.by import By

    from autograder.outputs import records
    from autograder.outputs.class_report import write_class_report

    documents = _report_class()
    for document in documents:
        records.write_student(tmp_path, document, "en")
    records.write_grades_csv(tmp_path, documents)
    report = write_class_report(tmp_path, documents)
    driver.get_log("browser")
    driver.get(report.as_uri())
    wait_until(driver, lambda: driver.find_elements(By.CSS_SELECTOR, "img") and all(
        driver.execute_script("return arguments[0].naturalWidth > 0", img)
        for img in driver.find_elements(By.CSS_SELECTOR, "img")), PAGE_S, "the report's plots")
    save_screenshot(driver, "class-report-en")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.student")
    assert [row.find_element(By.TAG_NAME, "td").text for row in rows] == sorted(d["student_id"] for d in documents)
    heading = driver.find_element(By.XPATH, "//h2[text()='Students']")
    driver.execute_script("arguments[0].scrollIntoView({block: 'start'})", heading)
    save_screenshot(driver, "class-report-students-en")
    odd = next(row for row in rows if row.find_element(By.TAG_NAME, "td").text == ODD_STUDENT)
    odd.find_element(By.LINK_TEXT, "page").click()
    wait_until(driver, lambda: driver.find_elements(By.TAG_NAME, "h1"), PAGE_S, "the student's feedback page")
    opened = urllib.parse.unquote(driver.current_url)
    assert opened == urllib.parse.unquote((tmp_path / "feedback" / f"{ODD_STUDENT}.html").as_uri()), opened
    assert driver.find_element(By.TAG_NAME, "h1").text == f"Feedback for {ODD_STUDENT}"
    assert not [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_bar_plots_longest_names_lie_inside_it_in_chromium(driver, tmp_path):
    """Chromium's own text metrics, not the plot's estimate: every line of the catalogue's longest misconception
    names, English and Chinese, lies inside the class report's bar plot (its longest English name began 130 px left
    of the picture, cut)."""
    from test_class_report import bar_plot_svg, longest_names_class

    from autograder.outputs.class_report import class_report_html

    plot = tmp_path / "bar-plot.svg"
    plot.write_text(bar_plot_svg(class_report_html(longest_names_class())), encoding="utf-8")
    driver.get(plot.as_uri())
    width = driver.execute_script("return document.documentElement.width.baseVal.value")
    boxes = driver.execute_script("return Array.from(document.querySelectorAll('text'), text => "
                                  "[text.textContent, text.getBBox().x, text.getBBox().x + text.getBBox().width])")
    assert len(boxes) > 10 and any("维度" in line for line, _, _ in boxes)
    outside = [(line, round(left), round(right)) for line, left, right in boxes if left < 0 or right > width]
    assert not outside, f"lines drawn outside the {width} px picture: {outside}"
