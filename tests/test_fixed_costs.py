"""A class run's fixed costs, cut without moving a defence (issue 59, docs/performance.md): the same protected lines
found faster, and each student's largest notebook graded first so that a run ends on a short one."""

from pathlib import Path

from autograder.course.exercises import NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import NotebookInput
from autograder.isolation import withholding
from autograder.isolation.protected import check_locations, checkout_root, reference_locations


def test_inside_is_a_folder_itself_or_below_it_part_by_part():
    folders = {Path("/a/course/ex1").parts, Path("/a/solutions").parts}
    assert withholding._inside(Path("/a/solutions"), folders)
    assert withholding._inside(Path("/a/course/ex1/declaration.py"), folders)
    assert not withholding._inside(Path("/a/course/ex10/declaration.py"), folders)  # a prefix of a name is not one
    assert not withholding._inside(Path("/a/course"), folders)
    assert not withholding._inside(Path("/a/solutions.py"), folders)


def test_the_protected_lines_are_those_the_parents_walk_finds():
    """The public lines left out of the protected ones are the same as when every path's parents were compared."""
    root = checkout_root()
    hidden = set(reference_locations()) | set(check_locations())
    walked = {path for path in (root / "autograder").rglob("*.py")
              if not any(package == path or package in path.parents for package in hidden)}
    compared = {path for path in (root / "autograder").rglob("*.py")
                if not withholding._inside(path, {package.parts for package in hidden})}
    assert walked == compared and len(compared) > 100
    kept = withholding._kept(["short", "   " + "x " * 30, "a" * 23 + "  ", "  " + "b" * 24])
    assert kept == {" ".join(("x " * 30).split()), "b" * 24}


def test_each_student_s_largest_notebook_is_graded_first_so_a_class_run_ends_on_a_short_one(tmp_path):
    sizes = dict(zip(NOTEBOOKS, (10, 300, 50, 300), strict=True))
    inputs = []
    for notebook, size in sizes.items():
        (tmp_path / f"{notebook}.ipynb").write_bytes(b"x" * size)
        inputs.append(NotebookInput(("s", notebook), tmp_path / f"{notebook}.ipynb", notebook))
    inputs.append(NotebookInput(("s", "gone"), tmp_path / "gone.ipynb", None))  # vanished since the intake: last
    ordered = [item.key[1] for item in classroom._largest_first(inputs)]
    assert ordered == [NOTEBOOKS[1], NOTEBOOKS[3], NOTEBOOKS[2], NOTEBOOKS[0], "gone"]  # equal sizes: course order

