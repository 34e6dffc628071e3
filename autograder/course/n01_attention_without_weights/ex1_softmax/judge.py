"""Judges of softmax_naive and softmax_stable: decide from the probe's data, the case and the reference's expectations.
Imports no reference or declaration: the student kit ships it as it is."""

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare_named, dtype_verdict, rename, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import no_gradient
from autograder.checking.probing import gradient_weights
from autograder.checking.torch_recorders import forbidden_calls
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import (
    NEAR_OVERFLOW,
    SoftmaxRecord,
    TensorCase,
    case_tensor,
)

__all__ = ["SOFTMAX_FUNCTIONS", "judge_softmax", "judge_softmax_rules"]

# Names as FunctionCalls records them: every alias (torch.softmax, Tensor.softmax, nn.Softmax, torch.ops.aten._softmax,
# torch.special.softmax...) is recorded as the public function (torch_recorders.OP_FAMILIES). Library attention
# computes a softmax too; an op registered with torch.library ("custom_op", torch_recorders.CUSTOM_OP) or switching
# the recorders off ("disabled_torch_modes", torch_recorders.MODES_OFF) hides what is computed.
SOFTMAX_FUNCTIONS = frozenset(
    {"softmax", "log_softmax", "softmin", "gumbel_softmax", "scaled_dot_product_attention",
     "multi_head_attention_forward", "custom_op", "disabled_torch_modes"}
)


# Misconceptions whose hint is about a `dim` parameter (and its maximum): named only where the function has one.
DIM_PREMISED = frozenset({"softmax_dim_ignored", "max_and_sum_axes_differ"})


def judge_softmax(exercise_id: str, default_dim: int, record: SoftmaxRecord, case: TensorCase,
                  expectations: Expectations) -> Verdict:
    """Shape, values (naming a mistake when one reproduces them), then dtype. `default_dim`: the axis the function
    normalises when the case passes no dim. Expectations: output, mistakes."""
    x, dim = case_tensor(case), case.get("dim", default_dim)
    got, want = record["output"], expectations["output"]
    if not same(got, want):
        key = f"{exercise_id}.wrong_values"
        if got.shape == want.shape and not torch.isfinite(got).all():
            key = f"{exercise_id}.not_finite"
        elif got.shape == want.shape and not same(got.sum(dim=dim), torch.ones_like(want.sum(dim=dim))):
            key = f"{exercise_id}.not_normalised"
        mistakes = [(name, wrong) for name, wrong in expectations["mistakes"]
                    if name != "naive_softmax_overflow" or unshifted_near_overflow(record)]
        verdict = compare_named(got, want, mistakes, message_key=key, input_shape=tuple(x.shape),
                                calls=record.get("calls", ()))
        changed_default = "dim" not in case and record.get("default_dim") not in (None, default_dim)
        if verdict.misconception == "softmax_dim_ignored" and changed_default:
            rename(verdict, "default_dim_changed")  # called without dim, it normalised its own default axis
        if verdict.misconception in DIM_PREMISED and "dim" not in record.get("parameters", ["dim"]):
            # Those hints speak of the dim argument: a function without one summed along another axis than its own.
            rename(verdict, "softmax_sum_wrong_axis")
        return verdict
    return dtype_verdict(exercise_id, got, x.dtype)


def unshifted_near_overflow(record: SoftmaxRecord) -> bool:
    """Whether the learner's softmax_stable gave the unshifted softmax's output on NEAR_OVERFLOW, the case that tells
    a softmax that does not shift its scores from one that shifts them by the wrong amount (the position of the
    maximum, say): on large scores both overflow, and only this case proves the scores were not shifted. A record
    without it (softmax_naive's) proves nothing against the name."""
    if "near_overflow" not in record:
        return True
    exponentials = torch.exp(torch.tensor(NEAR_OVERFLOW, dtype=torch.float32))
    return same(record["near_overflow"], exponentials / exponentials.sum(dim=-1, keepdim=True))


def judge_softmax_rules(exercise_id: str, record: SoftmaxRecord, case: TensorCase,
                        expectations: Expectations) -> Verdict:
    """From scratch and input untouched on every case; on vectors also a result that is a softmax at all (a stub
    earns nothing here) with softmax's gradient. Values along an axis are the other checks' matter."""
    used = forbidden_calls(record["calls"], SOFTMAX_FUNCTIONS)
    x = case_tensor(case)
    if used:  # the shape this case's input had when the call was recorded: a fact of this run
        return Verdict(False, f"{exercise_id}.builtin", {"names": ", ".join(used), "shape": str(tuple(x.shape))})
    if record["input_changed"]:
        return Verdict(False, f"{exercise_id}.input_changed")
    if x.dim() != 1:
        return Verdict(True)
    if record.get("gradient", "ok") != "ok":
        return no_gradient(record["gradient"], record.get("gradient_error"))
    got, dim = record["output"], case.get("dim", 0)
    if not torch.is_floating_point(got) or not same(got.sum(dim=dim), torch.ones_like(got.sum(dim=dim))):
        return Verdict(False, f"{exercise_id}.not_normalised")
    if gradient_faked(record, x, dim):
        return Verdict(False, "function.gradient_faked", misconception="gradient_cut", evidence=Evidence.FACT)
    return Verdict(True)


def gradient_faked(data: SoftmaxRecord, x: torch.Tensor, dim: int) -> bool:
    """A right softmax whose gradient is not softmax's: its numbers came from outside autograd (NumPy, a detached
    library softmax) with a gradient made up for them (`+ x - x.detach()`). Judged from the input the judge
    rebuilds, never from what the child says the output was."""
    got = data.get("input_gradient")
    if got is None:
        return False
    y = torch.softmax(x.double(), dim=dim)
    if not same(data["output"].double(), y.to(data["output"].dtype).double()):
        return False  # a wrong softmax: the value checks say so
    weights = gradient_weights(y.shape)
    want = y * (weights - (weights * y).sum(dim=dim, keepdim=True))
    return tuple(got.shape) != tuple(want.shape) or not torch.allclose(got.double(), want, rtol=1e-3, atol=1e-5)
