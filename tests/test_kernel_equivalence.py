"""Grading runs a notebook as Jupyter runs it (issue 57): every notebook of the course's test sets runs in a real
ipykernel (jupyter_client) and in the grading child (`attnkit grade`'s pipeline), and each cell must define the same
names (for tensors the same values) and raise the same exception type; a cell may differ only where the sandbox
refused what it asked for (a program, the network) and said so under it.

The notebooks: the solved and released ones, the class of devtools/class_fixtures.py (every honest submission), the
adversarial catalogue's cases that look honest (tests/adversarial_cases.py: errors, exits, interrupts, warnings, deleted
or retyped cells, IPython syntax), the %run learner of tests/test_run_magic.py, and messy but honest layouts, each
checked against a kernel here: `from __future__ import annotations` with `Tensor` imported under `if TYPE_CHECKING:`,
`_` (the last result), `%%capture captured`, the setup line of `%%timeit -n 3 -r 1 x = ...`, `%run -i`, `%run` of a
notebook whose names later cells use, `%run $script`, and `torch.compile` (refused: the uncompiled function is graded).
The messy layouts also get full marks from `attnkit grade` (`test_messy_but_honest_layouts_get_full_marks`: the
stand-in for IPython that graded before took points or left NameError notes on each).

How a cell is compared: after every cell of the notebook an observer cell prints a digest of the namespace (each
name's type, a tensor's dtype, shape and bytes hashed); it runs in both, so it shifts `In` and the execution count
alike. The kernel runs the cells the grader runs (graded cells left out, given cells restored: the plan), with the
grader's own statements dropped as the grading child drops them (`GraderStatements`), torch imported first and on one
thread, as in the zygote. The kernel runs unconfined on this machine: only notebooks that are safe to run are here.
"""

import base64
import concurrent.futures
import json
import os
import queue
import shutil
import zlib
from dataclasses import dataclass, field

import nbformat
import pytest
from adversarial_cases import cases
from adversarial_cases import write_submission as write_case

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import plan_notebook
from autograder.isolation.refusals import Refusal, because
from devtools.class_fixtures import CLASS, build_notebook

pytestmark = pytest.mark.slow

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
MARK = "@@namespace@@"
DIGEST = f"""
import base64, hashlib, json, sys, zlib
torch = sys.modules.get("torch")
def digest(value):
    kind = type(value).__qualname__
    if torch is None or not isinstance(value, torch.Tensor):
        return kind
    try:
        data = value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    except Exception as error:
        data = repr(error).encode()
    shape = repr((value.dtype, tuple(value.shape))).encode()
    return kind + ":" + hashlib.sha256(shape + data).hexdigest()[:16]
def bookkeeping(name):  # IPython's _iN and _N: one per cell, the same on both sides by construction
    return name[:2] == "_i" and name[2:].isdigit() or name[:1] == "_" and name[1:].isdigit()
names = {{name: digest(value) for name, value in list(namespace.items()) if not bookkeeping(name)}}
print({MARK!r} + base64.b64encode(zlib.compress(json.dumps(names, sort_keys=True).encode())).decode())
"""
OBSERVER = f"exec({DIGEST!r}, {{'namespace': globals()}})"  # an expression whose value is None: `_` is untouched
KERNEL_SET_UP = ("import torch as _torch\n_torch.set_num_threads(1)\ndel _torch\n"
                 "from autograder.isolation.grading_shell import GraderStatements as _Grader\n"
                 "get_ipython().ast_transformers.append(_Grader())\ndel _Grader\n")
# The kernel's own classes of the same names: its exit() asks the front end to stop the kernel, a shell's the shell.
KERNEL_OWN = frozenset({"exit", "quit"})
CELL_SECONDS = 120
KERNELS_AT_ONCE = 2
REFUSED_WORDS = tuple(because(refusal.value) for refusal in Refusal)
SAFE_ADVERSARIAL = (  # cases of tests/adversarial_cases.py that an unconfined kernel may run: nothing loops, exits
    "honest-full", "syntax_error-partial", "exception_in_cell-full", "exception_in_function-zero_for_that_exercise",
    "sys_exit-full", "keyboard_interrupt_in_cell-full", "system_exit_in_function-zero_for_that_exercise",
    "keyboard_interrupt_in_function-zero_for_that_exercise", "stderr_warnings-full", "deleted_graded_cell-full",
    "duplicated_graded_cell-full", "retyped_graded_cell-full", "retyped_solution_cell-restored_full",
    "edited_given_cell-restored_full", "missing_function-zero_for_that_exercise",
    "wrong_signature-zero_for_that_exercise", "numpy_instead_of_tensor-zero_for_that_exercise",
    "hardcoded_notes_output-below_full", "ipython_syntax-full",
    "forward_zeroes_its_own_weights-zero_for_that_exercise",
)


# --- the messy but honest layouts (NB01, solved, with the student's own habits) ----------------------------------

SETUP_NOTEBOOK = "00_setup.ipynb"
HELPERS = ("import torch\n\n\ndef helper_softmax(x, dim=-1):\n"
           "    shifted = x - x.max(dim=dim, keepdim=True).values\n"
           "    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True)\n")
SEEN_INPUTS = "seen_inputs = inputs.shape  # -i: the notebook's own names are there\n"
STABLE_FROM_HELPER = "def softmax_stable(x, dim=-1):\n    return helper_softmax(x, dim)\n"


@dataclass(frozen=True)
class Layout:
    """A messy but honest NB01: `cells` inserted after the given cell named (None: first), solutions replaced, files
    handed in beside it."""

    cells: tuple[tuple[str | None, str], ...] = ()
    solutions: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


LAYOUTS = {
    "future-annotations": Layout(
        cells=((None, "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                      "    from torch import Tensor\n"),),
        solutions={"solution_softmax_naive": "def softmax_naive(x: Tensor) -> Tensor:\n"
                                              "    return torch.exp(x) / torch.exp(x).sum(dim=0)\n",
                   "solution_context_vectors": "def context_vectors(inputs: Tensor) -> Tensor:\n"
                                                "    weights = torch.softmax(attention_scores(inputs), dim=-1)\n"
                                                "    return weights @ inputs\n"}),
    "last-result": Layout(cells=(("solution_softmax_naive", "softmax_naive(scores_2)"),
                                 ("solution_softmax_naive", "weights_seen = _\nprint(weights_seen.sum())"))),
    "capture": Layout(cells=(("solution_softmax_naive", "%%capture captured\nprint(softmax_naive(scores_2))"),
                             ("solution_softmax_naive", "shown = captured.stdout"))),
    "timeit-setup": Layout(cells=(("solution_softmax_stable",
                                   "%%timeit -n 3 -r 1 x = torch.rand(4, 3)\nsoftmax_stable(x)"),)),
    "run-i": Layout(cells=(("given_inputs", "%run -i helpers.py"),),
                    solutions={"solution_softmax_stable": STABLE_FROM_HELPER},
                    files={"helpers.py": SEEN_INPUTS + HELPERS}),
    "run-notebook": Layout(
        cells=(("given_inputs", f"%run ./{SETUP_NOTEBOOK}"),),
        solutions={"solution_softmax_stable": STABLE_FROM_HELPER},
        files={SETUP_NOTEBOOK: json.dumps(nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_markdown_cell("# My set-up"), nbformat.v4.new_code_cell("import torch\n%matplotlib inline"),
            nbformat.v4.new_code_cell(HELPERS)]))}),
    "run-variable": Layout(cells=(("given_inputs", "script = 'helpers.py'\n%run $script --quiet"),),
                           solutions={"solution_softmax_stable": STABLE_FROM_HELPER}, files={"helpers.py": HELPERS}),
    "torch-compile": Layout(cells=(("solution_softmax_naive", "fast_naive = torch.compile(softmax_naive)"),),
                            solutions={"solution_context_vectors": "@torch.compile\ndef context_vectors(inputs):\n"
                                       "    return torch.softmax(attention_scores(inputs), dim=-1) @ inputs\n"}),
}
NEEDS_A_COMPILER = ("torch-compile",)  # a kernel compiles for minutes (with a C compiler) or fails: not compared


def _grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def write_layout(name, layout, folder, repo_root):
    """The layout's NB01 and files in `folder` (made)."""
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    for cell in notebook.cells:
        if _grade_id(cell) in layout.solutions:
            cell.source = layout.solutions[_grade_id(cell)]
    for offset, (after, code) in enumerate(layout.cells):
        grade_ids = [_grade_id(cell) for cell in notebook.cells]
        index = 0 if after is None else grade_ids.index(after) + 1 + offset
        notebook.cells.insert(index, nbformat.v4.new_code_cell(code))
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    for file_name, text in layout.files.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return folder / f"{NB01}.ipynb"


# --- the notebooks, observed ------------------------------------------------------------------------------------


def _test_sets(root, repo_root):
    """{id: the notebook's path} of every notebook compared, each in a folder of its own with its files."""
    notebooks = {}
    for base in ("source", "release"):
        for name in NOTEBOOKS:
            folder = root / f"{base}-{name}"
            folder.mkdir()
            shutil.copy(repo_root / base / "attention" / f"{name}.ipynb", folder)
            notebooks[f"{base}/{name}"] = folder / f"{name}.ipynb"
    for submission in CLASS:
        if submission.honest and submission.notebook:
            folder = root / f"class-{submission.student_id}"
            folder.mkdir()
            path = folder / f"{submission.notebook}.ipynb"
            path.write_text(json.dumps(build_notebook(submission, submission.notebook, repo_root)), encoding="utf-8")
            notebooks[f"class/{submission.student_id}"] = path
    context = {"repo": str(repo_root), "submitted": str(root / "adversarial"), "out": str(root / "out")}
    for case in cases():
        if case.name in SAFE_ADVERSARIAL:
            folder = write_case(case, root / "adversarial", repo_root / "source" / "attention", context)
            notebooks[f"adversarial/{case.name}"] = folder / f"{case.notebook}.ipynb"
    for name, layout in LAYOUTS.items():
        notebooks[f"messy/{name}"] = write_layout(name, layout, root / f"messy-{name}", repo_root)
    return notebooks


def _observed(path):
    """The notebook with an observer cell after each code cell (written over the file); the plan's cell steps."""
    notebook = nbformat.read(path, as_version=4)
    cells = []
    for cell in notebook.cells:
        cells.append(cell)
        if cell.cell_type == "code":
            cells.append(nbformat.v4.new_code_cell(OBSERVER))
    notebook.cells = cells
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return [step for step in plan_notebook(path).steps if step.kind == "cell"]


@dataclass
class Run:
    """What one side saw: per observed cell index, the exception type it raised (None: none) or, for an observer
    cell, the namespace digest; the refusal notes of the grading child's cells."""

    errors: dict[int, str | None] = field(default_factory=dict)
    names: dict[int, dict[str, str]] = field(default_factory=dict)
    refused: dict[int, list[str]] = field(default_factory=dict)


def _digest(printed):
    for line in printed.splitlines():
        if line.startswith(MARK):
            return json.loads(zlib.decompress(base64.b64decode(line[len(MARK):])))
    return None


def run_in_kernel(path, steps):
    """Each step's cell in a fresh ipykernel started in the notebook's folder (a copy), as Jupyter runs it."""
    from jupyter_client.manager import start_new_kernel

    folder = path.parent
    environment = {**os.environ, "HOME": str(folder), "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(folder), env=environment, startup_timeout=180)
    run = Run()
    try:
        client.execute_interactive(KERNEL_SET_UP, silent=True, store_history=False, timeout=CELL_SECONDS)
        for step in steps:
            printed = []

            def keep(message, printed=printed):
                if message["msg_type"] == "stream":
                    printed.append(message["content"]["text"])

            reply = client.execute_interactive(step.source, timeout=CELL_SECONDS, output_hook=keep, allow_stdin=False)
            content = reply["content"]
            run.errors[step.index] = content.get("ename") if content["status"] == "error" else None
            digest = _digest("".join(printed))
            if digest is not None:
                run.names[step.index] = digest
    except (TimeoutError, queue.Empty):
        run.errors[-1] = "the kernel did not answer in time"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return run


def run_in_the_grading_child(paths):
    """{path: Run} from `attnkit grade`'s pipeline (the zygote, the confined child, its notes)."""
    results = grade_notebooks([NotebookInput(path, path) for path in paths], Options(limits=Limits(timeout=60))).results
    runs = {}
    for result in results:
        run = Run()
        for index, printed in result.cell_outputs.items():
            digest = _digest(printed)
            if digest is not None:
                run.names[index] = digest
        for index, notes in result.cell_notes.items():
            for note in notes:
                said = note.split(": ", 1)[1]
                if said.endswith(REFUSED_WORDS):
                    run.refused.setdefault(index, []).append(note)
                else:
                    run.errors[index] = said.split(": ", 1)[0] if ": " in said else said
        runs[result.key] = run
    return runs


def differences(steps, kernel, child):
    """What differs, cell by cell: an exception type, or, in the observer after a cell, a name's presence, type or
    tensor value. A cell the sandbox refused (its note under it) may differ: what differs after it is excused from
    then on."""
    found, excused, cell = [], set(), None
    for step in steps:
        index = step.index
        if kernel.errors.get(index) != child.errors.get(index) and index not in child.refused:
            found.append(f"cell {index}: kernel raised {kernel.errors.get(index)}, grading {child.errors.get(index)}"
                         f" ({step.source[:60]!r})")
        if step.source != OBSERVER:
            cell = index
            continue
        before, after = kernel.names.get(index, {}), child.names.get(index, {})
        names = (before.keys() | after.keys()) - KERNEL_OWN
        differing = {name for name in names if before.get(name) != after.get(name)}
        if cell in child.refused:
            excused |= differing
        differing -= excused
        if differing:
            found.append(f"after cell {cell}: " + ", ".join(
                f"{name}: kernel {before.get(name)}, grading {after.get(name)}" for name in sorted(differing)))
    if -1 in kernel.errors:
        found.append(str(kernel.errors[-1]))
    return found


@pytest.fixture(scope="module")
def compared(tmp_path_factory, repo_root):
    """{notebook id: (steps, kernel Run, grading Run)} for every notebook of the test sets."""
    notebooks = _test_sets(tmp_path_factory.mktemp("equivalence"), repo_root)
    steps = {key: _observed(path) for key, path in notebooks.items()}
    with concurrent.futures.ThreadPoolExecutor(KERNELS_AT_ONCE) as pool:
        in_kernels = {key: pool.submit(run_in_kernel, path, steps[key]) for key, path in notebooks.items()
                      if key.removeprefix("messy/") not in NEEDS_A_COMPILER}
        graded = run_in_the_grading_child(list(notebooks.values()))
        return {key: (steps[key], in_kernels[key].result() if key in in_kernels else Run(), graded[path])
                for key, path in notebooks.items()}


NOTEBOOK_IDS = ([f"{base}/{name}" for base in ("source", "release") for name in NOTEBOOKS]
                + [f"class/{sub.student_id}" for sub in CLASS if sub.honest and sub.notebook]
                + [f"adversarial/{name}" for name in SAFE_ADVERSARIAL]
                + [f"messy/{name}" for name in LAYOUTS if name not in NEEDS_A_COMPILER])


@pytest.mark.parametrize("notebook_id", NOTEBOOK_IDS)
def test_each_cell_defines_and_raises_what_it_does_in_a_kernel(compared, notebook_id):
    steps, kernel, child = compared[notebook_id]
    assert kernel.names, "the kernel ran no observer"
    assert child.names, "the grading child ran no observer"
    assert differences(steps, kernel, child) == []


def test_a_refused_program_differs_only_with_its_note(compared):
    """The control: the IPython-syntax case runs `!ls /` and `listing = !ls`; the kernel runs them and sets
    `_exit_code`, the sandbox refuses them: that difference is excused by the refusal noted under the cell, and only
    by it."""
    steps, kernel, child = compared["adversarial/ipython_syntax-full"]
    ((_cell, notes),) = child.refused.items()
    assert [note.split(": ")[1] for note in notes] == ["!ls /", "!ls"]
    assert differences(steps, kernel, child) == []
    unexcused = differences(steps, kernel, Run(child.errors, child.names, {}))
    assert any("_exit_code: kernel int, grading None" in found for found in unexcused), unexcused


def test_torch_compile_is_refused_with_its_note_and_the_uncompiled_function_is_graded(compared):
    steps, _kernel, child = compared["messy/torch-compile"]
    notes = [note for notes in child.refused.values() for note in notes]
    assert len(notes) == 2 and all(note.endswith(because(Refusal.COMPILER.value)) for note in notes), notes
    assert not child.errors, child.errors


# --- the layouts through attnkit grade -----------------------------------------------------------------------------


def test_messy_but_honest_layouts_get_full_marks(tmp_path, repo_root):
    for name, layout in LAYOUTS.items():
        write_layout(name, layout, tmp_path / "submitted" / name / "attention", repo_root)
    summary = classroom.grade_class(tmp_path / "submitted", tmp_path / "out", Options(limits=Limits(timeout=60)))
    for document in summary.documents:
        notebook = document["notebooks"][0]
        assert notebook["score"] == NB01_POINTS, (document["student_id"], notebook["notes"])
        assert not [note for note in notebook["notes"] if "Error" in note], (document["student_id"], notebook["notes"])
