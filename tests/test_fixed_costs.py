"""A class run's fixed costs and the gaps between its children, cut without moving a defence (issue 59,
docs/performance.md): the same protected lines found faster, and a child that said "done" let go at once."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import NotebookInput
from autograder.isolation import supervisor, withholding
from autograder.isolation.child_task import TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.isolation.protected import check_locations, checkout_root, reference_locations
from autograder.isolation.supervisor import Job, Outcome


def test_inside_is_a_folder_itself_or_below_it_part_by_part():
    folders = {Path("/a/course/ex1").parts, Path("/a/solutions").parts}
    assert withholding._inside(Path("/a/solutions"), folders)
    assert withholding._inside(Path("/a/course/ex1/declaration.py"), folders)
    assert not withholding._inside(Path("/a/course/ex10/declaration.py"), folders)  # a prefix of a name is not one
    assert not withholding._inside(Path("/a/course"), folders)
    assert not withholding._inside(Path("/a/solutions.py"), folders)


def test_the_protected_lines_are_those_the_parents_walk_finds():
    """The public lines left out of the protected ones are the same as when every path's parents were compared."""
    root = checkout_root()
    hidden = set(reference_locations()) | set(check_locations())
    walked = {path for path in (root / "autograder").rglob("*.py")
              if not any(package == path or package in path.parents for package in hidden)}
    compared = {path for path in (root / "autograder").rglob("*.py")
                if not withholding._inside(path, {package.parts for package in hidden})}
    assert walked == compared and len(compared) > 100
    kept = withholding._kept(["short", "   " + "x " * 30, "a" * 23 + "  ", "  " + "b" * 24])
    assert kept == {" ".join(("x " * 30).split()), "b" * 24}


# --- a child that said "done" with everything told gives its place up at once ---------------------------------

NB01 = NOTEBOOKS[0]
NB01_EXERCISES = tuple(exercise.id for exercise in EXERCISES if exercise.notebook == NB01)
LIMITS = Limits(timeout=30, budget_factor=4, workers=2)


@pytest.fixture
def sleeper():
    """A process standing in for a grading child (its own process group, as a child is): it would sleep a minute."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def _attempt(pid: int) -> supervisor._Attempt:
    plan = NotebookPlan(Path("alice/01.ipynb"), NB01, (), NB01_EXERCISES, "")
    state = supervisor._JobState(Job("key", plan, 0), Outcome("key", plan), time.monotonic() + 100)
    return supervisor._Attempt(state, pid=pid, fd=-1, workdir="", started=0.0, hello_seen=True)


def _probed(attempt: supervisor._Attempt) -> None:
    """The child probed its exercises and its "probed" was answered with nothing to trace."""
    for exercise_id in NB01_EXERCISES:
        attempt.job.outcome.records[exercise_id] = {}
    attempt.answered = True


def test_a_child_done_with_everything_told_is_ended_and_its_exit_is_no_kill(sleeper):
    attempt = _attempt(sleeper.pid)
    _probed(attempt)
    supervisor._handle(attempt, {"event": "done"}, LIMITS)
    assert attempt.released
    assert sleeper.wait(timeout=10) == -signal.SIGKILL  # nothing of the student's runs on beside the next child
    assert supervisor._settle(attempt, signal.SIGKILL.value, LIMITS) is False  # finished, as if it had exited
    assert attempt.kill_kind is None and attempt.job.outcome.notes == []


@pytest.mark.parametrize("told", ["nothing probed yet", "a trace still asked for"])
def test_a_done_before_everything_is_told_frees_no_place(sleeper, told):
    """Student code can write a "done" frame itself: before the child's "probed" is answered, or while a trace it was
    asked for is still to come, that child keeps its worker's place until it is reaped, as every child did."""
    attempt = _attempt(sleeper.pid)
    if told == "a trace still asked for":
        _probed(attempt)
        attempt.asked = {NB01_EXERCISES[0]: TraceRequest(NB01_EXERCISES[0], "check", 0)}
    supervisor._handle(attempt, {"event": "done"}, LIMITS)
    assert not attempt.released and attempt.done
    with pytest.raises(subprocess.TimeoutExpired):
        sleeper.wait(timeout=0.3)
    assert not supervisor._place_free({1: attempt, 2: _attempt(-1)}, LIMITS)


def test_released_children_hold_no_worker_place_but_no_more_than_workers_may_be_exiting():
    running, released = _attempt(-1), [_attempt(-1) for _ in range(3)]
    for attempt in released:
        attempt.released = True
    assert supervisor._place_free({1: running}, LIMITS)
    assert supervisor._place_free({1: running, 2: released[0], 3: released[1]}, LIMITS)
    assert not supervisor._place_free({1: running, 2: _attempt(-1)}, LIMITS)
    assert not supervisor._place_free({1: running, **{i + 2: attempt for i, attempt in enumerate(released)}}, LIMITS)


def test_each_student_s_largest_notebook_is_graded_first_so_a_class_run_ends_on_a_short_one(tmp_path):
    sizes = dict(zip(NOTEBOOKS, (10, 300, 50, 300), strict=True))
    inputs = []
    for notebook, size in sizes.items():
        (tmp_path / f"{notebook}.ipynb").write_bytes(b"x" * size)
        inputs.append(NotebookInput(("s", notebook), tmp_path / f"{notebook}.ipynb", notebook))
    inputs.append(NotebookInput(("s", "gone"), tmp_path / "gone.ipynb", None))  # vanished since the intake: last
    ordered = [item.key[1] for item in classroom._largest_first(inputs)]
    assert ordered == [NOTEBOOKS[1], NOTEBOOKS[3], NOTEBOOKS[2], NOTEBOOKS[0], "gone"]  # equal sizes: course order


def test_a_released_child_slow_to_exit_is_not_said_to_have_run_out_of_time(sleeper):
    """Its teardown may outlast the grace a "done" gives (a large address space on a loaded box): it was ended by the
    grader, so its notebook gets no time note and no warning, as a child that exits in time."""
    attempt = _attempt(sleeper.pid)
    _probed(attempt)
    supervisor._handle(attempt, {"event": "done"}, LIMITS)
    supervisor._enforce_deadlines(attempt, time.monotonic() + LIMITS.grace + 1, LIMITS)
    assert attempt.kill_kind is None
    assert supervisor._settle(attempt, signal.SIGKILL.value, LIMITS) is False and attempt.job.outcome.notes == []
