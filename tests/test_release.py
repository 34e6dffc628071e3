"""The committed student release: generated from source, leaking nothing, graded as autograder.course.exercises says."""

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from project_copy import copy_checkout, installed

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.integrations import nbgrader_course

# What nbgrader's ClearSolutions puts in place of a solution (its defaults, which nbgrader_config.py keeps).
STUB_LINES = frozenset({"# YOUR CODE HERE", "raise NotImplementedError()", "YOUR ANSWER HERE"})
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
GRADE_CALL = re.compile(r"""\bgrade\(\s*["'](\w+)["']""")


def _release_dir(repo_root):
    return repo_root / "release" / nbgrader_course.ASSIGNMENT


def _read(path):
    return nbformat.read(path, as_version=4)


def _graded_cells(path):
    return [cell for cell in _read(path).cells if cell.get("metadata", {}).get("nbgrader", {}).get("grade")]


@pytest.fixture(scope="module")
def fresh_release(repo_root, tmp_path_factory):
    """One `nbgrader generate_assignment attention` of the current source, in a throwaway course."""
    course_root = nbgrader_course.make_course(tmp_path_factory.mktemp("fresh-release") / "course", repo_root)
    return nbgrader_course.generate_release(course_root)


def test_source_and_release_hold_the_course_notebooks(repo_root):
    expected = [f"{name}.ipynb" for name in NOTEBOOKS]
    assert sorted(p.name for p in (repo_root / "source" / nbgrader_course.ASSIGNMENT).glob("*.ipynb")) == expected
    assert sorted(p.name for p in _release_dir(repo_root).glob("*.ipynb")) == expected


@pytest.mark.slow
def test_committed_release_is_in_sync_with_source(repo_root, fresh_release):
    problems = nbgrader_course.compare_releases(fresh_release, _release_dir(repo_root))
    assert not problems, "release/attention/ is out of date; run `make release`:\n" + "\n".join(problems)


@pytest.mark.slow
def test_sync_check_catches_a_stale_release(fresh_release, tmp_path):
    stale = tmp_path / "stale"
    shutil.copytree(fresh_release, stale)
    edited, removed = sorted(stale.glob("*.ipynb"))[:2]

    notebook = _read(edited)
    for cell in notebook.cells:  # what a student's run adds is not a difference
        if cell.cell_type == "code":
            cell.execution_count = 7
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    nbformat.write(notebook, edited)
    assert nbgrader_course.compare_releases(fresh_release, stale) == []

    solution = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("solution"))
    solution.source += "\n# edited by hand"
    nbformat.write(notebook, edited)
    removed.unlink()
    problems = nbgrader_course.compare_releases(fresh_release, stale)
    assert f"missing: {removed.name}" in problems
    assert any(edited.name in line and solution.metadata.nbgrader.grade_id in line for line in problems), problems


def test_release_has_no_nbgrader_markers(repo_root):
    for path in sorted(_release_dir(repo_root).rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            found = [marker for marker in MARKERS if marker in text]
            assert not found, f"{path.name} contains {found}"


def _secret_lines_shown(notebook_path, regions):
    """Lines of the notebook that only occur inside the source's solution or hidden-test regions."""
    secret = (regions["solution"] | regions["hidden"]) - regions["outside"] - STUB_LINES
    shown = set()
    for cell in _read(notebook_path).cells:
        shown |= {line.strip() for line in cell.source.splitlines()} & secret
    return shown


def test_release_leaks_no_solution_or_hidden_test_lines(repo_root, source_regions):
    """A release line is either from outside the solution/hidden regions of the source, or an nbgrader stub."""
    for name, regions in source_regions.items():
        # the check itself works: the source notebook does show its solutions and hidden tests
        assert _secret_lines_shown(repo_root / "source" / nbgrader_course.ASSIGNMENT / f"{name}.ipynb", regions), name
        leaked = _secret_lines_shown(_release_dir(repo_root) / f"{name}.ipynb", regions)
        assert not leaked, f"release/attention/{name}.ipynb shows solution or hidden-test lines: {sorted(leaked)}"


def test_hidden_tests_call_the_grader(source_regions):
    """Each notebook's hidden regions hold grade(...) calls: the graded checks themselves live in autograder."""
    for name, regions in source_regions.items():
        calls = {line for line in regions["hidden"] if GRADE_CALL.search(line)}
        expected = {exercise.id for exercise in EXERCISES if exercise.notebook == name}
        assert {GRADE_CALL.search(line).group(1) for line in calls} == expected, name


def test_graded_cells_match_exercises(repo_root):
    """Every exercise: exactly one graded test cell in its notebook, worth the points autograder.course.exercises
    gives."""
    found = {}
    for name in NOTEBOOKS:
        for cell in _graded_cells(repo_root / "source" / nbgrader_course.ASSIGNMENT / f"{name}.ipynb"):
            nbgrader = cell.metadata.nbgrader
            ids = GRADE_CALL.findall(cell.source)
            assert cell.cell_type == "code" and not nbgrader.get("solution"), (
                f"{name}: graded cell {nbgrader.get('grade_id')} is not an autograded test cell")
            assert len(ids) == 1, f"{name}: graded cell {nbgrader.get('grade_id')} calls grade() {len(ids)} times"
            found.setdefault(ids[0], []).append((name, nbgrader.get("points")))

    for exercise in EXERCISES:
        cells = found.get(exercise.id, [])
        assert len(cells) == 1, f"{exercise.id}: {len(cells)} graded cells ({cells}), expected one"
        assert cells[0] == (exercise.notebook, exercise.points), (
            f"{exercise.id}: graded cell {cells[0]}, autograder.course.exercises says "
            f"{(exercise.notebook, exercise.points)}")
    unknown = sorted(set(found) - {exercise.id for exercise in EXERCISES})
    assert not unknown, f"graded cells for exercises autograder.course.exercises does not know: {unknown}"


def test_points_total_100(repo_root):
    assert sum(exercise.points for exercise in EXERCISES) == 100
    for folder in ("source", "release"):
        total = sum(
            cell.metadata.nbgrader.get("points", 0)
            for name in NOTEBOOKS
            for cell in _graded_cells(repo_root / folder / nbgrader_course.ASSIGNMENT / f"{name}.ipynb")
        )
        assert total == 100, f"{folder}/attention/ graded cells are worth {total} points"


EXERCISE_POINTS = ("import json\nfrom autograder.course.exercises import EXERCISES\n"
                   "print(json.dumps({exercise.id: exercise.points for exercise in EXERCISES}))")


def _literal_check_points(tree: ast.AST) -> list[tuple[str, ast.Constant]]:
    """(exercise id, the points' literal) of every `Check(...)` in `tree` declared with literal id, exercise and
    points, positional or by keyword."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Check"):
            continue
        fields = dict(zip(("id", "exercise", "points"), node.args, strict=False))
        fields.update({keyword.arg: keyword.value for keyword in node.keywords if keyword.arg})
        values = [fields.get(name) for name in ("id", "exercise", "points")]
        if all(isinstance(value, ast.Constant) for value in values) and isinstance(values[2].value, int):
            found.append((values[1].value, values[2]))
    return found


def move_a_point(course_dir: Path) -> tuple[str, str]:
    """Move one point between two checks of different exercises in the course's declarations (the total stays);
    (exercise that lost it, exercise that gained it)."""
    for path in sorted(course_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        checks = _literal_check_points(ast.parse(text))
        giver = next(((exercise, points) for exercise, points in checks if points.value >= 2), None)
        taker = next(((exercise, points) for exercise, points in checks if giver and exercise != giver[0]), None)
        if giver and taker:
            lines = text.splitlines(keepends=True)
            for (_, points), change in sorted(((giver, -1), (taker, +1)), key=lambda item: item[0][1].lineno,
                                              reverse=True):
                line = lines[points.lineno - 1]
                lines[points.lineno - 1] = (line[:points.col_offset] + str(points.value + change)
                                            + line[points.end_col_offset:])
            path.write_text("".join(lines), encoding="utf-8")
            return giver[0], taker[0]
    raise AssertionError(f"no declaration under {course_dir} has two exercises' checks with literal points")


def _graded_points(source: Path, folder: Path) -> dict[str, int]:
    """{exercise id: its graded cell's points} in a folder of notebooks, each graded cell known by its grade id
    (the release hides the grade(...) call that names the exercise in `source`)."""
    exercise_of = {cell.metadata.nbgrader.grade_id: GRADE_CALL.findall(cell.source)[0]
                   for path in sorted(source.glob("*.ipynb")) for cell in _graded_cells(path)}
    return {exercise_of[cell.metadata.nbgrader.grade_id]: cell.metadata.nbgrader.points
            for path in sorted(folder.glob("*.ipynb")) for cell in _graded_cells(path)}


@pytest.mark.slow
def test_a_checks_points_reach_source_and_release_through_make_release(repo_root, tmp_path):
    """Points are declared once, with the checks: in a copy where a point moves between two exercises' checks,
    check-release fails, the release writes the new points into the graded cells of source/ and release/ and into
    the "What is graded" cells, and check-release passes again."""
    copy = copy_checkout(repo_root, tmp_path / "attnkit")
    loser, gainer = move_a_point(copy / "autograder" / "course")
    environment = installed(copy, tmp_path / "installed")

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *arguments], cwd=copy, env=environment, capture_output=True,
                              text=True, timeout=600, check=False)

    points = json.loads(run("-c", EXERCISE_POINTS).stdout)
    before = {exercise.id: exercise.points for exercise in EXERCISES}
    assert (points[loser], points[gainer]) == (before[loser] - 1, before[gainer] + 1)
    assert sum(points.values()) == sum(before.values())
    module = "autograder.integrations.nbgrader_course"
    stale = run("-m", module, "check-release", "--repo", str(copy))
    assert stale.returncode == 1 and "from the catalogue" in stale.stderr, stale.stderr[-3000:]
    released = run("-m", module, "release", "--repo", str(copy))
    assert released.returncode == 0, released.stderr[-3000:]
    for folder in ("source", "release"):
        source = copy / "source" / nbgrader_course.ASSIGNMENT
        assert _graded_points(source, copy / folder / nbgrader_course.ASSIGNMENT) == points, folder
    notebook = next(exercise.notebook for exercise in EXERCISES if exercise.id == gainer)
    cells = _read(copy / "release" / nbgrader_course.ASSIGNMENT / f"{notebook}.ipynb").cells
    graded_text = next(cell.source for cell in cells if cell.get("id") == f"requirements-{gainer}")
    assert f"{points[gainer]:g} points · 共 {points[gainer]:g} 分" in graded_text
    in_sync = run("-m", module, "check-release", "--repo", str(copy))
    assert in_sync.returncode == 0, in_sync.stderr[-3000:]
