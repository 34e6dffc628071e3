"""`attnkit course new DIR --roster ROSTER.csv` and `attnkit course formgrader DIR` (docs/instructor/setup.md).

One course is made by the command line in a fresh HOME, as the runbook does: its gradebook holds the roster's students
with their names, the exchange has nbgrader's mode (sticky), the release holds the notebooks with the student kit's
wheel and its bilingual README beside them, and `nbgrader release_assignment` hands all of that out. Refusals (a folder
holding a course, rosters that cannot be used, a failed step) leave nothing changed. The formgrader launcher answers on
the URL it prints, on 127.0.0.1 only, with its token kept off the command line; Chromium opens formgrader on the course
(the screenshot in docs/instructor/setup.md) with no exchange warning.
"""

import ast
import contextlib
import http.cookiejar
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import artifacts_dir, start_chromium, wait_until

from autograder.integrations import course_setup, nbgrader_course
from autograder.integrations.course_formgrader import free_port
from autograder.integrations.course_roster import read_roster
from autograder.refusal import Refused

ROSTER = (
    "id,first_name,last_name,email,section\n"
    "s001,Ada,Lovelace,ada@example.org,A\n"
    "s002,李,雷,lilei@example.org,B\n"
    "\n"
    "s003,Grace,Hopper,grace@example.org,A\n"
)
NOTEBOOKS = ["01_attention_without_weights.ipynb", "02_trainable_self_attention.ipynb", "03_causal_attention.ipynb",
             "04_multi_head_attention.ipynb"]
SERVER_START_S = 120
PAGE_S = 30


def attnkit(*args, home, timeout=600):
    env = dict(os.environ, HOME=str(home),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def made(home):
    """`attnkit course new` with the roster, as the runbook runs it: the finished process."""
    roster = home / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    made = attnkit("course", "new", str(home / "attnkit-course"), "--roster", str(roster), home=home)
    assert made.returncode == 0, made.stdout + made.stderr
    return made


@pytest.fixture(scope="module")
def course(made, home):
    return home / "attnkit-course"


@pytest.mark.slow
def test_course_new_prints_its_own_two_lines_and_nothing_else(made, course):
    """The student kit's wheel is built inside `course new`: what that build prints (setuptools' "warning: build_py:
    byte-compiling is disabled") is not the instructor's business; attnkit's own lines are."""
    assert made.stderr == ""
    assert made.stdout.splitlines() == [
        f"attnkit course new: {course}: 3 students in the gradebook; the release with the student kit in "
        f"{course / 'release' / 'attention'}; the exchange {course / 'exchange'}",
        f"next: cd {course} && nbgrader release_assignment attention; attnkit course formgrader {course} opens "
        "formgrader"]


@pytest.mark.slow
def test_a_kit_build_that_fails_says_why(tmp_path, monkeypatch):
    """The build's output is kept from the terminal, never its reason: a wheel that cannot be built stops `course
    new` with python -m build's own words (here: a pyproject.toml that is not TOML)."""
    from autograder.integrations.student_kit import build

    def broken_kit(out_dir, seed, supported):
        Path(out_dir).mkdir(parents=True)
        (Path(out_dir) / "pyproject.toml").write_text("[project\nname = 'kit'\n", encoding="utf-8")
        return {}

    monkeypatch.setattr(build, "build", broken_kit)
    with pytest.raises(OSError, match=r"(?s)the student kit's wheel: python -m build failed with exit code 1; its "
                                      r"last lines:\n.*pyproject\.toml"):
        course_setup.kit_wheel(tmp_path / "release")
    assert not list((tmp_path / "release").glob("*.whl"))


@pytest.mark.slow
def test_a_folder_holding_a_course_is_refused_and_left_as_it_was(course, home):
    before = (course / "gradebook.db").read_bytes()
    again = attnkit("course", "new", str(course), "--roster", str(home / "roster.csv"), home=home)
    assert again.returncode == 2
    assert "already holds a course" in again.stderr and "nothing was changed" in again.stderr
    assert (course / "gradebook.db").read_bytes() == before


@pytest.mark.parametrize(("text", "why"), [
    (b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xff\xfe", "line 1: a ZIP file, such as an Excel workbook"),
    # Excel's plain "CSV" on a Western-European Windows: cp1252, its line and what to do
    ("id,first_name\ns1,Ada\ns2,Zoë\n".encode("cp1252"), "line 3: byte 0xeb is not UTF-8 text; save it as "
                                                        "\"CSV UTF-8\""),
    ("name,email\nAda,ada@example.org\n", "has no 'id' column"),
    ("id,first_name\ns1,Ada\ns2,Bob\ns1,Eve\n", "line 4: id 's1' again (first on line 2)"),
    ("id,first_name\n../../etc,Ada\n", "use letters, digits"),
    ("id,first_name\n.hidden,Ada\n", "use letters, digits"),
    ("id,first_name\ns1,Ada,extra\n", "line 2: 3 fields, the header has 2"),
    ("id,first_name\ns1,\"Ada\x1b[2J\"\n", "the first_name holds a control character"),
    ("id,first_name\ns1,<img src=x onerror=alert(1)>\n", "line 2: the first_name holds '<' or '>'"),
    ("id,last_name,email\ns1,Lovelace,Ada <ada@example.org>\n", "the email holds '<' or '>'"),
    ('id,first_name\ns1,Ada\nc5"><svg onload=alert(1)>,Eve\n', "line 3: id 'c5\"><svg onload=alert(1)>': use letters"),
    ("id,first_name\n", "names no student"),
    ("", "is empty"),
    ('id,first_name\ns1,"Ada\n', "is not a CSV file"),
])
def test_a_roster_that_cannot_be_used_is_refused_before_anything_is_written(tmp_path, text, why):
    roster = tmp_path / "roster.csv"
    if isinstance(text, bytes):
        roster.write_bytes(text)
    else:
        roster.write_text(text, encoding="utf-8")
    with pytest.raises(Refused, match="roster .*" + why.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")
                       .replace("[", r"\[")):
        course_setup.new_course(tmp_path / "course", roster, build_wheel=_no_wheel)
    assert not (tmp_path / "course").exists()


def test_the_roster_reads_nbgraders_columns_and_leaves_out_the_others(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_bytes("\ufeffID, First_Name ,last_name,Email,section\ns1,Ada,,a@x.org,A\n".encode())
    (student,) = read_roster(roster)
    assert (student.id, student.first_name, student.last_name, student.email) == ("s1", "Ada", None, "a@x.org")


def test_a_roster_in_another_encoding_is_read_when_the_instructor_names_it(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_bytes("id,first_name,last_name\ns1,Zoë,Müller\n".encode("cp1252"))
    (student,) = read_roster(roster, encoding="cp1252")
    assert (student.first_name, student.last_name) == ("Zoë", "Müller")
    roster.write_bytes("id,first_name\ns1,李\n".encode("gbk") + b"s2,\x81\n")  # not gbk either: said, with its line
    with pytest.raises(Refused, match=r"line 3: byte 0x81 is not gbk text; give the encoding it was saved in"):
        read_roster(roster, encoding="gbk")
    with pytest.raises(Refused, match="'base64' is not an encoding"):
        read_roster(roster, encoding="base64")


def test_the_command_line_reads_a_roster_in_the_encoding_it_names(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_bytes("id,first_name\ns1,Zoë\n".encode("cp1252"))
    refused = attnkit("course", "new", str(tmp_path / "course"), "--roster", str(roster), home=tmp_path)
    assert refused.returncode == 2 and "line 2: byte 0xeb is not UTF-8 text" in refused.stderr, refused.stderr
    assert "--encoding" in refused.stderr and not (tmp_path / "course").exists()
    # accepted: --encoding reaches the roster's reading, which runs before anything else is made
    refused = attnkit("course", "new", str(tmp_path / "course"), "--roster", str(roster), "--encoding", "cp1252",
                      "--exchange", str(roster), home=tmp_path)
    assert refused.returncode == 2 and "exists and is not a folder" in refused.stderr, refused.stderr


def test_a_roster_keeps_names_as_written(tmp_path):
    """Accents, CJK, commas, apostrophes, quotes and '&' are names: kept exactly (formgrader's pages escape them)."""
    roster = tmp_path / "roster.csv"
    roster.write_text('id,first_name,last_name,email\ns1,Zoë,"O\'Brien ""Bob"" & Co",zoe@example.org\n'
                      's2,李,"雷, Jr.",\n', encoding="utf-8")
    assert [(s.id, s.first_name, s.last_name, s.email) for s in read_roster(roster)] == [
        ("s1", "Zoë", "O'Brien \"Bob\" & Co", "zoe@example.org"), ("s2", "李", "雷, Jr.", None)]


def test_the_command_line_refuses_a_bad_roster_with_status_2(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("name\nAda\n", encoding="utf-8")
    refused = attnkit("course", "new", str(tmp_path / "course"), "--roster", str(roster), home=tmp_path)
    assert refused.returncode == 2 and "has no 'id' column" in refused.stderr, refused.stderr
    assert not (tmp_path / "course").exists()


def test_an_exchange_that_is_a_file_or_a_link_is_refused(tmp_path):
    (tmp_path / "exchange-file").write_text("x", encoding="utf-8")
    (tmp_path / "exchange-link").symlink_to(tmp_path)
    for exchange in ("exchange-file", "exchange-link"):
        with pytest.raises(Refused, match="is not a folder"):
            course_setup.new_course(tmp_path / "course", exchange=tmp_path / exchange, build_wheel=_no_wheel)
    assert not (tmp_path / "course").exists()


def test_an_exchange_that_already_serves_an_attnkit_course_is_refused(tmp_path):
    """Every attnkit course has the course id "attnkit": a second one on the same exchange would mix the two
    classes' submissions."""
    assert course_setup.COURSE_ID == nbgrader_course.COURSE_ID
    (tmp_path / "exchange" / nbgrader_course.COURSE_ID / "inbound").mkdir(parents=True)
    with pytest.raises(Refused, match="already serves a course 'attnkit'"):
        course_setup.new_course(tmp_path / "course", exchange=tmp_path / "exchange", build_wheel=_no_wheel)
    assert not (tmp_path / "course").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="plays another user: needs root to switch to uid 65534")
@pytest.mark.parametrize("sticky", [True, False])
def test_another_user_cannot_replace_the_course_folder_in_the_exchange(sticky):
    """A student (another account) renames the course's folder in the exchange, to put one of their own with a
    readable inbound in its place: the exchange `course new` makes (sticky) refuses; without the sticky bit (the
    control: nbgrader's plain 0o777) the same attempt succeeds, so the test can fail."""
    parent = Path(tempfile.mkdtemp(prefix="attnkit-exchange-"))  # under /tmp: every user can reach it
    try:
        parent.chmod(0o755)
        exchange = parent / "exchange"
        course_setup._make_exchange(exchange)
        if not sticky:
            exchange.chmod(0o777)
        (exchange / "attnkit" / "inbound").mkdir(parents=True)  # as nbgrader's release makes it, the instructor's
        attempt = subprocess.run(["/bin/mv", str(exchange / "attnkit"), str(exchange / "old")], user=65534,
                                 group=65534, extra_groups=[], capture_output=True, text=True, check=False)
        if sticky:
            assert attempt.returncode != 0 and "not permitted" in attempt.stderr, attempt.stderr
            assert (exchange / "attnkit" / "inbound").is_dir()
        else:
            assert attempt.returncode == 0, attempt.stderr
    finally:
        shutil.rmtree(parent)


@pytest.mark.slow
def test_a_step_that_fails_leaves_nothing_behind(tmp_path):
    """The kit's build fails after the release and the exchange were made: the folder the instructor had (with a
    note of theirs) keeps only that note, and the exchange this run made is gone."""
    root = tmp_path / "course"
    root.mkdir()
    (root / "notes.txt").write_text("mine", encoding="utf-8")

    def broken_wheel(folder):
        raise OSError("no space left on device")

    with pytest.raises(Refused, match="no space left on device"):
        course_setup.new_course(root, exchange=tmp_path / "exchange", build_wheel=broken_wheel)
    assert sorted(path.name for path in root.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "exchange").exists()


def test_the_courses_config_says_to_run_nbgrader_in_the_course_folder(tmp_path, repo_root):
    """The config `course new` copies into the course said "Run nbgrader from the repository root": wrong there, where
    nbgrader reads the course folder's config."""
    course = nbgrader_course.make_course(tmp_path / "course", repo_root, self_contained=True)
    tree = ast.parse((course / "nbgrader_config.py").read_text(encoding="utf-8"))
    (said,) = [" ".join(node.value.value.split()) for node in tree.body
               if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)]  # the checkout's docstring
    assert "run nbgrader in the course folder" in said and "`attnkit course new DIR`" in said and "`cd DIR`" in said
    assert "repository root" not in said


def _no_wheel(folder):
    raise AssertionError("a refused course builds no wheel")


# ---------------------------------------------------------------------------------------------
# attnkit course formgrader


@pytest.fixture(scope="module")
def formgrader(course, home):
    """`attnkit course formgrader DIR --port P` running; (url it printed, its process)."""
    env = dict(os.environ, HOME=str(home),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "course", "formgrader", str(course),
                                "--port", str(free_port())], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               env=env, text=True, start_new_session=True)
    try:
        line = process.stdout.readline()  # the CLI prints the URL once the server answers
        if "open http://127.0.0.1:" not in line:
            process.kill()
            pytest.fail(f"attnkit course formgrader printed no URL:\n{line}{process.stdout.read()}")
        yield line.split("open ", 1)[1].strip(), process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # only where the test below did not stop it
        process.wait()


def get(url, token=None):
    """(status, final URL, body); a browser's cookies kept across redirects (the URL's token logs it in once)."""
    headers = {"Authorization": f"token {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        with opener.open(request, timeout=20) as response:
            return response.status, response.geturl(), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, url, ""


def listening_addresses(port):
    """Every local address a TCP socket listens on at `port` (the kernel's tables: hex address, hex port, state 0A)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:
                    found.append(address)
    return found


@pytest.mark.slow
@pytest.mark.browser
def test_formgrader_answers_on_the_printed_url_and_chromium_shows_the_course(formgrader, course, home):
    from selenium.webdriver.common.by import By

    url, process = formgrader
    base, token = url.split("/formgrader?token=")
    port = int(base.rsplit(":", 1)[1])
    status, landed, _ = get(url)
    assert status == 200 and landed.startswith(f"{base}/formgrader/"), (status, landed)
    status, _, students = get(f"{base}/formgrader/api/students", token)
    assert status == 200 and '"first_name": "Ada"' in students and '"last_name": "Hopper"' in students
    for wrong in (None, "0" * 48):  # no token, a wrong one: the login page, never the data
        status, landed, body = get(f"{base}/formgrader/api/students", wrong)
        assert status == 403 or landed.startswith(f"{base}/login"), (status, landed)
        assert "Lovelace" not in body
    # listening on the loopback only, and the token is in no process's command line (any local user reads those)
    assert listening_addresses(port) == ["0100007F"], listening_addresses(port)  # 127.0.0.1, nothing else
    for pid in (path.name for path in Path("/proc").iterdir() if path.name.isdigit()):
        with contextlib.suppress(OSError):
            assert token.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes(), pid
    assert stat.S_IMODE((course / "formgrader.log").stat().st_mode) == 0o600

    chromium, chromedriver = _browser_binaries()
    driver = start_chromium(chromium, chromedriver, home, PAGE_S)
    try:
        driver.get(url)
        (row,) = wait_until(driver, lambda: [row for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
                                             if row.text.split()[:1] == ["attention"]], PAGE_S,
                            "the assignment 'attention'")
        # the runbook's step 2 comes before its release (step 3): the screenshot shows the assignment not released yet
        assert "draft" in row.text.split() and "released" not in row.text, row.text
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "does not exist" not in text and "could not be created" not in text, text  # the exchange warning
        assert not driver.find_elements(By.ID, "warning-exchange")
        time.sleep(0.5)
        shot = artifacts_dir() / "formgrader-course.png"
        assert driver.save_screenshot(str(shot)), shot
        driver.get(f"{base}/formgrader/manage_students")  # the roster's students, with their names
        wait_until(driver, lambda: [row for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
                                    if "Lovelace, Ada" in row.text], PAGE_S, "the roster's student Ada Lovelace")
        assert "雷, 李" in driver.find_element(By.TAG_NAME, "body").text
        time.sleep(0.5)
        shot = artifacts_dir() / "formgrader-course-students.png"
        assert driver.save_screenshot(str(shot)), shot
    finally:
        driver.quit()

    process.send_signal(signal.SIGTERM)  # as a closed terminal: the CLI stops the server it started
    assert process.wait(timeout=30) == 0
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0  # nothing listens any more


@pytest.mark.slow
def test_the_course_has_the_roster_the_release_with_the_kit_and_the_exchange(course):
    """After the formgrader test above: it shows the course as the runbook's step 2 does, before the release (step
    3), which this test makes."""
    from nbgrader.api import Gradebook

    with Gradebook(nbgrader_course.db_url(course), nbgrader_course.COURSE_ID) as gradebook:
        students = {s.id: (s.first_name, s.last_name, s.email) for s in gradebook.students}
        assert gradebook.find_assignment("attention").max_score == 100
    assert students == {"s001": ("Ada", "Lovelace", "ada@example.org"), "s002": ("李", "雷", "lilei@example.org"),
                        "s003": ("Grace", "Hopper", "grace@example.org")}
    exchange = course / "exchange"
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777  # everyone rwx (nbgrader's documented mode), sticky
    release = course / "release" / "attention"
    wheel = release / "attnkit_student_kit-0.1.0-py3-none-any.whl"
    names = sorted(path.name for path in release.iterdir())
    assert names == [*NOTEBOOKS, "README-student-kit.md", wheel.name]
    readme = (release / "README-student-kit.md").read_text(encoding="utf-8")
    assert f"%pip install {wheel.name}" in readme and "python -m pip install" in readme and "老师" in readme
    assert wheel.stat().st_size > 100_000
    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    assert "autograder.integrations.nbgrader_sandbox.SandboxedExecute" in config  # the sandbox, copied in
    assert f"c.Exchange.root = {str(exchange)!r}" in config and "load_subconfig" not in config

    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    released = subprocess.run([sys.executable, "-m", "nbgrader", "release_assignment", "attention"], cwd=course,
                              capture_output=True, text=True, check=False, env=dict(os.environ, PATH=path))
    assert released.returncode == 0, released.stdout + released.stderr
    assert "Permissions for exchange directory" not in released.stderr  # nbgrader found its mode right
    outbound = exchange / "attnkit" / "outbound" / "attention"
    assert sorted(path.name for path in outbound.iterdir()) == names
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777


def test_formgrader_refuses_a_folder_without_a_course_and_a_port_in_use(tmp_path):
    refused = attnkit("course", "formgrader", str(tmp_path), home=tmp_path, timeout=60)
    assert refused.returncode == 2 and "holds no course" in refused.stderr, refused.stderr
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        refused = attnkit("course", "formgrader", str(tmp_path), "--port", str(taken.getsockname()[1]),
                          home=tmp_path, timeout=60)
    assert refused.returncode == 2 and "is in use" in refused.stderr, refused.stderr
    (tmp_path / "formgrader.log").symlink_to(tmp_path / "elsewhere.txt")  # the log is never written through a link
    refused = attnkit("course", "formgrader", str(tmp_path), home=tmp_path, timeout=60)
    assert refused.returncode == 2 and "cannot write the server's log" in refused.stderr, refused.stderr
    assert not (tmp_path / "elsewhere.txt").exists()


def _browser_binaries():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not (chromium and chromedriver):
        if os.environ.get("CI"):
            pytest.fail("chromium and chromedriver not found: .ci/run installs them in CI")
        pytest.skip("chromium or chromedriver not found (apt-get install chromium chromium-driver)")
    return chromium, chromedriver
