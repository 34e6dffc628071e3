"""The contributor guide's "Add an exercise" and "Add a notebook" (docs/contributor-guide.md), followed to the
letter in a temporary copy of the checkout (its tests and devtools too: the guide's steps are held by tests).

An exercise is one folder, `autograder/course/<notebook package>/ex<N>_<name>/` (its probe, judge and declaration),
plus the notebook's cells and the reference beside the notebook's others in `solutions/`. The copy gets:
  - a new exercise in notebook 01, `scaled_scores` (one query's scores divided by sqrt(d)), whose judge names a
    mistake, `scores_left_unscaled`: an entry of the table of mistakes, reproduced by a wrong output beside its
    expect, and a student-style mutant in tests/mutants/ with its row in the suite's MISTAKES;
  - a fifth notebook, `05_attention_entropy`, with one exercise, `attention_entropy` (each row's entropy): a notebook
    package (its `__init__.py` names the notebook), one exercise folder, its reference module and its source
    notebook;
  - the six points the two exercises add, taken from notebook 01's other checks.
The copy's own tests are run before the points are taken and the mutant written (the course's total and the
mutation coverage fail, naming what is missing) and after (they pass, and so does the mutant's row). Then, in a
fresh interpreter that imports the copy: the catalogue knows both exercises with the points of their checks, in
course order; `check(...)` runs their public checks; the release regenerated from source/ (what `make release`
runs) holds the new notebook without its solution; and `attnkit grade` grades a class that handed in both, full
marks for the notebooks' own solutions, less for a wrong one, and the mistake named.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from project_copy import IGNORED, copy_checkout, installed

from autograder.course.exercises import NOTEBOOKS
from autograder.isolation.protected import checkout_root

FIRST_NOTEBOOK = NOTEBOOKS[0]
NEW_NOTEBOOK, NEW_PACKAGE = "05_attention_entropy", "n05_attention_entropy"
MISTAKE = "scores_left_unscaled"  # the mistake scaled_scores' judge names


def folder_files(*, exercise_id: str, notebook_package: str, minutes: int, probe_input: str,
                 title: dict[str, str], mistakes: str = "()") -> dict[str, str]:
    """The four files of one exercise folder: a public check on a fixed input, a hidden one on random inputs.
    `mistakes`: the source of a tuple of (mistake id, the reference with that mistake), which the judge names."""
    init = f'"""The exercise folder of {exercise_id} (added by tests/test_add_an_exercise.py)."""\n\n__all__ = []\n'
    probe = textwrap.dedent(f'''\
        """Probe of {exercise_id}: call the student's function on the case's input, return plain data."""

        from autograder.checking.probing import lookup, plain, rand

        __all__ = ["input_of", "probe"]

        def input_of(case):
            return rand(case["seed"], *case["shape"]){probe_input}


        def probe(namespace, case):
            return {{"output": plain(lookup(namespace, "{exercise_id}")(input_of(case)))}}
        ''')
    judge = textwrap.dedent(f'''\
        """Judge of {exercise_id}: the output against the reference's."""

        from autograder.checking.compare import compare

        __all__ = ["judge"]

        def judge(record, case, expectations):
            return compare(record["output"], expectations["output"], message_key="{exercise_id}.wrong",
                           variants=expectations["variants"])
        ''')
    module = f"autograder.course.{notebook_package}.ex1_{exercise_id}" if notebook_package == NEW_PACKAGE else \
        f"autograder.course.{notebook_package}.ex3_{exercise_id}"
    declaration = textwrap.dedent(f'''\
        """Checks of {exercise_id} (added by tests/test_add_an_exercise.py)."""

        from attnkit import solutions
        from autograder.checking.check_types import Check, Exercise
        from autograder.checking.expectations import Expectations
        from autograder.course.declaration import Declaration
        from autograder.course.{notebook_package} import NOTEBOOK
        from {module}.judge import judge
        from {module}.probe import input_of, probe

        __all__ = ["DECLARATION"]

        def cases_fixed(rng):
            return [{{"seed": 7, "shape": [4, 3]}}]


        def cases_random(rng):
            return [{{"seed": rng.randrange(2**31), "shape": [rng.randint(2, 9), rng.randint(2, 6)]}} for _ in range(3)]


        WRONG_OUTPUTS = {mistakes}


        def wrong_outputs(inputs):
            """The reference with each mistake the judge names, on the case's input."""
            return [(mistake, wrong(inputs)) for mistake, wrong in WRONG_OUTPUTS]


        def expect(record, case):
            inputs = input_of(case)
            return Expectations.computed(output=lambda: solutions.{exercise_id}(inputs),
                                         variants=lambda: wrong_outputs(inputs))


        DECLARATION = Declaration(
            exercises=(Exercise("{exercise_id}", NOTEBOOK, ("{exercise_id}",), {title!r}, minutes={minutes},
                                difficulty=1),),
            checks=(
                Check(id="{exercise_id}.fixed", exercise="{exercise_id}", points=1, hidden=False,
                      title={{"en": "{exercise_id} on a fixed input", "zh": "{exercise_id} 作用在固定输入上"}},
                      cases=cases_fixed, probe=probe, judge=judge, expect=expect),
                Check(id="{exercise_id}.random", exercise="{exercise_id}", points=2, hidden=True,
                      title={{"en": "{exercise_id} on random inputs", "zh": "{exercise_id} 作用在随机输入上"}},
                      cases=cases_random, probe=probe, judge=judge, expect=expect),
            ),
            messages={{"{exercise_id}.wrong": {{"en": "the output differs from the reference",
                                                "zh": "输出与参考答案不一致"}}}},
        )
        ''')
    return {"__init__.py": init, "probe.py": probe, "judge.py": judge, "declaration.py": declaration}


SCALED_SCORES = '''def scaled_scores(inputs):
    """The scores of the first token against every token, divided by sqrt(d) as attention does."""
    return inputs @ inputs[0] / inputs.shape[-1] ** 0.5
'''
ENTROPY = '''def attention_entropy(weights):
    """The entropy of each row of attention weights (a softmax of the row first): how spread out it is."""
    probabilities = torch.softmax(weights, dim=-1)
    return -(probabilities * probabilities.log()).sum(dim=-1)
'''
WRONG = {"scaled_scores": "def scaled_scores(inputs):\n    return inputs @ inputs[0]\n",
         "attention_entropy": "def attention_entropy(weights):\n"
                              "    return torch.softmax(weights, dim=-1).sum(dim=-1)\n"}
GRADED_POINTS = 3  # what each new exercise's checks add up to: 1 + 2
# Step 4: the points the two new exercises add, taken from notebook 01's other checks ({check id: points left}).
TAKEN = {"softmax_naive.random": (2, 1), "softmax_stable.random": (2, 1), "context_vectors.notes": (3, 1),
         "context_vectors.random": (3, 1)}  # {check id: (points before, points after)}
# Step 5: the mistake's entry, in the family of the scores' scale.
MISTAKE_ENTRY = f'''    mistake(
        "{MISTAKE}",
        exercises=("scaled_scores",),
        evidence=(Evidence.VARIANT,),
        question=("How large do the scores grow with the size of the vectors?",
                  "向量的维度变大时，分数会变得多大？"),
        name=("the scores left unscaled", "分数没有缩放"),
        hint=("dividing by the square root of the size keeps the scores' spread near 1",
              "除以维度的平方根，能让分数的分布范围保持在 1 左右"),
        change=("divide the scores by the square root of the vectors' size",
                "把分数除以向量维度的平方根"),
    ),
'''
# Step 6: the mistake as a student writes it, and its row in the suite of notebooks 01-02.
MUTANT = "\n\ndef scaled_scores_unscaled(inputs):\n    return inputs @ inputs[0]  # the dot products alone\n"
MUTANT_ROW = f'    ("scaled_scores", mutants.scaled_scores_unscaled, "scaled_scores.fixed", "{MISTAKE}"),\n'


def nbgrader_metadata(grade_id, *, solution=False, grade=False, locked=False, points=None):
    metadata = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
                "task": False}
    if points is not None:
        metadata["points"] = points
    return {"nbgrader": metadata}


def exercise_cells(exercise_id, reference):
    """The notebook's cells of one exercise: the solution between markers, the public check, the graded cell."""
    signature, _, body = reference.partition("\n")
    solution = f"{signature}\n    ### BEGIN SOLUTION\n{body.rstrip()}\n    ### END SOLUTION"
    graded = ("# Graded: hidden checks run here at grading time. / 评分：隐藏检查在评分时运行。\n"
              f'### BEGIN HIDDEN TESTS\nfrom autograder import grade\ngrade("{exercise_id}", {exercise_id})\n'
              "### END HIDDEN TESTS")
    return [
        nbformat.v4.new_code_cell(solution, metadata=nbgrader_metadata(f"solution_{exercise_id}", solution=True)),
        nbformat.v4.new_code_cell(f'from autograder import check\ncheck("{exercise_id}", {exercise_id})',
                                  metadata=nbgrader_metadata(f"check_{exercise_id}", locked=True)),
        nbformat.v4.new_code_cell(graded, metadata=nbgrader_metadata(f"test_{exercise_id}", grade=True, locked=True,
                                                                     points=GRADED_POINTS)),
    ]


def write_folder(copy, notebook_package, folder, files):
    target = copy / "autograder" / "course" / notebook_package / folder
    target.mkdir(parents=True)
    for name, text in files.items():
        (target / name).write_text(text, encoding="utf-8")


def export_reference(copy, module, names):
    """The reference's function in its notebook's module of solutions/, exported by the package."""
    init = copy / "solutions" / "__init__.py"
    lines = "".join(f"from attnkit.solutions.{module} import {name}\n" for name in names)
    exports = "".join(f'__all__.append("{name}")\n' for name in names)
    init.write_text(init.read_text(encoding="utf-8") + "\n" + lines + exports, encoding="utf-8")


def add_an_exercise(copy):
    """docs/contributor-guide.md "Add an exercise": the folder, the reference, the notebook's cells."""
    write_folder(copy, f"n{FIRST_NOTEBOOK}", "ex3_scaled_scores", folder_files(
        exercise_id="scaled_scores", notebook_package=f"n{FIRST_NOTEBOOK}", minutes=5,
        probe_input="", title={"en": "Scaled scores", "zh": "缩放后的分数"},
        mistakes=f'(("{MISTAKE}", lambda inputs: inputs @ inputs[0]),)'))
    with (copy / "solutions" / f"n{FIRST_NOTEBOOK}.py").open("a", encoding="utf-8") as module:
        module.write("\n\n" + SCALED_SCORES)
    export_reference(copy, f"n{FIRST_NOTEBOOK}", ["scaled_scores"])
    path = copy / "source" / "attention" / f"{FIRST_NOTEBOOK}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells += exercise_cells("scaled_scores", SCALED_SCORES)
    nbformat.write(notebook, path)


def replace_once(path, old, new):
    """`path` with its one `old` replaced by `new`: a step that finds the file other than the guide says fails."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: {old!r} found {text.count(old)} times"
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_the_mistake(copy):
    """Step 5: the mistake scaled_scores' judge names, an entry of the table of mistakes (its family's module)."""
    family = copy / "autograder" / "course" / "mistakes" / "scale.py"
    text = family.read_text(encoding="utf-8").rstrip()
    assert text.endswith(")"), "the family's MISTAKES tuple is no longer last in its module"
    family.write_text(text.removesuffix(")") + MISTAKE_ENTRY + ")\n", encoding="utf-8")


def take_points(copy):
    """Step 4: the checks that give up the new exercises' points, in their folders' declarations."""
    assert sum(before - after for before, after in TAKEN.values()) == 2 * GRADED_POINTS
    for check_id, (before, after) in TAKEN.items():
        exercise = check_id.split(".")[0]
        declarations = [path for path in (copy / "autograder" / "course" / f"n{FIRST_NOTEBOOK}").glob(
            "ex*/declaration.py") if f'id="{check_id}"' in path.read_text(encoding="utf-8")]
        assert len(declarations) == 1, (check_id, declarations)
        replace_once(declarations[0], f'id="{check_id}", exercise="{exercise}", points={before},',
                     f'id="{check_id}", exercise="{exercise}", points={after},')


def add_the_mutant(copy):
    """Step 6: the mutant in tests/mutants/ and its row in the suite's MISTAKES table."""
    with (copy / "tests" / "mutants" / "basics_self_attention.py").open("a", encoding="utf-8") as module:
        module.write(MUTANT)
    replace_once(copy / "tests" / "test_checks_basics_self_attention.py", "MISTAKES = [\n",
                 "MISTAKES = [\n" + MUTANT_ROW)


def add_a_notebook(copy):
    """The contributor guide's "Add a notebook": its package (the notebook's name), one exercise folder, its reference
    module and its source notebook (a title, the exercise's cells)."""
    package = copy / "autograder" / "course" / NEW_PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text(f'"""Notebook 05 (added by tests/test_add_an_exercise.py)."""\n\n'
                                         f'__all__ = ["NOTEBOOK"]\n\nNOTEBOOK = "{NEW_NOTEBOOK}"\n',
                                         encoding="utf-8")
    write_folder(copy, NEW_PACKAGE, "ex1_attention_entropy", folder_files(
        exercise_id="attention_entropy", notebook_package=NEW_PACKAGE, minutes=10,
        probe_input=" * 3.0", title={"en": "Attention entropy", "zh": "注意力的熵"}))
    (copy / "solutions" / f"{NEW_PACKAGE}.py").write_text(f'"""Notebook 05."""\n\nimport torch\n\n\n{ENTROPY}',
                                                          encoding="utf-8")
    export_reference(copy, NEW_PACKAGE, ["attention_entropy"])
    notebook = nbformat.v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3", "language": "python",
                                                                 "name": "python3"}})
    notebook.cells = [nbformat.v4.new_markdown_cell("# 05 · Attention entropy\n# 05 · 注意力的熵"),
                      nbformat.v4.new_code_cell("import torch"),
                      *exercise_cells("attention_entropy", ENTROPY)]
    notebook.cells[0]["id"] = "title"
    nbformat.write(notebook, copy / "source" / "attention" / f"{NEW_NOTEBOOK}.ipynb")


# Runs in the copy: both exercises as the course sees them, check(...) on the notebooks' solutions.
INSPECT = textwrap.dedent('''
    import contextlib, io, json
    import torch
    import autograder
    from autograder import check
    from autograder.course import catalog
    from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS, of_notebook
    from autograder.course.module_contract.declaration import DECLARATION as CONTRACT
    from attnkit import solutions

    printed = {}
    for exercise_id in ("scaled_scores", "attention_entropy"):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            check(exercise_id, getattr(solutions, exercise_id))
        printed[exercise_id] = out.getvalue()
    print(json.dumps({
        "package": autograder.__file__, "notebooks": list(NOTEBOOKS), "printed": printed,
        "exercises": {e: [EXERCISES_BY_ID[e].notebook, EXERCISES_BY_ID[e].points]
                      for e in ("scaled_scores", "attention_entropy")},
        "first_notebook": [e.id for e in of_notebook(NOTEBOOKS[0])],
        "catalogue": [check.exercise for check in catalog.CHECKS],
        "first_contract_check": next(index for index, check in enumerate(catalog.CHECKS)
                                     if check.id.removesuffix(".preview") == CONTRACT.checks[0].id)}))
''')


def run_in(copy, *command, timeout=600):
    """Run python in the copy: its own autograder first on the path, then its reference as installed (setup.py
    installs solutions/ as attnkit.solutions), so neither is the checkout's."""
    run = python_in(copy, *command, timeout=timeout)
    assert run.returncode == 0, (command, run.stdout[-3000:], run.stderr[-3000:])
    return run.stdout


def python_in(copy, *command, timeout=600):
    environment = {**installed_environment(copy), "ATTNKIT_LANG": "en",
                   "COLUMNS": "1000",  # pytest's summary lines whole, their failure's first line included
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, *command], cwd=copy, env=environment, capture_output=True, text=True,
                          timeout=timeout)


def installed_environment(copy):
    target = copy.parent / "installed"
    environment = installed(copy, target) if not target.exists() else dict(os.environ)
    return {**environment, "PYTHONPATH": os.pathsep.join((str(copy), str(target)))}


# The copy's own tests that hold steps 4 to 6: the course's total, the graded cells' points, the mutation coverage
# and the new mutant's row.
POINTS_TOTAL = "tests/test_release.py::test_points_total_100"
GRADED_CELLS = "tests/test_release.py::test_graded_cells_match_exercises"
COVERAGE = "tests/test_mutation_coverage.py::test_every_misconception_has_a_mutant_that_is_named"
MUTANT_TEST = ("tests/test_checks_basics_self_attention.py::test_mistake_loses_points_and_is_named"
               "[scaled_scores_unscaled-fixed]")
PUBLIC_NAMES = "tests/test_public_names.py::test_the_project_imports_only_what_a_module_exports"
ALL_DECLARED = "tests/test_public_names.py::test_every_public_module_declares_all"


def pytest_in(copy, *node_ids):
    """{node id: "PASSED" or "FAILED" and its first line of failure} of the copy's own tests, run in the copy
    (one process, no plugins the checkout's configuration may add)."""
    run = python_in(copy, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-o", "addopts=", *node_ids)
    outcomes = {}
    for line in run.stdout.splitlines():
        found = re.match(r"(PASSED|FAILED|ERROR) (\S+)(?: - (.*))?$", line)
        if found:
            outcomes[found[2]] = f"{found[1]} {found[3] or ''}".strip()
    assert set(outcomes) == set(node_ids), (run.stdout[-3000:], run.stderr[-3000:])
    return outcomes


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """Steps 1 to 3 and 5 of "Add an exercise" (and "Add a notebook"): everything but the points and the mutant."""
    copy = copy_checkout(checkout_root(), tmp_path_factory.mktemp("checkout") / "attnkit")
    for folder in ("tests", "devtools"):  # the copy's own tests hold the guide's steps
        shutil.copytree(checkout_root() / folder, copy / folder, ignore=IGNORED)
    add_an_exercise(copy)
    add_the_mistake(copy)
    add_a_notebook(copy)
    installed_environment(copy)  # installed once the folder, the reference and the notebooks are in
    return copy


@pytest.fixture(scope="module")
def half_done(copy):
    """The copy's tests before steps 4 and 6: the points not taken, the mistake without a mutant."""
    return pytest_in(copy, POINTS_TOTAL, COVERAGE)


@pytest.fixture(scope="module")
def followed(copy, half_done):
    """Steps 4, 6 and 7: the points taken, the mutant written, the release regenerated (what `make release`
    runs); then the copy's tests again."""
    take_points(copy)
    add_the_mutant(copy)
    run_in(copy, "-m", "autograder.integrations.nbgrader_course", "release")
    return pytest_in(copy, POINTS_TOTAL, GRADED_CELLS, COVERAGE, MUTANT_TEST, PUBLIC_NAMES, ALL_DECLARED)


@pytest.fixture(scope="module")
def seen(copy, followed):
    return json.loads(run_in(copy, "-c", INSPECT).strip().splitlines()[-1])


@pytest.mark.slow
def test_the_copy_knows_the_new_exercise_and_notebook_in_course_order(copy, seen):
    assert Path(seen["package"]).resolve().is_relative_to(copy.resolve()), "the copy's autograder was not the one used"
    assert seen["notebooks"] == [*NOTEBOOKS, NEW_NOTEBOOK]
    assert seen["exercises"] == {"scaled_scores": [FIRST_NOTEBOOK, GRADED_POINTS],
                                 "attention_entropy": [NEW_NOTEBOOK, GRADED_POINTS]}
    # Last of its notebook, as its folder's number says; the new notebook's checks come before the module contract.
    assert seen["first_notebook"][-1] == "scaled_scores"
    catalogue = seen["catalogue"]
    first_other = next(index for index, exercise in enumerate(catalogue) if exercise not in seen["first_notebook"])
    assert catalogue[first_other - 2:first_other] == ["scaled_scores", "scaled_scores"]  # public, then preview
    entropy = [index for index, exercise in enumerate(catalogue) if exercise == "attention_entropy"]
    assert entropy == list(range(seen["first_contract_check"] - 3, seen["first_contract_check"]))  # 2 + preview


@pytest.mark.slow
def test_check_runs_the_new_public_checks(seen):
    for exercise_id in ("scaled_scores", "attention_entropy"):
        printed = seen["printed"][exercise_id]
        assert f"{exercise_id} on a fixed input" in printed and "✘" not in printed, printed


@pytest.mark.slow
def test_the_course_totals_100_only_once_the_points_are_taken_from_other_checks(half_done, followed):
    # Two exercises of 3 points each on a course of 100: the course's own test says so, with the total.
    assert half_done[POINTS_TOTAL].startswith("FAILED") and "106 == 100" in half_done[POINTS_TOTAL], half_done
    assert followed[POINTS_TOTAL] == "PASSED", followed
    assert followed[GRADED_CELLS] == "PASSED", followed  # make release wrote the lowered points into the cells


@pytest.mark.slow
def test_the_mistake_is_covered_only_once_its_mutant_is_written(half_done, followed):
    assert half_done[COVERAGE].startswith("FAILED") and MISTAKE in half_done[COVERAGE], half_done
    assert followed[COVERAGE] == "PASSED", followed
    assert followed[MUTANT_TEST] == "PASSED", followed  # it loses points and is named, on every seed


@pytest.mark.slow
def test_the_new_folders_modules_declare_what_they_export(followed):
    assert followed[ALL_DECLARED] == "PASSED" and followed[PUBLIC_NAMES] == "PASSED", followed


@pytest.mark.slow
def test_the_release_and_a_grading_take_the_new_notebook(copy, followed, tmp_path):
    released = nbformat.read(copy / "release" / "attention" / f"{NEW_NOTEBOOK}.ipynb", as_version=4)
    sources = "\n".join(cell.source for cell in released.cells)
    assert 'check("attention_entropy", attention_entropy)' in sources
    assert "probabilities.log()" not in sources and "BEGIN HIDDEN TESTS" not in sources
    assert any(cell.metadata.get("nbgrader", {}).get("points") == GRADED_POINTS for cell in released.cells)
    # A class: one student hands in both notebooks solved, another both wrong.
    submitted = tmp_path / "submitted"
    for student, code in (("solved", None), ("wrong", WRONG)):
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        for notebook_name in (FIRST_NOTEBOOK, NEW_NOTEBOOK):
            notebook = nbformat.read(copy / "source" / "attention" / f"{notebook_name}.ipynb", as_version=4)
            for cell in notebook.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
                if code and grade_id.removeprefix("solution_") in code:
                    cell.source = code[grade_id.removeprefix("solution_")]
            nbformat.write(notebook, folder / f"{notebook_name}.ipynb")
    out = tmp_path / "out"
    run_in(copy, "-m", "autograder.cli", "grade", str(submitted), "--out", str(out), "--timeout", "60", timeout=900)
    records = {student: json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
               for student in ("solved", "wrong")}
    scores: dict[str, dict[str, float]] = {}
    named: dict[str, set[str | None]] = {}
    for student, record in records.items():
        for notebook in record["notebooks"]:
            for check in notebook["checks"]:
                by_exercise = scores.setdefault(student, {})
                by_exercise[check["exercise"]] = by_exercise.get(check["exercise"], 0) + check["score"]
                if check["exercise"] == "scaled_scores":
                    named.setdefault(student, set()).add(check["misconception"])
    for exercise_id in ("scaled_scores", "attention_entropy"):
        assert scores["solved"][exercise_id] == GRADED_POINTS
        assert scores["wrong"][exercise_id] < GRADED_POINTS
    assert named == {"solved": {None}, "wrong": {MISTAKE}}  # the grading names the mistake on both checks
    # The points taken: the solved student still has the whole course's, on notebook 01's lowered checks.
    assert scores["solved"]["softmax_naive"] == 5 - 1 and scores["solved"]["context_vectors"] == 7 - 4
