"""The no-answers proof: the built student kit, installed alone into a fresh venv, gives the release notebooks
their feedback and holds nothing that computes an answer.

One venv per session (tests/student_kit_env.py: python -m venv, no system site-packages, so the project is invisible
there; torch and numpy from uv's cache (no matplotlib), pinned by constraints.txt; then the built kit with
--no-deps). Its python runs tests/student_kit_driver/run_in_kit.py from a temporary folder, never from the checkout.
"""

import ast
import json
import re
import subprocess
import warnings
from pathlib import Path

import nbformat
import pytest
import torch
from kit_race import failures, run_setters
from student_kit_env import clean_environment

from attnkit import solutions
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES, of_notebook
from autograder.course.variants import attention

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "student_kit_driver" / "run_in_kit.py"
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
# One mistake per notebook, written into the solved code: (notebook, exercise, text, replacement, misconception).
BUGS = (
    ("01_attention_without_weights", "softmax_naive", "return torch.exp(x) / torch.exp(x).sum(dim=0)",
     "return x / x.sum(dim=0)", "normalised_without_exp"),
    ("02_trainable_self_attention", "self_attention_v2", "keys.shape[-1] ** 0.5, dim=-1)",
     "keys.shape[-1] ** 0.5, dim=0)", "softmax_wrong_dim"),
    ("03_causal_attention", "causal_mask", "dtype=torch.bool), diagonal=1)", "dtype=torch.bool), diagonal=0)",
     "mask_includes_diagonal"),
    ("04_multi_head_attention", "multi_head_attention", "keys.shape[-1] ** 0.5, dim=-1)",
     "keys.shape[-1] ** 0.5, dim=-2)", "softmax_wrong_dim"),
)


@pytest.fixture(scope="module")
def kit(student_kit_venv):
    return student_kit_venv.python, student_kit_venv.package, student_kit_venv.scratch


def in_kit(kit, *arguments):
    python, _, scratch = kit
    completed = subprocess.run([str(python), str(DRIVER), *map(str, arguments)], capture_output=True, text=True,
                               env={**clean_environment(), "ATTNKIT_LANG": "en"}, cwd=scratch, timeout=600)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed


def solved_code(notebook):
    """{grade_id: code} of the source notebook's solution cells, without nbgrader's markers."""
    cells = nbformat.read(REPO / "source" / "attention" / f"{notebook}.ipynb", as_version=4).cells
    return {cell.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in cell.source.splitlines() if line.strip() not in MARKERS)
        for cell in cells if cell.metadata.get("nbgrader", {}).get("solution")}


def release_cells(notebook, replace=None):
    """The release notebook's code cells, each solution cell replaced by the solved code (`replace` edits it)."""
    solved = solved_code(notebook)
    cells = []
    for cell in nbformat.read(REPO / "release" / "attention" / f"{notebook}.ipynb", as_version=4).cells:
        if cell.cell_type != "code":
            continue
        nbgrader = cell.metadata.get("nbgrader", {})
        source = solved[nbgrader["grade_id"]] if nbgrader.get("solution") else cell.source
        if replace and nbgrader.get("grade_id") == replace[0]:
            assert replace[1] in source, f"{replace[0]}: {replace[1]!r} is no longer in the solved code"
            source = source.replace(replace[1], replace[2])
        cells.append(source)
    return cells


def check_outputs(report, notebook):
    """{exercise id: printed feedback} of the notebook's check cells."""
    outputs = {}
    for entry in report[notebook]:
        match = re.match(r"Checks for (.+?) — [✔✘] ", entry["stdout"])
        if match:
            title = match.group(1)
            exercise = next(e for e in of_notebook(notebook) if e.title["en"] == title)
            outputs.setdefault(exercise.id, "")
            outputs[exercise.id] += entry["stdout"]
    return outputs


def run_notebooks(kit, tmp_path, notebooks):
    source, out = tmp_path / "cells.json", tmp_path / "report.json"
    source.write_text(json.dumps(notebooks))
    in_kit(kit, "cells", source, out)
    return json.loads(out.read_text())


def test_solved_notebooks_pass_every_public_check(kit, tmp_path):
    names = sorted({exercise.notebook for exercise in EXERCISES})
    report = run_notebooks(kit, tmp_path, {name: release_cells(name) for name in names})
    for name in names:
        errors = [entry["error"] for entry in report[name] if entry["error"]]
        assert not errors, f"{name}: {errors}"
        outputs = check_outputs(report, name)
        assert set(outputs) == {exercise.id for exercise in of_notebook(name)}, name
        for exercise_id, text in outputs.items():
            assert "✘" not in text and "✔" in text, f"{exercise_id}:\n{text}"


@pytest.mark.parametrize("bug", BUGS, ids=[bug[1] for bug in BUGS])
def test_buggy_code_fails_its_check_and_names_the_mistake_on_the_second_run(kit, tmp_path, bug):
    notebook, exercise_id, text, replacement, misconception = bug
    cells = release_cells(notebook, (f"solution_{exercise_id}", text, replacement))
    check_at = next(index for index, source in enumerate(cells) if f'check("{exercise_id}"' in source)
    cells.insert(check_at + 1, cells[check_at])  # the student runs the check cell again without changing the code
    feedback = check_outputs(run_notebooks(kit, tmp_path, {notebook: cells}), notebook)[exercise_id]
    first, second = feedback.split("Checks for ")[1:]
    name = MISCONCEPTIONS_BY_ID[misconception].name["en"]
    assert "✘" in first and name not in first and "» the reproduced mistake and a hint" in first, first
    assert name in second, second


def test_release_notebooks_as_handed_out_say_not_implemented(kit, tmp_path):
    name = "03_causal_attention"
    cells = [cell.source for cell in nbformat.read(REPO / "release" / "attention" / f"{name}.ipynb",
                                                    as_version=4).cells if cell.cell_type == "code"]
    feedback = check_outputs(run_notebooks(kit, tmp_path, {name: cells}), name)
    assert feedback and all("not implemented yet" in text for text in feedback.values())


def test_reference_hidden_checks_and_variants_are_not_importable(kit, tmp_path):
    out = tmp_path / "imports.json"
    in_kit(kit, "imports", out)
    found = json.loads(out.read_text())
    assert found.pop("autograder") is True
    assert not any(found.values()), found


def statements(tree):
    """ast.unparse of every statement in every function of a module, one string each."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for statement in node.body:
                found.add(ast.unparse(statement))
    return found


def reference_bodies():
    """{function: [statements]} of every function in solutions/, docstrings left out."""
    bodies = {}
    for path in sorted((REPO / "solutions").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                bodies[f"{path.stem}.{node.name}"] = [ast.unparse(statement) for statement in body]
    return bodies


def squeezed(text):
    return re.sub(r"\s+", "", text)


def handed_out():
    """(statements, whitespace-free text) of what the release notebooks give every student anyway: the given
    code (constructors, imports) and the notes' own text."""
    found, text = set(), ""
    for path in (REPO / "release" / "attention").glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            text += squeezed(cell.source)
            if cell.cell_type == "code":
                try:
                    found |= statements(ast.parse(cell.source))
                except SyntaxError:
                    continue
    return found, text


def test_kit_files_hold_no_reference_function_body(kit):
    _, package, _ = kit
    files = sorted(path for path in package.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    assert any(path.name == "vectors.json" for path in files)
    kit_statements, kit_text = set(), ""
    for path in files:
        text = path.read_text(encoding="utf-8")
        kit_text += squeezed(text)
        if path.suffix == ".py":
            kit_statements |= statements(ast.parse(text))
    given_statements, given_text = handed_out()
    checked = 0
    for function, body in reference_bodies().items():
        # The whole body anywhere in the kit, unless the notebooks hand it out as given code (attention_scores);
        # then every line of it that the notebooks do not hand out anyway.
        whole = squeezed("".join(body))
        assert whole in given_text or whole not in kit_text, function
        for statement in body:
            if statement in given_statements or squeezed(statement) in given_text or len(statement) <= 20:
                continue
            checked += 1
            assert statement not in kit_statements, f"{function}: {statement}"
            assert squeezed(statement) not in kit_text, f"{function}: {statement}"
    assert checked > 20  # most of the reference is checked line by line


def argument_sets():
    """Inputs the kit never stored, and every reference function's output on them."""
    generator = torch.Generator().manual_seed(2026)

    def randn(*shape):
        return torch.randn(*shape, generator=generator)

    weights = {f"{layer}.weight": randn(6, 3 if layer != "out_proj" else 6) for layer in
               ("W_query", "W_key", "W_value", "out_proj")}
    weights["out_proj.bias"] = randn(6)
    sets = [(randn(7),), (randn(5, 6),), (randn(5, 6), -1), (randn(5, 6), 0), (9,),
            (torch.softmax(randn(2, 5, 5), dim=-1),), (randn(2, 5, 5),), (randn(2, 5, 6), 2), (randn(2, 3, 5, 4),),
            (randn(2, 5, 3), weights), (randn(5, 3), weights)]
    exported = (getattr(solutions, name) for name in solutions.__all__)
    functions = [value for value in exported if not isinstance(value, type)]
    references = []
    for arguments in sets:
        outputs = []
        for function in [*functions, attention]:
            try:
                with warnings.catch_warnings():  # e.g. .T on a 3-D input: these arguments are not its own
                    warnings.simplefilter("ignore")
                    result = function(*arguments)
            except Exception:  # noqa: BLE001 - a reference that does not take these arguments
                continue
            if isinstance(result, torch.Tensor):
                outputs.append((function.__name__, result))
        references.append(outputs)
    return sets, references


def test_no_kit_callable_computes_a_reference_output(kit, tmp_path):
    sets, references = argument_sets()
    assert sum(len(outputs) for outputs in references) >= 10  # the references do answer these inputs
    torch.save(sets, tmp_path / "arguments.pt")
    in_kit(kit, "callables", tmp_path / "arguments.pt", tmp_path / "outputs.pt")
    outputs = torch.load(tmp_path / "outputs.pt", weights_only=True)
    assert int(outputs.pop("__callables__")) > 50  # every function and class of the kit was tried
    for key, output in outputs.items():
        index = int(key.rsplit("#", 1)[1])
        for name, expected in references[index]:
            answered = (output.shape == expected.shape and output.dtype == expected.dtype
                        and torch.allclose(output.double(), expected.double(), equal_nan=True))
            assert not answered, f"{key.rsplit('#', 1)[0]} returns {name}'s output on argument set {index}"


def test_torch_setters_right_after_importing_check_always_work(kit):
    # As tests/test_kit_never_races.py, with the kit as a student installs it.
    python, _, scratch = kit
    runs = run_setters(python, "from autograder import check", 8, cwd=scratch,
                       env={**clean_environment(), "ATTNKIT_LANG": "en"})
    bad = failures(runs)
    assert not bad, f"{len(bad)} of 8 runs failed; first: {bad[0].stdout!r}\n{bad[0].stderr[-3000:]}"
