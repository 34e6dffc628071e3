"""The trace's cap is the learner's call's (issue 58): what a probe builds before calling the learner's module does
not take its room, and a trace the cap cut before the call's output is no trace of the call, so no step is named
from it (autograder.checking.tensor_trace: TensorTrace.cut_short; the grading child then says "cap")."""

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.departure import STEPS, find_departure
from autograder.checking.probing import run_probe
from autograder.checking.tensor_trace import (
    MAX_SENT,
    MAX_TRACE_ELEMENTS,
    MAX_TRACED,
    TensorTrace,
    TracedTensor,
    graph_traced_probe,
    recorded_output,
    trace_record,
    traced_of_record,
    traced_probe,
)
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from autograder.running.runner import cases_for

SEED = in_notebook.DEFAULT_SEED


def _probe_and_case(exercise_id):
    check = next(check for check in catalog.checks_of(exercise_id, include_hidden=False)
                 if check.id.endswith((".notes", ".example")))
    return check, resolve(in_notebook._runnable(check, SEED).probe), cases_for(check, SEED)[0]


def _junk(count):
    """`count` traced tensors of a learner's own bookkeeping (two per round: a factory's and a product)."""
    for _ in range(count // 2):
        torch.ones(1) * 2.0


class SlowMergeWithoutTranspose(solutions.MultiHeadAttention):
    """A learner's multi-head attention that builds a table of its own in __init__, works through a loop before its
    heads, and merges them without the transpose: its first departure is the merged heads."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _junk(240)

    def forward(self, x, attention_mask=None):
        _junk(240)
        b, num_tokens, _ = x.shape
        heads = [self.W_query(x), self.W_key(x), self.W_value(x)]
        queries, keys, values = (t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2) for t in heads)
        scores = queries @ keys.transpose(2, 3)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ values).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


@pytest.mark.slow
def test_a_module_whose_build_and_forward_pass_the_cap_together_still_departs_where_it_does():
    check, probe, case = _probe_and_case("multi_head_attention")
    namespace = {"MultiHeadAttention": SlowMergeWithoutTranspose}
    with torch.no_grad(), TensorTrace() as trace:
        record = run_probe(probe, namespace, case)
    assert trace.built is not None and trace.built > 240  # the build alone, kept
    assert trace.built + 240 > MAX_TRACED  # build and forward together pass the count the call has to itself
    record, traced = traced_probe(probe, namespace, case)
    assert traced is not None and "error" not in record
    departure = find_departure(check.expect(record, case)[STEPS], traced, recorded_output(record))
    assert departure.step == "merged" and "context_vectors" in departure.matched
    assert MAX_TRACED < len(traced) <= MAX_SENT  # more than the call's room, and the grader reads it whole
    assert len(traced_of_record(trace_record(traced))) == len(traced)


def many_tensors_then_sum_of_inputs(x):
    """A learner's softmax that works through a long loop first, then divides by the sum of its inputs."""
    y = x
    for _ in range(MAX_TRACED):
        y = y * 1.0
    return torch.exp(y) / y.sum()


def sum_of_inputs_then_many_tensors(x):
    """The same mistake, its output made first: a cap that cuts the loop after it leaves the output whole."""
    out = torch.exp(x) / x.sum()
    for _ in range(MAX_TRACED):
        x = x * 1.0
    return out


@pytest.mark.slow
def test_a_function_cut_by_the_cap_before_its_output_gets_no_step_and_one_cut_after_it_keeps_its_own():
    check, probe, case = _probe_and_case("softmax_naive")
    record, traced = traced_probe(probe, {"softmax_naive": many_tensors_then_sum_of_inputs}, case)
    assert "error" not in record and traced is None  # its exponentials were never traced: not proven to depart
    assert graph_traced_probe(probe, {"softmax_naive": many_tensors_then_sum_of_inputs}, case)[1] is None
    results = run_checks(in_notebook.ReferenceExpectations(), "softmax_naive",
                         {"softmax_naive": many_tensors_then_sum_of_inputs}, "en", include_hidden=False, seed=SEED,
                         diagnose=True)
    assert results[0].status == "failed" and results[0].departure_step == ""  # not "exponentials"
    record, traced = traced_probe(probe, {"softmax_naive": sum_of_inputs_then_many_tensors}, case)
    assert traced is not None
    assert find_departure(check.expect(record, case)[STEPS], traced, recorded_output(record)).step == "sums"


def test_a_build_past_its_own_room_leaves_the_call_untraced():
    class BuildsForever(nn.Module):
        def __init__(self):
            super().__init__()
            _junk(2 * MAX_TRACED + 2)

        def forward(self, x):
            return torch.exp(x)

    with torch.no_grad(), TensorTrace() as trace:
        out = BuildsForever()(torch.ones(3))
    assert trace.truncated and trace.built == MAX_TRACED and len(trace.traced) == MAX_TRACED
    assert trace.cut_short(out)  # the call's exponentials were never kept


def test_the_elements_cap_stops_keeping_and_the_hook_goes_with_the_trace():
    from torch.nn.modules import module

    hooks = len(module._global_forward_pre_hooks)
    with torch.no_grad(), TensorTrace(max_elements=10) as trace:
        assert len(module._global_forward_pre_hooks) == hooks + 1
        out = torch.exp(torch.ones(4)) + torch.ones(4)  # ones, exp, ones: 12 elements, the sum never kept
    assert len(module._global_forward_pre_hooks) == hooks
    assert trace.truncated and sum(entry.value.numel() for entry in trace.traced) <= 10
    assert trace.cut_short(out)
    with TensorTrace() as whole:
        out = torch.exp(torch.ones(4))
    assert not whole.truncated and not whole.cut_short(out)


def test_the_grader_reads_a_trace_of_the_call_and_its_build_and_no_more():
    entry = TracedTensor("mul", torch.zeros(1, dtype=torch.float64), ())
    assert len(traced_of_record(trace_record([entry] * MAX_SENT))) == MAX_SENT
    with pytest.raises(ValueError, match="tensors, more than"):
        traced_of_record(trace_record([entry] * (MAX_SENT + 1)))
    assert MAX_SENT * 1 <= MAX_TRACE_ELEMENTS
