"""Judges of SelfAttention_v1 and SelfAttention_v2: decide from the probe's data, the case and the reference's
expectations. Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.probing import PROJECTIONS
from autograder.checking.torch_recorders import forbidden_calls
from autograder.course.n02_trainable_self_attention.ex1_self_attention.probe import (
    CallsRecord,
    ForwardRecord,
    SelfAttentionCase,
    attention_input,
)
from autograder.course.shared.inputs import ATTENTION_FUNCTIONS
from autograder.course.shared.records import State

__all__ = ["judge_calls", "judge_forward"]


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


def judge_forward(exercise_id: str, record: ForwardRecord, case: SelfAttentionCase,
                  expectations: Expectations) -> Verdict:
    """Projections, then the output with the student's own weights. Expectations: output, variants."""
    problem = projection_problem(exercise_id, record["state"], case)
    if problem is not None:
        return problem
    x, got, want = attention_input(case), record["output"], expectations["output"]
    if not same(got, want):
        return compare(got, want, message_key=f"{exercise_id}.wrong_output", variants=expectations["variants"],
                       input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)


def judge_calls(exercise_id: str, record: CallsRecord, case: SelfAttentionCase, expectations: Expectations) -> Verdict:
    """No built-in attention in the forward pass."""
    used = forbidden_calls(record["calls"], ATTENTION_FUNCTIONS)
    if used:  # the shape of this case's input, on which the call was recorded: a fact of this run
        return Verdict(False, f"{exercise_id}.builtin",
                       {"names": ", ".join(used), "shape": str(tuple(attention_input(case).shape))})
    return Verdict(True)
