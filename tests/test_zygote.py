"""The process that runs student code never holds the reference, a judge, the checks or `variants`.

Proved the way a student with a weekend would look: from inside a probe call, the student's function takes an
inventory of everything it can reach (every object of `gc.get_objects()` after `gc.unfreeze()`, every subclass of
nn.Module, `sys.modules`, the frames above it, the environment) and reports it through its exception message, which
comes back in the grading record. The same spy run in this process, where the reference is loaded, must find it: the
inventory can fail.
"""

import ast
import json
import os
import socket
import subprocess
import sys

import nbformat
import pytest

from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.isolation import zygote
from autograder.isolation.limits import Limits
from autograder.isolation.withholding import WITHHELD, Withholder, protected_lines
from autograder.running.runner import run_exercise

NOTEBOOK = "01_attention_without_weights"
SECRET_VARIABLE = "JUPYTERHUB_API_TOKEN"
SECRET_VALUE = "hub-token-that-must-not-leave-the-grader"

# The student's function: an inventory of what it can reach, raised as the message of a RuntimeError.
SPY = '''
import gc, json, os, sys, types, weakref
import torch

FORBIDDEN_MODULES = ("attnkit.solutions", "autograder.course.variants", "autograder.course.catalog",
                     "autograder.course.exercises", "autograder.course.registry", "autograder.course.messages",
                     "autograder.running.runner", "autograder.checking.judging",
                     "autograder.checking.compare", "autograder.checking.results", "autograder.running.rendering",
                     "autograder.running.in_notebook")
FORBIDDEN_FILES = ("/solutions/", "/declaration.py", "/judge.py", "/course/variants.py", "/running/runner.py",
                   "/checking/judging.py", "/checking/compare.py")
FORBIDDEN_ROLES = (".declaration", ".judge")  # any exercise folder's declaration and judge modules


def forbidden_module(name):
    return isinstance(name, str) and (any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES)
                                      or name.startswith("autograder.course.") and name.endswith(FORBIDDEN_ROLES))


def forbidden_file(name):
    return isinstance(name, str) and any(part in name for part in FORBIDDEN_FILES)


def look_at(obj, found):
    if isinstance(obj, types.ModuleType):
        if forbidden_module(obj.__name__):
            found.add("module " + obj.__name__)
    elif isinstance(obj, (types.FunctionType, type)):
        if forbidden_module(getattr(obj, "__module__", None)):
            found.add("object " + obj.__module__ + "." + obj.__qualname__)
    elif isinstance(obj, types.CodeType):
        if forbidden_file(obj.co_filename):
            found.add("code " + obj.co_filename)


def inventory():
    found = set()
    gc.unfreeze()
    for obj in gc.get_objects():
        try:
            kind = type(obj)  # isinstance() on a dead weakref.proxy raises ReferenceError
        except ReferenceError:
            continue
        if kind is weakref.ProxyType or kind is weakref.CallableProxyType:
            continue
        try:
            look_at(obj, found)
        except Exception:  # another test's hostile class, in this process; in the child, anything is reported
            found.add("unreadable " + kind.__name__)
    pending = [torch.nn.Module]
    while pending:
        cls = pending.pop()
        if forbidden_module(cls.__module__):
            found.add("subclass " + cls.__module__ + "." + cls.__qualname__)
        pending.extend(cls.__subclasses__())
    found.update("sys.modules " + name for name in list(sys.modules) if forbidden_module(name))
    frame = sys._getframe()
    while frame is not None:
        if forbidden_module(frame.f_globals.get("__name__")) or forbidden_file(frame.f_code.co_filename):
            found.add("frame " + frame.f_code.co_filename)
        for value in list(frame.f_locals.values()):
            if forbidden_module(getattr(value, "__module__", None)):
                found.add("frame local " + repr(value)[:60])
        frame = frame.f_back
    try:
        from autograder.course import variants  # noqa: F401
        found.add("import variants")
    except ImportError:
        pass
    found.update("environment " + name for name in os.environ if name == "{secret_variable}")
    found.update("environment value" for value in os.environ.values() if "{secret_value}" in value)
    return sorted(found)


REPORTS = []  # kept for the in-process control, which reads it whole (the grading record cuts long messages)


def softmax_naive(x):
    REPORTS.append(inventory())
    raise RuntimeError("INVENTORY " + json.dumps(REPORTS[-1]) + " END")
'''


def spy_source():
    return SPY.replace("{secret_variable}", SECRET_VARIABLE).replace("{secret_value}", SECRET_VALUE)


def inventory_of(message):
    start = message.index("INVENTORY ") + len("INVENTORY ")
    return json.loads(message[start:message.index(" END", start)])


def notebook_with(repo_root, tmp_path, source):
    """The solved notebook 01 with `source` as the softmax_naive solution cell."""
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    cell = next(cell for cell in notebook.cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_softmax_naive")
    cell.source = source
    path = tmp_path / f"{NOTEBOOK}.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.fixture(scope="module")
def graded_spy(repo_root, tmp_path_factory):
    path = notebook_with(repo_root, tmp_path_factory.mktemp("spy"), spy_source())
    os.environ[SECRET_VARIABLE] = SECRET_VALUE  # as on a JupyterHub where the grader runs
    try:
        grading = grade_notebooks([NotebookInput("spy", path, NOTEBOOK)], Options(limits=Limits(timeout=20)))
    finally:
        del os.environ[SECRET_VARIABLE]
    return grading.results[0]


@pytest.mark.slow
def test_the_spy_sees_the_reference_where_it_is_loaded():
    # Negative control: in this process (the grader) the inventory is full, so an empty one below means something.
    namespace = {}
    exec(compile(spy_source(), "<spy>", "exec"), namespace)  # noqa: S102 - the test's own spy
    os.environ[SECRET_VARIABLE] = SECRET_VALUE
    try:
        results = run_exercise("softmax_naive", {"softmax_naive": namespace["softmax_naive"]})
    finally:
        del os.environ[SECRET_VARIABLE]
    assert "INVENTORY" in results[0].message
    found = namespace["REPORTS"][0]
    assert any(item.startswith("object attnkit.solutions.") for item in found), found
    assert any(item.startswith("module autograder.course.") and item.endswith(".declaration") for item in found), found
    assert any(item.startswith("frame ") for item in found), found
    assert "environment " + SECRET_VARIABLE in found and "import variants" in found


@pytest.mark.slow
def test_the_grading_child_holds_no_reference_judge_checks_or_grader_secret(graded_spy):
    # Hidden checks withhold exception details; the public one shows them, and the cell's own call is in the notes.
    messages = [check.message for check in graded_spy.checks if check.exercise == "softmax_naive" and not check.hidden]
    messages += [note for note in graded_spy.notes if "INVENTORY" in note]
    assert len(messages) >= 2 and all("INVENTORY" in message for message in messages), messages
    for message in messages:
        assert inventory_of(message) == [], message


@pytest.mark.slow
def test_other_exercises_are_graded_as_usual_beside_the_spy(graded_spy):
    scores = {}
    for check in graded_spy.checks:
        scores[check.exercise] = scores.get(check.exercise, 0) + check.score
    assert scores["softmax_naive"] == 0
    assert scores["softmax_stable"] == 6 and scores["context_vectors"] == 7


# --- what the child says ---------------------------------------------------------------------------------------

def _protected_line():
    """A line of the check modules' own text that no public file has (the test fails if there is none)."""
    lines = sorted(line for lines in protected_lines().by_prefix.values() for line in lines if "softmax" in line)
    assert lines
    return lines[0]


def _graded_with(repo_root, tmp_path, source):
    path = notebook_with(repo_root, tmp_path, source)
    [result] = grade_notebooks([NotebookInput("leak", path, NOTEBOOK)], Options(limits=Limits(timeout=20))).results
    return result


def test_a_message_that_repeats_protected_code_is_withheld(repo_root, tmp_path):
    line = _protected_line()
    # The line is rebuilt at run time, so the notebook's own code does not contain it.
    first, second = json.dumps(line[:10]), json.dumps(line[10:])
    result = _graded_with(repo_root, tmp_path, f"def softmax_naive(x):\n    raise ValueError({first} + {second})\n")
    texts = [check.message for check in result.checks] + list(result.notes)
    assert not any(line in text for text in texts)
    assert any(WITHHELD in text for text in texts), texts


def test_a_student_sees_their_own_line_even_when_the_solution_has_it(repo_root, tmp_path):
    line = _protected_line()
    result = _graded_with(repo_root, tmp_path, f"# {line}\ndef softmax_naive(x):\n    raise ValueError({line!r})\n")
    texts = [check.message for check in result.checks] + list(result.notes)
    assert any(line in text for text in texts) and not any(WITHHELD in text for text in texts), texts


def test_withholding_walks_every_string_of_an_event():
    line = _protected_line()
    withholder = Withholder(protected_lines(), ["def softmax_naive(x): ..."])
    event = {"event": "exercise", "records": {"c": [{"error": {"message": f"x {line} y", "line": "short"}}]}}
    assert withholder.event(event) == {"event": "exercise", "records": {"c": [{"error": {"message": WITHHELD,
                                                                                          "line": "short"}}]}}
    spaced = "  ".join(line.split(" "))  # other whitespace is no way around it
    assert withholder.text(spaced) == WITHHELD and withholder.text("an honest message of some length") != WITHHELD


def test_the_probe_side_imports_nothing_of_the_judge_side(repo_root):
    """Statically too: a probe module that imported a judge, the catalogue or the reference would bring it into
    the zygote (the inventory above would see it; this names the line)."""
    judge_side = ("attnkit.solutions", "autograder.course.variants", "autograder.course.catalog",
                  "autograder.course.exercises", "autograder.course.registry", "autograder.course.messages",
                  "autograder.running.runner", "autograder.checking.judging", "autograder.checking.compare",
                  "autograder.checking.results", "autograder.running.rendering", "autograder.running.in_notebook")
    probe_side = [*sorted((repo_root / "autograder" / "course").glob("**/probe.py")),
                  *sorted((repo_root / "autograder" / "course" / "shared").glob("*.py")),
                  *(repo_root / "autograder" / "isolation" / name for name in
                    ("zygote.py", "child_process.py", "child_task.py", "guards.py", "sandbox.py", "grading_shell.py",
                     "own_files.py", "refusals.py", "wire.py", "protected.py")),
                  repo_root / "autograder" / "checking" / "probing.py",
                  repo_root / "autograder" / "checking" / "torch_recorders.py"]
    found = []
    for path in probe_side:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}:{node.lineno} {name}" for name in names
                      if any(name == side or name.startswith(side + ".") for side in judge_side)
                      or name.startswith("autograder.course.") and name.endswith((".declaration", ".judge"))]
    assert not found


# --- a classmate's work --------------------------------------------------------------------------------------------

# The canary is written whole in the victim's notebook only; the scanner holds its two halves apart and looks for
# them side by side in its own memory, so its own code can never be what it finds. Its control marker is written
# whole in its own notebook: finding that proves the scan reads the memory the canary would be in.
CANARY_HEAD, CANARY_TAIL = "zq-classmate-", "canary-4711"
SCANNER = '''
import re
HEAD, TAIL, OWN = b"zq-classmate-", b"canary-4711", b"zq-ownmarker-"
CONTROL = "zq-ownmarker-canary-4711"


def regions():
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            path = fields[5] if len(fields) > 5 else ""
            if fields[1].startswith("r") and (not path or path in ("[heap]", "[stack]")):
                start, end = (int(part, 16) for part in fields[0].split("-"))
                yield start, end


def count(head):
    found = 0
    chunk = 1 << 24
    with open("/proc/self/mem", "rb", buffering=0) as memory:
        for start, end in regions():
            for offset in range(start, end, chunk):
                try:
                    memory.seek(offset)
                    data = memory.read(min(chunk + 64, end - offset))
                except OSError:
                    continue
                at = data.find(head)
                while at != -1:
                    if data[at + len(head):at + len(head) + len(TAIL)] == TAIL:
                        found += 1
                    at = data.find(head, at + 1)
    return found


raise RuntimeError(f"SCAN canary={count(HEAD)} control={count(OWN)} END")
'''


def _notebook_with_cell(repo_root, folder, code):
    """The solved notebook 01 with one more code cell after the given inputs."""
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NOTEBOOK}.ipynb", as_version=4)
    index = next(i for i, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs")
    notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(code))
    folder.mkdir()
    path = folder / f"{NOTEBOOK}.ipynb"
    nbformat.write(notebook, path)
    return path


def test_no_child_finds_a_classmates_cells_in_its_memory(repo_root, tmp_path):
    """The zygote never holds a task: a child graded after a classmate scans its own heap for the classmate's
    canary (every readable anonymous region, through /proc/self/mem) and finds nothing, while it does find a
    marker of its own notebook."""
    # A cell of some size, as a real solution is: small strings and large ones are freed differently.
    victim_cell = f"secret = {CANARY_HEAD + CANARY_TAIL!r}\n" + f"# {CANARY_HEAD + CANARY_TAIL} notes\n" * 2000
    victim = _notebook_with_cell(repo_root, tmp_path / "victim", victim_cell)
    scanner = _notebook_with_cell(repo_root, tmp_path / "scanner", SCANNER)
    inputs = [NotebookInput("victim", victim, NOTEBOOK), NotebookInput("scanner", scanner, NOTEBOOK)]
    grading = grade_notebooks(inputs, Options(limits=Limits(timeout=60, workers=1, budget_factor=3)))
    victim_result, scanner_result = grading.results
    assert victim_result.score == victim_result.max_score
    [report] = [note for note in scanner_result.notes if "SCAN " in note]
    assert "control=0 " not in report, report  # the scan does read the memory a classmate's cells would be in
    assert "canary=0 " in report, report


@pytest.mark.slow
def test_a_zygote_whose_grader_left_before_it_was_ready_exits_without_a_word():
    # A grader that refuses its input exits while the zygote it started early is still importing: the zygote finds
    # the channel closed when it says it is ready, and must go quietly (its stderr is the grader's).
    grader_end, zygote_end = socket.socketpair()
    with zygote_end:
        process = subprocess.Popen([sys.executable, "-m", zygote.ZYGOTE_MODULE, str(zygote_end.fileno())],
                                   pass_fds=(zygote_end.fileno(),), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
    grader_end.close()
    stdout, stderr = process.communicate(timeout=300)
    assert (process.returncode, stdout, stderr) == (0, "", "")
