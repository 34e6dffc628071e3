"""The suite's two lanes (docs/contributor-guide.md, "Tests and devtools"): `make test` runs every test, a worker per
core; `make test-fast` the tests not marked `slow`, which start no venv, browser, hub or cluster.

What the fast lane holds is read from pytest's own collection of `-m "not slow"`, run in a process of its own with
a small plugin that writes, for every collected test, its markers and the source of its function and of every
fixture it uses (tests/conftest.py's order, the modules with slow tests first, is checked on the whole collection).
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
            tests[item.nodeid] = {
                "markers": sorted({marker.name for marker in item.iter_markers()}),
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
    # a module is one unit of work (its fixtures made once), in the order tests/conftest.py gives
    assert arguments[arguments.index("--dist") + 1] == "loadfile" and "--no-loadscope-reorder" in arguments


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
def test_the_modules_with_slow_tests_come_first_each_whole(repo_root, tmp_path):
    """tests/conftest.py's order, which `--dist loadfile --no-loadscope-reorder` hands out module by module."""
    whole = _collected(repo_root, tmp_path)  # in collection order
    order = [nodeid.split("::")[0] for nodeid in whole]
    modules = list(dict.fromkeys(order))
    assert len(modules) == len({(module, index) for index, module in enumerate(order)
                                if index == 0 or order[index - 1] != module}), "a module's tests are split"
    has_slow = [any("slow" in whole[nodeid]["markers"] for nodeid in whole if nodeid.startswith(module + "::"))
                for module in modules]
    assert has_slow == sorted(has_slow, reverse=True), "a module without slow tests comes before one with"
    assert any(has_slow) and not all(has_slow)
