"""Checks for causal_mask(num_tokens) (notebook 03): the notes' 6 tokens, then 1 token up to long sequences."""

import random

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.expectations import Expectations
from autograder.course.declaration import Declaration, misconception
from autograder.course.n03_causal_attention import NOTEBOOK
from autograder.course.n03_causal_attention.ex1_causal_mask.judge import judge_causal_mask
from autograder.course.n03_causal_attention.ex1_causal_mask.probe import MaskCase, MaskRecord, probe_causal_mask

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


def expect_causal_mask(case: MaskCase, data: MaskRecord) -> Expectations:
    num_tokens = case["num_tokens"]
    return Expectations.computed(mask=lambda: solutions.causal_mask(num_tokens))


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

MISCONCEPTIONS = (
    misconception("scale_wrong_value",
      "scores divided by the wrong number",
      "分数除以的数不对",
      "the scores are divided by the square root of the key size of one head, which keeps their spread near 1 "
      "whatever that size; check the expression you divide by, and the order in which its power and its division "
      "apply",
      "分数要除以单个头的 key 维度的平方根，这样无论维度多大，分数的分布范围都保持在 1 左右；请检查你所除的表达式"
      "，以及其中乘方和除法的运算顺序",
      question=("What number do your scores get divided by, and what is the square root of one head's key size?",
                "你的分数除以的是哪个数？单个头的 key 维度的平方根又是多少？"),
      change=("divide by the square root of one head's key size, written so that the power applies before the "
              "division",
              "除以单个头 key 维度的平方根，并确保乘方在除法之前进行")),
    misconception("mask_includes_diagonal",
      "the mask also hides the diagonal",
      "掩码把对角线也遮住了",
      "a token may attend to itself: only the entries strictly above the diagonal are future tokens",
      "token 可以关注它自己：只有严格位于对角线上方的位置才是未来的 token",
      question=("May token 2 look at token 2? What does your mask say on the diagonal?",
                "token 2 可以看它自己吗？你的掩码在对角线上是什么？"),
      change=("hide only the entries strictly above the diagonal and leave the diagonal visible",
              "只遮住严格位于对角线上方的位置，对角线保持可见")),
    misconception("mask_inverted",
      "the mask hides the past instead of the future",
      "掩码遮住了过去而不是未来",
      "the mask marks what a token must not see: the tokens after it, strictly above the diagonal",
      "掩码标出的是一个 token 不能看到的东西：它之后的 token，也就是严格位于对角线上方的位置",
      question=("In your mask, which tokens does the first token see, and which does the last one see?",
                "在你的掩码中，第一个 token 能看到哪些 token？最后一个 token 呢？"),
      change=("mark the other side of the diagonal: the later tokens, not the earlier ones",
              "标记对角线的另一侧：之后的 token，而不是之前的 token")),
    misconception("mask_not_truncated",
      "mask not truncated to num_tokens",
      "掩码没有截断到 num_tokens",
      "inputs can be shorter than context_length: the mask stored for the longest input is larger than this "
      "input's scores, and only its top-left block belongs to this input",
      "输入可以比 context_length 短：按最长输入存放的掩码比本次输入的分数大，只有它左上角的那一块属于本次输入",
      question=("How large is your stored mask, and how large are this input's scores?",
                "你存放的掩码有多大？本次输入的分数有多大？"),
      change=("use only the block of the stored mask that covers this input's tokens, as a new local tensor",
              "只使用所存掩码中覆盖本次输入 token 的那一块，作为一个新的局部张量")),
)

DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES, misconceptions=MISCONCEPTIONS)
