"""Checks for notebook 03: the causal mask, the two masking routes, CausalAttention."""

import torch

import solutions
from autograder.compare import diagnose
from autograder.model import Check, Verdict
from autograder.probing import lookup, plain
from autograder.variants import mask_for

# ---------------------------------------------------------------------------------------------
# causal_mask(num_tokens)


def mask_cases_notes(rng):
    return [{"num_tokens": 6}]


def mask_cases_sizes(rng):
    # 1 token is the edge case (nothing to hide); more than 16 catches masks built for the toy size.
    return [{"num_tokens": n} for n in (1, rng.randint(2, 5), rng.randint(17, 40))]


def probe_causal_mask(namespace, case):
    causal_mask = lookup(namespace, "causal_mask")
    return {"mask": plain(causal_mask(case["num_tokens"]))}


def judge_causal_mask(data, case):
    got, num_tokens = data["mask"], case["num_tokens"]
    expected = solutions.causal_mask(num_tokens)
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       expected=expected, got=got, input_shape=(num_tokens,))
    if got.dtype != torch.bool:
        return Verdict(False, "mask.dtype", {"dtype": str(got.dtype)}, expected=expected, got=got,
                       input_shape=(num_tokens,), heatmap=True)
    if torch.equal(got, expected):
        return Verdict(True)
    variants = {kind_id: mask_for(kind, num_tokens)
                for kind_id, kind in (("mask_includes_diagonal", "with_diagonal"), ("mask_inverted", "inverted"))}
    return Verdict(False, *first_mask_error(got, expected), misconception=diagnose(got, expected, variants),
                   expected=expected, got=got, input_shape=(num_tokens,), heatmap=True)


def first_mask_error(got, expected):
    """(message key, fields) naming the first query/key pair the mask gets wrong, 1-based like the notes' x^(i)."""
    query, key = (int(i) for i in (got != expected).nonzero()[0])
    if expected[query, key]:
        return "mask.lets_see", {"query": query + 1, "key": key + 1}
    return "mask.hides", {"query": query + 1, "key": key + 1}


CHECKS = (
    Check("causal_mask.notes", "causal_mask", 2, False, mask_cases_notes, probe_causal_mask, judge_causal_mask),
    Check("causal_mask.sizes", "causal_mask", 4, True, mask_cases_sizes, probe_causal_mask, judge_causal_mask),
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
}
