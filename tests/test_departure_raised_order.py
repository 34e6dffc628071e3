"""Code that makes the notes' steps in another order and raises at a later one is said to raise there (issue 58: a
forward that projected the keys first and split them with the wrong head size was told it raised before the queries,
the notes' first step, which it never reached).

departure._raised_out_of_order: the op that raised read the learner's tensor proven to hold a later step (their
values); the step it raised at is the first later step no tensor holds whose numbers are that step's rearranged.
"""



import torch

from attnkit import solutions
from autograder.checking.feedback import table
from autograder.course import catalog
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from tests.test_departure_first_step import SEED, departures


class ValuesFirstSplitTooWide(solutions.MultiHeadAttention):
    """A learner's forward: the values made and split first, each head one feature too wide."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim + 1).transpose(1, 2)
        return super().forward(x, attention_mask) + values.sum()


class QueriesSplitTooWide(solutions.MultiHeadAttention):
    """The same slip in the notes' order: the queries made first and split one feature too wide."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim + 1)
        return super().forward(x, attention_mask) + queries.sum()


def test_a_raise_at_a_later_step_made_first_is_said_at_that_step():
    found = departures("multi_head_attention", {"MultiHeadAttention": ValuesFirstSplitTooWide})
    assert found["en"] and found["zh"]
    for line in found["en"]:
        assert ("your code reproduces the notes' values; then it raised before any of its tensors held the notes' "
                "values split into heads; it raised in an operation on your values") in line, line
        assert "queries" not in line
    for line in found["zh"]:
        assert ("你的代码算出了与笔记相同的value；之后，在它算出的张量中还没有一个等于笔记中的拆分成多个头的 value"
                "时") in line, line


def test_the_notes_order_and_a_right_program_keep_their_sentences():
    found = departures("multi_head_attention", {"MultiHeadAttention": QueriesSplitTooWide})
    assert found["en"] and not any("values split into heads" in line for line in found["en"])
    assert departures("multi_head_attention", {"MultiHeadAttention": solutions.MultiHeadAttention}) == {"en": [],
                                                                                                       "zh": []}


class MaskCutOnRowsOnly(solutions.CausalAttention):
    """A learner's forward: the stored mask cut to the input's rows but not its columns, filled before the scaling
    (the notes' order): an input shorter than context_length raises at the fill."""

    def forward(self, x):
        _b, num_tokens, _d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens], float("-inf"))
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ values


def test_a_raise_before_the_scaling_and_the_mask_names_both_steps_either_route_may_take_first():
    """The notes fill the mask before they scale; the steps declare the scaled scores first (both routes are taught):
    code that raised at the fill is told it raised before either, never as if it should have scaled first."""
    found = departures("causal_attention", {"CausalAttention": MaskCutOnRowsOnly})
    assert found["en"] and found["zh"]
    for line in found["en"]:
        assert ("then it raised before any of its tensors held the notes' scaled attention scores or their masked "
                "attention scores") in line, line
    for line in found["zh"]:
        assert "缩放后的注意力分数或填入掩码后的注意力分数" in line, line


class PaddingOnOneAxisOnly(solutions.MultiHeadAttention):
    """A learner's forward: the padding selection given one new axis only, (b, 1, num_tokens): with as many sequences
    as heads the batch lands on the head axis (wrong values at the masked scores); with another count it raises."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        heads = [self.W_query(x), self.W_key(x), self.W_value(x)]
        queries, keys, values = (t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2) for t in heads)
        scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            scores = scores.masked_fill((attention_mask == 0)[:, None, :], torch.finfo(scores.dtype).min)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


def test_a_raise_before_a_step_or_the_next_folds_under_a_check_departing_at_the_next():
    """One check departs at the masked scores in value, another raised before the scaled scores or the masked ones:
    one cause, one row, at the masked scores (learners_2026_12m z-pm-07, after the measure)."""
    results = run_checks(in_notebook.ReferenceExpectations(), "padding_mask",
                         {"MultiHeadAttention": PaddingOnOneAxisOnly}, "en", include_hidden=False, seed=SEED,
                         diagnose=True)
    failing = [result for result in results if result.status != "passed"]
    assert len(failing) >= 2 and any(result.status == "error" for result in failing), failing
    assert {result.departure_step for result in failing} == {"masked_scores"}, [r.departure for r in failing]
    text = table(EXERCISES_BY_ID["padding_mask"], failing, "en", hidden=False, messages=catalog.MESSAGES, rung=2)
    assert "more check fails for the same reason" in text, text
