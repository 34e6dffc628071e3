"""The autograder package has no import cycles, lazy imports inside functions included.

A cycle broken by an import inside a function works until someone moves that import to the top; the stages
(checking -> course -> running -> isolation | outputs -> grading -> integrations | review, from the bottom: the
layers of pyproject.toml's "Pipeline stages import downwards only") read best when each module only leans on
modules that do not lean back on it.
"""

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import autograder
from devtools.architecture import import_graph, modules_of

PACKAGE_DIR = Path(autograder.__file__).resolve().parent


def find_cycle(graph):
    """One cycle as a list of module names ([] when the graph is acyclic): depth-first search with colours."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_find_cycle_sees_a_cycle_and_its_absence():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("name", sorted(modules_of(PACKAGE_DIR)))
def test_every_module_imports(name):
    importlib.import_module(name)


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE_DIR)
    assert len(graph) > 30 and any(graph.values()), "the graph is empty: the walk found no modules or imports"
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_layers_contract_holds(repo_root):
    """pyproject.toml's import-linter contracts: stages import downwards only, the course's catalogue above the
    registry, an exercise folder's probe below its judge below its declaration, and nothing the grading child runs
    imports the reference, a declaration or a judge."""
    run = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=repo_root,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "broken" in run.stdout and "0 broken" in run.stdout


STAGES_CONTRACT = "Pipeline stages import downwards only"


def stage_layers(pyproject: Path) -> list[list[str]]:
    """The stages, bottom up, as the layers contract declares them: each a list of sibling packages (short names).
    The contract's top layer is the CLI and its bottom layer the shared modules: neither is a stage."""
    contracts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    layers = next(contract["layers"] for contract in contracts if contract["name"] == STAGES_CONTRACT)
    return [[name.strip().removeprefix("autograder.") for name in layer.split("|")] for layer in layers[-2:0:-1]]


def docstring_stages() -> dict[str, int]:
    """{package: the stage number its docstring opens with ("Stage N, ...")} for autograder's subpackages."""
    stages = {}
    for init in sorted(PACKAGE_DIR.glob("*/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        match = re.match(r"Stage (\d+), ", docstring)
        if match:
            stages[init.parent.name] = int(match.group(1))
    return stages


def test_the_docstrings_stages_are_the_layers_contracts(repo_root):
    """One stage order: the packages' "Stage N" and the order this module's and autograder's docstrings give are the
    layers contract's, numbered from the bottom."""
    layers = stage_layers(repo_root / "pyproject.toml")
    assert len(layers) >= 5, layers
    declared = {package: number for number, layer in enumerate(layers, start=1) for package in layer}
    assert docstring_stages() == declared
    chain = " -> ".join(" | ".join(sorted(layer)) for layer in layers)
    assert chain in " ".join(__doc__.split()), chain
    numbered = ", ".join(f"{number} {' | '.join(sorted(layer))}" for number, layer in enumerate(layers, start=1))
    assert numbered.replace("1 ", "Stage 1 ", 1) in " ".join(autograder.__doc__.split()), numbered


@pytest.mark.slow
@pytest.mark.parametrize(("folder", "role", "imported", "contract"), [
    ("n03_causal_attention/ex1_causal_mask", "probe", "attnkit.solutions", "What the grading child runs"),
    ("n04_multi_head_attention/ex2_split_merge", "probe",
     "autograder.course.n01_attention_without_weights.ex1_softmax.judge", "A folder's probe imports no judge"),
    ("module_contract", "judge", "autograder.course.module_contract.declaration",
     "A folder's probe imports no judge or declaration; a judge no declaration"),
])
def test_the_role_contracts_catch_a_folder_that_breaks_them(repo_root, tmp_path, folder, role, imported, contract):
    """The contracts name roles with wildcards, not folders: an import that breaks one, in any folder (here in a
    copy of the checkout), is found."""
    copy = tmp_path / "attnkit"
    for name in ("autograder", "solutions"):
        shutil.copytree(repo_root / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(repo_root / "pyproject.toml", copy / "pyproject.toml")
    module = copy / "autograder" / "course" / folder / f"{role}.py"
    module.write_text(module.read_text(encoding="utf-8") + f"\nimport {imported}  # noqa\n", encoding="utf-8")
    run = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=copy,
                         env={**os.environ, "PYTHONPATH": str(copy)}, capture_output=True, text=True, check=False)
    assert run.returncode != 0, run.stdout[-3000:]
    broken = [line for line in run.stdout.splitlines() if "BROKEN" in line or line.startswith(contract[:40])]
    assert any(contract[:40] in line for line in broken), run.stdout[-3000:]


@pytest.mark.slow
def test_the_typed_stages_pass_mypy(repo_root):
    """Every package of autograder type-checks, every function annotated (pyproject.toml's [tool.mypy])."""
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=repo_root, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.parametrize("command", [[], ["check"], ["grade"], ["merge"], ["similarity"], ["export"],
                                     ["gradescope", "build"], ["student-kit", "build"], ["points"]])
def test_help_imports_neither_torch_nor_the_checks(command):
    """`attnkit ... --help` answers at once: the command line imports torch and the checks only to grade."""
    probe = ("import sys, contextlib, io\nfrom autograder import cli\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    try:\n        cli.main(sys.argv[1:] + ['--help'])\n    except SystemExit:\n        pass\n"
             "heavy = [m for m in sys.modules\n"
             "         if m == 'torch' or m.startswith(('attnkit.solutions', 'autograder.course.variants'))\n"
             "         or m.startswith('autograder.course.') and m.endswith('.declaration')]\n"
             "print(','.join(heavy))")
    run = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""
