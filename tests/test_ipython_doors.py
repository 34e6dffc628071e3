"""IPython's own shell in the grading child is a new door (issue 57): each magic and hook a student with a weekend
would try, from a notebook graded by `attnkit grade`.

One class run (NB01 only, one worker, so the students are graded one after the other by children of one zygote):
  - `a_opener` opens every door, one cell each: `%reset -f` first, `%cd /`, `%env`, `%store`, `%bookmark`,
    `%load_ext autoreload`, `%alias`, `%logstart`, `%notebook`, `%save`, `%%writefile` and `%history -f` outside its
    folder, `get_ipython().system(...)`, `get_ipython().run_cell('!...')`, `%%script`, `%killbgscripts`,
    `get_ipython().kernel`, `%config` (the grader-statement transformer removed, the traceback mode changed),
    `%colors`, `%xmode`, `%pdb on` then an error, `%debug`, `%gui`, IPython's builtins replaced (`display`,
    `get_ipython`), `%%javascript` and `%%html` (display only);
  - `b_classmate`, graded next, looks for anything the opener left: its stored values, bookmarks, environment,
    aliases, extensions, shell configuration, history, working directory; each cell raises "LEAKED: ..." if found.
What must hold: nothing is written outside the opener's workspace (the files it named do not exist), the commands that
start a program are refused with their notes, the classmate finds nothing and both keep full marks (the doors cost
nothing but the opener's own cells), and no grader error.
"""

import json

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.isolation import sandbox
from autograder.isolation.limits import Limits
from autograder.isolation.refusals import Refusal, because

pytestmark = pytest.mark.slow

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
LIMITS = Limits(timeout=20.0, grace=2.0, budget_factor=20.0, workers=1)
STARTS_A_PROGRAM = because(Refusal.PROGRAM.value)
WRITE_REFUSED = "PermissionError"  # Landlock: writes only in the workspace

# The opener's cells, after the given imports (`{outside}`: a folder of this test's, outside every workspace).
OPENER_FIRST = "%reset -f"  # before the given imports: nothing of the grader's is wiped, only the student's names
DOORS = {  # cell: what its note must hold ("" where no note is expected; a tuple: each of these)
    "%cd /\ncd_then = 1": "",
    "%env OPENER_WAS_HERE=1": "",
    "secret_of_opener = 'opener'\n%store secret_of_opener": "",
    "%bookmark opener_mark /": "",
    "%load_ext autoreload\n%autoreload 2": "",
    "%alias leak echo leaked": "",
    "%logstart -o {outside}/ipython_log.py": "",  # IPython says it could not start the log
    "%notebook {outside}/saved.ipynb": WRITE_REFUSED,
    "%save -f {outside}/saved.py 1": WRITE_REFUSED,
    "%history -f {outside}/history.txt": WRITE_REFUSED,
    "%%writefile {outside}/written.py\nwritten = True": WRITE_REFUSED,
    "get_ipython().system('touch {outside}/by_system')": ("!touch /", STARTS_A_PROGRAM),
    "get_ipython().run_cell('!touch {outside}/by_run_cell')": ("!touch /", STARTS_A_PROGRAM),
    "%%script bash\ntouch {outside}/by_script": ("%%script bash", STARTS_A_PROGRAM),
    "%killbgscripts": ("%killbgscripts", STARTS_A_PROGRAM),
    "%leak": ("%leak", STARTS_A_PROGRAM),
    "get_ipython().kernel": "AttributeError",
    "%config InteractiveShell.ast_transformers = []\n%config InteractiveShell.xmode = 'Verbose'": "",
    "%colors linux\n%xmode Context": "",
    "%pdb on": "",
    "raise ValueError('with the debugger on')": "ValueError",
    "%debug": "",
    "%gui qt": "",
    "import builtins\nbuiltins.display = None\nbuiltins.get_ipython = None": "",
    "%%javascript\nalert('opened')": "",
    "%%html\n<script>alert('opened')</script>": "",
}
LEAK_CHECKS = (  # the classmate's cells, after the given imports
    "%store -r\nif 'secret_of_opener' in globals():\n    raise RuntimeError('LEAKED: %store')",
    "if get_ipython().db.get('bookmarks', {}):\n    raise RuntimeError('LEAKED: %bookmark')",
    "import os\nif 'OPENER_WAS_HERE' in os.environ:\n    raise RuntimeError('LEAKED: %env')",
    "if get_ipython().alias_manager.is_alias('leak'):\n    raise RuntimeError('LEAKED: %alias')",
    "if 'autoreload' in get_ipython().extension_manager.loaded:\n    raise RuntimeError('LEAKED: %load_ext')",
    "if not get_ipython().ast_transformers or get_ipython().InteractiveTB.mode != 'Plain':\n"
    "    raise RuntimeError('LEAKED: %config')",
    "if get_ipython().call_pdb:\n    raise RuntimeError('LEAKED: %pdb')",
    "if os.getcwd() == '/' or 'cd_' + 'then' in str(get_ipython().user_ns['In']):\n"
    "    raise RuntimeError('LEAKED: %cd or the history')",
    "if get_ipython().logger.log_active:\n    raise RuntimeError('LEAKED: %logstart')",
    "check('softmax_naive', 1)  # the grader's statement, dropped as for every student",
)


def _notebook_with(repo_root, cells, first=None):
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    index = next(i for i, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs") + 1
    notebook.cells[index:index] = [nbformat.v4.new_code_cell(code) for code in cells]
    if first is not None:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(first))
    return notebook, index + (first is not None)


@pytest.fixture(scope="module")
def doors_class(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("doors")
    outside = root / "outside"
    outside.mkdir()
    submitted = root / "submitted"
    opener, first_door = _notebook_with(repo_root, [code.format(outside=outside) for code in DOORS], OPENER_FIRST)
    classmate, _ = _notebook_with(repo_root, LEAK_CHECKS)
    for student, notebook in (("a_opener", opener), ("b_classmate", classmate)):
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    summary = classroom.grade_class(submitted, root / "out", Options(limits=LIMITS))
    documents = {document["student_id"]: document["notebooks"][0] for document in summary.documents}
    return {"documents": documents, "summary": summary, "outside": outside, "first_door": first_door}


def test_both_keep_full_marks_and_nothing_is_the_grader_s_error(doors_class):
    assert not doors_class["summary"].grader_errors
    for student, notebook in doors_class["documents"].items():
        assert notebook["score"] == NB01_POINTS, (student, notebook["notes"])


def test_the_classmate_finds_nothing_the_opener_left(doors_class):
    notes = doors_class["documents"]["b_classmate"]["notes"]
    assert not [note for note in notes if "LEAKED" in note or "Error" in note], notes


def test_each_door_is_refused_or_noted_as_said(doors_class):
    notes = doors_class["documents"]["a_opener"]["notes"]
    for offset, (code, said) in enumerate(DOORS.items()):
        cell = doors_class["first_door"] + offset
        cell_notes = [note for note in notes if note.startswith(f"cell {cell}:")]
        if said == WRITE_REFUSED and sandbox.landlock_abi() < 1:
            continue  # without Landlock the write succeeds; the workspace's own rules are not asked here
        if not said:
            assert not [note for note in cell_notes if "Error" in note or "not run" in note], (code, cell_notes)
            continue
        expected = said if isinstance(said, tuple) else (said,)
        assert any(all(part in note for part in expected) for note in cell_notes), (code, cell_notes)


def test_nothing_is_written_outside_the_workspace(doors_class):
    if sandbox.landlock_abi() < 1:
        pytest.skip("needs Landlock to keep writes inside the workspace")
    assert sorted(path.name for path in doors_class["outside"].iterdir()) == []
