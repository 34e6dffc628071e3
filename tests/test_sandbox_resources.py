"""Nothing of a grading child outlives it, and memory the address-space limit misses is counted anyway.

One class run (NB01 only, short limits): an honest student; a student whose cell makes a SysV shared memory
segment (touched), a SysV message queue (with a message), a POSIX message queue and a memfd, each under a key or
name this test chose; a student whose memfd grows towards 3 GB, far past --memory (512 MB). After grading, the
kernel's own lists (`ipcs`, mq_open from this process, /dev/mqueue where mounted) hold none of the student's
objects, the memfd was stopped (killed in its cgroup, or refused where the child has no memory cgroup), no
cgroup of the run is left, and the honest student keeps full marks.

The fallback is graded too: with Limits.memory_cgroup=False, seccomp refuses memfd_create and the student reads
"refused".
"""

import ctypes
import dataclasses
import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.isolation import cgroups
from autograder.isolation.limits import Limits

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
LIMITS = Limits(timeout=20.0, memory_mb=512, grace=2.0, budget_factor=4.0, workers=2)
SHM_KEY = 0x41540000 + (os.getpid() & 0xFFFF)
MSG_KEY = SHM_KEY + 0x10000
MQ_NAME = f"/attnkit-test-{os.getpid()}"

MAKE_IPC = '''import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
made = []
def attempt(name, result, bad=-1):
    made.append(f"{{name}}=" + ("refused " + os.strerror(ctypes.get_errno()) if result == bad else "made"))
    return result
shm = attempt("shm", libc.shmget({shm_key}, 16 << 20, 0o1000 | 0o600))
if shm != -1:
    address = libc.shmat(shm, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memset(address, 1, 16 << 20)
queue = attempt("msg", libc.msgget({msg_key}, 0o1000 | 0o600))
if queue != -1:
    message = ctypes.create_string_buffer(b"\\x01\\0\\0\\0\\0\\0\\0\\0" + b"kept?" * 20)
    libc.msgsnd(queue, message, 100, 0o4000)
attempt("mq", libc.mq_open({mq_name!r}.encode(), os.O_CREAT | os.O_RDWR, 0o600, None))
attempt("memfd", libc.memfd_create(b"kept", 0))
raise RuntimeError("IPC " + " ".join(made))
'''
# One memfd stops at the file-size limit (64 MB), so the bomb keeps many: 60 of 50 MB, 3 GB in all.
MEMFD_BOMB = '''import os
files = []
chunk = b"m" * (1 << 20)
try:
    for _ in range(60):
        files.append(os.memfd_create("bomb"))
        for _ in range(50):
            os.write(files[-1], chunk)
except OSError as error:
    raise RuntimeError(f"MEMFD refused ({error.strerror}) after {len(files)} files")
raise RuntimeError(f"MEMFD ESCAPED: wrote {len(files) * 50} MB past the limit")
'''


THREAD_BOMB = '''import threading, time
threading.stack_size(1 << 16)  # small stacks: the address-space limit is not what stops them
started = 0
try:
    for _ in range(400):
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        started += 1
except RuntimeError as error:
    raise RuntimeError(f"THREADS stopped at {started} ({error})")
raise RuntimeError(f"THREADS all {started} started")
'''


def _notebook(source, code=None):
    notebook = nbformat.read(source, as_version=4)
    if code is not None:
        index = next(i for i, cell in enumerate(notebook.cells)
                     if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs")
        notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(code))
    return notebook


def _grade(root, repo_root, limits, students):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    for student, code in students.items():
        folder = root / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        (folder / f"{NB01}.ipynb").write_text(json.dumps(_notebook(source, code)), encoding="utf-8")
    summary = classroom.grade_class(root / "submitted", root / "out", Options(limits=limits))
    return {document["student_id"]: document for document in summary.documents}


def _nb01(document):
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB01)


def _ipcs(kind):
    return subprocess.run(["ipcs", kind], capture_output=True, text=True, check=True, timeout=30).stdout


def _mq_exists(name):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.mq_open(name.encode(), os.O_RDONLY)
    if fd >= 0:
        libc.mq_close(fd)
        libc.mq_unlink(name.encode())  # the test's own clean-up: the assertion below fails anyway
        return True
    assert ctypes.get_errno() == errno.ENOENT, os.strerror(ctypes.get_errno())
    return False


def _remove_leftovers():
    """Should the defence fail, what the student made is removed here: the machine stays clean."""
    for flag, key in (("-M", SHM_KEY), ("-Q", MSG_KEY)):
        subprocess.run(["ipcrm", flag, hex(key)], capture_output=True, check=False, timeout=30)


def _run_cgroups():
    """The run's own cgroups (attnkit-<this pid>) still on this machine."""
    root = cgroups.CGROUP_ROOT
    if not root.exists():
        return []
    return [str(path) for path in root.rglob(f"attnkit-{os.getpid()}")] if shutil.which("ipcs") else []


@pytest.fixture(scope="module")
def resources_class(tmp_path_factory, repo_root):
    if shutil.which("ipcs") is None:
        pytest.fail("ipcs (util-linux) is needed to see what outlives a child")
    students = {
        "a_ipc": MAKE_IPC.format(shm_key=SHM_KEY, msg_key=MSG_KEY, mq_name=MQ_NAME),
        "b_memfd_bomb": MEMFD_BOMB,
        "c_honest": None,
        "d_thread_bomb": THREAD_BOMB,
    }
    try:
        documents = _grade(tmp_path_factory.mktemp("resources"), repo_root, LIMITS, students)
        return documents, _ipcs("-m"), _ipcs("-q"), _mq_exists(MQ_NAME), _run_cgroups()
    finally:
        _remove_leftovers()


@pytest.mark.slow
def test_the_student_made_the_objects_inside_its_child(resources_class):
    documents = resources_class[0]
    [report] = [note for note in _nb01(documents["a_ipc"])["notes"] if "IPC " in note]
    # Each was made in the child's own IPC namespace, or refused (where the child has none, or no memory cgroup).
    for name in ("shm", "msg", "mq", "memfd"):
        assert f"{name}=made" in report or f"{name}=refused" in report, report


def test_no_sysv_segment_or_queue_or_posix_queue_outlives_the_child(resources_class):
    _documents, shm_list, queue_list, mq_left, _cgroups = resources_class
    assert f"{SHM_KEY:#010x}" not in shm_list, shm_list
    assert f"{MSG_KEY:#010x}" not in queue_list, queue_list
    assert not mq_left
    mqueue = Path("/dev/mqueue")
    if mqueue.is_dir():
        assert MQ_NAME.lstrip("/") not in os.listdir(mqueue)


@pytest.mark.slow
def test_a_memfd_growing_past_the_memory_limit_is_stopped(resources_class):
    notes = _nb01(resources_class[0]["b_memfd_bomb"])["notes"]
    assert not any("ESCAPED" in note for note in notes), notes
    # Killed in its cgroup, the ending names the memory limit (never a guess); refused where there is none.
    assert any("killed at its memory limit (SIGKILL" in note or "MEMFD refused" in note for note in notes), notes


def test_no_cgroup_of_the_run_is_left_and_the_honest_student_keeps_full_marks(resources_class):
    documents, *_lists, cgroups_left = resources_class
    assert cgroups_left == []
    assert documents["c_honest"]["score"] == NB01_POINTS
    assert _nb01(documents["b_memfd_bomb"])["score"] == NB01_POINTS  # the bomb was a cell of its own


def test_the_pids_cgroup_caps_a_child_s_threads(resources_class):
    memory_cgroups, why_not = cgroups.ChildCgroups.open(2**30)
    if memory_cgroups is None:
        pytest.skip(f"no writable cgroup on this machine: {why_not}")
    memory_cgroups.close()
    if not (cgroups.CGROUP_ROOT / "pids").is_dir() and not (cgroups.CGROUP_ROOT / "cgroup.controllers").exists():
        pytest.skip("no pids controller on this machine")
    notes = _nb01(resources_class[0]["d_thread_bomb"])["notes"]
    stopped = [note for note in notes if "THREADS stopped at" in note]
    assert stopped, notes
    assert int(stopped[0].split("THREADS stopped at ")[1].split(" ")[0]) < cgroups.PIDS_MAX


def test_without_a_memory_cgroup_seccomp_refuses_memfd(tmp_path, repo_root):
    limits = dataclasses.replace(LIMITS, memory_cgroup=False, workers=1)
    documents = _grade(tmp_path, repo_root, limits, {"memfd_bomb": MEMFD_BOMB})
    notes = _nb01(documents["memfd_bomb"])["notes"]
    assert any("MEMFD refused (Operation not permitted) after 0 files" in note for note in notes), notes
    assert documents["memfd_bomb"]["score"] == NB01_POINTS
