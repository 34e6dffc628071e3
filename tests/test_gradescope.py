"""`attnkit gradescope build`: the bundle's layout, and run_autograder on a fake /autograder tree.

run_autograder runs as Gradescope runs it (the zip unpacked into ROOT/source, run_autograder copied to
ROOT), with ATTNKIT_AUTOGRADER_ROOT pointing at a temporary ROOT and this venv's python instead of the
one setup.sh would build.
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from autograder import cli
from autograder.course import catalog
from autograder.course.exercises import NOTEBOOKS
from autograder.grading.notebooks import Options
from autograder.integrations import gradescope
from autograder.isolation.protected import check_locations

# Gradescope's results.json, as its autograder specification documents it: field -> (type, allowed values).
NUMBER = (int, float)
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
TEXT_FORMATS = {"text", "html", "simple_format", "md", "ansi"}
RESULTS_FIELDS = {
    "score": (NUMBER, None),
    "execution_time": (NUMBER, None),
    "output": (str, None),
    "output_format": (str, TEXT_FORMATS),
    "test_output_format": (str, TEXT_FORMATS),
    "test_name_format": (str, TEXT_FORMATS),
    "visibility": (str, VISIBILITY),
    "stdout_visibility": (str, VISIBILITY),
    "extra_data": (dict, None),
    "tests": (list, None),
    "leaderboard": (list, None),
}
TEST_FIELDS = {
    "score": (NUMBER, None),
    "max_score": (NUMBER, None),
    "status": (str, {"passed", "failed"}),
    "name": (str, None),
    "name_format": (str, TEXT_FORMATS),
    "number": (str, None),
    "output": (str, None),
    "output_format": (str, TEXT_FORMATS),
    "tags": (list, None),
    "visibility": (str, VISIBILITY),
    "extra_data": (dict, None),
}
# What attnkit always writes (the spec makes them optional).
REQUIRED_RESULTS = {"score", "tests", "output", "visibility", "stdout_visibility"}
REQUIRED_TEST = {"name", "score", "max_score", "status", "output", "visibility"}
TOTAL_POINTS = sum(check.points for check in catalog.CHECKS)


def _validate_fields(document, fields, required, where):
    assert isinstance(document, dict), f"{where}: not an object"
    assert required <= document.keys(), f"{where}: missing {sorted(required - document.keys())}"
    for key, value in document.items():
        assert key in fields, f"{where}: {key!r} is not a documented field"
        kind, allowed = fields[key]
        assert isinstance(value, kind) and not isinstance(value, bool), f"{where}.{key}: {value!r} is not {kind}"
        assert allowed is None or value in allowed, f"{where}.{key}: {value!r} is none of {sorted(allowed)}"


def validate_results(results):
    """Raise AssertionError unless `results` is a results.json Gradescope documents (and attnkit's own rules)."""
    json.loads(json.dumps(results, allow_nan=False))  # plain JSON, no NaN
    _validate_fields(results, RESULTS_FIELDS, REQUIRED_RESULTS, "results")
    assert results["tests"], "results: no tests"
    for position, test in enumerate(results["tests"]):
        where = f"tests[{position}]"
        _validate_fields(test, TEST_FIELDS, REQUIRED_TEST, where)
        assert 0 <= test["score"] <= test["max_score"], where
        assert test["status"] == ("passed" if test["score"] == test["max_score"] else "failed"), where
        assert test["visibility"] in {"visible", "after_published"}, where
        assert test["output"].strip(), f"{where}: empty output"
        assert all(isinstance(tag, str) for tag in test.get("tags", [])), where
    assert results["score"] == pytest.approx(sum(test["score"] for test in results["tests"]))
    assert sum(test["max_score"] for test in results["tests"]) == pytest.approx(TOTAL_POINTS)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "attnkit-autograder.zip"
    assert cli.main(["gradescope", "build", str(out)]) == 0
    return out


def _autograder_root(bundle, root):
    """What Gradescope makes of the zip: ROOT/source/<zip contents> (modes kept), ROOT/run_autograder."""
    source = root / "source"
    with zipfile.ZipFile(bundle) as archive:
        for info in archive.infolist():
            archive.extract(info, source)
            (source / info.filename).chmod((info.external_attr >> 16) & 0o777)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return root


def _run_autograder(root):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update({"ATTNKIT_AUTOGRADER_ROOT": str(root), "ATTNKIT_PYTHON": sys.executable, "ATTNKIT_LANG": "en"})
    completed = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    validate_results(results)
    return results, completed.stdout


# --- the bundle --------------------------------------------------------------------------------------

def test_bundle_layout(bundle, repo_root):
    with zipfile.ZipFile(bundle) as archive:
        infos = {info.filename: info for info in archive.infolist()}
    names = set(infos)
    for script in ("setup.sh", "run_autograder"):
        assert script in names, f"{script} is not at the root of the zip"
        assert (infos[script].external_attr >> 16) & 0o111 == 0o111, f"{script} is not executable in the zip"
    expected = {"pyproject.toml", "setup.py", "constraints.txt", "README.md", "autograder/__init__.py",
                "autograder/integrations/gradescope.py", "course_settings.toml"}  # the points (docs: points.md)
    expected |= {path.relative_to(repo_root).as_posix() for path in (repo_root / "solutions").rglob("*.py")}
    expected |= {path.relative_to(repo_root.resolve()).as_posix() for path in check_locations()}
    # The release's notebooks: grading restores edited given cells from them (never the source, which has answers).
    expected |= {f"release/attention/{path.name}" for path in (repo_root / "release" / "attention").glob("*.ipynb")}
    assert expected <= names, sorted(expected - names)
    for name in names:
        parts = name.split("/")
        assert not name.startswith("/") and ".." not in parts, name
        assert parts[0] not in {".venv", "tests", "source", ".git"}, name
        assert "__pycache__" not in parts and not name.endswith(".pyc"), name
        assert not any(part.startswith(".") for part in parts), name


def test_bundle_is_reproducible(bundle, tmp_path):
    again = tmp_path / "again.zip"
    gradescope.build_bundle(again)
    assert again.read_bytes() == bundle.read_bytes()


def test_setup_pins_torch_to_the_cpu_build(bundle, repo_root):
    pin = gradescope.torch_pin(repo_root / "constraints.txt")
    assert pin.count(".") >= 2
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode()
        run = archive.read("run_autograder").decode()
    assert setup.startswith("#!/usr/bin/env bash\n") and run.startswith("#!/usr/bin/env bash\n")
    assert 'TORCH_INDEX="${ATTNKIT_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"' in setup
    assert f'--index-url "$TORCH_INDEX" "torch=={pin}"' in setup
    assert '-c "$SOURCE/constraints.txt" -e "$SOURCE"' in setup
    for script in (setup, run):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)


@pytest.mark.parametrize("line", ["torch>=2.0", "torch", "numpy==1.0"])
def test_build_refuses_an_unpinned_torch(tmp_path, line):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(f"# pins\n{line}\n", encoding="utf-8")
    with pytest.raises(gradescope.BundleError, match="torch"):
        gradescope.torch_pin(constraints)


def test_build_without_a_source_checkout_says_why(tmp_path):
    (tmp_path / "autograder").mkdir()
    with pytest.raises(gradescope.BundleError, match="pyproject.toml"):
        gradescope.build_bundle(tmp_path / "out.zip", repo=tmp_path)


# --- run_autograder, as Gradescope runs it -------------------------------------------------------------

@pytest.mark.slow
def test_run_autograder_solved_submission_scores_100(bundle, repo_root, tmp_path):
    root = _autograder_root(bundle, tmp_path / "autograder")
    for name in NOTEBOOKS:
        shutil.copy(repo_root / "source" / "attention" / f"{name}.ipynb", root / "submission")
    results, stdout = _run_autograder(root)
    assert results["score"] == 100
    assert {test["status"] for test in results["tests"]} == {"passed"}
    hidden = {check.id for check in catalog.CHECKS if check.hidden}
    for test in results["tests"]:
        check_id = test["name"].rsplit(" · ", 1)[-1]
        assert test["visibility"] == ("after_published" if check_id in hidden else "visible"), test["name"]
    assert "attnkit: 100 / 100 points" in results["output"]
    assert str(root / "source" / "autograder") in stdout  # the bundled package graded, not this checkout


@pytest.mark.slow
def test_run_autograder_untouched_submission_scores_0(bundle, repo_root, tmp_path):
    root = _autograder_root(bundle, tmp_path / "autograder")
    for name in NOTEBOOKS:
        shutil.copy(repo_root / "release" / "attention" / f"{name}.ipynb", root / "submission")
    results, _ = _run_autograder(root)
    assert results["score"] == 0
    assert {test["status"] for test in results["tests"]} == {"failed"}
    assert all("not implemented" in test["output"] for test in results["tests"]), \
        [test["output"] for test in results["tests"] if "not implemented" not in test["output"]]
    assert "NotImplementedError" in results["output"]


# --- in this process: what a submission may lack ------------------------------------------------------

def test_missing_notebooks_score_0_and_say_so(repo_root, tmp_path):
    """A renamed copy in a folder still counts; the notebooks not there get 0 and a clear message."""
    root = tmp_path / "autograder"
    (root / "submission" / "hw").mkdir(parents=True)
    shutil.copy(repo_root / "source" / "attention" / f"{NOTEBOOKS[0]}.ipynb",
                root / "submission" / "hw" / f"{NOTEBOOKS[0]} (1).ipynb")
    results = gradescope.run(root, Options(lang="en"))
    assert results == json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    validate_results(results)
    by_notebook = {}
    for test in results["tests"]:
        by_notebook.setdefault(test["name"].split(" · ")[0], []).append(test)
    assert {test["status"] for test in by_notebook[NOTEBOOKS[0]]} == {"passed"}
    assert results["score"] == sum(test["max_score"] for test in by_notebook[NOTEBOOKS[0]])
    for name in NOTEBOOKS[1:]:
        for test in by_notebook[name]:
            assert test["score"] == 0 and f"not submitted: no {name}.ipynb in your submission" in test["output"]
        assert f"{name}: 0 / " in results["output"] and f"no {name}.ipynb" in results["output"]


def test_submission_without_notebooks_is_still_graded_0(tmp_path):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "submission" / "attention.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 100}', encoding="utf-8")  # stale: replaced
    results = gradescope.run(root, Options(lang="en"))
    validate_results(results)
    assert results["score"] == 0
    assert {test["status"] for test in results["tests"]} == {"failed"}
    assert "No notebook (.ipynb) was found in your submission" in results["output"]
    assert "Your submission contains: attention.py" in results["output"]
    assert json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))["score"] == 0


def test_validator_rejects_what_gradescope_does_not_document():
    good = {"score": 0.0, "output": "x", "visibility": "visible", "stdout_visibility": "hidden",
            "tests": [{"name": "t", "score": 0.0, "max_score": float(TOTAL_POINTS), "status": "failed",
                       "output": "why", "visibility": "visible"}]}
    validate_results(good)
    for broken in ({**good, "grade": 1}, {**good, "visibility": "later"},
                   {**good, "tests": [{**good["tests"][0], "status": "error"}]},
                   {**good, "tests": [{**good["tests"][0], "score": "0"}]},
                   {**good, "tests": [{key: value for key, value in good["tests"][0].items() if key != "name"}]}):
        with pytest.raises(AssertionError):
            validate_results(broken)


def test_cli_reports_a_build_problem(tmp_path, capsys, monkeypatch):
    def refuse(out, lang=None):
        raise gradescope.BundleError("constraints.txt does not pin torch (torch==X.Y.Z)")

    monkeypatch.setattr(gradescope, "build_bundle", refuse)
    assert cli.main(["gradescope", "build", str(tmp_path / "out.zip")]) == cli.USAGE_ERROR
    assert "attnkit gradescope: constraints.txt does not pin torch" in capsys.readouterr().err
    assert not (tmp_path / "out.zip").exists()
