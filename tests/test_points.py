"""Points without code (docs/instructor/points.md): course_settings.toml read by every grader, its refusals, and
regrading one exercise (`attnkit grade --exercise`) or one notebook (`nbgrader autograde --notebook`)."""

import json
import os
import subprocess
import sys
import zipfile

import nbformat
import pytest

from autograder import cli
from autograder.course import registry
from autograder.course.course_settings import SETTINGS_ENV, CourseSettingsError, apply_settings, read_settings
from autograder.course.exercises import NOTEBOOKS, of_notebook
from autograder.integrations import nbgrader_course

NB01, NB03 = NOTEBOOKS[0], NOTEBOOKS[2]
FAST = ["--timeout", "10", "--memory", "1024"]
# Moves one point from softmax_stable to softmax_naive: the total stays 100.
MOVED = '[points]\n"softmax_naive.random" = 3\n"softmax_stable.large" = 0\n'
OWN_POINTS = 'rescale_to = 1000\n[points]\n"softmax_naive.notes" = 0\n"softmax_naive.random" = 0\n'
WRONG_SOFTMAX = "def softmax_naive(x):\n    return x / x.sum()\n"


def _applied(tmp_path, text):
    path = tmp_path / "course_settings.toml"
    path.write_text(text, encoding="utf-8")
    return apply_settings(registry.declared(), read_settings(path))


def _points(applied):
    return {check.id: check.points for declared in applied.declarations for check in declared.checks}


def _exercise_points(applied, exercise_id):
    return sum(points for check_id, points in _points(applied).items() if check_id.split(".")[0] == exercise_id)


# --- the file ---------------------------------------------------------------------------------------------------------


def test_a_checks_points_change_and_the_total_stays_100(tmp_path):
    applied = _applied(tmp_path, MOVED)
    points = _points(applied)
    assert points["softmax_naive.random"] == 3 and points["softmax_stable.large"] == 0
    assert _exercise_points(applied, "softmax_naive") == 6 and _exercise_points(applied, "softmax_stable") == 5
    assert sum(points.values()) == 100 and applied.notes == ()
    declared = _points(registry.course_points())  # the checkout's own file changes nothing
    assert declared["softmax_naive.random"] == 2 and sum(declared.values()) == 100


def test_an_exercises_points_are_shared_among_its_checks_in_quarter_points(tmp_path):
    applied = _applied(tmp_path, 'rescale_to = 100\n[points]\ncausal_mask = 9\n')  # declared 2 + 4
    points = _points(applied)
    assert (points["causal_mask.notes"], points["causal_mask.sizes"]) != (2, 4)
    assert all(float(value * 4).is_integer() for value in points.values())
    assert sum(points.values()) == 100  # exactly: quarter points add up without rounding error
    assert any("rescaled from 103 to 100" in note and "quarter points" in note for note in applied.notes)


def test_a_file_that_sets_nothing_keeps_the_declared_points(tmp_path):
    """The committed file is all comments: a contributor's new exercise (test_add_an_exercise) is not refused."""
    assert _points(_applied(tmp_path, "# rescale_to = 100\n")) == _points(registry.course_points())


def test_a_total_other_than_100_is_refused_saying_by_how_much(tmp_path):
    with pytest.raises(CourseSettingsError, match=r"add up to 101, 1 over 100.*rescale_to = 100"):
        _applied(tmp_path, '[points]\n"softmax_naive.random" = 3\n')
    with pytest.raises(CourseSettingsError, match=r"add up to 98, 2 short of 100"):
        _applied(tmp_path, '[points]\ncausal_mask = 4\n')


@pytest.mark.parametrize(("text", "message"), [
    ('[points]\n"softmax_naive.rnadom" = 3\n', r"'softmax_naive.rnadom' is neither.*mean 'softmax_naive.random'"),
    ('[points]\n"softmax_naive.random" = -1\n', r"must not be negative"),
    ('[points]\n"softmax_naive.random" = "3"\n', r"must be a number, not '3'"),
    ('[points]\n"softmax_naive.random" = true\n', r"must be a number, not True"),
    ('[points]\n"softmax_naive.random" = nan\n', r"must be a number, not nan"),
    ('[points]\n"softmax_naive.random" = inf\n', r"must be a number, not inf"),
    ('points = 3\n', r"\[points\] must be a table"),
    ('rescale_to = 0\n', r"rescale_to must be a positive multiple of 0.25"),
    ('rescale_to = 99.9\n', r"rescale_to must be a positive multiple of 0.25"),
    ('rescale = 100\n', r"unknown setting\(s\) 'rescale'; the settings are rescale_to, points"),
    ('[points]\ncausal_mask = 6\n"causal_mask.sizes" = 4\n', r"either an exercise's points or its checks'"),
    ('[points]\ncausal_mask = 6.1\n', r"multiple of 0.25"),
    ('[points\n', r"is not a TOML file"),
])
def test_a_wrong_file_is_refused_naming_the_problem(tmp_path, text, message):
    with pytest.raises(CourseSettingsError, match=message):
        _applied(tmp_path, text)


def test_a_file_that_is_not_text_is_refused(tmp_path):
    path = tmp_path / "course_settings.toml"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(CourseSettingsError, match="is not a TOML file"):
        read_settings(path)


def _attnkit(tmp_path, settings, *args):
    """`attnkit ARGS` in a new process whose course settings file holds `settings` (None: the checkout's)."""
    environment = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    environment.pop(SETTINGS_ENV, None)
    if settings is not None:
        path = tmp_path / "settings" / "course_settings.toml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(settings, encoding="utf-8")
        environment[SETTINGS_ENV] = str(path)
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], env=environment, capture_output=True,
                          text=True, check=False)


@pytest.mark.slow
def test_attnkit_grade_and_make_release_refuse_a_wrong_file_and_write_nothing(tmp_path, repo_root):
    """`attnkit grade` and `make release` (nbgrader_course release) stop with the reason, exit status 2 and 1."""
    (tmp_path / "submitted" / "someone" / "attention").mkdir(parents=True)
    graded = _attnkit(tmp_path, '[points]\n"softmax_naive.random" = 3\n', "grade", str(tmp_path / "submitted"),
                      "--out", str(tmp_path / "out"), *FAST)
    assert graded.returncode == 2 and "1 over 100" in graded.stderr and "Traceback" not in graded.stderr
    assert not (tmp_path / "out").exists()
    repo = tmp_path / "repo"
    (repo / "source").mkdir(parents=True)
    nbgrader_course.shutil.copytree(repo_root / "source" / "attention", repo / "source" / "attention")
    before = {path.name: path.read_bytes() for path in (repo / "source" / "attention").iterdir()}
    environment = {**os.environ, SETTINGS_ENV: str(tmp_path / "settings" / "course_settings.toml")}
    released = subprocess.run([sys.executable, "-m", "autograder.integrations.nbgrader_course", "release", "--repo",
                               str(repo)], env=environment, capture_output=True, text=True, check=False)
    assert released.returncode == 1 and "1 over 100" in released.stderr
    assert {path.name: path.read_bytes() for path in (repo / "source" / "attention").iterdir()} == before
    assert not (repo / "release").exists()


@pytest.mark.slow
def test_points_come_from_the_instructor_only(tmp_path, graded_once):
    """A course_settings.toml handed in beside the notebooks, or in the folder the command runs from, is not read:
    the file is looked for at the checkout's root or where the instructor's ATTNKIT_COURSE_SETTINGS says."""
    record = _record(graded_once[1], "wrong")
    assert record["max_score"] == 100
    assert {check["id"]: check["max_score"] for notebook in record["notebooks"] for check in notebook["checks"]
            if check["exercise"] == "softmax_naive"} == {"softmax_naive.notes": 2, "softmax_naive.random": 2,
                                                         "softmax_naive.from_scratch": 1}
    (tmp_path / "course_settings.toml").write_text(OWN_POINTS, encoding="utf-8")
    environment = {key: value for key, value in os.environ.items() if key != SETTINGS_ENV}
    shown = subprocess.run([sys.executable, "-m", "autograder.cli", "points"], cwd=tmp_path, env=environment,
                           capture_output=True, text=True, check=False)
    assert shown.returncode == 0 and "    softmax_naive.notes: 2 (public)\n" in shown.stdout, shown.stderr
    assert shown.stdout.endswith("total: 100\n")


@pytest.mark.slow
def test_attnkit_points_lists_the_points_in_force(tmp_path):
    shown = _attnkit(tmp_path, MOVED, "points")
    assert shown.returncode == 0, shown.stderr
    assert "softmax_naive (01_attention_without_weights): 6\n" in shown.stdout
    assert "    softmax_naive.random: 3\n" in shown.stdout and shown.stdout.endswith("total: 100\n")


# --- every grader: attnkit grade, the release's cells, nbgrader in the sandbox ----------------------------------------


def _graded_cell_points(notebook_path):
    notebook = nbformat.read(notebook_path, as_version=4)
    return {cell.metadata["nbgrader"]["grade_id"]: cell.metadata["nbgrader"]["points"] for cell in notebook.cells
            if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")}


@pytest.mark.slow
def test_the_release_attnkit_grade_and_sandboxed_nbgrader_give_the_files_points(tmp_path, repo_root):
    """One settings file: `make release`'s refresh writes its points into the graded cells, `attnkit grade` and the
    sandboxed `nbgrader autograde --notebook` grade out of them; the same course with the declared points in force
    (the file taken away, release not rerun) is stopped by the sandbox rather than recorded out of other totals.
    `--notebook` grades that notebook alone and leaves the ones graded before as they were."""
    course = nbgrader_course.make_course(tmp_path / "course", repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.SandboxedExecute.timeout = 10\n")
    settings = tmp_path / "course_settings.toml"
    settings.write_text(MOVED, encoding="utf-8")
    moved = {**os.environ, SETTINGS_ENV: str(settings),
             "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    declared = {**moved}
    declared.pop(SETTINGS_ENV)

    def run(environment, *args, cwd=course):
        return subprocess.run([sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True,
                              check=False)

    refreshed = run(moved, "-c", "import sys; from autograder.integrations.source_notebooks import "
                    "refresh_source_notebooks as r; print(r(sys.argv[1]))", str(course / "source" / "attention"))
    assert refreshed.returncode == 0 and NB01 in refreshed.stdout, refreshed.stderr
    assert run(moved, "-m", "nbgrader", "generate_assignment", "attention", "--force").returncode == 0
    cells = _graded_cell_points(course / "release" / "attention" / f"{NB01}.ipynb")
    assert (cells["test_softmax_naive"], cells["test_softmax_stable"]) == (6, 5)

    for student, source in (("solved", None), ("wrong", WRONG_SOFTMAX)):
        folder = course / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        for name in (NB01, NB03):
            notebook = json.loads((course / "source" / "attention" / f"{name}.ipynb").read_text(encoding="utf-8"))
            for cell in notebook["cells"]:
                if source and cell["metadata"].get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
                    cell["source"] = source
            (folder / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")

    first = run(moved, "-m", "nbgrader", "autograde", "attention", "--notebook", NB01, "--log-level=INFO")
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"solved/{NB01}" in first.stderr and f"solved/{NB03}" not in first.stderr
    assert sorted(path.name for path in (course / "autograded" / "solved" / "attention").glob("*.ipynb")) == \
        [f"{NB01}.ipynb"]
    nbgrader = nbgrader_course.read_scores(course)
    out = tmp_path / "attnkit"
    graded = _attnkit(tmp_path, MOVED, "grade", str(course / "submitted"), "--out", str(out), *FAST)
    assert graded.returncode == 0, graded.stderr
    for student in ("solved", "wrong"):
        record = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
        ours = {notebook["notebook"]: notebook for notebook in record["notebooks"]}
        assert ours[NB01]["max_score"] == sum(cells.values()) == 18
        assert nbgrader[student][NB01] == ours[NB01]["score"]
        cell = nbgrader_course.read_cell_scores(course)[student][NB01]["test_softmax_naive"]
        assert cell == (sum(check["score"] for check in ours[NB01]["checks"] if check["exercise"] == "softmax_naive"),
                        6)
    assert nbgrader["solved"][NB01] == 18 > nbgrader["wrong"][NB01]

    kept = (course / "autograded" / "solved" / "attention" / f"{NB01}.ipynb").read_bytes()
    second = run(moved, "-m", "nbgrader", "autograde", "attention", "--notebook", NB03, "--force",
                 "--log-level=INFO")  # as points.md; INFO: each notebook's line
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"solved/{NB03}" in second.stderr and f"solved/{NB01}" not in second.stderr
    assert (course / "autograded" / "solved" / "attention" / f"{NB01}.ipynb").read_bytes() == kept
    assert nbgrader_course.read_scores(course)["solved"] == {**nbgrader["solved"],
                                                                  NB03: sum(e.points for e in of_notebook(NB03))}

    stale = run(declared, "-m", "nbgrader", "autograde", "attention", "--notebook", NB01, "--student", "solved",
                "--force")
    assert stale.returncode != 0
    assert "is worth 6 points in the release but 5 in the course settings" in stale.stderr
    assert nbgrader_course.read_scores(course)["solved"][NB01] == 18  # nothing recorded out of 5
    assert not (course / "autograded" / "solved" / "attention" / f"{NB01}.ipynb").exists()


def test_the_gradescope_bundle_carries_the_file_in_force_and_refuses_a_wrong_one(tmp_path, monkeypatch):
    from autograder.integrations.gradescope import build_bundle

    settings = tmp_path / "course_settings.toml"
    settings.write_text(MOVED, encoding="utf-8")
    monkeypatch.setenv(SETTINGS_ENV, str(settings))
    build_bundle(tmp_path / "ag.zip")
    with zipfile.ZipFile(tmp_path / "ag.zip") as bundle:  # at the root: /autograder/source/, the package's checkout
        assert bundle.read("course_settings.toml").decode() == MOVED
    settings.write_text('[points]\n"softmax_naive.random" = 3\n', encoding="utf-8")
    with pytest.raises(CourseSettingsError, match="1 over 100"):
        build_bundle(tmp_path / "wrong.zip")
    assert not (tmp_path / "wrong.zip").exists()


@pytest.mark.slow
def test_the_student_kit_stores_the_files_points(tmp_path):
    """The kit's stored exercises (its progress line's points) and previews (points graded later) are built from the
    points in force."""
    settings = tmp_path / "course_settings.toml"
    settings.write_text(MOVED, encoding="utf-8")
    program = ("import json\nfrom autograder.integrations.student_kit.build import vectors_document\n"
               "d = vectors_document()\n"
               "print(json.dumps([{e['id']: e['points'] for e in d['exercises']},"
               " {c['id']: c['graded_later'] for c in d['checks']}]))")
    built = subprocess.run([sys.executable, "-c", program], env={**os.environ, SETTINGS_ENV: str(settings)},
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    exercises, later = json.loads(built.stdout)
    assert (exercises["softmax_naive"], exercises["softmax_stable"]) == (6, 5) and sum(exercises.values()) == 100
    assert later["softmax_naive.random.preview"] == 3 and later["softmax_stable.large.preview"] == 0


# --- attnkit grade --exercise: one exercise again, the others kept --------------------------------------------------


def _hand_in(submitted, student, notebook_bytes):
    folder = submitted / student / "attention"
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_bytes(notebook_bytes)


def _with_source(repo_root, grade_id, source):
    notebook = json.loads((repo_root / "source" / "attention" / f"{NB01}.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            cell["source"] = source
    return json.dumps(notebook).encode()


def _record(out, student):
    return json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))


def _by_exercise(record):
    scores = {}
    for notebook in record["notebooks"]:
        for check in notebook["checks"]:
            scores[check["exercise"]] = scores.get(check["exercise"], 0) + check["score"]
    return scores


@pytest.fixture(scope="module")
def graded_once(tmp_path_factory, repo_root):
    """Two students who handed in the first notebook (the others missing: fast), graded once."""
    root = tmp_path_factory.mktemp("regrade")
    submitted, out = root / "submitted", root / "out"
    _hand_in(submitted, "solved", (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes())
    _hand_in(submitted, "wrong", _with_source(repo_root, "solution_softmax_naive", WRONG_SOFTMAX))
    # a student's attempt at points of their own: never read (test_points_come_from_the_instructor_only)
    (submitted / "wrong" / "attention" / "course_settings.toml").write_text(OWN_POINTS, encoding="utf-8")
    assert cli.main(["grade", str(submitted), "--out", str(out), *FAST]) == 0
    return submitted, out


def _tampered_copy(graded_once, tmp_path):
    """OUT with the solved student's softmax_naive and softmax_stable checks zeroed in the record: a regrade of
    softmax_naive must grade it again and must keep softmax_stable's zeros (they come from the record)."""
    submitted, out = graded_once
    copy = tmp_path / "out"
    nbgrader_course.shutil.copytree(out, copy)
    record = _record(copy, "solved")
    for notebook in record["notebooks"]:
        for check in notebook["checks"]:
            if check["exercise"] in ("softmax_naive", "softmax_stable"):
                check["score"] = 0.0
        notebook["score"] = sum(check["score"] for check in notebook["checks"])
    record["score"] = sum(notebook["score"] for notebook in record["notebooks"])
    (copy / "students" / "solved.json").write_text(json.dumps(record), encoding="utf-8")
    return submitted, copy


@pytest.mark.slow
def test_a_regrade_of_one_exercise_changes_only_its_scores_and_rewrites_the_totals(graded_once, tmp_path, capsys):
    submitted, out = _tampered_copy(graded_once, tmp_path)
    before = {student: _record(out, student) for student in ("solved", "wrong")}
    assert _by_exercise(before["solved"])["softmax_naive"] == 0
    assert cli.main(["grade", str(submitted), "--out", str(out), "--exercise", "softmax_naive", *FAST]) == 0
    solved, wrong = _record(out, "solved"), _record(out, "wrong")
    assert _by_exercise(solved) == {**_by_exercise(before["solved"]), "softmax_naive": 5}  # regraded: full marks
    assert _by_exercise(solved)["softmax_stable"] == 0  # kept from the record, not graded again
    assert solved["score"] == before["solved"]["score"] + 5
    assert solved["submission_hash"] == before["solved"]["submission_hash"]
    assert wrong == before["wrong"]  # the same verdicts again: the same record
    csv_rows = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert any(row.startswith("solved,") and f",{solved['score']:g}," in row for row in csv_rows)
    assert json.loads((out / "grading.json").read_text(encoding="utf-8"))["complete"] is True
    page = (out / "feedback" / "solved.html").read_text(encoding="utf-8")
    assert f"{solved['score']:g}" in page
    assert "regraded softmax_naive (01_attention_without_weights) for 2 students" in capsys.readouterr().err


def test_a_regrade_of_a_notebook_regrades_each_of_its_exercises(graded_once, tmp_path):
    submitted, out = _tampered_copy(graded_once, tmp_path)
    assert cli.main(["grade", str(submitted), "--out", str(out), "--notebook", NB01, *FAST]) == 0
    assert _record(out, "solved") == _record(graded_once[1], "solved")  # the tampering undone: all graded again


def _refused(args, capsys):
    assert cli.main(args) == 2
    return capsys.readouterr().err


def test_a_regrade_is_refused_without_an_earlier_run_or_with_another_seed(graded_once, tmp_path, capsys):
    submitted, out = graded_once
    empty = tmp_path / "empty"
    assert "no complete earlier run" in _refused(["grade", str(submitted), "--out", str(empty), "--exercise",
                                                  "softmax_naive", *FAST], capsys)
    assert not empty.exists()
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert "graded with --seed 20260, not 7" in _refused(["grade", str(submitted), "--out", str(out), "--exercise",
                                                          "softmax_naive", "--seed", "7", *FAST], capsys)
    assert "unknown exercise 'softmax'" in _refused(["grade", str(submitted), "--out", str(out), "--exercise",
                                                     "softmax", *FAST], capsys)
    assert "unknown notebook(s) '01'" in _refused(["grade", str(submitted), "--out", str(out), "--notebook", "01",
                                                   *FAST], capsys)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def test_a_regrade_is_refused_when_the_class_changed(graded_once, tmp_path, capsys, repo_root):
    submitted, out = graded_once
    changed = tmp_path / "submitted"
    nbgrader_course.shutil.copytree(submitted, changed)
    (changed / "wrong" / "attention" / f"{NB01}.ipynb").write_bytes(
        (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes())  # handed in again, fixed
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert "wrong's 01_attention_without_weights changed since it was graded" in _refused(
        ["grade", str(changed), "--out", str(out), "--exercise", "softmax_naive", *FAST], capsys)
    (changed / "wrong" / "attention" / f"{NB01}.ipynb").unlink()
    assert "wrong's 01_attention_without_weights was graded, and is gone now" in _refused(
        ["grade", str(changed), "--out", str(out), "--exercise", "softmax_naive", *FAST], capsys)
    (changed / "newcomer" / "attention").mkdir(parents=True)
    assert "the class changed since" in _refused(
        ["grade", str(changed), "--out", str(out), "--exercise", "softmax_naive", *FAST], capsys)
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


@pytest.mark.slow
def test_a_regrade_is_refused_when_the_points_changed_since(graded_once, tmp_path):
    submitted, out = graded_once
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    refused = _attnkit(tmp_path, MOVED, "grade", str(submitted), "--out", str(out), "--exercise", "context_vectors",
                       *FAST)
    assert refused.returncode == 2 and "graded with other points" in refused.stderr, refused.stderr
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
