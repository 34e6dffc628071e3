"""A grading child reads the own slopes of gradients only for the checks that failed (issue 59, slopes-child).

Its probes run inside probing.own_slopes_later(); the grader's answer to "probed" names each exercise's failed
checks (child_task.ProbedAnswer); the child probes them once more with the slopes read and sends the slope fields
alone ("slopes"), which the supervisor reads as hostile data (bools at the places the probes write them, in the
cases recorded) and notebooks._judge takes into the records before it judges. A forged, oversized or ill-typed
"slopes" is refused with one safe log line and costs the student nothing but the cause of a wrong gradient; so does
a child that stops before sending it. The grade is never changed by either.
"""

import json
import logging
from pathlib import Path

import nbformat
import pytest
import torch

from autograder import cli
from autograder.checking.probing import OWN_SLOPE_FIELDS, own_slopes_later, own_slopes_only, with_own_slopes_of
from autograder.course.exercises import NOTEBOOKS
from autograder.course.shared.plan import with_own_slopes_taken
from autograder.grading import notebooks
from autograder.isolation import supervisor, wire
from autograder.isolation.child_task import REPLY_HEADER, ProbedAnswer, TraceRequest
from autograder.isolation.limits import Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.running.runner import ClassExpectations, judge_exercise, probe_exercise

NB01 = NOTEBOOKS[0]
HOSTILE_PATH = Path("/nowhere/st\x1b[2Judent/attention/nb.ipynb")
CUT_SENTENCE = "where autograd does not record"
FROZEN = ("def context_vectors(inputs):\n"
          "    with torch.no_grad():\n"
          "        weights = torch.softmax(inputs @ inputs.T, dim=-1)\n"
          "    return weights @ inputs\n")


def context_vectors_weights_frozen(inputs):
    """Right values; the weights computed under no_grad, so the gradient through them is missing."""
    with torch.no_grad():
        weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs


def _judged(records):
    results = judge_exercise("context_vectors", records, seed=0, lang="en", expectations=ClassExpectations())
    return [(result.id, result.score, result.status, result.misconception, result.message) for result in results]


# --- what the child sends, and how the grader takes it in ----------------------------------------------------------


def test_the_slope_fields_alone_taken_into_the_first_records_judge_as_the_slopes_read_at_once():
    namespace = {"context_vectors": context_vectors_weights_frozen}
    with_slopes = probe_exercise("context_vectors", namespace, seed=0)
    with own_slopes_later():
        without = probe_exercise("context_vectors", namespace, seed=0)
    sent = {check_id: [own_slopes_only(data) for data in per_case] for check_id, per_case in with_slopes.items()}
    assert any(case for per_case in sent.values() for case in per_case)
    assert all(set(case) <= {"gradient_is_own_slope"} for per_case in sent.values() for case in per_case)
    read_at_once, taken = _judged(with_slopes), _judged(with_own_slopes_taken(without, sent))
    assert taken == read_at_once
    assert any(CUT_SENTENCE in message for *_, message in taken)
    # Without them (a child that stopped first): the same scores and statuses, no cause proven.
    left = _judged(without)
    assert [row[:3] for row in left] == [row[:3] for row in read_at_once]
    assert not any(CUT_SENTENCE in message for *_, message in left)


def test_own_slopes_only_keeps_the_slopes_at_their_places_and_nothing_else():
    record = {"output": torch.ones(2), "gradient_is_own_slope": False, "calls": ["a"],
              "backward": {"parameters": {"W": torch.ones(1)}, "state": {"W": torch.ones(1)},
                           "input_own_slope": True, "own_slopes": {"W": False}},
              "other": {"nothing": 1}}
    only = own_slopes_only(record)
    assert only == {"gradient_is_own_slope": False,
                    "backward": {"input_own_slope": True, "own_slopes": {"W": False}}}
    first = {key: value for key, value in record.items() if key != "gradient_is_own_slope"}
    first["backward"] = {"parameters": record["backward"]["parameters"], "state": record["backward"]["state"]}
    merged = with_own_slopes_of(first, only)
    assert merged["gradient_is_own_slope"] is False and merged["backward"]["own_slopes"] == {"W": False}
    assert own_slopes_only({"output": 1}) == {} and own_slopes_only("not a record") == {}


def test_the_answer_to_probed_reads_back_as_written_and_nothing_else():
    answer = ProbedAnswer({"context_vectors": ("context_vectors.values", "context_vectors.gradient")},
                          (TraceRequest("softmax_naive", "softmax_naive.notes", 2),))
    data = answer.encoded()
    (length,) = REPLY_HEADER.unpack(data[:REPLY_HEADER.size])
    assert ProbedAnswer.decoded(data[REPLY_HEADER.size:REPLY_HEADER.size + length]) == answer
    for written in (b"[]", b'[["softmax_naive", "softmax_naive.notes", 0]]', b'{"slopes": 1, "trace": []}',
                    b'{"slopes": [], "trace": [["a", "b"]]}', b"not json"):
        with pytest.raises((ValueError, TypeError, KeyError)):
            ProbedAnswer.decoded(written)


def _answered_attempt(records=None, slopes_asked=None, path=HOSTILE_PATH):
    """An attempt whose child said "probed" and was asked for the own slopes of context_vectors's failed checks."""
    plan = NotebookPlan(path=path, notebook=NB01, steps=(), exercises=("context_vectors",), sha256="")
    state = supervisor._JobState(supervisor.Job("key", plan, 0), supervisor.Outcome("key", plan), 0.0)
    state.outcome.records["context_vectors"] = records if records is not None else {
        "context_vectors.gradient": [{"output": torch.ones(2)}, {"output": torch.ones(2)}],
        "context_vectors.values": [{"output": torch.ones(2)}],
        "context_vectors.module": [{"backward": {"state": {"W": torch.ones(1)}, "parameters": {}}}]}
    attempt = supervisor._Attempt(state, pid=0, fd=-1, workdir="", started=0.0)
    attempt.hello_seen = attempt.answered = True
    attempt.probed = ["context_vectors"]
    attempt.slopes_asked = {"context_vectors": ("context_vectors.gradient", "context_vectors.module")} \
        if slopes_asked is None else slopes_asked
    return attempt


def _sent(attempt, slopes):
    """The child's step and its "slopes" event, through the wire as the grader reads them."""
    supervisor._handle(attempt, {"event": "start", "kind": "slopes", "exercise": "context_vectors"}, Limits())
    event = list(wire.FrameReader().feed(wire.encode({"event": "slopes", "exercise": "context_vectors",
                                                      "slopes": slopes})))[0]
    supervisor._handle(attempt, event, Limits())


def test_slopes_at_the_probes_places_are_kept():
    attempt = _answered_attempt()
    _sent(attempt, {"context_vectors.gradient": [{}, {"gradient_is_own_slope": False}],
                    "context_vectors.module": [{"backward": {"input_own_slope": True, "own_slopes": {"W": False}}}]})
    assert attempt.job.outcome.own_slopes["context_vectors"] == {
        "context_vectors.gradient": [{}, {"gradient_is_own_slope": False}],
        "context_vectors.module": [{"backward": {"input_own_slope": True, "own_slopes": {"W": False}}}]}
    assert attempt.slopes_asked == {} and attempt.step is None and attempt.kill_kind is None


@pytest.mark.parametrize("slopes", [
    {"context_vectors.values": [{"gradient_is_own_slope": False}]},  # a check it was not asked for (it passed)
    {"context_vectors.gradient": [{"gradient_is_own_slope": 0}]},  # not a bool
    {"context_vectors.gradient": [{"gradient_is_own_slope": "False"}]},
    {"context_vectors.gradient": [{"gradient_is_own_slope": torch.tensor(False)}]},
    {"context_vectors.gradient": [{"gradient_is_own_slope": None}]},
    {"context_vectors.gradient": [{}, {}, {"gradient_is_own_slope": False}]},  # more cases than recorded
    {"context_vectors.gradient": [{"output": torch.zeros(2)}]},  # a probe's value: only slopes are taken
    {"context_vectors.gradient": [{"misconception": "gradient_cut"}]},
    {"context_vectors.gradient": {"0": {"gradient_is_own_slope": False}}},  # not a list of cases
    {"context_vectors.gradient": ["gradient_is_own_slope"]},
    {"context_vectors.module": [{"backward": {"own_slopes": {"W": False, "not_a_parameter": False}}}]},
    {"context_vectors.module": [{"backward": {"own_slopes": {"W": 1}}}]},
    {"context_vectors.module": [{"own_slopes": {"W": False}}]},  # no parameters recorded at that place
    {"context_vectors.module": [{"backward": {"state": {"gradient_is_own_slope": False}}}]},  # not a dict there
    {"context_vectors.module": [{"backward": {"input_own_slope": {"nested": False}}}]},
    {"context_vectors.gradient": [{"gradient_is_own_slope": False}]} | {f"x{index}": [] for index in range(500)},
    {"context_vectors.gradient": [{}] * 100_000},  # oversized
    [{"gradient_is_own_slope": False}],
    "gradient_is_own_slope",
])
def test_forged_or_ill_typed_slopes_are_refused_with_one_safe_line_and_cost_nothing_else(slopes, caplog):
    attempt = _answered_attempt()
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        _sent(attempt, slopes)
    assert attempt.job.outcome.own_slopes == {}  # judged without them: no cause proven, the same grade
    assert attempt.kill_kind is None and attempt.job.outcome.notes == [] and attempt.step is None
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "no own slopes read for context_vectors" in lines[0] and "refused" in lines[0]
    assert "\x1b" not in lines[0] and "\n" not in lines[0]
    supervisor._handle(attempt, {"event": "done"}, Limits())  # nothing outstanding: no second line
    assert len(caplog.records) == 1 and attempt.job.outcome.records["context_vectors"]


def test_slopes_it_did_not_start_or_was_not_asked_for_are_the_childs_protocol_error():
    attempt = _answered_attempt()
    with pytest.raises(wire.ProtocolError):
        supervisor._handle(attempt, {"event": "slopes", "exercise": "context_vectors", "slopes": {}}, Limits())
    with pytest.raises(wire.ProtocolError):  # an exercise it was not asked about
        supervisor._handle(_answered_attempt(slopes_asked={}),
                           {"event": "start", "kind": "slopes", "exercise": "context_vectors"}, Limits())
    after = _answered_attempt()
    _sent(after, {})
    with pytest.raises(wire.ProtocolError):  # a cell after its slopes: nothing but slopes, traces and done follow
        supervisor._handle(after, {"event": "start", "kind": "cell", "index": 3}, Limits())
    twice = _answered_attempt()
    _sent(twice, {})
    with pytest.raises(wire.ProtocolError):  # asked once, answered once
        supervisor._handle(twice, {"event": "start", "kind": "slopes", "exercise": "context_vectors"}, Limits())


@pytest.mark.parametrize("how", ["killed", "done"])
def test_a_child_that_stops_before_its_slopes_keeps_its_records_and_says_so_once(how, caplog):
    attempt = _answered_attempt()
    with caplog.at_level(logging.WARNING, logger=supervisor.__name__):
        if how == "killed":
            supervisor._handle(attempt, {"event": "start", "kind": "slopes", "exercise": "context_vectors"},
                               Limits())
            attempt.kill_kind, attempt.kill_reason = supervisor.TIMEOUT, "ran past the 90 s wall-clock limit"
            assert supervisor._settle(attempt, 9, Limits()) is False  # not re-run, nothing skipped
        else:  # it stopped waiting for the answer, or the student's code took its task pipe
            supervisor._handle(attempt, {"event": "done"}, Limits())
    outcome = attempt.job.outcome
    assert outcome.own_slopes == {} and outcome.notes == [] and set(outcome.records) == {"context_vectors"}
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "no own slopes read for context_vectors" in lines[0] and "\x1b" not in lines[0]


def test_the_answer_names_the_failed_checks_of_the_exercises_this_child_probed():
    attempt = _answered_attempt(slopes_asked={})
    attempt.answered = False
    written = []
    attempt.job.answer_probed = lambda outcome, exercises: ProbedAnswer(
        {"context_vectors": ("context_vectors.gradient",), "softmax_naive": ("softmax_naive.notes",)})
    attempt.reply_fd = 99

    def write(fd, data):
        written.append((fd, data))
        return len(data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(supervisor.os, "write", write)
        supervisor._handle(attempt, {"event": "probed"}, Limits())
    assert attempt.slopes_asked == {"context_vectors": ("context_vectors.gradient",)}  # not another's exercise
    ((fd, data),) = written
    assert fd == 99 and json.loads(data[REPLY_HEADER.size:]) == {
        "slopes": [["context_vectors", ["context_vectors.gradient"]]], "trace": []}


def test_the_judge_takes_the_slopes_in_before_it_judges():
    namespace = {"context_vectors": context_vectors_weights_frozen}
    with_slopes = probe_exercise("context_vectors", namespace, seed=0)
    with own_slopes_later():
        without = probe_exercise("context_vectors", namespace, seed=0)
    plan = NotebookPlan(path=Path("/nowhere/nb.ipynb"), notebook=NB01, steps=(), exercises=("context_vectors",),
                        sha256="")

    def judged(own_slopes):
        outcome = supervisor.Outcome("key", plan, records={"context_vectors": without}, own_slopes=own_slopes)
        results = notebooks._judge("key", outcome, 0, "en", {}, ClassExpectations()).checks
        return [(result.id, result.score, result.status, result.message) for result in results]

    sent = {check_id: [own_slopes_only(data) for data in per_case] for check_id, per_case in with_slopes.items()}
    taken, left = judged({"context_vectors": sent}), judged({})
    assert any(CUT_SENTENCE in row[3] for row in taken) and not any(CUT_SENTENCE in row[3] for row in left)
    assert [row[:3] for row in taken] == [row[:3] for row in left]


# --- a whole grading run ---------------------------------------------------------------------------------------


def _graded(tmp_path, repo_root, student, context_vectors, extra_cell=""):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_context_vectors":
            cell.source = context_vectors
    if extra_cell:
        notebook.cells.append(nbformat.v4.new_code_cell(extra_cell))
    (tmp_path / "submitted" / student / "attention").mkdir(parents=True)
    nbformat.write(notebook, tmp_path / "submitted" / student / "attention" / f"{NB01}.ipynb")
    status = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out" / student),
                       "--timeout", "20", "--memory", "1024"])
    assert status == 0
    document = json.loads((tmp_path / "out" / student / "students" / f"{student}.json").read_text(encoding="utf-8"))
    checks = [check for notebook in document["notebooks"] for check in notebook["checks"]]
    return document["score"], {check["id"]: check for check in checks if check["exercise"] == "context_vectors"}


@pytest.mark.slow
def test_a_grading_child_proves_a_cut_gradient_and_one_stopped_before_its_slopes_keeps_the_grade(
        tmp_path, repo_root, caplog):
    score, checks = _graded(tmp_path, repo_root, "frozen", FROZEN)
    assert any(CUT_SENTENCE in check["message"] for check in checks.values())  # the slopes came back and were judged
    # The same code, which a later cell makes end the process when it is called again: the child's second look
    # (after every cell) stops it, after "probed". The slopes are lost, and nothing else.
    stopping = FROZEN.replace("def context_vectors(inputs):\n",
                              "def context_vectors(inputs):\n    if globals().get('STOP'):\n"
                              "        import os\n        os._exit(70)\n")
    with caplog.at_level(logging.WARNING):
        stopped_score, stopped = _graded(tmp_path, repo_root, "stops", stopping, "STOP = True\n")
    assert stopped_score == score
    assert [(check["score"], check["status"]) for check in stopped.values()] == \
        [(check["score"], check["status"]) for check in checks.values()]
    assert not any(CUT_SENTENCE in check["message"] for check in stopped.values())
    assert any("no own slopes read for context_vectors" in record.getMessage() for record in caplog.records)


def _has_slope(data):
    return isinstance(data, dict) and any(key in OWN_SLOPE_FIELDS or _has_slope(value) for key, value in data.items())


@pytest.mark.slow
def test_a_passing_notebooks_child_reads_no_slope_and_a_failing_ones_only_for_its_failed_checks(tmp_path, repo_root):
    source = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    nbformat.write(notebook, tmp_path / "solved.ipynb")
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "solution_context_vectors":
            cell.source = FROZEN
    nbformat.write(notebook, tmp_path / "frozen.ipynb")
    outcomes = {}
    judge = notebooks._judge

    def kept(key, outcome, *arguments):
        outcomes[key] = outcome
        return judge(key, outcome, *arguments)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(notebooks, "_judge", kept)
        notebooks.grade_notebooks([notebooks.NotebookInput(name, tmp_path / f"{name}.ipynb")
                                   for name in ("solved", "frozen")], notebooks.Options(limits=Limits(workers=1)))
    solved, frozen = outcomes["solved"], outcomes["frozen"]
    assert solved.own_slopes == {}
    for outcome in (solved, frozen):  # the first probes read none, on every case of every check
        assert not any(_has_slope(data) for records in outcome.records.values() for per_case in records.values()
                       for data in per_case)
    assert set(frozen.own_slopes) == {"context_vectors"}
    assert any(_has_slope(data) for per_case in frozen.own_slopes["context_vectors"].values() for data in per_case)
