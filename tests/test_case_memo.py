"""What the variants give on a case is computed once per process, keyed by what it is computed from, and only where
all of that is plain data (autograder.checking.case_memo)."""

import functools

import torch

from autograder.checking import case_memo
from autograder.checking.case_memo import remembered


def probe(namespace, case):  # a check's probe, as the declarations name them: a top-level function
    return namespace, case


def judge(data, case, expectations):
    return data, case, expectations


class Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return [["mistake", "message", f"call {self.calls}"]]


def test_the_same_case_built_again_is_computed_once():
    count = Counter()
    first = remembered("test-a", "ex", (probe, judge), {"seed": 3, "d_in": 4, "x": torch.arange(6.0)}, count)
    again = remembered("test-a", "ex", (probe, judge), {"seed": 3, "d_in": 4, "x": torch.arange(6.0)}, count)
    assert count.calls == 1 and first == again == [["mistake", "message", "call 1"]]
    again[0][2] = "changed by a caller"
    assert remembered("test-a", "ex", (probe, judge), {"seed": 3, "d_in": 4, "x": torch.arange(6.0)}, count) == first


def test_another_case_check_or_kind_is_computed_anew():
    count = Counter()
    case = {"seed": 3, "x": torch.arange(6.0)}
    remembered("test-b", "ex", (probe, judge), case, count)
    remembered("test-b", "ex", (probe, judge), {"seed": 3, "x": torch.arange(6.0) + 1e-7}, count)  # other bytes
    remembered("test-b", "ex", (probe, judge), {"seed": 3, "x": torch.arange(6.0).double()}, count)  # other dtype
    remembered("test-b", "ex", (probe, judge), {"seed": 3, "x": torch.arange(6.0).reshape(2, 3)}, count)
    remembered("test-b", "other", (probe, judge), case, count)
    remembered("test-b", "ex", (judge, probe), case, count)
    remembered("test-b2", "ex", (probe, judge), case, count)
    remembered("test-b", "ex", (probe, judge), {"x": torch.arange(6.0), "seed": 3}, count)  # keys in another order
    assert count.calls == 8


def test_a_case_is_told_apart_to_the_byte_as_a_record_part_is():
    """Read by autograder.checking.fingerprints: a non-contiguous view, -0.0 and a 0-d tensor are cases of their
    own, and a 0-d tensor is remembered like any other."""
    count = Counter()
    square = torch.arange(9.0).reshape(3, 3)
    for case in ({"x": square.T.contiguous()}, {"x": square.T}, {"fill": 0.0}, {"fill": -0.0},
                 {"x": torch.tensor(2.0)}, {"x": torch.tensor(2.0)}):
        remembered("test-e", "ex", (probe,), case, count)
    assert count.calls == 5


def test_partials_are_keyed_by_their_arguments():
    count = Counter()
    remembered("test-c", "ex", (functools.partial(probe, "properties"),), {"seed": 1}, count)
    remembered("test-c", "ex", (functools.partial(probe, "properties"),), {"seed": 1}, count)
    remembered("test-c", "ex", (functools.partial(probe, "modes"),), {"seed": 1}, count)
    assert count.calls == 2


def test_closures_lambdas_and_unplain_cases_are_never_remembered():
    count = Counter()

    def local_probe(namespace, case):
        return case
    for _ in range(2):
        remembered("test-d", "ex", (local_probe,), {"seed": 1}, count)
        remembered("test-d", "ex", (lambda namespace, case: case,), {"seed": 1}, count)
        remembered("test-d", "ex", (probe,), {"seed": 1, "module": torch.nn.Linear(2, 2)}, count)
        remembered("test-d", "ex", (probe,), {"seed": 1, "x": torch.ones(2, device="meta")}, count)
    assert count.calls == 8
    assert case_memo.remembered_cases()["kept"] >= 1


def test_what_is_computed_afresh_is_neither_read_from_nor_kept():
    """The student kit's build computes its stored expectations afresh: a run this process kept before (a grading's,
    a test's) is not what the kit stores, and the build adds nothing to what is kept."""
    count = Counter()
    case = {"seed": 5, "afresh": True}
    kept = remembered("test-afresh", "ex", (probe, judge), case, count)
    with case_memo.computed_afresh():
        fresh = remembered("test-afresh", "ex", (probe, judge), case, count)
        other = remembered("test-afresh", "ex", (probe, judge), {"seed": 6}, count)
    assert count.calls == 3 and kept != fresh and other == [["mistake", "message", "call 3"]]
    assert remembered("test-afresh", "ex", (probe, judge), {"seed": 6}, count) == [["mistake", "message", "call 4"]]
