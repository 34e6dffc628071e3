"""One child cannot slow another: a CPU share per child, step limits in the child's own CPU time, endings named.

A class of one attacker and three solved classmates, graded by the real supervisor with workers=2: the attacker's
cell starts 127 threads that hash in C with the GIL released (all of a 2-core machine, and more), and leaves them
spinning through the rest of its notebook. Every classmate keeps full marks with no time-limit note (the step
limit counts the classmate's own CPU time, and its cgroup gets the same CPU share as the attacker's, whatever the
attacker's number of threads); the attacker's notes name the limit it reached: CPU time. Nothing here asserts on
timings: a loaded machine may slow everyone, and the classmates' notes must stay the same.

The kernel's own accounting is tested on its own: a process moved into a child's cgroup is counted there
(cpuacct.usage or cpu.stat), and /proc's count, the fallback, grows with the process's CPU time. How an attempt
that the kernel killed is told (its memory cgroup's OOM kill, RLIMIT_CPU) is tested on the supervisor's records.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.isolation import cgroups, supervisor
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.isolation.step_clock import StepClock, StepLimit, process_cpu_seconds
from autograder.isolation.supervisor import Job, Outcome

NB01 = NOTEBOOKS[0]
NB01_EXERCISES = tuple(exercise.id for exercise in EXERCISES if exercise.notebook == NB01)
NB01_POINTS = sum(exercise.points for exercise in EXERCISES if exercise.notebook == NB01)
# A wall-clock limit far past the CPU one: on a loaded machine the spinner still reaches its CPU limit first.
LIMITS = Limits(timeout=4.0, wall_factor=5.0, memory_mb=1024, grace=1.0, budget_factor=8.0, workers=2)
CLASSMATES = ("b_solved", "c_solved", "d_solved")
# Notes that say a time limit was reached, in any of the grader's words.
TIME_WORDS = ("limit", "interrupted", "total time", "did not stop", "re-run", "killed")

# Stops its threads once its cell is stopped, so that the class run stays short: a spinner that never stops them is
# stopped at each of its later steps the same way (its process's CPU time counts every thread).
SPINNERS = '''import ctypes, hashlib, threading
ctypes.CDLL(None).mallopt(-8, 1)  # M_ARENA_MAX: no 64 MB malloc arena per thread, all fit in the memory limit
threading.stack_size(1 << 18)
data = b"x" * (1 << 20)
stop = threading.Event()
def spin():
    while not stop.is_set():
        hashlib.sha256(data).digest()  # C code, the GIL released: every thread runs at once
try:
    for _ in range(127):
        threading.Thread(target=spin, daemon=True).start()
except RuntimeError:
    pass  # the pids cgroup's limit
try:
    stop.wait()
finally:
    stop.set()
'''
# A classmate's honest cell that computes for a while (about 0.3 s of one core): slowed 64 times by the spinner's
# threads, as the kernel shares the cores between threads unless each child has its own share, it would run past
# a 4 s wall-clock limit.
WORKS_A_WHILE = "total = sum(i * i for i in range(3 * 10**6))"


def _notebook(source, code=None):
    notebook = nbformat.read(source, as_version=4)
    if code is not None:
        index = next(i for i, cell in enumerate(notebook.cells)
                     if cell.metadata.get("nbgrader", {}).get("grade_id") == "given_inputs")
        notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(code))
    return notebook


@pytest.fixture(scope="module")
def spun_class(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("spun")
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    students = {"a_spinner": SPINNERS, **dict.fromkeys(CLASSMATES, WORKS_A_WHILE)}
    for student, code in students.items():
        folder = root / "submitted" / student / "attention"
        folder.mkdir(parents=True)
        (folder / f"{NB01}.ipynb").write_text(json.dumps(_notebook(source, code)), encoding="utf-8")
    summary = classroom.grade_class(root / "submitted", root / "out", Options(limits=LIMITS))
    return {document["student_id"]: document for document in summary.documents}


def _notes(document):
    return [note for notebook in document["notebooks"] for note in notebook["notes"]]


@pytest.mark.parametrize("classmate", CLASSMATES)
@pytest.mark.slow
def test_a_classmate_of_a_spinner_keeps_full_marks_and_no_time_note(spun_class, classmate):
    document = spun_class[classmate]
    assert document["score"] == NB01_POINTS, _notes(document)
    timed = [note for note in _notes(document) if any(word in note for word in TIME_WORDS)]
    assert timed == []


@pytest.mark.slow
def test_the_spinner_is_stopped_by_its_own_cpu_time_and_told_so(spun_class):
    notes = _notes(spun_class["a_spinner"])
    assert any("limit of CPU time" in note for note in notes), notes
    assert not any("memory" in note or "wall-clock" in note for note in notes), notes


def _a_cgroup_run():
    child_cgroups, why_not = cgroups.ChildCgroups.open(2**30)
    if child_cgroups is None:
        pytest.skip(f"no writable cgroup on this machine: {why_not}")
    return child_cgroups


def _has_cpu_controller():
    v2 = cgroups.CGROUP_ROOT / "cgroup.controllers"
    if v2.exists():
        return "cpu" in v2.read_text(errors="replace").split()
    return (cgroups.CGROUP_ROOT / "cpu" / "cgroup.procs").exists()


def test_every_child_gets_a_cpu_share_where_the_machine_has_the_cpu_controller():
    child_cgroups = _a_cgroup_run()
    try:
        if not _has_cpu_controller():
            pytest.skip("no cpu controller on this machine")
        assert child_cgroups.shares_cpu
        folders = child_cgroups.make()
        shares = [folder / name for folder in folders for name in cgroups.CPU_SHARE_FILES if (folder / name).exists()]
        assert shares and all(int(path.read_text()) in (cgroups.CPU_SHARES, cgroups.CPU_WEIGHT) for path in shares)
        child_cgroups.leave(folders)
    finally:
        child_cgroups.close()


SPIN_HALF_A_SECOND = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end:\n    pass\n"


def test_the_kernel_counts_a_child_s_cpu_time_in_its_cgroup():
    child_cgroups = _a_cgroup_run()
    try:
        folders = child_cgroups.make()
        before = cgroups.cpu_seconds(folders)
        if before is None:
            pytest.skip("no cgroup on this machine counts CPU time")
        process = subprocess.Popen([sys.executable, "-c", f"import time\ntime.sleep(0.3)\n{SPIN_HALF_A_SECOND}"])
        try:
            for folder in folders:  # as cgroups.join moves a child, from outside
                (folder / "cgroup.procs").write_text(str(process.pid))
        finally:
            assert process.wait(timeout=60) == 0
        counted = cgroups.cpu_seconds(folders)
        assert counted is not None and counted - before >= 0.4
        child_cgroups.leave(folders)
    finally:
        child_cgroups.close()


def test_the_grader_reads_a_child_s_cpu_count_from_the_one_file_that_answered(tmp_path):
    """The loop reads a running child's count after every batch of events (its CPU deadline): the file that answered
    is read alone, afresh each time, and every folder is tried again, in order, once it no longer answers."""
    memory, cpu, cpuacct = folders = tuple(tmp_path / name for name in ("memory", "cpu", "cpuacct"))
    for folder in folders:
        folder.mkdir()
    (cpu / "cpu.stat").write_text("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n")  # v1's: no usage
    (cpuacct / "cpuacct.usage").write_text("1500000000\n")
    counter = cgroups.CpuCounter(folders)
    assert counter.seconds() == cgroups.cpu_seconds(folders) == 1.5
    (cpuacct / "cpuacct.usage").write_text("2500000000\n")
    (memory / "cpu.stat").write_text("usage_usec 9000000\n")  # a folder before it: not read while cpuacct answers
    assert counter.seconds() == 2.5
    assert cgroups.cpu_seconds(folders) == 9.0  # a fresh search takes the first folder that counts
    (cpuacct / "cpuacct.usage").unlink()
    (memory / "cpu.stat").write_text("usage_usec 3000000\nuser_usec 2000000\n")  # v2's
    assert counter.seconds() == 3.0
    (memory / "cpu.stat").write_text("user_usec 2000000\n")
    assert counter.seconds() is None and cgroups.cpu_seconds(folders) is None


def test_proc_counts_every_thread_s_cpu_time_where_no_cgroup_does():
    spin_thread = SPIN_HALF_A_SECOND.replace("process_time", "thread_time")
    process = subprocess.Popen([sys.executable, "-c", "import threading\n" + "\n".join(
        ["def spin():", *[f"    {line}" for line in spin_thread.splitlines()],
         "threads = [threading.Thread(target=spin) for _ in range(2)]", "[t.start() for t in threads]",
         "[t.join() for t in threads]", "import sys; sys.stdin.read()"])], stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while process_cpu_seconds(process.pid) < 0.9 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_cpu_seconds(process.pid) >= 0.9  # two threads of 0.5 s each, the main thread's not needed
    finally:
        process.communicate(b"", timeout=60)
    assert process_cpu_seconds(-1) == 0.0


def test_a_step_clock_reaches_its_cpu_limit_on_cpu_time_not_on_waiting():
    waiting = StepClock.start(StepLimit(cpu_seconds=0.2, wall_seconds=60))
    time.sleep(0.3)
    assert waiting.reached() is None
    spinning = StepClock.start(StepLimit(cpu_seconds=0.2, wall_seconds=60))
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    assert spinning.reached() == "cpu"
    assert StepClock.start(StepLimit(cpu_seconds=60, wall_seconds=0.0)).reached() == "wall"


# --- how an attempt the kernel killed is told ----------------------------------------------------------


def _attempt(**fields):
    plan = NotebookPlan(Path("alice/01.ipynb"), NB01, (), NB01_EXERCISES, "")
    state = supervisor._JobState(Job("key", plan, 0), Outcome("key", plan), time.monotonic() + 100)
    return supervisor._Attempt(state, pid=-1, fd=-1, workdir="", started=0.0, step=("cell", 3), hello_seen=True,
                               **fields)


def test_an_oom_kill_in_the_child_s_cgroup_is_told_as_its_memory_limit():
    attempt = _attempt(limits_reached=cgroups.LimitsReached(memory=True))
    supervisor._settle(attempt, signal.SIGKILL.value, LIMITS)
    assert attempt.job.outcome.notes[0].startswith("cell 3: was killed at its memory limit (SIGKILL")


def test_a_child_killed_at_its_rlimit_cpu_is_told_so_not_out_of_memory():
    attempt = _attempt(cpu_limit=17.0, cpu_used=17.0)
    supervisor._settle(attempt, signal.SIGKILL.value, LIMITS)
    [note] = attempt.job.outcome.notes
    assert "used up the 17 s of CPU time" in note and "memory" not in note


def test_a_sigkill_of_unknown_cause_is_not_guessed():
    attempt = _attempt(cpu_limit=17.0, cpu_used=2.0, limits_reached=cgroups.LimitsReached(pids=True))
    supervisor._settle(attempt, signal.SIGKILL.value, LIMITS)
    [note] = attempt.job.outcome.notes
    assert "was killed (SIGKILL) (it had reached its limit of" in note and "memory" not in note



@pytest.mark.slow
def test_without_a_cpu_share_the_children_run_below_the_grader(tmp_path, repo_root):
    """The fallback (here: no cgroup at all, Limits.memory_cgroup=False): the child runs at nice 5, and a step
    that ignores its alarm is still killed at its own CPU time, which the parent reads from /proc (the wall-clock
    limit, sixty times longer, is not what stops it)."""
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    folder = tmp_path / "submitted" / "niced" / "attention"
    folder.mkdir(parents=True)
    reads_its_niceness = "import os\nraise RuntimeError(f'NICE {os.nice(0)}')"
    spins = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)  # only the parent's kill stops it\n" \
            "while True:\n    pass"
    notebook = _notebook(source, reads_its_niceness)
    notebook.cells.append(nbformat.v4.new_code_cell(spins))
    (folder / f"{NB01}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    # Wall-clock limits far past the CPU one: at nice 5 on a loaded machine the child may get a small share of a
    # core, and its step must still reach its 2 s of CPU time before any wall-clock limit or the notebook's budget.
    limits = Limits(timeout=2.0, wall_factor=60.0, memory_mb=1024, grace=1.0, budget_factor=120.0, workers=1,
                    memory_cgroup=False)
    [document] = classroom.grade_class(tmp_path / "submitted", tmp_path / "out", Options(limits=limits)).documents
    notes = _notes(document)
    assert any(f"NICE {supervisor.CHILD_NICE}" in note for note in notes), notes
    assert any("ran past the 2 s limit of CPU time and did not stop" in note for note in notes), notes
    assert document["score"] == NB01_POINTS
