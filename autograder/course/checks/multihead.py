"""Checks for notebook 04: stacked heads, splitting and merging heads, MultiHeadAttention (the book's
forward, then the padding mask as an exercise of its own), our weights inside nn.MultiheadAttention,
and counting parameters (book exercise 3.3).

Probes build the student's modules under a fixed seed (without disturbing the notebook's own
RNG state) and return outputs plus `state_of(module)`; judges rerun the reference
(`variants.attention`, `solutions`) with the student's own weights, so the order in which the
student created layers never matters.
"""


import torch

import solutions
from autograder.checking.check_types import Check, Exercise, Verdict
from autograder.checking.compare import compare, diagnose, same
from autograder.checking.judging import (
    PADDING_MISCONCEPTIONS,
    copied_weights_problem,
    first_wrong_head,
    informative_queries,
    wrapper_structure_problem,
)
from autograder.course.checks import variants
from autograder.course.checks.helpers import DTYPES, PROJECTIONS, dtype_verdict
from autograder.course.probes.multihead import (
    MHA_LAYERS,
    attention_input,
    equivalence_input,
    equivalence_weights,
    merge_input,
    padding_mask,
    probe_count,
    probe_equivalence,
    probe_merge,
    probe_mha,
    probe_mha_heads,
    probe_split,
    probe_wrapper,
    round_trip_source,
    split_input,
)

NOTEBOOK = "04_multi_head_attention"

# The exercises these checks grade, in course order. An exercise's points are the sum of its checks' points
# (autograder.course.exercises adds them up); its graded cell in the notebook must give the same number.
EXERCISES = (
    Exercise("mha_wrapper", NOTEBOOK, ("MultiHeadAttentionWrapper",),
             {"en": "MultiHeadAttentionWrapper", "zh": "MultiHeadAttentionWrapper（堆叠多个单头）"}),
    Exercise("split_heads", NOTEBOOK, ("split_heads",),
             {"en": "Splitting into heads", "zh": "拆分注意力头"}),
    Exercise("merge_heads", NOTEBOOK, ("merge_heads",),
             {"en": "Merging the heads", "zh": "合并注意力头"}),
    # The book's forward(x) earns all of multi_head_attention; the padding step (from the notes, not the
    # book) is graded on its own, in the same forward.
    Exercise("multi_head_attention", NOTEBOOK, ("MultiHeadAttention",),
             {"en": "MultiHeadAttention.forward", "zh": "MultiHeadAttention.forward"}),
    Exercise("padding_mask", NOTEBOOK, ("MultiHeadAttention",),
             {"en": "Padding mask in MultiHeadAttention.forward",
              "zh": "MultiHeadAttention.forward 中的 padding 掩码"}),
    Exercise("torch_equivalence", NOTEBOOK, ("to_torch_multihead",),
             {"en": "Our weights inside nn.MultiheadAttention", "zh": "把我们的权重放进 nn.MultiheadAttention"}),
    Exercise("parameter_counts", NOTEBOOK, ("count_parameters",),
             {"en": "Book exercise 3.3: counting parameters", "zh": "书中练习 3.3：统计参数量"}),
)



# The notes' experiment: torch.manual_seed(123); d_in, d_out = 3, 2; context_length = 6; num_heads = 2.
NOTES_ATTENTION_CASE = {
    "input": "notes",
    "seed": 123,
    "batch": 2,
    "num_tokens": 6,
    "context_length": 6,
    "d_in": 3,
    "d_out": 2,
    "num_heads": 2,
    "qkv_bias": False,
    "dtype": "float32",
}


# ---------------------------------------------------------------------------------------------
# Shared helpers (plain torch: probes use them too)






def random_attention_case(rng, *, num_heads=None, num_tokens=None, batch=None, dtype=None, qkv_bias=None):
    """A hidden attention case: head_dim >= 2 (1 would hide a missing scale), d_in != d_out, num_tokens < context."""
    num_heads = num_heads or rng.randint(2, 4)
    head_dim = rng.randint(2, 5)
    d_out = num_heads * head_dim
    num_tokens = num_tokens or rng.randint(4, 10)
    return {
        "seed": rng.randrange(2**31 - 100),
        "batch": batch or rng.randint(1, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(1, 5),
        # d_in differs from d_out and head_dim, so each wrong scale gives its own output.
        "d_in": rng.choice([d for d in range(2, 10) if d not in (d_out, head_dim)]),
        "d_out": d_out,
        "num_heads": num_heads,
        "qkv_bias": (rng.random() < 0.5) if qkv_bias is None else qkv_bias,
        "dtype": dtype or rng.choice(tuple(DTYPES)),
    }


def projection_weights(state, prefix=""):
    """The W_query/W_key/W_value/out_proj tensors under `prefix`, named as variants.attention expects."""
    names = (f"{layer}.{kind}" for layer in MHA_LAYERS for kind in ("weight", "bias"))
    return {name: state[prefix + name] for name in names if prefix + name in state}


def missing_layers(weights, layers):
    return [layer for layer in layers if f"{layer}.weight" not in weights]


# ---------------------------------------------------------------------------------------------
# mha_wrapper: MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)


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




def judge_wrapper(data, case):
    problem = wrapper_structure_problem(data, case, data.get("state", {}))
    if problem is not None:
        return problem
    x, got = attention_input(case), data["out"]
    heads = [variants.attention(x, projection_weights(data["state"], f"heads.{i}.")) for i in range(case["num_heads"])]
    expected = torch.cat(heads, dim=-1)
    if same(got, expected):
        return dtype_verdict("mha_wrapper", got, x.dtype)
    wrong_joins = [("heads_on_token_axis", torch.cat(heads, dim=dim)) for dim in (1, 0)]
    wrong_joins += [("heads_stacked", torch.stack(heads, dim=dim)) for dim in (-1, -2, 1, 0)]
    misconception = diagnose(got, expected, wrong_joins)
    if misconception is None:
        broken_head = first_wrong_head(data.get("head_outputs"), heads)
        if broken_head is not None:
            return Verdict(False, "mha_wrapper.head_wrong", {"head": broken_head + 1})
    verdict = compare(got, expected, message_key="mha_wrapper.values", input_shape=tuple(x.shape))
    verdict.misconception = misconception
    return verdict


# ---------------------------------------------------------------------------------------------
# split_heads(x, num_heads): (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim)


def split_cases_notes(rng):
    # arange inputs: the printed values show which feature went where.
    return [
        {"layout": "arange", "seed": 0, "batch": 2, "num_tokens": 6, "num_heads": 2, "head_dim": 2, "dtype": "float32"},
        {"layout": "arange", "seed": 0, "batch": 1, "num_tokens": 4, "num_heads": 3, "head_dim": 2, "dtype": "float32"},
    ]


def heads_case(rng, layout, *, num_heads=None, num_tokens=None, dtype=None):
    return {
        "layout": layout,
        "seed": rng.randrange(2**31 - 100),
        "batch": rng.randint(1, 3),
        "num_tokens": num_tokens or rng.randint(2, 9),
        "num_heads": num_heads or rng.randint(2, 4),
        "head_dim": rng.randint(2, 5),
        "dtype": dtype or rng.choice(tuple(DTYPES)),
    }


def split_cases_shapes(rng):
    return [
        heads_case(rng, "random", dtype="float64"),
        heads_case(rng, "random", num_tokens=1),
        heads_case(rng, "random", num_heads=1),
        heads_case(rng, "random", num_tokens=rng.randint(17, 30)),
    ]


def split_cases_strided(rng):
    # Views of other tensors, as a real forward pass hands them over: their memory is not contiguous.
    return [heads_case(rng, layout, dtype="float64") for layout in ("transposed", "sliced", "expanded")]






def judge_split(data, case):
    if not data["input_kept"]:
        return Verdict(False, "split_heads.input_modified")
    x, got = split_input(case), data["out"]
    expected = solutions.split_heads(x, case["num_heads"])
    if same(got, expected):
        return dtype_verdict("split_heads", got, x.dtype)
    wrong = {"split_without_transpose": variants.split(x, case["num_heads"], "view_only")}
    return compare(got, expected, message_key="split_heads.values", variants=wrong, input_shape=tuple(x.shape))


# ---------------------------------------------------------------------------------------------
# merge_heads(x): (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, num_heads * head_dim)


def merge_cases_notes(rng):
    return [
        {"layout": "arange", "seed": 0, "batch": 1, "num_tokens": 3, "num_heads": 2, "head_dim": 2, "dtype": "float32"},
        {"layout": "attention", "seed": 123, "batch": 2, "num_tokens": 6, "num_heads": 2, "head_dim": 2,
         "dtype": "float32"},
    ]


def merge_cases_shapes(rng):
    return [
        heads_case(rng, "attention", dtype="float64"),
        heads_case(rng, "attention", num_tokens=1),
        heads_case(rng, "attention", num_heads=1),
        heads_case(rng, "attention", num_tokens=rng.randint(17, 30)),
    ]


def merge_cases_round_trip(rng):
    return [
        heads_case(rng, "split", dtype="float64"),
        heads_case(rng, "split", num_tokens=rng.randint(17, 30)),
        heads_case(rng, "strided", dtype="float64"),
    ]








def judge_merge(data, case):
    if not data["input_kept"]:
        return Verdict(False, "merge_heads.input_modified")
    x, got = merge_input(case), data["out"]
    expected = round_trip_source(case) if case["layout"] == "split" else solutions.merge_heads(x)
    if same(got, expected):
        return dtype_verdict("merge_heads", got, x.dtype)
    wrong = [
        ("merge_without_transpose", variants.merge(x, "no_transpose")),
        ("heads_on_token_axis", variants.merge(x, "token_axis")),
        ("heads_on_token_axis", torch.cat(x.unbind(1), dim=0)),  # the notes' torch.cat([o_head1, o_head2], dim=0)
    ]
    key = "merge_heads.round_trip" if case["layout"] == "split" else "merge_heads.values"
    verdict = compare(got, expected, message_key=key, input_shape=tuple(x.shape))
    verdict.misconception = diagnose(got, expected, wrong)
    return verdict


# ---------------------------------------------------------------------------------------------
# multi_head_attention: MultiHeadAttention.forward(x), the book's forward (no attention_mask passed)
# padding_mask: the same forward called with attention_mask (b, num_tokens); same probe and judge


def mha_cases_notes(rng):
    return [dict(NOTES_ATTENTION_CASE)]


def padding_cases_example(rng):
    # The notebook's example: the second sequence starts with two padding tokens, so its first two
    # queries see nothing but padding.
    return [{**NOTES_ATTENTION_CASE, "attention_mask": [[1] * 6, [0, 0, 1, 1, 1, 1]]}]


def mha_cases_reference(rng):
    return [
        random_attention_case(rng, dtype="float64"),
        random_attention_case(rng, num_heads=rng.randint(5, 6), num_tokens=rng.randint(17, 24), dtype="float32"),
        random_attention_case(rng, num_heads=1),
        random_attention_case(rng, num_tokens=1),
    ]


def padding_cases_hidden(rng):
    right = random_attention_case(rng, batch=3, dtype="float64")
    num_tokens = right["num_tokens"]
    right["attention_mask"] = [[1] * num_tokens] + [
        [1] * length + [0] * (num_tokens - length) for length in (rng.randint(1, num_tokens - 1) for _ in range(2))
    ]
    # Left padding: the first queries see nothing but padding (uniform weights, never NaN).
    left = random_attention_case(rng, batch=2, dtype="float64")
    num_tokens, padded = left["num_tokens"], rng.randint(2, left["num_tokens"] - 1)
    left["attention_mask"] = [[0] * padded + [1] * (num_tokens - padded), [1] * num_tokens]
    scattered = random_attention_case(rng, batch=2, num_tokens=rng.randint(17, 24), dtype="float32")
    scattered["attention_mask"] = [[int(rng.random() < 0.7) for _ in range(scattered["num_tokens"])] for _ in range(2)]
    return [right, left, scattered]








def judge_mha(data, case):
    weights = projection_weights(data["state"])
    missing = missing_layers(weights, MHA_LAYERS)
    if missing:
        return Verdict(False, "multi_head_attention.missing_layers", {"names": ", ".join(missing)})
    if not data["input_kept"]:
        return Verdict(False, "multi_head_attention.input_modified")
    x, mask, got = attention_input(case), padding_mask(case), data["out"]
    knobs = {"num_heads": case["num_heads"], "attention_mask": mask}
    expected = variants.attention(x, weights, **knobs)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return compare(got, expected, message_key="multi_head_attention.values", input_shape=tuple(x.shape))
    # A query whose visible keys are all padding carries no information: any finite output is right for it (the
    # fill value and the order of the fills decide what it gets). Every other query is compared.
    shown = informative_queries(mask, got)
    if same(got[shown], expected[shown]):
        if torch.isfinite(got[~shown]).all():
            return dtype_verdict("multi_head_attention", got, x.dtype)
        return Verdict(False, "padding_mask.nan_blind_rows", misconception="padding_neg_inf")
    candidates = variants.attention_variants(x, weights, **knobs)
    wrong = [(misconception, output[shown]) for misconception, output in candidates if output.shape == got.shape]
    verdict = compare(got[shown], expected[shown], message_key="multi_head_attention.values",
                      input_shape=tuple(x.shape), variants=wrong)
    if verdict.misconception is None and mask is not None:
        verdict.message_key = padding_diagnosis(got, x, weights, case)
        verdict.misconception = PADDING_MISCONCEPTIONS.get(verdict.message_key)
    return verdict


def padding_diagnosis(got, x, weights, case):
    """The message for a wrong output under a padding mask, judged on the queries that see a real token."""
    mask, num_heads = padding_mask(case), case["num_heads"]
    shown = informative_queries(mask, got)
    if torch.isnan(got[shown]).any():
        return "padding_mask.nan"
    if same(got[shown], variants.attention(x, weights, num_heads=num_heads)[shown]):
        return "padding_mask.ignored"
    if same(got[shown], variants.attention(x, weights, num_heads=num_heads, attention_mask=1 - mask)[shown]):
        return "padding_mask.inverted"
    return "multi_head_attention.values"


# Heads: independent until out_proj, and computed in one batched computation (the module contract checks causality,
# gradients, dropout and the buffer of MultiHeadAttention as of every module exercise).


def mha_cases_heads(rng):
    heads = random_attention_case(rng, num_tokens=rng.randint(3, 8))
    heads.update(kind="heads", head=rng.randrange(heads["num_heads"]))
    # Same d_out, 2 heads then 8: one batched computation dispatches as many matmuls for both.
    d_out = rng.choice((16, 24))
    vectorised = {
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




def judge_head_independence(data, case):
    before, after = data["before"], data["after"]
    expected_shape = (case["batch"], case["num_tokens"], case["d_out"])
    if tuple(after.shape) != expected_shape or tuple(before.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(after.shape), "expected_shape": expected_shape})
    head_dim = case["d_out"] // case["num_heads"]
    for head in range(case["num_heads"]):
        columns = slice(head * head_dim, (head + 1) * head_dim)
        unchanged = same(after[..., columns], before[..., columns])
        if head == case["head"] and unchanged:
            return Verdict(False, "multi_head_attention.head_unchanged")
        if head != case["head"] and not unchanged:
            return Verdict(False, "multi_head_attention.heads_mixed")
    return Verdict(True)






def judge_vectorised(data, case):
    if data["builtins"]:
        return Verdict(False, "multi_head_attention.builtin", {"names": ", ".join(data["builtins"])})
    few_heads, many_heads = data["matmuls"]
    if many_heads > few_heads:
        return Verdict(False, "multi_head_attention.loop", {"few": case["num_heads"], "many": case["more_heads"]},
                       misconception="loop_over_heads")
    return Verdict(True)


HEADS_JUDGES = {"heads": judge_head_independence, "vectorised": judge_vectorised}




def judge_mha_heads(data, case):
    return HEADS_JUDGES[case["kind"]](data, case)


# ---------------------------------------------------------------------------------------------
# torch_equivalence: to_torch_multihead(mha) -> nn.MultiheadAttention holding our weights


def equivalence_cases_notes(rng):
    return [{"seed": 123, "batch": 2, "num_tokens": 6, "context_length": 6, "d_model": 4, "num_heads": 2,
             "qkv_bias": False, "dropout": 0.0, "dtype": "float32"}]


def equivalence_case(rng, *, num_heads, num_tokens, qkv_bias, dropout, dtype):
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


def equivalence_cases_shapes(rng):
    mismatched = equivalence_case(rng, num_heads=2, num_tokens=4, qkv_bias=False, dropout=0.0, dtype="float32")
    mismatched["d_in"] = mismatched["d_model"] + rng.randint(1, 3)  # nn.MultiheadAttention cannot take it
    narrower = equivalence_case(rng, num_heads=2, num_tokens=4, qkv_bias=True, dropout=0.0, dtype="float32")
    narrower["d_in"] = narrower["d_model"] - 1  # refused too: either way d_in != d_out
    # One feature and one head: the smallest module there is.
    smallest = dict(equivalence_case(rng, num_heads=1, num_tokens=3, qkv_bias=False, dropout=0.0, dtype="float64"),
                    d_model=1)
    # GPT-2 small's sizes, d_in and d_out computed apart as a model's config does: sizes are compared by value.
    heads, head_dim = 12, 64
    gpt2 = dict(equivalence_case(rng, num_heads=heads, num_tokens=4, qkv_bias=False, dropout=0.0, dtype="float32"),
                d_model=heads * head_dim, d_in=head_dim * heads, batch=1)
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
        gpt2,
    ]












def judge_equivalence(data, case):
    if "raised" in data:
        if data["raised"] == "ValueError":
            return Verdict(True)
        return Verdict(False, "torch_equivalence.no_value_error", {"got": data["raised"] or "nothing"})
    if not data["batch_first"]:
        return Verdict(False, "torch_equivalence.batch_first")
    if (data["embed_dim"], data["num_heads"]) != (case["d_model"], case["num_heads"]):
        sizes = {"embed_dim": data["embed_dim"], "num_heads": data["num_heads"], "d_out": case["d_model"],
                 "heads": case["num_heads"]}
        return Verdict(False, "torch_equivalence.sizes", sizes)
    if data["dtype"] != str(DTYPES[case["dtype"]]):
        return Verdict(False, "torch_equivalence.dtype", {"got": data["dtype"], "expected": str(DTYPES[case["dtype"]])})
    weights = equivalence_weights(case)
    problem = copied_weights_problem(data["state"], weights)
    if problem is not None:
        return problem
    if abs(data["dropout"] - case["dropout"]) > 1e-9:
        return Verdict(False, "torch_equivalence.dropout")
    x = equivalence_input(case)
    expected = variants.attention(x, weights, num_heads=case["num_heads"])
    return compare(data.get("out"), expected, message_key="torch_equivalence.values", input_shape=tuple(x.shape))


# ---------------------------------------------------------------------------------------------
# parameter_counts: count_parameters(module), trainable parameters only


def mha_block(d_in, d_out, context_length, qkv_bias, frozen=()):
    """Spec of a MultiHeadAttention-shaped block: [name, in, out, bias, trainable] per Linear, mask side."""
    linears = [[name, d_in, d_out, qkv_bias, name not in frozen] for name in PROJECTIONS]
    linears.append(["out_proj", d_out, d_out, True, "out_proj" not in frozen])
    return {"linears": linears, "mask": context_length}


def causal_block(d_in, d_out, context_length, qkv_bias):
    """Spec of a CausalAttention-shaped block (no out_proj)."""
    return {"linears": [[name, d_in, d_out, qkv_bias, True] for name in PROJECTIONS], "mask": context_length}


def count_cases_notes(rng):
    return [
        {"blocks": [mha_block(768, 768, 1024, False)]},  # exercise 3.3: GPT-2's 12 heads, 768 features
        {"blocks": [mha_block(3, 2, 6, False)]},  # the notes' MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    ]


def count_cases_modules(rng):
    d_in, d_out = rng.randint(8, 96), 4 * rng.randint(2, 24)
    num_heads = rng.randint(2, 4)
    return [
        {"blocks": [mha_block(d_in, d_out, rng.randint(64, 512), True)]},
        # MultiHeadAttentionWrapper-shaped: heads in an nn.ModuleList, a mask buffer in each.
        {"blocks": [causal_block(d_in, d_out, rng.randint(16, 128), False)] * num_heads, "container": "heads"},
        # Frozen projections (requires_grad=False) are parameters, but not trainable ones.
        {"blocks": [mha_block(d_in, d_out, rng.randint(16, 128), rng.random() < 0.5, frozen=("W_query", "W_key"))]},
    ]




def parameter_totals(case):
    """(trainable, frozen, buffer) element counts of the case's module, from its spec alone."""
    trainable = frozen = buffers = 0
    for spec in case["blocks"]:
        for _, d_in, d_out, bias, is_trainable in spec["linears"]:
            size = d_in * d_out + (d_out if bias else 0)
            trainable, frozen = (trainable + size, frozen) if is_trainable else (trainable, frozen + size)
        buffers += spec["mask"] ** 2
    return trainable, frozen, buffers


def judge_count(data, case):
    got = data["count"]
    trainable, frozen, buffers = parameter_totals(case)
    if got == trainable:
        return Verdict(True)
    wrong_counts = (
        ("counts_buffers", trainable + buffers),
        ("counts_frozen", trainable + frozen),
        ("counts_buffers", trainable + frozen + buffers),  # everything in state_dict()
    )
    misconception = next((m for m, count in wrong_counts if count != trainable and count == got), None)
    return Verdict(False, "parameter_counts.wrong", {"got": got, "expected": trainable}, misconception=misconception)


CHECKS = (
    # mha_wrapper and multi_head_attention: with the module contract (autograder.course.checks.contract),
    # 5 and 9 points.
    Check("mha_wrapper.notes", "mha_wrapper", 1, False, wrapper_cases_notes, probe_wrapper, judge_wrapper),
    Check("mha_wrapper.shapes", "mha_wrapper", 1.5, True, wrapper_cases_shapes, probe_wrapper, judge_wrapper),
    Check("split_heads.notes", "split_heads", 2, False, split_cases_notes, probe_split, judge_split),
    Check("split_heads.shapes", "split_heads", 2, True, split_cases_shapes, probe_split, judge_split),
    Check("split_heads.strided", "split_heads", 1, True, split_cases_strided, probe_split, judge_split),
    Check("merge_heads.notes", "merge_heads", 2, False, merge_cases_notes, probe_merge, judge_merge),
    Check("merge_heads.shapes", "merge_heads", 2, True, merge_cases_shapes, probe_merge, judge_merge),
    Check("merge_heads.round_trip", "merge_heads", 1, True, merge_cases_round_trip, probe_merge, judge_merge),
    Check("multi_head_attention.notes", "multi_head_attention", 1.5, False, mha_cases_notes, probe_mha, judge_mha),
    Check("multi_head_attention.reference", "multi_head_attention", 2.5, True, mha_cases_reference, probe_mha,
          judge_mha),
    Check("multi_head_attention.heads", "multi_head_attention", 1, True, mha_cases_heads, probe_mha_heads,
          judge_mha_heads),
    Check("padding_mask.example", "padding_mask", 2, False, padding_cases_example, probe_mha, judge_mha),
    Check("padding_mask.hidden", "padding_mask", 3, True, padding_cases_hidden, probe_mha, judge_mha),
    Check("torch_equivalence.notes", "torch_equivalence", 2, False, equivalence_cases_notes, probe_equivalence,
          judge_equivalence),
    Check("torch_equivalence.shapes", "torch_equivalence", 4, True, equivalence_cases_shapes, probe_equivalence,
          judge_equivalence),
    Check("parameter_counts.notes", "parameter_counts", 2, False, count_cases_notes, probe_count, judge_count),
    Check("parameter_counts.modules", "parameter_counts", 2, True, count_cases_modules, probe_count, judge_count),
)


def _dtype_message(exercise_id):
    return {
        f"{exercise_id}.dtype": {
            "en": "the output is torch.{got_dtype} but the input was torch.{expected_dtype}: keep the input's dtype "
            "(no .float() or torch.tensor(...) copies)",
            "zh": "输出是 torch.{got_dtype}，而输入是 torch.{expected_dtype}：请保持输入的 dtype（不要用 .float() 或 "
                  "torch.tensor(...) 复制）",
        }
    }


MESSAGES = {
    **_dtype_message("mha_wrapper"),
    **_dtype_message("split_heads"),
    **_dtype_message("merge_heads"),
    **_dtype_message("multi_head_attention"),
    # mha_wrapper
    "mha_wrapper.notes.title": {
        "en": "MultiHeadAttentionWrapper on the notes' batch (seed 123, 2 heads): output (2, 6, 4)",
        "zh": "MultiHeadAttentionWrapper 作用于笔记中的 batch（种子 123，2 个头）：输出形状 (2, 6, 4)",
    },
    "mha_wrapper.shapes.title": {
        "en": "MultiHeadAttentionWrapper for other sizes, head counts, biases and float64",
        "zh": "MultiHeadAttentionWrapper 在其他尺寸、头数、偏置和 float64 下也正确",
    },
    "mha_wrapper.values": {
        "en": "the output is not your heads' outputs side by side: torch.cat([head(x) for head in self.heads], dim=-1)",
        "zh": "输出不是各个头的输出并排拼接的结果：torch.cat([head(x) for head in self.heads], dim=-1)",
    },
    "mha_wrapper.head_wrong": {
        "en": "head {head} (your CausalAttention) already gives a wrong output: fix CausalAttention first",
        "zh": "第 {head} 个头（你的 CausalAttention）的输出就已经不对了：请先修正 CausalAttention",
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
        "en": "head {head} has no {names}: each head must be a CausalAttention",
        "zh": "第 {head} 个头没有 {names}：每个头都应当是一个 CausalAttention",
    },
    "mha_wrapper.qkv_bias": {
        "en": "pass qkv_bias on to every CausalAttention head",
        "zh": "要把 qkv_bias 传给每一个 CausalAttention 头",
    },
    # split_heads
    "split_heads.notes.title": {
        "en": "split_heads: (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim) on small examples",
        "zh": "split_heads：在小例子上把 (b, num_tokens, d_out) 变成 (b, num_heads, num_tokens, head_dim)",
    },
    "split_heads.shapes.title": {
        "en": "split_heads for other shapes (one token, one head, long sequences, float64)",
        "zh": "split_heads 在其他形状下也正确（单个 token、单个头、长序列、float64）",
    },
    "split_heads.strided.title": {
        "en": "split_heads on non-contiguous inputs (views of transposed or sliced tensors)",
        "zh": "split_heads 处理非连续输入（转置或切片得到的视图）",
    },
    "split_heads.values": {
        "en": "some heads hold the wrong features: head h of token t must hold features "
        "h*head_dim ... (h+1)*head_dim - 1 of token t",
        "zh": "有些头拿到了错误的特征：token t 的第 h 个头应当是 token t 的第 h*head_dim 到 (h+1)*head_dim - 1 个特征",
    },
    "split_heads.input_modified": {
        "en": "split_heads changed its input in place; return a new view instead",
        "zh": "split_heads 原地修改了输入；请返回一个新的视图",
    },
    # merge_heads
    "merge_heads.notes.title": {
        "en": "merge_heads: (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, d_out) on small examples",
        "zh": "merge_heads：在小例子上把 (b, num_heads, num_tokens, head_dim) 变回 (b, num_tokens, d_out)",
    },
    "merge_heads.shapes.title": {
        "en": "merge_heads for other shapes (one token, one head, long sequences, float64)",
        "zh": "merge_heads 在其他形状下也正确（单个 token、单个头、长序列、float64）",
    },
    "merge_heads.round_trip.title": {
        "en": "merge_heads undoes split_heads, also on non-contiguous inputs",
        "zh": "merge_heads 能还原 split_heads 的结果，非连续输入也可以",
    },
    "merge_heads.values": {
        "en": "features land in the wrong place: token t's features h*head_dim ... (h+1)*head_dim - 1 "
        "must be head h's output for token t",
        "zh": "特征放错了位置：token t 的第 h*head_dim 到 (h+1)*head_dim - 1 个特征应当是第 h 个头对 token t 的输出",
    },
    "merge_heads.round_trip": {
        "en": "merge_heads(split_heads(x, num_heads)) does not give x back",
        "zh": "merge_heads(split_heads(x, num_heads)) 没有还原出 x",
    },
    "merge_heads.input_modified": {
        "en": "merge_heads changed its input in place (e.g. transpose_): use x.transpose(1, 2), which returns a view",
        "zh": "merge_heads 原地修改了输入（例如 transpose_）：请使用会返回视图的 x.transpose(1, 2)",
    },
    # multi_head_attention
    "multi_head_attention.notes.title": {
        "en": "MultiHeadAttention on the notes' batch (seed 123, d_out=2, 2 heads)",
        "zh": "MultiHeadAttention 作用于笔记中的 batch（种子 123，d_out=2，2 个头）",
    },
    "multi_head_attention.reference.title": {
        "en": "MultiHeadAttention matches the reference for other sizes, head counts and float64",
        "zh": "MultiHeadAttention 在其他尺寸、头数和 float64 下与参考实现一致",
    },
    "multi_head_attention.heads.title": {
        "en": "MultiHeadAttention: heads independent until out_proj, all of them in one batched computation",
        "zh": "MultiHeadAttention：在 out_proj 之前各头相互独立，并且所有的头在一次批量计算中完成",
    },
    "multi_head_attention.values": {
        "en": "the output differs from the reference forward pass run with your own weights",
        "zh": "输出与使用你自己的权重运行的参考前向传播结果不同",
    },
    "multi_head_attention.missing_layers": {
        "en": "the module has no {names}: keep the given __init__ (W_query, W_key, W_value, out_proj)",
        "zh": "模块中没有 {names}：请保留给定的 __init__（W_query、W_key、W_value、out_proj）",
    },
    "multi_head_attention.input_modified": {
        "en": "forward changed its input x in place",
        "zh": "forward 原地修改了输入 x",
    },
    "multi_head_attention.heads_mixed": {
        "en": "changing one head's query weights changed another head's output: heads must stay independent "
        "until out_proj",
        "zh": "改变一个头的查询权重却改变了另一个头的输出：在 out_proj 之前各个头必须相互独立",
    },
    "multi_head_attention.head_unchanged": {
        "en": "changing one head's query weights did not change that head's output",
        "zh": "改变一个头的查询权重并没有改变这个头的输出",
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
    "padding_mask.example.title": {
        "en": "MultiHeadAttention with attention_mask: the second sequence starts with 2 padding tokens (a query "
        "that sees nothing but padding only needs a finite output; filling padded keys with "
        "torch.finfo(dtype).min before the causal -inf gives it uniform weights over them)",
        "zh": "带 attention_mask 的 MultiHeadAttention：第二个序列开头有 2 个 padding token（只能看到 padding 的查询"
        "只需要有限的输出；在因果掩码填入 -inf 之前用 torch.finfo(dtype).min 填充 padding 位置，它就会在这些 key "
        "上得到均匀的权重）",
    },
    "padding_mask.hidden.title": {
        "en": "MultiHeadAttention with padding masks (right, left and scattered padding)",
        "zh": "MultiHeadAttention 处理各种 padding 掩码（右侧、左侧和分散的 padding）",
    },
    "padding_mask.no_argument": {
        "en": "forward takes no attention_mask yet: extend it to forward(self, x, attention_mask=None) and add the "
        "padding step (the multi_head_attention points do not depend on it)",
        "zh": "forward 还不接受 attention_mask：请把它扩展为 forward(self, x, attention_mask=None) "
        "并加上 padding 这一步（multi_head_attention 的分数与此无关）",
    },
    "padding_mask.nan": {
        "en": "the output contains NaN: look for a row of the scores that is entirely -inf before the softmax",
        "zh": "输出中有 NaN：检查 softmax 之前是否有一整行分数都是 -inf",
    },
    "padding_mask.nan_blind_rows": {
        "en": "NaN for queries that can see nothing but padding: their whole row of scores became -inf",
        "zh": "对于只能看到 padding 的查询，输出是 NaN：它们的整行分数都变成了 -inf",
    },
    "padding_mask.ignored": {
        "en": "attention_mask has no effect: padded keys must be hidden from every query",
        "zh": "attention_mask 没有起作用：padding 位置的 key 必须对所有查询都隐藏",
    },
    "padding_mask.inverted": {
        "en": "attention_mask is used the wrong way round: 1 marks a real token, 0 marks padding to hide",
        "zh": "attention_mask 的含义用反了：1 表示真实 token，0 表示要隐藏的 padding",
    },
    # torch_equivalence
    "torch_equivalence.notes.title": {
        "en": "to_torch_multihead: nn.MultiheadAttention with our weights gives our output (d_out=4, 2 heads)",
        "zh": "to_torch_multihead：装入我们权重的 nn.MultiheadAttention 给出相同的输出（d_out=4，2 个头）",
    },
    "torch_equivalence.shapes.title": {
        "en": "to_torch_multihead for other sizes, qkv biases, dropout settings and float64",
        "zh": "to_torch_multihead 在其他尺寸、qkv 偏置、dropout 设置和 float64 下也正确",
    },
    "torch_equivalence.not_multihead": {
        "en": "returned {got}, expected an nn.MultiheadAttention",
        "zh": "返回了 {got}，应当返回 nn.MultiheadAttention",
    },
    "torch_equivalence.no_value_error": {
        "en": "with d_in != d_out it must raise ValueError (nn.MultiheadAttention needs d_in == d_out); "
        "it raised {got}",
        "zh": "当 d_in != d_out 时必须抛出 ValueError（nn.MultiheadAttention 要求 d_in == d_out）；实际抛出 {got}",
    },
    "torch_equivalence.batch_first": {
        "en": "create it with batch_first=True: our inputs are (b, num_tokens, d_out)",
        "zh": "创建时要设置 batch_first=True：我们的输入形状是 (b, num_tokens, d_out)",
    },
    "torch_equivalence.sizes": {
        "en": "embed_dim={embed_dim}, num_heads={num_heads}, expected embed_dim={d_out} (mha.d_out) and "
        "num_heads={heads} (mha.num_heads)",
        "zh": "embed_dim={embed_dim}、num_heads={num_heads}，应当是 embed_dim={d_out}（mha.d_out）和 "
        "num_heads={heads}（mha.num_heads）",
    },
    "torch_equivalence.sizes.hidden": {
        "en": "embed_dim or num_heads is not mha.d_out or mha.num_heads",
        "zh": "embed_dim 或 num_heads 与 mha.d_out 或 mha.num_heads 不一致",
    },
    "torch_equivalence.dtype": {
        "en": "its weights are {got} but ours are {expected}: move it with .to(dtype=mha.W_query.weight.dtype)",
        "zh": "它的权重是 {got}，而我们的是 {expected}：请用 .to(dtype=mha.W_query.weight.dtype) 转换",
    },
    "torch_equivalence.no_in_proj": {
        "en": "in_proj_weight is missing: use one embed_dim for query, key and value (no kdim/vdim)",
        "zh": "缺少 in_proj_weight：query、key、value 要使用同一个 embed_dim（不要设置 kdim/vdim）",
    },
    "torch_equivalence.in_proj_order": {
        "en": "in_proj_weight stacks the three projections in the wrong order",
        "zh": "in_proj_weight 中三个投影矩阵的堆叠顺序不对",
    },
    "torch_equivalence.in_proj_transposed": {
        "en": "in_proj_weight holds the transposed matrices: nn.Linear's weight is already (out, in); copy it as is",
        "zh": "in_proj_weight 中放的是转置后的矩阵：nn.Linear 的 weight 本来就是 (out, in)，直接复制即可",
    },
    "torch_equivalence.in_proj_weight": {
        "en": "in_proj_weight does not hold W_query, W_key and W_value's weights",
        "zh": "in_proj_weight 中不是 W_query、W_key、W_value 的权重",
    },
    "torch_equivalence.no_bias": {
        "en": "create it with bias=True: out_proj has a bias, and the q/k/v biases are zero when qkv_bias=False",
        "zh": "创建时要设置 bias=True：out_proj 有偏置，qkv_bias=False 时 q/k/v 的偏置为零",
    },
    "torch_equivalence.in_proj_bias": {
        "en": "in_proj_bias is not the q, k, v biases stacked (zeros where a projection has no bias)",
        "zh": "in_proj_bias 不是 q、k、v 偏置的堆叠（没有偏置的投影对应零）",
    },
    "torch_equivalence.out_proj": {
        "en": "out_proj's weight or bias was not copied from mha.out_proj",
        "zh": "out_proj 的 weight 或 bias 没有从 mha.out_proj 复制过来",
    },
    "torch_equivalence.dropout": {
        "en": "the dropout probability is not mha.dropout.p",
        "zh": "dropout 概率不是 mha.dropout.p",
    },
    "torch_equivalence.values": {
        "en": "with a causal attn_mask, its output differs from our MultiHeadAttention's",
        "zh": "使用因果 attn_mask 时，它的输出与我们的 MultiHeadAttention 不同",
    },
    # parameter_counts
    "parameter_counts.notes.title": {
        "en": "count_parameters: MultiHeadAttention(768, 768, 1024, 0.0, 12) and the notes' small one",
        "zh": "count_parameters：MultiHeadAttention(768, 768, 1024, 0.0, 12) 和笔记中的小模块",
    },
    "parameter_counts.modules.title": {
        "en": "count_parameters on other modules (biases, heads in a ModuleList, frozen layers)",
        "zh": "count_parameters 作用于其他模块（偏置、ModuleList 中的多个头、冻结的层）",
    },
    "parameter_counts.wrong": {
        "en": "count_parameters returned {got:,}, expected {expected:,} trainable parameters",
        "zh": "count_parameters 返回 {got:,}，应当是 {expected:,} 个可训练参数",
    },
    "parameter_counts.wrong.hidden": {
        "en": "the count is wrong for one of the modules: count only parameters that require grad",
        "zh": "某个模块的计数不对：只统计 requires_grad 的参数",
    },
    "parameter_counts.not_a_count": {
        "en": "returned {got}, expected a whole number",
        "zh": "返回了 {got}，应当返回一个整数",
    },
}
