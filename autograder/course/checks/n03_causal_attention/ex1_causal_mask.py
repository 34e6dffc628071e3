"""Checks for causal_mask(num_tokens) (notebook 03): the notes' 6 tokens, then 1 token up to long sequences."""

import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.expectations import Expectations
from autograder.course.checks.n03_causal_attention import NOTEBOOK
from autograder.course.checks.variants import mask_for
from autograder.course.judges.causal import judge_causal_mask
from autograder.course.probes.causal import probe_causal_mask

EXERCISES = (
    Exercise("causal_mask", NOTEBOOK, ("causal_mask",),
             {"en": "The causal mask", "zh": "因果掩码"},
             minutes=10, difficulty=1),
)


def mask_cases_notes(rng):
    return [{"num_tokens": 6}]


def mask_cases_sizes(rng):
    # 1 token is the edge case (nothing to hide); more than 16 catches masks built for the toy size.
    return [{"num_tokens": n} for n in (1, rng.randint(2, 5), rng.randint(17, 40))]


def expect_causal_mask(case, data):
    num_tokens = case["num_tokens"]
    return Expectations.computed(
        mask=lambda: solutions.causal_mask(num_tokens),
        variants=lambda: [(kind_id, mask_for(kind, num_tokens)) for kind_id, kind in
                          (("mask_includes_diagonal", "with_diagonal"), ("mask_inverted", "inverted"))],
    )


CHECKS = (
    Check("causal_mask.notes", "causal_mask", 2, False, mask_cases_notes, probe_causal_mask, judge_causal_mask,
          expect_causal_mask),
    Check("causal_mask.sizes", "causal_mask", 4, True, mask_cases_sizes, probe_causal_mask, judge_causal_mask,
          expect_causal_mask),
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
