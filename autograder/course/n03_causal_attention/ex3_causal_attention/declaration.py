"""Checks for CausalAttention's forward pass (notebook 03).

The public check uses the notes' numbers: CausalAttention(3, 2, 6, 0.0) under seed 123 on the two-sentence batch.
Hidden checks use random shapes, float64 and batches. Every output is compared with the reference loaded with the
student's OWN weights, and every single-knob mistake of autograder.course.variants is tried on the same
weights to name what went wrong. CausalAttention's structure, dropout, buffer and properties are the module
contract's (autograder.course.module_contract).
"""

import random

from torch import Tensor

from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS
from autograder.checking.expectations import RAISED, WEIGHTS, Expectations, reads_record
from autograder.checking.judging import fitted_fill
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.n03_causal_attention import NOTEBOOK
from autograder.course.n03_causal_attention.ex2_masking_routes.probe import NOTES_D_OUT
from autograder.course.n03_causal_attention.ex3_causal_attention.judge import judge_forward
from autograder.course.n03_causal_attention.ex3_causal_attention.probe import (
    CausalCase,
    CausalForwardRecord,
    attention_input,
    probe_forward,
)
from autograder.course.shared import wide
from autograder.course.shared.inputs import notes_inputs
from autograder.course.shared.records import State
from autograder.course.variants import (
    attention,
    attention_steps,
    attention_variants,
    mask_fill_variants,
    mask_for,
    raw_scores,
)

__all__ = ["DECLARATION", "attention_cases_random", "notes_case"]

EXERCISES = (
    Exercise("causal_attention", NOTEBOOK, ("CausalAttention",),
             {"en": "CausalAttention: buffer and forward", "zh": "CausalAttention：buffer 与前向传播"}, minutes=30,
             difficulty=3),
)


# ---------------------------------------------------------------------------------------------
# CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False): shared helpers

def attention_case(rng: random.Random, *, num_tokens: int, batch: int, qkv_bias: bool = False,
                   dtype: str = "float32") -> CausalCase:
    """A hidden case: d_in != d_out, head_dim = d_out >= 2, num_tokens < context_length (the mask must be sliced).

    """
    d_in = rng.randint(2, 6)
    d_out = rng.choice([d for d in range(2, 8) if d != d_in])
    return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "batch": batch,
            "num_tokens": num_tokens, "context_length": num_tokens + rng.randint(1, 6),
            "d_in": d_in, "d_out": d_out, "qkv_bias": qkv_bias, "dtype": dtype}


def notes_case() -> CausalCase:
    return {"input": "notes", "batch": 2, "num_tokens": 6, "context_length": 6,
            "d_in": len(notes_inputs()[0]), "d_out": NOTES_D_OUT, "qkv_bias": False, "dtype": "float32"}


# ---------------------------------------------------------------------------------------------
# CausalAttention: output on the notes' batch and on random shapes


def attention_cases_random(rng: random.Random) -> list[CausalCase]:
    # A mid-sized batch first: an unsliced mask crashes here with a message that names it. Then long
    # sequences in float64 with biases; then a single token (a crash for an unsliced mask, too).
    return [
        attention_case(rng, num_tokens=rng.randint(3, 8), batch=rng.randint(2, 3)),
        attention_case(rng, num_tokens=rng.randint(17, 22), batch=rng.randint(1, 2), qkv_bias=True, dtype="float64"),
        attention_case(rng, num_tokens=1, batch=rng.randint(1, 3), qkv_bias=rng.random() < 0.5),
        wide_case(rng, attention_case(rng, num_tokens=rng.randint(4, 6), batch=wide.BATCH, dtype="float64")),
        *edge_cases(rng),
    ]


def edge_cases(rng: random.Random) -> list[CausalCase]:
    """A batch of one with num_tokens at context_length (no slicing needed), on every draw, drawn after the other
    cases so that they keep their values: edges the notes' batch and the preview show, graded on every hidden draw,
    not only on those that happen to pick them (tests/test_hidden_edge_sizes.py)."""
    edge = attention_case(rng, num_tokens=rng.randint(2, 8), batch=1, qkv_bias=rng.random() < 0.5)
    return [{**edge, "context_length": edge["num_tokens"]}]


def wide_case(rng: random.Random, case: CausalCase) -> CausalCase:
    """A float64 case on the wide input (autograder.course.shared.wide): some query's every visible score lies far
    below -1e4, so a causal fill that is finite but not low enough (-1e4, -100) gives the future keys weight, while
    -1e9, the dtype's lowest value and the renormalising route of the notes stay exact. d_in of 5 to 8: with two
    input features W_query^T W_key is often definite, and then no input at all gives negative scores."""
    d_in = rng.randint(5, 8)
    return {**case, "d_in": d_in, "d_out": rng.choice([d for d in range(2, 8) if d != d_in]), "wide": True}


def attention_cases_notes(rng: random.Random) -> list[CausalCase]:
    return [notes_case()]


@reads_record("state", "weights_seen")
def expect_forward(record: CausalForwardRecord, case: CausalCase) -> Expectations:
    """The reference and its single-knob variants on the student's own weights (W_query/W_key/W_value only), read
    only when the judge asks: after a crash the data holds no weights, and the raising variants' errors (RAISED)
    are read instead."""
    x = attention_input(case)
    return Expectations.computed(**{WEIGHTS: lambda: record["state"]}, output=lambda: attention(x, record["state"]),
                                 variants=lambda: attention_variants(x, record["state"]),
                                 **{STEPS: lambda: attention_steps(x, record["state"])},
                                 attention_weights=lambda: weights_of(x, record["state"]),
                                 raw_scores=lambda: raw_scores(x, record["state"]).squeeze(1),
                                 fills=lambda: mask_fill_variants(x, record["state"], causal_fill(x, case, record)),
                                 **{RAISED: exercise_errors("causal_attention", probe_forward, case)})


def causal_fill(x: Tensor, case: CausalCase, data: CausalForwardRecord) -> float | None:
    """The value the student filled the future scores with, fitted from the weights their dropout layer received;
    None when they were not seen or no single value explains them."""
    seen = data.get("weights_seen")
    if seen is None:
        return None
    future = mask_for("future", x.shape[1])
    return fitted_fill(seen, raw_scores(x, data["state"]).squeeze(1), case["d_out"] ** 0.5, future)


def weights_of(x: Tensor, state: State) -> Tensor:
    """The reference's attention weights on the student's own projections: (b, num_tokens, num_tokens)."""
    return attention(x, state, return_weights=True)[1].squeeze(1)


CHECKS = (
    # With the module contract's structure, modes, device and properties (autograder.course.module_contract):
    # 11 points.
    Check(id="causal_attention.notes", exercise="causal_attention", points=2, hidden=False, cases=attention_cases_notes,
          probe=probe_forward, judge=judge_forward, expect=expect_forward,
          title={"en": "CausalAttention(3, 2, 6, 0.0) on the notes' batch of two sentences (seed 123)",
                 "zh": "CausalAttention(3, 2, 6, 0.0) 作用于笔记中由两句话组成的 batch（种子 123）"}),
    Check(id="causal_attention.random", exercise="causal_attention", points=3, hidden=True,
          cases=attention_cases_random, probe=probe_forward, judge=judge_forward, expect=expect_forward,
          title={"en": "CausalAttention matches the reference on other shapes (batches, a batch of one, 1 to 20+ "
                       "tokens, num_tokens equal to context_length, biases, float64)",
                 "zh": "CausalAttention 在其他形状上与参考实现一致（不同 batch、batch 为 1、1 到 20 多个 token、"
                       "num_tokens 等于 context_length、偏置、float64）"}),
)


MESSAGES = {
    "causal_attention.missing_layer": {
        "en": "the module has no nn.Linear called {name}: keep the layers of the given __init__",
        "zh": "模块中没有名为 {name} 的 nn.Linear：请保留给定 __init__ 中的各层",
    },
    "causal_attention.builtin": {
        "en": "the forward pass calls {names}: write the attention yourself",
        "zh": "前向传播调用了 {names}：请自己实现注意力计算",
    },
    "causal_attention.wrong_output": {
        "en": "the context vectors differ from the reference run with your own weights",
        "zh": "上下文向量与使用你自己的权重运行的参考实现不一致",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
