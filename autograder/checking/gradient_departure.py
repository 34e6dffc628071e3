"""Where a learner's computation leaves autograd's graph: the first of the notes' steps whose value their run
reproduces but which no tensor autograd recorded holds, read from their own run with gradients on.

The value trace (autograder.checking.departure) runs with gradients off and reads numbers only: a step rebuilt from
plain numbers (`torch.tensor(x.tolist())`, NumPy), detached or computed under `torch.no_grad()` matches there as a
right one. Here the failing case's probe runs again with gradients on (tensor_trace.graph_traced_probe); from the
first tensor autograd records (the case's input made part of a graph, or a parameter read), each declared step
computed from the case's inputs must be held by a tensor of autograd's graph, as the reference's is. A step whose
value the learner's tensors hold there only outside the graph, though made from a tensor autograd recorded, is where
the gradient departs: that is a fact of their run, said without naming any call (which one cut it is not read).
Needs no reference: the student kit ships it.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from autograder.checking.departure import (
    LIST_SEPARATOR,
    StepValues,
    made_many_ways,
    matches_up_to_layout,
    normalised_value,
    sorted_values,
    values_close,
)
from autograder.checking.tensor_trace import INPUT, TracedTensor
from autograder.i18n import Messages, pick, render

__all__ = ["GRAPH_STEPS", "NEIGHBOUR", "OWN_SLOPE_KEYS", "GradientDeparture", "find_gradient_departure",
           "gradient_line"]

# The expectation holding a case's steps (departure.STEPS' form) for a check that judges the gradient and rules, not
# the values (the softmax rules check): read by the run with gradients on only, as other checks judge the values.
GRAPH_STEPS = "graph_steps"
# The expectation holding [a case beside the failing one, the notes' steps on it] (departure.STEPS' form) for a check
# that judges a gradient: where autograd followed the learner's function and its slope still differs from the notes'
# (OWN_SLOPE_KEYS), the function differs from theirs near the case, and the neighbour's values show at which step.
NEIGHBOUR = "neighbour"
# The failures saying that the gradient is the learner's function's own slope, and not the notes' (the judges').
OWN_SLOPE_KEYS = frozenset({"function.gradient_own_slope", "function.gradient_own_slope_other"})
# Ops whose result reads only its operand's shape and dtype, never its numbers (autograd.grad's `ones_like` seed of
# the probe's own gradient check): a tensor they make is not the graph's values, so it proves no cut (issue 58).
SHAPE_ONLY_OPS = frozenset({"ones_like", "zeros_like", "full_like", "empty_like", "rand_like", "randn_like",
                            "randint_like", "new_ones", "new_zeros", "new_full", "new_empty"})


@dataclass(frozen=True)
class GradientDeparture:
    """What the run with gradients on shows, from its first recorded tensor: the steps (in the notes' order) whose
    values tensors autograd recorded hold (`connected`), then the first step whose values the learner's tensors hold
    while autograd recorded none of them (`cut`), or, where no tensor there holds a step at all, that step
    (`absent`: the code stopped before it, or computed it otherwise)."""

    connected: tuple[str, ...]
    cut: str | None = None
    absent: str | None = None


def find_gradient_departure(steps: StepValues, traced: Sequence[TracedTensor]) -> GradientDeparture | None:
    """The gradient departure of a run traced with gradients on (`TracedTensor.connected`); None where nothing of the
    run was recorded by autograd (its inputs did not require grad, or the trace was made with gradients off)."""
    start = next((index for index, entry in enumerate(traced) if entry.recorded), None)
    if start is None:
        return None
    cut_from = _cut_from_graph(traced)
    window = [(normalised_value(entry.value), bool(entry.connected), index in cut_from)
              for index, entry in enumerate(traced) if index >= start and entry.op != INPUT]
    connected: list[str] = []
    for entry in steps:
        step_id, values, optional = str(entry[0]), [normalised_value(value) for value in entry[1]], bool(entry[2])
        ordered, shaped = len(entry) > 3 and bool(entry[3]), len(entry) > 4 and bool(entry[4])
        if len(entry) > 5 and not entry[5]:
            continue  # made without the inputs (a causal mask): the reference's carries no gradient either
        holding = [(graph, cut) for value, graph, cut in window if not made_many_ways(value) and any(
            _holds(value, expected, ordered, shaped) for expected in values)]
        if any(graph for graph, _cut in holding):
            connected.append(step_id)
        elif any(cut for _graph, cut in holding):
            return GradientDeparture(tuple(connected), cut=step_id)
        elif not optional:
            return GradientDeparture(tuple(connected), absent=step_id)
    return GradientDeparture(tuple(connected))


def _cut_from_graph(traced: Sequence[TracedTensor]) -> set[int]:
    """The traced tensors outside autograd's graph made (through any ops) from one autograd recorded: the graph's
    values, no longer its tensors. A tensor outside it made from none (a plain call's, a probe's own, numbers
    rebuilt the trace cannot follow) proves no cut: the reference's there is outside the graph too."""
    cut: set[int] = set()
    for index, entry in enumerate(traced):
        if entry.op != INPUT and entry.op not in SHAPE_ONLY_OPS and not entry.connected and any(
                traced[read].recorded or read in cut for read in entry.inputs):
            cut.add(index)
    return cut


def _holds(got: torch.Tensor, expected: torch.Tensor, ordered: bool, shaped: bool) -> bool:
    """Whether the learner's tensor holds the step's value, up to the layouts departure.find_departure allows it."""
    if got.numel() != expected.numel() or not values_close(sorted_values(got), sorted_values(expected)):
        return False
    return values_close(got, expected) if shaped else matches_up_to_layout(got, expected, transposed=not ordered)


def gradient_line(departure: GradientDeparture, raised: bool, lang: str, messages: Messages) -> str:
    """What rung 2 says of a gradient departure, in the notes' words, without code: the first step whose value is
    right and which carries no gradient back; or (`raised`: the learner's code raised on the input of a graph) the
    step it raised before. "" where neither is proven."""
    def name(step_id: str) -> str:
        return render(messages, f"step.{step_id}", lang)

    fields = {"matched": pick(LIST_SEPARATOR, lang).join(name(step_id) for step_id in departure.connected)}
    if departure.cut is not None:
        key = "gradient.cut_after" if departure.connected else "gradient.cut_first"
        fields["step"] = name(departure.cut)
    elif departure.absent is not None and raised:
        key = "gradient.raised_after" if departure.connected else "gradient.raised_first"
        fields["step"] = name(departure.absent)
    else:
        return ""
    return render(messages, key, lang, fields)
