"""Probes of notebook 03 (causal_mask, the two masking routes, CausalAttention): the notes' inputs rebuilt without
the reference, the student's functions and module called on them. The judges are in
autograder.course.checks.n03_causal_attention.
"""

import functools

import torch

from autograder.checking.probing import (
    PROJECTIONS,
    DeviceMixWatch,
    ProbeError,
    TransposeCrash,
    call_watched,
    describe_exception,
    dtype_name,
    forbidden_calls,
    gradient_flow,
    layer_inputs,
    lookup,
    plain,
    rand,
    seeded,
    state_of,
)
from autograder.course.probes.cases import CausalCase, MaskCase, Namespace, ScoresCase
from autograder.course.probes.inputs import ATTENTION_FUNCTIONS, DTYPES, notes_batch, notes_inputs, probe_device_kind
from autograder.course.probes.loading import load_case_weights
from autograder.course.probes.records import CausalForwardRecord, MaskRecord, RouteDeviceRecord, WeightsRecord

NOTES_V2_SEED = 789  # the notes build SelfAttention_v2 under this seed, then mask its weights


NOTES_CAUSAL_SEED = 123  # ... and CausalAttention(3, 2, 6, 0.0) under this one


NOTES_D_OUT = 2


SCORE_SPREAD = 3.0  # hidden scores in [-3, 3): softmax weights far from uniform, so mistakes show


def probe_causal_mask(namespace: Namespace, case: MaskCase) -> MaskRecord:
    causal_mask = lookup(namespace, "causal_mask")
    return {"mask": plain(causal_mask(case["num_tokens"]))}


def notes_attention_scores():
    """The notes' unscaled scores queries @ keys.T of SelfAttention_v2 under seed 789 (no reference involved)."""
    with seeded(NOTES_V2_SEED), torch.no_grad():
        d_in = len(notes_inputs()[0])
        # The notes' class creates W_query, W_key, W_value in this order; the seed fixes their values.
        w_query, w_key, _w_value = (torch.nn.Linear(d_in, NOTES_D_OUT, bias=False) for _ in range(3))
        inputs = notes_inputs()
        return w_query(inputs) @ w_key(inputs).T  # (6, 6)


def notes_attention_weights():
    return torch.softmax(notes_attention_scores() / NOTES_D_OUT**0.5, dim=-1)


def scores_input(case):
    if case.get("input") == "notes":
        return notes_attention_scores()
    return rand(case["seed"], *case["shape"], dtype=DTYPES[case["dtype"]]) * SCORE_SPREAD


def weights_input(case):
    if case.get("input") == "notes":
        return notes_attention_weights()
    return torch.softmax(scores_input(case), dim=-1)


def probe_route(route, make_input, case) -> WeightsRecord:
    """A masking route's output, whether it edited the caller's tensor, and whether gradients reach that tensor
    through it (its input made by a softmax or a product, as in attention, so an in-place edit breaks backward)."""
    x = make_input(case)
    kept = x.clone()
    data: WeightsRecord = {"weights": plain(route(x))}
    unchanged = torch.equal(x.isnan(), kept.isnan()) and torch.equal(x.nan_to_num(), kept.nan_to_num())
    data["input_changed"] = not unchanged
    # The weights route gets softmax(scores), as in attention: a weight edited in place then breaks backward.
    def from_scores(scores):
        return route(torch.softmax(scores, dim=-1)) if make_input is weights_input else route(scores)

    data["backward"], error = gradient_flow(from_scores, scores_input(case))
    if error is not None:
        data["backward_error"] = error
    return data


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
    try:
        with DeviceMixWatch() as watch:
            output = function(x)
    except Exception as exc:  # noqa: BLE001 - failing on the device is the finding
        return {"device": device, "failure": describe_exception(exc)}
    if not isinstance(output, torch.Tensor):
        raise ProbeError("error.wrong_type", got=type(output).__module__ + "." + type(output).__name__)
    return {"device": torch.device(device).type, "mixed": watch.mixed[:5], "shape": list(output.shape),
            "output_device": output.device.type, "dtype": dtype_name(output.dtype)}


def attention_input(case: CausalCase) -> torch.Tensor:
    """(batch, num_tokens, d_in): the notes' sentence twice (torch.stack((inputs, inputs))), or random values."""
    if case.get("input") == "notes":
        return notes_batch()
    return rand(case["seed"], case["batch"], case["num_tokens"], case["d_in"], dtype=DTYPES[case["dtype"]])


def build_module(namespace, case, dropout=0.0):
    """The student's CausalAttention, built as the book does, under the case's seed, in the case's dtype."""
    causal_attention = lookup(namespace, "CausalAttention")
    with seeded(case.get("init_seed", NOTES_CAUSAL_SEED)):
        if case.get("input") == "notes":  # exactly the notes' call, so their printed numbers can be compared
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout)
        else:
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout,
                                      qkv_bias=case["qkv_bias"])
    return load_case_weights(module.to(DTYPES[case["dtype"]]), case)


def projection_state(module):
    """W_query/W_key/W_value weights (and biases) as plain tensors; a clear error when a layer is missing."""
    state = state_of(module)
    for name in PROJECTIONS:
        if f"{name}.weight" not in state:
            raise ProbeError("causal_attention.missing_layer", name=name)
    return {key: value for key, value in state.items() if key.split(".")[0] in PROJECTIONS}


def naming_transpose_crash(probe):
    """The probe, with a crash caused by `.T` on a batch turned into probe data (runner would say "shapes")."""
    @functools.wraps(probe)  # keeps the probe's name: the grading child finds it by name
    def probe_naming_transpose(namespace, case):
        try:
            return probe(namespace, case)
        except TransposeCrash:
            return {"transpose_crash": True}

    return probe_naming_transpose


@naming_transpose_crash
def probe_forward(namespace: Namespace, case: CausalCase) -> CausalForwardRecord:
    module = build_module(namespace, case)
    state = projection_state(module)
    with layer_inputs(module, "dropout") as seen:
        output, watch = call_watched(module, attention_input(case))
    data: CausalForwardRecord = {"output": plain(output), "state": state, "transpose_batched": watch.batched_transpose,
                                 "forbidden": forbidden_calls(watch.names, ATTENTION_FUNCTIONS)}
    if "dropout" in seen:
        data["weights_seen"] = seen["dropout"]
    return data

