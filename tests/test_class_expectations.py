"""Expectations that depend on the case alone, computed once for a class (issue 59): every expect marked case_alone
reads the case alone, and a class judged with one ClassExpectations gets each student's verdicts as judged alone."""

import functools
import itertools

import pytest

from autograder.checking.check_types import Check, Verdict
from autograder.checking.expectations import Expectations, case_alone, reads_case_alone
from autograder.course import catalog
from autograder.running.runner import DEFAULT_SEED, NO_RECORD, ClassExpectations, cases_for, run_exercise


def _marked_checks():
    return [check for check in catalog.CHECKS if check.expect_from_case]


@pytest.mark.slow
@pytest.mark.parametrize("check", _marked_checks(), ids=lambda check: check.id)
def test_an_expect_marked_case_alone_computes_every_value_without_the_record(check):
    """Every value of every case, computed with a record that refuses to be read: none reads it (a read raises
    LookupError, which this test lets through)."""
    for case in cases_for(check, DEFAULT_SEED):
        check.expect(NO_RECORD, case).materialised()


def test_the_marked_checks_are_those_whose_expect_never_reads_the_record():
    marked = {check.id for check in _marked_checks()}
    reads_weights = {"self_attention_v1.notes", "causal_attention.random", "multi_head_attention.reference",
                     "padding_mask.hidden", "mha_wrapper.shapes", "multi_head_attention.properties"}
    assert not marked & reads_weights
    assert {"parameter_counts.notes", "parameter_counts.kinds", "parameter_counts.modules", "softmax_naive.notes",
            "split_heads.notes", "multi_head_attention.modes", "torch_equivalence.notes"} <= marked


def test_a_record_read_by_an_expect_marked_case_alone_is_a_loud_error_never_another_students_data():
    def reads_record(record, case):
        return Expectations.computed(output=lambda: record["out"])

    check = Check(id="made_up.check", exercise="softmax_naive", points=1, hidden=False, title={"en": "", "zh": ""},
                  cases=lambda rng: [{}], probe=lambda namespace, case: {}, judge=lambda r, c, e: Verdict(True),
                  expect=case_alone(functools.partial(reads_record)))
    assert check.expect_from_case and reads_case_alone(check.expect)
    shared = ClassExpectations()
    with pytest.raises(LookupError, match="case_alone read the record"):
        shared.of(check, DEFAULT_SEED, 0, {"out": 1}, {})["output"]


def test_an_unmarked_expect_is_computed_for_each_students_record():
    calls = []

    def per_record(record, case):
        calls.append(record)
        return Expectations.stored({"seen": record["out"]})

    check = Check(id="made_up.check", exercise="softmax_naive", points=1, hidden=False, title={"en": "", "zh": ""},
                  cases=lambda rng: [{}], probe=lambda namespace, case: {}, judge=lambda r, c, e: Verdict(True),
                  expect=per_record)
    shared = ClassExpectations()
    assert [shared.of(check, DEFAULT_SEED, 0, {"out": n}, {})["seen"] for n in (1, 2)] == [1, 2]
    assert len(calls) == 2


def _verdicts(results):
    return [(r.id, r.status, r.score, r.misconception, r.message, r.details, r.question, r.mistake, r.hint,
             r.failed_case, r.reproduced_by) for r in results]


@pytest.mark.slow
def test_a_class_judged_with_one_class_expectations_gets_each_students_verdicts_as_judged_alone():
    """Every exercise's first students (the reference, the release stub, mutants, grid variants), judged in turn with
    one ClassExpectations, twice in two orders, get the verdicts each gets with expectations of its own."""
    from devtools.student_kit_agreement import students

    chosen = [student for _exercise, group in itertools.groupby(students(), key=lambda s: s.exercise)
              for student in list(group)[:4]]
    alone = [_verdicts(run_exercise(s.exercise, s.namespace, lang="en")) for s in chosen]
    shared = ClassExpectations()
    together = [_verdicts(run_exercise(s.exercise, s.namespace, lang="en", expectations=shared)) for s in chosen]
    backwards = [_verdicts(run_exercise(s.exercise, s.namespace, lang="en", expectations=shared))
                 for s in reversed(chosen)]
    assert together == alone
    assert backwards[::-1] == alone
    assert len({student.exercise for student in chosen}) == 17
