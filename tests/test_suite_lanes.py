"""The suite's two lanes (docs/contributor-guide.md, "Tests and devtools"): `make test` runs every test, a worker per
core; `make test-fast` the tests not marked `slow`, which start no venv, browser, hub or cluster.

What the fast lane holds is read from pytest's own collection of `-m "not slow"`, run in a process of its own with
a small plugin that writes, for every collected test, its markers and the source of its function and of every
fixture it uses (tests/conftest.py's grouping of workers is checked on the same collection).
"""

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

# What a test's code or its fixtures' code calls to start something heavy.
LAUNCHERS = {
    "a venv": re.compile(r"""["']-m["'],\s*["']venv["']|\bmake_kit_venv\(|\bshared_kit_venv\("""),
    "a browser": re.compile(r"\bwebdriver\.Chrome\(|\bchromedriver\b"),
    "the Slurm cluster": re.compile(r"\bCluster\(.*\)\.start\(\)|\bslurmctld\b"),
    "the hub": re.compile(r"\bhub\.start_hub\(|\bhub\.up\("),
}

RECORDER = textwrap.dedent('''\
    """Writes what each collected test is (its markers, its group, its code and its fixtures' code) as JSON."""
    import inspect
    import json
    import os


    def _source(function):
        try:
            return inspect.getsource(function)
        except (OSError, TypeError):
            return ""


    def pytest_collection_finish(session):
        tests = {}
        for item in session.items:
            definitions = item._fixtureinfo.name2fixturedefs.values()
            group = item.get_closest_marker("xdist_group")
            tests[item.nodeid] = {
                "markers": sorted({marker.name for marker in item.iter_markers()}),
                "group": group.args[0] if group else None,
                "fixtures": sorted(item.fixturenames),
                "code": [_source(item.function)] + [_source(d.func) for ds in definitions for d in ds
                                                    if "site-packages" not in (inspect.getsourcefile(d.func) or "")],
            }
        with open(os.environ["LANES_RECORD"], "w", encoding="utf-8") as out:
            json.dump(tests, out)
    ''')


def _pytest_line(repo_root, target):
    """The pytest command `make -n TARGET` prints, as arguments after `-m pytest`."""
    dry = subprocess.run(["make", "-n", target], capture_output=True, text=True, cwd=repo_root, check=True).stdout
    lines = [line for line in dry.splitlines() if " -m pytest " in line]
    assert len(lines) == 1, dry
    return shlex.split(lines[0].split(" -m pytest ", 1)[1])


def _collected(repo_root, tmp_path, *selection):
    (tmp_path / "lanes_recorder.py").write_text(RECORDER, encoding="utf-8")
    record = tmp_path / "collected.json"
    environment = {**os.environ, "PYTHONPATH": str(tmp_path), "LANES_RECORD": str(record)}
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-p", "lanes_recorder", *selection], capture_output=True, text=True, cwd=repo_root,
                         env=environment, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(record.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fast_lane(repo_root, tmp_path_factory):
    arguments = _pytest_line(repo_root, "test-fast")
    marks = [arguments[index + 1] for index, argument in enumerate(arguments[:-1]) if argument == "-m"]
    assert marks == ["not slow"], arguments
    return _collected(repo_root, tmp_path_factory.mktemp("fast"), "-m", "not slow")


@pytest.mark.slow
def test_make_test_runs_every_test_a_worker_per_core_with_the_groups(repo_root):
    arguments = _pytest_line(repo_root, "test")
    assert "-m" not in arguments and "-k" not in arguments, arguments  # the whole suite
    assert arguments[arguments.index("-n") + 1] == "auto", arguments
    assert arguments[arguments.index("--dist") + 1] == "loadgroup" and "--no-loadscope-reorder" in arguments


@pytest.mark.slow
def test_make_test_fast_starts_no_venv_browser_hub_or_cluster(fast_lane):
    assert len(fast_lane) > 1000, len(fast_lane)  # the unit tests are there
    heavy = {nodeid: what for nodeid, test in fast_lane.items() for what, launcher in LAUNCHERS.items()
             if any(launcher.search(code) for code in test["code"])}
    assert not heavy, heavy
    assert not [nodeid for nodeid, test in fast_lane.items()
                if "browser" in test["markers"] or "student_kit_venv" in test["fixtures"]]


@pytest.mark.slow
def test_make_test_fast_holds_the_checks_on_the_solved_and_handed_out_notebooks(fast_lane):
    modules = {nodeid.split("::")[0] for nodeid in fast_lane}
    assert {"tests/test_reference.py", "tests/test_no_answer.py", "tests/test_notebooks_match_solutions.py",
            "tests/test_release.py"} <= modules, sorted(modules)


@pytest.mark.slow
def test_a_test_using_a_modules_fixture_runs_in_its_modules_worker(fast_lane):
    """tests/conftest.py: a module fixture is made once per run only if every test using it is in one group."""
    shared = {nodeid: test for nodeid, test in fast_lane.items() if test["group"] is not None}
    assert shared  # some fast tests share a module's fixture
    assert all(test["group"] == nodeid.split("::")[0].removesuffix(".py").replace("/", ".").removeprefix("tests.")
               for nodeid, test in shared.items()), shared
