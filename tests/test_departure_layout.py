"""Rung 2 says HOW a change of layout departs (issue 58): where the learner's tensor holds the numbers of the notes'
split, merged or concatenated heads in other places, the order of the step's named axes (batch, heads, tokens,
features) that reproduces it exactly from the notes' step is said in the notes' words, with the shape it is cut into
and the axis whose every slice then mixes several of the notes' ones (autograder.checking.step_relations
.reordered_axes). Said only when exactly one order reproduces the tensor; otherwise "in other places" stays.

The attempts are written here as a learner would from the notebooks' instructions (not from any evaluation set);
before this, each got only "holds the same numbers ..., in other places".
"""

import pytest
import torch

from attnkit import solutions
from autograder.checking.departure import values_close
from autograder.checking.step_relations import reordered_axes
from tests.test_departure_how import kinds, lines, traced_departure

# ------------------------------------------------------------------ learner attempts


def split_features_before_heads(x, num_heads):  # (b, T, head_dim, num_heads): the heads put last
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_tokens, num_heads, d_out // num_heads).permute(0, 1, 3, 2)


def split_straight_into_heads(x, num_heads):  # cut as (b, num_heads, num_tokens, head_dim) with no transpose
    return x.reshape(x.shape[0], num_heads, x.shape[1], -1)


def merge_without_moving_heads(x):  # the heads' numbers read as they lie, (b, heads, tokens, features)
    b, num_heads, num_tokens, head_dim = x.shape
    return x.contiguous().view(b, num_tokens, num_heads * head_dim)


def merge_features_before_tokens(x):  # (b, heads, features, tokens), then merged
    b, num_heads, num_tokens, head_dim = x.shape
    return x.permute(0, 1, 3, 2).reshape(b, num_tokens, num_heads * head_dim)


def split_heads_in_reverse(x, num_heads):  # its heads last one first
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_tokens, num_heads, d_out // num_heads).flip(2).transpose(1, 2)


def split_doubled(x, num_heads):  # every number times 2
    b, num_tokens, d_out = x.shape
    return (x * 2).reshape(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


class MultiHeadSplitStraight(solutions.MultiHeadAttention):  # each projection cut into heads with no transpose
    def forward(self, x):
        b, num_tokens, _d_in = x.shape

        def heads(projection):
            return projection(x).reshape(b, self.num_heads, num_tokens, self.head_dim)

        queries, keys, values = heads(self.W_query), heads(self.W_key), heads(self.W_value)
        scores = queries @ keys.transpose(-2, -1)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


class MultiHeadTokensLastFirst(solutions.MultiHeadAttention):  # each projection's tokens reversed as it is split
    def forward(self, x):
        b, num_tokens, _d_in = x.shape

        def heads(projection):
            viewed = projection(x).view(b, num_tokens, self.num_heads, self.head_dim)
            return viewed.flip(1).transpose(1, 2)

        queries, keys, values = heads(self.W_query), heads(self.W_key), heads(self.W_value)
        scores = queries @ keys.transpose(-2, -1)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


class MultiHeadTokensRolled(solutions.MultiHeadAttention):  # each projection's tokens moved round by one as split
    def forward(self, x):
        b, num_tokens, _d_in = x.shape

        def heads(projection):
            viewed = projection(x).view(b, num_tokens, self.num_heads, self.head_dim)
            return torch.cat([viewed[:, -1:], viewed[:, :-1]], dim=1).transpose(1, 2)

        queries, keys, values = heads(self.W_query), heads(self.W_key), heads(self.W_value)
        scores = queries @ keys.transpose(-2, -1)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


# ------------------------------------------------------------------ the sentences


def test_a_split_with_its_axes_in_another_order_says_the_order():
    departure = traced_departure("split_heads.notes", split_features_before_heads)
    assert (departure.matched, departure.step, kinds(departure)) == (("heads_viewed",), "heads_split", ["reordered"])
    said = lines(departure)
    assert ("the tensor your code made in its place holds the numbers of the notes' input split into heads with its "
            "axes in the order batch, tokens, features, heads, where the notes' are in the order batch, heads, "
            "tokens, features") in said["en"], said["en"]
    assert "但各维度的顺序是batch、token、特征、头，而笔记中的顺序是batch、头、token、特征" in said["zh"], said["zh"]


HEADS_MIXED = {"en": ": so each of your heads holds numbers from several of the notes' heads",
               "zh": "：因此你的每个头都含有笔记中多个头的数值"}


def test_a_split_with_no_transpose_is_said_alike_in_split_heads_and_inside_the_forward():
    """One cause, one message: the split with no transpose gets the same how in split_heads and in the
    multi-head forward, where it departs at the queries split into heads."""
    alone = lines(traced_departure("split_heads.notes", split_straight_into_heads))
    forward = traced_departure("multi_head_attention.notes", MultiHeadSplitStraight)
    assert (forward.matched, forward.step, kinds(forward)) == (
        ("queries", "keys", "values"), "split_queries", ["reordered"])
    inside = lines(forward)
    assert ("holds the numbers of the notes' input split into heads with its heads and tokens axes exchanged, then "
            "cut into shape") in alone["en"], alone["en"]
    assert ("the tensor your code made in its place holds the numbers of the notes' queries split into heads with its "
            "heads and tokens axes exchanged, then cut into shape (2, 2, 6, 1)") in inside["en"], inside["en"]
    assert "头维度和token维度互换了，然后被切成形状 (2, 2, 6, 1)" in inside["zh"], inside["zh"]
    for lang in ("en", "zh"):
        assert alone[lang].endswith(HEADS_MIXED[lang]) and inside[lang].endswith(HEADS_MIXED[lang])


def test_a_merge_that_never_moves_the_heads_says_the_tokens_are_mixed():
    departure = traced_departure("merge_heads.notes", merge_without_moving_heads)
    assert (departure.step, kinds(departure)) == ("heads_merged", ["reordered"])
    said = lines(departure)
    assert said["en"].endswith(
        "the result your function returns holds the numbers of the notes' heads merged side by side with its tokens "
        "and heads axes exchanged, then cut into shape (1, 3, 4): so each of your tokens holds numbers from several "
        "of the notes' tokens"), said["en"]
    assert said["zh"].endswith("token维度和头维度互换了，然后被切成形状 (1, 3, 4)："
                               "因此你的每个 token 都含有笔记中多个 token 的数值"), said["zh"]


def test_a_merge_with_the_features_before_the_tokens_says_the_whole_order():
    said = lines(traced_departure("merge_heads.notes", merge_features_before_tokens))
    assert ("with its axes in the order heads, features, tokens, where the notes' are in the order tokens, heads, "
            "features, then cut into shape (1, 3, 4)") in said["en"], said["en"]


def test_right_programs_and_other_descriptions_get_no_order_of_axes():
    for check_id, right in (("split_heads.notes", solutions.split_heads), ("merge_heads.notes", solutions.merge_heads),
                            ("multi_head_attention.notes", solutions.MultiHeadAttention)):
        assert traced_departure(check_id, right).step is None, check_id
    reversed_heads = traced_departure("split_heads.notes", split_heads_in_reverse)
    assert kinds(reversed_heads) == ["permuted"]  # one axis reordered: said as such, not as an order of axes
    assert lines(reversed_heads)["en"].endswith(
        "the tensor your code made in its place holds the notes' input split into heads with its heads in another "
        "order"), lines(reversed_heads)["en"]
    doubled = traced_departure("split_heads.notes", split_doubled)
    assert kinds(doubled) and kinds(doubled)[0].startswith("factor")
    for departure in (reversed_heads, doubled):
        assert "axes exchanged" not in lines(departure)["en"] and "in the order" not in lines(departure)["en"]


def test_reordered_tokens_are_said_by_the_steps_name_for_them():
    said = lines(traced_departure("multi_head_attention.notes", MultiHeadTokensLastFirst))
    assert said["en"].endswith("holds the notes' queries split into heads with its tokens in reverse order"), said
    assert said["zh"].endswith("就是笔记中的拆分成多个头的 query，只是token的顺序反了过来"), said


def test_rolled_tokens_say_where_the_learners_tokens_start():
    departure = traced_departure("multi_head_attention.notes", MultiHeadTokensRolled)
    assert (departure.step, kinds(departure), departure.facts[0].fields["first"]) == ("split_queries", ["permuted"], 6)
    said = lines(departure)
    assert said["en"].endswith("holds the notes' queries split into heads with its tokens in the notes' order, but "
                               "starting from the notes' number 6 and wrapping round"), said
    assert said["zh"].endswith("token仍按笔记中的顺序排列，但从笔记中的第 6 个开始，到最后一个之后再绕回开头"), said
    # Reversed tokens are no rolled ones.
    reversed_tokens = traced_departure("multi_head_attention.notes", MultiHeadTokensLastFirst)
    assert reversed_tokens.facts[0].fields["first"] == 0 and "wrapping round" not in lines(reversed_tokens)["en"]


# ------------------------------------------------------------------ the relation itself

AXES = (("batch", 2), ("heads", 2), ("tokens", 3), ("features", 2))


def notes_split() -> torch.Tensor:
    return torch.arange(24, dtype=torch.float64).reshape(2, 3, 2, 2).transpose(1, 2) * 0.5 + 1


def test_reordered_axes_reproduces_the_tensor_and_reads_where_its_entries_come_from():
    notes = notes_split()
    found = reordered_axes(notes.transpose(1, 2).reshape(2, 2, 3, 2), notes, AXES, values_close)
    assert found is not None
    assert (found.order, found.swapped, found.cut, found.mixed) == (
        ("batch", "tokens", "heads", "features"), ("heads", "tokens"), True, "heads")
    pure = reordered_axes(notes.permute(0, 2, 3, 1), notes, AXES, values_close)
    assert pure is not None and (pure.order, pure.swapped, pure.cut, pure.mixed) == (
        ("batch", "tokens", "features", "heads"), None, False, "")


def test_reordered_axes_says_nothing_it_cannot_prove():
    notes = notes_split()
    assert reordered_axes(notes.clone(), notes, AXES, values_close) is None  # the notes' own order
    assert reordered_axes(notes.flip(1), notes, AXES, values_close) is None  # a reordering inside one axis
    assert reordered_axes(notes.transpose(1, 2) * 2, notes, AXES, values_close) is None  # other numbers
    assert reordered_axes(notes.transpose(1, 2), notes, (), values_close) is None  # no axes declared
    # Every entry one number, then heads and features of one size holding the same numbers: several orders fit.
    ones = torch.ones(2, 2, 3, 2)
    assert reordered_axes(ones.transpose(1, 2), ones, AXES, values_close) is None
    square = torch.arange(4.0).reshape(2, 2)
    symmetric = square + square.T
    assert reordered_axes(symmetric.T, symmetric, (("tokens", 2), ("features", 2)), values_close) is None


@pytest.mark.slow  # builds the kit's vectors document (~7 s)
def test_the_student_kit_says_the_order_from_its_stored_steps():
    """The kit stores each public case's steps as JSON (the axes as lists): its rung 2 says the same order."""
    from autograder.integrations.student_kit.build import vectors_document
    from autograder.integrations.student_kit.runtime.checking import StoredExpectations
    from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
    from autograder.running import in_notebook
    from autograder.running.notebook_runtime import run_checks

    kit = StoredExpectations(lambda: vectors_from_document(vectors_document()))
    shown = run_checks(kit, "split_heads", {"split_heads": split_features_before_heads}, "en", include_hidden=False,
                       seed=None, diagnose=True)
    full = run_checks(in_notebook.ReferenceExpectations(), "split_heads", {"split_heads": split_features_before_heads},
                      "en", include_hidden=False, seed=in_notebook.DEFAULT_SEED, diagnose=True)
    assert [result.departure for result in shown] == [result.departure for result in full]
    assert any("with its axes in the order batch, tokens, features, heads" in result.departure for result in shown)
