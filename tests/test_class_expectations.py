"""Expectations that depend on the case alone, computed once for a class (issue 59): every expect marked case_alone
reads the case alone, every expect marked reads_record the case and its declared record keys alone (computed once per
distinct part), and a class judged with one ClassExpectations gets each student's verdicts as judged alone."""

import copy
import functools
import itertools

import pytest
import torch

from autograder.checking.check_types import Check, Verdict
from autograder.checking.expectations import Expectations, case_alone, reads_case_alone, reads_record
from autograder.checking.probing import run_probe
from autograder.course import catalog
from autograder.running.record_parts import MAX_PART_BYTES, fingerprint
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


# Expectations that depend on the case and some keys of the record (expectations.reads_record), computed once per
# distinct part (issue 59, perf-nb04).

def _part_check(expect):
    return Check(id="made_up.check", exercise="softmax_naive", points=1, hidden=False, title={"en": "", "zh": ""},
                 cases=lambda rng: [{}], probe=lambda namespace, case: {}, judge=lambda r, c, e: Verdict(True),
                 expect=expect)


def test_students_whose_declared_record_parts_are_the_same_to_the_byte_share_one_computation():
    calls = []

    @reads_record("state")
    def from_state(record, case):
        calls.append(record)
        return Expectations.computed(total=lambda: float(record["state"]["w"].sum()))

    check = _part_check(from_state)
    assert check.expect_record_keys == ("state",) and not check.expect_from_case
    shared = ClassExpectations()
    first = {"state": {"w": torch.tensor([1.0, 2.0])}, "out": torch.tensor([0.5])}
    same_weights = {"state": {"w": torch.tensor([1.0, 2.0])}, "out": torch.tensor([9.0])}  # another output: not read
    other = {"state": {"w": torch.tensor([1.0, 3.0])}}
    totals = [shared.of(check, DEFAULT_SEED, 0, record, {})["total"] for record in (first, same_weights, other)]
    assert totals == [3.0, 3.0, 4.0]
    assert len(calls) == 2
    assert shared.of(check, DEFAULT_SEED, 1, first, {})["total"] == 3.0 and len(calls) == 3  # another case


def test_a_record_part_is_a_copy_of_the_declared_keys_and_any_other_read_is_a_loud_error():
    @reads_record("state", "weights_seen")
    def reads_more(record, case):
        return Expectations.computed(state=lambda: record["state"], seen=lambda: record.get("weights_seen"),
                                     out=lambda: record["out"])

    shared = ClassExpectations()
    record = {"state": {"w": torch.tensor([1.0])}, "out": torch.tensor([2.0])}
    expectations = shared.of(_part_check(reads_more), DEFAULT_SEED, 0, record, {})
    assert expectations["seen"] is None  # declared, absent from this record
    record["state"]["w"].add_(5)  # the judge's record changed after the fact: what is computed later reads the copy
    assert float(expectations["state"]["w"]) == 1.0
    with pytest.raises(LookupError, match="does not declare"):
        expectations["out"]


def test_the_record_parts_kept_for_a_class_are_bounded_least_recently_used_first(monkeypatch):
    calls = []

    @reads_record("state")
    def from_state(record, case):
        calls.append(1)
        return Expectations.stored({"first": float(record["state"][0])})

    monkeypatch.setattr(ClassExpectations, "MAX_KEPT_BYTES", 2 * 4 * 10)  # two parts of ten float32
    check, shared = _part_check(from_state), ClassExpectations()

    def judged(value):
        return shared.of(check, DEFAULT_SEED, 0, {"state": torch.full((10,), float(value))}, {})["first"]

    assert [judged(1), judged(2), judged(1), judged(3)] == [1.0, 2.0, 1.0, 3.0]
    assert len(calls) == 3  # 1 kept (used again), 2 dropped for 3
    judged(1)
    assert len(calls) == 3
    judged(2)
    assert len(calls) == 4


@pytest.mark.parametrize(("one", "other"), [
    (0.0, -0.0),
    (torch.tensor([0.0]), torch.tensor([-0.0])),
    (torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)),
    (torch.tensor([1.0, 2.0]), torch.tensor([[1.0, 2.0]])),
    (torch.ones(2, 2), torch.ones(2, 2).T.contiguous().T),  # same values, another stride
    (torch.ones(3)[1:], torch.ones(2)),  # same values, another offset
    (torch.tensor([float("nan")]), torch.tensor([float("nan")]).view(torch.int32).add(1).view(torch.float32)),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (1, 1.0), (1, True), ([1], (1,)), ("1", 1),
])
def test_record_parts_that_differ_in_any_byte_type_or_order_are_told_apart(one, other):
    assert fingerprint({"state": one}, ("state",)) != fingerprint({"state": other}, ("state",))
    assert fingerprint({"state": one}, ("state",)) == fingerprint({"state": copy.deepcopy(one)}, ("state",))


def test_what_cannot_be_compared_to_the_byte_is_never_shared():
    class Sub(torch.Tensor):
        pass

    assert fingerprint({"state": torch.ones(2).as_subclass(Sub)}, ("state",)) is None
    assert fingerprint({"state": object()}, ("state",)) is None
    assert fingerprint({"state": torch.zeros(MAX_PART_BYTES // 4 + 1)}, ("state",)) is None
    calls = []

    @reads_record("state")
    def from_state(record, case):
        calls.append(1)
        return Expectations.stored({})

    shared, check = ClassExpectations(), _part_check(from_state)
    for _ in range(2):
        shared.of(check, DEFAULT_SEED, 0, {"state": torch.zeros(MAX_PART_BYTES // 4 + 1)}, {})
    assert len(calls) == 2


def _reads_record_checks():
    return [check for check in catalog.CHECKS if check.expect_record_keys is not None]


def test_every_expect_reads_the_case_alone_or_declares_the_record_keys_it_reads():
    assert {check.id for check in catalog.CHECKS if not check.expect_from_case} == \
        {check.id for check in _reads_record_checks()}
    assert {"multi_head_attention.reference", "padding_mask.hidden", "mha_wrapper.shapes",
            "multi_head_attention.properties", "causal_attention.random", "self_attention_v1.notes"} <= \
        {check.id for check in _reads_record_checks()}


@pytest.mark.slow
@pytest.mark.parametrize("check", _reads_record_checks(), ids=lambda check: check.id)
def test_an_expect_marked_reads_record_computes_every_value_from_its_declared_keys(check):
    """Every value of every case, computed from the reference's own record reduced to the declared keys: none reads
    another (a read raises LookupError, which this test lets through)."""
    from autograder.running.record_parts import RecordPart
    from devtools.student_kit_agreement import students

    reference = next(student for student in students() if student.exercise == check.exercise)
    for case in cases_for(check, DEFAULT_SEED):
        record = run_probe(check.probe, reference.namespace, case)
        assert "error" not in record
        check.expect(RecordPart(record, check.expect_record_keys), case).materialised()
