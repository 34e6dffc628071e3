"""solutions/ is the single source of truth: the source notebooks' solution code is the same code.

Compared as syntax trees with docstrings removed, so comments and docstrings may differ (the
notebooks explain in two languages) but no statement may.
"""

import ast
import inspect
from pathlib import Path

import nbformat
import pytest

from attnkit import solutions
from autograder.course.exercises import NOTEBOOKS

SOURCE = Path(__file__).resolve().parents[1] / "source" / "attention"


def without_docstrings(node):
    node = ast.parse(ast.unparse(node)).body[0]  # a copy
    for inner in ast.walk(node):
        body = getattr(inner, "body", None)
        if (
            isinstance(inner, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            inner.body = body[1:] or [ast.Pass()]
    return ast.dump(node)


def notebook_definitions():
    """{name: (notebook, def node)} for every top-level def/class in the source notebooks' code cells."""
    found = {}
    for notebook in NOTEBOOKS:
        nb = nbformat.read(SOURCE / f"{notebook}.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue  # IPython syntax in a demo cell
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    found[node.name] = (notebook, node)
    return found


DEFINITIONS = notebook_definitions()


@pytest.mark.parametrize("name", solutions.__all__)
def test_notebook_code_is_the_reference_code(name):
    reference = getattr(solutions, name)
    assert name in DEFINITIONS, f"{name} is in solutions/ but defined in no source notebook"
    notebook, node = DEFINITIONS[name]
    reference_node = ast.parse(inspect.getsource(reference)).body[0]
    assert without_docstrings(node) == without_docstrings(reference_node), (
        f"{name} in {notebook}.ipynb differs from solutions/: edit solutions/ first, then copy it into the notebook"
    )
