"""Checks for context_vectors (notebook 01): the notes' six tokens, then other sizes and float64."""

import random
from typing import Any

import torch
from torch import Tensor

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.departure import STEPS, step
from autograder.checking.expectations import Expectations, case_alone
from autograder.checking.probing import gradient_of
from autograder.course.declaration import Declaration
from autograder.course.n01_attention_without_weights import NOTEBOOK
from autograder.course.n01_attention_without_weights.ex1_softmax.declaration import SOFTMAX_MESSAGES, random_case
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import TensorCase, case_tensor
from autograder.course.n01_attention_without_weights.ex2_context_vectors.judge import (
    judge_context_vectors,
    judge_context_vectors_dtype,
)
from autograder.course.n01_attention_without_weights.ex2_context_vectors.probe import (
    ContextRecord,
    probe_context_vectors,
)

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("context_vectors", NOTEBOOK, ("context_vectors",),
             {"en": "Context vectors for all tokens", "zh": "所有 token 的上下文向量"}, minutes=10, difficulty=1),
)


def context_cases_notes(rng: random.Random) -> list[TensorCase]:
    return [{"input": "notes_inputs"}]


def context_cases_random(rng: random.Random) -> list[TensorCase]:
    num_tokens = (1, rng.randint(2, 8), rng.randint(17, 20))
    return [*(random_case(rng, (n, rng.randint(2, 8)), scale=2.0) for n in num_tokens), negative_case(rng)]


def negative_case(rng: random.Random) -> TensorCase:
    """Every input feature below 0, drawn after the other cases so that they keep their values: a one-token draw above
    is sometimes all negative, and the preview shows this kind first, so that hidden grading never meets it unshown
    (tests/test_public_case_kinds.py)."""
    shape = (rng.randint(2, 8), rng.randint(2, 8))
    return {"input": "values", "values": [[-round(rng.uniform(0.05, 2.0), 3) for _ in range(shape[1])]
                                          for _ in range(shape[0])]}


def context_cases_dtype(rng: random.Random) -> list[TensorCase]:
    return [random_case(rng, (rng.randint(2, 12), rng.randint(2, 8)), scale=2.0, dtype="float64")]


def context_mistakes(inputs: Tensor) -> list[tuple[str, Tensor]]:
    scores = inputs @ inputs.T
    return [
        # The scores x @ x.T are symmetric: a softmax along the queries and the row-wise weights applied transposed
        # give this same output, so the entry's words cover both.
        ("context_weights_other_axis", torch.softmax(scores, dim=0) @ inputs),
        ("context_normalised_without_exp", (scores / scores.sum(dim=-1, keepdim=True)) @ inputs),
        ("scores_as_weights", scores @ inputs),
        ("scaled_without_weights", torch.softmax(scores / inputs.shape[-1] ** 0.5, dim=-1) @ inputs),
    ]


def context_steps(inputs: Tensor) -> list[list[Any]]:
    """The notes' context vectors as named steps: the scores of every pair of tokens, the weights (a softmax over
    each row), the weighted sums of the inputs (the reference's output)."""
    scores = inputs @ inputs.T
    weights = torch.softmax(scores, dim=-1)
    return [step("scores", scores), step("weights", weights), step("context_vectors", weights @ inputs)]


@case_alone
def expect_context_vectors(record: ContextRecord, case: TensorCase) -> Expectations:
    inputs = case_tensor(case)
    return Expectations.computed(output=lambda: solutions.context_vectors(inputs),
                                 mistakes=lambda: context_mistakes(inputs),
                                 **{STEPS: lambda: context_steps(inputs)},
                                 # The gradient the reference passes back for the probe's own upstream mix
                                 # (probing.gradient_weights), from the case's input: nothing the child sent.
                                 input_gradient=lambda: gradient_of(solutions.context_vectors, inputs)[2])


CHECKS = (
    Check(id="context_vectors.notes", exercise="context_vectors", points=3, hidden=False, cases=context_cases_notes,
          probe=probe_context_vectors, judge=judge_context_vectors, expect=expect_context_vectors,
          title={"en": "context_vectors on the notes' six tokens matches the notes",
                 "zh": "context_vectors 在笔记的 6 个 token 上结果与笔记一致"}),
    Check(id="context_vectors.random", exercise="context_vectors", points=3, hidden=True, cases=context_cases_random,
          probe=probe_context_vectors, judge=judge_context_vectors, expect=expect_context_vectors,
          title={"en": "context_vectors is right for other sizes (1 to 20 tokens) and for inputs whose every "
                       "feature is negative",
                 "zh": "context_vectors 在其他大小上也正确（1 到 20 个 token），所有特征都为负数的输入也一样"}),
    Check(id="context_vectors.float64", exercise="context_vectors", points=1, hidden=True, cases=context_cases_dtype,
          probe=probe_context_vectors, judge=judge_context_vectors_dtype, expect=expect_context_vectors,
          title={"en": "context_vectors keeps float64, leaves its input unchanged and passes the right gradient back "
                       "to it (every step recorded by autograd)",
                 "zh": "context_vectors 保持 float64，不修改输入，并且把正确的梯度传回输入（每一步都由 autograd "
                       "记录）"}),
)


MESSAGES = {
    "context_vectors.wrong_values": {
        "en": "the context vectors differ from the expected ones: check the scores of every pair of tokens, then "
              "the softmax of each query's row, then the weighted sum of the inputs",
        "zh": "上下文向量与期望值不一致：请依次检查每对 token 的分数、每个 query 那一行的 softmax，"
              "以及对输入的加权求和",
    },
    "context_vectors.wrong_values.hidden": {
        "en": "the context vectors differ from the reference on inputs you have not seen",
        "zh": "在你没见过的输入上，上下文向量与参考答案不一致",
    },
    "context_vectors.dtype": SOFTMAX_MESSAGES["dtype"],
    "context_vectors.input_changed": {
        "en": "changes its inputs in place: compute into new tensors instead",
        "zh": "原地修改了输入：请把结果算到新的张量里",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
