"""Checks for notebook 03: the causal mask, the two masking routes, CausalAttention.

Public checks use the notes' numbers: the attention weights of SelfAttention_v2 built under seed 789
and CausalAttention(3, 2, 6, 0.0) under seed 123 on the two-sentence batch. Hidden checks use
random shapes, float64, 4-D scores and batches; the masking routes also run on inputs on the `meta` device
(a tensor made inside without device= shows there). Every CausalAttention output is compared with the
reference loaded with the student's OWN weights, and every single-knob mistake of autograder.course.checks.variants is
tried on the same weights to name what went wrong. CausalAttention's structure, dropout, buffer and
properties are the module contract's (autograder.course.checks.contract).
Probes seed the global RNG only inside `seeded`, which restores it: a notebook's own seeds stay valid.
"""

import contextlib
from functools import partial

import torch

import solutions
from autograder.checking.check_types import Check, Exercise, Verdict
from autograder.checking.compare import compare, diagnose, same
from autograder.checking.judging import causal_mask_verdict, causal_weights_problem
from autograder.course.checks.helpers import (
    dtype_verdict,
    notes_inputs,
)
from autograder.course.checks.variants import attention, attention_variants, mask_for
from autograder.course.probes.causal import (
    NOTES_D_OUT,
    attention_input,
    probe_causal_mask,
    probe_forward,
    probe_neg_inf,
    probe_on_device,
    probe_renormalised,
    scores_input,
    weights_input,
)

NOTEBOOK = "03_causal_attention"

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("causal_mask", NOTEBOOK, ("causal_mask",),
             {"en": "The causal mask", "zh": "因果掩码"}),
    Exercise("masking_routes", NOTEBOOK, ("causal_weights_renormalised", "causal_weights_neg_inf"),
             {"en": "The two masking routes", "zh": "两种遮蔽方式"}),
    Exercise("causal_attention", NOTEBOOK, ("CausalAttention",),
             {"en": "CausalAttention: buffer and forward", "zh": "CausalAttention：缓冲区与前向传播"}),
)




# ---------------------------------------------------------------------------------------------
# causal_mask(num_tokens)


def mask_cases_notes(rng):
    return [{"num_tokens": 6}]


def mask_cases_sizes(rng):
    # 1 token is the edge case (nothing to hide); more than 16 catches masks built for the toy size.
    return [{"num_tokens": n} for n in (1, rng.randint(2, 5), rng.randint(17, 40))]




def judge_causal_mask(data, case):
    num_tokens = case["num_tokens"]
    mistakes = {kind_id: mask_for(kind, num_tokens)
                for kind_id, kind in (("mask_includes_diagonal", "with_diagonal"), ("mask_inverted", "inverted"))}
    return causal_mask_verdict(data["mask"], solutions.causal_mask(num_tokens), mistakes, num_tokens)


# ---------------------------------------------------------------------------------------------
# masking_routes: causal_weights_renormalised(attn_weights) and causal_weights_neg_inf(attn_scores), one
# exercise. Both return weights of shape (..., num_tokens, num_tokens); one judge serves both, and each
# probe looks up its own function, so a mistake in one route costs only that route's checks.






def weights_cases_notes(rng):
    return [{"input": "notes"}]


def weights_cases_random(rng):
    # A small 2-D input, a float64 batch of long sequences, the 4-D scores of notebook 04 (batch, heads, queries,
    # keys): "any leading dimensions" is what the docstring promises. Then the 1-token edge case (a row with one key).
    def seed():
        return rng.randrange(2**31)

    short, long, heads = rng.randint(2, 8), rng.randint(17, 20), rng.randint(2, 4)
    return [
        {"seed": seed(), "shape": [short, short], "dtype": "float32"},
        {"seed": seed(), "shape": [rng.randint(2, 4), long, long], "dtype": "float64"},
        {"seed": seed(), "shape": [rng.randint(1, 3), heads, short, short], "dtype": "float32"},
        {"seed": seed(), "shape": [rng.randint(1, 3), 1, 1], "dtype": "float32"},
    ]


def weights_cases_device(rng):
    # Scores on the meta device (a GPU stands in for it where there is one): a mask made without device= stays
    # on the CPU and cannot meet them.
    num_tokens = rng.randint(3, 9)
    return [{"seed": rng.randrange(2**31), "shape": [rng.randint(1, 3), rng.randint(2, 4), num_tokens, num_tokens],
             "dtype": "float32", "device": "auto"}]












def judge_on_device(data, case):
    device = data["device"]
    error = data.get("failure")
    if error is not None:
        named = "tensor_created_on_cpu" if "device" in error["message"] else None
        return Verdict(False, "causal_weights.device_failed", {"device": device, "type": error["type"],
                                                               "detail": error["message"][:160]}, misconception=named)
    if data["mixed"]:
        return Verdict(False, "causal_weights.tensor_on_cpu", {"device": device, "op": data["mixed"][0]},
                       misconception="tensor_created_on_cpu")
    if tuple(data["shape"]) != tuple(case["shape"]) or data["output_device"] != device:
        return Verdict(False, "causal_weights.device_output", {"device": device})
    if data["dtype"] != case["dtype"]:
        return Verdict(False, "causal_weights.dtype", {"got_dtype": data["dtype"], "expected_dtype": case["dtype"]})
    return Verdict(True)


def keep_for(kind, like):
    """1 where a way of writing the mask lets a query see a key (the tril matrix of the notes), as `like`'s dtype."""
    return (~mask_for(kind, like.shape[-1])).to(like.dtype)


def renormalise_mistakes(attn_weights):
    """(misconception, wrong weights) pairs for the multiply-and-renormalise route."""
    def renormalised(kind):
        masked = attn_weights * keep_for(kind, attn_weights)
        return masked / masked.sum(dim=-1, keepdim=True)

    masked = attn_weights * keep_for("future", attn_weights)
    mistakes = [
        ("mask_after_softmax_no_renorm", masked),
        ("mask_includes_diagonal", renormalised("with_diagonal")),
        ("mask_inverted", renormalised("inverted")),
    ]
    with contextlib.suppress(RuntimeError):  # (b, T, T) / (b, T) only broadcasts for some shapes
        mistakes.append(("missing_keepdim", masked / masked.sum(dim=-1)))
    return mistakes


def neg_inf_mistakes(attn_scores):
    """(misconception, wrong weights) pairs for the fill-with-minus-infinity route."""
    def filled(kind):
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


def judge_renormalised(data, case):
    attn_weights = weights_input(case)
    expected = solutions.causal_weights_renormalised(attn_weights)
    return judge_causal_weights(data["weights"], expected, lambda: renormalise_mistakes(attn_weights))


def judge_neg_inf(data, case):
    attn_scores = scores_input(case)
    expected = solutions.causal_weights_neg_inf(attn_scores)
    return judge_causal_weights(data["weights"], expected, lambda: neg_inf_mistakes(attn_scores))


def judge_causal_weights(got, expected, mistakes_of):
    """Same weights as the reference, exact zeros above the diagonal, the same dtype; else the first broken property."""
    shown = {"expected": expected, "got": got, "input_shape": tuple(expected.shape)}
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       **shown)
    problem = causal_weights_problem(got, expected, mask_for("future", expected.shape[-1]))
    if problem is None:
        return dtype_verdict("causal_weights", got, expected.dtype)
    key, fields = problem
    return Verdict(False, key, fields, misconception=diagnose(got, expected, mistakes_of()), heatmap=True, **shown)


# ---------------------------------------------------------------------------------------------
# CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False): shared helpers

def attention_case(rng, *, num_tokens, batch, qkv_bias=False, dtype="float32"):
    """A hidden case: d_in != d_out, head_dim = d_out >= 2, num_tokens < context_length (the mask must be sliced).

    num_tokens and context_length are keys of their own: diagnosis.explain_error reads them to name an unsliced mask.
    """
    d_in = rng.randint(2, 6)
    d_out = rng.choice([d for d in range(2, 8) if d != d_in])
    return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "batch": batch,
            "num_tokens": num_tokens, "context_length": num_tokens + rng.randint(1, 6),
            "d_in": d_in, "d_out": d_out, "qkv_bias": qkv_bias, "dtype": dtype}


def notes_case():
    return {"input": "notes", "batch": 2, "num_tokens": 6, "context_length": 6,
            "d_in": len(notes_inputs()[0]), "d_out": NOTES_D_OUT, "qkv_bias": False, "dtype": "float32"}










def judging_transpose_crash(judge):
    def judge_after_transpose_crash(data, case):
        if data.get("transpose_crash"):
            return Verdict(False, "causal_attention.transpose_batched", misconception="transpose_batched")
        return judge(data, case)

    return judge_after_transpose_crash


# ---------------------------------------------------------------------------------------------
# CausalAttention: output on the notes' batch and on random shapes


def attention_cases_random(rng):
    # A mid-sized batch first: an unsliced mask crashes here with a message that names it. Then long
    # sequences in float64 with biases; then a single token (a crash for an unsliced mask, too).
    return [
        attention_case(rng, num_tokens=rng.randint(3, 8), batch=rng.randint(2, 3)),
        attention_case(rng, num_tokens=rng.randint(17, 22), batch=rng.randint(1, 2), qkv_bias=True, dtype="float64"),
        attention_case(rng, num_tokens=1, batch=rng.randint(1, 3), qkv_bias=rng.random() < 0.5),
    ]


def attention_cases_notes(rng):
    return [notes_case()]




@judging_transpose_crash
def judge_forward(data, case):
    if data["forbidden"]:
        return Verdict(False, "causal_attention.builtin", {"names": ", ".join(data["forbidden"])})
    x, got, weights = attention_input(case), data["output"], data["state"]
    expected = attention(x, weights)
    if same(got, expected):
        return dtype_verdict("causal_weights", got, expected.dtype)
    variants = attention_variants(x, weights)
    verdict = compare(got, expected, message_key="causal_attention.wrong_output", variants=variants,
                      input_shape=tuple(x.shape))
    if verdict.misconception is None and data["transpose_batched"]:
        verdict.misconception = "transpose_batched"
    return verdict


CHECKS = (
    Check("causal_mask.notes", "causal_mask", 2, False, mask_cases_notes, probe_causal_mask, judge_causal_mask),
    Check("causal_mask.sizes", "causal_mask", 4, True, mask_cases_sizes, probe_causal_mask, judge_causal_mask),
    Check("masking_routes.renormalise_notes", "masking_routes", 1, False, weights_cases_notes, probe_renormalised,
          judge_renormalised),
    Check("masking_routes.renormalise_random", "masking_routes", 2.5, True, weights_cases_random,
          probe_renormalised, judge_renormalised),
    Check("masking_routes.renormalise_device", "masking_routes", 0.5, True, weights_cases_device,
          partial(probe_on_device, "causal_weights_renormalised", "weights"), judge_on_device),
    Check("masking_routes.neg_inf_notes", "masking_routes", 1, False, weights_cases_notes, probe_neg_inf,
          judge_neg_inf),
    Check("masking_routes.neg_inf_random", "masking_routes", 2.5, True, weights_cases_random, probe_neg_inf,
          judge_neg_inf),
    Check("masking_routes.neg_inf_device", "masking_routes", 0.5, True, weights_cases_device,
          partial(probe_on_device, "causal_weights_neg_inf", "scores"), judge_on_device),
    # With the module contract's structure, modes, device and properties (autograder.course.checks.contract): 11 points.
    Check("causal_attention.notes", "causal_attention", 2, False, attention_cases_notes, probe_forward,
          judge_forward),
    Check("causal_attention.random", "causal_attention", 3, True, attention_cases_random, probe_forward,
          judge_forward),
)


MESSAGES = {
    "causal_mask.notes.title": {
        "en": "causal_mask(6) blocks exactly the future tokens",
        "zh": "causal_mask(6) 恰好遮住所有未来 token",
    },
    "causal_mask.sizes.title": {
        "en": "causal_mask is right for other sizes (1 token up to long sequences)",
        "zh": "causal_mask 在其他长度上也正确（从 1 个 token 到长序列）",
    },
    "mask.lets_see": {
        "en": "your mask lets token {query} see token {key}, which comes later",
        "zh": "你的掩码让 token {query} 看到了在它之后的 token {key}",
    },
    "mask.hides": {
        "en": "your mask hides token {key} from token {query}, although token {query} may see it",
        "zh": "你的掩码对 token {query} 遮住了 token {key}，但 token {query} 应当能看到它",
    },
    "mask.dtype": {
        "en": "the mask must be a bool tensor (True = hidden), got {dtype}; try .bool()",
        "zh": "掩码必须是 bool 张量（True 表示遮住），实际是 {dtype}；可以用 .bool()",
    },
    # The two masking routes
    "masking_routes.renormalise_notes.title": {
        "en": "causal_weights_renormalised: the notes' attention weights (SelfAttention_v2, seed 789), masked and "
        "renormalised",
        "zh": "causal_weights_renormalised：笔记中的注意力权重（SelfAttention_v2，种子 789）遮蔽后重新归一化",
    },
    "masking_routes.renormalise_random.title": {
        "en": "causal_weights_renormalised: masking and renormalising works for other sizes, batches and float64",
        "zh": "causal_weights_renormalised：遮蔽并重新归一化在其他长度、带 batch 维和 float64 输入上也正确",
    },
    "masking_routes.neg_inf_notes.title": {
        "en": "causal_weights_neg_inf: the notes' attention scores (SelfAttention_v2, seed 789), filled with -inf, "
        "then softmax",
        "zh": "causal_weights_neg_inf：笔记中的注意力分数（SelfAttention_v2，种子 789）填充 -inf 后做 softmax",
    },
    "masking_routes.neg_inf_random.title": {
        "en": "causal_weights_neg_inf: filling with -inf before the softmax works for other sizes, batches and float64",
        "zh": "causal_weights_neg_inf：softmax 之前填充 -inf 在其他长度、带 batch 维和 float64 输入上也正确",
    },
    "masking_routes.renormalise_device.title": {
        "en": "causal_weights_renormalised works on scores on another device (a GPU, or PyTorch's meta device)",
        "zh": "causal_weights_renormalised 能处理位于其他设备上的输入（GPU，或 PyTorch 的 meta 设备）",
    },
    "masking_routes.neg_inf_device.title": {
        "en": "causal_weights_neg_inf works on scores on another device (a GPU, or PyTorch's meta device)",
        "zh": "causal_weights_neg_inf 能处理位于其他设备上的输入（GPU，或 PyTorch 的 meta 设备）",
    },
    "causal_weights.device_failed": {
        "en": "on an input on {device} it fails ({type}: {detail}): a tensor made inside without device= stays on the "
              "CPU; create it with device=x.device",
        "zh": "输入位于 {device} 时它失败了（{type}：{detail}）：在函数内部新建且没有指定 device= 的张量留在 CPU 上；"
              "请用 device=x.device 创建",
    },
    "causal_weights.tensor_on_cpu": {
        "en": "on an input on {device} it still combines a tensor on the CPU with it ({op}): create the mask with "
              "device=x.device",
        "zh": "输入位于 {device} 时，它仍把 CPU 上的张量与输入一起运算（{op}）：请用 device=x.device 创建掩码",
    },
    "causal_weights.device_output": {
        "en": "on an input on {device} the result has the wrong shape or is not on {device}",
        "zh": "输入位于 {device} 时，结果的形状不对或者不在 {device} 上",
    },
    "causal_weights.nan": {
        "en": "the weights of token {query} are nan: every key of that row was hidden "
        "(0/0, or a softmax over nothing but -inf)",
        "zh": "token {query} 的权重是 nan：这一行的所有 key 都被遮住了（0/0，或者对全是 -inf 的一行做 softmax）",
    },
    "causal_weights.future": {
        "en": "token {query} gives weight to token {key}, which comes later: weights above the diagonal must be "
        "exactly 0",
        "zh": "token {query} 给了在它之后的 token {key} 权重：对角线上方的权重必须恰好为 0",
    },
    "causal_weights.row_sum": {
        "en": "the weights of token {query} do not sum to 1: each query's weights over the keys (the last "
        "dimension) must sum to 1 after masking",
        "zh": "token {query} 的权重之和不是 1：遮蔽之后，每个查询对所有 key（最后一个维度）的权重之和必须为 1",
    },
    "causal_weights.values": {
        "en": "the weights are causal and each row sums to 1, but they differ from the expected ones "
        "(first at query {query}, key {key})",
        "zh": "权重满足因果性且每行之和为 1，但与期望值不同（最先出现在查询 {query}、key {key}）",
    },
    "causal_weights.dtype": {
        "en": "the result has dtype {got_dtype}, expected {expected_dtype}: keep the input's dtype",
        "zh": "结果的 dtype 是 {got_dtype}，期望 {expected_dtype}：请保持输入的 dtype",
    },
    # CausalAttention
    "causal_attention.notes.title": {
        "en": "CausalAttention(3, 2, 6, 0.0) on the notes' batch of two sentences (seed 123)",
        "zh": "CausalAttention(3, 2, 6, 0.0) 作用于笔记中由两句话组成的 batch（种子 123）",
    },
    "causal_attention.random.title": {
        "en": "CausalAttention matches the reference on other shapes (batches, 1 to 20+ tokens, biases, float64)",
        "zh": "CausalAttention 在其他形状上与参考实现一致（不同 batch、1 到 20 多个 token、偏置、float64）",
    },
    "causal_attention.missing_layer": {
        "en": "the module has no nn.Linear called {name}: keep the layers of the given __init__",
        "zh": "模块中没有名为 {name} 的 nn.Linear：请保留给定 __init__ 中的各层",
    },
    "causal_attention.builtin": {
        "en": "the forward pass calls {names}: write the attention yourself",
        "zh": "前向传播调用了 {names}：请自己实现注意力计算",
    },
    "causal_attention.transpose_batched": {
        "en": "`.T` on the batched keys reverses all three axes, so the shapes no longer fit",
        "zh": "对带 batch 维的 keys 使用 `.T` 会反转全部三个维度，形状因此对不上",
    },
    "causal_attention.wrong_output": {
        "en": "the context vectors differ from the reference run with your own weights",
        "zh": "上下文向量与使用你自己的权重运行的参考实现不一致",
    },
}
