"""Sentences of notebooks 03 and 04 are true of the code they speak to (issue 58, item 5), from attempts written for
this audit, each beside a control that keeps its sentence: a sample run alone whose numbers are right under another
shape is not said to see the other samples; a failure on another device is said to come from tensors made inside
forward only where the probe saw one made there; a fill far below the scores is no entry shown; heads kept apart up to
out_proj are not told to stay independent until out_proj; and where the samples of a batch mix, where dropout acts is
not read from the output, nor is a right weighted sum said to be wrong."""

import torch
from torch import nn

from attnkit import solutions
from tests.test_departure import departure_on
from tests.test_rung_truth import lines
from tests.test_step_sentences import printed_in


class SqueezingCausalAttention(solutions.CausalAttention):
    """The notes' forward, with the batch axis squeezed away at the end: a batch of one comes back as (T, d_out)."""

    def forward(self, x):
        return super().forward(x).squeeze(0)


class BatchMixingCausalAttention(solutions.CausalAttention):
    """Control: each sample's output shifted by the batch's mean, so that samples do see each other."""

    def forward(self, x):
        out = super().forward(x)
        return out + out.mean(dim=0, keepdim=True)


def test_a_sample_with_its_numbers_under_another_shape_is_not_said_to_see_the_others():
    en, zh = printed_in("en", "causal_attention", SqueezingCausalAttention), \
        printed_in("zh", "causal_attention", SqueezingCausalAttention)
    assert "samples must not see each other" not in en, en
    assert "the same numbers as in the whole batch's output, under another shape" in en, en
    assert "数值与整个 batch 输出中的相同，只是形状不同" in zh, zh


def test_samples_that_see_each_other_are_still_said_to():
    en = printed_in("en", "causal_attention", BatchMixingCausalAttention)
    assert "samples must not see each other" in en, en
    assert "under another shape" not in en, en


class WrapperKeepingOutputs(nn.Module):
    """Every call appends its heads' outputs to a list kept on the module and joins the whole list: the CPU
    outputs of earlier calls are still there when the module runs on another device."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])
        self.outputs = []

    def forward(self, x):
        for head in self.heads:
            self.outputs.append(head(x))
        return torch.cat(self.outputs, dim=-1)


class WrapperMakingCpuTensor(solutions.MultiHeadAttentionWrapper):
    """Control: forward adds a tensor it makes without naming a device, so it is made on the CPU."""

    def forward(self, x):
        return super().forward(x) + torch.zeros(x.shape[-2], 1)


def test_a_device_failure_from_kept_state_is_not_said_to_come_from_tensors_made_inside_forward():
    en = printed_in("en", "mha_wrapper", WrapperKeepingOutputs)
    zh = printed_in("zh", "mha_wrapper", WrapperKeepingOutputs)
    assert "after the module moved to meta the forward pass fails" in en, en
    assert "tensors made inside forward stay on the CPU" not in en, en
    assert "在 forward 中新建的张量留在 CPU 上" not in zh and "模块移到 meta 之后前向传播失败" in zh, zh


def test_a_tensor_made_inside_forward_on_the_cpu_is_still_said_to_be():
    en = printed_in("en", "mha_wrapper", WrapperMakingCpuTensor)
    assert "after the module moved to meta" in en, en
    assert "on the CPU" in en, en


# ------------------------------------------- a finite fill that hides the future in effect is no entry "shown"


def neg_inf_route_filling_minus_ten_thousand(attn_scores):
    """Route 2 with the future filled with -10000 instead of -inf, and the softmax taken down the columns."""
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, -1e4), dim=0)


def neg_inf_route_filling_zero(attn_scores):  # control: a 0 fill hides nothing
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, 0.0), dim=-1)


def test_a_fill_far_below_the_scores_is_said_to_set_apart_the_same_entries_not_to_show_them():
    text = lines(departure_on("masking_routes.neg_inf_notes", solutions.causal_weights_renormalised,
                              neg_inf_route_filling_minus_ten_thousand))
    assert "entries that the notes' masked attention scores hide" not in text["en"], text
    assert "sets apart the same entries as the notes' masked attention scores, with other values: -10000 where the " \
        "notes' hold -inf" in text["en"], text
    assert "笔记中为 -inf 的地方是 -10000" in text["zh"], text


def test_a_fill_of_zero_is_still_said_to_show_the_entries_the_notes_hide():
    text = lines(departure_on("masking_routes.neg_inf_notes", solutions.causal_weights_renormalised,
                              neg_inf_route_filling_zero))
    assert "shows 15 entries that the notes' masked attention scores hide" in text["en"], text
    assert "sets apart the same entries" not in text["en"], text


# ------------------------------------ heads kept apart up to out_proj are not said to mix before it


class ReshapedAfterOutProj(solutions.MultiHeadAttention):
    """The notes' forward, then the output's token and feature axes exchanged and read back as (b, T, d_out): the
    heads are apart up to out_proj; what comes after it rearranges the output."""

    def forward(self, x, attention_mask=None):
        out = super().forward(x, attention_mask)
        b, num_tokens, d_out = out.shape
        return out.transpose(1, 2).reshape(b, num_tokens, d_out)


class HeadsMixedBeforeOutProj(solutions.MultiHeadAttention):
    """Control: each head's context vectors shifted by the mean over the heads before the merge."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = solutions.split_heads(self.W_query(x), self.num_heads)
        k = solutions.split_heads(self.W_key(x), self.num_heads)
        v = solutions.split_heads(self.W_value(x), self.num_heads)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        context = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1)) @ v
        context = context + context.mean(dim=1, keepdim=True)
        return self.out_proj(solutions.merge_heads(context))


def test_heads_rearranged_after_out_proj_are_not_said_to_mix_before_it():
    en = printed_in("en", "multi_head_attention", ReshapedAfterOutProj)
    zh = printed_in("zh", "multi_head_attention", ReshapedAfterOutProj)
    assert "heads must stay independent until out_proj" not in en, en
    assert "although what your forward passes to out_proj keeps the heads apart: the output is rearranged after " \
        "out_proj" in en, en
    assert "输出是在 out_proj 之后被重新排列的" in zh, zh


def test_heads_mixed_before_out_proj_are_still_said_to():
    en = printed_in("en", "multi_head_attention", HeadsMixedBeforeOutProj)
    assert "heads must stay independent until out_proj" in en, en
    assert "rearranged after out_proj" not in en, en


# ------------------------ a forward that mixes the batch's samples: nothing read from its training-mode output


class BatchAveragingCausalAttention(solutions.CausalAttention):
    """The notes' forward, dropout on the weights included, then every sample's output replaced by the batch mean."""

    def forward(self, x):
        out = super().forward(x)
        return out.mean(dim=0, keepdim=True).expand_as(out)


class DropoutOnOutputCausalAttention(solutions.CausalAttention):
    """Control: dropout on the context vectors instead of the attention weights."""

    def forward(self, x):
        b, num_tokens, _ = x.shape
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.d_out ** 0.5, dim=-1)
        return self.dropout(weights @ self.W_value(x))


def test_dropout_on_the_weights_is_not_said_to_act_elsewhere_when_the_samples_mix_after_it():
    en = printed_in("en", "causal_attention", BatchAveragingCausalAttention, hint=3)
    zh = printed_in("zh", "causal_attention", BatchAveragingCausalAttention, hint=3)
    assert "dropout applied to something other than the attention weights" not in en, en
    assert "in the weighted sum of the values" not in en, en
    assert "samples must not see each other" in en, en
    assert "it is not their weighted sum of the values" in en, en
    assert "它不是用这些权重对 values 的加权求和" in zh, zh


def test_dropout_on_the_output_is_still_named():
    en = printed_in("en", "causal_attention", DropoutOnOutputCausalAttention, hint=3)
    assert "dropout applied to something other than the attention weights" in en, en


# ------------------------------ right numbers under another shape: no "where your result first differs" pointer


class TransposedOutputCausalAttention(solutions.CausalAttention):
    """Control: the weighted sum taken as values^T @ weights^T, (b, d_out, T): other numbers in every row shown."""

    def forward(self, x):
        b, num_tokens, _ = x.shape
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.d_out ** 0.5, dim=-1))
        return self.W_value(x).transpose(1, 2) @ weights.transpose(1, 2)


def test_the_same_numbers_under_another_shape_are_not_said_to_differ_somewhere():
    en = printed_in("en", "causal_attention", SqueezingCausalAttention, hint=3)
    zh = printed_in("zh", "causal_attention", SqueezingCausalAttention, hint=3)
    assert "the numbers are right, but the output has shape (21, 6)" in en, en
    assert "(the values above)" not in en, en
    assert "Start from what the message above says of your result" in en, en
    assert "（上面的数值）" not in zh, zh


def test_other_numbers_are_still_pointed_at():
    en = printed_in("en", "causal_attention", TransposedOutputCausalAttention, hint=3)
    assert "(the values above)" in en, en
