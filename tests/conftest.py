"""Shared fixtures: the checkout, and the lines of the source notebooks sorted by nbgrader region; how the suite is
split between pytest-xdist's workers (`make test` runs `-n auto --dist loadfile`)."""

from pathlib import Path

import nbformat
import pytest

# (region, begin marker, end marker), as nbgrader's ClearSolutions and ClearHiddenTests read them
REGIONS = (("solution", "BEGIN SOLUTION", "END SOLUTION"), ("hidden", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"))


def _sort_lines(cell, lines_by_region):
    """Add the cell's stripped, non-blank lines to lines_by_region[solution|hidden|outside|marker]."""
    nbgrader = cell.get("metadata", {}).get("nbgrader", {})
    lines = [line.strip() for line in cell.source.splitlines()]
    if nbgrader.get("solution") and not any("BEGIN SOLUTION" in line for line in lines):
        # a solution cell without markers: nbgrader replaces all of it
        lines_by_region["solution"].update(line for line in lines if line)
        return
    region = "outside"
    for line in lines:
        starts = [name for name, begin, _ in REGIONS if begin in line]
        if starts or any(end in line for _, _, end in REGIONS):
            lines_by_region["marker"].add(line)
            region = starts[0] if starts else "outside"
        elif line:
            lines_by_region[region].add(line)


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects: the marks added here count
def pytest_collection_modifyitems(items):
    """A test that drives a browser or uses the kit's venv (torch installed) is `slow`: never in `make test-fast`.
    Then the modules holding `slow` tests come first, each module's tests together and in their order: under
    `--dist loadfile --no-loadscope-reorder` (make test) a module is one unit of work, so its fixtures are made once,
    and the long modules start early while the short ones fill the gaps."""
    slow_modules = set()
    for item in items:
        if item.get_closest_marker("browser") or "student_kit_venv" in item.fixturenames:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("slow"):
            slow_modules.add(item.path)
    items.sort(key=lambda item: item.path not in slow_modules)  # a stable sort: a module's tests stay in order


@pytest.fixture(scope="session")
def repo_root():
    return Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def source_regions(repo_root):
    """{notebook name: {"solution" | "hidden" | "outside" | "marker": set of stripped lines}}."""
    regions = {}
    for path in sorted((repo_root / "source" / "attention").glob("*.ipynb")):
        lines_by_region = {"solution": set(), "hidden": set(), "outside": set(), "marker": set()}
        for cell in nbformat.read(path, as_version=4).cells:
            _sort_lines(cell, lines_by_region)
        regions[path.stem] = lines_by_region
    return regions


@pytest.fixture(scope="session")
def run_temp(tmp_path_factory, worker_id):
    """The temporary folder of this whole run: shared by its xdist workers (each has a subfolder of it)."""
    basetemp = tmp_path_factory.getbasetemp()
    return basetemp if worker_id == "master" else basetemp.parent


@pytest.fixture(scope="session")
def student_kit_venv(run_temp, tmp_path_factory):
    """One fresh venv per run with the built student kit installed alone (tests/student_kit_env.py), built by the
    first worker that asks and used by all; a scratch folder of this worker's own to run it from."""
    from student_kit_env import shared_kit_venv

    return shared_kit_venv(run_temp, tmp_path_factory.mktemp("student-kit-scratch"))
