"""A course's own points (docs/instructor/points.md, "Change a course's points"): `attnkit course points DIR --set`
between two autogrades of a course made by `attnkit course new`, with no ATTNKIT_COURSE_SETTINGS anywhere.

The release keeps the student kit's wheel (built with the new points) and README; a TA's manual grade of 3 of 6 becomes
2.5 of 5; formgrader started by `attnkit course formgrader` autogrades with the course's points, and the earlier
release's points in a student's notebook are said once, not warned per cell; `attnkit grade DIR/submitted` grades with
them too; a course_settings.toml a student hands in (beside the notebooks, or in submitted/) changes nothing. A refused
change (an unknown id, a wrong total, a file that is not TOML) leaves every file of the course as it was. The unit
tests below them read and edit the settings file, and refuse a course file that is a link or not the instructor's.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import zipfile
from fractions import Fraction
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest
from test_docs import REPO, page_commands
from test_gradebook_export import Formgrader
from test_quiet_autograde import handed_in

from autograder.course import course_settings
from autograder.course.course_settings import SETTINGS_ENV, CourseSettingsError
from autograder.course.exercises import NOTEBOOKS
from autograder.integrations import course_points, nbgrader_course

NB01 = NOTEBOOKS[0]
POINTS_PAGE = REPO / "docs" / "instructor" / "points.md"
MOVED = ["--set", "softmax_naive.random=3", "--set", "softmax_stable.large=0"]  # softmax_naive 5 -> 6, stable 6 -> 5
# What a student would like the points to be: everything on one check they pass.
THEIRS = 'rescale_to = 1000\n[points]\n"softmax_naive.notes" = 0\n"softmax_naive.random" = 0\n'
STUDENT = "alice"
KIT_README = "README-student-kit.md"
WHEEL = "attnkit_student_kit-0.1.0-py3-none-any.whl"


def _environment(home):
    """No ATTNKIT_COURSE_SETTINGS: the course's own file is the only one that may set points."""
    environment = {key: value for key, value in os.environ.items() if key != SETTINGS_ENV}
    return {**environment, "HOME": str(home),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")])}


def _run(home, *command, cwd=None, timeout=900):
    return subprocess.run(list(command), cwd=cwd, env=_environment(home), capture_output=True, text=True,
                          timeout=timeout, check=False)


def _attnkit(home, *args):
    return _run(home, sys.executable, "-m", "autograder.cli", *args)


def _as_written(home, line):
    """points.md's command `line` (it must be on the page), run verbatim by bash from the checkout with HOME (whose
    ~/attnkit-course is the course), as test_docs.py leaves it to this test."""
    assert line in [command.line for command in page_commands(POINTS_PAGE)], line
    return _run(home, "bash", "-c", f"set -euo pipefail\n{line}", cwd=REPO)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    made = _attnkit(home, "course", "new", str(home / "attnkit-course"))
    assert made.returncode == 0, made.stdout + made.stderr
    root = home / "attnkit-course"
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.SandboxedExecute.timeout = 10\n")  # after the course's own points line, as an instructor may
    return home, root


def _files(root):
    """Every file of the course (but the formgrader's log) and its bytes."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and path.name != "formgrader.log"}


def _cell_points(notebook_path):
    notebook = nbformat.read(notebook_path, as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"]: cell.metadata["nbgrader"]["points"] for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")}


def _grade(root, cell):
    """(auto score, manual score, max score, needs a manual grade) of the student's graded cell in NB01."""
    from nbgrader.api import Gradebook

    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:
        grade = gradebook.find_grade(cell, NB01, "attention", STUDENT)
        return grade.auto_score, grade.manual_score, grade.max_score, grade.needs_manual_grade


def _give_manual_grade(root, cell, score):
    from nbgrader.api import Gradebook

    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:
        gradebook.find_grade(cell, NB01, "attention", STUDENT).manual_score = score
        gradebook.db.commit()


@contextlib.contextmanager
def _formgrader(home, root):
    """`attnkit course formgrader DIR` with no ATTNKIT_COURSE_SETTINGS; a logged-in session on the URL it prints."""
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "course", "formgrader", str(root)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_environment(home), text=True,
                               start_new_session=True)
    try:
        line = process.stdout.readline()
        assert "open http://127.0.0.1:" in line, f"no URL printed:\n{line}{process.stdout.read()}"
        url = urlsplit(line.split("open ", 1)[1].strip())
        token = parse_qs(url.query)["token"][0]
        said = [process.stdout.readline(), process.stdout.readline()]  # where its log is; which points it grades with
        assert said[1].startswith(f"points: the course's own, {root / 'course_settings.toml'} "), said
        session = Formgrader(f"{url.scheme}://{url.netloc}", token)
        assert session.call(f"/formgrader?token={token}")[0] == 200
        yield session
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
def test_a_change_of_points_keeps_the_kit_and_manual_grades_and_every_grader_of_the_course_uses_it(course):
    home, root = course
    release = root / "release" / "attention"
    # alice worked on the first release: its points (5 and 6) are in her notebook's graded cells
    solved = handed_in(nbformat.read(release / f"{NB01}.ipynb", as_version=4),
                       nbformat.read(root / "source" / "attention" / f"{NB01}.ipynb", as_version=4))
    folder = root / "submitted" / STUDENT / "attention"
    folder.mkdir(parents=True)
    nbformat.write(solved, folder / f"{NB01}.ipynb")
    (folder / "course_settings.toml").write_text(THEIRS, encoding="utf-8")  # handed in beside the notebook
    (root / "submitted" / "course_settings.toml").write_text(THEIRS, encoding="utf-8")  # or left in submitted/
    first = _run(home, sys.executable, "-m", "nbgrader", "autograde", "attention", "--notebook", NB01, cwd=root)
    assert first.returncode == 0, first.stderr[-3000:]
    assert _grade(root, "test_softmax_stable")[:3] == (6, None, 6)
    _give_manual_grade(root, "test_softmax_stable", 3)  # a TA's 3 of 6

    changed = _as_written(home, f".venv/bin/attnkit course points ~/attnkit-course {' '.join(MOVED)}")
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert f"{STUDENT}'s {NB01} test_softmax_stable: manual grade 3 of 6 -> 2.5 of 5" in changed.stdout
    assert sorted(path.name for path in release.iterdir()) == sorted([*(f"{name}.ipynb" for name in NOTEBOOKS),
                                                                       KIT_README, WHEEL])
    assert f"%pip install {WHEEL}" in (release / KIT_README).read_text(encoding="utf-8")
    with zipfile.ZipFile(release / WHEEL) as wheel:  # the kit was built with the new points
        stored = json.loads(wheel.read("autograder/integrations/student_kit/data/vectors.json"))
    assert {item["id"]: item["points"] for item in stored["exercises"]}["softmax_naive"] == 6
    cells = _cell_points(release / f"{NB01}.ipynb")
    assert (cells["test_softmax_naive"], cells["test_softmax_stable"]) == (6, 5)
    assert "Naive softmax (6 points)" in (release / f"{NB01}.ipynb").read_text(encoding="utf-8")
    assert _grade(root, "test_softmax_stable")[1:3] == (2.5, 5)  # kept in proportion, not 3 of 5
    shown = _as_written(home, ".venv/bin/attnkit course points ~/attnkit-course")
    assert shown.returncode == 0 and f"course settings: {root / 'course_settings.toml'}\n" in shown.stdout
    assert "softmax_naive (01_attention_without_weights): 6\n" in shown.stdout and shown.stdout.endswith("total: 100\n")
    handed_out = _as_written(home, "(cd ~/attnkit-course && nbgrader release_assignment attention --force)")
    assert handed_out.returncode == 0, handed_out.stderr[-3000:]
    assert sorted(path.name for path in (root / "exchange" / "attnkit" / "outbound" / "attention").iterdir()) == \
        sorted(path.name for path in release.iterdir())  # the kit goes out with the new release

    with _formgrader(home, root) as session:  # started with no ATTNKIT_COURSE_SETTINGS anywhere
        status, text = session.call(f"/formgrader/api/submission/attention/{STUDENT}/autograde", method="POST",
                                    body={}, timeout=600)
    answer = json.loads(text)
    assert status == 200 and answer["success"], answer.get("log", "")[-3000:]
    assert _grade(root, "test_softmax_naive")[:3] == (6, None, 6)  # out of the course's 6, nothing refused
    assert _grade(root, "test_softmax_stable")[1:3] == (2.5, 5)
    assert (root / "autograded" / STUDENT / "attention" / f"{NB01}.ipynb").is_file()
    assert "Attribute 'points'" not in answer["log"]  # her notebook's 5 and 6: no tampering, said once instead
    assert answer["log"].count("hold the earlier points in their graded cells") == 1, answer["log"][-3000:]

    graded = _attnkit(home, "grade", str(root / "submitted"), "--out", str(root / "grades"), "--timeout", "10")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert f"the points of the course in {root}" in graded.stderr
    record = json.loads((root / "grades" / "students" / f"{STUDENT}.json").read_text(encoding="utf-8"))
    checks = {check["id"]: check for notebook in record["notebooks"] for check in notebook["checks"]}
    assert checks["softmax_naive.random"]["max_score"] == 3 and checks["softmax_stable.large"]["max_score"] == 0
    assert record["max_score"] == 100 and record["score"] == 18  # her first notebook, solved, out of the course's


@pytest.mark.slow
def test_a_refused_change_of_points_leaves_the_course_as_it_was(course):
    home, root = course
    before = _files(root)
    for args, reason in (
        (["--set", "softmax_naive.rnadom=3"], "did you mean 'softmax_naive.random'"),
        (["--set", "softmax_naive.random=50"], "over 100"),
        (["--set", "softmax_naive.random"], "is not ID=POINTS"),
        (["--set", 'softmax_naive.random"\n[evil]\nx"=3'], "is not the id of a check or exercise"),
    ):
        refused = _attnkit(home, "course", "points", str(root), *args)
        assert refused.returncode == 2 and reason in refused.stderr, refused.stderr
        assert "nothing was changed" in refused.stderr and "Traceback" not in refused.stderr
        assert _files(root) == before
    settings = root / "course_settings.toml"
    good = settings.read_text(encoding="utf-8")
    settings.write_text(good + "[points\n", encoding="utf-8")  # an edit by hand that breaks the file
    refused = _attnkit(home, "course", "release", str(root))
    assert refused.returncode == 2 and "is not a TOML file" in refused.stderr, refused.stderr
    assert {**_files(root), "course_settings.toml": good.encode()} == before
    settings.write_text(good, encoding="utf-8")
    released = _as_written(home, ".venv/bin/attnkit course release ~/attnkit-course")  # the same points, again
    assert released.returncode == 0, released.stdout + released.stderr
    assert "0 graded cells changed" in released.stdout
    release = root / "release" / "attention"
    assert {KIT_README, WHEEL} <= {path.name for path in release.iterdir()}
    assert {name: data for name, data in _files(root).items() if name.startswith("source/")} == \
        {name: data for name, data in before.items() if name.startswith("source/")}


# --- the settings file: read, edited, chosen ---------------------------------------------------------------------


@pytest.fixture
def fresh_process_points(monkeypatch):
    """This test's own choice of points file: the process's is left as it was."""
    monkeypatch.setattr(course_settings, "_PROCESS", course_settings._ProcessPoints())
    monkeypatch.delenv(SETTINGS_ENV, raising=False)


def test_a_change_replaces_or_adds_its_line_and_keeps_every_other_line(tmp_path):
    path = tmp_path / "course_settings.toml"
    text = '# mine\nrescale_to = 100\n\n[points]\n"softmax_naive.random" = 2  # why\ncausal_mask = 6\n# end\n'
    edited = course_settings.with_points(text, {"softmax_naive.random": Fraction(3), "softmax_stable.large":
                                                Fraction(1, 2)}, path)
    assert edited == ('# mine\nrescale_to = 100\n\n[points]\n"softmax_naive.random" = 3\ncausal_mask = 6\n'
                      '"softmax_stable.large" = 0.5\n# end\n')
    written = course_settings.settings_text(course_settings.parse_settings(edited.encode(), path))
    assert course_settings.parse_settings(written.encode(), path) == course_settings.parse_settings(edited.encode(),
                                                                                                     path)


@pytest.mark.parametrize(("text", "change", "message"), [
    ("[points]\n", {'x" = 1\n[evil]\ny="': Fraction(1)}, "is not the id of a check or exercise"),
    ("[points]\n", {"softmax_naive.random": Fraction(-1)}, "must not be negative"),
    ("points = { causal_mask = 6 }\n", {"causal_mask": Fraction(5)}, "cannot be changed in place"),
    ("[points\n", {"causal_mask": Fraction(5)}, "is not a TOML file"),
])
def test_a_change_that_cannot_be_written_as_asked_is_refused(tmp_path, text, change, message):
    with pytest.raises(CourseSettingsError, match=message):
        course_settings.with_points(text, change, tmp_path / "course_settings.toml")


def test_a_course_file_that_anyone_else_could_have_written_is_not_read(tmp_path):
    path = tmp_path / "course_settings.toml"
    path.write_text("[points]\n", encoding="utf-8")
    assert course_settings.course_file_text(path) == "[points]\n"
    path.chmod(0o646)
    with pytest.raises(CourseSettingsError, match="writable by every user"):
        course_settings.course_file_text(path)
    path.chmod(0o644)
    tmp_path.chmod(0o777)
    with pytest.raises(CourseSettingsError, match="its folder is owned by another user .* or writable by every user"):
        course_settings.course_file_text(path)
    tmp_path.chmod(0o755)
    elsewhere = tmp_path / "theirs.toml"
    elsewhere.write_text("rescale_to = 1000\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(elsewhere)
    with pytest.raises(CourseSettingsError, match="is a symbolic link"):
        course_settings.course_file_text(path)
    if os.geteuid() == 0:
        path.unlink()
        path.write_text("[points]\n", encoding="utf-8")
        os.chown(path, 65534, 65534)  # a student's account
        with pytest.raises(CourseSettingsError, match=r"owned by another user \(uid 65534\)"):
            course_settings.course_file_text(path)


def test_a_course_file_is_chosen_only_beside_the_courses_submitted_folder(tmp_path):
    root = tmp_path / "course"
    (root / "submitted" / STUDENT / "attention").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    (root / "course_settings.toml").write_text("[points]\n", encoding="utf-8")
    for folder in (root / "submitted", root / "submitted" / STUDENT, root / "submitted" / STUDENT / "attention"):
        (folder / "course_settings.toml").write_text(THEIRS, encoding="utf-8")
        (folder / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    assert course_points.submitted_course_settings(root / "submitted") == root / "course_settings.toml"
    assert course_points.submitted_course_settings(root / "submitted" / STUDENT) is None
    assert course_points.submitted_course_settings(root / "submitted" / STUDENT / "attention") is None
    assert course_points.grades_source_course_settings(root) == root / "course_settings.toml"
    assert course_points.grades_source_course_settings(root / "gradebook.db") == root / "course_settings.toml"
    assert course_points.grades_source_course_settings(root / "grades") == root / "course_settings.toml"
    assert course_points.submitted_course_settings(tmp_path / "elsewhere" / "submitted") is None


def test_the_points_of_a_running_process_are_not_changed_by_choosing_another_file(tmp_path, fresh_process_points):
    first, second = tmp_path / "a" / "course_settings.toml", tmp_path / "b" / "course_settings.toml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text("[points]\n", encoding="utf-8")
    course_settings.use_course_settings(first)
    course_settings.use_course_settings(first)  # nbgrader loads a course's config more than once: the same file
    assert course_settings.settings_path() == first
    course_settings.settings_in_force()
    assert not course_settings.settings_changed_since_read()
    with pytest.raises(CourseSettingsError, match="graded with the points of .* already"):
        course_settings.use_course_settings(second)
    first.write_text('[points]\n"softmax_naive.random" = 3\n', encoding="utf-8")
    assert course_settings.settings_changed_since_read()  # a formgrader started before the change: told to restart
