"""One student cannot fill the disk, and honest files work as in Jupyter.

A class graded one notebook at a time (workers=1: the order is the students' order), NB01 only, an 8 MB cap:
  - a_filler writes 1 MB files in a loop until a write fails, then raises saying how much it wrote and how large
    the filesystem it wrote to is;
  - b_files hands in helper.py (its softmax_naive), data/scale.csv and ones.npy (read by its context_vectors),
    a %%writefile cell that writes stable.py (then imported), and a link to a classmate's notebook: full marks,
    the link not followed (a note says so);
  - c_honest, graded after the filler: full marks.
Twice: with the child's private tmpfs (where the kernel allows it; skipped otherwise, failed in CI), and without
it (Limits.private_tmpfs=False, as where the kernel refuses it: the parent's disk watch), where a second filler
also hides its bytes in deleted files it keeps open.
"""

import dataclasses
import json
import os
import subprocess
import sys

import nbformat
import numpy as np
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.isolation import supervisor, workspace
from autograder.isolation.cells import compile_cell
from autograder.isolation.limits import Limits
from autograder.isolation.shell import ShellStandIn

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
DISK_MB = 8
LIMITS = Limits(timeout=10.0, memory_mb=1024, grace=2.0, budget_factor=6.0, workers=1, disk_mb=DISK_MB)
FULL_NOTE = f"wrote more than {DISK_MB} MB of files"

# Both fillers go far past the cap, then keep their files for a while: the grader's watch (which looks every
# 0.1 s) sees them past the cap however fast the disk took the bytes, and kills the child in this cell.
FILLER = """import os, time
total = 0
chunk = b'x' * 2**20
try:
    for number in range(256):
        with open(f'fill-{number}.bin', 'wb') as handle:
            handle.write(chunk)
        total += len(chunk)
except OSError as error:
    size = os.statvfs('.')
    raise RuntimeError(f'FILLER stopped after {total} bytes ({error.strerror}) on a filesystem of '
                       f'{size.f_blocks * size.f_frsize} bytes')
time.sleep(5)
raise RuntimeError(f'FILLER wrote all {total} bytes')
"""
HIDDEN_FILLER = """import os, time
handles = []
for number in range(128):
    handle = open(f'hidden-{number}.bin', 'wb')
    os.unlink(f'hidden-{number}.bin')  # no name left: only the open descriptor holds the bytes
    handle.write(b'y' * 2**20)
    handle.flush()
    handles.append(handle)
time.sleep(5)
raise RuntimeError('HIDDEN FILLER wrote 128 MB')
"""
HELPER = "import torch\n\n\ndef softmax_naive(x):\n    return torch.exp(x) / torch.exp(x).sum(dim=0)\n"
WRITEFILE = ("%%writefile stable.py\nimport torch\n\n\ndef softmax_stable(x, dim=-1):\n"
             "    shifted = x - x.max(dim=dim, keepdim=True).values\n"
             "    return shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)\n")
CONTEXT = ("import numpy as np\n\nSCALE = float(open('data/scale.csv').read().split(',')[1]) * "
           "float(np.load('ones.npy').mean())\n\n\ndef context_vectors(inputs):\n"
           "    return torch.softmax(inputs @ inputs.T, dim=-1) @ inputs * SCALE\n")


def _cells(notebook):
    return {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in notebook.cells}


def _insert_after(notebook, grade_id, code):
    index = notebook.cells.index(_cells(notebook)[grade_id]) + 1
    notebook.cells.insert(index, nbformat.v4.new_code_cell(code))


def _write(folder, notebook):
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _grade_class(root, repo_root, limits=LIMITS, hidden_filler=False):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    submitted, out = root / "submitted", root / "out"

    filler = nbformat.read(source, as_version=4)
    _insert_after(filler, "given_inputs", FILLER)
    _write(submitted / "a_filler" / "attention", filler)
    if hidden_filler:
        hidden = nbformat.read(source, as_version=4)
        _insert_after(hidden, "given_inputs", HIDDEN_FILLER)
        _write(submitted / "a_hidden_filler" / "attention", hidden)

    files = nbformat.read(source, as_version=4)
    cells = _cells(files)
    cells["solution_softmax_naive"].source = "from helper import softmax_naive"
    cells["solution_softmax_stable"].source = WRITEFILE
    _insert_after(files, "solution_softmax_stable", "from stable import softmax_stable")
    cells["solution_context_vectors"].source = CONTEXT
    _insert_after(files, "given_inputs", "import os\nassert not os.path.lexists('classmate.ipynb.txt')")
    folder = submitted / "b_files" / "attention"
    _write(folder, files)
    (folder / "helper.py").write_text(HELPER)
    (folder / "data").mkdir()
    (folder / "data" / "scale.csv").write_text("scale,1.0\n")
    np.save(folder / "ones.npy", np.ones(4))

    honest = submitted / "c_honest" / "attention"
    honest.mkdir(parents=True)
    (honest / f"{NB01}.ipynb").write_bytes(source.read_bytes())
    (folder / "classmate.ipynb.txt").symlink_to(honest / f"{NB01}.ipynb")

    summary = classroom.grade_class(submitted, out, Options(limits=limits))
    return summary, {document["student_id"]: document for document in summary.documents}


def _nb01(document):
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB01)


def _tmpfs_refusal():
    """Why this kernel gives a grading child no private tmpfs (None: it does), asked in a fresh interpreter (its
    own process: the namespace it enters goes with it)."""
    script = ("import os\nfrom autograder.isolation import workspace\n"
              "print(workspace._private_tmpfs(os.getcwd(), 1) or '', end='')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr  # a refusal is an answer; a crash is a bug
    return done.stdout or None


@pytest.fixture(scope="module")
def tmpfs_class(tmp_path_factory, repo_root):
    why_not = _tmpfs_refusal()
    if why_not is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no private tmpfs for grading children in CI: {why_not}")
        pytest.skip(f"this kernel gives no private tmpfs to a grading child: {why_not}")
    return _grade_class(tmp_path_factory.mktemp("tmpfs"), repo_root)


@pytest.fixture(scope="module")
def watched_class(tmp_path_factory, repo_root):
    """The same class without the child's tmpfs (as in a container that forbids mounts): the parent's watch."""
    limits = dataclasses.replace(LIMITS, private_tmpfs=False)
    return _grade_class(tmp_path_factory.mktemp("watched"), repo_root, limits, hidden_filler=True)


def test_with_a_tmpfs_the_filler_writes_at_most_the_cap_to_its_own_filesystem(tmpfs_class):
    _summary, documents = tmpfs_class
    notes = _nb01(documents["a_filler"])["notes"]
    stopped = [note for note in notes if "FILLER stopped after" in note]
    assert stopped, notes
    written = int(stopped[0].split("FILLER stopped after ")[1].split(" bytes")[0])
    filesystem = int(stopped[0].split("on a filesystem of ")[1].split(" bytes")[0])
    assert "No space left on device" in stopped[0]
    assert written <= DISK_MB * 2**20 and filesystem == DISK_MB * 2**20  # its own filesystem, not the shared disk
    assert any(FULL_NOTE in note for note in notes), notes
    assert _nb01(documents["a_filler"])["score"] == NB01_POINTS  # the filling cell is its only loss


@pytest.mark.parametrize("student", ["b_files", "c_honest"])
def test_with_a_tmpfs_the_next_students_grade_normally(tmpfs_class, student):
    summary, documents = tmpfs_class
    assert not summary.grader_errors and not summary.isolation_notes, summary.isolation_notes
    notebook = _nb01(documents[student])
    assert notebook["score"] == NB01_POINTS, [c["message"] for c in notebook["checks"] if c["status"] != "passed"]
    if student == "b_files":
        copy_notes = [note for note in notebook["notes"] if "copied" in note]
        assert len(copy_notes) == 1 and copy_notes[0].startswith(f"{workspace.NOT_COPIED_NOTE}: 1 link "
                                                                 "(classmate.ipynb.txt)"), copy_notes
        assert not any("cell" in note for note in notebook["notes"]), notebook["notes"]  # no cell raised


@pytest.mark.slow
def test_without_a_tmpfs_the_grader_kills_the_filler_past_the_cap(watched_class):
    summary, documents = watched_class
    assert any("no private tmpfs" in note and "Limits.private_tmpfs" in note for note in summary.isolation_notes)
    for student in ("a_filler", "a_hidden_filler"):
        notebook = _nb01(documents[student])
        assert any(FULL_NOTE in note and "re-run without it" in note for note in notebook["notes"]), notebook["notes"]
        assert not any("FILLER wrote" in note for note in notebook["notes"]), notebook["notes"]
        assert notebook["score"] == NB01_POINTS  # re-run without the filling cell


@pytest.mark.parametrize("student", ["b_files", "c_honest"])
@pytest.mark.slow
def test_without_a_tmpfs_the_next_students_grade_normally(watched_class, student):
    summary, documents = watched_class
    assert not summary.grader_errors
    notebook = _nb01(documents[student])
    assert notebook["score"] == NB01_POINTS, [c["message"] for c in notebook["checks"] if c["status"] != "passed"]


# --- the pieces, in this process ---------------------------------------------------------------------------


def test_writefile_writes_into_the_working_directory_and_the_module_imports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend("")
    namespace = {}
    namespace["get_ipython"] = lambda: ShellStandIn(namespace, tmp_path)
    exec(compile_cell("%%writefile made_here.py\nVALUE = 7\n", "<cell>"), namespace)  # noqa: S102 - test code
    exec(compile_cell("%%writefile -a 'made_here.py'\nVALUE += 1\n", "<cell>"), namespace)  # noqa: S102
    exec(compile_cell("import made_here\nresult = made_here.VALUE", "<cell>"), namespace)  # noqa: S102
    assert namespace["result"] == 8 and (tmp_path / "made_here.py").read_text() == "VALUE = 7\nVALUE += 1\n"


def test_the_copy_takes_regular_files_only_and_never_follows_a_link(tmp_path):
    folder, target = tmp_path / "student", tmp_path / "work"
    (folder / "a" / "b" / "c" / "d").mkdir(parents=True)
    target.mkdir()
    (folder / "helper.py").write_text("X = 1\n")
    (folder / "a" / "b" / "c" / "deep.txt").write_text("three folders down\n")
    (folder / "a" / "b" / "c" / "d" / "too_deep.txt").write_text("four folders down\n")
    (folder / "big.bin").write_bytes(b"\0" * (workspace.MAX_COPY_FILE_MB * 2**20 + 1))
    (folder / "notebook.ipynb").write_text("{}")
    (folder / "passwd").symlink_to("/etc/passwd")
    (folder / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(folder / "pipe")
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, target, workspace._CopyBudget(files=10, bytes=64 * 2**20), space)
    copied = sorted(str(path.relative_to(target)) for path in target.rglob("*") if path.is_file())
    assert copied == ["a/b/c/deep.txt", "helper.py"]
    assert not any(path.is_symlink() for path in target.rglob("*"))
    notes = "\n".join(space.student_notes)
    for name in ("passwd", "elsewhere", "big.bin", "a/b/c/d/"):
        assert name in notes, notes


def test_a_hard_link_to_a_file_outside_the_folder_is_not_copied(tmp_path):
    """`answers.py` hard-linked to an instructor's file is not the student's own: left out with a note; a file whose
    every name lies inside the folder is copied."""
    folder, target = tmp_path / "student", tmp_path / "work"
    folder.mkdir()
    target.mkdir()
    (tmp_path / "instructor.py").write_text("SECRET = 1\n")
    os.link(tmp_path / "instructor.py", folder / "answers.py")
    (folder / "mine.txt").write_text("mine\n")
    os.link(folder / "mine.txt", folder / "mine_too.txt")
    (folder / "plain.txt").write_text("one name\n")
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, target, workspace._CopyBudget(files=10, bytes=64 * 2**20), space)
    assert sorted(path.name for path in target.iterdir()) == ["mine.txt", "mine_too.txt", "plain.txt"]
    assert "1 hard link to a file outside the folder (answers.py)" in "\n".join(space.student_notes)


def test_the_notebooks_the_code_names_are_copied_never_through_a_link(tmp_path):
    """The notebooks the code names (`%run ./00_setup.ipynb`, one in a subfolder) are copied from the folder the
    notebook is graded beside (nbgrader's path: the folder `stage` lays out, which holds the student's other
    notebooks); a notebook that is a link or a hard link to a file outside is left out with a note, and one the code
    does not name is not copied."""
    folder, work = tmp_path / "beside", tmp_path / "work"
    (folder / "sub").mkdir(parents=True)
    work.mkdir()
    (folder / "helper.py").write_text("X = 1\n")
    (tmp_path / "instructor.ipynb").write_text('{"cells": [], "secret": 1}')
    (folder / "00_setup.ipynb").write_text('{"cells": [], "setup": 1}')
    (folder / "sub" / "more.ipynb").write_text('{"cells": [], "more": 1}')
    (folder / "Untitled.ipynb").write_text('{"cells": [], "untitled": 1}')
    (folder / "linked.ipynb").symlink_to(tmp_path / "instructor.ipynb")
    os.link(tmp_path / "instructor.ipynb", folder / "hard.ipynb")
    code = "%run ./00_setup.ipynb\n%run sub/more.ipynb\n%run linked.ipynb\n%run hard.ipynb\nopen('/etc/x.ipynb')\n"
    space = workspace.Workspace(capped=True)
    workspace._copy_folder(folder, work, workspace._CopyBudget(files=10, bytes=2**20), space, code)
    files = {path.relative_to(work).as_posix(): path.read_text() for path in work.rglob("*") if path.is_file()}
    notes = "\n".join(space.student_notes)
    assert files == {"helper.py": "X = 1\n", "00_setup.ipynb": '{"cells": [], "setup": 1}',
                     "sub/more.ipynb": '{"cells": [], "more": 1}'}, files
    assert "(linked.ipynb)" in notes and "(hard.ipynb)" in notes, notes


def test_the_disk_watch_counts_blocks_and_deleted_open_files(tmp_path):
    (tmp_path / "sparse.bin").open("wb").truncate(2**30)  # 1 GB long, nothing on disk
    (tmp_path / "real.bin").write_bytes(b"x" * 2**20)
    os.sync()
    # This process may hold other open files on the same disk (pytest's capture files): compare, don't count.
    before = workspace.disk_usage(str(tmp_path), os.getpid())
    hidden = (tmp_path / "hidden.bin").open("wb")
    try:
        hidden.write(b"y" * 2**20)
        hidden.flush()
        os.fsync(hidden.fileno())
        (tmp_path / "hidden.bin").unlink()
        after = workspace.disk_usage(str(tmp_path), os.getpid())
    finally:
        hidden.close()
    assert 2**20 <= before < 2**30 / 4  # the real file's blocks, not the sparse file's length
    assert after - before >= 2**20  # the deleted file still open


def test_a_notebook_in_a_protected_folder_gets_none_of_its_neighbours(repo_root, tmp_path):
    assert supervisor.own_folder(repo_root / "tests" / "mutants" / "x.ipynb") is None
    assert supervisor.own_folder(repo_root / "source" / "attention" / f"{NB01}.ipynb") is None
    assert supervisor.own_folder(tmp_path / "attention" / f"{NB01}.ipynb") == tmp_path / "attention"
    # a folder the caller names instead (nbgrader's path: the files as handed in, staged) is held to the same rule
    assert supervisor.own_folder(tmp_path / "x.ipynb", repo_root / "source" / "attention") is None
    assert supervisor.own_folder(tmp_path / "x.ipynb", tmp_path / "staged") == tmp_path / "staged"


@pytest.mark.slow
def test_a_notebook_graded_beside_a_folder_it_is_given_reads_that_folder_and_not_its_own(tmp_path, repo_root):
    """NotebookInput.folder (how nbgrader's path grades its sanitized copy beside the files as handed in): the
    child's copy is that folder's, the notebook's own file among them, and none of the files beside the notebook."""
    solved = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    answers = "\n\n".join(cell.source for cell in solved.cells if cell.metadata.get("nbgrader", {}).get("solution"))
    notebook = nbformat.read(repo_root / "release" / "attention" / f"{NB01}.ipynb", as_version=4)
    reads = f"exec(open('helper.py').read(), globals())\nprint(len(open('{NB01}.ipynb').read()))"
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = reads
    _write(tmp_path / "graded", notebook)
    (tmp_path / "graded" / "helper.py").write_text("raise SystemExit('the files beside the graded copy')")
    (tmp_path / "given").mkdir()
    (tmp_path / "given" / "helper.py").write_text(f"import torch\n{answers}")
    (tmp_path / "given" / f"{NB01}.ipynb").write_text("x" * 12345)  # the notebook's own file, as handed in
    [result] = grade_notebooks([NotebookInput("given", tmp_path / "graded" / f"{NB01}.ipynb", NB01,
                                              folder=tmp_path / "given")], Options(limits=LIMITS)).results
    assert result.score == result.max_score == NB01_POINTS, result.notes
    assert any("12345" in printed for printed in result.cell_outputs.values()), result.cell_outputs


MANY_FILES = """import os
made = 0
try:
    for number in range(100000):
        open(f'f{number}', 'w').close()
        made += 1
except OSError as error:
    raise RuntimeError(f'MANY FILES stopped after {made} files ({error.strerror})')
"""


def test_an_inode_cap_is_reported_as_too_many_files_not_as_megabytes(tmp_path, repo_root):
    if _tmpfs_refusal() is not None:
        pytest.skip("this kernel gives no private tmpfs to a grading child: no inode cap to reach")
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    _insert_after(notebook, "given_inputs", MANY_FILES)
    _write(tmp_path / "many", notebook)
    [result] = grade_notebooks([NotebookInput("many", tmp_path / "many" / f"{NB01}.ipynb", NB01)],
                               Options(limits=LIMITS)).results
    assert any("MANY FILES stopped after" in note for note in result.notes), result.notes
    assert any(workspace.too_many_files_note() in note for note in result.notes), result.notes
    assert not any(FULL_NOTE in note for note in result.notes), result.notes
    assert result.score == result.max_score
