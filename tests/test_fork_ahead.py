"""A grading child forked ahead of its task is in its cgroups before it reads the task, so before any student code.

The grader asks the zygote for the next child as soon as it has started one (Limits.fork_ahead), so that the zygote's
forks and the child's cgroup move (a wait for the kernel of 10 to 15 ms on cgroup v1) overlap the running children's
work. The defence must not move with it: a child joins its cgroups first thing, before it waits for its task. Shown
from outside (the child's /proc/<pid>/cgroup while it still waits for its task), and from inside a class run, with
and without forking ahead: the first cell of every notebook reads its own /proc/self/cgroup, and a first cell that
grows a memfd past --memory is killed at the cgroup's memory limit. A run that stops with a child forked ahead ends
it and removes its cgroups.
"""

import json
import os
import time
from pathlib import Path

import nbformat
import pytest

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.isolation import cgroups
from autograder.isolation.limits import Limits
from autograder.isolation.zygote import Zygote, shared_zygote

NB01 = NOTEBOOKS[0]
LIMITS = Limits(timeout=20.0, memory_mb=512, grace=2.0, budget_factor=4.0, workers=1)
READ_OWN_CGROUPS = '''from pathlib import Path
raise RuntimeError("CGROUPS " + " ".join(Path("/proc/self/cgroup").read_text().split()))
'''
# As in test_sandbox_resources: 60 memfds of 50 MB, far past the 512 MB (plus the workspace and the zygote's pages).
MEMFD_BOMB = '''import os
files = []
chunk = b"m" * (1 << 20)
for _ in range(60):
    files.append(os.memfd_create("bomb"))
    for _ in range(50):
        os.write(files[-1], chunk)
raise RuntimeError(f"MEMFD ESCAPED: wrote {len(files) * 50} MB past the limit")
'''


def _open_cgroups():
    child_cgroups, why_not = cgroups.ChildCgroups.open(2**30)
    if child_cgroups is None:
        pytest.skip(f"no writable cgroup on this machine: {why_not}")
    return child_cgroups


def _own_relative(folder: Path) -> str:
    """The folder as /proc/<pid>/cgroup names it: its path below its hierarchy's mount."""
    relative = folder.relative_to(cgroups.CGROUP_ROOT)
    parts = relative.parts if (cgroups.CGROUP_ROOT / "cgroup.controllers").exists() else relative.parts[1:]
    return "/" + "/".join(parts)


def _cgroups_of(pid: int) -> set[str]:
    return {line.split(":", 2)[2] for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()}


def test_a_child_forked_ahead_is_in_its_cgroups_before_it_is_given_a_task():
    child_cgroups = _open_cgroups()
    zygote = Zygote()
    read_fd, write_fd = os.pipe()
    folders: tuple[Path, ...] = ()
    try:
        folders = child_cgroups.make()
        child = zygote.fork_ahead(write_fd, folders).take()
        try:
            wanted = {_own_relative(folder) for folder in folders}
            deadline = time.monotonic() + 30
            while not wanted <= _cgroups_of(child.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert wanted <= _cgroups_of(child.pid), (wanted, _cgroups_of(child.pid))
            assert os.waitpid(child.pid, os.WNOHANG) == (0, 0)  # still waiting: no task was handed over
        finally:
            child.discard()
        with pytest.raises(ChildProcessError):  # ended and reaped
            os.waitpid(child.pid, os.WNOHANG)
        child_cgroups.leave(folders)
        assert not any(folder.exists() for folder in folders)
    finally:
        os.close(read_fd)
        os.close(write_fd)
        zygote.close()
        child_cgroups.leave(folders)  # the machine stays clean when an assertion above failed
        child_cgroups.close()


def _with_first_cell(repo_root: Path, folder: Path, code: str) -> Path:
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(code))
    folder.mkdir(parents=True)
    path = folder / f"{NB01}.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("fork_ahead", [True, False], ids=["forked-ahead", "forked-when-needed"])
def test_every_child_runs_its_first_cell_in_its_own_cgroups_and_under_their_memory_limit(repo_root, tmp_path,
                                                                                        fork_ahead):
    _open_cgroups().close()
    inputs = [NotebookInput(name, _with_first_cell(repo_root, tmp_path / name, code), NB01)
              for name, code in (("a_reader", READ_OWN_CGROUPS), ("b_bomb", MEMFD_BOMB),
                                 ("c_reader", READ_OWN_CGROUPS))]
    grading = grade_notebooks(inputs, Options(limits=Limits(**{**LIMITS.__dict__, "fork_ahead": fork_ahead})))
    reader_a, bomb, reader_c = grading.results
    run_folder = f"/attnkit-{os.getpid()}/child-"
    for reader in (reader_a, reader_c):  # with workers=1, forked ahead: every child after the first
        [seen] = [note for note in reader.notes if "CGROUPS " in note]
        unified = (cgroups.CGROUP_ROOT / "cgroup.controllers").exists()  # v2: one line, "0::/path"
        memory = [entry for entry in seen.split("CGROUPS ", 1)[1].split()
                  if (entry.startswith("0::") if unified else "memory" in entry.split(":")[1].split(","))]
        assert memory and all(run_folder in entry for entry in memory), seen
    assert not any("ESCAPED" in note for note in bomb.notes), bomb.notes
    assert any("killed at its memory limit (SIGKILL" in note for note in bomb.notes), bomb.notes
    assert not list(cgroups.CGROUP_ROOT.rglob(f"attnkit-{os.getpid()}"))


@pytest.mark.slow
def test_a_run_stopped_with_a_child_forked_ahead_ends_it_and_removes_its_cgroups(repo_root, tmp_path):
    _open_cgroups().close()
    inputs = [NotebookInput(name, _with_first_cell(repo_root, tmp_path / name, "pass"), NB01)
              for name in ("a", "b", "c")]
    shared_zygote().resident_bytes()  # started (and kept warm) before the count: a child of this process
    children_before = _own_children()

    def stop(_result):
        raise KeyboardInterrupt  # the instructor's Ctrl-C, while the next child waits for its task

    with pytest.raises(KeyboardInterrupt):
        grade_notebooks(inputs, Options(limits=LIMITS), on_result=stop)
    assert _own_children() <= children_before
    assert not list(cgroups.CGROUP_ROOT.rglob(f"attnkit-{os.getpid()}"))


def _own_children() -> set[int]:
    """This process's children (its zygotes among them: those are kept warm between runs, and compared as such)."""
    children = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        children.update(int(pid) for pid in (task / "children").read_text().split())
    return children
