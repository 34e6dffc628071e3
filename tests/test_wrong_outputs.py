"""grading.wrong_outputs: which cases of a failed hidden check get a fingerprint in the grading record."""

from types import SimpleNamespace

from autograder.checking.check_types import FAILED, PASSED, CheckResult, Verdict
from autograder.checking.expectations import no_expectations
from autograder.grading.wrong_outputs import MAX_WRONG_CASES, _with_wrong_outputs, output_fingerprint


def judge_expecting(value):
    return lambda record, case, expectations: Verdict(record.get("out") == value)


def check(hidden=True):
    return SimpleNamespace(id="demo.check", hidden=hidden, judge=judge_expecting(1), expect=no_expectations)


def result(status, hidden=True):
    return CheckResult("demo.check", "demo", 0.0, 1.0, status, None, "", hidden)


def fingerprinted_cases(found):
    return [int(entry.split("#")[1].split(":")[0]) for entry in found.wrong_outputs]


def test_only_wrong_cases_from_the_first_wrong_one_within_the_window():
    answers = [{"out": 1}, {"out": 2}, {"out": 1}, {"error": {"type": "ValueError", "message": "x"}}, {"out": 3},
               {"out": 4}, {"out": 5}]
    found = _with_wrong_outputs(result(FAILED), check(), list(range(len(answers))), answers)
    window = range(1, 1 + MAX_WRONG_CASES)
    expected = [index for index in window if answers[index].get("out") != 1]
    assert fingerprinted_cases(found) == expected
    assert found.wrong_outputs[0] == f"demo.check#1:{output_fingerprint(answers[1])}"


def test_public_checks_passed_checks_and_unanswered_cases_are_not_recorded():
    answers = [{"out": 2}]
    assert _with_wrong_outputs(result(FAILED, hidden=False), check(hidden=False), [0], answers).wrong_outputs == []
    assert _with_wrong_outputs(result(PASSED), check(), [0], answers).wrong_outputs == []
    skipped = [{"error": {"type": "NotImplementedError", "message": ""}}]
    assert _with_wrong_outputs(result(FAILED), check(), [0], skipped).wrong_outputs == []
    assert _with_wrong_outputs(result(FAILED), check(), [0], "not a list").wrong_outputs == []
