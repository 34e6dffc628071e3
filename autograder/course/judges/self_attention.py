"""Judges of notebook 02: SelfAttention_v1/v2's output and book exercise 3.1's weight transfer."""

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.diagnosis import explain_error
from autograder.checking.expectations import Expectations
from autograder.checking.probing import PROJECTIONS, forbidden_calls
from autograder.course.probes.cases import SelfAttentionCase, TransferCase
from autograder.course.probes.inputs import ATTENTION_FUNCTIONS
from autograder.course.probes.records import CallsRecord, ForwardRecord, State, TransferRecord
from autograder.course.probes.self_attention import attention_input, square_case, transfer_weights


def projection_problem(exercise_id: str, state: State, case: SelfAttentionCase) -> Verdict | None:
    """A failing Verdict when a projection is missing or misshapen (raw (d_in, d_out) or nn.Linear); else None."""
    d_in, d_out = case["d_in"], case["d_out"]
    for name in PROJECTIONS:
        if name in state:  # a raw (d_in, d_out) parameter used as x @ W
            got_shape, expected_shape = tuple(state[name].shape), (d_in, d_out)
        elif f"{name}.weight" in state:  # an nn.Linear
            got_shape, expected_shape = tuple(state[f"{name}.weight"].shape), (d_out, d_in)
        else:
            return Verdict(False, f"{exercise_id}.missing_weight", {"name": name})
        if got_shape != expected_shape:
            return Verdict(False, f"{exercise_id}.weight_shape",
                           {"name": name, "got_shape": got_shape, "expected_shape": expected_shape})
    return None


def judge_forward(exercise_id: str, data: ForwardRecord, case: SelfAttentionCase, expected: Expectations) -> Verdict:
    """Projections, then the output with the student's own weights. Expectations: output, variants."""
    problem = projection_problem(exercise_id, data["state"], case)
    if problem is not None:
        return problem
    x, got, want = attention_input(case), data["output"], expected["output"]
    if not same(got, want):
        return compare(got, want, message_key=f"{exercise_id}.wrong_output", variants=expected["variants"],
                       input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)


def judge_calls(exercise_id: str, data: CallsRecord, case: SelfAttentionCase, expected: Expectations) -> Verdict:
    """No built-in attention in the forward pass."""
    used = forbidden_calls(data["calls"], ATTENTION_FUNCTIONS)
    if used:
        return Verdict(False, f"{exercise_id}.builtin", {"names": ", ".join(used)})
    return Verdict(True)


def judge_transfer(data: TransferRecord, case: TransferCase, expected: Expectations) -> Verdict:
    """v2 left alone, then each of v1's parameters v2's weight transposed. Needs no reference: the case's own weights
    say what is right. (With every weight equal to v2's transpose, v1 and v2 compute the same attention.)"""
    if "raised" in data:
        return judge_transfer_raised(data, case)
    v1_start, v2_weights = transfer_weights(case)
    v1, v2 = data["v1"], data["v2"]
    for name in PROJECTIONS:
        if not same(v2.get(f"{name}.weight"), v2_weights[name]):
            return Verdict(False, "transfer_weights.v2_changed", {"name": name})
    if all(same(v1.get(name), v1_start[name]) for name in PROJECTIONS):
        return Verdict(False, "transfer_weights.unchanged", {"returned": data["returned"]})
    for name in PROJECTIONS:
        got, want = v1.get(name), v2_weights[name].T
        if got is None:
            return Verdict(False, "transfer_weights.missing_parameter", {"name": name})
        if not same(got, want):
            candidates = [("weights_not_transposed", v2_weights[name])]
            candidates += [("weights_mixed_up", v2_weights[other].T) for other in PROJECTIONS if other != name]
            return Verdict(False, "transfer_weights.wrong_weight", {"name": name},
                           misconception=diagnose(got, want, candidates), expected=want, got=got)
    return Verdict(True)


def judge_transfer_copies(data: TransferRecord, case: TransferCase, expected: Expectations) -> Verdict:
    """v1 keeps its own Parameters, sharing no memory with v2's. The values are the other checks' to judge; a call
    that raised is judged there too."""
    if "raised" in data:
        return explain_error(data["raised"], case)
    v1_start, _ = transfer_weights(case)
    if all(same(data["v1"].get(name), v1_start[name]) for name in PROJECTIONS):
        # Nothing was transferred: there is no copy to judge, and no point for it.
        return Verdict(False, "transfer_weights.unchanged", {"returned": data["returned"]})
    if data["shared"]:
        return Verdict(False, "transfer_weights.shares_memory", {"name": data["shared"][0]},
                       misconception="aliased_not_copied")
    if data["replaced"]:
        return Verdict(False, "transfer_weights.parameters_replaced", {"name": data["replaced"][0]},
                       misconception="parameters_replaced")
    return Verdict(True)


def judge_transfer_raised(data: TransferRecord, case: TransferCase) -> Verdict:
    """The function raised for d_in != d_out; name the missing .T when the square run copied weight as it is."""
    _, v2_weights = transfer_weights(square_case(case))
    copied = [data["square"]["v1"].get(name) for name in PROJECTIONS]
    as_is = [same(got, v2_weights[name]) for got, name in zip(copied, PROJECTIONS, strict=True)]
    transposed = [same(got, v2_weights[name].T) for got, name in zip(copied, PROJECTIONS, strict=True)]
    if any(as_is) and all(a or t for a, t in zip(as_is, transposed, strict=True)):
        raised = data["raised"]
        detail = " ".join(str(raised.get("message", "")).split())[:160]
        fields = {"type": raised.get("type", ""), "detail": detail}
        return Verdict(False, "transfer_weights.raised_untransposed", fields, misconception="weights_not_transposed")
    return explain_error(data["raised"], case)
