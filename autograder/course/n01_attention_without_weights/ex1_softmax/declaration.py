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
from autograder.checking.expectations import Expectations
from autograder.course.declaration import Declaration, misconception
from autograder.course.n01_attention_without_weights import NOTEBOOK
from autograder.course.n01_attention_without_weights.ex1_softmax.judge import judge_softmax, judge_softmax_rules
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import (
    SoftmaxRecord,
    TensorCase,
    case_tensor,
    probe_softmax_naive,
    probe_softmax_stable,
)

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


def expect_softmax(function_name: str, default_dim: int, case: TensorCase, data: SoftmaxRecord) -> Expectations:
    """The reference's softmax of the case's input (with the case's dim, if any) and the outputs of known mistakes."""
    x, dim = case_tensor(case), case.get("dim", default_dim)
    function = getattr(solutions, function_name)
    return Expectations.computed(output=lambda: function(x, dim=case["dim"]) if "dim" in case else function(x),
                                 mistakes=lambda: softmax_mistakes(x, dim))


def naive_cases_notes(rng: random.Random) -> list[TensorCase]:
    return [{"input": "notes_journey"}]


def naive_cases_random(rng: random.Random) -> list[TensorCase]:
    # Length 1 is the edge case; above 16 catches code written for the notes' 6 tokens.
    lengths = (1, rng.randint(2, 8), rng.randint(17, 40))
    cases = [random_case(rng, (n,), scale=4.0) for n in lengths]
    # The docstring promises the notes' dim 0: on a matrix that is down each column, not along the last axis.
    matrix = random_case(rng, (rng.randint(2, 6), rng.randint(2, 6)), scale=4.0)
    return [*cases, random_case(rng, (rng.randint(2, 12),), scale=4.0, dtype="float64"), matrix]


def naive_cases_rules(rng: random.Random) -> list[TensorCase]:
    return [random_case(rng, (rng.randint(3, 10),), scale=4.0)]


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
    # 1-D, so that a dim or keepdim mistake (already costing other checks) does not cost the rules too.
    return [random_case(rng, (rng.randint(3, 10),), scale=4.0, dim=-1)]


# Each exercise's judges with its name (and the axis it normalises without dim) bound: plain arguments, so the student
# kit can name them (autograder.course.shared.plan.address_of).
JUDGE_NAIVE = partial(judge_softmax, "softmax_naive", 0)
EXPECT_NAIVE = partial(expect_softmax, "softmax_naive", 0)
JUDGE_STABLE = partial(judge_softmax, "softmax_stable", -1)
EXPECT_STABLE = partial(expect_softmax, "softmax_stable", -1)


CHECKS = (
    Check(id="softmax_naive.notes", exercise="softmax_naive", points=2, hidden=False, cases=naive_cases_notes,
          probe=probe_softmax_naive, judge=JUDGE_NAIVE, expect=EXPECT_NAIVE,
          title={"en": "softmax_naive on the scores of \"journey\" matches the notes",
                 "zh": "softmax_naive 作用在 \"journey\" 的分数上，结果与笔记一致"}),
    Check(id="softmax_naive.random", exercise="softmax_naive", points=2, hidden=True, cases=naive_cases_random,
          probe=probe_softmax_naive, judge=JUDGE_NAIVE, expect=EXPECT_NAIVE,
          title={"en": "softmax_naive is right on other vectors (1 to 40 entries, float64 kept) and on a matrix (over "
                       "dim 0)",
                 "zh": "softmax_naive 在其他向量上也正确（1 到 40 个元素，保持 float64），在矩阵上沿 dim 0 也正确"}),
    Check(id="softmax_naive.from_scratch", exercise="softmax_naive", points=1, hidden=True, cases=naive_cases_rules,
          probe=probe_softmax_naive, judge=partial(judge_softmax_rules, "softmax_naive"),
          title={"en": "softmax_naive is written from scratch (no torch softmax), leaves its input unchanged and lets "
                       "gradients flow back to it",
                 "zh": "softmax_naive 是自己实现的（没有调用 torch 的 softmax），不修改输入，并且梯度能传回输入"}),
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
          probe=probe_softmax_stable, judge=partial(judge_softmax_rules, "softmax_stable"),
          title={"en": "softmax_stable is written from scratch, leaves its input unchanged and lets gradients flow "
                       "back to it",
                 "zh": "softmax_stable 是自己实现的，不修改输入，并且梯度能传回输入"}),
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
        "en": "the weights do not sum to 1",
        "zh": "权重之和不为 1",
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
        "en": "calls {names}: write the softmax yourself, from exponentials and a sum",
        "zh": "调用了 {names}：请用指数和求和自己实现 softmax",
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

MISCONCEPTIONS = (
    misconception("naive_softmax_overflow",
      "softmax overflows on large inputs",
      "softmax 在大输入上溢出",
      "the exponential of a large score overflows to infinity, and infinity over infinity is not a number; "
      "shifting every score of a row by the same amount leaves the softmax unchanged",
      "大分数的指数会上溢成无穷大，无穷大除以无穷大不是一个数；同一行的每个分数都减去同一个数，softmax 的结果不变",
      question=("What is the exponential of a score of 1000 in floating point, and what do you get when you "
                "divide it by itself?",
                "在浮点数中，分数 1000 的指数是多少？再用它除以它自己，会得到什么？"),
      change=("shift the scores by their largest value before taking the exponential, so that the largest "
              "exponential is 1",
              "在取指数之前，先把分数减去其中的最大值，使最大的指数恰好为 1")),
    misconception("normalised_without_exp",
      "divided by the sum instead of taking the softmax",
      "直接除以总和而不是做 softmax",
      "softmax exponentiates each score before normalising; dividing the raw scores by their sum breaks on "
      "negative scores",
      "softmax 先对每个分数取指数再归一化；直接用原始分数除以它们的和，遇到负分数就会出错",
      question=("What weight does your function give a negative score, and can a weight be negative?",
                "你的函数给负分数的权重是多少？权重可以是负数吗？"),
      change=("take the exponential of every score first, then divide each by the sum of those exponentials",
              "先对每个分数取指数，再用每个指数除以这些指数的和")),
    misconception("softmax_dim_ignored",
      "the dim argument is ignored",
      "忽略了 dim 参数",
      "reduce over the dimension you were given: the maximum and the sum both run along it and keep it, never "
      "along a fixed one",
      "在给定的维度上做归约：最大值和求和都沿这个维度进行并保留它，而不是沿一个固定的维度",
      question=("Call your function on a matrix once along each of its two dimensions: does the result change?",
                "沿矩阵的两个维度分别调用一次你的函数：结果会变吗？"),
      change=("take the maximum and the sum along the dimension passed in, not along one you chose",
              "沿传入的那个维度求最大值和总和，而不是沿你自己选定的维度")),
    misconception("softmax_sum_wrong_axis",
      "the sum runs along another axis than the one to normalise", "求和沿着的不是要归一化的那个维度",
      "softmax makes the entries along one axis add up to 1: the sum that divides them must run along that same axis, "
      "the one the exercise names",
      "softmax 让沿某一个维度的各项之和为 1：作为除数的求和必须沿同一个维度进行，也就是练习指定的那个维度",
      question=("along which axis should your outputs add up to 1, and along which axis does your sum run?",
                "你的输出应当沿哪个维度加起来等于 1？你的求和又是沿哪个维度进行的？"),
      change=("make the sum run along the axis the exercise's docstring names, and check that the outputs add up to 1 "
              "along it",
              "让求和沿练习文档字符串中指定的维度进行，并检查输出沿这个维度加起来是否等于 1")),
    misconception("default_dim_changed",
      "the default of dim was changed",
      "改变了 dim 的默认值",
      "code that calls the function without naming a dimension counts on the default of the given signature, the "
      "last axis",
      "不指定维度调用这个函数的代码，依赖的是给定签名中的默认值，也就是最后一个维度",
      question=("Which dimension does your function use when it is called without one, and which does the given "
                "signature promise?",
                "不传维度调用时，你的函数用的是哪个维度？给定的签名约定的又是哪个？"),
      change=("restore the default of the given signature and leave the signature as it was",
              "恢复给定签名中的默认值，保持签名原样")),
    misconception("max_and_sum_axes_differ",
      "the maximum and the sum taken along different axes",
      "最大值和求和沿着不同的维度进行",
      "the shift cancels only when every entry of a row is shifted by the same amount: the maximum must come from "
      "the same axis the sum runs along",
      "只有当同一行中的每一项都减去同一个数时，这个平移才会抵消：最大值必须沿求和的那个维度取",
      question=("Along which axis do you take the maximum, and along which the sum?",
                "你沿哪个维度取最大值，又沿哪个维度求和？"),
      change=("take the maximum along the same dimension as the sum",
              "沿求和的那个维度取最大值")),
    misconception("gradient_cut",
      "the computation leaves autograd's graph",
      "计算脱离了 autograd 的计算图",
      "training needs a gradient for everything a loss depends on: detaching a tensor, reading its raw data, "
      "going through NumPy or switching gradients off each hand back numbers autograd cannot trace back to the "
      "input",
      "训练需要损失所依赖的一切都有梯度：分离张量、读取它的原始数据、经过 NumPy 或关闭梯度计算，得到的数值 autogra"
      "d 都无法追溯回输入",
      question=("Which step of your function hands back numbers that autograd did not record?",
                "你的函数中哪一步得到的数值没有被 autograd 记录？"),
      change=("compute every step with tensor operations on the input itself, without leaving autograd's record",
              "每一步都直接对输入做张量运算，不要离开 autograd 的记录")),
    misconception("missing_keepdim",
      "max or sum taken without keeping the reduced axis",
      "求最大值或总和时没有保留被归约的维度",
      "a reduction drops the axis it runs over unless asked to keep it with size 1; without it, broadcasting "
      "lines each row up with another row's maximum and sum",
      "归约默认会去掉它所跨的维度，除非要求把它保留为长度 1；否则广播会让每一行对上别的行的最大值和总和",
      question=("Print the shapes of your maximum and your sum next to the input's: which row does each of their "
                "entries line up with?",
                "把最大值和总和的形状与输入的形状放在一起打印：它们的每一项各自与哪一行对齐？"),
      change=("ask both reductions to keep the reduced axis, so that each row is shifted and divided by its own "
              "maximum and sum",
              "让两次归约都保留被归约的维度，这样每一行减去、除以的都是它自己的最大值和总和")),
)

DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES, misconceptions=MISCONCEPTIONS)
