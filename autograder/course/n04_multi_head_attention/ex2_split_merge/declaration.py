"""Checks for split_heads(x, num_heads) and merge_heads(x) (notebook 04): small printed examples; every kind of input a
forward pass can hand them (non-contiguous views, leaves that require grad, float64/float16/bfloat16, one batch row,
one head, head_dim 1, one token), in public; the same kinds at other sizes, and merge_heads undoing split_heads.
The input is never changed, in values or metadata, and the output stays in its graph.
"""

import random
from typing import Any

import torch

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import RAISED, Expectations, case_alone
from autograder.checking.probing import gradient_of
from autograder.course import variants
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex2_split_merge.judge import judge_merge, judge_split
from autograder.course.n04_multi_head_attention.ex2_split_merge.probe import (
    HEAD_DTYPES,
    HeadsCase,
    HeadsRecord,
    merge_input,
    probe_merge,
    probe_split,
    round_trip_source,
    split_input,
)
from autograder.course.n04_multi_head_attention.shared import dtype_message

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("split_heads", NOTEBOOK, ("split_heads",), {"en": "Splitting into heads", "zh": "拆分注意力头"},
             minutes=15, difficulty=2),
    Exercise("merge_heads", NOTEBOOK, ("merge_heads",), {"en": "Merging the heads", "zh": "合并注意力头"}, minutes=10,
             difficulty=2),
)


# ---------------------------------------------------------------------------------------------
# split_heads(x, num_heads): (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim)


def split_cases_notes(rng: random.Random) -> list[HeadsCase]:
    # arange inputs: the printed values show which feature went where.
    return [
        {"layout": "arange", "seed": 0, "batch": 2, "num_tokens": 6, "num_heads": 2, "head_dim": 2, "dtype": "float32"},
        {"layout": "arange", "seed": 0, "batch": 1, "num_tokens": 4, "num_heads": 3, "head_dim": 2, "dtype": "float32"},
    ]


def heads_case(rng: random.Random, layout: str, *, num_heads: int | None = None, num_tokens: int | None = None,
               dtype: str | None = None, batch: int | None = None, head_dim: int | None = None,
               leaf: bool = False) -> HeadsCase:
    return {
        "layout": layout,
        "seed": rng.randrange(2**31 - 100),
        "batch": batch or rng.randint(1, 3),
        "num_tokens": num_tokens or rng.randint(2, 9),
        "num_heads": num_heads or rng.randint(2, 4),
        "head_dim": head_dim or rng.randint(2, 5),
        "dtype": dtype or rng.choice(tuple(HEAD_DTYPES)),
        "leaf": leaf,
    }


def input_kinds(rng: random.Random, layouts: tuple[str, ...], plain: str) -> list[HeadsCase]:
    """Every kind of input the text allows, one case each: the non-contiguous `layouts`, then on `plain` inputs a leaf
    that requires grad, each dtype, one batch row with one head, head_dim 1 and one token. A leaf comes after a
    plain case, so that an input written in place is seen on a tensor that lets it happen."""
    return [
        *(heads_case(rng, layout, dtype="float32") for layout in layouts),
        heads_case(rng, plain, dtype="float32", leaf=True),
        *(heads_case(rng, plain, dtype=dtype) for dtype in ("float64", "float16", "bfloat16")),
        heads_case(rng, plain, dtype="float32", batch=1, num_heads=1),
        heads_case(rng, plain, dtype="float32", head_dim=1, num_heads=rng.randint(3, 4)),
        heads_case(rng, plain, dtype="float32", num_tokens=1),
    ]


def split_cases_inputs(rng: random.Random) -> list[HeadsCase]:
    return input_kinds(rng, ("transposed", "sliced", "expanded"), "random")


def split_cases_shapes(rng: random.Random) -> list[HeadsCase]:
    return [
        heads_case(rng, "random", dtype="float64"),
        heads_case(rng, "random", num_tokens=1),
        heads_case(rng, "random", num_heads=1),
        heads_case(rng, "random", head_dim=1),
        heads_case(rng, "random", num_tokens=rng.randint(17, 30)),
        heads_case(rng, "random", leaf=True),
    ]


def split_cases_strided(rng: random.Random) -> list[HeadsCase]:
    # Views of other tensors, as a real forward pass hands them over: their memory is not contiguous.
    return [heads_case(rng, layout, leaf=leaf) for layout in ("transposed", "sliced", "expanded")
            for leaf in (False, True)]


def split_steps(x: torch.Tensor, num_heads: int) -> list[list[Any]]:
    """split_heads as the notes' steps: the input viewed as (b, num_tokens, num_heads, head_dim), then split into
    heads, (b, num_heads, num_tokens, head_dim). The view holds the input's numbers in the input's order, as a wrong
    view straight to the final shape does too: only a tensor of its own shape holds it (shaped), and a route that
    never makes it (a stack of slices) skips it (optional). The split matches only the same numbers in the same order
    (ordered): a transpose of the input is the mistake, not a layout of it."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    viewed = x.reshape(b, num_tokens, num_heads, head_dim)
    return [step("heads_viewed", viewed, optional=True, ordered=True, shaped=True,
                 axes=(("batch", b), ("tokens", num_tokens), ("heads", num_heads), ("features", head_dim))),
            step("heads_split", solutions.split_heads(x, num_heads), ordered=True,
                 axes=(("batch", b), ("heads", num_heads), ("tokens", num_tokens), ("features", head_dim)))]


@case_alone
def expect_split(record: HeadsRecord, case: HeadsCase) -> Expectations:
    x, num_heads = split_input(case), case["num_heads"]
    return Expectations.computed(
        output=lambda: solutions.split_heads(x, num_heads),
        variants=lambda: [("split_without_transpose", variants.split(x, num_heads, "view_only")),
                          ("split_wrong_axes", variants.split(x, num_heads, "head_dim_first"))],
        # For the probe's own upstream mix (probing.gradient_weights), from the case: nothing the child sent.
        input_gradient=lambda: gradient_of(lambda through: solutions.split_heads(through, num_heads), x)[2],
        **{STEPS: lambda: split_steps(x, num_heads)},
        **{RAISED: exercise_errors("split_heads", probe_split, case)},
    )


# ---------------------------------------------------------------------------------------------
# merge_heads(x): (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, num_heads * head_dim)


def merge_cases_notes(rng: random.Random) -> list[HeadsCase]:
    return [
        {"layout": "arange", "seed": 0, "batch": 1, "num_tokens": 3, "num_heads": 2, "head_dim": 2, "dtype": "float32"},
        {"layout": "attention", "seed": 123, "batch": 2, "num_tokens": 6, "num_heads": 2, "head_dim": 2,
         "dtype": "float32"},
    ]


def merge_cases_inputs(rng: random.Random) -> list[HeadsCase]:
    return input_kinds(rng, ("split", "strided"), "attention")


def merge_cases_shapes(rng: random.Random) -> list[HeadsCase]:
    return [
        heads_case(rng, "attention", dtype="float64"),
        heads_case(rng, "attention", num_tokens=1),
        heads_case(rng, "attention", num_heads=1),
        heads_case(rng, "attention", head_dim=1),
        heads_case(rng, "attention", num_tokens=rng.randint(17, 30)),
        heads_case(rng, "attention", leaf=True),
        # Drawn last, so that the cases before it keep their values: a batch of one, as the notes show, on every
        # draw (tests/test_hidden_edge_sizes.py).
        heads_case(rng, "attention", batch=1),
    ]


def merge_cases_round_trip(rng: random.Random) -> list[HeadsCase]:
    return [
        heads_case(rng, "split", dtype="float64"),
        heads_case(rng, "split", num_tokens=rng.randint(17, 30)),
        heads_case(rng, "strided"),
        heads_case(rng, "split", leaf=True),
    ]


def merge_steps(x: torch.Tensor) -> list[list[Any]]:
    """merge_heads as the notes' one step: the heads side by side along the features, (b, num_tokens, d_out). The
    notes' transpose back to (b, num_tokens, num_heads, head_dim) holds the same numbers in the same order, so it is
    this step in another shape (a view of it, as the contiguous copy is), not a step of its own. Its features are
    the heads' side by side: its named axes are the tokens, then the heads, then each head's features."""
    b, num_heads, num_tokens, head_dim = x.shape
    return [step("heads_merged", solutions.merge_heads(x), ordered=True,
                 axes=(("batch", b), ("tokens", num_tokens), ("heads", num_heads), ("features", head_dim)))]


@case_alone
def expect_merge(record: HeadsRecord, case: HeadsCase) -> Expectations:
    x = merge_input(case)
    return Expectations.computed(
        output=lambda: round_trip_source(case) if case["layout"] == "split" else solutions.merge_heads(x),
        variants=lambda: [
            ("merge_without_transpose", variants.merge(x, "no_transpose")),
            ("merge_wrong_axes", variants.merge(x, "head_dim_first")),
            ("heads_on_token_axis", variants.merge(x, "token_axis")),
        ],
        input_gradient=lambda: gradient_of(solutions.merge_heads, x)[2],
        **{STEPS: lambda: merge_steps(x)},
        **{RAISED: exercise_errors("merge_heads", probe_merge, case)},
    )


CHECKS = (
    Check(id="split_heads.notes", exercise="split_heads", points=2, hidden=False, cases=split_cases_notes,
          probe=probe_split, judge=judge_split, expect=expect_split,
          title={"en": "split_heads: (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim) on small "
                       "examples, the input left unchanged and the right gradient flowing back to it",
                 "zh": "split_heads：在小例子上把 (b, num_tokens, d_out) 变成 (b, num_heads, num_tokens, head_dim)，"
                       "不修改输入，正确的梯度能传回输入"}),
    Check(id="split_heads.inputs", exercise="split_heads", points=1, hidden=False, cases=split_cases_inputs,
          probe=probe_split, judge=judge_split, expect=expect_split,
          title={"en": "split_heads on every kind of input: non-contiguous views (transposed, sliced, expanded), a "
                       "leaf that requires grad, float64, float16 and bfloat16, one batch row with one head, "
                       "head_dim 1, one token; the input's values and metadata left as they were",
                 "zh": "split_heads 适用于各种输入：非连续的视图（转置、切片、expand 得到的）、需要梯度的叶子张量、"
                       "float64、float16 和 bfloat16、只有一行 batch 且只有一个头、head_dim 为 1、只有一个 token；"
                       "输入的数值和元数据保持原样"}),
    Check(id="split_heads.shapes", exercise="split_heads", points=1, hidden=True, cases=split_cases_shapes,
          probe=probe_split, judge=judge_split, expect=expect_split,
          title={"en": "split_heads for other shapes and dtypes (one token, one head, head_dim 1, long sequences, "
                       "a leaf that requires grad)",
                 "zh": "split_heads 在其他形状和 dtype 下也正确（单个 token、单个头、head_dim 为 1、长序列、需要梯度的"
                       "叶子张量）"}),
    Check(id="split_heads.strided", exercise="split_heads", points=1, hidden=True, cases=split_cases_strided,
          probe=probe_split, judge=judge_split, expect=expect_split,
          title={"en": "split_heads on other non-contiguous inputs (views of transposed, sliced or expanded tensors)",
                 "zh": "split_heads 处理其他非连续输入（转置、切片或 expand 得到的视图）"}),
    Check(id="merge_heads.notes", exercise="merge_heads", points=2, hidden=False, cases=merge_cases_notes,
          probe=probe_merge, judge=judge_merge, expect=expect_merge,
          title={"en": "merge_heads: (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, d_out) on small "
                       "examples, the input left unchanged and the right gradient flowing back to it",
                 "zh": "merge_heads：在小例子上把 (b, num_heads, num_tokens, head_dim) 变回 (b, num_tokens, d_out)，"
                       "不修改输入，正确的梯度能传回输入"}),
    Check(id="merge_heads.inputs", exercise="merge_heads", points=1, hidden=False, cases=merge_cases_inputs,
          probe=probe_merge, judge=judge_merge, expect=expect_merge,
          title={"en": "merge_heads on every kind of input: non-contiguous views (a split, a slice), a leaf that "
                       "requires grad, float64, float16 and bfloat16, one batch row with one head, head_dim 1, one "
                       "token; the input's values and metadata left as they were",
                 "zh": "merge_heads 适用于各种输入：非连续的视图（拆分或切片得到的）、需要梯度的叶子张量、float64、"
                       "float16 和 bfloat16、只有一行 batch 且只有一个头、head_dim 为 1、只有一个 token；输入的数值和"
                       "元数据保持原样"}),
    Check(id="merge_heads.shapes", exercise="merge_heads", points=1, hidden=True, cases=merge_cases_shapes,
          probe=probe_merge, judge=judge_merge, expect=expect_merge,
          title={"en": "merge_heads for other shapes and dtypes (a batch of one, one token, one head, head_dim 1, long "
                       "sequences, a leaf that requires grad)",
                 "zh": "merge_heads 在其他形状和 dtype 下也正确（batch 为 1、单个 token、单个头、head_dim 为 1、"
                       "长序列、需要梯度的叶子张量）"}),
    Check(id="merge_heads.round_trip", exercise="merge_heads", points=1, hidden=True, cases=merge_cases_round_trip,
          probe=probe_merge, judge=judge_merge, expect=expect_merge,
          title={"en": "merge_heads undoes split_heads, also on non-contiguous inputs",
                 "zh": "merge_heads 能还原 split_heads 的结果，非连续输入也可以"}),
)


MESSAGES = {
    **dtype_message("split_heads"),
    **dtype_message("merge_heads"),
    # split_heads
    "split_heads.values": {
        "en": "some heads hold the wrong features: head h of token t must hold the h-th run of head_dim "
              "consecutive features of token t",
        "zh": "有些头拿到了错误的特征：token t 的第 h 个头应当是 token t 的第 h 段连续的 head_dim 个特征",
    },
    "error.view_non_contiguous_input": {
        "en": "a view failed ({type}): the input is not contiguous in memory (a view of a transposed or sliced "
              "tensor), and the shape asked for cannot be read from its memory as it lies",
        "zh": "view 失败（{type}）：输入在内存中不连续（它是转置或切片后的视图），按它现在的内存顺序读不出所要的形状",
    },
    "split_heads.input_modified": {
        "en": "split_heads changed its input in place (its values, its shape or its strides): which form of the "
              "operations returns a view and leaves the input alone?",
        "zh": "split_heads 原地修改了输入（它的数值、形状或步长）：这些运算的哪种写法会返回一个视图而不改动输入？",
    },
    "split_heads.input_written": {
        "en": "split_heads wrote into its input, or into a view of it, in place: the numbers are the same, but "
              "autograd counts the input as changed, and refuses the operation on a leaf that requires grad",
        "zh": "split_heads 原地写入了输入或它的视图：数值没变，但 autograd 认为输入已被修改，并且对需要梯度的叶子张量"
              "会拒绝这个运算",
    },
    "split_heads.input_metadata_changed": {
        "en": "split_heads changed its input's dtype, device or requires_grad flag: the caller's tensor must come "
              "back as it was given",
        "zh": "split_heads 改变了输入的 dtype、设备或 requires_grad 标志：调用者的张量必须原样保留",
    },
    # merge_heads
    "merge_heads.values": {
        "en": "features land in the wrong place: the h-th run of head_dim consecutive features of token t must be "
              "head h's output for token t",
        "zh": "特征放错了位置：token t 的第 h 段连续的 head_dim 个特征应当是第 h 个头对 token t 的输出",
    },
    "merge_heads.round_trip": {
        "en": "merge_heads(split_heads(x, num_heads)) does not give x back",
        "zh": "merge_heads(split_heads(x, num_heads)) 没有还原出 x",
    },
    "merge_heads.input_modified": {
        "en": "merge_heads changed its input in place (its values, its shape or its strides): which form of the "
              "operation returns a view and leaves its input alone?",
        "zh": "merge_heads 原地修改了输入（它的数值、形状或步长）：这个运算的哪种写法会返回一个视图而不改动输入？",
    },
    "merge_heads.input_written": {
        "en": "merge_heads wrote into its input, or into a view of it, in place: the numbers are the same, but "
              "autograd counts the input as changed, and refuses the operation on a leaf that requires grad",
        "zh": "merge_heads 原地写入了输入或它的视图：数值没变，但 autograd 认为输入已被修改，并且对需要梯度的叶子张量"
              "会拒绝这个运算",
    },
    "merge_heads.input_metadata_changed": {
        "en": "merge_heads changed its input's dtype, device or requires_grad flag: the caller's tensor must come "
              "back as it was given",
        "zh": "merge_heads 改变了输入的 dtype、设备或 requires_grad 标志：调用者的张量必须原样保留",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
