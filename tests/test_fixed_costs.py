"""A class run's fixed costs, cut without moving a defence (issue 59, docs/performance.md): the same protected lines
found faster (paid before a class run's first child)."""

from pathlib import Path

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

