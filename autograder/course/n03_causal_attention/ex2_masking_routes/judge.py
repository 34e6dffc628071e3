"""Judges of the two masking routes (renormalised weights, -inf scores): decide from the probe's data, the case and the
reference's expectations. Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import diagnose, dtype_verdict
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    causal_weights_problem,
    gradient_problem,
    hidden_keys,
    mask_family,
)
from autograder.checking.torch_recorders import MODES_OFF
from autograder.course.n03_causal_attention.ex2_masking_routes.probe import RouteDeviceRecord, ScoresCase, WeightsRecord

__all__ = ["judge_causal_weights", "judge_on_device"]


def judge_causal_weights(record: WeightsRecord, case: ScoresCase, expectations: Expectations) -> Verdict:
    """Same weights as expected, exact zeros above the diagonal, the caller's tensor left alone, the reference's
    gradient back to the scores, the same dtype; else the first broken property. Expectations: output, future (True
    above the diagonal), mistakes, input_gradient."""
    got, want = record["weights"], expectations["output"]
    shown = {"expected": want, "got": got, "input_shape": tuple(want.shape)}
    if got.shape != want.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(want.shape)},
                       **shown)
    problem = causal_weights_problem(got, want, expectations["future"])
    if problem is not None:
        key, fields = problem
        if key == "causal_weights.nan" and fields["query"] in record.get("hidden_rows", ()):
            key = "causal_weights.nan_all_hidden"  # the cause, read from the learner's own tensors
        # The mask's family read from the weights' own zeros first: a mask written another way than the catalogued
        # variants (tril for triu, with or without the diagonal) is still named by what it hides.
        family = mask_family(hidden_keys(got))
        named, evidence = (family, Evidence.FACT) if family else (diagnose(got, want, expectations["mistakes"]),
                                                                   Evidence.VARIANT)
        return Verdict(False, key, fields, misconception=named, evidence=evidence if named else None, heatmap=True,
                       **shown)
    if record.get("input_changed"):  # the probe compared the caller's tensor before and after the call
        return Verdict(False, "causal_weights.input_modified", misconception="input_edited_in_place",
                       evidence=Evidence.FACT)
    backward = record.get("backward", "ok")
    if backward in ("raised", "call_raised"):
        error = record["backward_error"]
        # No name: autograd's text says some tensor it saved was edited in place, not that it was the caller's. The
        # phase is where it raised: the call itself, given an input of a graph, or backward() after it.
        return Verdict(False, "causal_weights.backward_failed" if backward == "raised"
                       else "function.call_raised_in_graph",
                       {"type": error["type"], "detail": " ".join(str(error["message"]).split())[:160]})
    if backward != "ok":
        return Verdict(False, f"causal_weights.{backward}")
    if MODES_OFF in record.get("untracked_edits", ()):  # an edit made with the recorder off: fail closed
        return Verdict(False, "function.edit_unseen")
    if record.get("untracked_edits"):  # read from the run: an edit the graph does not hold
        return Verdict(False, "function.untracked_edit", misconception="gradient_cut", evidence=Evidence.FACT)
    wrong = gradient_problem(record.get("input_gradient"), expectations["input_gradient"],
                             message_key="causal_weights.gradient_wrong",
                             own_slope=record.get("gradient_is_own_slope"))
    return wrong or dtype_verdict("causal_weights", got, want.dtype)


def judge_on_device(record: RouteDeviceRecord, case: ScoresCase, expectations: Expectations) -> Verdict:
    """A masking route on an input on another device: runs there, mixes in no CPU tensor, keeps shape and dtype."""
    device = record["device"]
    error = record.get("failure")
    # A CPU tensor mixed into the work on the device is a fact the probe saw (DeviceMixWatch), raised or not.
    named, evidence = ("function_tensor_on_cpu", Evidence.FACT) if record.get("mixed") else (None, None)
    if error is not None:
        return Verdict(False, "causal_weights.device_failed", {"device": device, "type": error["type"],
                                                               "detail": error["message"][:160]},
                       misconception=named, evidence=evidence)
    if record["mixed"]:
        return Verdict(False, "causal_weights.tensor_on_cpu", {"device": device, "op": record["mixed"][0]},
                       misconception=named, evidence=evidence)
    if tuple(record["shape"]) != tuple(case["shape"]) or record["output_device"] != device:
        return Verdict(False, "causal_weights.device_output", {"device": device})
    if record["dtype"] != case["dtype"]:
        return Verdict(False, "causal_weights.dtype", {"got_dtype": record["dtype"], "expected_dtype": case["dtype"]})
    return Verdict(True)
