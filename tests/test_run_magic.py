"""Magics that run code run in the sandbox (issue 40, item 7): `%run` of a notebook or a .py handed in beside the
notebook runs in the grading child, as IPython runs it; every magic that is skipped says so.

In-process (the stand-in shell and autograder.isolation.run_magic on a temporary folder): IPython's semantics of
%run (a notebook's cells in the notebook's namespace; a .py in a fresh `__main__` whose names join it; -i, -n, -e,
-m, sys.argv), and the attacks: a path out of the folder (`..`, a classmate's, /etc/passwd, the solutions), a link
(to a file outside or inside), a hard link, a folder, a %run of itself, unknown flags. The skipped magics
(`!cmd`, `%%bash`, `%load`, `%pip`, `%cd`, `get_ipython().run_line_magic(...)`...) are recorded.

Through both graders: the learner's notebook whose first cell is `%run ./00_setup.ipynb` (with a helper .py run by
its own `%run`) gets full marks from `attnkit grade` and from `nbgrader autograde` (SandboxedExecute, which grades
each notebook beside the folder it stages, the student's other notebooks in it: autograded/ holds the graded notebooks
only, so generate_feedback works), the attacks fail their cell in the sandbox and are noted, and a skipped magic is
noted under its cell.
"""

import io
import json
import os
import sys
from contextlib import redirect_stderr
from pathlib import Path

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations import nbgrader_course
from autograder.isolation.cells import UsageError, compile_cell
from autograder.isolation.limits import Limits
from autograder.isolation.run_magic import parse
from autograder.isolation.shell import ShellStandIn

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)


def _notebook_json(*sources):
    return json.dumps(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources]))


@pytest.fixture
def shell(tmp_path):
    root = tmp_path / "student"
    root.mkdir()
    namespace = {"__name__": "__main__"}
    stand_in = ShellStandIn(namespace, root)
    namespace["get_ipython"] = lambda: stand_in
    return stand_in, root, namespace


# --- IPython's semantics ---------------------------------------------------------------------------------------------


def test_a_notebook_runs_its_code_cells_in_order_in_the_notebook_s_namespace(shell):
    stand_in, root, namespace = shell
    namespace["seen_by_setup"] = 41
    (root / "00_setup.ipynb").write_text(_notebook_json("import math\nanswer = seen_by_setup + 1",
                                                        "doubled = answer * 2\n%time tripled = answer * 3"))
    stand_in.run_line_magic("run", "./00_setup.ipynb")
    assert (namespace["answer"], namespace["doubled"], namespace["tripled"]) == (42, 84, 126)
    assert "math" in namespace and "__file__" not in namespace


def test_a_notebook_stops_at_its_first_error_and_fails_the_cell(shell):
    stand_in, root, namespace = shell
    (root / "setup.ipynb").write_text(_notebook_json("first = 1", "1 / 0", "never = 1"))
    with pytest.raises(ZeroDivisionError):
        stand_in.run_line_magic("run", "setup.ipynb")
    assert namespace["first"] == 1 and "never" not in namespace


def test_a_python_file_runs_in_a_fresh_main_and_its_names_join_the_notebook(shell):
    stand_in, root, namespace = shell
    namespace["private"] = "the notebook's"
    (root / "helper.py").write_text("import sys\nname = __name__\nargs = sys.argv[1:]\n"
                                    "sees_notebook = 'private' in globals()\n")
    stand_in.run_line_magic("run", "helper.py --scale 2")
    assert namespace["name"] == "__main__" and namespace["args"] == ["--scale", "2"]
    assert namespace["sees_notebook"] is False and namespace["__name__"] == "__main__"
    stand_in.run_line_magic("run", "-n helper")  # -n: named after the file; ".py" found as IPython finds it
    assert namespace["name"] == "helper"
    stand_in.run_line_magic("run", "-i helper.py")  # -i: in the notebook's own namespace
    assert namespace["sees_notebook"] is True
    assert sys.argv[1:] != ["--scale", "2"]


def test_an_error_in_a_python_file_is_shown_and_the_cell_goes_on_as_in_ipython(shell):
    stand_in, root, namespace = shell
    (root / "broken.py").write_text("before = 1\nraise ValueError('in the helper')\n")
    (root / "exits.py").write_text("import sys\nsys.exit(3)\n")
    shown = io.StringIO()
    with redirect_stderr(shown):
        stand_in.run_line_magic("run", "broken.py")
        stand_in.run_line_magic("run", "exits.py")
        stand_in.run_line_magic("run", "-e exits.py")
    assert namespace["before"] == 1
    assert shown.getvalue().splitlines() == ["%run broken.py: ValueError: in the helper",
                                             "%run exits.py: exited with 3"]


def test_run_m_runs_a_module_handed_in_and_no_other(shell):
    stand_in, root, namespace = shell
    (root / "tools").mkdir()
    (root / "tools" / "__main__.py").write_text("from_tools = True\n")
    stand_in.run_line_magic("run", "-m tools")
    assert namespace["from_tools"] is True
    for module in ("json.tool", "autograder.cli"):  # installed modules are not the student's files
        with pytest.raises(UsageError, match="no such file handed in"):
            stand_in.run_line_magic("run", f"-m {module}")


@pytest.mark.parametrize(("line", "flags", "target", "arguments"), [
    ("-i -e setup.py a 'b c'", {"i", "e"}, "setup.py", ("a", "b c")),
    ("-dt -N3 x.py", {"d", "t"}, "x.py", ()),
    ("-p x.py", {"p"}, "x.py", ()),
])
def test_run_options_are_read_as_ipython_reads_them(line, flags, target, arguments):
    request = parse(line)
    assert (request.flags, request.target, request.arguments) == (flags, target, arguments)


@pytest.mark.parametrize(("line", "message"), [("", "at least a filename"), ("-q x.py", "option -q not recognized"),
                                               ("-m", "requires an argument"), ("'unclosed", "No closing quotation")])
def test_a_run_line_ipython_would_refuse_is_refused(shell, line, message):
    with pytest.raises(UsageError, match=message):
        shell[0].run_line_magic("run", line)


# --- attacks: nothing but the files handed in, never twice at once ---------------------------------------------------


def test_paths_out_of_the_folder_are_refused(shell, tmp_path):
    stand_in, _root, namespace = shell
    classmate = tmp_path / "other_student"
    classmate.mkdir()
    (classmate / "x.py").write_text("stolen = True\n")
    solutions = Path(__file__).resolve().parents[1] / "solutions"
    for target in ("../other_student/x.py", str(classmate / "x.py"), "/etc/passwd", "~/x.py",
                   str(next(solutions.glob("*.py"))), "sub/../../other_student/x.py"):
        with pytest.raises(UsageError, match="only the files handed in|no such file"):
            stand_in.run_line_magic("run", target)
    assert "stolen" not in namespace


def test_links_hard_links_and_folders_are_refused(shell, tmp_path):
    stand_in, root, namespace = shell
    (tmp_path / "outside.py").write_text("outside = True\n")
    (root / "inside.py").write_text("inside = True\n")
    (root / "to_outside.py").symlink_to(tmp_path / "outside.py")
    (root / "to_inside.py").symlink_to(root / "inside.py")
    (root / "linked_folder").symlink_to(tmp_path, target_is_directory=True)
    os.link(tmp_path / "outside.py", root / "hard.py")
    (root / "folder.py").mkdir()
    os.mkfifo(root / "pipe.py")  # opening it must not wait for a writer
    for target, message in (("to_outside.py", "a link"), ("to_inside.py", "a link"), ("linked_folder/outside.py",
                            "a link"), ("hard.py", "hard link"), ("folder.py", "not a regular file"),
                            ("pipe.py", "not a regular file"), ("inside.py/x.py", "Not a directory")):
        with pytest.raises(UsageError, match=message):
            stand_in.run_line_magic("run", target)
    assert "outside" not in namespace and "inside" not in namespace


def test_a_notebook_that_runs_itself_is_not_run_again(shell):
    stand_in, root, namespace = shell
    (root / "loop.ipynb").write_text(_notebook_json("count = globals().get('count', 0) + 1", "%run loop.ipynb"))
    (root / "a.py").write_text("get_ipython().run_line_magic('run', 'b.py')\n")
    (root / "b.py").write_text("get_ipython().run_line_magic('run', 'a.py')\n")
    with pytest.raises(UsageError, match="already running"):
        stand_in.run_line_magic("run", "loop.ipynb")
    assert namespace["count"] == 1
    shown = io.StringIO()
    with redirect_stderr(shown):  # in a .py, shown and the cell goes on, as any error there
        stand_in.run_line_magic("run", "a.py")
    assert "already running" in shown.getvalue()


# --- magics that are skipped say so ----------------------------------------------------------------------------------


def test_every_skipped_magic_is_recorded_and_the_harmless_ones_are_not(shell):
    stand_in, _root, namespace = shell
    for source in ("!ls /", "files = !ls", "%%bash\necho hi", "%load helper.py", "%pip install numpy", "%cd /",
                   "%env SECRET=1", "get_ipython().run_line_magic('cd', '/tmp')", "get_ipython().ex('1')",
                   "%matplotlib inline", "%config InlineBackend.figure_format = 'svg'", "%autoreload 2"):
        exec(compile_cell(source, "<test>"), namespace)  # noqa: S102 - the test's own code
    skipped, more = stand_in.take_skipped()
    assert skipped == ["!ls /", "!ls", "%%bash", "%load helper.py", "%pip install numpy", "%cd /", "%env SECRET=1",
                       "%cd /tmp", "get_ipython().ex(...)"]
    assert more == 0 and stand_in.take_skipped() == ([], 0)


# --- through both graders ---------------------------------------------------------------------------------------------

ATTACKS = {  # an extra cell of the learner's each: what it tries, and what its cell's note must say
    "%run ../../other_student/attention/x.py": "only the files handed in",
    "%run /etc/passwd": "only the files handed in",
    "%run -m json.tool": "no such file handed in",
    "%run ./01_attention_without_weights.ipynb": "already running",  # the graded notebook itself
    "%run loop.ipynb": "already running",  # a notebook whose cell runs it again
    "!cat /etc/passwd": "!cat /etc/passwd: not run while grading",
    "%%bash\ncat /etc/passwd": "%%bash: not run while grading",
    "%load ../../other_student/attention/x.py": "%load ../../other_student/attention/x.py: not run while grading",
    "get_ipython().run_line_magic('run', '/etc/passwd')": "only the files handed in",
}


def _source_of(notebook, grade_id):
    return next(cell.source for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _hand_in_the_learner(submitted, repo_root):
    """The learner whose notebook's first cell is `%run ./00_setup.ipynb`: two answers call helpers defined there
    and in the helpers.py it runs in turn (without %run: NameErrors, 7 of 18 points); then the attacks, one a cell."""
    source = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "solution_softmax_naive":
            cell.source = "def softmax_naive(x):\n    return naive_from_helpers(x)\n"
        elif grade_id == "solution_softmax_stable":
            cell.source = "def softmax_stable(x, dim=-1):\n    return stable_from_setup(x, dim)\n"
    notebook.cells.insert(0, nbformat.v4.new_code_cell("%run ./00_setup.ipynb"))
    notebook.cells.extend(nbformat.v4.new_code_cell(attack) for attack in ATTACKS)
    folder = submitted / "learner" / "attention"
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    setup = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# My set-up"),
        nbformat.v4.new_code_cell("import torch\n%matplotlib inline\n%run helpers.py"),
        nbformat.v4.new_code_cell(_source_of(source, "solution_softmax_stable").replace(
            "def softmax_stable(", "def stable_from_setup("))])
    (folder / "00_setup.ipynb").write_text(json.dumps(setup), encoding="utf-8")
    (folder / "loop.ipynb").write_text(_notebook_json("looped = True", "%run loop.ipynb"), encoding="utf-8")
    (folder / "helpers.py").write_text("import torch\n\n" + _source_of(source, "solution_softmax_naive").replace(
        "def softmax_naive(", "def naive_from_helpers("), encoding="utf-8")
    classmate = submitted / "other_student" / "attention"
    classmate.mkdir(parents=True)
    (classmate / f"{NB01}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes())
    (classmate / "x.py").write_text("raise SystemExit('the classmate s file ran in the learner s child')\n")
    return len(notebook.cells) - len(ATTACKS)  # the first attack's cell index


def _attack_notes(notes, first_attack):
    """{attack: [notes of its cell]}"""
    return {attack: [note for note in notes if note.startswith(f"cell {first_attack + offset}:")]
            for offset, attack in enumerate(ATTACKS)}


def test_attnkit_grade_runs_the_learner_s_setup_and_refuses_the_attacks(tmp_path, repo_root):
    first_attack = _hand_in_the_learner(tmp_path / "submitted", repo_root)
    summary = classroom.grade_class(tmp_path / "submitted", tmp_path / "out", Options(limits=Limits(timeout=10)))
    learner = next(document for document in summary.documents if document["student_id"] == "learner")
    notes = learner["notebooks"][0]["notes"]
    assert learner["score"] == NB01_POINTS, notes
    assert not any("NameError" in note or "matplotlib" in note for note in notes), notes
    for attack, cell_notes in _attack_notes(notes, first_attack).items():
        assert len(cell_notes) == 1 and ATTACKS[attack] in cell_notes[0], (attack, cell_notes)
    assert not any("classmate" in note for note in notes)


@pytest.mark.slow
def test_nbgrader_autograde_runs_the_learner_s_setup_and_shows_the_skipped_magics(tmp_path, repo_root):
    course = nbgrader_course.make_course(tmp_path / "course", repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write("c.SandboxedExecute.timeout = 10\n")
    nbgrader_course.generate_release(course)
    first_attack = _hand_in_the_learner(course / "submitted", repo_root)
    for name in NOTEBOOKS[1:]:  # nbgrader grades the whole assignment: the others as released, untouched
        (course / "submitted" / "learner" / "attention" / f"{name}.ipynb").write_bytes(
            (repo_root / "release" / "attention" / f"{name}.ipynb").read_bytes())
    nbgrader_course.autograde(course, ["learner"])
    assert nbgrader_course.read_scores(course)["learner"][NB01] == NB01_POINTS
    # 00_setup.ipynb and loop.ipynb ran from the staged folder: nbgrader's autograded/ holds the graded notebooks only,
    # so generate_feedback (which takes each notebook there for a submitted one) succeeds
    graded = course / "autograded" / "learner" / "attention"
    assert sorted(path.name for path in graded.rglob("*.ipynb")) == sorted(f"{name}.ipynb" for name in NOTEBOOKS)
    nbgrader_course.generate_feedback(course)
    assert (course / "feedback" / "learner" / "attention" / f"{NB01}.html").is_file()
    cells = nbformat.read(course / "autograded" / "learner" / "attention" / f"{NB01}.ipynb", as_version=4).cells
    assert not any("NameError" in json.dumps(cell.get("outputs", [])) for cell in cells)
    for offset, (attack, said) in enumerate(ATTACKS.items()):
        shown = json.dumps(cells[first_attack + offset].outputs)
        assert said.replace("'", "") in shown.replace("'", ""), (attack, shown)
