"""What a probe builds before it first calls the learner's function is not the learner's (issue 58): a round trip's
source tensor, built to be split into heads and merged back, holds the notes' merged heads, and a trace that kept it
as a tensor the code made said every step was computed by code that merges in the wrong order. The build is left
out of the trace; a tensor of it the learner's code reads is kept as read (INPUT). A class is not marked: what its
constructor makes (a mask buffer) is the learner's own.
"""

import contextlib
import io

import pytest
import torch

from attnkit import solutions
from autograder.checking.tensor_trace import INPUT, graph_traced_probe, traced_probe
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


def add_one(x):
    return x + 1


def build_then_call(namespace, case):
    """A probe's shape: an input built from a source tensor, then the learner's function called on it."""
    source = torch.arange(6.0).view(2, 3) * 2
    return {"out": namespace["add_one"](source.T)}


def merged_in_the_wrong_order(x):
    """The heads' numbers regrouped as (b, d_out, num_tokens) and turned: right shape, features out of place."""
    b, num_heads, num_tokens, head_dim = x.shape
    return x.reshape(b, num_heads * head_dim, num_tokens).transpose(1, 2)


@pytest.mark.parametrize("trace", [traced_probe, graph_traced_probe])
def test_the_probes_build_before_the_call_is_not_traced_and_its_tensor_is_read_as_input(trace):
    record, traced = trace(build_then_call, {"add_one": add_one}, None)
    assert torch.equal(record["out"], torch.arange(6.0).view(2, 3).T * 2 + 1)
    assert [entry.op for entry in traced] == [INPUT, "add"], [entry.op for entry in traced]
    assert torch.equal(traced[0].value, (torch.arange(6.0).view(2, 3) * 2).T.double())


def test_without_a_function_of_the_learners_the_whole_run_is_traced():
    """A namespace of no plain function (a class, whose constructor's tensors are its own): nothing is left out."""
    record, traced = traced_probe(lambda namespace, case: {"out": torch.arange(3.0) * 2}, {"Class": torch.nn.Module},
                                  None)
    assert [entry.op for entry in traced] == ["arange", "mul"], [entry.op for entry in traced]


def test_the_learners_function_is_called_as_it_is():
    """The marking wrapper keeps the function's name, signature and result."""
    seen = {}

    def probe(namespace, case):
        function = namespace["add_one"]
        seen["name"], seen["wrapped"] = function.__name__, getattr(function, "__wrapped__", None)
        return {"out": function(torch.zeros(2))}

    record, _traced = traced_probe(probe, {"add_one": add_one}, None)
    assert seen == {"name": "add_one", "wrapped": add_one}
    assert torch.equal(record["out"], torch.ones(2))


@pytest.mark.slow
def test_a_round_trip_whose_source_is_the_merged_heads_departs_where_the_other_checks_do(monkeypatch):
    """On the round trip's case the source tensor equals the notes' merged heads: built by the probe, it no longer
    reads as the learner's, so the inputs' check departs at the merged heads as the notes' check does: one row."""
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    assert not torch.equal(merged_in_the_wrong_order(torch.arange(12.0).view(1, 2, 3, 2)),
                           solutions.merge_heads(torch.arange(12.0).view(1, 2, 3, 2)))
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("merge_heads", merged_in_the_wrong_order, hint=2)
    text = output.getvalue()
    failing = [line for line in text.splitlines() if line.startswith("  ✘")]
    assert len(failing) == 2, text
    assert "3 more checks fail for the same reason" in failing[1], text
    assert "nothing proves" not in text and "no known mistake" not in text, text
