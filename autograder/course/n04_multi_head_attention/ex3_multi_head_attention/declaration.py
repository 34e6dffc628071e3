"""Checks for MultiHeadAttention.forward (notebook 04): the book's forward(x) earns multi_head_attention; the padding
step (from the notes, not the book) is graded on its own, padding_mask, in the same forward.
"""

import random
from collections.abc import Callable, Mapping
from functools import cache, partial
from typing import Any

from torch import Tensor

from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS
from autograder.checking.expectations import FAILING_ALIKE, RAISED, WEIGHTS, Expectations, case_alone, reads_record
from autograder.checking.judging import fitted_fill
from autograder.course import variants
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import MultiHeadCase, attention_input
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention.judge import judge_mha, judge_mha_heads
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention.probe import (
    MultiHeadRecord,
    padding_mask,
    padding_mix,
    probe_mha,
    probe_mha_heads,
    unmasked_mix,
)
from autograder.course.n04_multi_head_attention.shared import (
    NOTES_ATTENTION_CASE,
    dtype_message,
    projection_weights,
    random_attention_case,
)
from autograder.course.shared import wide
from autograder.course.value_variants import failing_alike

__all__ = ["DECLARATION", "mha_cases_reference"]

EXERCISES = (
    Exercise("multi_head_attention", NOTEBOOK, ("MultiHeadAttention",),
             {"en": "MultiHeadAttention.forward", "zh": "MultiHeadAttention.forward"}, minutes=30, difficulty=3),
    Exercise("padding_mask", NOTEBOOK, ("MultiHeadAttention",),
             {"en": "Padding mask in MultiHeadAttention.forward", "zh": "MultiHeadAttention.forward 中的 padding 掩码"},
             minutes=20, difficulty=3),
)


# ---------------------------------------------------------------------------------------------
# multi_head_attention: MultiHeadAttention.forward(x), the book's forward (no attention_mask passed)
# padding_mask: the same forward called with attention_mask (b, num_tokens); same probe and judge


def mha_cases_notes(rng: random.Random) -> list[MultiHeadCase]:
    return [NOTES_ATTENTION_CASE.copy()]


def padding_cases_example(rng: random.Random) -> list[MultiHeadCase]:
    # The notebook's example: the second sequence starts with two padding tokens, so its first two
    # queries see nothing but padding. First, the same batch with the first sequence ending in two padding tokens:
    # with every sequence padded, and each its own way, a mask left out is told apart from one sequence's mask
    # applied to every sequence (the notes' batch alone cannot tell them apart: its first sequence has no padding;
    # issue 58). The first failing case decides the name (autograder.checking.results.judge_cases).
    return [{**NOTES_ATTENTION_CASE, "attention_mask": [[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]]},
            {**NOTES_ATTENTION_CASE, "attention_mask": [[1] * 6, [0, 0, 1, 1, 1, 1]]}]


def mha_cases_reference(rng: random.Random) -> list[MultiHeadCase]:
    return [
        random_attention_case(rng, dtype="float64"),
        random_attention_case(rng, num_heads=rng.randint(5, 6), num_tokens=rng.randint(17, 24), dtype="float32"),
        random_attention_case(rng, num_heads=1),
        random_attention_case(rng, num_tokens=1),
        # The wide input (autograder.course.shared.wide) in float64: some head's query sees only scores far below
        # -1e4, so a causal fill that is finite but not low enough (-1e4, -100) shows, while -1e9, the dtype's lowest
        # value and the notes' renormalising route stay exact.
        wide_case(rng, random_attention_case(rng, batch=wide.BATCH, num_tokens=rng.randint(4, 6), dtype="float64")),
        *edge_cases(rng),
    ]


def edge_cases(rng: random.Random) -> list[MultiHeadCase]:
    """A batch of one with num_tokens at context_length, on every draw, drawn after the other cases so that they keep
    their values: edges the notes' batch and the preview show, graded on every hidden draw, not only on those that
    happen to pick them (tests/test_hidden_edge_sizes.py)."""
    edge = random_attention_case(rng, batch=1)
    return [{**edge, "context_length": edge["num_tokens"]}]


def wide_case(rng: random.Random, case: MultiHeadCase) -> MultiHeadCase:
    """The case on the wide input, with d_in of 5 to 9: with fewer input features a head's W_query^T W_key is often
    definite, and then no input gives that head negative scores."""
    head_dim = case["d_out"] // case["num_heads"]
    return {**case, "d_in": rng.choice([d for d in range(5, 10) if d not in (case["d_out"], head_dim)]), "wide": True}


def padding_cases_hidden(rng: random.Random) -> list[MultiHeadCase]:
    right = random_attention_case(rng, batch=3, dtype="float64")
    num_tokens = right["num_tokens"]
    # Every sequence padded, each to its own length: a mask left out is told apart from one sequence's mask applied
    # to every sequence (issue 58).
    right["attention_mask"] = [[1] * length + [0] * (num_tokens - length)
                               for length in rng.sample(range(1, num_tokens), 3)]
    # Left padding: the first queries see nothing but padding (uniform weights, never NaN).
    left = random_attention_case(rng, batch=2, dtype="float64")
    num_tokens, padded = left["num_tokens"], rng.randint(2, left["num_tokens"] - 1)
    left["attention_mask"] = [[0] * padded + [1] * (num_tokens - padded), [1] * num_tokens]
    scattered = random_attention_case(rng, batch=2, num_tokens=rng.randint(17, 24), dtype="float32")
    scattered["attention_mask"] = [[int(rng.random() < 0.7) for _ in range(scattered["num_tokens"])] for _ in range(2)]
    return [right, left, scattered, *padding_edge_cases(rng)]


def padding_edge_cases(rng: random.Random) -> list[MultiHeadCase]:
    """One padded token in one sequence, one real token in the other, with num_tokens at context_length, on every
    draw, drawn after the other cases so that they keep their values: edges the example and the preview show, graded
    on every hidden draw, not only on those that happen to pick them (tests/test_hidden_edge_sizes.py)."""
    edge = random_attention_case(rng, batch=2, dtype="float64")
    num_tokens = edge["num_tokens"]
    return [{**edge, "context_length": num_tokens,
             "attention_mask": [[1] * (num_tokens - 1) + [0], [1] + [0] * (num_tokens - 1)]}]


@reads_record("state", "weights_seen", "backward", "backward_unmasked")
def expect_mha(record: MultiHeadRecord, case: MultiHeadCase) -> Expectations:
    """The reference on the student's own weights, its variants and, with a padding mask, the mask left out or
    flipped; the raising variants' errors (one class for both exercises, so one list of them)."""
    x, mask, num_heads = attention_input(case), padding_mask(case), case["num_heads"]
    knobs: dict[str, Any] = {"num_heads": num_heads, "attention_mask": mask}

    @cache  # read only when the judge asks
    def weights() -> dict[str, Tensor]:
        return projection_weights(record["state"])

    sources: dict[str, Callable[[], Any]] = {
        WEIGHTS: weights,
        "output": lambda: variants.attention(x, weights(), **knobs),
        "variants": lambda: variants.attention_variants(x, weights(), **knobs),
        STEPS: lambda: variants.attention_steps(x, weights(), **knobs),
        "attention_weights": lambda: variants.attention(x, weights(), return_weights=True, **knobs)[1],
        "raw_scores": lambda: variants.raw_scores(x, weights(), num_heads=num_heads),
        "merged": lambda: variants.attention(x, weights(), use_out_proj=False, **knobs),
        "fills": lambda: variants.mask_fill_variants(x, weights(), causal_fill(x, case, record), **knobs),
        # After a crash: the errors of the raising variants, run by the same probe on the same case.
        RAISED: exercise_errors("multi_head_attention", probe_mha, case),
    }
    if mask is not None:
        sources["gradients"] = lambda: padding_gradients(record, case)
        sources["padding_ignored"] = lambda: variants.attention(x, weights(), num_heads=num_heads)
        sources["padding_inverted"] = lambda: variants.attention(x, weights(), num_heads=num_heads,
                                                                 attention_mask=1 - mask)
        sources["padding_query_axis"] = lambda: [
            variants.attention(x, weights(), padding_axis="queries", padding_after_causal=after, **knobs)
            for after in (False, True)]
    return Expectations(sources)


def padding_gradients(record: MultiHeadRecord, case: MultiHeadCase) -> dict[str, Any]:
    """variants.reference_gradients with the module's own weights, read before its calls, on the case's input: with
    its padding mask for the probe's mix of the queries that see a real token (padding_mix), and without it
    (unmasked_mix), all rebuilt from the case."""
    def reference(backward: Any, mask: Tensor | None, mix: Callable[[Tensor], Tensor]) -> dict[str, Any]:
        def forward(x: Tensor, parameters: Mapping[str, Tensor]) -> Tensor:
            return variants.attention(x, projection_weights(dict(parameters)), num_heads=case["num_heads"],
                                      attention_mask=mask)

        return variants.reference_gradients(forward, backward["state"], backward["aliases"], attention_input(case),
                                            mix)

    return {"masked": reference(record["backward"], padding_mask(case), partial(padding_mix, case)),
            "unmasked": reference(record["backward_unmasked"], None, unmasked_mix)}


@case_alone
def expect_heads(record: Any, case: MultiHeadCase) -> Expectations:
    """The heads' judge needs no reference (the case says what is right); after a crash, the raising variants'
    errors; after a failure, the verdicts its value variants get from the same probe and judge (a merge that skips
    the transpose mixes the heads as the learner's code does)."""
    return Expectations.computed(**{
        RAISED: exercise_errors("multi_head_attention", probe_mha_heads, case),
        FAILING_ALIKE: failing_alike("multi_head_attention", probe_mha_heads, judge_mha_heads, expect_heads, case)})


def causal_fill(x: Tensor, case: MultiHeadCase, data: MultiHeadRecord) -> float | None:
    """The value the student filled the future scores with, fitted from the weights their dropout layer received
    (padded keys, at weight 0, do not count); None when they were not seen or no single value explains them."""
    seen = data.get("weights_seen")
    if seen is None:
        return None
    raw = variants.raw_scores(x, projection_weights(data["state"]), num_heads=case["num_heads"])
    future = variants.mask_for("future", x.shape[1])
    return fitted_fill(seen, raw, (case["d_out"] // case["num_heads"]) ** 0.5, future)


# Heads: independent until out_proj, and computed in one batched computation (the module contract checks causality,
# gradients, dropout and the buffer of MultiHeadAttention as of every module exercise).


def mha_cases_heads(rng: random.Random) -> list[MultiHeadCase]:
    heads = random_attention_case(rng, num_tokens=rng.randint(3, 8))
    heads.update({"kind": "heads", "head": rng.randrange(heads["num_heads"])})
    # Same d_out, 2 heads then 8: one batched computation dispatches as many matmuls for both.
    d_out = rng.choice((16, 24))
    vectorised: MultiHeadCase = {
        "kind": "vectorised",
        "seed": rng.randrange(2**31 - 100),
        "batch": 2,
        "num_tokens": 5,
        "context_length": 8,
        "d_in": rng.randint(3, 9),
        "d_out": d_out,
        "num_heads": 2,
        "more_heads": 8,
        "qkv_bias": False,
        "dtype": "float32",
    }
    return [heads, vectorised]


CHECKS = (
    # With the module contract (autograder.course.module_contract): 9 points.
    Check(id="multi_head_attention.notes", exercise="multi_head_attention", points=1.5, hidden=False,
          cases=mha_cases_notes, probe=probe_mha, judge=judge_mha, expect=expect_mha,
          title={"en": "MultiHeadAttention on the notes' batch (seed 123, d_out=2, 2 heads)",
                 "zh": "MultiHeadAttention 作用于笔记中的 batch（种子 123，d_out=2，2 个头）"}),
    Check(id="multi_head_attention.reference", exercise="multi_head_attention", points=2.5, hidden=True,
          cases=mha_cases_reference, probe=probe_mha, judge=judge_mha, expect=expect_mha,
          title={"en": "MultiHeadAttention matches the reference for other sizes (a batch of one, one token, "
                       "num_tokens equal to context_length), head counts and float64",
                 "zh": "MultiHeadAttention 在其他尺寸（batch 为 1、单个 token、num_tokens 等于 context_length）、"
                       "头数和 float64 下与参考实现一致"}),
    Check(id="multi_head_attention.heads", exercise="multi_head_attention", points=1, hidden=True,
          cases=mha_cases_heads, probe=probe_mha_heads, judge=judge_mha_heads, expect=expect_heads,
          title={"en": "MultiHeadAttention computes attention itself (no scaled_dot_product_attention): heads "
                       "independent until out_proj, all of them in one batched computation",
                 "zh": "MultiHeadAttention 自己计算注意力（不用 scaled_dot_product_attention）：在 out_proj "
                       "之前各头相互独立，并且所有的头在一次批量计算中完成"}),
    Check(id="padding_mask.example", exercise="padding_mask", points=2, hidden=False, cases=padding_cases_example,
          probe=probe_mha, judge=judge_mha, expect=expect_mha,
          title={"en": "MultiHeadAttention with attention_mask, on the notes' batch padded two ways (first the first "
                       "sequence ends with 2 padding tokens and the second starts with 2, then only the second starts "
                       "with 2, as in the notes); no query attends to a padding key, and a query that sees nothing "
                       "but padding only needs a finite output (any fill value that keeps it finite will do); the "
                       "right gradients flow back through the padding step to the input and the weights; forward "
                       "leaves x and attention_mask as they were",
                 "zh": "带 attention_mask 的 MultiHeadAttention，作用于笔记中的 batch 的两种 padding（"
                       "先是第一个序列末尾有 2 个 padding token、第二个序列开头有 2 个，"
                       "再是与笔记中一样只有第二个序列开头有 2 个）；"
                       "任何 query 都不关注 padding 位置的 key，而只能看到 padding "
                       "的 query 只需输出有限值（任何能保持有限的填入值都可以）；正确的梯度能经过 padding "
                       "这一步传回输入和权重；forward 不改动 x 和 attention_mask"}),
    Check(id="padding_mask.hidden", exercise="padding_mask", points=3, hidden=True, cases=padding_cases_hidden,
          probe=probe_mha, judge=judge_mha, expect=expect_mha,
          title={"en": "MultiHeadAttention with padding masks (right, left and scattered padding; a single padded "
                       "token, a single real token), the right gradients "
                       "flowing back, x and attention_mask left as they were",
                 "zh": "MultiHeadAttention 处理各种 padding 掩码（右侧、左侧和分散的 padding；只有一个 padding token、"
                       "只有一个真实 token），正确的梯度能传回，"
                       "x 和 attention_mask 保持原样"}),
)


MESSAGES = {
    **dtype_message("multi_head_attention"),
    # multi_head_attention
    "multi_head_attention.values": {
        "en": "the output differs from the reference forward pass run with your own weights",
        "zh": "输出与使用你自己的权重运行的参考前向传播结果不同",
    },
    "multi_head_attention.missing_layers": {
        "en": "the module has no {names}: keep the given __init__ (W_query, W_key, W_value, out_proj)",
        "zh": "模块中没有 {names}：请保留给定的 __init__（W_query、W_key、W_value、out_proj）",
    },
    "multi_head_attention.heads_mixed": {
        "en": "changing one head's query weights changed another head's output: heads must stay independent "
        "until out_proj",
        "zh": "改变一个头的 query 权重却改变了另一个头的输出：在 out_proj 之前各个头必须相互独立",
    },
    "multi_head_attention.mixed_after_out_proj": {
        "en": "changing one head's query weights changed the output's columns of another head, although what your "
        "forward passes to out_proj keeps the heads apart: the output is rearranged after out_proj",
        "zh": "改变一个头的 query 权重改变了输出中另一个头的那几列，而你的 forward 传给 out_proj 的张量中各个头仍"
        "相互独立：输出是在 out_proj 之后被重新排列的",
    },
    "multi_head_attention.calls_differ": {
        "en": "two calls on the same input, with nothing changed between them, gave different outputs: whether the "
        "heads stay independent cannot be read from them",
        "zh": "对同一个输入连续调用两次、中间什么都没有改，输出却不同：无法据此判断各个头是否相互独立",
    },
    "multi_head_attention.head_unchanged": {
        "en": "changing one head's query weights did not change that head's output",
        "zh": "改变一个头的 query 权重并没有改变这个头的输出",
    },
    "multi_head_attention.builtin": {
        "en": "write the attention yourself: {names} must not be used in this exercise",
        "zh": "请自己实现注意力：本练习不能使用 {names}",
    },
    "multi_head_attention.loop": {
        "en": "going from {few} to {many} heads dispatched more matrix multiplications: compute all heads at once",
        "zh": "头数从 {few} 增加到 {many} 时矩阵乘法的次数变多了：请一次性计算所有的头",
    },
    # padding_mask
    "padding_mask.no_argument": {
        "en": "forward takes no attention_mask yet: give it the optional attention_mask parameter of the "
              "exercise's signature and add the padding step (the multi_head_attention points do not depend on it)",
        "zh": "forward 还不接受 attention_mask：请按练习给定的签名为它加上可选参数 attention_mask，并加上 padding "
              "这一步（multi_head_attention 的分数与此无关）",
    },
    "padding_mask.renamed_argument": {
        "en": "forward takes `{name}` where the exercise's signature gives attention_mask: the mask is passed by "
              "the name attention_mask, which your forward does not accept, so it never reaches a padding step; "
              "keep the given parameter name (the multi_head_attention points do not depend on it)",
        "zh": "练习给定的签名在这个位置是 attention_mask，而你的 forward 接受的是 `{name}`：掩码按名字 attention_m"
              "ask 传入，你的 forward 不接受它，所以掩码到不了 padding 这一步；请保持给定的参数名（multi_head_atte"
              "ntion 的分数与此无关）",
    },
    "padding_mask.fill_too_high": {
        "en": "padded keys still get weight: their scores were set to {fill:.3g} (before the scaling), and real "
              "scores fall below that",
        "zh": "padding 位置的 key 仍然分到了权重：它们的分数被设成了 {fill:.3g}（缩放之前），而有些真实分数比这还低"},
    "padding_mask.fill_too_high.hidden": {
        "en": "padded keys still get weight: the value their scores were set to is not below every real score",
        "zh": "padding 位置的 key 仍然分到了权重：它们的分数被设成的值并不低于所有真实分数"},
    "padding_mask.nan": {
        "en": "the output contains NaN: look for a row of the scores that is entirely -inf before the softmax",
        "zh": "输出中有 NaN：检查 softmax 之前是否有一整行分数都是 -inf",
    },
    "padding_mask.nan_blind_rows": {
        "en": "NaN for queries that can see nothing but padding (every key they may attend to is padded): once "
              "the padding is hidden, their row has nothing left to be normalised over",
        "zh": "对于只能看到 padding 的 query（它们能关注的每个 key 都是 padding），输出是 NaN：隐藏 padding 之后，"
              "它们这一行已经没有可以归一化的东西了",
    },
    "padding_mask.ignored": {
        "en": "attention_mask has no effect: padded keys must be hidden from every query",
        "zh": "attention_mask 没有起作用：padding 位置的 key 必须对所有 query 都隐藏",
    },
    "padding_mask.query_axis": {
        "en": "attention_mask hides the padding tokens' query rows: their own outputs change, where the notes hide "
              "padding only as keys and leave each query's row as it is",
        "zh": "attention_mask 遮住了 padding token 作为 query 的那几行：它们自己的输出因此改变了，而笔记只把 "
              "padding 作为 key 隐藏，每个 query 的那一行保持不变",
    },
    "padding_mask.untracked_edit": {
        "en": "the values are right, but your forward edited a tensor of the computation in place while gradients "
              "were switched off, or through a detached alias of it, so autograd did not record that edit (its "
              "graph still holds the values from before it); the padding step is part of the computation autograd "
              "records",
        "zh": "数值是对的，但你的 forward 在关闭梯度计算时（或者通过它的一个已分离的别名）原地修改了计算中的一个张量，"
              "所以 autograd 没有记录这次修改（它的计算图里仍是修改之前的值）；padding 这一步也属于 autograd "
              "记录的计算",
    },
    "padding_mask.edit_unseen": {
        "en": "the values are right, but your forward switched off torch's dispatch modes (with which the grader "
              "watches a run) and edited a tensor in place while they were off: whether autograd recorded that edit "
              "cannot be checked, so this check does not pass; leave torch's modes as they are",
        "zh": "数值是对的，但你的 forward 关闭了 torch 的 dispatch mode（评分程序借助它观察运行过程），并在关闭期间"
              "原地修改了一个张量：无法检查 autograd 是否记录了这次修改，所以这项检查不通过；请不要改动 torch 的 mode",
    },
    "padding_mask.inverted": {
        "en": "attention_mask is used the wrong way round: 1 marks a real token, 0 marks padding to hide",
        "zh": "attention_mask 的含义用反了：1 表示真实 token，0 表示要隐藏的 padding",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
