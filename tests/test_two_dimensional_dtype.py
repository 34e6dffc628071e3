"""two_dimensional_wrapper: a wrapper built in float64 cannot take the notebook's float32 batch (its next cell runs
it there), so the checks fail it with that fact, public and hidden, in both languages (issue 58)."""
import pytest
import torch
from check_helpers import results_by_id
from torch import nn

from attnkit import solutions

CHECK_IDS = ("two_dimensional_wrapper.notes", "two_dimensional_wrapper.sizes")


def wrapper_in_float64(d_in, context_length, dropout):  # the right sizes, every weight in double precision
    return solutions.MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2).double()


def results(student, lang="en"):
    return results_by_id("two_dimensional_wrapper", {"two_dimensional_wrapper": student}, lang=lang)


def test_the_float64_wrapper_really_raises_on_a_float32_batch():
    with pytest.raises(RuntimeError):
        wrapper_in_float64(3, 6, 0.0)(torch.rand(2, 6, 3))


@pytest.mark.parametrize(("lang", "public", "hidden"), [
    ("en", "the wrapper's parameters are float64, not float32 (torch's default)",
     "the wrapper's parameters are not in torch's default dtype"),
    ("zh", "包装器的参数是 float64，而不是 float32（torch 的默认类型）", "包装器的参数不是 torch 的默认 dtype")])
def test_a_wrapper_built_in_float64_fails_public_and_hidden(lang, public, hidden):
    got = results(wrapper_in_float64, lang)
    notes, sizes = (got[check_id] for check_id in CHECK_IDS)
    assert notes.score == 0 and sizes.score == 0, (notes, sizes)
    assert public in notes.full_message, notes.full_message
    assert hidden in sizes.full_message, sizes.full_message
    assert "Why it works" not in notes.full_message and "为什么这样是对的" not in notes.full_message


def test_the_notes_wrapper_gets_no_dtype_sentence():
    got = results(solutions.two_dimensional_wrapper)
    for check_id in CHECK_IDS:
        assert got[check_id].score == got[check_id].max_score, got[check_id]
        assert "dtype" not in got[check_id].full_message


def values_made_one_wide(d_in, context_length, dropout):
    """Heads of d_out = 2 whose value layers alone are swapped for one feature: context vectors of 2 features, scores
    of 2-feature queries and keys."""
    wrapper = solutions.MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)
    for head in wrapper.heads:
        head.W_value = nn.Linear(d_in, 1, bias=False)
    return wrapper


def test_heads_whose_values_alone_are_one_wide_are_not_said_to_give_4_features():
    got = results(values_made_one_wide)
    for check_id in CHECK_IDS:
        message = got[check_id].full_message
        assert got[check_id].score == 0, message
        assert "have 4 features" not in message and got[check_id].misconception is None, message
        assert "the heads' queries are 2, 2 feature(s) wide and their values 1, 1" in message, message
