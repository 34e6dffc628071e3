"""A signature the student changed is named as such: the keyword the exercise's signature gives, or the argument
the student added, in English and Simplified Chinese, instead of advice about the body.
"""

import pytest
import torch
from check_helpers import results_by_id, score

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.checking.diagnosis import explain_error
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.runner import DEFAULT_SEED, run_exercise


class PaddingMaskRenamed(solutions.MultiHeadAttention):
    """The reference's padding step, under the keyword padding_mask instead of attention_mask."""

    def forward(self, x, padding_mask=None):
        return super().forward(x, attention_mask=padding_mask)


class MaskKeywordOnly(solutions.MultiHeadAttention):
    def forward(self, x, *, mask=None):
        return super().forward(x, attention_mask=mask)


def run(exercise_id, student, lang="en"):
    return results_by_id(exercise_id, {EXERCISES_BY_ID[exercise_id].names[0]: student}, seed=DEFAULT_SEED,
                         lang=lang)


@pytest.mark.parametrize(("student", "name"), [(PaddingMaskRenamed, "padding_mask"), (MaskKeywordOnly, "mask")])
def test_a_renamed_mask_keyword_loses_the_padding_points_and_the_message_names_the_keyword(student, name):
    padding = run("padding_mask", student)
    assert score(padding) == 0
    failed = [result for result in padding.values() if result.status != PASSED]
    assert failed
    for result in failed:
        assert f"forward takes `{name}` where the exercise's signature gives attention_mask" in result.message
        assert "add the padding step" not in result.message
    # The rest of the exercise is unaffected: the multi-head attention itself is right.
    assert all(result.status == PASSED for result in run("multi_head_attention", student).values())


def test_the_renamed_keyword_message_in_chinese():
    padding = run("padding_mask", PaddingMaskRenamed, lang="zh")
    messages = [result.message for result in padding.values() if result.status != PASSED]
    assert messages and all("`padding_mask`" in m and "按名字 attention_mask 传入" in m and "签名" in m
                                for m in messages)
    assert not any("填充" in message for message in messages)  # the glossary keeps padding in English


def test_the_book_forward_without_a_mask_still_gets_the_add_the_padding_step_message():
    class BookForward(solutions.MultiHeadAttention):
        def forward(self, x):
            return super().forward(x)

    padding = run("padding_mask", BookForward)
    assert all("add the padding step" in r.message for r in padding.values() if r.status != PASSED)


def test_an_unexpected_keyword_or_an_added_argument_is_named():
    def raised(function, *args, **kwargs):
        try:
            function(*args, **kwargs)
        except TypeError as error:
            return {"type": "TypeError", "message": str(error)}
        raise AssertionError("no TypeError")

    def softmax_stable(values, axis=-1):
        return values

    def causal_mask(num_tokens, device):
        return num_tokens

    renamed = explain_error(raised(softmax_stable, torch.ones(3), dim=-1), {})
    assert renamed.message_key == "error.unexpected_keyword" and renamed.fields["keyword"] == "dim"
    added = explain_error(raised(causal_mask, 4), {})
    assert added.message_key == "error.missing_argument" and added.fields["name"] == "device"
    other = explain_error(raised(causal_mask, 1, 2, 3), {})
    assert other.message_key == "error.wrong_signature"



@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_student_kit_names_the_renamed_keyword_as_the_full_kit_does(lang):
    vectors = vectors_from_document(vectors_document())
    namespace = {"MultiHeadAttention": PaddingMaskRenamed}
    kit = run_public("padding_mask", namespace, vectors, lang)
    live = run_exercise("padding_mask", namespace, include_hidden=False, lang=lang)
    assert [r.message for r in kit] == [r.message for r in live]
    assert any("`padding_mask`" in r.message and r.status != PASSED for r in kit)
