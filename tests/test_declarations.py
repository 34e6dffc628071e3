"""autograder.course.declarations finds every declaring module of the checks' packages, in course order.

Each notebook has a package under autograder/course/checks/ (n01_attention_without_weights, ...) whose modules
declare that notebook's exercises; the module contract's package declares none and comes last.
"""

import importlib
import re
from pathlib import Path

from autograder.course import catalog, checks, declarations
from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.course.module_contract import checks as contract_checks

CHECKS_DIR = Path(checks.__file__).resolve().parent
NOTEBOOK_PACKAGE = re.compile(r"n(\d\d_\w+)")


def modules_on_disk():
    """The dotted name of every .py file under the checks package (packages by their __init__)."""
    names = set()
    for path in CHECKS_DIR.rglob("*.py"):
        parts = path.relative_to(CHECKS_DIR).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts:
            names.add(".".join((checks.__name__, *parts)))
    return names


def notebook_packages():
    """{notebook: its package} for every subpackage named n<notebook>."""
    packages = {}
    for name in declarations.module_names():
        match = NOTEBOOK_PACKAGE.fullmatch(name.removeprefix(checks.__name__ + "."))
        if match:
            packages[match.group(1)] = importlib.import_module(name)
    return packages


def test_the_walk_sees_every_file_under_the_checks():
    """A folder without __init__.py would be skipped without a word, and its checks would never run."""
    assert set(declarations.module_names()) == modules_on_disk()


def test_each_notebook_has_a_package_that_declares_its_exercises_and_no_others():
    packages = notebook_packages()
    assert set(packages) == set(NOTEBOOKS)
    for notebook, package in packages.items():
        assert package.NOTEBOOK == notebook
        declaring = [module for module in declarations.check_modules()
                     if module.__name__.startswith(package.__name__ + ".")]
        assert len(declaring) >= 2, package.__name__  # one module per exercise or small group
        for module in declaring:
            assert {exercise.notebook for exercise in module.EXERCISES} == {notebook}, module.__name__


def test_every_declaring_module_is_in_a_notebook_package_or_is_the_module_contract():
    packages = {package.__name__ for package in notebook_packages().values()}
    for module in declarations.check_modules():
        assert module.__name__.rsplit(".", 1)[0] in packages or module is contract_checks, module.__name__


def test_the_catalogue_runs_notebook_by_notebook_then_the_module_contract():
    graded = list(catalog.GRADED_CHECKS)  # each preview sits right before its check in CHECKS
    ids = [check.id for check in graded]
    contract_ids = [check.id for check in contract_checks.CHECKS]
    assert ids[-len(contract_ids):] == contract_ids
    notebooks = [EXERCISES_BY_ID[check.exercise].notebook for check in graded[:-len(contract_ids)]]
    assert notebooks == sorted(notebooks)
    assert list(dict.fromkeys(notebooks)) == list(NOTEBOOKS)


def test_a_notebooks_modules_come_in_the_order_of_their_names():
    """ex1_..., ex2_...: the name is the notebook's order, so a new exercise module sorts where its number says."""
    for package in notebook_packages().values():
        names = [module.__name__ for module in declarations.check_modules()
                 if module.__name__.startswith(package.__name__ + ".")]
        assert names == sorted(names)
        assert all(re.fullmatch(r"ex\d+_\w+", name.rsplit(".", 1)[-1]) for name in names), names
