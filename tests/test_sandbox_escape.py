"""No way out of the grading child: sockets of every family, new namespaces, new processes, the class's files.

One class run (NB01 only, short limits): an honest student, and an escaper whose notebook tries, one cell per
attempt, to reach listeners this test runs (AF_UNIX stream and datagram by path, UDP on 127.0.0.1), to make a
socketpair, to enter new user and network namespaces, to unmount its capped workspace or mount a bigger one,
to fork and run a program, and to list the submissions and read a classmate's notebook.
Each cell raises with a tag: "<tag> refused: <why>" when the kernel said no, "<tag> ESCAPED" when it did not.
The listeners must receive nothing, and the honest student keeps full marks beside the attempts.

The seccomp filter itself is checked apart, in a forked process: each refused syscall gets EPERM where the kernel
would otherwise have answered something else (EBADF, EINVAL, EFAULT), so the refusal is the filter's.
"""

import json
import os
import platform
import socket
import subprocess
import sys

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.isolation import sandbox
from autograder.isolation.limits import Limits

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
LIMITS = Limits(timeout=5.0, memory_mb=1024, grace=2.0, budget_factor=8.0, workers=2)
SECRET = b"the grader's secrets"

# Each attempt: (tag, code). The code runs inside `try:`; an OSError is the refusal we want.
ATTEMPTS = (
    ("unix-stream", "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.connect({stream!r})\ns.sendall(SECRET)"),
    ("unix-dgram", "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.sendto(SECRET, {dgram!r})"),
    ("udp", "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(SECRET, ('127.0.0.1', {udp_port}))"),
    ("socketpair", "a, b = socket.socketpair()"),
    ("unshare-user", "check_zero(libc.unshare(0x10000000))"),
    ("unshare-net", "check_zero(libc.unshare(0x40000000))"),
    ("umount-workspace", "check_zero(libc.umount2(os.getcwd().encode(), 2))"),  # to write to the disk beneath
    ("mount-tmpfs", "check_zero(libc.mount(b'tmpfs', b'.', b'tmpfs', 0, b'size=1g'))"),  # a bigger workspace
    ("fork", "pid = os.fork()\nif pid == 0:\n    os._exit(0)"),
    ("subprocess", "subprocess.run(['true'], check=True)"),
    ("list-submissions", "os.listdir({submitted!r})"),
    ("read-classmate", "open({classmate!r}, 'rb').read()"),
)
PRELUDE = (
    "import ctypes, os, socket, subprocess\n"
    "SECRET = {secret!r}\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def check_zero(result):\n"
    "    if result != 0:\n"
    "        number = ctypes.get_errno()\n"
    "        raise OSError(number, os.strerror(number))\n"
)
ATTEMPT_CELL = (
    "try:\n{body}\n"
    "except OSError as error:\n"
    "    raise RuntimeError('{tag} refused: ' + type(error).__name__ + ' ' + str(error.errno))\n"
    "raise RuntimeError('{tag} ESCAPED')\n"
)


def _indented(code):
    return "\n".join("    " + line for line in code.splitlines())


@pytest.fixture(scope="module")
def listeners(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listeners")
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(str(folder / "stream.sock"))
    stream.listen(8)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(folder / "dgram.sock"))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    for listener in (stream, dgram, udp):
        listener.setblocking(False)
    yield {"stream": stream, "dgram": dgram, "udp": udp, "stream_path": str(folder / "stream.sock"),
           "dgram_path": str(folder / "dgram.sock"), "udp_port": udp.getsockname()[1]}
    for listener in (stream, dgram, udp):
        listener.close()


def _received(listeners):
    """What reached the listeners so far (non-blocking: anything sent before grading returned is there)."""
    received = []
    try:
        connection, _ = listeners["stream"].accept()
        connection.settimeout(1.0)
        received.append(("stream", connection.recv(4096)))
        connection.close()
    except BlockingIOError:
        pass
    for name in ("dgram", "udp"):
        try:
            received.append((name, listeners[name].recv(4096)))
        except BlockingIOError:
            pass
    return received


def test_the_listeners_receive_what_an_unconfined_process_sends(listeners):
    """The control: the same attempts from this (unconfined) process do reach the listeners."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"control", listeners["dgram_path"])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        sender.sendto(b"control", ("127.0.0.1", listeners["udp_port"]))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sender:
        sender.connect(listeners["stream_path"])
        sender.sendall(b"control")
    assert sorted(_received(listeners)) == [("dgram", b"control"), ("stream", b"control"), ("udp", b"control")]


@pytest.fixture(scope="module")
def escape_class(tmp_path_factory, repo_root, listeners):
    _received(listeners)  # whatever the control left
    root = tmp_path_factory.mktemp("escape")
    submitted, out = root / "submitted", root / "out"
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    honest = submitted / "a_honest" / "attention"
    honest.mkdir(parents=True)
    (honest / f"{NB01}.ipynb").write_bytes(source.read_bytes())
    context = {"stream": listeners["stream_path"], "dgram": listeners["dgram_path"],
               "udp_port": listeners["udp_port"], "submitted": str(submitted),
               "classmate": str(honest / f"{NB01}.ipynb")}
    notebook = nbformat.read(source, as_version=4)
    index = next(i for i, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs") + 1
    cells = [PRELUDE.format(secret=SECRET)]
    cells += [ATTEMPT_CELL.format(tag=tag, body=_indented(code.format(**context))) for tag, code in ATTEMPTS]
    notebook.cells[index:index] = [nbformat.v4.new_code_cell(code) for code in cells]
    escaper = submitted / "escaper" / "attention"
    escaper.mkdir(parents=True)
    (escaper / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    summary = classroom.grade_class(submitted, out, Options(limits=LIMITS))
    documents = {document["student_id"]: document for document in summary.documents}
    return {"documents": documents, "received": _received(listeners), "summary": summary}


def _nb01(document):
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB01)


def test_nothing_reaches_the_listeners(escape_class):
    assert escape_class["received"] == []


@pytest.mark.parametrize("tag", [tag for tag, _ in ATTEMPTS])
def test_every_attempt_is_refused(escape_class, tag):
    if tag in ("list-submissions", "read-classmate") and sandbox.landlock_abi() < 1:
        pytest.skip("needs Landlock to keep the class's files unreadable")
    notes = _nb01(escape_class["documents"]["escaper"])["notes"]
    assert not any("ESCAPED" in note for note in notes), notes
    landlock = tag in ("list-submissions", "read-classmate")
    expected = f"{tag} refused: PermissionError {13 if landlock else 1}"  # EACCES from Landlock, EPERM from seccomp
    assert any(note.endswith(expected) for note in notes), notes


def test_the_escaper_and_the_honest_student_are_graded_normally(escape_class):
    documents = escape_class["documents"]
    assert _nb01(documents["a_honest"])["score"] == NB01_POINTS
    assert _nb01(documents["escaper"])["score"] == NB01_POINTS  # the attempts cost nothing else
    assert not escape_class["summary"].grader_errors


# --- the seccomp filter, syscall by syscall ------------------------------------------------------------------
# Each probe runs in a fresh interpreter: forking this test process, which may hold torch's threads (and their
# locks) after a class run, could leave the forked copy waiting forever on a lock no thread will release.

SYSCALL_NUMBERS = {"x86_64": {"setns": 308, "io_uring_setup": 425, "clone": 56, "clone3": 435},
                   "aarch64": {"setns": 268, "io_uring_setup": 425, "clone": 220, "clone3": 435}}
ERRNO_OF = """
import ctypes, os
def errno_of(number, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(arg) for arg in args))
    return "ok" if result >= 0 else os.strerror(ctypes.get_errno())
"""
UNDER_FILTER = """
import json
from autograder.isolation import sandbox
notes = []
sandbox._libc().prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
sandbox._forbid_new_processes(notes)
"""


def _run(script):
    """The JSON list that `script` prints, run by a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(platform.machine() not in SYSCALL_NUMBERS, reason="no syscall table for this machine")
def test_the_filter_refuses_what_the_kernel_would_have_answered_otherwise():
    numbers = SYSCALL_NUMBERS[platform.machine()]
    clone_thread_in_new_user_namespace = 0x00010000 | 0x10000000  # the kernel alone: EINVAL (no CLONE_SIGHAND)
    calls = (f"[errno_of({numbers['setns']}, -1, 0), "  # unfiltered: EBADF
             f"errno_of({numbers['io_uring_setup']}, 1, 0), "  # unfiltered: EFAULT
             f"errno_of({numbers['clone']}, {clone_thread_in_new_user_namespace}, 0, 0, 0, 0)]")
    unfiltered = _run(ERRNO_OF + f"import json\nprint(json.dumps({calls}))")
    assert os.strerror(1) not in unfiltered, unfiltered
    filtered = _run(ERRNO_OF + UNDER_FILTER + f"""
import threading
started = []
thread = threading.Thread(target=lambda: started.append(True))
thread.start()
thread.join()
print(json.dumps(notes + {calls} + [errno_of({numbers['clone3']}, 0, 0), f"thread started: {{started == [True]}}"]))
""")
    refused = os.strerror(1)
    assert filtered == [refused, refused, refused, os.strerror(38), "thread started: True"]


@pytest.mark.slow
def test_torch_threads_still_work_under_the_filter():
    result = _run(UNDER_FILTER + """
import torch
torch.set_num_threads(2)
x = torch.ones(256, 256)
print(json.dumps(notes + [float((x @ x).sum()), torch.get_num_threads()]))
""")
    assert result == [256.0 * 256 * 256, 2]
