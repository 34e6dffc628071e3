"""Checks for to_torch_multihead(mha) (notebook 04): an nn.MultiheadAttention holding our weights, or a ValueError
where it cannot (d_in != d_out).
"""

import random
from typing import Any

import torch

from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import Expectations, case_alone
from autograder.checking.probing import PROJECTIONS
from autograder.course import variants
from autograder.course.declaration import Declaration
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex4_torch_equivalence.judge import judge_equivalence
from autograder.course.n04_multi_head_attention.ex4_torch_equivalence.probe import (
    EquivalenceCase,
    EquivalenceRecord,
    equivalence_input,
    equivalence_weights,
    probe_equivalence,
)

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("torch_equivalence", NOTEBOOK, ("to_torch_multihead",),
             {"en": "Our weights inside nn.MultiheadAttention", "zh": "把我们的权重放进 nn.MultiheadAttention"},
             minutes=30, difficulty=3),
)


# ---------------------------------------------------------------------------------------------
# torch_equivalence: to_torch_multihead(mha) -> nn.MultiheadAttention holding our weights


def equivalence_cases_notes(rng: random.Random) -> list[EquivalenceCase]:
    return [{"seed": 123, "batch": 2, "num_tokens": 6, "context_length": 6, "d_model": 4, "num_heads": 2,
             "qkv_bias": False, "dropout": 0.0, "dtype": "float32"}]


def equivalence_case(rng: random.Random, *, num_heads: int, num_tokens: int, qkv_bias: bool, dropout: float,
                     dtype: str) -> EquivalenceCase:
    return {
        "seed": rng.randrange(2**31 - 100),
        "batch": rng.randint(1, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(0, 4),
        "d_model": num_heads * rng.randint(2, 5),
        "num_heads": num_heads,
        "qkv_bias": qkv_bias,
        "dropout": dropout,
        "dtype": dtype,
    }


def equivalence_cases_shapes(rng: random.Random) -> list[EquivalenceCase]:
    mismatched = equivalence_case(rng, num_heads=2, num_tokens=4, qkv_bias=False, dropout=0.0, dtype="float32")
    mismatched["d_in"] = mismatched["d_model"] + rng.randint(1, 3)  # nn.MultiheadAttention cannot take it
    narrower = equivalence_case(rng, num_heads=2, num_tokens=4, qkv_bias=True, dropout=0.0, dtype="float32")
    narrower["d_in"] = narrower["d_model"] - 1  # refused too: either way d_in != d_out
    # One feature and one head: the smallest module there is.
    smallest: EquivalenceCase = {
        **equivalence_case(rng, num_heads=1, num_tokens=3, qkv_bias=False, dropout=0.0, dtype="float64"), "d_model": 1}
    # d_in and d_out above 256, computed apart as a model's config does: Python caches small ints only, so
    # `d_in is d_out` fails here where `==` holds. Sizes are compared by value. (Not GPT-2's 768: its weights
    # alone cost a public check 150 ms.)
    heads, head_dim = 2, 130
    wide: EquivalenceCase = {
        **equivalence_case(rng, num_heads=heads, num_tokens=4, qkv_bias=False, dropout=0.0, dtype="float32"),
        "d_model": heads * head_dim, "d_in": head_dim * heads, "batch": 1}
    return [
        equivalence_case(rng, num_heads=rng.randint(2, 4), num_tokens=rng.randint(3, 10), qkv_bias=True,
                         dropout=0.0, dtype="float64"),
        equivalence_case(rng, num_heads=1, num_tokens=rng.randint(1, 4), qkv_bias=False, dropout=0.1,
                         dtype="float32"),
        equivalence_case(rng, num_heads=rng.randint(2, 4), num_tokens=rng.randint(17, 24), qkv_bias=True,
                         dropout=0.2, dtype="float64"),
        mismatched,
        narrower,
        smallest,
        wide,
        *edge_cases(rng),
    ]


def edge_cases(rng: random.Random) -> list[EquivalenceCase]:
    """One token at a context_length of one, on every draw, drawn after the other cases so that they keep their
    values: edges the notes (num_tokens at context_length) and the random draws show, graded on every hidden draw and
    shown in the preview (tests/test_hidden_edge_sizes.py)."""
    edge = equivalence_case(rng, num_heads=rng.randint(1, 2), num_tokens=1, qkv_bias=rng.random() < 0.5, dropout=0.0,
                            dtype="float32")
    return [{**edge, "context_length": 1}]


@case_alone
def expect_equivalence(record: EquivalenceRecord, case: EquivalenceCase) -> Expectations:
    """Our attention with the case's weights: what nn.MultiheadAttention holding them must compute (nothing where
    d_in != d_out: there the conversion must refuse)."""
    if case.get("d_in", case["d_model"]) != case["d_model"]:
        return Expectations({})
    return Expectations.computed(output=lambda: variants.attention(equivalence_input(case), equivalence_weights(case),
                                                                   num_heads=case["num_heads"]),
                                 **{STEPS: lambda: equivalence_steps(case)})


def equivalence_steps(case: EquivalenceCase) -> list[list[Any]]:
    """The conversion as the notes' steps: the three projection matrices stacked as rows of nn.MultiheadAttention's
    one input projection (optional: copying each into its slice of in_proj_weight makes no stacked tensor, and is
    right too), then what the converted module computes on the case, our output projection's output. The forward
    pass between them is PyTorch's own (a fused kernel in eval mode): its inner steps are not the learner's to
    reproduce. The stacked matrix of a wide case (3 * d_model * d_model numbers) is left out: the student kit would
    store it for one hint, and the trace keeps no tensor that large anyway (MAX_TRACED_ELEMENTS)."""
    weights = equivalence_weights(case)
    stacked = torch.cat([weights[f"{layer}.weight"] for layer in PROJECTIONS], dim=0)
    output = variants.attention(equivalence_input(case), weights, num_heads=case["num_heads"])
    small = stacked.numel() <= MAX_STACKED
    steps = [step("stacked_projections", stacked, optional=True, ordered=True)] if small else []
    biases = [weights.get(f"{layer}.bias") for layer in PROJECTIONS]
    if small and all(bias is not None for bias in biases):
        # The three biases stacked as nn.MultiheadAttention's one input bias (optional as the weights are): where a
        # conversion that copies every weight right departs when its in_proj_bias is not theirs (issue 58). Without
        # qkv biases that bias is zeros, a tensor made many ways: no step.
        steps.append(step("stacked_biases", torch.cat([bias for bias in biases if bias is not None]), optional=True,
                          ordered=True))
    return [*steps, step("out_proj", output)]


MAX_STACKED = 4096  # numbers of a stacked input projection declared as a step (the notes' is 3 * 4 * 4)


CHECKS = (
    Check(id="torch_equivalence.notes", exercise="torch_equivalence", points=1, hidden=False,
          cases=equivalence_cases_notes, probe=probe_equivalence, judge=judge_equivalence, expect=expect_equivalence,
          title={"en": "to_torch_multihead: nn.MultiheadAttention holding copies of our weights (no memory shared "
                       "with our module, which keeps its weights as they were) gives our output (d_out=4, 2 heads)",
                 "zh": "to_torch_multihead：装入我们权重副本（不与我们的模块共享内存，我们模块的权重保持原样）的 "
                       "nn.MultiheadAttention 给出相同的输出（d_out=4，2 个头）"}),
    Check(id="torch_equivalence.shapes", exercise="torch_equivalence", points=3, hidden=True,
          cases=equivalence_cases_shapes, probe=probe_equivalence, judge=judge_equivalence, expect=expect_equivalence,
          title={"en": "to_torch_multihead for other sizes (one token at a context_length of 1 too), qkv biases, "
                       "dropout settings and float64",
                 "zh": "to_torch_multihead 在其他尺寸（包括 context_length 为 1 时的单个 token）、qkv 偏置、dropout "
                       "设置和 float64 下也正确"}),
)


MESSAGES = {
    "torch_equivalence.shares_memory": {
        "en": "the result's {name} is our module's own tensor, not a copy: training one module would change the other",
        "zh": "结果中的 {name} 就是我们模块自己的张量，而不是副本：训练其中一个模块会改变另一个",
    },
    "torch_equivalence.not_multihead": {
        "en": "returned {got}, expected an nn.MultiheadAttention",
        "zh": "返回了 {got}，应当返回 nn.MultiheadAttention",
    },
    "torch_equivalence.no_value_error": {
        "en": "when d_in and d_out differ it must raise ValueError (nn.MultiheadAttention needs them equal); it "
              "raised {got}",
        "zh": "当 d_in 与 d_out 不同时必须抛出 ValueError（nn.MultiheadAttention 要求两者相等）；实际抛出 {got}",
    },
    "torch_equivalence.batch_first": {
        "en": "create it with batch_first on: our inputs put the batch axis first",
        "zh": "创建时要打开 batch_first：我们的输入把 batch 维度放在最前面",
    },
    "torch_equivalence.sizes": {
        "en": "embed_dim is {embed_dim} and num_heads {num_heads}; expected embed_dim {d_out} (mha.d_out) and "
              "num_heads {heads} (mha.num_heads)",
        "zh": "embed_dim 是 {embed_dim}，num_heads 是 {num_heads}；应当是 embed_dim {d_out}（mha.d_out）和 num_hea"
              "ds {heads}（mha.num_heads）",
    },
    "torch_equivalence.sizes.hidden": {
        "en": "embed_dim or num_heads is not mha.d_out or mha.num_heads",
        "zh": "embed_dim 或 num_heads 与 mha.d_out 或 mha.num_heads 不一致",
    },
    "torch_equivalence.dtype": {
        "en": "its weights are {got} but ours are {expected}: convert it to the dtype of mha's weights",
        "zh": "它的权重是 {got}，而我们的是 {expected}：请把它转换成 mha 权重的 dtype",
    },
    "torch_equivalence.no_in_proj": {
        "en": "in_proj_weight is missing: PyTorch makes it only when query, key and value share one size. Did you give "
              "key or value sizes of their own?",
        "zh": "缺少 in_proj_weight：只有当 query、key、value 使用同一个大小时，PyTorch 才会创建它。你是否为 key 或 "
              "value 单独设置了大小？",
    },
    "torch_equivalence.in_proj_order": {
        "en": "in_proj_weight stacks the three projections in the wrong order",
        "zh": "in_proj_weight 中三个投影矩阵的堆叠顺序不对",
    },
    "torch_equivalence.in_proj_transposed": {
        "en": "in_proj_weight holds the transposed matrices: which way round does nn.Linear lay out its weight, "
              "and which way round does in_proj_weight expect it?",
        "zh": "in_proj_weight 中放的是转置后的矩阵：nn.Linear 的 weight 按哪种顺序排列？in_proj_weight 又要求哪种"
              "顺序？",
    },
    "torch_equivalence.in_proj_block": {
        "en": "the rows of in_proj_weight for {layers} do not hold its weight, while the other two projections' rows "
              "do: what does your code do to those rows on their way in?",
        "zh": "in_proj_weight 中对应 {layers} 的那些行不是它的权重，另外两个投影对应的行是对的：你的代码在把这些行"
              "放进去的路上对它们做了什么？"},
    "torch_equivalence.in_proj_blocks": {
        "en": "the rows of in_proj_weight for {layers} do not hold their weights, while the third projection's rows "
              "do: what does your code do to those rows on their way in?",
        "zh": "in_proj_weight 中对应 {layers} 的那些行不是它们的权重，第三个投影对应的行是对的：你的代码在把这些行"
              "放进去的路上对它们做了什么？"},
    "torch_equivalence.in_proj_weight": {
        "en": "in_proj_weight does not hold W_query, W_key and W_value's weights",
        "zh": "in_proj_weight 中不是 W_query、W_key、W_value 的权重",
    },
    "torch_equivalence.no_bias": {
        "en": "create it with a bias: out_proj has one, and the query, key and value biases are zero when "
              "qkv_bias is off",
        "zh": "创建时要带偏置：out_proj 有偏置，qkv_bias 关闭时 query、key、value 的偏置为零",
    },
    "torch_equivalence.in_proj_bias": {
        "en": "in_proj_bias is not the query, key and value biases stacked (zeros where a projection has no bias)",
        "zh": "in_proj_bias 不是 query、key、value 偏置的堆叠（没有偏置的投影对应零）",
    },
    "torch_equivalence.out_proj_transposed": {
        "en": "out_proj's weight holds mha.out_proj's weight transposed: which way round does nn.Linear lay out its "
              "weight, and which way round does out_proj expect it?",
        "zh": "out_proj 的 weight 中放的是 mha.out_proj 的 weight 的转置：nn.Linear 的 weight 按哪种顺序排列？"
              "out_proj 又要求哪种顺序？",
    },
    "torch_equivalence.out_proj": {
        "en": "out_proj's {part} does not hold mha.out_proj's {part}, in any layout",
        "zh": "out_proj 的 {part} 中不是 mha.out_proj 的 {part}（任何排列方式都不是）",
    },
    "torch_equivalence.dropout": {
        "en": "the dropout probability is not mha.dropout.p",
        "zh": "dropout 概率不是 mha.dropout.p",
    },
    "torch_equivalence.dropout_not_a_rate": {
        "en": "the nn.MultiheadAttention's dropout is a {got}, not a probability: its constructor takes the rate "
              "itself, a float",
        "zh": "nn.MultiheadAttention 的 dropout 是一个 {got}，而不是概率：它的构造函数要的是概率本身，一个浮点数",
    },
    "torch_equivalence.values": {
        "en": "with a causal attn_mask, its output differs from our MultiHeadAttention's",
        "zh": "使用因果 attn_mask 时，它的输出与我们的 MultiHeadAttention 不同",
    },
}

DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
