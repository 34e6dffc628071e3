"""autograder.course.registry finds every exercise folder's Declaration, in course order.

Each notebook has a package under autograder/course/ (n01_attention_without_weights, ...) holding one folder per
exercise (ex1_softmax, ...), each with its probe, judge and declaration; the module contract's folder declares no
exercise and comes last.
"""

import importlib
import re
import types
from pathlib import Path

import pytest

import autograder.course
from autograder.course import catalog, registry
from autograder.course.declaration import Declaration
from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.course.module_contract import declaration as contract_declaration

COURSE_DIR = Path(autograder.course.__file__).resolve().parent
NOTEBOOK_PACKAGE = re.compile(r"n(\d\d_\w+)")


def declaration_files_on_disk() -> set[str]:
    """The dotted name of every declaration.py inside a folder of the course."""
    return {".".join(("autograder.course", *path.relative_to(COURSE_DIR).with_suffix("").parts))
            for path in COURSE_DIR.glob("*/**/declaration.py")}


def notebook_packages() -> dict[str, types.ModuleType]:
    """{notebook: its package} for every package of the course named n<notebook>."""
    packages = {}
    for path in sorted(COURSE_DIR.iterdir()):
        match = NOTEBOOK_PACKAGE.fullmatch(path.name)
        if match and (path / "__init__.py").is_file():
            packages[match.group(1)] = importlib.import_module(f"autograder.course.{path.name}")
    return packages


def test_the_registry_sees_every_declaration_on_disk():
    """A folder without __init__.py would be skipped without a word, and its checks would never run."""
    assert set(registry.declaration_modules()) == declaration_files_on_disk()
    assert len(registry.declarations()) == len(declaration_files_on_disk())


def test_each_exercise_folder_holds_its_probe_judge_and_declaration():
    for name in registry.declaration_modules():
        folder = COURSE_DIR.joinpath(*name.split(".")[2:-1])
        assert {"probe.py", "judge.py", "declaration.py", "__init__.py"} <= {p.name for p in folder.iterdir()}, folder


def test_each_notebook_has_a_package_whose_folders_declare_its_exercises_and_no_others():
    packages = notebook_packages()
    assert set(packages) == set(NOTEBOOKS)
    for notebook, package in packages.items():
        assert package.NOTEBOOK == notebook
        folders = [importlib.import_module(name).DECLARATION for name in registry.declaration_modules()
                   if name.startswith(package.__name__ + ".")]
        assert len(folders) >= 2, package.__name__  # one folder per exercise (or a pair sharing a probe)
        for declared in folders:
            assert {exercise.notebook for exercise in declared.exercises} == {notebook}


def test_the_catalogue_runs_notebook_by_notebook_then_the_module_contract():
    graded = list(catalog.GRADED_CHECKS)  # each preview sits right before its check in CHECKS
    ids = [check.id for check in graded]
    contract_ids = [check.id for check in contract_declaration.DECLARATION.checks]
    assert ids[-len(contract_ids):] == contract_ids
    notebooks = [EXERCISES_BY_ID[check.exercise].notebook for check in graded[:-len(contract_ids)]]
    assert notebooks == sorted(notebooks)
    assert list(dict.fromkeys(notebooks)) == list(NOTEBOOKS)


def test_a_notebooks_folders_come_in_the_order_of_their_names():
    """ex1_..., ex2_...: the name is the notebook's order, so a new exercise folder sorts where its number says."""
    for package in notebook_packages().values():
        names = [name for name in registry.declaration_modules() if name.startswith(package.__name__ + ".")]
        assert names == sorted(names)
        assert all(re.fullmatch(r"ex\d+_\w+", name.split(".")[-2]) for name in names), names


def test_a_declaration_module_without_a_declaration_is_named(monkeypatch):
    broken = types.ModuleType("autograder.course.n99_broken.ex1_broken.declaration")
    broken.CHECKS = ()  # the old convention: module-level names, no Declaration
    monkeypatch.setitem(importlib.sys.modules, broken.__name__, broken)
    monkeypatch.setattr(registry, "declaration_modules", lambda: (broken.__name__,))
    registry.declarations.cache_clear()
    try:
        with pytest.raises(registry.DeclarationError, match="n99_broken.ex1_broken.declaration must define"):
            registry.declarations()
    finally:
        registry.declarations.cache_clear()


def test_checks_are_built_by_keyword_with_their_title():
    from autograder.checking.check_types import Check

    with pytest.raises(TypeError):
        Check("a.b", "a", 1, False, None, None, None)  # positional construction is refused
    assert all(isinstance(d, Declaration) for d in registry.declarations())
    for check in catalog.GRADED_CHECKS:
        assert set(check.title) == {"en", "zh"} and all(check.title.values()), check.id
