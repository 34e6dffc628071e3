"""Checks for notebook 02, self-attention with trainable weights: SelfAttention_v1, SelfAttention_v2 and
exercise 3.1 (load_v2_weights_into_v1).

Every forward pass is compared with autograder.course.checks.variants.attention run on the student's OWN weights,
read back with state_of, so initialisation and layer creation order never matter. v1 keeps raw
(d_in, d_out) matrices used as x @ W; nn.Linear keeps weight as (d_out, d_in): v1's are transposed
before they go into `attention`. The transfer probe uses stand-in modules built here from plain
torch, so a bug in the student's own classes cannot cost exercise 3.1 its points.
"""

from functools import partial

from autograder.checking.check_types import Check, Exercise, Verdict
from autograder.checking.compare import compare, diagnose, same
from autograder.checking.diagnosis import explain_error
from autograder.checking.probing import (
    rand,
)
from autograder.course.checks.helpers import (
    ATTENTION_FUNCTIONS,
    PROJECTIONS,
    dtype_of,
    dtype_verdict,
    forbidden_calls,
)
from autograder.course.checks.variants import attention, attention_variants
from autograder.course.probes.self_attention import (
    attention_input,
    probe_calls,
    probe_forward,
    probe_transfer,
    square_case,
    transfer_weights,
)

NOTEBOOK = "02_trainable_self_attention"

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("self_attention_v1", NOTEBOOK, ("SelfAttention_v1",),
             {"en": "SelfAttention_v1.forward", "zh": "SelfAttention_v1.forward"}),
    Exercise("self_attention_v2", NOTEBOOK, ("SelfAttention_v2",),
             {"en": "SelfAttention_v2.forward", "zh": "SelfAttention_v2.forward"}),
    Exercise("transfer_weights", NOTEBOOK, ("load_v2_weights_into_v1",),
             {"en": "Book exercise 3.1: v2's weights into v1", "zh": "书中练习 3.1：把 v2 的权重装进 v1"}),
)






def projection_weights(exercise_id, state, case):
    """The student's projections as nn.Linear-shaped float64 weights for `attention`, or a failing Verdict."""
    d_in, d_out = case["d_in"], case["d_out"]
    weights = {}
    for name in PROJECTIONS:
        if name in state:  # a raw (d_in, d_out) parameter used as x @ W
            stored, expected_shape = state[name], (d_in, d_out)
        elif f"{name}.weight" in state:  # an nn.Linear
            stored, expected_shape = state[f"{name}.weight"], (d_out, d_in)
        else:
            return Verdict(False, f"{exercise_id}.missing_weight", {"name": name})
        if stored.shape != expected_shape:
            return Verdict(False, f"{exercise_id}.weight_shape",
                           {"name": name, "got_shape": tuple(stored.shape), "expected_shape": expected_shape})
        weights[f"{name}.weight"] = (stored.T if name in state else stored).double()
        if state.get(f"{name}.bias") is not None:
            weights[f"{name}.bias"] = state[f"{name}.bias"].double()
    return weights


# ---------------------------------------------------------------------------------------------
# SelfAttention_v1 / SelfAttention_v2: output, no built-in attention




def judge_forward(exercise_id, data, case):
    weights = projection_weights(exercise_id, data["state"], case)
    if isinstance(weights, Verdict):
        return weights
    x = attention_input(case)
    expected = attention(x.double(), weights, causal=False)
    got = data["output"]
    if not same(got, expected):
        variants = attention_variants(x.double(), weights, causal=False)
        return compare(got, expected, message_key=f"{exercise_id}.wrong_output", variants=variants,
                       input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)




def judge_calls(exercise_id, data, case):
    used = forbidden_calls(data["calls"], ATTENTION_FUNCTIONS)
    if used:
        return Verdict(False, f"{exercise_id}.builtin", {"names": ", ".join(used)})
    return Verdict(True)


def random_shape(rng):
    """d_in != d_out (scaling by sqrt(d_in) must show) and head_dim = d_out >= 2 (head_dim 1 hides scaling)."""
    d_in = rng.randint(2, 8)
    d_out = rng.choice([d for d in range(2, 9) if d != d_in])
    return {"d_in": d_in, "d_out": d_out}


def attention_case(rng, num_tokens, dtype="float32", **extra):
    shape = extra.pop("shape", None) or random_shape(rng)
    return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "num_tokens": num_tokens,
            "dtype": dtype, **shape, **extra}


def v1_cases_notes(rng):
    # torch.manual_seed(123) and d_out = 2, as in the notes: row 2 is their context_vec_2.
    return [{"input": "notes_inputs", "init_seed": 123, "d_in": 3, "d_out": 2, "dtype": "float32"}]


def v1_cases_shapes(rng):
    return [
        attention_case(rng, rng.randint(2, 8)),
        attention_case(rng, rng.randint(17, 24)),
        attention_case(rng, rng.randint(1, 5), dtype="float64"),
    ]


def v1_cases_one(rng):
    return [attention_case(rng, rng.randint(3, 8))]


def v2_cases_notes(rng):
    return [{"input": "notes_inputs", "init_seed": 789, "d_in": 3, "d_out": 2, "qkv_bias": False, "dtype": "float32"}]


def v2_cases_shapes(rng):
    # First d_in == d_out: there `x @ self.W_key.weight` runs (and is wrong), so the mistake can be named.
    d = rng.randint(2, 6)
    return [
        attention_case(rng, rng.randint(2, 8), shape={"d_in": d, "d_out": d}, qkv_bias=False),
        attention_case(rng, rng.randint(17, 24), qkv_bias=True),
        attention_case(rng, rng.randint(1, 5), dtype="float64", qkv_bias=rng.choice((False, True))),
    ]


def v2_cases_one(rng):
    return [attention_case(rng, rng.randint(3, 8), qkv_bias=True)]


# ---------------------------------------------------------------------------------------------
# Exercise 3.1: load_v2_weights_into_v1(sa_v1, sa_v2)










def judge_transfer(data, case):
    if "raised" in data:
        return judge_transfer_raised(data, case)
    v1_start, v2_weights = transfer_weights(case)
    v1, v2 = data["v1"], data["v2"]
    for name in PROJECTIONS:
        if not same(v2.get(f"{name}.weight"), v2_weights[name]):
            return Verdict(False, "transfer_weights.v2_changed", {"name": name})
    if all(same(v1.get(name), v1_start[name]) for name in PROJECTIONS):
        return Verdict(False, "transfer_weights.unchanged", {"returned": data["returned"]})
    for name in PROJECTIONS:
        got, expected = v1.get(name), v2_weights[name].T
        if got is None:
            return Verdict(False, "transfer_weights.missing_parameter", {"name": name})
        if not same(got, expected):
            candidates = [("weights_not_transposed", v2_weights[name])]
            candidates += [("weights_mixed_up", v2_weights[other].T) for other in PROJECTIONS if other != name]
            return Verdict(False, "transfer_weights.wrong_weight", {"name": name},
                           misconception=diagnose(got, expected, candidates), expected=expected, got=got)
    # With the weights in place both modules must compute the same attention.
    x = rand(case["seed"] + 6, case["num_tokens"], case["d_in"], dtype=dtype_of(case))
    out_v1 = attention(x, {f"{name}.weight": v1[name].T for name in PROJECTIONS}, causal=False)
    out_v2 = attention(x, {f"{name}.weight": v2_weights[name] for name in PROJECTIONS}, causal=False)
    if not same(out_v1, out_v2):
        return Verdict(False, "transfer_weights.outputs_differ")
    return Verdict(True)


def judge_transfer_raised(data, case):
    """The function raised for d_in != d_out; name the missing .T when the square run copied weight as it is."""
    _, v2_weights = transfer_weights(square_case(case))
    copied = [data["square"]["v1"].get(name) for name in PROJECTIONS]
    as_is = [same(got, v2_weights[name]) for got, name in zip(copied, PROJECTIONS, strict=True)]
    transposed = [same(got, v2_weights[name].T) for got, name in zip(copied, PROJECTIONS, strict=True)]
    if any(as_is) and all(a or t for a, t in zip(as_is, transposed, strict=True)):
        raised = data["raised"]
        detail = " ".join(str(raised.get("message", "")).split())[:160]
        fields = {"type": raised.get("type", ""), "detail": detail}
        return Verdict(False, "transfer_weights.raised_untransposed", fields, misconception="weights_not_transposed")

    return explain_error(data["raised"], case)


def transfer_cases_notes(rng):
    return [{"d_in": 3, "d_out": 2, "seed": 789, "num_tokens": 6, "dtype": "float32"}]


def transfer_cases_shapes(rng):
    d, small, large = rng.randint(2, 6), rng.randint(2, 4), rng.randint(5, 8)
    cases = [(d, d, "float32"), (large, small, "float32"), (small, large, "float64")]
    return [{"d_in": d_in, "d_out": d_out, "seed": rng.randrange(2**31), "num_tokens": rng.randint(2, 20),
             "dtype": dtype} for d_in, d_out, dtype in cases]


def attention_checks(exercise_id, class_name, cases_notes, cases_shapes, cases_one):
    """Three checks of one attention class: notes (2), hidden shapes (2), no built-ins (1); with the module
    contract's structure, device and properties (autograder.course.checks.contract), 7 points."""
    return (
        Check(f"{exercise_id}.notes", exercise_id, 2, False, cases_notes, partial(probe_forward, class_name),
              partial(judge_forward, exercise_id)),
        Check(f"{exercise_id}.shapes", exercise_id, 2, True, cases_shapes, partial(probe_forward, class_name),
              partial(judge_forward, exercise_id)),
        Check(f"{exercise_id}.from_scratch", exercise_id, 1, True, cases_one, partial(probe_calls, class_name),
              partial(judge_calls, exercise_id)),
    )


CHECKS = (
    *attention_checks("self_attention_v1", "SelfAttention_v1", v1_cases_notes, v1_cases_shapes, v1_cases_one),
    *attention_checks("self_attention_v2", "SelfAttention_v2", v2_cases_notes, v2_cases_shapes, v2_cases_one),
    Check("transfer_weights.notes", "transfer_weights", 2, False, transfer_cases_notes, probe_transfer,
          judge_transfer),
    Check("transfer_weights.shapes", "transfer_weights", 2, True, transfer_cases_shapes, probe_transfer,
          judge_transfer),
)

ATTENTION_MESSAGES = {
    "wrong_output": {
        "en": "the context vectors differ from softmax(queries @ keys.T / sqrt(d_out), dim=-1) @ values "
        "computed with your own weights",
        "zh": "上下文向量与用你自己的权重算出的 softmax(queries @ keys.T / sqrt(d_out), dim=-1) @ values 不一致",
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
        "en": "calls {names}: compute the scores, softmax and weighted sum yourself",
        "zh": "调用了 {names}：请自己计算分数、softmax 和加权求和",
    },
}

MESSAGES = {
    **{f"{exercise_id}.{key}": text for exercise_id in ("self_attention_v1", "self_attention_v2")
       for key, text in ATTENTION_MESSAGES.items()},
    "self_attention_v1.notes.title": {
        "en": "SelfAttention_v1(3, 2) on the notes' six tokens",
        "zh": "SelfAttention_v1(3, 2) 作用在笔记的 6 个 token 上",
    },
    "self_attention_v1.shapes.title": {
        "en": "SelfAttention_v1 is right for other sizes (1 to 24 tokens, d_in != d_out, float64)",
        "zh": "SelfAttention_v1 在其他大小上也正确（1 到 24 个 token，d_in != d_out，float64）",
    },
    "self_attention_v1.from_scratch.title": {
        "en": "SelfAttention_v1 computes attention itself (no built-in attention)",
        "zh": "SelfAttention_v1 自己计算注意力（不调用内置的注意力函数）",
    },
    "self_attention_v2.notes.title": {
        "en": "SelfAttention_v2(3, 2) on the notes' six tokens",
        "zh": "SelfAttention_v2(3, 2) 作用在笔记的 6 个 token 上",
    },
    "self_attention_v2.shapes.title": {
        "en": "SelfAttention_v2 is right for other sizes, with and without qkv_bias, and in float64",
        "zh": "SelfAttention_v2 在其他大小上也正确（有无 qkv_bias，以及 float64）",
    },
    "self_attention_v2.from_scratch.title": {
        "en": "SelfAttention_v2 computes attention itself (no built-in attention)",
        "zh": "SelfAttention_v2 自己计算注意力（不调用内置的注意力函数）",
    },
    "transfer_weights.notes.title": {
        "en": "after load_v2_weights_into_v1, v1 (d_in=3, d_out=2) holds v2's weights and computes the same",
        "zh": "调用 load_v2_weights_into_v1 之后，v1（d_in=3，d_out=2）持有 v2 的权重并给出相同结果",
    },
    "transfer_weights.shapes.title": {
        "en": "the transfer works for other sizes, square ones included, and in float64",
        "zh": "权重迁移在其他大小上也正确（包括 d_in == d_out 的情形以及 float64）",
    },
    "transfer_weights.wrong_weight": {
        "en": "sa_v1.{name} is not sa_v2.{name}.weight.T",
        "zh": "sa_v1.{name} 不等于 sa_v2.{name}.weight.T",
    },
    "transfer_weights.missing_parameter": {
        "en": "sa_v1 has no parameter {name} after the call: copy into the existing parameters",
        "zh": "调用之后 sa_v1 没有参数 {name}：请复制到已有的参数里",
    },
    "transfer_weights.unchanged": {
        "en": "sa_v1's weights did not change (your function returned {returned}): copy into sa_v1 itself",
        "zh": "sa_v1 的权重没有变化（你的函数返回了 {returned}）：请直接复制到 sa_v1 里",
    },
    "transfer_weights.v2_changed": {
        "en": "sa_v2.{name}.weight changed: read v2's weights, never modify them (t_() transposes in place)",
        "zh": "sa_v2.{name}.weight 被改动了：只能读取 v2 的权重，不要修改（t_() 会原地转置）",
    },
    "transfer_weights.outputs_differ": {
        "en": "with the copied weights, v1 and v2 still compute different context vectors",
        "zh": "复制权重之后，v1 和 v2 算出的上下文向量仍然不同",
    },
    "transfer_weights.raised_untransposed": {
        "en": "raised {type} ({detail}); with d_in == d_out it runs but copies weight without .T",
        "zh": "抛出了 {type}（{detail}）；当 d_in == d_out 时能运行，但复制的是没有转置的 weight",
    },
}
