"""Checks for context_vectors (notebook 01): the notes' six tokens, then other sizes and float64."""

import torch

import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.expectations import Expectations
from autograder.course.checks.n01_attention_without_weights import NOTEBOOK
from autograder.course.checks.n01_attention_without_weights.ex1_softmax import SOFTMAX_MESSAGES, random_case
from autograder.course.judges.basics import judge_context_vectors, judge_context_vectors_dtype
from autograder.course.probes.basics import (
    case_tensor,
    probe_context_vectors,
)

EXERCISES = (
    Exercise("context_vectors", NOTEBOOK, ("context_vectors",),
             {"en": "Context vectors for all tokens", "zh": "所有 token 的上下文向量"},
             minutes=10, difficulty=1),
)


def context_cases_notes(rng):
    return [{"input": "notes_inputs"}]


def context_cases_random(rng):
    num_tokens = (1, rng.randint(2, 8), rng.randint(17, 20))
    return [random_case(rng, (n, rng.randint(2, 8)), scale=2.0) for n in num_tokens]


def context_cases_dtype(rng):
    return [random_case(rng, (rng.randint(2, 12), rng.randint(2, 8)), scale=2.0, dtype="float64")]


def context_mistakes(inputs):
    scores = inputs @ inputs.T
    return [
        ("softmax_wrong_dim", torch.softmax(scores, dim=0) @ inputs),
        ("normalised_without_exp", (scores / scores.sum(dim=-1, keepdim=True)) @ inputs),
        ("scores_as_weights", scores @ inputs),
        ("scaled_without_weights", torch.softmax(scores / inputs.shape[-1] ** 0.5, dim=-1) @ inputs),
    ]


def expect_context_vectors(case, data):
    inputs = case_tensor(case)
    return Expectations.computed(output=lambda: solutions.context_vectors(inputs),
                                 mistakes=lambda: context_mistakes(inputs))


CHECKS = (
    Check("context_vectors.notes", "context_vectors", 3, False, context_cases_notes, probe_context_vectors,
          judge_context_vectors, expect_context_vectors),
    Check("context_vectors.random", "context_vectors", 3, True, context_cases_random, probe_context_vectors,
          judge_context_vectors, expect_context_vectors),
    Check("context_vectors.float64", "context_vectors", 1, True, context_cases_dtype, probe_context_vectors,
          judge_context_vectors_dtype, expect_context_vectors),
)


MESSAGES = {
    "context_vectors.notes.title": {
        "en": "context_vectors on the notes' six tokens matches the notes",
        "zh": "context_vectors 在笔记的 6 个 token 上结果与笔记一致",
    },
    "context_vectors.random.title": {
        "en": "context_vectors is right for other sizes (1 to 20 tokens)",
        "zh": "context_vectors 在其他大小上也正确（1 到 20 个 token）",
    },
    "context_vectors.float64.title": {
        "en": "context_vectors keeps float64, leaves its input unchanged and lets gradients flow back to it",
        "zh": "context_vectors 保持 float64，不修改输入，并且梯度能传回输入",
    },
    "context_vectors.wrong_values": {
        "en": "the context vectors differ from the expected ones: check the scores of every pair of tokens, then "
              "the softmax of each query's row, then the weighted sum of the inputs",
        "zh": "上下文向量与期望值不一致：请依次检查每对 token 的分数、每个查询那一行的 softmax，以及对输入的加权求和",
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
