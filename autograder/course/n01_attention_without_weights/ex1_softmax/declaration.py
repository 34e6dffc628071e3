"""Checks for softmax_naive and softmax_stable (notebook 01).

Public checks run on the notes' sentence "Your journey starts with one step"; hidden checks use random shapes,
float64 and (for softmax_stable) inputs large enough to overflow exp. Both softmax exercises are from scratch:
calling one of torch's softmax functions costs their rule check. What every notebook's probes share (the notes'
inputs, dtypes) is in autograder.course.shared.
"""

import random
from collections.abc import Iterable
from functools import partial
from typing import Any

import torch
from torch import Tensor

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import FAILING_ALIKE, RAISED, Expectations, case_alone
from autograder.checking.gradient_departure import GRAPH_STEPS, NEIGHBOUR
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.n01_attention_without_weights import NOTEBOOK
from autograder.course.n01_attention_without_weights.ex1_softmax.judge import judge_softmax, judge_softmax_rules
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import (
    SoftmaxRecord,
    TensorCase,
    case_tensor,
    probe_softmax_naive,
    probe_softmax_naive_rules,
    probe_softmax_stable,
    probe_softmax_stable_rules,
)
from autograder.course.value_variants import failing_alike

__all__ = ["DECLARATION", "SOFTMAX_MESSAGES", "random_case"]

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("softmax_naive", NOTEBOOK, ("softmax_naive",), {"en": "Naive softmax", "zh": "朴素 softmax"}, minutes=10,
             difficulty=1),
    Exercise("softmax_stable", NOTEBOOK, ("softmax_stable",),
             {"en": "Numerically stable softmax", "zh": "数值稳定的 softmax"}, minutes=15, difficulty=2),
)


def random_case(rng: random.Random, shape: Iterable[int], **extra: Any) -> TensorCase:
    # `extra`: other TensorCase keys (scale, dtype, dim), given by name.
    return {"input": "random", "seed": rng.randrange(2**31), "shape": list(shape), **extra}  # type: ignore[typeddict-item]


# ---------------------------------------------------------------------------------------------
# softmax_naive(x) and softmax_stable(x, dim=-1): one probe, called with dim when the case has one


def softmax_mistakes(x: Tensor, dim: int) -> list[tuple[str, Tensor]]:
    """(misconception, wrong output) pairs of the softmax mistakes that run on x."""
    dim = dim % x.dim()
    exp = torch.exp(x)
    pairs = [
        ("naive_softmax_overflow", exp / exp.sum(dim=dim, keepdim=True)),
        ("normalised_without_exp", x / x.sum(dim=dim, keepdim=True)),
    ]
    others = [other for other in range(x.dim()) if other != dim]
    pairs += [("softmax_dim_ignored", solutions.softmax_stable(x, dim=other)) for other in others]
    for other in others:  # the max along one axis, the sum along another: each row shifted by different amounts
        shifted_across = torch.exp(x - x.max(dim=other, keepdim=True).values)
        pairs.append(("max_and_sum_axes_differ", shifted_across / shifted_across.sum(dim=dim, keepdim=True)))
        shifted_along = torch.exp(x - x.max(dim=dim, keepdim=True).values)
        pairs.append(("max_and_sum_axes_differ", shifted_along / shifted_along.sum(dim=other, keepdim=True)))
    # One maximum over the whole tensor: a right softmax while no row's exponentials underflow; on rows of very
    # different sizes a row far below the largest value becomes 0 / 0.
    shifted_globally = torch.exp(x - x.max())
    pairs.append(("softmax_global_max", shifted_globally / shifted_globally.sum(dim=dim, keepdim=True)))
    for keep_max, keep_sum in ((False, False), (True, False), (False, True)):
        try:  # without keepdim the reduced tensor broadcasts along the wrong axis, or not at all
            shifted = torch.exp(x - x.max(dim=dim, keepdim=keep_max).values)
            pairs.append(("missing_keepdim", shifted / shifted.sum(dim=dim, keepdim=keep_sum)))
        except RuntimeError:
            continue
    return pairs


def softmax_steps(x: Tensor, dim: int, stable: bool) -> list[list[Any]]:
    """The notes' softmax as named steps (autograder.checking.departure.step): for the stable one the maximum and
    the inputs minus it first; then the exponentials, their sums and the division (its output is the reference's)."""
    # Ordered: no step is matched by a transpose of the learner's tensor. The notes' scores are symmetric, so a
    # maximum subtracted along the wrong axis gives the transpose of the notes' shifted scores, not a layout of them.
    steps = []
    if stable:
        maximum = x.max(dim=dim, keepdim=True).values
        x = x - maximum
        steps += [step("maximum", maximum, ordered=True), step("shifted", x, ordered=True)]
    exponentials = torch.exp(x)
    sums = exponentials.sum(dim=dim, keepdim=True)
    # The sums in the notes' own shape: their naive softmax drops the summed axis (its sum over dim 0 broadcasts along
    # the right axis), their stable one keeps it.
    return [*steps, step("exponentials", exponentials, ordered=True),
            step("sums", sums if stable else sums.squeeze(dim), ordered=True),
            step("division", exponentials / sums, ordered=True)]


PROBES = {"softmax_naive": probe_softmax_naive, "softmax_stable": probe_softmax_stable}
RULES_PROBES = {"softmax_naive": probe_softmax_naive_rules, "softmax_stable": probe_softmax_stable_rules}


@case_alone
def expect_softmax(function_name: str, default_dim: int, record: SoftmaxRecord, case: TensorCase) -> Expectations:
    """The reference's softmax of the case's input (with the case's dim, if any) and the outputs of known mistakes."""
    x, dim = case_tensor(case), case.get("dim", default_dim)
    function = getattr(solutions, function_name)
    return Expectations.computed(output=lambda: function(x, dim=case["dim"]) if "dim" in case else function(x),
                                 mistakes=lambda: softmax_mistakes(x, dim),
                                 **{STEPS: lambda: softmax_steps(x, dim, function_name == "softmax_stable")},
                                 **{RAISED: exercise_errors(function_name, PROBES[function_name], case)})


@case_alone
def expect_softmax_steps(function_name: str, default_dim: int, record: SoftmaxRecord,
                         case: TensorCase) -> Expectations:
    """The notes' steps, for the rules check: its judge reads no expectation, and rung 2 reads the steps in the
    run with gradients on only (autograder.checking.gradient_departure): the values are the other checks' matter.
    On a vector (where the judge reads the gradient) also the steps on an input beside it (NEIGHBOUR: where a
    gradient is the function's own slope, its values there show the step that changes otherwise), and the verdicts
    the exercise's value variants get here (a mistake another check proves that fails this one alike)."""
    x, dim = case_tensor(case), case.get("dim", default_dim)
    stable = function_name == "softmax_stable"
    sources: dict[str, Any] = {GRAPH_STEPS: lambda: softmax_steps(x, dim, stable)}
    if x.dim() == 1:
        near = neighbour_case(case)
        sources[NEIGHBOUR] = lambda: [near, softmax_steps(case_tensor(near), dim, stable)]
        sources[FAILING_ALIKE] = failing_alike(function_name, RULES_PROBES[function_name],
                                               partial(judge_softmax_rules, function_name),
                                               partial(expect_softmax_steps, function_name, default_dim), case)
    return Expectations.computed(**sources)


def neighbour_case(case: TensorCase) -> TensorCase:
    """The vector of `case` with its entries moved by NUDGE, up and down in turn: as the case, but for its values."""
    x = case_tensor(case).double()
    nudged = [value + (NUDGE if index % 2 == 0 else -NUDGE) for index, value in enumerate(x.tolist())]
    near: TensorCase = {"input": "values", "values": nudged}
    for key in ("dtype", "dim"):
        if key in case:
            near[key] = case[key]  # type: ignore[literal-required]
    return near


# How far the neighbour's entries lie from the case's: far above float32's spacing at the grader's largest entries
# (1000: 6e-5), and small beside softmax's scale, so that a function whose slope differs here differs there in value.
NUDGE = 0.25


def naive_cases_notes(rng: random.Random) -> list[TensorCase]:
    # The notes' scores are all positive, and their exponentials sum far above 1; the hidden checks' random vectors
    # (one entry included) are often all negative, with exponentials summing below 1. Shown here first, so that a
    # sum bounded below (a clamp at 1) fails now, not only at grading (tests/test_public_case_kinds.py). The four
    # lie far below zero, their exponentials summing to a few billionths: a term added to the sum "to be safe" (1e-8)
    # is no small error there (12x's xy-sn-11), while float32 holds each exponential exactly enough.
    return [{"input": "notes_journey"}, {"input": "values", "values": [-2.0]},
            {"input": "values", "values": [-21.0, -23.5, -20.5, -22.0]}]


def naive_cases_random(rng: random.Random) -> list[TensorCase]:
    # Length 1 is the edge case; above 16 catches code written for the notes' 6 tokens.
    lengths = (1, rng.randint(2, 8), rng.randint(17, 40))
    cases = [random_case(rng, (n,), scale=4.0) for n in lengths]
    # The docstring promises the notes' dim 0: on a matrix that is down each column, not along the last axis.
    matrix = random_case(rng, (rng.randint(2, 6), rng.randint(2, 6)), scale=4.0)
    return [*cases, random_case(rng, (rng.randint(2, 12),), scale=4.0, dtype="float64"), matrix]


def naive_cases_rules(rng: random.Random) -> list[TensorCase]:
    # The rule holds on every kind of input the exercise grades (a vector first, then the notes' sentence and the
    # random checks' kinds): code that calls torch's softmax on the matrix alone must not keep the rule's point.
    return [random_case(rng, (rng.randint(3, 10),), scale=4.0), *naive_cases_notes(rng), *naive_cases_random(rng)]


def stable_cases_notes(rng: random.Random) -> list[TensorCase]:
    # The notes' 6×6 scores row by row, then the overflow example the notebook prints.
    return [{"input": "notes_scores", "dim": -1}, {"input": "values", "values": [1000.0, 1000.0], "dim": -1}]


def stable_cases_random(rng: random.Random) -> list[TensorCase]:
    def shape(rank: int) -> list[int]:
        return [rng.randint(2, 7) for _ in range(rank - 1)] + [rng.randint(2, 20)]

    return [
        random_case(rng, (rng.randint(17, 40),), scale=6.0, dim=-1),
        random_case(rng, shape(2), scale=6.0, dim=-1),
        random_case(rng, shape(2), scale=6.0, dim=0),
        random_case(rng, shape(3), scale=6.0, dim=rng.choice((1, -2))),
        random_case(rng, shape(3), scale=6.0, dim=-1, dtype="float64"),
        # Called without dim: the signature's default is the last axis, whatever the rank.
        random_case(rng, shape(2), scale=6.0),
        random_case(rng, shape(3), scale=6.0),
    ]


def stable_cases_large(rng: random.Random) -> list[TensorCase]:
    return [
        {"input": "values", "values": [1000.0, 1000.0], "dim": -1},
        {"input": "values", "values": [-1000.0, 0.0, 1000.0], "dim": -1},
        {"input": "values", "values": [-1000.0, -1000.0], "dim": -1},  # exp underflows to 0: 0/0
        random_case(rng, (rng.randint(2, 5), rng.randint(3, 9)), scale=1000.0, dim=-1),
    ]


def stable_cases_rules(rng: random.Random) -> list[TensorCase]:
    # A vector first, then every kind of input the other checks grade: the from-scratch rule holds on all of them.
    # Its judge reads the values on vectors only, so a dim or keepdim mistake (already costing other checks) does
    # not cost the rules too.
    return [random_case(rng, (rng.randint(3, 10),), scale=4.0, dim=-1), *stable_cases_notes(rng),
            *stable_cases_random(rng), *stable_cases_large(rng)]


# Each exercise's judges with its name (and the axis it normalises without dim) bound: plain arguments, so the student
# kit can name them (autograder.course.shared.plan.address_of).
JUDGE_NAIVE = partial(judge_softmax, "softmax_naive", 0)
EXPECT_NAIVE = partial(expect_softmax, "softmax_naive", 0)
JUDGE_STABLE = partial(judge_softmax, "softmax_stable", -1)
EXPECT_STABLE = partial(expect_softmax, "softmax_stable", -1)


CHECKS = (
    Check(id="softmax_naive.notes", exercise="softmax_naive", points=2, hidden=False, cases=naive_cases_notes,
          probe=probe_softmax_naive, judge=JUDGE_NAIVE, expect=EXPECT_NAIVE,
          title={"en": "softmax_naive on the scores of \"journey\" matches the notes, and on all-negative scores "
                       "(one entry, then four)",
                 "zh": "softmax_naive 作用在 \"journey\" 的分数上，结果与笔记一致；在全为负数的分数上"
                       "（一个元素，以及四个元素）也正确"}),
    Check(id="softmax_naive.random", exercise="softmax_naive", points=2, hidden=True, cases=naive_cases_random,
          probe=probe_softmax_naive, judge=JUDGE_NAIVE, expect=EXPECT_NAIVE,
          title={"en": "softmax_naive is right on other vectors (1 to 40 entries, float64 kept) and on a matrix (over "
                       "dim 0)",
                 "zh": "softmax_naive 在其他向量上也正确（1 到 40 个元素，保持 float64），在矩阵上沿 dim 0 也正确"}),
    Check(id="softmax_naive.from_scratch", exercise="softmax_naive", points=1, hidden=True, cases=naive_cases_rules,
          probe=probe_softmax_naive_rules, judge=partial(judge_softmax_rules, "softmax_naive"),
          expect=partial(expect_softmax_steps, "softmax_naive", 0),
          title={"en": "softmax_naive is written from scratch (no torch softmax), leaves its input unchanged and "
                       "passes the right gradient back to it",
                 "zh": "softmax_naive 是自己实现的（没有调用 torch 的 softmax），不修改输入，"
                       "并且把正确的梯度传回输入"}),
    Check(id="softmax_stable.notes", exercise="softmax_stable", points=2, hidden=False, cases=stable_cases_notes,
          probe=probe_softmax_stable, judge=JUDGE_STABLE, expect=EXPECT_STABLE,
          title={"en": "softmax_stable matches on the notes' scores and on [1000., 1000.]",
                 "zh": "softmax_stable 在笔记的分数矩阵和 [1000., 1000.] 上结果正确"}),
    Check(id="softmax_stable.random", exercise="softmax_stable", points=2, hidden=True, cases=stable_cases_random,
          probe=probe_softmax_stable, judge=JUDGE_STABLE, expect=EXPECT_STABLE,
          title={"en": "softmax_stable matches torch.softmax on 1-D to 3-D tensors, along any dim, and along the last "
                       "axis when called without dim",
                 "zh": "softmax_stable 在 1 到 3 维张量、任意 dim 上都与 torch.softmax 一致；不传 dim "
                       "时沿最后一个维度计算"}),
    Check(id="softmax_stable.large", exercise="softmax_stable", points=1, hidden=True, cases=stable_cases_large,
          probe=probe_softmax_stable, judge=JUDGE_STABLE, expect=EXPECT_STABLE,
          title={"en": "softmax_stable stays finite and right on very large and very small inputs",
                 "zh": "softmax_stable 在极大和极小的输入上也保持有限且正确"}),
    Check(id="softmax_stable.from_scratch", exercise="softmax_stable", points=1, hidden=True, cases=stable_cases_rules,
          probe=probe_softmax_stable_rules, judge=partial(judge_softmax_rules, "softmax_stable"),
          expect=partial(expect_softmax_steps, "softmax_stable", -1),
          title={"en": "softmax_stable is written from scratch, leaves its input unchanged and passes the right "
                       "gradient back to it",
                 "zh": "softmax_stable 是自己实现的，不修改输入，并且把正确的梯度传回输入"}),
)

SOFTMAX_MESSAGES = {
    "wrong_values": {
        "en": "the weights differ from the softmax of the input",
        "zh": "权重与输入的 softmax 不一致",
    },
    "wrong_values.hidden": {
        "en": "the weights differ from the softmax on an input you have not seen",
        "zh": "在一个你没见过的输入上，权重与 softmax 不一致",
    },
    "not_normalised": {
        "en": "the weights do not sum to 1 along the axis the softmax normalises",
        "zh": "沿 softmax 归一化的那个维度，权重之和不为 1",
    },
    "not_finite": {
        "en": "the result holds nan or inf",
        "zh": "结果中含有 nan 或 inf",
    },
    "dtype": {
        "en": "returned torch.{got_dtype} for a torch.{expected_dtype} input: keep the input's dtype",
        "zh": "输入是 torch.{expected_dtype}，却返回了 torch.{got_dtype}：请保持输入的 dtype",
    },
    "builtin": {
        "en": "calls {names} when run on an input of shape {shape}: write the softmax yourself, from exponentials "
              "and a sum",
        "zh": "在处理形状为 {shape} 的输入时调用了 {names}：请用指数和求和自己实现 softmax",
    },
    "input_changed": {
        "en": "changes its input in place (e.g. x -= ...): compute into a new tensor instead",
        "zh": "原地修改了输入（例如 x -= ...）：请把结果算到一个新张量里",
    },
}

MESSAGES = {
    **{f"{exercise_id}.{key}": text for exercise_id in ("softmax_naive", "softmax_stable")
       for key, text in SOFTMAX_MESSAGES.items()},
    "softmax_stable.not_finite.hidden": {
        "en": "the result holds nan or inf: exp overflowed (or underflowed to 0/0)",
        "zh": "结果中含有 nan 或 inf：exp 上溢了（或下溢成 0/0）",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
