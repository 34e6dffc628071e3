"""Shared fixtures: the checkout, and the lines of the source notebooks sorted by nbgrader region."""

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
def student_kit_venv(tmp_path_factory):
    """One fresh venv per session with the built student kit installed alone (tests/student_kit_env.py)."""
    from student_kit_env import make_kit_venv

    return make_kit_venv(tmp_path_factory.mktemp("student-kit"))
