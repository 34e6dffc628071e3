"""What a probe computes between the learner's calls is not the learner's (issue 58): a softmax that subtracts
`torch.max(...)[1]` (the indices) was told "a tensor of yours has the numbers of the notes' inputs minus their
maximum" because the probe's finite check of the gradient, run after the call returned, made a tensor of zeros. The
trace drops what runs outside every call after the first unless a later call is handed it or reads it; and the
values `torch.max` returns beside indices the code goes on with alone were never a step of the code's.
"""

import torch

from autograder.checking.tensor_trace import INPUT, UNUSED, graph_traced_probe, traced_probe
from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks


def checked(exercise_id, namespace, lang):
    return run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                      seed=in_notebook.DEFAULT_SEED, diagnose=True)


def doubled(x):
    return x * 2


def probe_then_check(namespace, case):
    """A probe's shape: the learner's function called twice, with the probe's own arithmetic after each call."""
    first = namespace["doubled"](torch.ones(3))
    checked_first = (first - 2).abs().sum()  # the probe's: no call reads it
    again = torch.full((3,), 5.0)  # the probe's, handed to the second call
    second = namespace["doubled"](again)
    return {"out": second, "checked": checked_first}


def test_what_the_probe_computes_between_calls_is_dropped_and_what_it_hands_a_call_is_kept():
    for trace in (traced_probe, graph_traced_probe):
        record, traced = trace(probe_then_check, {"doubled": doubled}, None)
        assert float(record["checked"]) == 0.0
        ops = [entry.op for entry in traced]
        assert "sub" not in ops and "abs" not in ops and "sum" not in ops, ops
        values = [entry.value.tolist() for entry in traced]
        assert [5.0, 5.0, 5.0] in values and [10.0, 10.0, 10.0] in values, values
        for index, entry in enumerate(traced):
            assert all(0 <= read < index for read in entry.inputs)


def indices_as_the_maximum(x, dim=-1):
    shift = x.max(dim=dim, keepdim=True)[1]
    exps = torch.exp(x - shift)
    return exps / exps.sum(dim=dim, keepdim=True)


def values_as_the_maximum(x, dim=-1):
    shift = x.max(dim=dim, keepdim=True)[0]
    exps = torch.exp(x - shift)
    return exps / exps.sum(dim=dim, keepdim=True)


def call_once(name):
    return lambda namespace, case: {"out": namespace[name](torch.tensor([[1.0, 3.0], [2.0, 0.5]]))}


def test_values_of_a_max_whose_indices_alone_are_used_are_marked_unused_and_used_ones_are_not():
    _record, unused = traced_probe(call_once("indices_as_the_maximum"), {"indices_as_the_maximum":
                                                                         indices_as_the_maximum}, None)
    assert [entry.op for entry in unused if entry.value.tolist() == [[3.0], [2.0]]] == [UNUSED], unused
    _record, used = traced_probe(call_once("values_as_the_maximum"), {"values_as_the_maximum":
                                                                      values_as_the_maximum}, None)
    assert any(entry.value.tolist() == [[3.0], [2.0]] and entry.op != UNUSED for entry in used), used
    assert any(entry.op == INPUT for entry in used)


def test_a_softmax_that_shifts_by_the_indices_is_told_its_maximum_is_made_but_never_read():
    """12p's py-ss-10 was told it "reproduces the notes' maximum" (it made it, and went on with the indices); 12s's
    sy-ss-09 was then told "none of the tensors your code made holds it" (it made it). Both halves are said."""
    for lang in ("en", "zh"):
        results = checked("softmax_stable", {"softmax_stable": indices_as_the_maximum}, lang)
        shown = [result for result in results if result.departure]
        assert shown
        for result in shown:
            assert catalog.MESSAGES["step.maximum"][lang] in result.departure, result.departure
            made_not_read = {"en": "an op of yours does make it, beside the indices it returns with it, but your code "
                                   "goes on with those indices and never reads it",
                             "zh": "你的某个运算确实算出了它，并同时返回了对应的索引"}[lang]
            assert made_not_read in result.departure, result.departure
            assert {"en": "none of the tensors", "zh": "没有一个"}[lang] not in result.departure, result.departure
