"""Checks for MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)
(notebook 04): num_heads CausalAttention heads whose outputs sit side by side.
"""

from functools import cache

from autograder.checking.check_types import Check, Exercise
from autograder.checking.expectations import WEIGHTS, Expectations
from autograder.course.checks import variants
from autograder.course.checks.n04_multi_head_attention import NOTEBOOK
from autograder.course.checks.n04_multi_head_attention.shared import (
    NOTES_ATTENTION_CASE,
    dtype_message,
    projection_weights,
)
from autograder.course.judges.multihead import judge_wrapper
from autograder.course.probes.multihead import attention_input, probe_wrapper

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("mha_wrapper", NOTEBOOK, ("MultiHeadAttentionWrapper",),
             {"en": "MultiHeadAttentionWrapper", "zh": "MultiHeadAttentionWrapper（堆叠多个单头）"}),
)


def wrapper_cases_notes(rng):
    return [dict(NOTES_ATTENTION_CASE)]


def wrapper_case(rng, num_heads, num_tokens, dtype, qkv_bias):
    d_out = rng.randint(2, 5)  # per head: the wrapper's output has num_heads * d_out features
    return {
        "seed": rng.randrange(2**31 - 100),
        "batch": rng.randint(1, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(1, 4),
        "d_in": rng.choice([d for d in range(2, 9) if d != d_out]),
        "d_out": d_out,
        "num_heads": num_heads,
        "qkv_bias": qkv_bias,
        "dtype": dtype,
    }


def wrapper_cases_shapes(rng):
    return [
        wrapper_case(rng, rng.randint(2, 4), rng.randint(3, 10), "float64", rng.random() < 0.5),
        wrapper_case(rng, 1, 1, "float32", False),
        wrapper_case(rng, rng.randint(2, 3), rng.randint(17, 24), "float64", True),
    ]


def expect_wrapper(case, data):
    """Each head's reference output with that head's own weights."""
    x = attention_input(case)

    @cache  # read only when the judge asks: heads that are not registered leave no weights in the data
    def heads():
        return [projection_weights(data["state"], f"heads.{i}.") for i in range(case["num_heads"])]

    def named():
        return {f"heads.{i}.{name}": value for i, head in enumerate(heads()) for name, value in head.items()}

    return Expectations.computed(**{WEIGHTS: named},
                                 heads=lambda: [variants.attention(x, weights) for weights in heads()])


CHECKS = (
    # With the module contract (autograder.course.checks.module_contract): 5 points.
    Check("mha_wrapper.notes", "mha_wrapper", 1, False, wrapper_cases_notes, probe_wrapper, judge_wrapper,
          expect_wrapper),
    Check("mha_wrapper.shapes", "mha_wrapper", 1.5, True, wrapper_cases_shapes, probe_wrapper, judge_wrapper,
          expect_wrapper),
)


MESSAGES = {
    **dtype_message("mha_wrapper"),
    "mha_wrapper.notes.title": {
        "en": "MultiHeadAttentionWrapper on the notes' batch (seed 123, 2 heads): output (2, 6, 4)",
        "zh": "MultiHeadAttentionWrapper 作用于笔记中的 batch（种子 123，2 个头）：输出形状 (2, 6, 4)",
    },
    "mha_wrapper.shapes.title": {
        "en": "MultiHeadAttentionWrapper for other sizes, head counts, biases and float64",
        "zh": "MultiHeadAttentionWrapper 在其他尺寸、头数、偏置和 float64 下也正确",
    },
    "mha_wrapper.values": {
        "en": "the output is not your heads' outputs placed side by side along the feature axis, in head order",
        "zh": "输出不是各个头的输出按头的顺序沿特征维并排拼接的结果",
    },
    "mha_wrapper.head_wrong": {
        "en": "self.heads[{head}] (your CausalAttention) already gives a wrong output: fix CausalAttention first",
        "zh": "self.heads[{head}]（你的 CausalAttention）的输出就已经不对了：请先修正 CausalAttention",
    },
    "mha_wrapper.no_heads": {
        "en": "keep the heads in self.heads = nn.ModuleList([...]): the grader reads each head's weights from there",
        "zh": "请把这些头保存在 self.heads = nn.ModuleList([...]) 中：评分程序从那里读取每个头的权重",
    },
    "mha_wrapper.heads_not_registered": {
        "en": "self.heads is a plain list, so PyTorch does not see the heads' weights",
        "zh": "self.heads 是普通列表，PyTorch 看不到这些头的权重",
    },
    "mha_wrapper.heads_shared": {
        "en": "all heads are the same module, so they share one set of weights",
        "zh": "所有的头都是同一个模块，因此共享同一组权重",
    },
    "mha_wrapper.head_count": {
        "en": "self.heads holds {got} head(s), expected num_heads = {expected}",
        "zh": "self.heads 中有 {got} 个头，应当有 num_heads = {expected} 个",
    },
    "mha_wrapper.head_count.hidden": {
        "en": "self.heads does not hold num_heads heads",
        "zh": "self.heads 中头的个数不等于 num_heads",
    },
    "mha_wrapper.head_layers": {
        "en": "self.heads[{head}] has no {names}: each head must be a CausalAttention",
        "zh": "self.heads[{head}] 没有 {names}：每个头都应当是一个 CausalAttention",
    },
    "mha_wrapper.qkv_bias": {
        "en": "pass qkv_bias on to every CausalAttention head",
        "zh": "要把 qkv_bias 传给每一个 CausalAttention 头",
    },
}
