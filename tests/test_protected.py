"""The protected paths (autograder.isolation.protected) cover every file that holds reference or check code.

The walk moves nothing: it reads the checkout as it is, so a refactor that puts a check or a piece of the
reference outside the declared packages and folders fails here before student code can read it.
"""

import ast
import importlib.util
import os
from pathlib import Path

import pytest

from autograder.course import registry, variants
from autograder.grading import notebooks
from autograder.isolation import guards, protected, sandbox

# Build outputs and caches: not part of the project's files.
SKIPPED_FOLDERS = {".venv", ".git", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "out",
                   "demo-out"}
NOTEBOOK_SECRETS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS")


def imports_reference_or_builds_checks(source):
    """True for Python code that imports the reference (`attnkit.solutions`) or builds `Check(...)` objects."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_is_reference(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (
                _is_reference(node.module or "")
                or any(_is_reference(f"{node.module}.{alias.name}") for alias in node.names)):
            return True
        if isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if called == "Check":
                return True
    return False


def _is_reference(module):
    return module == protected.REFERENCE_PACKAGE or module.startswith(protected.REFERENCE_PACKAGE + ".")


def holds_secrets(path):
    """Reference or check code: the reference and checks packages, solution notebooks, code that uses them."""
    located = [*protected.reference_locations(), *protected.check_locations()]
    if any(path == folder or folder in path.parents for folder in located):
        return True
    if path.suffix == ".py":
        return imports_reference_or_builds_checks(path.read_text(encoding="utf-8"))
    if path.suffix == ".ipynb":
        text = path.read_text(encoding="utf-8")
        return any(marker in text for marker in NOTEBOOK_SECRETS)
    return False


def checkout_files(root):
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED_FOLDERS and not name.endswith(".egg-info")]
        yield from (Path(folder) / name for name in names)


@pytest.fixture(scope="module")
def secret_files():
    root = protected.checkout_root()
    return [path for path in checkout_files(root) if holds_secrets(path.resolve())]


@pytest.mark.slow
def test_every_file_with_reference_or_check_code_is_protected(secret_files):
    exposed = [str(path) for path in secret_files if not protected.is_protected(path)]
    assert not exposed, f"reference or check code outside autograder.isolation.protected: {exposed}"


def test_the_walk_finds_each_kind_of_secret(secret_files):
    """The walk is not vacuous: it sees the reference, the checks, the functional reference and the solutions."""
    root = protected.checkout_root()
    found = {path.resolve() for path in secret_files}
    assert set(protected.reference_locations()[0].glob("*.py")) <= found
    assert Path(variants.__file__).resolve() in found
    assert any(path.suffix == ".ipynb" and root / "source" in path.parents for path in found)
    assert any(root / "tests" in path.parents for path in found)


def test_the_protected_paths_found_once_answer_as_finding_them_each_time(secret_files, tmp_path):
    """The grader finds the protected paths once for a class (autograder.isolation.supervisor) and asks is_protected
    of every notebook's folder with them: each answer is the one is_protected gives when it finds them itself."""
    root = protected.checkout_root()
    course = root / "autograder" / "course"
    once = protected.protected_paths()
    paths = [*secret_files, *protected.check_locations(), *(path.parent for path in protected.check_locations()),
             course, course / "shared" / "plan.py", root / "source", root / "source" / "attention" / "x.ipynb",
             root / "tests" / "a" / "b", root / ".git", root, root / "release" / "attention", tmp_path,
             tmp_path / "source", Path("/"), *protected.reference_locations()]
    answers = {path: protected.is_protected(path) for path in paths}
    assert {path: protected.is_protected(path, once) for path in paths} == answers
    assert True in answers.values() and False in answers.values()


def test_the_landlock_rules_go_around_every_blocked_path_and_nothing_else(tmp_path):
    """sandbox.prepare's read rules beneath a readable folder: each of its entries on the way to a blocked path is
    allowed on its own, the blocked paths and what is beneath them never, everything else whole (a blocked file and
    a blocked folder, nested, side by side and under a link)."""
    root = tmp_path / "root"
    for folder in ("a/b/secret", "a/b/open", "a/c", "d/e", "f"):
        (root / folder).mkdir(parents=True)
    for file in ("a/b/secret/x.py", "a/b/open/y.py", "a/b/z.py", "d/e/check.py", "d/e/kept.py", "d/w.py", "f/v.py"):
        (root / file).write_text("")
    (root / "link").symlink_to(root / "d" / "e")
    blocked = (root / "a" / "b" / "secret", root / "d" / "e" / "check.py")
    rules = sandbox.prepare(64, 10, blocked=blocked, readable=[root]).read_rules
    beneath = sorted(str(path.relative_to(root)) for path in rules if root in path.parents)
    assert beneath == ["a/b/open", "a/b/z.py", "a/c", "d/e/kept.py", "d/w.py", "f"]
    assert not any(path == b or b in path.parents or path in b.parents for path in rules for b in blocked)


def test_the_detector_sees_reference_imports_and_checks():
    assert imports_reference_or_builds_checks("import attnkit.solutions\n")
    assert imports_reference_or_builds_checks("from attnkit import solutions\n")
    assert imports_reference_or_builds_checks("from attnkit.solutions.n03_causal_attention import CausalAttention\n")
    assert imports_reference_or_builds_checks("CHECKS = (Check(id='a.b', exercise='a', points=1),)\n")
    assert not imports_reference_or_builds_checks("import attnkit.solutionsx\nfrom autograder.running import runner\n")
    assert not imports_reference_or_builds_checks("from attnkit import solutionsx\n")


def test_what_students_may_read_stays_readable():
    """The grader's own machinery and the release are not secret: the list must not grow to cover everything."""
    root = protected.checkout_root()
    for path in (root / "autograder" / "checking" / "runner.py", root / "autograder" / "course" / "exercises.py",
                 root / "release" / "attention", root / "autograder" / "isolation" / "protected.py"):
        assert not protected.is_protected(path), path


def test_the_guards_and_the_landlock_rules_use_the_declared_list():
    assert guards.BLOCKED_PREFIXES == protected.protected_modules()
    assert set(protected.protected_paths()) <= {Path(path) for path in notebooks._blocked_paths(())}


def test_the_import_blocker_refuses_every_protected_module():
    blocker = guards.ReferenceImportBlocker()
    for name in protected.protected_modules():
        for module in (name, f"{name}.anything"):
            with pytest.raises(ImportError):
                blocker.find_spec(module)
    assert blocker.find_spec("autograder.running.runner") is None


def test_every_declaration_is_blocked_and_unreadable_and_every_probe_readable():
    """The exercise folders sit among the probe side: a student naming a folder's declaration, or its file, meets the
    import blocker and the protected paths; its probe and judge (what the child and the student kit hold) do not."""
    blocker = guards.ReferenceImportBlocker()
    names = registry.declaration_modules()
    assert len(names) >= 10
    for name in names:
        with pytest.raises(ImportError):
            blocker.find_spec(name)
        assert protected.is_protected(importlib.util.find_spec(name).origin), name
        for role in ("probe", "judge"):
            open_module = name.rpartition(".")[0] + "." + role
            assert blocker.find_spec(open_module) is None, open_module
            assert not protected.is_protected(importlib.util.find_spec(open_module).origin), open_module


def test_the_checks_depend_only_on_protected_code_and_the_generic_checking_machinery():
    """A helper of the checks moved out of the protected modules (say, the functional reference) would be
    readable: check code may import from autograder only protected modules, autograder.checking (probes, judges,
    verdicts), the probe side (the folders' probe and judge modules, autograder.course.shared: readable by
    design) and the declaration type."""
    protected_names = set(protected.check_modules())
    probe_side = ("autograder.checking.", "autograder.course.shared", "autograder.course.declaration")
    outside = []
    for path in protected.check_locations():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                if not name.startswith("autograder") or name in protected_names or name.startswith(probe_side):
                    continue
                if name.rpartition(".")[2] in ("probe", "judge") or name == "autograder.course":
                    continue
                package = importlib.util.find_spec(name)
                if package is not None and package.submodule_search_locations is not None:
                    continue  # a notebook's package (its NOTEBOOK name)
                outside.append(f"{path.name}: {name}")
    assert not outside, f"the checks import grader modules outside the protected ones: {outside}"
