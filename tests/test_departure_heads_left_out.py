"""Heads merged with some of them left out are told which (issue 58: a merge that looped over one head fewer was told
only that no tensor held the merged heads).

departure._heads_left_out: the learner's tensor is the notes' heads side by side with the last heads (or the first)
missing, every kept entry in its place, and the case tells which heads are missing.
"""

import torch

from tests.test_departure_first_step import departures


def merge_without_last_head(x):
    """A learner's merge: the heads joined one by one, the loop stopping a head early."""
    b, num_heads, num_tokens, head_dim = x.shape
    merged = x.new_empty(b, num_tokens, 0)
    for head in range(num_heads - 1):
        merged = torch.cat((merged, x[:, head]), dim=2)
    return merged


def merge_without_first_head(x):
    return x[:, 1:].transpose(1, 2).flatten(2)


def merge_heads_summed(x):
    """Another computation of one head's size: the heads added together, not side by side."""
    return x.sum(dim=1)


def merge_heads_right(x):
    return x.permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)


def test_the_last_head_left_out_is_said_in_both_languages():
    found = departures("merge_heads", {"merge_heads": merge_without_last_head})
    assert found["en"] and all(
        "the result your function returns is the notes' heads merged side by side with the last of its" in line
        and "heads left out: every other head's features are the notes', in their places" in line
        for line in found["en"]), found["en"]
    assert found["zh"] and all("只是去掉了它" in line and "个头中的最后一个" in line for line in found["zh"])


def test_the_first_heads_left_out_are_said_as_first():
    found = departures("merge_heads", {"merge_heads": merge_without_first_head})
    assert found["en"] and all("with the first of its" in line for line in found["en"]), found["en"]


def test_other_merges_do_not_get_it():
    for student in (merge_heads_summed, merge_heads_right):
        found = departures("merge_heads", {"merge_heads": student})
        assert not any("left out" in line for line in found["en"]), (student.__name__, found["en"])
