"""Checks for SelfAttention_v1 and SelfAttention_v2 (notebook 02).

Every forward pass is compared with autograder.course.variants.attention run on the student's OWN weights,
read back with state_of, so initialisation and layer creation order never matter. v1 keeps raw
(d_in, d_out) matrices used as x @ W; nn.Linear keeps weight as (d_out, d_in): v1's are transposed
before they go into `attention`.
"""

import random
from collections.abc import Callable, Mapping
from functools import cache, partial
from typing import Any

from torch import Tensor

from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS
from autograder.checking.expectations import FAILING_ALIKE, RAISED, WEIGHTS, Expectations, case_alone, reads_record
from autograder.checking.probing import PROJECTIONS
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.n02_trainable_self_attention import NOTEBOOK
from autograder.course.n02_trainable_self_attention.ex1_self_attention.judge import judge_calls, judge_forward
from autograder.course.n02_trainable_self_attention.ex1_self_attention.probe import (
    ForwardRecord,
    SelfAttentionCase,
    attention_input,
    probe_calls,
    probe_forward,
)
from autograder.course.shared.records import State
from autograder.course.value_variants import failing_alike
from autograder.course.variants import attention, attention_steps, attention_variants

__all__ = ["DECLARATION"]

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("self_attention_v1", NOTEBOOK, ("SelfAttention_v1",),
             {"en": "SelfAttention_v1.forward", "zh": "SelfAttention_v1.forward"}, minutes=20, difficulty=2),
    Exercise("self_attention_v2", NOTEBOOK, ("SelfAttention_v2",),
             {"en": "SelfAttention_v2.forward", "zh": "SelfAttention_v2.forward"}, minutes=10, difficulty=1),
)


def projection_weights(state: State) -> dict[str, Tensor]:
    """The student's projections as nn.Linear-shaped float64 weights for `attention` (the judge has checked that they
    are there and shaped right)."""
    weights: dict[str, Tensor] = {}
    for name in PROJECTIONS:
        raw = name in state  # a raw (d_in, d_out) parameter used as x @ W, else an nn.Linear
        weights[f"{name}.weight"] = (state[name].T if raw else state[f"{name}.weight"]).double()
        if state.get(f"{name}.bias") is not None:
            weights[f"{name}.bias"] = state[f"{name}.bias"].double()
    return weights


@reads_record("state")
def expect_forward(exercise_id: str, class_name: str, record: ForwardRecord, case: SelfAttentionCase) -> Expectations:
    """The reference attention and its single-knob variants, on the student's own weights; after a crash, the
    errors of the exercise's raising variants, run by the same probe (the class by its notebook name); after a
    failure that is a fact (a dtype), the verdicts the exercise's variant modules get from the same check."""
    x = attention_input(case).double()
    weights = cache(lambda: projection_weights(record["state"]))
    probe = partial(probe_forward, class_name)
    alike = failing_alike(exercise_id, probe, partial(judge_forward, exercise_id),
                          partial(expect_forward, exercise_id, class_name), case)
    return Expectations.computed(**{WEIGHTS: weights}, output=lambda: attention(x, weights(), causal=False),
                                 variants=lambda: attention_variants(x, weights(), causal=False),
                                 **{STEPS: lambda: attention_steps(x, weights(), causal=False)},
                                 **{RAISED: exercise_errors(exercise_id, probe, case), FAILING_ALIKE: alike})


@case_alone
def expect_calls(exercise_id: str, class_name: str, record: Any, case: SelfAttentionCase) -> Expectations:
    """The calls' judge needs no reference; after a crash, the errors of the exercise's raising variants."""
    return Expectations.computed(**{RAISED: exercise_errors(exercise_id, partial(probe_calls, class_name), case)})


def random_shape(rng: random.Random) -> dict[str, int]:
    """d_in != d_out (scaling by sqrt(d_in) must show) and head_dim = d_out >= 2 (head_dim 1 hides scaling)."""
    d_in = rng.randint(2, 8)
    d_out = rng.choice([d for d in range(2, 9) if d != d_in])
    return {"d_in": d_in, "d_out": d_out}


def attention_case(rng: random.Random, num_tokens: int, dtype: str = "float32", **extra: Any) -> SelfAttentionCase:
    shape = extra.pop("shape", None) or random_shape(rng)
    # `shape` holds d_in and d_out, `extra` other SelfAttentionCase keys (qkv_bias), given by name.
    return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "num_tokens": num_tokens,
            "dtype": dtype, **shape, **extra}  # type: ignore[typeddict-item]


def one_token_cases(rng: random.Random, **extra: Any) -> list[SelfAttentionCase]:
    """A one-token input on every draw, drawn last so that the cases before it keep their values: the preview may
    draw one token from its 1-to-5 range, and what its preview shows (an axis squeezed away on one token) must be
    graded on every hidden draw too, not only on the draws that happen to pick one token."""
    return [attention_case(rng, 1, **extra)]


def v1_cases_notes(rng: random.Random) -> list[SelfAttentionCase]:
    # torch.manual_seed(123) and d_out = 2, as in the notes: row 2 is their context_vec_2.
    return [{"input": "notes_inputs", "init_seed": 123, "d_in": 3, "d_out": 2, "dtype": "float32"}]


def v1_cases_shapes(rng: random.Random) -> list[SelfAttentionCase]:
    return [
        attention_case(rng, rng.randint(2, 8)),
        attention_case(rng, rng.randint(17, 24)),
        attention_case(rng, rng.randint(1, 5), dtype="float64"),
        *one_token_cases(rng),
    ]


def v1_cases_one(rng: random.Random) -> list[SelfAttentionCase]:
    # The rule holds on every kind of input the other checks grade (the notes' tokens, 1 to 24 tokens, float64):
    # built-in attention called on some sizes only must not keep the rule's point.
    return [attention_case(rng, rng.randint(3, 8)), *v1_cases_notes(rng), *v1_cases_shapes(rng)]


def v2_cases_notes(rng: random.Random) -> list[SelfAttentionCase]:
    return [{"input": "notes_inputs", "init_seed": 789, "d_in": 3, "d_out": 2, "qkv_bias": False, "dtype": "float32"}]


def v2_cases_shapes(rng: random.Random) -> list[SelfAttentionCase]:
    # First d_in == d_out: there `x @ self.W_key.weight` runs (and is wrong), so the mistake can be named.
    d = rng.randint(2, 6)
    return [
        attention_case(rng, rng.randint(2, 8), shape={"d_in": d, "d_out": d}, qkv_bias=False),
        attention_case(rng, rng.randint(17, 24), qkv_bias=True),
        attention_case(rng, rng.randint(1, 5), dtype="float64", qkv_bias=rng.choice((False, True))),
        *one_token_cases(rng, qkv_bias=rng.choice((False, True))),
    ]


def v2_cases_one(rng: random.Random) -> list[SelfAttentionCase]:
    # The rule holds on every kind of input the other checks grade (the notes' tokens, 1 to 24 tokens, float64):
    # built-in attention called on some sizes only must not keep the rule's point.
    return [attention_case(rng, rng.randint(3, 8), qkv_bias=True), *v2_cases_notes(rng), *v2_cases_shapes(rng)]


V1_TITLES = {
    "notes": {
        "en": "SelfAttention_v1(3, 2) on the notes' six tokens",
        "zh": "SelfAttention_v1(3, 2) 作用在笔记的 6 个 token 上",
    },
    "shapes": {
        "en": "SelfAttention_v1 is right for other sizes (1 to 24 tokens, d_in != d_out, float64)",
        "zh": "SelfAttention_v1 在其他大小上也正确（1 到 24 个 token，d_in != d_out，float64）",
    },
    "from_scratch": {
        "en": "SelfAttention_v1 computes attention itself (no built-in attention)",
        "zh": "SelfAttention_v1 自己计算注意力（不调用内置的注意力函数）",
    },
}

V2_TITLES = {
    "notes": {
        "en": "SelfAttention_v2(3, 2) on the notes' six tokens",
        "zh": "SelfAttention_v2(3, 2) 作用在笔记的 6 个 token 上",
    },
    "shapes": {
        "en": "SelfAttention_v2 is right for other sizes, with and without qkv_bias, and in float64",
        "zh": "SelfAttention_v2 在其他大小上也正确（有无 qkv_bias，以及 float64）",
    },
    "from_scratch": {
        "en": "SelfAttention_v2 computes attention itself (no built-in attention)",
        "zh": "SelfAttention_v2 自己计算注意力（不调用内置的注意力函数）",
    },
}


SelfAttentionCases = Callable[[random.Random], list[SelfAttentionCase]]


def attention_checks(exercise_id: str, class_name: str, titles: Mapping[str, Mapping[str, str]],
                     cases_notes: SelfAttentionCases, cases_shapes: SelfAttentionCases,
                     cases_one: SelfAttentionCases) -> tuple[Check, ...]:
    """Three checks of one attention class: notes (2), hidden shapes (2), no built-ins (1); with the module
    contract's structure, device and properties (autograder.course.module_contract), 7 points. `titles`: each
    check's title by its kind."""
    return (
        Check(
            id=f"{exercise_id}.notes", exercise=exercise_id, title=titles["notes"], points=2, hidden=False,
            cases=cases_notes, probe=partial(probe_forward, class_name), judge=partial(judge_forward, exercise_id),
            expect=partial(expect_forward, exercise_id, class_name),
        ),
        Check(
            id=f"{exercise_id}.shapes", exercise=exercise_id, title=titles["shapes"], points=2, hidden=True,
            cases=cases_shapes, probe=partial(probe_forward, class_name), judge=partial(judge_forward, exercise_id),
            expect=partial(expect_forward, exercise_id, class_name),
        ),
        Check(
            id=f"{exercise_id}.from_scratch", exercise=exercise_id, title=titles["from_scratch"], points=1, hidden=True,
            cases=cases_one, probe=partial(probe_calls, class_name), judge=partial(judge_calls, exercise_id),
            expect=partial(expect_calls, exercise_id, class_name),
        ),
    )


CHECKS = (
    *attention_checks("self_attention_v1", "SelfAttention_v1", V1_TITLES,
                      v1_cases_notes, v1_cases_shapes, v1_cases_one),
    *attention_checks("self_attention_v2", "SelfAttention_v2", V2_TITLES,
                      v2_cases_notes, v2_cases_shapes, v2_cases_one),
)


ATTENTION_MESSAGES = {
    "wrong_output": {
        "en": "the context vectors differ from attention computed with your own weights: check the queries, keys "
              "and values, then the scores and their scale, then the softmax over the keys, then the weighted sum",
        "zh": "上下文向量与用你自己的权重算出的注意力结果不一致：请依次检查 query、key、value，分数及其缩放，"
              "对 key 的 softmax，以及加权求和",
    },
    "wrong_output.hidden": {
        "en": "the context vectors differ from the reference (computed with your own weights) on a shape you "
        "have not seen",
        "zh": "在一个你没见过的形状上，上下文向量与参考答案（用你自己的权重计算）不一致",
    },
    "dtype": {
        "en": "returned torch.{got_dtype} for a torch.{expected_dtype} input and torch.{expected_dtype} weights: "
              "keep the dtype",
        "zh": "输入和权重都是 torch.{expected_dtype}，却返回了 torch.{got_dtype}：请保持 dtype",
    },
    "missing_weight": {
        "en": "no parameter named {name}: keep the names W_query, W_key and W_value",
        "zh": "没有名为 {name} 的参数：请保留 W_query、W_key 和 W_value 这些名字",
    },
    "weight_shape": {
        "en": "{name} has shape {got_shape}, expected {expected_shape}",
        "zh": "{name} 的形状是 {got_shape}，期望 {expected_shape}",
    },
    "weight_shape.hidden": {
        "en": "{name} has the wrong shape: keep the constructor as given",
        "zh": "{name} 的形状不对：请保持给定的构造函数",
    },
    "builtin": {
        "en": "calls {names} when run on an input of shape {shape}: compute the scores, softmax and weighted sum "
              "yourself",
        "zh": "在处理形状为 {shape} 的输入时调用了 {names}：请自己计算分数、softmax 和加权求和",
    },
}

MESSAGES = {
    **{f"{exercise_id}.{key}": text for exercise_id in ("self_attention_v1", "self_attention_v2")
       for key, text in ATTENTION_MESSAGES.items()},
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
