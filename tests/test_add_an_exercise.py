"""README "Add an exercise", followed to the letter in a temporary copy of the checkout: three places, then graded.

The copy gets a toy exercise, `scaled_scores` (one query's attention scores scaled by sqrt(d)), in exactly the three
places the README names: the reference in solutions/, one declaration next to its checks in a new module of the
notebook's package under autograder/course/checks/ with its probe in autograder/course/probes/ and its judge in
autograder/course/judges/, and its cells in the
source notebook. A fresh interpreter that imports the copy must then know the exercise with the points of its
checks, last in its notebook as its cells are, match the notebook's graded cell, and grade it: full marks for the
notebook's own solution cell, less for a wrong one.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from project_copy import copy_checkout, installed

from autograder.course.exercises import NOTEBOOKS
from autograder.isolation.protected import checkout_root

NOTEBOOK = NOTEBOOKS[0]

REFERENCE = '''

def scaled_scores(inputs, query_index):
    """The scores of one query against every token, divided by sqrt(d) as attention does."""
    return inputs @ inputs[query_index] / inputs.shape[-1] ** 0.5
'''

PROBES = '''"""Probes of the toy exercise scaled_scores (added by tests/test_add_an_exercise.py)."""

from autograder.checking.probing import lookup, plain, rand
from autograder.course.probes.inputs import notes_inputs


def inputs_of(case):
    return notes_inputs() if case.get("input") == "notes" else rand(case["seed"], case["tokens"], case["d"])


def probe(namespace, case):
    return {"output": plain(lookup(namespace, "scaled_scores")(inputs_of(case), case["query"]))}
'''

JUDGES = '''"""Judge of the toy exercise scaled_scores (added by tests/test_add_an_exercise.py)."""

from autograder.checking.compare import compare


def judge(data, case, expected):
    return compare(data["output"], expected["output"], message_key="scaled_scores.wrong")
'''

DECLARATION = '''"""Checks for the toy exercise scaled_scores (added by tests/test_add_an_exercise.py)."""

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.expectations import Expectations
from autograder.course.judges.scaled_scores import judge
from autograder.course.probes.scaled_scores import inputs_of, probe

NOTEBOOK = "{notebook}"

EXERCISES = (
    Exercise("scaled_scores", NOTEBOOK, ("scaled_scores",), {{"en": "Scaled scores", "zh": "缩放后的分数"}},
             minutes=5, difficulty=1),
)


def cases_notes(rng):
    return [{{"input": "notes", "query": 1}}]


def cases_random(rng):
    return [{{"seed": rng.randrange(2**31), "tokens": rng.randint(2, 9), "d": rng.randint(2, 6), "query": 0}}
            for _ in range(3)]


def expect(case, data):
    return Expectations.computed(output=lambda: solutions.scaled_scores(inputs_of(case), case["query"]))


CHECKS = (
    Check("scaled_scores.notes", "scaled_scores", 1, False, cases_notes, probe, judge, expect),
    Check("scaled_scores.random", "scaled_scores", 2, True, cases_random, probe, judge, expect),
)

MESSAGES = {{
    "scaled_scores.notes.title": {{"en": "scaled_scores on the notes' sentence",
                                  "zh": "在笔记的句子上的 scaled_scores"}},
    "scaled_scores.random.title": {{"en": "scaled_scores on random inputs", "zh": "在随机输入上的 scaled_scores"}},
    "scaled_scores.wrong": {{"en": "the scores differ from inputs @ query / sqrt(d)",
                            "zh": "分数与 inputs @ query / sqrt(d) 不一致"}},
}}
'''

SOLUTION_CELL = '''def scaled_scores(inputs, query_index):
    """The scores of one query against every token, divided by sqrt(d) as attention does."""
    ### BEGIN SOLUTION
    return inputs @ inputs[query_index] / inputs.shape[-1] ** 0.5
    ### END SOLUTION'''
CHECK_CELL = 'from autograder import check\ncheck("scaled_scores", scaled_scores)'
GRADED_CELL = ('# Graded: hidden checks run here at grading time. / 评分：隐藏检查在评分时运行。\n'
               '### BEGIN HIDDEN TESTS\nfrom autograder import grade\ngrade("scaled_scores", scaled_scores)\n'
               '### END HIDDEN TESTS')
GRADED_POINTS = 3  # what the checks above add up to: 1 + 2


def nbgrader_metadata(grade_id, *, solution=False, grade=False, locked=False, points=None):
    metadata = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
                "task": False}
    if points is not None:
        metadata["points"] = points
    return {"nbgrader": metadata}


def add_the_exercise(copy):
    """The README's three places, nothing else."""
    # 1. The reference, in solutions/ (the notebook's module, exported by the package).
    with (copy / "solutions" / "basics.py").open("a", encoding="utf-8") as module:
        module.write(REFERENCE)
    init = copy / "solutions" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    text = text.replace("from attnkit.solutions.basics import (\n",
                        "from attnkit.solutions.basics import (\n    scaled_scores,\n")
    init.write_text(text.replace("__all__ = [\n", '__all__ = [\n    "scaled_scores",\n'), encoding="utf-8")
    # 2. One declaration next to its checks, in a new module of the notebook's package numbered after the last:
    # exercise, checks, bilingual messages, what the reference expects; its probe and judge beside the others'.
    package = copy / "autograder" / "course" / "checks" / f"n{NOTEBOOK}"
    number = len(list(package.glob("ex*_*.py"))) + 1
    (package / f"ex{number}_scaled_scores.py").write_text(DECLARATION.format(notebook=NOTEBOOK), encoding="utf-8")
    (copy / "autograder" / "course" / "probes" / "scaled_scores.py").write_text(PROBES, encoding="utf-8")
    (copy / "autograder" / "course" / "judges" / "scaled_scores.py").write_text(JUDGES, encoding="utf-8")
    # 3. Its cells in the source notebook: the solution, the public check, the graded cell with the points.
    path = copy / "source" / "attention" / f"{NOTEBOOK}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells += [
        nbformat.v4.new_code_cell(SOLUTION_CELL, metadata=nbgrader_metadata("solution_scaled_scores", solution=True)),
        nbformat.v4.new_code_cell(CHECK_CELL, metadata=nbgrader_metadata("check_scaled_scores", locked=True)),
        nbformat.v4.new_code_cell(GRADED_CELL, metadata=nbgrader_metadata(
            "test_scaled_scores", grade=True, locked=True, points=GRADED_POINTS)),
    ]
    nbformat.write(notebook, path)


# Runs in the copy: the exercise as the course sees it, the notebook's graded cell, and two gradings of it.
INSPECT = textwrap.dedent('''
    import ast, json, sys
    import nbformat
    import autograder
    from autograder.course.exercises import EXERCISES_BY_ID, of_notebook
    from autograder.course import catalog

    def run_cell(source, namespace):
        """Run a cell as Jupyter does; return its last expression's value (the graded cell's score)."""
        tree = ast.parse(source)
        last = tree.body.pop()
        exec(compile(tree, "<cell>", "exec"), namespace)
        return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)

    exercise = EXERCISES_BY_ID["scaled_scores"]
    notebook = nbformat.read(sys.argv[1], as_version=4)
    cells = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in notebook.cells}
    namespace = {}
    exec("import torch", namespace)
    exec(cells["solution_scaled_scores"].source, namespace)
    solved = run_cell(cells["test_scaled_scores"].source, namespace)
    exec("def scaled_scores(inputs, query_index):\\n    return inputs @ inputs[query_index]", namespace)
    unscaled = run_cell(cells["test_scaled_scores"].source, namespace)
    from autograder.integrations.student_kit.build import vectors_document
    kit_checks = [stored["id"] for stored in vectors_document()["checks"]]
    print(json.dumps({"package": autograder.__file__, "kit_checks": kit_checks,
                      "notebook": exercise.notebook, "points": exercise.points,
                      "graded_cell_points": cells["test_scaled_scores"].metadata["nbgrader"]["points"],
                      "checks": [check.id for check in catalog.checks_of("scaled_scores")],
                      "in_notebook": [exercise.id for exercise in of_notebook(exercise.notebook)],
                      "catalogue": [check.exercise for check in catalog.CHECKS],
                      "solved": solved, "unscaled": unscaled}))
''')


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    copy = copy_checkout(checkout_root(), tmp_path_factory.mktemp("checkout") / "attnkit")
    add_the_exercise(copy)
    return copy


@pytest.mark.slow
def test_a_new_exercise_in_three_places_is_known_and_graded(copy):
    # The copy installed as a wheel would be (its reference is attnkit.solutions): a fresh interpreter imports it.
    environment = {**installed(copy, copy.parent / "installed"), "ATTNKIT_LANG": "en"}
    notebook = copy / "source" / "attention" / f"{NOTEBOOK}.ipynb"
    run = subprocess.run([sys.executable, "-c", INSPECT, str(notebook)], cwd=copy, env=environment,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(seen["package"]).resolve().is_relative_to(copy.parent.resolve()), \
        "the copy's autograder was not the one used"
    assert seen["notebook"] == NOTEBOOK
    assert seen["checks"] == ["scaled_scores.notes", "scaled_scores.random"]
    # The public check reaches the student kit with no line written for the kit: one declaration is enough.
    assert "scaled_scores.notes" in seen["kit_checks"] and "scaled_scores.random" not in seen["kit_checks"]
    # Last of its notebook, as its cells are: after the notebook's other exercises' checks, before the next notebook's.
    assert seen["in_notebook"][-1] == "scaled_scores" and len(seen["in_notebook"]) > 1
    catalogue = seen["catalogue"]  # the first notebook's checks come first
    first_other = next(index for index, exercise in enumerate(catalogue) if exercise not in seen["in_notebook"])
    assert catalogue[first_other - 2:first_other] == ["scaled_scores", "scaled_scores"]
    assert "scaled_scores" not in catalogue[first_other:]
    assert seen["points"] == seen["graded_cell_points"] == GRADED_POINTS
    assert seen["solved"] == GRADED_POINTS
    assert seen["unscaled"] < GRADED_POINTS
