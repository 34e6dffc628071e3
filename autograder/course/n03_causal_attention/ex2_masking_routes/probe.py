"""Probes of the two masking routes (renormalised weights, -inf scores): run the student's objects on a case and return
plain data. Imports no reference, judge or declaration: the grading child holds it."""

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor

from autograder.checking.probing import (
    ProbeError,
    describe_exception,
    dtype_name,
    gradient_is_own_slope,
    gradient_of,
    lookup,
    plain,
    rand,
    seeded,
)
from autograder.checking.tensor_trace import INPUT, TensorTrace
from autograder.checking.torch_recorders import DeviceMixWatch, UntrackedEdits
from autograder.course.shared.inputs import DTYPES, notes_inputs, probe_device_kind
from autograder.course.shared.records import ExceptionRecord, Namespace

__all__ = [
    "NOTES_D_OUT", "NOTES_V2_SEED", "RouteDeviceRecord", "ScoresCase", "WeightsRecord", "from_scores", "graded_scores",
    "notes_attention_scores", "notes_attention_weights", "probe_neg_inf", "probe_on_device", "probe_renormalised",
    "scores_input", "weights_input",
]


class ScoresCase(TypedDict):
    """Attention scores (or weights) for the masking routes: the notes' or seeded random, on a device or not."""

    input: NotRequired[str]
    seed: NotRequired[int]
    shape: NotRequired[list[int]]
    dtype: NotRequired[str]
    device: NotRequired[str]  # "auto": a GPU when there is one, else the meta device


class WeightsRecord(TypedDict, total=False):
    weights: Tensor
    input_changed: bool  # the caller's tensor was edited in place
    backward: str  # through the route to its input: "ok", "no_gradient", "not_finite" or "raised"
    backward_error: ExceptionRecord
    input_gradient: Tensor  # what reached the scores when "ok": the judge compares it with the reference's
    gradient_is_own_slope: bool  # probing.gradient_is_own_slope, where it could be read
    untracked_edits: list[str]  # in-place ops of that call autograd did not record (torch_recorders.UntrackedEdits)
    # Where the weights hold nan: the queries (along the second-to-last axis) of which some tensor the learner's code
    # made in the input's shape hides every key (-inf or 0 in the whole row): what "every key was hidden" needs.
    hidden_rows: list[int]


class RouteDeviceRecord(TypedDict, total=False):
    device: str
    failure: ExceptionRecord
    mixed: list[str]
    shape: list[int]
    output_device: str
    dtype: str


NOTES_D_OUT = 2  # the notes' d_out in sections 3.4 and 3.5
NOTES_V2_SEED = 789  # the notes build SelfAttention_v2 under this seed, then mask its weights


SCORE_SPREAD = 3.0  # hidden scores in [-3, 3): softmax weights far from uniform, so mistakes show


def notes_attention_scores() -> Tensor:
    """The notes' unscaled scores queries @ keys.T of SelfAttention_v2 under seed 789 (no reference involved)."""
    with seeded(NOTES_V2_SEED), torch.no_grad():
        d_in = len(notes_inputs()[0])
        # The notes' class creates W_query, W_key, W_value in this order; the seed fixes their values.
        w_query, w_key, _w_value = (torch.nn.Linear(d_in, NOTES_D_OUT, bias=False) for _ in range(3))
        inputs = notes_inputs()
        return w_query(inputs) @ w_key(inputs).T  # (6, 6)


def notes_attention_weights() -> Tensor:
    return torch.softmax(notes_attention_scores() / NOTES_D_OUT**0.5, dim=-1)


def scores_input(case: ScoresCase) -> Tensor:
    if case.get("input") == "notes":
        return notes_attention_scores()
    return rand(case["seed"], *case["shape"], dtype=DTYPES[case["dtype"]]) * SCORE_SPREAD


def weights_input(case: ScoresCase) -> Tensor:
    if case.get("input") == "notes":
        return notes_attention_weights()
    return torch.softmax(scores_input(case), dim=-1)


def graded_scores(case: ScoresCase, takes_weights: bool) -> Tensor:
    """The scores a route's gradient is taken through: for the weights route on the notes' case, the notes' scaled
    scores, whose softmax is the very weights its values were checked on, so that the run with gradients on computes
    the steps the notes declare for the case (autograder.checking.gradient_departure reads them there)."""
    scores = scores_input(case)
    return scores / NOTES_D_OUT**0.5 if takes_weights and case.get("input") == "notes" else scores


def from_scores(route: Callable[[Tensor], Any], takes_weights: bool) -> Callable[[Tensor], Any]:
    """The route as a function of the scores, which gradients are taken through: the weights route gets
    softmax(scores), as in attention (a weight edited in place then breaks backward), the scores route the scores."""
    if takes_weights:
        return lambda scores: route(torch.softmax(scores, dim=-1))
    return route


def probe_route(route: Callable[[Tensor], Any], make_input: Callable[[ScoresCase], Tensor],
                case: ScoresCase) -> WeightsRecord:
    """A masking route's output, whether it edited the caller's tensor, and the gradient that reaches that tensor
    through it (its input made by a softmax or a product, as in attention, so an in-place edit breaks backward)."""
    x = make_input(case)
    kept = x.clone()
    data: WeightsRecord = {"weights": plain(route(x))}
    if isinstance(data["weights"], Tensor) and data["weights"].is_floating_point() and data["weights"].isnan().any():
        data["hidden_rows"] = rows_all_hidden(route, make_input(case))
    unchanged = torch.equal(x.isnan(), kept.isnan()) and torch.equal(x.nan_to_num(), kept.nan_to_num())
    data["input_changed"] = not unchanged
    takes_weights = make_input is weights_input
    edits = UntrackedEdits()
    data["backward"], error, gradient = gradient_of(from_scores(edits.watching(route), takes_weights),
                                                    graded_scores(case, takes_weights))
    data["untracked_edits"] = sorted(set(edits.ops))
    if error is not None:
        data["backward_error"] = error
    if gradient is not None:
        data["input_gradient"] = gradient
        own = gradient_is_own_slope(from_scores(route, takes_weights), graded_scores(case, takes_weights), gradient)
        if own is not None:
            data["gradient_is_own_slope"] = own
    return data


# Ops that hide keys: a row of -inf or 0 that one of them made is a mask's; a 0 from a subtraction (inf - inf) is not.
HIDING_OPS = frozenset({"masked_fill", "where", "mul", "tril", "triu"})


def rows_all_hidden(route: Callable[[Tensor], Any], x: Tensor) -> list[int]:
    """The queries whose every key some tensor the route made (in x's shape) hides: -inf in the whole row, or 0 in
    the whole row from a masking op where x's row is not all 0. Read from the route's own tensors, run again under
    the trace: a nan the route gives without hiding a whole row (a shift by -inf) is not this."""
    with torch.no_grad(), TensorTrace() as trace:
        try:
            route(x.clone())
        except Exception:  # noqa: BLE001 - the first call's outcome is the record's; this one only adds evidence
            pass
    hidden: set[int] = set()
    for entry in trace.traced:
        if entry.op == INPUT or tuple(entry.value.shape) != tuple(x.shape) or x.dim() < 2:
            continue
        rows = (entry.value == float("-inf")).all(dim=-1)
        if entry.op in HIDING_OPS:
            rows |= (entry.value == 0).all(dim=-1) & (x.double() != 0).any(dim=-1)
        hidden.update(int(index[-1]) for index in rows.nonzero())
    return sorted(hidden)


def probe_renormalised(namespace: Namespace, case: ScoresCase) -> WeightsRecord:
    return probe_route(lookup(namespace, "causal_weights_renormalised"), weights_input, case)


def probe_neg_inf(namespace: Namespace, case: ScoresCase) -> WeightsRecord:
    return probe_route(lookup(namespace, "causal_weights_neg_inf"), scores_input, case)


# What each masking route is called with: its weights, or its scores (the neg_inf route).
ROUTE_INPUTS = {"weights": weights_input, "scores": scores_input}


def probe_on_device(name: str, input_kind: str, namespace: Namespace, case: ScoresCase) -> RouteDeviceRecord:
    """Call the student's function `name` on an input on another device and report plain facts.

    `input_kind` names the route's input in ROUTE_INPUTS: the check binds both as plain strings, so the grading
    child can be told which probe to run without being handed a function.
    """
    make_input = ROUTE_INPUTS[input_kind]
    function = lookup(namespace, name)
    function(make_input(case))  # it must run on the CPU first: if it does not, its exception is the answer
    device = probe_device_kind(case["device"])
    x = make_input(case).to(device)
    watch = DeviceMixWatch()
    try:
        with watch:
            output = function(x)
    except Exception as exc:  # noqa: BLE001 - failing on the device is the finding
        # The op that failed is noted before it runs: a CPU tensor mixed in is seen even where it raised.
        return {"device": device, "failure": describe_exception(exc), "mixed": watch.mixed[:5]}
    if not isinstance(output, torch.Tensor):
        raise ProbeError("error.wrong_type", got=type(output).__module__ + "." + type(output).__name__)
    return {"device": torch.device(device).type, "mixed": watch.mixed[:5], "shape": list(output.shape),
            "output_device": output.device.type, "dtype": dtype_name(output.dtype)}
