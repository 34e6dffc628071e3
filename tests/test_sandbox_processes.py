"""The grading child sees no other process: a PID namespace of its own and its own /proc (isolation/namespaces.py).

A decoy process started here holds a secret on its command line (as a JupyterLab started with
`--IdentityProvider.token=...` would) and another in its environment. The student's notebook lists /proc, reads every
cmdline, environ and status it can, tries /proc/<decoy pid>/ directly, and sends back everything it found: printed
(nbgrader's feedback shows a cell's output) and in its error's message (a note in every grader's record). Neither
secret may appear in anything the student gets back, through `attnkit grade` and the course's `nbgrader autograde`
(formgrader's Autograde button runs the same), and /proc lists the child alone, as pid 1.

The control: with `Limits.private_pids` off (as where the kernel refuses a PID namespace) the same notebook brings the
command line's secret back, and the isolation notes name the layer that is missing.
"""

import dataclasses
import json
import os
import secrets
import subprocess
import sys

import nbformat
import pytest

from autograder import cli
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations import nbgrader_course
from autograder.isolation.limits import Limits

NB01 = NOTEBOOKS[0]
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
LIMITS = Limits(timeout=10.0, memory_mb=1024)
TAG = "PROC-VIEW"

# The student's cell: everything /proc gives, printed, and a summary raised (a cell's error is a note in the record).
SNOOP = """
import os
pids = sorted((name for name in os.listdir('/proc') if name.isdigit()), key=int)
found = {{}}
for pid in pids + ['{decoy}']:
    for what in ('cmdline', 'environ', 'status'):
        try:
            with open(f'/proc/{{pid}}/{{what}}', 'rb') as file:
                found[f'{{pid}}/{{what}}'] = file.read().replace(b'\\0', b' ').decode(errors='replace')
        except OSError as error:
            found[f'{{pid}}/{{what}}'] = type(error).__name__
print(found)
raise RuntimeError(f"{tag} decoy={{found['{decoy}/cmdline'][-120:]}} | {{len(pids)}} pids: {{','.join(pids[:20])}}")
"""


@pytest.fixture(scope="module")
def decoy():
    """A process of this user holding one secret on its command line and another in its environment."""
    argument, variable = f"decoy-argument-{secrets.token_hex(16)}", f"decoy-environment-{secrets.token_hex(16)}"
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; time.sleep(3600)", f"--IdentityProvider.token={argument}"],
        env={**os.environ, "DECOY_TOKEN": variable}, stdin=subprocess.DEVNULL)
    yield {"pid": process.pid, "secrets": (argument.encode(), variable.encode())}
    process.kill()
    process.wait()


def _snooping_notebook(repo_root, decoy_pid):
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB01}.ipynb", as_version=4)
    index = next(i for i, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs") + 1
    notebook.cells.insert(index, nbformat.v4.new_code_cell(SNOOP.format(decoy=decoy_pid, tag=TAG).strip()))
    return json.dumps(notebook)


def _hand_in(submitted, student, text):
    folder = submitted / student / "attention"
    folder.mkdir(parents=True)
    (folder / f"{NB01}.ipynb").write_text(text, encoding="utf-8")
    return folder


def _leaks(folder, decoy):
    """The files under `folder` that hold one of the decoy's secrets (as bytes: JSON, HTML, the gradebook)."""
    found = []
    for path in sorted(path for path in folder.rglob("*") if path.is_file()):
        content = path.read_bytes()
        found += [str(path.relative_to(folder)) for secret in decoy["secrets"] if secret in content]
    return found


def _nb01_notes(out, student):
    document = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
    return next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB01)


def _view(notes):
    """The student's summary of what /proc showed: (the decoy's cmdline as read, how many pids it listed, the
    first of them)."""
    (note,) = [note for note in notes if TAG in note]
    cmdline, listed = note.split(f"{TAG} decoy=")[1].rsplit(" | ", 1)
    count, first = listed.split(" pids: ")
    return cmdline, int(count), first.rstrip("…").split(",")


def _refusal():
    """Why this kernel gives a grading child no PID namespace or no /proc of its own (None: it does), asked in a
    fresh interpreter that forks as the zygote's middle process does."""
    script = (
        "import os, sys\nfrom autograder.isolation import namespaces\n"
        "why_not = namespaces.enter_pid_namespace()\nif why_not:\n    print(why_not, end='')\n    sys.exit()\n"
        "pid = os.fork()\nif pid == 0:\n"
        "    print(namespaces.mount_own_proc(False) or '', end='', flush=True)\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr  # a refusal is an answer; a crash is a bug
    return done.stdout or None


@pytest.fixture(scope="module")
def own_pids():
    why_not = _refusal()
    if why_not is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no PID namespace with its own /proc for grading children in CI: {why_not}")
        pytest.skip(f"this kernel gives a grading child no PID namespace with its own /proc: {why_not}")


@pytest.mark.slow
def test_attnkit_grade_gives_the_student_nothing_of_another_process(own_pids, tmp_path, repo_root, decoy, caplog):
    submitted, out = tmp_path / "submitted", tmp_path / "out"
    _hand_in(submitted, "snoop", _snooping_notebook(repo_root, decoy["pid"]))
    assert cli.main(["grade", str(submitted), "--out", str(out), "--timeout", "10", "--memory", "1024"]) == 0
    assert _leaks(out, decoy) == []
    notebook = _nb01_notes(out, "snoop")
    assert _view(notebook["notes"]) == ("FileNotFoundError", 1, ["1"])  # no decoy there; the child alone, as PID 1
    assert notebook["score"] == NB01_POINTS  # the snooping cell costs nothing else
    assert "PID namespace" not in caplog.text and "/proc of their own" not in caplog.text  # no isolation note on it


@pytest.mark.slow
def test_nbgrader_autograde_gives_the_student_nothing_of_another_process(own_pids, tmp_path, repo_root, decoy):
    course = nbgrader_course.make_course(tmp_path / "course", repo_root)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"c.SandboxedExecute.timeout = {LIMITS.timeout}\n"
                     f"c.SandboxedExecute.memory_mb = {LIMITS.memory_mb}\n")
    nbgrader_course.generate_release(course)
    folder = _hand_in(tmp_path / "handed_in", "snoop", _snooping_notebook(repo_root, decoy["pid"]))
    for name in NOTEBOOKS[1:]:
        (folder / f"{name}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{name}.ipynb").read_bytes())
    nbgrader_course.submit(course, "snoop", folder)
    nbgrader_course.autograde(course)
    nbgrader_course.generate_feedback(course)
    assert nbgrader_course.read_scores(course)["snoop"][NB01] == NB01_POINTS
    assert _leaks(course, decoy) == []  # autograded/, feedback/, the gradebook, the logs
    cells = nbformat.read(course / "autograded" / "snoop" / "attention" / f"{NB01}.ipynb", as_version=4).cells
    (raised,) = [output for cell in cells for output in cell.get("outputs", ()) if output.output_type == "error"
                 and TAG in output.get("evalue", "")]
    assert raised.evalue == f"{TAG} decoy=FileNotFoundError | 1 pids: 1"


@pytest.mark.slow
def test_without_a_pid_namespace_the_student_reads_the_decoy_and_the_notes_say_so(tmp_path, repo_root, decoy):
    """The control, as where the kernel refuses the namespace: the same notebook finds the decoy's command line."""
    submitted, out = tmp_path / "submitted", tmp_path / "out"
    _hand_in(submitted, "snoop", _snooping_notebook(repo_root, decoy["pid"]))
    summary = classroom.grade_class(submitted, out, Options(limits=dataclasses.replace(LIMITS, private_pids=False)))
    cmdline, count, _first = _view(_nb01_notes(out, "snoop")["notes"])
    assert decoy["secrets"][0].decode() in cmdline and count > 2
    assert _leaks(out, decoy)  # the command line's secret is in the record and the feedback page
    assert any(note.startswith("no PID namespace for grading children (turned off: Limits.private_pids)")
               for note in summary.isolation_notes), summary.isolation_notes


def test_where_the_kernel_refuses_the_namespace_the_child_says_what_is_missing():
    """A real refusal (a seccomp filter, as a container's, refuses unshare): the note names the layer and why."""
    script = ("import json\nfrom autograder.isolation import namespaces, sandbox\n"
              "sandbox._libc().prctl(sandbox.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)\nsandbox._forbid_new_processes([])\n"
              "print(json.dumps(namespaces.process_notes(namespaces.enter_pid_namespace(), False)))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [f"no PID namespace for grading children (unshare: {os.strerror(1)}): student "
                                       "code can list the other processes in /proc and read their command lines"]
