"""A step only its own shape holds (a view: the notes' (batch, tokens, heads, head size)) is held too by a tensor of
the learner's that holds its numbers in the same order with adjacent axes joined or split, as a right program may
make it (issue 58, "up to the layouts a correct program may use"). Read from set 12g's hand-scoring (n-sh-05): code
that views the input as (batch * tokens, heads, head size) was told "none of the tensors your code made holds" the
view, and departed at the first step instead of at the transpose. The attempts here are written for this test, as a
learner writes split_heads from notebook 04.
"""

import torch

from autograder.checking.departure import adjacent_regrouping, held_joined
from autograder.checking.tensor_trace import INPUT, TracedTensor
from tests.test_step_sentences import printed_in

LABELS = {"en": "where it departs", "zh": "从哪里开始不同"}
FALSE_NONE = {"en": "departs from the notes at their first step", "zh": "从笔记的第一步"}
AT_THE_SPLIT = {"en": "your code reproduces the notes' input viewed as (batch, tokens, heads, head size), then departs "
                      "from them at the input split into heads",
                "zh": "你的代码算出了与笔记相同的按（batch、token、头、每个头的大小）排列的输入，"
                      "从拆分成多个头的输入开始不同"}
EXCHANGED = {"en": "with its batch and heads axes exchanged", "zh": "batch维度和头维度互换了"}


def split_rows_heads_first(x, num_heads):
    """Batch and tokens joined into rows of heads, the heads moved in front of the rows, then cut as if the heads
    came after the batch."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    rows = x.reshape(b * num_tokens, num_heads, head_dim).permute(1, 0, 2)
    return rows.reshape(b, num_heads, num_tokens, head_dim)


def split_by_slices_left_in_place(x, num_heads):
    """Control: the heads stacked from slices on a new third axis (never the notes' transpose): the view's numbers
    are its result, in the view's own shape."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return torch.stack([x[:, :, h * head_dim:(h + 1) * head_dim] for h in range(num_heads)], dim=2)


def departure(lang, function):
    text = printed_in(lang, "split_heads", function)
    return [line.strip() for line in text.splitlines() if LABELS[lang] in line]


def test_rows_of_heads_hold_the_view_and_the_code_departs_at_the_transpose_in_both_languages():
    for lang in ("en", "zh"):
        lines = departure(lang, split_rows_heads_first)
        assert lines and FALSE_NONE[lang] not in lines[0], lines
        assert AT_THE_SPLIT[lang] in lines[0] and EXCHANGED[lang] in lines[0], lines


def test_a_view_left_in_place_keeps_its_true_sentence_in_both_languages():
    for lang in ("en", "zh"):
        lines = departure(lang, split_by_slices_left_in_place)
        assert lines and AT_THE_SPLIT[lang] in lines[0], lines


def test_only_runs_of_adjacent_axes_join():
    assert adjacent_regrouping((6, 2, 2), (2, 3, 2, 2))  # batch and tokens joined
    assert adjacent_regrouping((2, 3, 2, 2), (2, 3, 4))  # heads and features split apart
    assert adjacent_regrouping((1, 6, 4), (6, 2, 2))  # a batch of one aside
    assert not adjacent_regrouping((2, 2, 3, 2), (2, 3, 2, 2))  # heads before tokens: another order, not a join
    assert not adjacent_regrouping((3, 8), (2, 3, 4))  # 2 * 3 * 4 cut elsewhere


def test_a_joined_tensor_holds_the_view_but_a_copy_of_the_input_or_other_numbers_do_not():
    x = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)  # the trace keeps float64 copies
    viewed = x.reshape(2, 3, 2, 2)
    trace = [TracedTensor(INPUT, x, ())]
    assert held_joined(x.reshape(6, 2, 2), viewed, trace)
    assert not held_joined(x.reshape(6, 2, 2).flip(0), viewed, trace)  # other order
    assert not held_joined(x.reshape(2, 2, 3, 2), viewed, trace)  # a view straight to the output's shape
    assert not held_joined(x.clone(), viewed, trace)  # the argument as it came, copied
    assert not held_joined(viewed, viewed, trace)  # its own shape is the other rule's
    assert not held_joined(x.reshape(24), viewed, [])  # heads and head size joined again: the input's numbers, flat
    assert not held_joined(x.reshape(2, 3, 4) + 0, viewed, [])  # ... or in the input's shape
    assert held_joined(x.reshape(2, 3, 1, 2, 2), viewed, [])  # an axis of one before them: still the view
