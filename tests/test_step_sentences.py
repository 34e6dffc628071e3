"""Rung 2's sentences about a departing step are true of the code they speak to (issue 58, items 2 and 5): read from
set F's hand-scoring (tests/evalsets/learners_2026_12c/SCORE-03-04.md), each attempt here is written as a near-copy
of the reference with one change, beside a control whose true description is kept."""

import pytest
import torch
from torch import nn

from attnkit import solutions
from tests.test_departure import departure_of, departure_on
from tests.test_rung_truth import lines
from tests.test_true_sentences import printed


def printed_in(lang, exercise_id, *attempt, hint=2):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTNKIT_LANG", lang)
        return printed(exercise_id, *attempt, hint=hint)

# ---------------------------------------------------------- 1. a mask in another encoding hides the same entries


def causal_mask_additive(num_tokens):
    """The notes' triangle, as the additive float mask (-inf where hidden, 0 elsewhere) instead of True/False."""
    return torch.triu(torch.full((num_tokens, num_tokens), -torch.inf), diagonal=1)


def causal_mask_additive_with_diagonal(num_tokens):  # control: -inf on the diagonal too, other entries hidden
    return torch.triu(torch.full((num_tokens, num_tokens), -torch.inf), diagonal=0)


def causal_mask_with_diagonal(num_tokens):  # control: a real wrong mask, in the notes' encoding
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=0).bool()


def test_a_mask_in_another_encoding_is_said_to_set_apart_the_same_entries():
    text = lines(departure_of("causal_mask", causal_mask_additive))
    assert "hides" not in text["en"] and "遮住" not in text["zh"], text
    assert "the same entries as the notes' causal mask, with other values: -inf where the notes' hold 1" in text["en"]
    assert "完全相同，只是取值不同：笔记中为 1 的地方是 -inf" in text["zh"], text


def test_a_mask_that_hides_other_entries_is_not_said_to_set_apart_the_same_ones():
    text = lines(departure_of("causal_mask", causal_mask_additive_with_diagonal))
    assert "hides" not in text["en"] and "keep" not in text["en"] and "遮住" not in text["zh"], text
    assert "same entries" not in text["en"], text


def test_a_wrong_mask_in_the_notes_encoding_keeps_its_description():
    text = lines(departure_of("causal_mask", causal_mask_with_diagonal))
    assert "on the main diagonal (column j = row i) flipped" in text["en"], text
    assert "主对角线上" in text["zh"], text


# ---------------------------------------------------------------------------- 2. NaN entries are no hidden entries


def renormalise(attn_weights):  # the notes' first route, right
    n = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(n, n, dtype=attn_weights.dtype))
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_shifted_by_the_minimum(attn_scores):
    """The notes' -inf route with a softmax by hand that shifts by the row minimum (-inf): NaN in every row that
    has a future, +inf where the notes keep entries."""
    masked = attn_scores.masked_fill(causal_mask(attn_scores.shape[-1]), -torch.inf)
    exps = torch.exp(masked - masked.min(dim=-1, keepdim=True).values)
    return exps / exps.sum(dim=-1, keepdim=True)


def neg_inf_softmax_over_the_queries(attn_scores):  # control: NaN-free wrong weights
    masked = attn_scores.masked_fill(causal_mask(attn_scores.shape[-1]), -torch.inf)
    return torch.softmax(masked, dim=0)


def causal_mask(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()


def test_nan_weights_are_said_as_nan_not_as_hidden_entries():
    text = lines(departure_on("masking_routes.neg_inf_notes", renormalise, neg_inf_shifted_by_the_minimum))
    assert "hides" not in text["en"] and "遮住" not in text["zh"], text
    assert "holds NaN in 15 entries (in rows 0–4), where the notes' attention weights hold numbers" in text["en"]
    assert "有 15 个元素是 NaN（在第 0–4 行）" in text["zh"], text


def test_nan_free_wrong_weights_keep_their_description():
    text = lines(departure_on("masking_routes.neg_inf_notes", renormalise, neg_inf_softmax_over_the_queries))
    assert "NaN" not in text["en"], text
    assert "sums to 1 along dimension 0" in text["en"] and "沿第 0 个维度加起来等于 1" in text["zh"], text


# ------------------------------------------------------------- 3. a raise is placed before the step it did not reach


class ScaledByTorchSqrtOfAnInt(solutions.MultiHeadAttention):
    """The reference with torch.sqrt of an int at the scaling: it raises there, after the mask. On the notes' heads
    of size 1 its masked scores are the notes' (and the scaled scores of the route that masks first)."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / torch.sqrt(self.head_dim), dim=-1))
        return self.out_proj(solutions.merge_heads(attn_weights @ values))


class MaskedByAFloatMask(solutions.MultiHeadAttention):
    """Control: the reference with the float buffer as the mask: it raises at the mask, before any scaling."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(solutions.merge_heads(attn_weights @ values))


def departure_lines(exercise_id, *attempt):
    """The first rung-2 departure line (the notes' case) in each language."""
    return {lang: next(line for line in printed_in(lang, exercise_id, *attempt).splitlines()
                       if label in line) for lang, label in (("en", "where it departs"), ("zh", "从哪里开始不同"))}


def test_code_that_raises_at_the_scaling_is_not_said_to_raise_before_its_masked_scores():
    text = departure_lines("multi_head_attention", ScaledByTorchSqrtOfAnInt)
    assert "before any of its tensors held the notes' attention weights" in text["en"], text
    assert "masked attention scores" not in text["en"], text
    assert "注意力权重" in text["zh"] and "填入掩码后的注意力分数" not in text["zh"], text


def test_code_that_raises_at_the_mask_is_still_said_to_raise_before_its_scaled_scores():
    """...and before the masked scores, which the notes' route makes first (tests/test_departure_raised_order.py)."""
    text = departure_lines("multi_head_attention", MaskedByAFloatMask)
    # On the notes' heads of size 1 its scores hold the scaled scores' numbers too: said held, proving nothing, never
    # "before any of its tensors held the notes' scaled attention scores" (12t's tz-ma-01, tests/test_true_sentences).
    assert ("attention scores; on this case a tensor of yours has the numbers of the notes' scaled attention scores "
            "too, though they prove nothing") in text["en"], text
    assert "before any of its tensors held" not in text["en"], text
    assert "笔记中的缩放后的注意力分数相同，但这些数值说明不了什么" in text["zh"], text


# ------------------------------------------------ 4. a conversion departs where its input bias is not the notes'


def converted(mha, in_bias, out_bias):
    """The reference's conversion, with the input bias and the output projection's bias given."""
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True)
    torch_mha = torch_mha.to(dtype=mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=0))
        torch_mha.in_proj_bias.copy_(in_bias)
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(out_bias)
    return torch_mha


def to_torch_with_zero_input_bias(mha):  # in_proj_bias zeros even where our layers have biases
    return converted(mha, torch.zeros(3 * mha.d_out), mha.out_proj.bias)


def to_torch_with_zero_output_bias(mha):  # control: out_proj's bias left at zeros, the input bias right
    biases = [p.bias if p.bias is not None else torch.zeros(mha.d_out) for p in (mha.W_query, mha.W_key, mha.W_value)]
    return converted(mha, torch.cat(biases), torch.zeros(mha.d_out))


def test_a_conversion_with_the_wrong_input_bias_departs_there_not_at_the_output_projection():
    text = departure_lines("torch_equivalence", to_torch_with_zero_input_bias)
    assert "output projection" not in text["en"], text
    assert "then departs from them at the projection biases stacked as one input bias" in text["en"], text
    assert "从堆叠成一个输入偏置的三个投影偏置开始不同" in text["zh"], text


def test_a_conversion_with_the_wrong_output_bias_still_departs_at_the_output_projection():
    text = departure_lines("torch_equivalence", to_torch_with_zero_output_bias)
    assert "departs from them at the output projection's output" in text["en"], text


# ------------------------------------------------ 5. the advice for a split without transpose presumes no view


def split_heads_viewed_straight(x, num_heads):
    """The reference's split with the view made straight to (b, num_heads, num_tokens, head_dim), no transpose:
    there is no (b, num_tokens, num_heads, head_dim) tensor to swap the axes of."""
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def split_heads_viewed_twice(x, num_heads):  # control: the notes' view made, then read again as the split's shape
    b, num_tokens, d_out = x.shape
    return x.view(b, num_tokens, num_heads, d_out // num_heads).reshape(b, num_heads, num_tokens, d_out // num_heads)


def test_the_split_without_transpose_advice_is_true_of_a_split_viewed_straight_into_heads():
    for attempt in (split_heads_viewed_straight, split_heads_viewed_twice):
        english, chinese = printed_in("en", "split_heads", attempt, hint=3), printed_in("zh", "split_heads", attempt,
                                                                                        hint=3)
        assert "heads split with view but not transposed" in english and "用 view 拆分了头但没有转置" in chinese
        assert "after the view each token holds its heads" not in english, english
        assert "after the view, swap" not in english and "view 之后，交换" not in chinese, chinese
        assert "view 之后每个 token 持有它的各个头" not in chinese, chinese
        assert "read as (batch, heads, tokens, head size) in one go, a head holds pieces of consecutive" in english
        assert "一步读成（batch、头、token、每个头的大小）时" in chinese, chinese


def to_torch_without_an_output_bias(mha):
    """bias=False "as our layers have none", which leaves out_proj without the bias it then copies into."""
    converted = nn.MultiheadAttention(mha.d_out, mha.num_heads, bias=mha.W_query.bias is not None, batch_first=True,
                                      dtype=mha.W_query.weight.dtype)
    with torch.no_grad():
        converted.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        converted.out_proj.weight.copy_(mha.out_proj.weight)
        converted.out_proj.bias.copy_(mha.out_proj.bias)
    return converted


def test_a_conversion_that_copied_the_output_weights_is_told_the_output_it_never_made():
    """The step is what the output projection outputs: "raised before any of its tensors held the notes' output
    projection" read as its weights, which this code had copied (12w's wz-te-06)."""
    text = departure_lines("torch_equivalence", to_torch_without_an_output_bias)
    assert "held the notes' output projection's output" in text["en"], text
    assert "输出投影的输出" in text["zh"], text
