"""Judges of load_v2_weights_into_v1: decide from the probe's data, the case and the reference's expectations. Imports
no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import REPRODUCED_BY, reproducing, same
from autograder.checking.diagnosis import explain_error
from autograder.checking.expectations import Expectations
from autograder.checking.probing import PROJECTIONS
from autograder.course.n02_trainable_self_attention.ex2_transfer_weights.probe import (
    TransferCase,
    TransferRecord,
    square_case,
    transfer_weights,
)

__all__ = ["judge_transfer", "judge_transfer_copies", "judge_transfer_returns"]


def judge_transfer(record: TransferRecord, case: TransferCase, expectations: Expectations) -> Verdict:
    """v2 left alone, then each of v1's parameters v2's weight transposed. Needs no reference: the case's own weights
    say what is right. (With every weight equal to v2's transpose, v1 and v2 compute the same attention.)"""
    if "raised" in record:
        return judge_raised(record, case)
    v1_start, v2_weights = transfer_weights(case)
    v1, v2 = record["v1"], record["v2"]
    for name in PROJECTIONS:
        if not same(v2.get(f"{name}.weight"), v2_weights[name]):
            # "an in-place transpose modifies them" only where v2's weight now is its own transpose (issue 58)
            transposed = same(v2.get(f"{name}.weight"), v2_weights[name].T)
            return Verdict(False, "transfer_weights.v2_changed" if transposed else "transfer_weights.v2_modified",
                           {"name": name})
    if all(same(v1.get(name), v1_start[name]) for name in PROJECTIONS):
        return Verdict(False, *_returned("transfer_weights.unchanged", record["returned"]))
    for name in PROJECTIONS:
        got, want = v1.get(name), v2_weights[name].T
        if got is None:
            return Verdict(False, "transfer_weights.missing_parameter", {"name": name})
        if not same(got, want):
            # Most specific first: weight as it is (square only: its shape fits), then weight regrouped into v1's
            # shape by reshape or view (the same shape as the transpose, other values).
            candidates = [("weights_not_transposed", v2_weights[name]),
                          ("reshape_not_transpose", v2_weights[name].reshape(want.shape))]
            candidates += [("weights_mixed_up", v2_weights[other].T) for other in PROJECTIONS if other != name]
            # Where two give the same weight (a square one's reshape is itself) neither is named here, but both
            # are listed: the attempt's other cases may tell them apart (autograder.checking.results).
            found = reproducing(got, want, candidates)
            named = found[0] if len(found) == 1 else None
            fields: dict[str, object] = {"name": name, REPRODUCED_BY: found} if found else {"name": name}
            return Verdict(False, "transfer_weights.wrong_weight", fields, misconception=named,
                           evidence=Evidence.VARIANT if named else None, expected=want, got=got)
        if got.dtype != want.dtype:
            # `same` compares values in float64: float64 weights rebuilt as float32 keep them to float32's
            # rounding, and only the dtype, read from v1's own parameter, tells the copy changed them.
            return Verdict(False, "transfer_weights.dtype_changed",
                           {"name": name, "got": str(got.dtype), "expected": str(want.dtype)})
    return Verdict(True)


def judge_transfer_copies(record: TransferRecord, case: TransferCase, expectations: Expectations) -> Verdict:
    """v1 keeps its own Parameters, still trainable (leaves that require grad), sharing no memory with v2's. The
    values are the other checks' to judge; a call that raised is judged as they judge it (one cause, one verdict
    across the exercise's checks)."""
    if "raised" in record:
        return judge_raised(record, case)
    v1_start, _ = transfer_weights(case)
    if all(same(record["v1"].get(name), v1_start[name]) for name in PROJECTIONS):
        # Nothing was transferred: there is no copy to judge, and no point for it.
        return Verdict(False, *_returned("transfer_weights.unchanged", record["returned"]))
    if record["shared"]:
        return Verdict(False, "transfer_weights.shares_memory", {"name": record["shared"][0]},
                       misconception="aliased_not_copied", evidence=Evidence.FACT)  # storage compared
    if record["replaced"]:
        return Verdict(False, "transfer_weights.parameters_replaced", {"name": record["replaced"][0]},
                       misconception="parameters_replaced", evidence=Evidence.FACT)  # objects compared
    if record.get("grad_left_off"):
        # Read from torch after the call: gradients off for every computation that follows, v1's training included.
        return Verdict(False, "transfer_weights.grad_left_off", misconception="grad_mode_left_off",
                       evidence=Evidence.FACT)
    if record.get("frozen"):
        # Read from v1's own parameter: requires_grad switched off (to copy into it) and never switched back.
        return Verdict(False, "transfer_weights.frozen", {"name": record["frozen"][0]},
                       misconception="parameters_left_frozen", evidence=Evidence.FACT)
    if record.get("recorded"):
        # Read from v1's own parameter: it has a grad_fn, so it is no leaf and backward leaves its .grad empty.
        return Verdict(False, "transfer_weights.copy_recorded", {"name": record["recorded"][0]},
                       misconception="copy_recorded_into_parameter", evidence=Evidence.FACT)
    return Verdict(True)


def judge_transfer_returns(record: TransferRecord, case: TransferCase, expectations: Expectations) -> Verdict:
    """The function returns sa_v1 itself, the module it filled, as its text says; a call that raised says why."""
    if "raised" in record:
        return judge_raised(record, case)
    if record["returned"] != "sa_v1":
        return Verdict(False, *_returned("transfer_weights.not_returned", record["returned"]))
    return Verdict(True)


# What the probe calls a returned value it names (TransferRecord.returned); anything else is an object's type.
NAMED_RETURNS = frozenset({"sa_v1", "sa_v2", "None"})


def _returned(key: str, returned: str) -> tuple[str, dict[str, object]]:
    """The message key and fields that say what the function returned: a name, or an object of a type (never the
    type itself: "returned SelfAttention_v1" would read as the class)."""
    return (key if returned in NAMED_RETURNS else f"{key}_object"), {"returned": returned}


def judge_raised(record: TransferRecord, case: TransferCase) -> Verdict:
    """A call that raised: with the square pair's run where the probe made one (the raise may be a missing .T)."""
    return judge_transfer_raised(record, case) if "square" in record else raised_verdict(record, case)


def raised_verdict(data: TransferRecord, case: TransferCase) -> Verdict:
    """What the exception says; named copy_without_no_grad where the same call ran with autograd recording nothing
    (the probe's `unrecorded` run): then recording the copy was what failed, a fact of this function."""
    if "unrecorded" in data:
        raised = data["raised"]
        fields = {"type": raised.get("type", ""), "detail": " ".join(str(raised.get("message", "")).split())[:160]}
        return Verdict(False, "error.leaf_in_place", fields, misconception="copy_without_no_grad",
                       evidence=Evidence.FACT)
    return explain_error(data["raised"], case)


def judge_transfer_raised(record: TransferRecord, case: TransferCase) -> Verdict:
    """The function raised for d_in != d_out; name the missing .T when the square run copied weight as it is."""
    _, v2_weights = transfer_weights(square_case(case))
    copied = [record["square"]["v1"].get(name) for name in PROJECTIONS]
    as_is = [same(got, v2_weights[name]) for got, name in zip(copied, PROJECTIONS, strict=True)]
    transposed = [same(got, v2_weights[name].T) for got, name in zip(copied, PROJECTIONS, strict=True)]
    if any(as_is) and all(a or t for a, t in zip(as_is, transposed, strict=True)):
        raised = record["raised"]
        detail = " ".join(str(raised.get("message", "")).split())[:160]
        fields = {"type": raised.get("type", ""), "detail": detail}
        # On a square pair, copying the weights as they are reproduces what the function wrote.
        return Verdict(False, "transfer_weights.raised_untransposed", fields, misconception="weights_not_transposed",
                       evidence=Evidence.VARIANT)
    return explain_error(record["raised"], case)
