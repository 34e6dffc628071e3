"""A departure is never lost to slowness, nor lost silently (issue 58).

The grading child waits for the grader's answer to "probed" (which failing cases to trace) while the grader judges
the notebook first. It waited a fixed 30 s: a grader slowed past that (a loaded machine, a class's other notebooks
judged in the same loop) cost a student their departure line, with nothing said anywhere. Now the child waits as
long as the notebook's own total time (the grader's deadlines, which its own judging does not use up, stop a child
that waits too long), and every departure asked for and not computed is marked in the student's record
(`departure_lost`, autograder.isolation.supervisor.Untraced) with one safe log line.

The slow grader is made deterministic here: the grader's judging of the traced exercise is delayed (a monkeypatched
sleep in `trace_request`, which the grader runs to answer "probed").
"""

import json
import logging
import time
from pathlib import Path

import nbformat
import pytest
import torch

from autograder import cli
from autograder.checking.check_types import FAILED, CheckResult
from autograder.course.exercises import NOTEBOOKS
from autograder.grading import notebooks
from autograder.integrations.nbgrader_record import read_record, record_of
from autograder.isolation import supervisor, wire
from autograder.isolation.child_task import ProbedAnswer, TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan

NB01 = NOTEBOOKS[0]
WRONG = "def softmax_naive(x):\n    return torch.exp(x) / x.sum(dim=0)\n"  # departs at the sums
OLD_FIXED_WAIT = 30.0  # what the child waited for the answer before: a grader slower than this lost the departure
HOSTILE_PATH = Path("/nowhere/st\x1b[2Judent/attention/nb.ipynb")


def _graded(tmp_path, repo_root, timeout, answer_delay):
    """`attnkit grade` of one student whose softmax_naive departs at the sums, the grader's answer to its child's
    "probed" delayed by `answer_delay` seconds (once, while judging the exercise to trace)."""
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
            cell.source = WRONG
    (tmp_path / "submitted" / "slow" / "attention").mkdir(parents=True)
    nbformat.write(notebook, tmp_path / "submitted" / "slow" / "attention" / f"{NB01}.ipynb")
    original, delayed = notebooks.trace_request, []

    def slow_trace_request(exercise_id, results, records, seed):
        if exercise_id == "softmax_naive" and not delayed:
            delayed.append(exercise_id)
            time.sleep(answer_delay)  # the grader, slowed: judging to answer "probed" takes this long
        return original(exercise_id, results, records, seed)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(notebooks, "trace_request", slow_trace_request)
        status = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"),
                           "--timeout", str(timeout), "--memory", "1024"])
    assert status == 0 and delayed == ["softmax_naive"]
    document = json.loads((tmp_path / "out" / "students" / "slow.json").read_text(encoding="utf-8"))
    return {check["id"]: check for notebook in document["notebooks"] for check in notebook["checks"]}


@pytest.mark.slow
def test_a_grader_slower_than_the_old_fixed_wait_still_gets_the_departure(tmp_path, repo_root, caplog):
    # The notebook's own total time is 4 timeouts (Limits.budget: 60 s here): the child waits that long for the
    # answer, and the grader's slowness is not the student's (its deadlines are moved by the time it judged).
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        checks = _graded(tmp_path, repo_root, timeout=15, answer_delay=OLD_FIXED_WAIT + 1)
    assert checks["softmax_naive.notes"].get("departure_step") == "sums"
    assert "departure_lost" not in checks["softmax_naive.notes"]
    assert not [record for record in caplog.records if "no departure" in record.getMessage()]


@pytest.mark.slow
def test_a_departure_lost_to_a_grader_slower_than_the_notebooks_time_is_marked_and_logged(tmp_path, repo_root,
                                                                                          caplog):
    # --timeout 5: the notebook's whole time is 20 s; a grader that answers after 21 s is past even that. The child
    # goes on without its trace; the record says the departure was not computed, and the log says why, once.
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        checks = _graded(tmp_path, repo_root, timeout=5, answer_delay=21)
    notes = checks["softmax_naive.notes"]
    assert notes["status"] == "failed" and "departure_step" not in notes
    assert notes["departure_lost"] == supervisor.Untraced.NOT_TRACED
    lines = [record.getMessage() for record in caplog.records if "no departure" in record.getMessage()]
    # the child stopped waiting and went on (its "done" read after the late answer), or had exited (a broken pipe)
    assert len(lines) == 1 and "softmax_naive" in lines[0]
    assert "stopped waiting" in lines[0] or "could not be sent" in lines[0]


# --- the grader's side: every way a departure asked for can go uncomputed is marked, with one safe log line -------


def _asked_attempt(path=HOSTILE_PATH):
    """An attempt whose child said "probed" and was asked to trace softmax_naive.notes's case 0."""
    plan = NotebookPlan(path=path, notebook=NB01, steps=(), exercises=("softmax_naive",), sha256="")
    state = supervisor._JobState(supervisor.Job("key", plan, 0), supervisor.Outcome("key", plan), 0.0)
    attempt = supervisor._Attempt(state, pid=0, fd=-1, workdir="", started=0.0)
    attempt.hello_seen = attempt.answered = True
    attempt.probed = ["softmax_naive"]
    attempt.asked = {"softmax_naive": TraceRequest("softmax_naive", "softmax_naive.notes", 0)}
    return attempt


def _one_safe_line(caplog):
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "\x1b" not in lines[0] and "\n" not in lines[0] and "softmax_naive" in lines[0]
    return lines[0]


def test_done_with_a_case_asked_for_and_never_traced_marks_it_and_logs_once(caplog):
    attempt = _asked_attempt()
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        supervisor._handle(attempt, {"event": "done"}, Limits())
    lost = attempt.job.outcome.untraced["softmax_naive"]
    assert (lost.check_id, lost.case, lost.why) == ("softmax_naive.notes", 0, supervisor.Untraced.NOT_TRACED)
    assert "stopped waiting" in _one_safe_line(caplog)
    assert attempt.kill_kind is None and attempt.job.outcome.notes == []  # graded as it was


def _stopped_trace(stopped):
    event = {"event": "trace", "exercise": "softmax_naive", "check": "softmax_naive.notes", "case": 0,
             "tensors": None, "stopped": stopped}
    return list(wire.FrameReader().feed(wire.encode(event)))[0]


@pytest.mark.parametrize(("stopped", "why"), [  # supervisor.Untraced's values
    ("time", "time"), ("error", "error"), ("cap", "cap"), ("\x1b]52;c;aGk=\x07", "stopped"), (["time"], "stopped"),
    (None, "stopped"),
])
def test_a_trace_that_stopped_is_marked_with_why_as_the_grader_reads_it(stopped, why, caplog):
    attempt = _asked_attempt()
    supervisor._handle(attempt, {"event": "start", "kind": "trace", "exercise": "softmax_naive"}, Limits())
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        supervisor._handle(attempt, _stopped_trace(stopped), Limits())
    assert attempt.job.outcome.untraced["softmax_naive"].why == why  # the child's word only from a fixed set
    assert attempt.job.outcome.traces == {}
    _one_safe_line(caplog)
    supervisor._handle(attempt, {"event": "done"}, Limits())  # nothing more is outstanding: no second line
    assert len(caplog.records) == 1


def test_a_refused_trace_is_marked_refused():
    attempt = _asked_attempt()
    supervisor._handle(attempt, {"event": "start", "kind": "trace", "exercise": "softmax_naive"}, Limits())
    event = {**_stopped_trace(""), "tensors": [["exp", torch.zeros(3, dtype=torch.int64), []]]}
    supervisor._handle(attempt, event, Limits())
    assert attempt.job.outcome.untraced["softmax_naive"].why == supervisor.Untraced.REFUSED


def test_an_answer_that_cannot_be_sent_marks_every_case_asked_for(caplog):
    attempt = _asked_attempt()
    attempt.asked = {}
    attempt.job.answer_probed = lambda outcome, exercises: ProbedAnswer(
        traces=(TraceRequest("softmax_naive", "softmax_naive.notes", 0),))
    attempt.reply_fd = -1  # a closed pipe: the child is gone
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        supervisor._answer(attempt)
    assert attempt.asked == {}
    assert attempt.job.outcome.untraced["softmax_naive"].why == supervisor.Untraced.NOT_TRACED
    _one_safe_line(caplog)


def test_a_process_stopped_while_tracing_marks_the_case_it_was_tracing(caplog):
    attempt = _asked_attempt()
    attempt.step = ("trace", "softmax_naive")
    attempt.kill_kind, attempt.kill_reason = supervisor.TIMEOUT, "ran past the 90 s wall-clock limit"
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        assert supervisor._settle(attempt, 9, Limits()) is False
    assert attempt.job.outcome.untraced["softmax_naive"].why == supervisor.Untraced.STOPPED
    assert "while tracing" in _one_safe_line(caplog)


def test_the_judged_notebook_and_its_record_say_the_departure_was_not_computed():
    from autograder.grading.departures import with_departure_lost  # here: the module's other tests run without it

    attempt = _asked_attempt(Path("/nowhere/student/attention/nb.ipynb"))
    supervisor._handle(attempt, {"event": "done"}, Limits())
    result = CheckResult("softmax_naive.notes", "softmax_naive", 0.0, 1.0, FAILED, None, "wrong", False)
    marked = with_departure_lost([result], "softmax_naive.notes",
                                 attempt.job.outcome.untraced["softmax_naive"].why)
    assert marked[0].departure_lost == "not_traced" and marked[0].departure_step == ""
    record = record_of(marked, 0)
    assert read_record({"attnkit_checks": record})[0]["departure_lost"] == "not_traced"
    record["checks"][0]["departure_lost"] = "\x1b[2J" + "x" * 500
    kept = read_record({"attnkit_checks": record})[0]["departure_lost"]
    assert "\x1b" not in kept and len(kept) <= 201



def test_the_class_report_counts_a_departure_not_computed_rather_than_leaving_the_student_out():
    from autograder.outputs.class_report import class_report_html, departure_counts

    def document(student, **check):
        return {"student_id": student, "assignment": "a", "score": 0.0, "max_score": 1.0, "notebooks": [{
            "notebook": NB01, "status": "graded", "score": 0.0, "max_score": 1.0, "checks": [{
                "id": "softmax_naive.notes", "exercise": "softmax_naive", "score": 0.0, "max_score": 1.0,
                "status": "failed", "misconception": None, "message": "", "hidden": False, **check}]}]}

    documents = [document("a", departure_step="sums"), document("b", departure_lost="not_traced")]
    counts = {(count.step, count.students) for count in departure_counts(documents)}
    assert counts == {("sums", 1), ("not_computed", 1)}
    page = class_report_html(documents)
    assert '<tr class="departure" data-step="not_computed" data-students="1">' in page and "not computed" in page


@pytest.mark.slow
def test_a_departure_never_asked_for_because_a_later_step_stopped_the_child_is_marked(tmp_path, repo_root, caplog):
    # softmax_naive is wrong and recorded; softmax_stable's probe ends the process (as a later step killed for its
    # time would): the re-run child skips softmax_naive, so its departure is never asked for. Said, not silent.
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    codes = {"solution_softmax_naive": WRONG,
             "solution_softmax_stable": "def softmax_stable(x):\n    import os\n    os._exit(70)\n"}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.source = codes.get(grade_id, cell.source)
    (tmp_path / "submitted" / "crashes" / "attention").mkdir(parents=True)
    nbformat.write(notebook, tmp_path / "submitted" / "crashes" / "attention" / f"{NB01}.ipynb")
    with caplog.at_level(logging.WARNING):
        status = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"),
                           "--timeout", "20", "--memory", "1024"])
    assert status == 0
    document = json.loads((tmp_path / "out" / "students" / "crashes.json").read_text(encoding="utf-8"))
    checks = {check["id"]: check for notebook in document["notebooks"] for check in notebook["checks"]}
    assert "departure_step" not in checks["softmax_naive.notes"]
    assert checks["softmax_naive.notes"].get("departure_lost") == "not_asked"
    lines = [record.getMessage() for record in caplog.records if "no departure traced" in record.getMessage()]
    assert any("softmax_naive" in line and "re-run" in line for line in lines)
