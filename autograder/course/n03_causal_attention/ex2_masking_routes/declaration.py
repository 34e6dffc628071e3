"""Checks for the two masking routes (notebook 03): causal_weights_renormalised(attn_weights) and
causal_weights_neg_inf(attn_scores), one exercise.

Public checks use the notes' attention weights and scores of SelfAttention_v2 built under seed 789. Hidden checks
use random shapes, float64, 4-D scores and batches, and inputs on the `meta` device (a tensor made inside without
device= shows there).
"""

import contextlib
import random
from functools import partial
from typing import Any

import torch
from torch import Tensor

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import FAILING_ALIKE, Expectations, case_alone
from autograder.checking.probing import gradient_of
from autograder.course.declaration import Declaration
from autograder.course.n03_causal_attention import NOTEBOOK
from autograder.course.n03_causal_attention.ex2_masking_routes.judge import judge_causal_weights, judge_on_device
from autograder.course.n03_causal_attention.ex2_masking_routes.probe import (
    ScoresCase,
    WeightsRecord,
    from_scores,
    graded_scores,
    probe_neg_inf,
    probe_on_device,
    probe_renormalised,
    scores_input,
    weights_input,
)
from autograder.course.value_variants import failing_alike
from autograder.course.variants import mask_for

__all__ = ["DECLARATION", "weights_cases_device"]

EXERCISES = (
    Exercise("masking_routes", NOTEBOOK, ("causal_weights_renormalised", "causal_weights_neg_inf"),
             {"en": "The two masking routes", "zh": "两种遮蔽方式"}, minutes=20, difficulty=2),
)


# masking_routes: causal_weights_renormalised(attn_weights) and causal_weights_neg_inf(attn_scores), one
# exercise. Both return weights of shape (..., num_tokens, num_tokens); one judge serves both, and each
# probe looks up its own function, so a mistake in one route costs only that route's checks.


def weights_cases_notes(rng: random.Random) -> list[ScoresCase]:
    return [{"input": "notes"}]


def weights_cases_random(rng: random.Random) -> list[ScoresCase]:
    # A small 2-D input, a float64 batch of long sequences, the 4-D scores of notebook 04 (batch, heads, queries,
    # keys): "any leading dimensions" is what the docstring promises. Then the 1-token edge case (a row with one key).
    def seed() -> int:
        return rng.randrange(2**31)

    short, long, heads = rng.randint(2, 8), rng.randint(17, 20), rng.randint(2, 4)
    return [
        {"seed": seed(), "shape": [short, short], "dtype": "float32"},
        {"seed": seed(), "shape": [rng.randint(2, 4), long, long], "dtype": "float64"},
        {"seed": seed(), "shape": [rng.randint(1, 3), heads, short, short], "dtype": "float32"},
        {"seed": seed(), "shape": [rng.randint(1, 3), 1, 1], "dtype": "float32"},
        # Drawn last, so that the cases before it keep their values: a batch of one, which the preview may draw above,
        # graded on every hidden draw too (tests/test_hidden_edge_sizes.py).
        {"seed": seed(), "shape": [1, short, short], "dtype": "float32"},
    ]


def weights_cases_device(rng: random.Random) -> list[ScoresCase]:
    # Scores on the meta device (a GPU stands in for it where there is one): a mask made without device= stays
    # on the CPU and cannot meet them.
    num_tokens = rng.randint(3, 9)
    return [{"seed": rng.randrange(2**31), "shape": [rng.randint(1, 3), rng.randint(2, 4), num_tokens, num_tokens],
             "dtype": "float32", "device": "auto"}]


def keep_for(kind: str, like: Tensor) -> Tensor:
    """1 where a way of writing the mask lets a query see a key (the tril matrix of the notes), as `like`'s dtype."""
    return (~mask_for(kind, like.shape[-1])).to(like.dtype)


def renormalise_mistakes(attn_weights: Tensor) -> list[tuple[str, Tensor]]:
    """(misconception, wrong weights) pairs for the multiply-and-renormalise route."""
    def renormalised(kind: str) -> Tensor:
        masked = attn_weights * keep_for(kind, attn_weights)
        return masked / masked.sum(dim=-1, keepdim=True)

    masked = attn_weights * keep_for("future", attn_weights)
    mistakes = [
        ("mask_after_softmax_no_renorm", masked),
        ("mask_includes_diagonal", renormalised("with_diagonal")),
        ("mask_inverted", renormalised("inverted")),
    ]
    mistakes.append(("row_sums_wrong_axis", masked / masked.sum(dim=-2, keepdim=True)))  # summed over the queries
    with contextlib.suppress(RuntimeError):  # (b, T, T) / (b, T) only broadcasts for some shapes
        mistakes.append(("row_sums_without_keepdim", masked / masked.sum(dim=-1)))
    return mistakes


def neg_inf_mistakes(attn_scores: Tensor) -> list[tuple[str, Tensor]]:
    """(misconception, wrong weights) pairs for the fill-with-minus-infinity route."""
    def filled(kind: str) -> Tensor:
        return attn_scores.masked_fill(mask_for(kind, attn_scores.shape[-1]), -torch.inf)

    plain_softmax = torch.softmax(attn_scores, dim=-1)
    return [
        ("masked_fill_result_dropped", plain_softmax),
        ("softmax_wrong_dim", torch.softmax(filled("future"), dim=-2)),
        ("softmax_wrong_dim", torch.softmax(filled("future"), dim=0)),  # dim=0 written for a 2-D input
        ("mask_includes_diagonal", torch.softmax(filled("with_diagonal"), dim=-1)),
        ("mask_inverted", torch.softmax(filled("inverted"), dim=-1)),
        ("mask_after_softmax_no_renorm", plain_softmax.masked_fill(mask_for("future", attn_scores.shape[-1]), 0.0)),
    ]


def renormalise_steps(attn_weights: Tensor) -> list[list[Any]]:
    """The notes' first route as named steps: the lower-triangular matrix of ones (the notes' mask_simple; a learner
    may zero the future by masked_fill instead, so it is optional), the weights with the future zeroed, each row's
    sum, the rows divided by their sums (the reference's output)."""
    keep = keep_for("future", attn_weights)
    masked = attn_weights * keep
    row_sums = masked.sum(dim=-1, keepdim=True)
    # Ordered: the upper triangle is no layout. Made from the sizes alone: no gradient goes back through it.
    return [step("keep_triangle", keep, optional=True, ordered=True, from_inputs=False),
            step("masked_weights", masked), step("row_sums", row_sums), step("renormalised_weights", masked / row_sums)]


def neg_inf_steps(attn_scores: Tensor) -> list[list[Any]]:
    """The notes' second route as named steps: the causal mask (True above the diagonal; optional, as a learner may
    build the fill's condition another way, e.g. a comparison of the lower triangle with 0, which the trace records
    too), the scores with the future filled with -inf, their softmax over each row (the reference's output)."""
    future = mask_for("future", attn_scores.shape[-1])
    masked = attn_scores.masked_fill(future, -torch.inf)
    return [step("causal_mask", future, optional=True, ordered=True, from_inputs=False), step("masked_scores", masked),
            step("weights", torch.softmax(masked, dim=-1))]


def reference_gradient(route: str, case: ScoresCase) -> Tensor | None:
    """The gradient the reference route passes back to the case's scores, for the probe's own upstream mix
    (probing.gradient_weights): rebuilt from the case, nothing the child sent."""
    takes_weights = route == "causal_weights_renormalised"
    return gradient_of(from_scores(getattr(solutions, route), takes_weights), graded_scores(case, takes_weights))[2]


@case_alone
def expect_renormalised(record: WeightsRecord, case: ScoresCase) -> Expectations:
    attn_weights = weights_input(case)
    return Expectations.computed(output=lambda: solutions.causal_weights_renormalised(attn_weights),
                                 future=lambda: mask_for("future", attn_weights.shape[-1]),
                                 mistakes=lambda: renormalise_mistakes(attn_weights),
                                 **{STEPS: lambda: renormalise_steps(attn_weights)},
                                 input_gradient=lambda: reference_gradient("causal_weights_renormalised", case))


@case_alone
def expect_renormalised_device(record: Any, case: ScoresCase) -> Expectations:
    """Nothing of the reference's: the check's own facts decide; after a failure, what the route's variants get
    from the same probe and judge (the row sums without keepdim raise on a batch as the learner's do)."""
    probe = partial(probe_on_device, "causal_weights_renormalised", "weights")
    return Expectations.computed(**{FAILING_ALIKE: failing_alike("masking_routes", probe, judge_on_device,
                                                                 expect_renormalised_device, case)})


@case_alone
def expect_neg_inf(record: WeightsRecord, case: ScoresCase) -> Expectations:
    attn_scores = scores_input(case)
    return Expectations.computed(output=lambda: solutions.causal_weights_neg_inf(attn_scores),
                                 future=lambda: mask_for("future", attn_scores.shape[-1]),
                                 mistakes=lambda: neg_inf_mistakes(attn_scores),
                                 **{STEPS: lambda: neg_inf_steps(attn_scores)},
                                 input_gradient=lambda: reference_gradient("causal_weights_neg_inf", case))


CHECKS = (
    Check(id="masking_routes.renormalise_notes", exercise="masking_routes", points=1, hidden=False,
          cases=weights_cases_notes, probe=probe_renormalised, judge=judge_causal_weights, expect=expect_renormalised,
          title={"en": "causal_weights_renormalised: the notes' attention weights (SelfAttention_v2, seed 789), "
                       "masked and renormalised into a new tensor (the input left as it was), with the right gradient "
                       "flowing back to the input",
                 "zh": "causal_weights_renormalised：笔记中的注意力权重（SelfAttention_v2，种子 "
                       "789）遮蔽后重新归一化，结果是一个新张量（输入保持原样），正确的梯度能传回输入"}),
    Check(id="masking_routes.renormalise_random", exercise="masking_routes", points=2.5, hidden=True,
          cases=weights_cases_random, probe=probe_renormalised, judge=judge_causal_weights, expect=expect_renormalised,
          title={"en": "causal_weights_renormalised: masking and renormalising works for other sizes, batches (a batch "
                       "of one too) and float64",
                 "zh": "causal_weights_renormalised：遮蔽并重新归一化在其他长度、带 batch 维度（包括 batch 为 1）"
                       "和 float64 输入上也正确"}),
    Check(id="masking_routes.renormalise_device", exercise="masking_routes", points=0.5, hidden=True,
          cases=weights_cases_device, probe=partial(probe_on_device, "causal_weights_renormalised", "weights"),
          judge=judge_on_device, expect=expect_renormalised_device,
          title={"en": "causal_weights_renormalised works on weights on another device",
                 "zh": "causal_weights_renormalised 能处理位于其他设备上的权重"}),
    Check(id="masking_routes.neg_inf_notes", exercise="masking_routes", points=1, hidden=False,
          cases=weights_cases_notes, probe=probe_neg_inf, judge=judge_causal_weights, expect=expect_neg_inf,
          title={"en": "causal_weights_neg_inf: the notes' attention scores (SelfAttention_v2, seed 789), filled with "
                       "-inf, then softmax, into a new tensor (the input left as it was), with the right gradient "
                       "flowing back to the input",
                 "zh": "causal_weights_neg_inf：笔记中的注意力分数（SelfAttention_v2，种子 789）填入 -inf 后做 "
                       "softmax，结果是一个新张量（输入保持原样），正确的梯度能传回输入"}),
    Check(id="masking_routes.neg_inf_random", exercise="masking_routes", points=2.5, hidden=True,
          cases=weights_cases_random, probe=probe_neg_inf, judge=judge_causal_weights, expect=expect_neg_inf,
          title={"en": "causal_weights_neg_inf: filling with -inf before the softmax works for other sizes, batches "
                       "(a batch of one too) and float64",
                 "zh": "causal_weights_neg_inf：softmax 之前填入 -inf 在其他长度、带 batch 维度（包括 batch 为 1）"
                       "和 float64 输入上也正确"}),
    Check(id="masking_routes.neg_inf_device", exercise="masking_routes", points=0.5, hidden=True,
          cases=weights_cases_device, probe=partial(probe_on_device, "causal_weights_neg_inf", "scores"),
          judge=judge_on_device,
          title={"en": "causal_weights_neg_inf works on scores on another device",
                 "zh": "causal_weights_neg_inf 能处理位于其他设备上的分数"}),
)


MESSAGES = {
    "causal_weights.input_modified": {
        "en": "the output is right, but the function changed the tensor it was given: the caller's own weights or "
              "scores are now masked too",
        "zh": "输出是对的，但函数修改了传给它的张量：调用者自己的权重或分数现在也被遮蔽了",
    },
    "causal_weights.backward_failed": {
        "en": "backward() through the function fails ({type}: {detail})",
        "zh": "通过这个函数做 backward() 时失败（{type}：{detail}）",
    },
    "causal_weights.no_gradient": {
        "en": "no gradient flows back through the function to its input: compute the output from the input with "
              "tensor operations, without detaching it or switching gradients off",
        "zh": "梯度没有通过这个函数传回输入：输出必须由输入经过张量运算得到，不要分离张量或关闭梯度计算",
    },
    "causal_weights.gradient_wrong": {
        "en": "the weights are right, but the gradient that flows back to the input is not the one the computation "
              "gives: some step was computed where autograd does not record (a detached tensor, raw data, a block "
              "with gradients switched off, inference mode), and counts as a constant",
        "zh": "权重是对的，但传回输入的梯度不是这个计算应有的梯度：某一步是在 autograd 不记录的地方计算的"
              "（分离出来的张量、原始数据、关闭了梯度计算的代码块、推理模式），于是被当成了常数",
    },
    "causal_weights.not_finite": {
        "en": "the gradient that flows back through the function to its input holds nan or inf",
        "zh": "通过这个函数传回输入的梯度中有 nan 或 inf",
    },
    "causal_weights.device_failed": {
        "en": "on an input on {device} it fails ({type}: {detail}): a tensor made inside without naming a device "
              "stays on the CPU. On which device is each tensor your function makes?",
        "zh": "输入位于 {device} 时它失败了（{type}：{detail}）：在函数内部新建且没有指定设备的张量留在 CPU 上。你的"
              "函数新建的每个张量位于哪个设备上？",
    },
    "causal_weights.tensor_on_cpu": {
        "en": "on an input on {device} it still combines a tensor on the CPU with it ({op}): on which device is your "
              "mask made?",
        "zh": "输入位于 {device} 时，它仍把 CPU 上的张量与输入一起运算（{op}）：你的掩码是在哪个设备上创建的？",
    },
    "causal_weights.device_output": {
        "en": "on an input on {device} the result has the wrong shape or is not on {device}",
        "zh": "输入位于 {device} 时，结果的形状不对或者不在 {device} 上",
    },
    "causal_weights.nan": {
        "en": "the weights of token {query} are nan: weights lie between 0 and 1 and each row of them sums to 1",
        "zh": "token {query} 的权重是 nan：权重介于 0 和 1 之间，且每一行之和为 1",
    },
    # Only where a tensor of the learner's own hides the whole row (WeightsRecord.hidden_rows): a nan from a shift
    # by -inf, with the keys the notes keep still visible, is not this.
    "causal_weights.nan_all_hidden": {
        "en": "the weights of token {query} are nan: every key of that row was hidden "
        "(0/0, or a softmax over nothing but -inf)",
        "zh": "token {query} 的权重是 nan：这一行的所有 key 都被遮住了（0/0，或者对全是 -inf 的一行做 softmax）",
    },
    "causal_weights.infinite": {
        "en": "the result holds {count} infinite entries, the first in the row of token {query}: weights lie between "
        "0 and 1 and each row of them sums to 1, so these numbers are not weights yet",
        "zh": "结果中有 {count} 个无穷大的元素，第一个在 token {query} 这一行：权重介于 0 和 1 之间，且每一行之和为 1，"
        "所以这些数还不是权重",
    },
    "causal_weights.future": {
        "en": "token {query} gives weight to token {key}, which comes later: weights above the diagonal must be "
        "exactly 0",
        "zh": "token {query} 给了在它之后的 token {key} 权重：对角线上方的权重必须恰好为 0",
    },
    "causal_weights.row_sum": {
        "en": "the weights of token {query} do not sum to 1: each query's weights over the keys (the last "
        "dimension) must sum to 1 after masking",
        "zh": "token {query} 的权重之和不是 1：遮蔽之后，每个 query 对所有 key（最后一个维度）的权重之和必须为 1",
    },
    "causal_weights.values": {
        "en": "the weights are causal and each row sums to 1, but they differ from the expected ones "
        "(first at query {query}, key {key})",
        "zh": "权重满足因果性且每行之和为 1，但与期望值不同（最先出现在 query {query}、key {key}）",
    },
    "causal_weights.dtype": {
        "en": "the result has dtype {got_dtype}, expected {expected_dtype}: keep the input's dtype",
        "zh": "结果的 dtype 是 {got_dtype}，期望 {expected_dtype}：请保持输入的 dtype",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
