"""Sentences true of the learner's code in the words a learner reads them (issue 58): a step whose entries the notes
have at a non-zero value and the learner's tensor at 0 says so in that order, of a causal mask too (False and True
read as 0 and 1; it once read "entries that the notes keep set to 0"); a gradient row says its values are softmax's on
its own input only, where other rows say they differ."""

import torch

from autograder.running.runner import run_exercise
from tests.test_step_sentences import printed_in


def causal_mask_first_row_open(num_tokens):
    """The notes' triangle with its first row left all False: the first query sees every key."""
    mask = torch.zeros(num_tokens, num_tokens, dtype=torch.bool)
    for query in range(1, num_tokens):
        mask[query, query + 1:] = True
    return mask


def causal_mask_with_diagonal(num_tokens):  # control: True entries the notes have at False, none the other way
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=0)


def test_entries_the_learner_leaves_at_0_are_said_to_be_0_in_their_tensor_not_in_the_notes():
    en = printed_in("en", "causal_mask", causal_mask_first_row_open)
    zh = printed_in("zh", "causal_mask", causal_mask_first_row_open)
    assert "entries that are not 0 in the notes' are 0 in it" in en, en
    assert "keep set to 0" not in en, en
    assert "在笔记中不为 0 的元素在这里为 0" in zh, zh


def test_entries_the_learner_sets_where_the_notes_have_0_keep_their_own_sentence():
    en = printed_in("en", "causal_mask", causal_mask_with_diagonal)
    assert "are 0 in it" not in en, en


def softmax_stable_with_temperature(x, dim=-1):
    """A temperature of 2 inside the exponential: on two equal scores its values are softmax's, its slope half."""
    shifted = x - x.max(dim=dim, keepdim=True).values
    exponentials = torch.exp(shifted / 2)
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


def test_a_gradient_row_says_its_values_are_softmax_on_its_own_input_only():
    """The value rows say the weights differ from softmax; the gradient check, whose input gives softmax's values,
    says that of its input alone rather than "the values are a softmax" (learners_2026_12h's scorer read that as
    false). In check(...) it is one row with the value checks: beside its input the values depart at the same step
    (tests/test_gradient_rows.py)."""
    en = printed_in("en", "softmax_stable", softmax_stable_with_temperature, hint=1)
    assert "the weights differ from the softmax of the input" in en, en
    assert "the values are a softmax" not in en, en
    assert "fail for the same reason: softmax_stable matches torch.softmax" in en, en
    assert "softmax_stable is written from scratch" in en, en
    for lang, words in (("en", "on this check's input your values are softmax's, but the gradient"),
                        ("zh", "在这项检查的输入上，你的数值与 softmax 的相同")):
        results = run_exercise("softmax_stable", {"softmax_stable": softmax_stable_with_temperature}, lang=lang)
        gradient = next(result for result in results if result.id == "softmax_stable.from_scratch")
        assert words in gradient.full_message, gradient.full_message
