"""Checks for book exercise 3.3, count_parameters(module) (notebook 04): trainable parameters only, never buffers
or frozen layers. Each case is a spec of a module; its expected counts come from the spec alone.
"""

import random
from collections.abc import Collection
from typing import Any

from autograder.checking.check_types import Check, Exercise
from autograder.checking.probing import PROJECTIONS
from autograder.course.declaration import Declaration
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.judge import judge_count
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.probe import CountCase, probe_count

EXERCISES = (
    Exercise("parameter_counts", NOTEBOOK, ("count_parameters",),
             {"en": "Book exercise 3.3: counting parameters", "zh": "书中练习 3.3：统计参数量"}, minutes=10,
             difficulty=1),
)


# ---------------------------------------------------------------------------------------------
# parameter_counts: count_parameters(module), trainable parameters only


def mha_block(d_in: int, d_out: int, context_length: int, qkv_bias: bool,
              frozen: Collection[str] = ()) -> dict[str, Any]:
    """Spec of a MultiHeadAttention-shaped block: [name, in, out, bias, trainable] per Linear, mask side."""
    linears = [[name, d_in, d_out, qkv_bias, name not in frozen] for name in PROJECTIONS]
    linears.append(["out_proj", d_out, d_out, True, "out_proj" not in frozen])
    return {"linears": linears, "mask": context_length}


def causal_block(d_in: int, d_out: int, context_length: int, qkv_bias: bool) -> dict[str, Any]:
    """Spec of a CausalAttention-shaped block (no out_proj)."""
    return {"linears": [[name, d_in, d_out, qkv_bias, True] for name in PROJECTIONS], "mask": context_length}


def count_cases_notes(rng: random.Random) -> list[CountCase]:
    return [
        {"blocks": [mha_block(768, 768, 1024, False)]},  # exercise 3.3: GPT-2's 12 heads, 768 features
        {"blocks": [mha_block(3, 2, 6, False)]},  # the notes' MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    ]


def count_cases_modules(rng: random.Random) -> list[CountCase]:
    d_in, d_out = rng.randint(8, 96), 4 * rng.randint(2, 24)
    num_heads = rng.randint(2, 4)
    return [
        {"blocks": [mha_block(d_in, d_out, rng.randint(64, 512), True)]},
        # MultiHeadAttentionWrapper-shaped: heads in an nn.ModuleList, a mask buffer in each.
        {"blocks": [causal_block(d_in, d_out, rng.randint(16, 128), False)] * num_heads, "container": "heads"},
        # Frozen projections (requires_grad=False) are parameters, but not trainable ones.
        {"blocks": [mha_block(d_in, d_out, rng.randint(16, 128), rng.random() < 0.5, frozen=("W_query", "W_key"))]},
    ]


CHECKS = (
    Check(id="parameter_counts.notes", exercise="parameter_counts", points=2, hidden=False, cases=count_cases_notes,
          probe=probe_count, judge=judge_count,
          title={"en": "count_parameters counts trainable parameters, never buffers, on MultiHeadAttention(768, 768, "
                       "1024, 0.0, 12) and the notes' small one",
                 "zh": "count_parameters 只统计可训练参数、不计 buffer：作用于 MultiHeadAttention(768, 768, 1024, 0.0, "
                       "12) 和笔记中的小模块"}),
    Check(id="parameter_counts.modules", exercise="parameter_counts", points=2, hidden=True, cases=count_cases_modules,
          probe=probe_count, judge=judge_count,
          title={"en": "count_parameters on other modules (biases, heads in a ModuleList, frozen layers)",
                 "zh": "count_parameters 作用于其他模块（偏置、ModuleList 中的多个头、冻结的层）"}),
)


MESSAGES = {
    # Shown by check(...) once every public check of the exercise passes: the why, after the student's own answer.
    "parameter_counts.explanation": {
        "en": "Why it works: module.parameters() yields every registered parameter once (a layer shared by two "
              "modules counts once), numel() is a tensor's number of entries, and requires_grad=False marks a frozen "
              "one; buffers such as the mask are state, never parameters. GPT-2's MultiHeadAttention(768, 768, 1024, "
              "0.0, 12): three 768 × 768 projections without bias (1,769,472) plus out_proj with its bias (768 × 768 "
              "+ 768 = 590,592) make 2,360,064; the 1024 × 1024 mask adds nothing.",
        "zh": "为什么这样是对的：module.parameters() 会把每个注册的参数恰好给出一次（两个模块共享的层只算一次），"
              "numel() 是张量的元素个数，requires_grad=False 表示参数被冻结；掩码这样的 buffer 是状态，从来不是参数。"
              "GPT-2 规模的 MultiHeadAttention(768, 768, 1024, 0.0, 12)：三个不带偏置的 768 × 768 投影（1,769,472）"
              "加上带偏置的 out_proj（768 × 768 + 768 = 590,592），共 2,360,064；1024 × 1024 的掩码不计入。"},
    "parameter_counts.wrong": {
        "en": "count_parameters returned {got:,}, which is not the module's number of trainable parameters: "
              "compare it with your own prediction",
        "zh": "count_parameters 返回 {got:,}，这不是该模块的可训练参数个数：请与你自己的预测对照",
    },
    "parameter_counts.wrong.hidden": {
        "en": "the count is wrong for one of the modules: count only the parameters that require grad",
        "zh": "某个模块的计数不对：只统计需要梯度的参数",
    },
    "parameter_counts.not_a_count": {
        "en": "returned {got}, expected a whole number",
        "zh": "返回了 {got}，应当返回一个整数",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
