"""Checks for MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)
(notebook 04): num_heads CausalAttention heads whose outputs sit side by side.
"""

import random
from functools import cache
from typing import Any

import torch
from torch import Tensor

from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import FAILING_ALIKE, WEIGHTS, Expectations, reads_record
from autograder.course import variants
from autograder.course.declaration import Declaration
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex1_wrapper.judge import judge_two_dimensional, judge_wrapper
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import (
    MultiHeadCase,
    TwoDimensionalCase,
    WrapperRecord,
    attention_input,
    probe_two_dimensional,
    probe_wrapper,
)
from autograder.course.n04_multi_head_attention.shared import (
    NOTES_ATTENTION_CASE,
    dtype_message,
    projection_weights,
)
from autograder.course.value_variants import failing_alike

__all__ = ["DECLARATION"]

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("mha_wrapper", NOTEBOOK, ("MultiHeadAttentionWrapper",),
             {"en": "MultiHeadAttentionWrapper", "zh": "MultiHeadAttentionWrapper（堆叠多个单头）"}, minutes=15,
             difficulty=2),
    Exercise("two_dimensional_wrapper", NOTEBOOK, ("two_dimensional_wrapper",),
             {"en": "Book exercise 3.2: two-dimensional context vectors", "zh": "书中练习 3.2：二维的上下文向量"},
             minutes=5, difficulty=1),
)


def wrapper_cases_notes(rng: random.Random) -> list[MultiHeadCase]:
    return [NOTES_ATTENTION_CASE.copy()]


def wrapper_case(rng: random.Random, num_heads: int, num_tokens: int, dtype: str, qkv_bias: bool) -> MultiHeadCase:
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


def wrapper_cases_shapes(rng: random.Random) -> list[MultiHeadCase]:
    return [
        wrapper_case(rng, rng.randint(2, 4), rng.randint(3, 10), "float64", rng.random() < 0.5),
        wrapper_case(rng, 1, 1, "float32", False),
        wrapper_case(rng, rng.randint(2, 3), rng.randint(17, 24), "float64", True),
        *edge_cases(rng),
    ]


def edge_cases(rng: random.Random) -> list[MultiHeadCase]:
    """A batch of one with num_tokens at context_length, on every draw: edges the notes' batch and the preview show,
    graded on every hidden draw, not only on those that happen to pick them (tests/test_hidden_edge_sizes.py)."""
    edge = wrapper_case(rng, rng.randint(2, 3), rng.randint(2, 6), "float32", rng.random() < 0.5)
    return [{**edge, "batch": 1, "context_length": edge["num_tokens"]}]


@reads_record("state")
def expect_wrapper(record: WrapperRecord, case: MultiHeadCase) -> Expectations:
    """Each head's reference output with that head's own weights."""
    x = attention_input(case)

    @cache  # read only when the judge asks: heads that are not registered leave no weights in the data
    def heads() -> list[dict[str, Tensor]]:
        return [projection_weights(record["state"], f"heads.{i}.") for i in range(case["num_heads"])]

    def named() -> dict[str, Tensor]:
        return {f"heads.{i}.{name}": value for i, head in enumerate(heads()) for name, value in head.items()}

    @cache
    def head_outputs() -> list[Tensor]:
        return [variants.attention(x, weights) for weights in heads()]

    # The wrapper's variants are its own code with one line changed: where a value check fails as one of them does
    # (float32 from a buffer made without the input's dtype), a mistake another check proves explains it.
    alike = failing_alike("mha_wrapper", probe_wrapper, judge_wrapper, expect_wrapper, case)
    return Expectations.computed(**{WEIGHTS: named}, heads=head_outputs,
                                 **{STEPS: lambda: wrapper_steps(head_outputs()), FAILING_ALIKE: alike})


# Heads the steps name one by one (`step.head_<n>`, from 0 as the notes count them): the cases have at most 4; a
# wrapper of more is named up to here.
NAMED_HEADS = 8


def wrapper_steps(head_outputs: list[Tensor]) -> list[list[Any]]:
    """The wrapper as the notes' steps: each head's context vectors (a CausalAttention of its own weights), then all
    of them side by side along the features (the reference's output). A head's own steps (queries, scores...) are
    causal_attention's to localise: here a head is right or not as a whole."""
    named = head_outputs[:NAMED_HEADS]
    *_, num_tokens, head_size = head_outputs[0].shape
    batch = head_outputs[0].numel() // (num_tokens * head_size)
    return [*(step(f"head_{index}", output) for index, output in enumerate(named)),
            step("heads_concatenated", torch.cat(head_outputs, dim=-1), ordered=True,
                 axes=(("batch", batch), ("tokens", num_tokens), ("heads", len(head_outputs)),
                       ("features", head_size)))]


WRAPPER_CHECKS = (
    # With the module contract (autograder.course.module_contract): 5 points.
    Check(id="mha_wrapper.notes", exercise="mha_wrapper", points=1, hidden=False, cases=wrapper_cases_notes,
          probe=probe_wrapper, judge=judge_wrapper, expect=expect_wrapper,
          title={"en": "MultiHeadAttentionWrapper on the notes' batch (seed 123, 2 heads): output (2, 6, 4)",
                 "zh": "MultiHeadAttentionWrapper 作用于笔记中的 batch（种子 123，2 个头）：输出形状 (2, 6, 4)"}),
    Check(id="mha_wrapper.shapes", exercise="mha_wrapper", points=1.5, hidden=True, cases=wrapper_cases_shapes,
          probe=probe_wrapper, judge=judge_wrapper, expect=expect_wrapper,
          title={"en": "MultiHeadAttentionWrapper for other sizes (a batch of one, one token, num_tokens equal to "
                       "context_length), head counts, biases and float64",
                 "zh": "MultiHeadAttentionWrapper 在其他尺寸（batch 为 1、单个 token、num_tokens 等于 "
                       "context_length）、头数、偏置和 float64 下也正确"}),
)


# ---------------------------------------------------------------------------------------------
# two_dimensional_wrapper: book exercise 3.2, a wrapper with num_heads=2 whose output has 2 features


# No steps are declared for book exercise 3.2: the function computes no tensor, it chooses a wrapper's arguments
# (num_heads 2, d_out 1 per head); the probe reads the sizes it built and the judge names each one that differs.
# The wrapper's own computation is localised by mha_wrapper's steps.
def two_dimensional_cases_notes(rng: random.Random) -> list[TwoDimensionalCase]:
    return [
        {"d_in": 3, "context_length": 6, "dropout": 0.0, "seed": 123},  # the notes' sentence and batch
        {"d_in": 5, "context_length": 8, "dropout": 0.5, "seed": 1},  # other sizes, dropout on
    ]


def two_dimensional_cases_sizes(rng: random.Random) -> list[TwoDimensionalCase]:
    return [{"d_in": rng.randint(2, 16), "context_length": rng.randint(2, 64), "dropout": rng.choice([0.1, 0.2, 0.3]),
             "seed": rng.randrange(2**31 - 100)} for _ in range(2)]


TWO_DIMENSIONAL_CHECKS = (
    Check(id="two_dimensional_wrapper.notes", exercise="two_dimensional_wrapper", points=1, hidden=False,
          cases=two_dimensional_cases_notes, probe=probe_two_dimensional, judge=judge_two_dimensional,
          title={"en": "two_dimensional_wrapper(3, 6, 0.0) and (5, 8, 0.5): a MultiHeadAttentionWrapper with 2 heads "
                       "whose context vectors have 2 features, built for that d_in, context_length and dropout",
                 "zh": "two_dimensional_wrapper(3, 6, 0.0) 和 (5, 8, 0.5)：返回有 2 个头、上下文向量有 2 个特征的 "
                       "MultiHeadAttentionWrapper，并按给定的 d_in、context_length 和 dropout 构建"}),
    Check(id="two_dimensional_wrapper.sizes", exercise="two_dimensional_wrapper", points=1, hidden=True,
          cases=two_dimensional_cases_sizes, probe=probe_two_dimensional, judge=judge_two_dimensional,
          title={"en": "two_dimensional_wrapper for other d_in, context_length and dropout",
                 "zh": "two_dimensional_wrapper 在其他 d_in、context_length 和 dropout 下也正确"}),
)
CHECKS = WRAPPER_CHECKS + TWO_DIMENSIONAL_CHECKS


MESSAGES = {
    **dtype_message("mha_wrapper"),
    "two_dimensional_wrapper.explanation": {
        "en": "Why it works: the wrapper places its heads side by side, so its output is num_heads times one head's "
              "width. With num_heads kept at 2, a 2-feature output leaves each head one feature: d_out is the size "
              "of one head, not of the whole output.",
        "zh": "为什么这样是对的：包装器把各个头并排放置，所以输出宽度是单个头宽度的 num_heads 倍。num_heads 保持为 2 "
              "时，要得到 2 个特征，每个头就只能有 1 个特征：d_out 是单个头的大小，而不是整个输出的大小。",
    },
    "two_dimensional_wrapper.not_a_wrapper": {
        "en": "two_dimensional_wrapper returned a {got}, expected a MultiHeadAttentionWrapper (its heads in "
              "self.heads)",
        "zh": "two_dimensional_wrapper 返回的是 {got}，应当返回一个 MultiHeadAttentionWrapper（头保存在 "
              "self.heads 中）",
    },
    "two_dimensional_wrapper.head_count": {
        "en": "the wrapper has {got} head(s): the exercise keeps two heads and changes something else",
        "zh": "这个包装器有 {got} 个头：本练习要求保留两个头，改变的是别的参数",
    },
    "two_dimensional_wrapper.not_causal_heads": {
        "en": "the heads have no W_query layer: each head must be a CausalAttention",
        "zh": "这些头没有 W_query 层：每个头都应当是一个 CausalAttention",
    },
    "two_dimensional_wrapper.features": {
        "en": "each of the {heads} heads is {width} feature(s) wide, so the context vectors have {got} features, "
              "not 2",
        "zh": "{heads} 个头每个都有 {width} 个特征，所以上下文向量有 {got} 个特征，而不是 2 个",
    },
    "two_dimensional_wrapper.projections_uneven": {
        "en": "the context vectors have 2 features, but the heads' queries are {queries} feature(s) wide and their "
              "values {values}: heads built for one feature each make their queries, keys and values one feature wide",
        "zh": "上下文向量有 2 个特征，但各个头的 query 有 {queries} 个特征，value 有 {values} 个："
              "按每个头一个特征构造的头，其 query、key 和 value 都只有一个特征"},
    "two_dimensional_wrapper.features_uneven": {
        "en": "the heads are {widths} feature(s) wide, one after the other, so the context vectors have {got} "
              "features, not 2",
        "zh": "各个头依次有 {widths} 个特征，所以上下文向量有 {got} 个特征，而不是 2 个",
    },
    "two_dimensional_wrapper.sizes": {
        "en": "the heads were built with d_in {got_d_in}, context_length {got_context_length} and dropout "
              "{got_dropout}; the call asked for d_in {d_in}, context_length {context_length} and dropout "
              "{dropout}",
        "zh": "这些头是按 d_in {got_d_in}、context_length {got_context_length}、dropout {got_dropout} 构建的；调用"
              "时要求的是 d_in {d_in}、context_length {context_length}、dropout {dropout}",
    },
    "two_dimensional_wrapper.dtype": {
        "en": "the wrapper's parameters are {got}, not {want} (torch's default): the notebook's batch, in {want}, "
              "cannot go through it, as the next cell does; build it in the default dtype",
        "zh": "包装器的参数是 {got}，而不是 {want}（torch 的默认类型）：笔记中的 batch 是 {want}，无法通过它，"
              "就像下一个单元格那样运行时会出错；请按默认的 dtype 构建它"},
    "two_dimensional_wrapper.dtype.hidden": {
        "en": "the wrapper's parameters are not in torch's default dtype: the notebook's batch cannot go through it",
        "zh": "包装器的参数不是 torch 的默认 dtype：笔记中的 batch 无法通过它"},
    "two_dimensional_wrapper.sizes.hidden": {
        "en": "the heads were not built with the d_in, context_length and dropout the function was called with",
        "zh": "这些头没有按调用函数时给出的 d_in、context_length 和 dropout 来构建",
    },
    "mha_wrapper.values": {
        "en": "the output is not your heads' outputs placed side by side along the feature axis, in head order",
        "zh": "输出不是各个头的输出按头的顺序沿特征维度并排拼接的结果",
    },
    "mha_wrapper.head_wrong": {
        "en": "self.heads[{head}] (your CausalAttention) already gives a wrong output: fix CausalAttention first",
        "zh": "self.heads[{head}]（你的 CausalAttention）的输出就已经不对了：请先修正 CausalAttention",
    },
    "mha_wrapper.no_heads": {
        "en": "keep the heads in self.heads, as a module list: the grader reads each head's weights from there",
        "zh": "请把这些头以模块列表的形式保存在 self.heads 中：评分程序从那里读取每个头的权重",
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
    "mha_wrapper.head_width": {
        "en": "self.heads[{head}] is built to give {got} features per token, but each head is asked for d_out = "
              "{d_out} of its own, so the heads side by side should give {total}",
        "zh": "self.heads[{head}] 被构造成每个词元给出 {got} 个特征，但每个头都应有自己的 d_out = {d_out} 个特征，"
              "所以所有头并排后应有 {total} 个",
    },
    "mha_wrapper.qkv_bias": {
        "en": "pass qkv_bias on to every CausalAttention head",
        "zh": "要把 qkv_bias 传给每一个 CausalAttention 头",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
