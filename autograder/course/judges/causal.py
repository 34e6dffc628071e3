"""Judges of notebook 03: causal_mask, the two masking routes and CausalAttention's forward pass."""

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    causal_mask_verdict,
    causal_weights_problem,
    located_fault,
    returned_weights,
)
from autograder.course.probes.cases import CausalCase, MaskCase, ScoresCase
from autograder.course.probes.causal import attention_input
from autograder.course.probes.records import CausalForwardRecord, MaskRecord, RouteDeviceRecord, WeightsRecord


def judge_causal_mask(data: MaskRecord, case: MaskCase, expected: Expectations) -> Verdict:
    """Shape, bool dtype, then the first wrong query/key pair. Expectations: mask, variants."""
    return causal_mask_verdict(data["mask"], expected["mask"], expected["variants"], case["num_tokens"])


def judge_causal_weights(data: WeightsRecord, case: ScoresCase, expected: Expectations) -> Verdict:
    """Same weights as expected, exact zeros above the diagonal, the same dtype; else the first broken property.
    Expectations: output, future (True above the diagonal), mistakes."""
    got, want = data["weights"], expected["output"]
    shown = {"expected": want, "got": got, "input_shape": tuple(want.shape)}
    if got.shape != want.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(want.shape)},
                       **shown)
    problem = causal_weights_problem(got, want, expected["future"])
    if problem is not None:
        key, fields = problem
        return Verdict(False, key, fields, misconception=diagnose(got, want, expected["mistakes"]), heatmap=True,
                       **shown)
    if data.get("input_changed"):
        return Verdict(False, "causal_weights.input_modified", misconception="input_edited_in_place")
    backward = data.get("backward", "ok")
    if backward == "raised":
        error = data["backward_error"]
        return Verdict(False, "causal_weights.backward_failed",
                       {"type": error["type"], "detail": " ".join(str(error["message"]).split())[:160]},
                       misconception="input_edited_in_place" if "inplace" in str(error["message"]) else None)
    if backward != "ok":
        return Verdict(False, f"causal_weights.{backward}")
    return dtype_verdict("causal_weights", got, want.dtype)


def judge_forward(data: CausalForwardRecord, case: CausalCase, expected: Expectations) -> Verdict:
    """CausalAttention's output with the student's own weights; no built-in attention. Expectations: output,
    variants."""
    if data.get("transpose_crash"):
        return Verdict(False, "causal_attention.transpose_batched", misconception="transpose_batched")
    if data["forbidden"]:
        return Verdict(False, "causal_attention.builtin", {"names": ", ".join(data["forbidden"])})
    x, got, want = attention_input(case), data["output"], expected["output"]
    if same(got, want):
        return dtype_verdict("causal_weights", got, want.dtype)
    if got.shape != want.shape and (stopped_early := returned_weights(got, expected)) is not None:
        return stopped_early
    verdict = compare(got, want, message_key="causal_attention.wrong_output", variants=expected["variants"],
                      input_shape=tuple(x.shape))
    if verdict.misconception is None and data["transpose_batched"]:
        verdict.misconception = "transpose_batched"
    if verdict.misconception is None and got.shape == want.shape:
        # No catalogued mistake: say which stage first differs, and the scale used if that is what differs.
        sizes = {"d_out": case["d_out"], "d_in": case["d_in"]}
        located = located_fault(data.get("weights_seen"), expected, scaled_by="d_out", sizes=sizes,
                                after_key="attention.after_weights")
        if located is not None:
            verdict.message_key, verdict.fields = located.message_key, located.fields
            verdict.misconception = located.misconception
    return verdict


def judge_on_device(data: RouteDeviceRecord, case: ScoresCase, expected: Expectations) -> Verdict:
    """A masking route on an input on another device: runs there, mixes in no CPU tensor, keeps shape and dtype."""
    device = data["device"]
    error = data.get("failure")
    if error is not None:
        named = "tensor_created_on_cpu" if "device" in error["message"] else None
        return Verdict(False, "causal_weights.device_failed", {"device": device, "type": error["type"],
                                                               "detail": error["message"][:160]}, misconception=named)
    if data["mixed"]:
        return Verdict(False, "causal_weights.tensor_on_cpu", {"device": device, "op": data["mixed"][0]},
                       misconception="tensor_created_on_cpu")
    if tuple(data["shape"]) != tuple(case["shape"]) or data["output_device"] != device:
        return Verdict(False, "causal_weights.device_output", {"device": device})
    if data["dtype"] != case["dtype"]:
        return Verdict(False, "causal_weights.dtype", {"got_dtype": data["dtype"], "expected_dtype": case["dtype"]})
    return Verdict(True)
