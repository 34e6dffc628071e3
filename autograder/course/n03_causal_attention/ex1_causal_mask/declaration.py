"""Checks for causal_mask(num_tokens) (notebook 03): the notes' 6 tokens, then 1 token up to long sequences."""

import random

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import Expectations, case_alone
from autograder.course.declaration import Declaration
from autograder.course.n03_causal_attention import NOTEBOOK
from autograder.course.n03_causal_attention.ex1_causal_mask.judge import judge_causal_mask
from autograder.course.n03_causal_attention.ex1_causal_mask.probe import MaskCase, MaskRecord, probe_causal_mask

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("causal_mask", NOTEBOOK, ("causal_mask",), {"en": "The causal mask", "zh": "因果掩码"}, minutes=10,
             difficulty=1),
)


def mask_cases_notes(rng: random.Random) -> list[MaskCase]:
    return [{"num_tokens": 6}]


def mask_cases_sizes(rng: random.Random) -> list[MaskCase]:
    # 1 token is the edge case (nothing to hide); more than 16 catches masks built for the toy size. The 1-token case
    # comes last: a wrong mask is named by its family from a case with two tokens or more, where families differ.
    return [{"num_tokens": n} for n in (rng.randint(2, 5), rng.randint(17, 40), 1)]


@case_alone
def expect_causal_mask(record: MaskRecord, case: MaskCase) -> Expectations:
    num_tokens = case["num_tokens"]
    # One step: the mask is made in one or two calls (triu of ones, or the complement of tril), and the judge already
    # names each token that sees or misses another. The step tells a learner whether any tensor their code made is
    # the notes' mask (a float mask that was never made bool, say, is; the wrong triangle is not).
    # Ordered: the transposed triangle is the mistake, never a layout of the mask.
    return Expectations.computed(mask=lambda: solutions.causal_mask(num_tokens), **{STEPS: lambda: [
        step("causal_mask", solutions.causal_mask(num_tokens), ordered=True, from_inputs=False)]})


CHECKS = (
    Check(id="causal_mask.notes", exercise="causal_mask", points=2, hidden=False, cases=mask_cases_notes,
          probe=probe_causal_mask, judge=judge_causal_mask, expect=expect_causal_mask,
          title={"en": "causal_mask(6) blocks exactly the future tokens",
                 "zh": "causal_mask(6) 恰好遮住所有未来 token"}),
    Check(id="causal_mask.sizes", exercise="causal_mask", points=4, hidden=True, cases=mask_cases_sizes,
          probe=probe_causal_mask, judge=judge_causal_mask, expect=expect_causal_mask,
          title={"en": "causal_mask is right for other sizes (1 token up to long sequences)",
                 "zh": "causal_mask 在其他长度上也正确（从 1 个 token 到长序列）"}),
)


MESSAGES = {
    "mask.lets_see": {
        "en": "your mask lets token {query} see token {key}, which comes later",
        "zh": "你的掩码让 token {query} 看到了在它之后的 token {key}",
    },
    "mask.hides": {
        "en": "your mask hides token {key} from token {query}, although token {query} may see it",
        "zh": "你的掩码对 token {query} 遮住了 token {key}，但 token {query} 应当能看到它",
    },
    "mask.dtype": {
        "en": "the mask must be a bool tensor (True = hidden), got {dtype}",
        "zh": "掩码必须是 bool 张量（True 表示遮住），实际是 {dtype}",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
