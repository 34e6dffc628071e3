"""The class report counts, per exercise, the first of the notes' steps each student's run departs from (issue 58).

Grading finds it without the child deciding anything: the grader judges, asks the child to trace one failing case
per exercise (a passing notebook is asked nothing), reads the tensors it sends back as hostile data and finds the
departure against the reference's steps (autograder.grading.departures). Learner-style attempts written here, not
taken from the table of mistakes: two students depart at the sums of the exponentials, one at the exponentials.
"""

import json
import logging
from pathlib import Path

import nbformat
import pytest
import torch

from autograder import cli
from autograder.checking.tensor_trace import MAX_SENT, MAX_TRACE_ELEMENTS, TracedTensor, trace_record
from autograder.course.exercises import NOTEBOOKS
from autograder.integrations.nbgrader_record import read_record, record_of
from autograder.isolation import supervisor, wire
from autograder.isolation.child_task import TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.outputs.class_report import class_report_html, departure_counts

NB01 = NOTEBOOKS[0]
LIMITS = ["--timeout", "20", "--memory", "1024"]
STUDENTS = {  # student -> their softmax_naive (None: the notes' own)
    "honest": None,
    "sum_of_inputs": "def softmax_naive(x):\n    return torch.exp(x) / x.sum(dim=0)\n",
    "divides_by_max": "def softmax_naive(x):\n    e = torch.exp(x)\n    return e / e.max(dim=0).values\n",
    "no_exp": "def softmax_naive(x):\n    return x / x.sum(dim=0)\n",
    # The same mistake as sum_of_inputs, and a trace far past the child's cap: no departure, graded the same.
    # Past the cap by its count of elements (tensors of 2,000): the child keeps at most MAX_TRACE_ELEMENTS in all (2 MiB
    # of copies), and its trace, cut before the exponentials, is no trace of the call (TensorTrace.cut_short).
    "huge_trace": ("def softmax_naive(x):\n    for _ in range(300):\n        torch.ones(2000) * 2.0\n"
                   "    return torch.exp(x) / x.sum(dim=0)\n"),
    # The same mistake again, run out of memory under the trace only, as an allocation past the child's RLIMIT_AS
    # does (torch raises, the probe records it as the case's error): the tensors traced up to there lack the
    # exponentials, and read as a departure there; the child says "error" instead (how huge_trace, its tensors of
    # 60,000 copied in memory under load, was once told "exponentials").
    "memory_out_when_traced": (
        "def softmax_naive(x):\n    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack\n"
        "    y = x * 1.0\n"
        "    if 'TensorTrace' in [type(mode).__name__ for mode in _get_current_dispatch_mode_stack()]:\n"
        "        raise RuntimeError('DefaultCPUAllocator: not enough memory: you tried to allocate 480000 bytes.')\n"
        "    return torch.exp(y) / y.sum(dim=0)\n"),
}


def _notebook(source, code):
    notebook = nbformat.read(source, as_version=4)
    if code is not None:
        for cell in notebook.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_softmax_naive":
                cell.source = code
    return notebook


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory, repo_root):
    """`attnkit grade` of the class, with which students' children were asked to trace and what came back."""
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    root = tmp_path_factory.mktemp("departures")
    for student, code in STUDENTS.items():
        (root / "submitted" / student / "attention").mkdir(parents=True)
        nbformat.write(_notebook(source, code), root / "submitted" / student / "attention" / f"{NB01}.ipynb")
    asked, kept = {}, {}
    answer, keep = supervisor._answer, supervisor._keep_trace

    def answering(attempt):
        answer(attempt)
        asked[_student(attempt)] = sorted(attempt.asked)

    def keeping(attempt, request, event):
        keep(attempt, request, event)
        kept[_student(attempt)] = sorted(attempt.job.outcome.traces)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(supervisor, "_answer", answering)
        patch.setattr(supervisor, "_keep_trace", keeping)
        status = cli.main(["grade", str(root / "submitted"), "--out", str(root / "out"), *LIMITS])
    documents = {path.stem: json.loads(path.read_text(encoding="utf-8"))
                 for path in (root / "out" / "students").glob("*.json")}
    return {"status": status, "documents": documents, "asked": asked, "kept": kept, "out": root / "out"}


def _student(attempt):
    return Path(attempt.job.job.plan.path).parts[-3]


def _steps(document):
    return {check["id"]: check["departure_step"] for notebook in document["notebooks"]
            for check in notebook["checks"] if "departure_step" in check}


@pytest.mark.slow
def test_the_class_report_counts_students_by_their_first_departing_step(graded_class):
    assert graded_class["status"] == 0
    counts = {(count.exercise, count.step, count.students) for count in departure_counts(
        list(graded_class["documents"].values()))}
    # huge_trace's and memory_out_when_traced's departures were asked for and not computed: counted
    # (test_lost_departure)
    assert counts == {("softmax_naive", "sums", 2), ("softmax_naive", "exponentials", 1),
                      ("softmax_naive", "not_computed", 2)}
    page = (graded_class["out"] / "class_report.html").read_text(encoding="utf-8")
    assert '<tr class="departure" data-step="sums" data-students="2">' in page
    assert "sums of the exponentials" in page and "指数之和" in page
    assert '<tr class="departure" data-step="exponentials" data-students="1">' in page


@pytest.mark.slow
def test_each_failing_student_departs_at_its_own_step_on_one_check(graded_class):
    documents = graded_class["documents"]
    assert _steps(documents["sum_of_inputs"]) == {"softmax_naive.notes": "sums"}
    assert _steps(documents["divides_by_max"]) == {"softmax_naive.notes": "sums"}
    assert _steps(documents["no_exp"]) == {"softmax_naive.notes": "exponentials"}


@pytest.mark.slow
def test_a_passing_student_is_asked_to_trace_nothing(graded_class):
    assert graded_class["asked"]["honest"] == []
    assert "honest" not in graded_class["kept"]  # no trace came back either
    assert _steps(graded_class["documents"]["honest"]) == {}
    assert graded_class["asked"]["no_exp"] == ["softmax_naive"]  # one case per failing exercise, no more


@pytest.mark.slow
def test_a_trace_past_the_childs_cap_costs_only_the_departure(graded_class):
    documents = graded_class["documents"]
    assert graded_class["asked"]["huge_trace"] == ["softmax_naive"]
    assert graded_class["kept"]["huge_trace"] == []  # its child said "no trace": past its cap
    assert _steps(documents["huge_trace"]) == {}
    assert [check.get("departure_lost") for notebook in documents["huge_trace"]["notebooks"]
            for check in notebook["checks"] if check.get("departure_lost")] == ["cap"]  # said, with why
    assert documents["huge_trace"]["score"] == documents["sum_of_inputs"]["score"]


@pytest.mark.slow
def test_a_trace_whose_run_stopped_early_costs_only_the_departure(graded_class):
    documents = graded_class["documents"]
    assert graded_class["asked"]["memory_out_when_traced"] == ["softmax_naive"]
    assert graded_class["kept"]["memory_out_when_traced"] == []  # its child said "error", and sent no tensors
    assert _steps(documents["memory_out_when_traced"]) == {}
    assert [check.get("departure_lost") for notebook in documents["memory_out_when_traced"]["notebooks"]
            for check in notebook["checks"] if check.get("departure_lost")] == ["error"]
    assert documents["memory_out_when_traced"]["score"] == documents["sum_of_inputs"]["score"]


# --- the grader's side of the protocol: a trace is hostile data ---------------------------------------------------


def _tracing_attempt():
    """An attempt whose child was asked to trace softmax_naive.notes's case 0 and is running that step."""
    plan = NotebookPlan(path=Path("/nowhere/student/attention/nb.ipynb"), notebook=NB01, steps=(),
                        exercises=("softmax_naive",), sha256="")
    state = supervisor._JobState(supervisor.Job("key", plan, 0), supervisor.Outcome("key", plan), 0.0)
    attempt = supervisor._Attempt(state, pid=0, fd=-1, workdir="", started=0.0)
    attempt.hello_seen = attempt.answered = True
    attempt.probed = ["softmax_naive"]
    attempt.asked = {"softmax_naive": TraceRequest("softmax_naive", "softmax_naive.notes", 0)}
    attempt.step = ("trace", "softmax_naive")
    return attempt


def _sent(tensors):
    """A trace event as the grader reads it off the channel: encoded and decoded by the wire."""
    event = {"event": "trace", "exercise": "softmax_naive", "check": "softmax_naive.notes", "case": 0,
             "tensors": tensors}
    return list(wire.FrameReader().feed(wire.encode(event)))[0]


def _entry(value, op="exp", inputs=()):
    return [op, value, list(inputs)]


HOSTILE_TRACES = {
    "not a list": "\x1b[2J a string",
    "too many tensors": [_entry(torch.zeros(1, dtype=torch.float64)) for _ in range(MAX_SENT + 1)],
    "too many elements": [_entry(torch.zeros(60_000, dtype=torch.float64)) for _ in range(5)],
    "one tensor too large": [_entry(torch.zeros(70_000, dtype=torch.float64))],
    "an int tensor": [_entry(torch.zeros(3, dtype=torch.int64))],
    "a float32 tensor": [_entry(torch.zeros(3))],
    "an op that is not a str": [[7, torch.zeros(3, dtype=torch.float64), []]],
    "an op name of 10,000 characters": [_entry(torch.zeros(3, dtype=torch.float64), op="x" * 10_000)],
    "an input read from the future": [_entry(torch.zeros(3, dtype=torch.float64), inputs=[1]),
                                      _entry(torch.zeros(3, dtype=torch.float64))],
    "an input that is a bool": [_entry(torch.zeros(3, dtype=torch.float64)),
                                _entry(torch.zeros(3, dtype=torch.float64), inputs=[True])],
    "an entry of four fields": [[*_entry(torch.zeros(3, dtype=torch.float64)), "more"]],
}


@pytest.mark.parametrize("kind", HOSTILE_TRACES)
def test_a_hostile_trace_is_refused_with_one_safe_log_line(kind, caplog):
    attempt = _tracing_attempt()
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        supervisor._handle(attempt, _sent(HOSTILE_TRACES[kind]), Limits())
    assert attempt.job.outcome.traces == {}
    assert attempt.step is None and attempt.kill_kind is None  # the notebook is graded as it was
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "refused" in lines[0] and "\x1b" not in lines[0] and "\n" not in lines[0]
    assert len(lines[0]) < 600


def test_a_well_formed_trace_is_kept():
    attempt = _tracing_attempt()
    traced = [TracedTensor("input", torch.ones(3, dtype=torch.float64), ()),
              TracedTensor("exp", torch.ones(3, dtype=torch.float64), (0,))]
    supervisor._handle(attempt, _sent(trace_record(traced)), Limits())
    kept = attempt.job.outcome.traces["softmax_naive"]
    assert (kept.check_id, kept.case, [entry.op for entry in kept.tensors]) == ("softmax_naive.notes", 0,
                                                                                 ["input", "exp"])
    assert kept.tensors[1].inputs == (0,)


def test_a_trace_of_a_case_not_asked_for_stops_the_child():
    attempt = _tracing_attempt()
    event = {**_sent([]), "case": 3}
    with pytest.raises(wire.ProtocolError):
        supervisor._handle(attempt, event, Limits())


def test_a_probed_sent_before_the_exercises_stops_the_child_as_a_forged_event_does():
    attempt = _tracing_attempt()
    attempt.answered, attempt.step, attempt.asked = False, None, {}
    with pytest.raises(wire.ProtocolError, match="before its exercises"):
        supervisor._handle(attempt, {"event": "probed"}, Limits())
    assert not attempt.answered
    attempt.job.outcome.records["softmax_naive"] = {}
    supervisor._handle(attempt, {"event": "probed"}, Limits())
    assert attempt.answered and attempt.asked == {}  # no caller's judge here: nothing to trace
    with pytest.raises(wire.ProtocolError):  # no exercise or cell after it
        supervisor._handle(attempt, {"event": "start", "kind": "exercise", "exercise": "softmax_naive"}, Limits())


def test_the_child_sends_no_trace_past_its_cap():
    entry = TracedTensor("mul", torch.zeros(60_000, dtype=torch.float64), ())
    assert trace_record([entry] * (MAX_TRACE_ELEMENTS // 60_000)) is not None
    assert trace_record([entry] * (MAX_TRACE_ELEMENTS // 60_000 + 1)) is None


def test_the_nbgrader_record_keeps_a_departing_step_and_refuses_an_ill_typed_one():
    from autograder.checking.check_types import FAILED, CheckResult

    result = CheckResult("softmax_naive.notes", "softmax_naive", 0.0, 1.0, FAILED, None, "wrong", False,
                         departure_step="sums")
    record = record_of([result], 0)
    assert read_record({"attnkit_checks": record})[0]["departure_step"] == "sums"
    record["checks"][0]["departure_step"] = ["sums"]
    assert "departure_step" not in read_record({"attnkit_checks": record})[0]
    record["checks"][0]["departure_step"] = "\x1b[2J" + "s" * 500
    step = read_record({"attnkit_checks": record})[0]["departure_step"]
    assert "\x1b" not in step and len(step) <= 201


def test_the_report_shows_a_step_it_does_not_know_escaped():
    document = {"student_id": "s", "assignment": "a", "score": 0.0, "max_score": 1.0, "notebooks": [{
        "notebook": NB01, "status": "graded", "score": 0.0, "max_score": 1.0, "checks": [{
            "id": "softmax_naive.notes", "exercise": "softmax_naive", "score": 0.0, "max_score": 1.0,
            "status": "failed", "misconception": None, "message": "", "hidden": False,
            "departure_step": "<script>alert(1)</script>"}]}]}
    page = class_report_html([document])
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page


HANGS_WHEN_TRACED = """def softmax_naive(x):
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    if type(_get_current_dispatch_mode()).__name__ == "TensorTrace":  # hang in the trace only, catching the alarm
        import time
        while True:
            try:
                time.sleep(0.01)
            except BaseException:
                pass
    return torch.exp(x) / x.sum(dim=0)
"""


@pytest.mark.slow
def test_a_trace_that_never_ends_is_killed_and_costs_only_the_departure(tmp_path, repo_root, caplog):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    for student, code in {"hangs": HANGS_WHEN_TRACED, "same_mistake": STUDENTS["sum_of_inputs"]}.items():
        (tmp_path / "submitted" / student / "attention").mkdir(parents=True)
        nbformat.write(_notebook(source, code), tmp_path / "submitted" / student / "attention" / f"{NB01}.ipynb")
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        status = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out"), "--timeout", "5",
                           "--memory", "1024"])
    documents = {path.stem: json.loads(path.read_text(encoding="utf-8"))
                 for path in (tmp_path / "out" / "students").glob("*.json")}
    assert status == 0
    assert _steps(documents["hangs"]) == {} and _steps(documents["same_mistake"]) == {"softmax_naive.notes": "sums"}
    assert documents["hangs"]["score"] == documents["same_mistake"]["score"]
    notebook = documents["hangs"]["notebooks"][0]
    assert notebook["notes"] == []  # the notebook's grading says nothing of it: only the log does
    lines = [record.getMessage() for record in caplog.records if "while tracing" in record.getMessage()]
    assert len(lines) == 1 and "hangs" in lines[0]
