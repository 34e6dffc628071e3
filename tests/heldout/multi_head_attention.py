"""Held-out attempts at notebook 04 (the wrapper, exercise 3.2, split/merge, MultiHeadAttention with and without
padding, nn.MultiheadAttention, counting parameters)."""

import torch
from torch import nn

from tests.heldout import CORRECT, NONE_KNOWN, Attempt

# ---- given in the notebook


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


def causal_mask(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)


def padding_fill_value(dtype):
    return torch.finfo(dtype).min


# The learner's own split/merge (right), which their MultiHeadAttention.forward calls.


def split_heads(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


def merge_heads(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim)


class GivenMHA(nn.Module):
    """The notebook's MultiHeadAttention __init__ (given); the learner writes forward."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


# ---- 04-1 MultiHeadAttentionWrapper


class WrapperPythonList(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperOneHeadRepeated(nn.Module):
    # [head] * num_heads: the same module num_heads times
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperCatTokens(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=1)


class WrapperStack(WrapperCatTokens):
    # stack instead of cat: (b, num_tokens, d_out, num_heads)
    def forward(self, x):
        return torch.stack([head(x) for head in self.heads], dim=-1)


class WrapperBiasDropped(nn.Module):
    # qkv_bias accepted and never passed on
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperHeadsShareDOut(nn.Module):
    # mixed up with the split version: each head gets d_out // num_heads
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperCorrect(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias))

    def forward(self, x):
        outputs = [head(x) for head in self.heads]
        return torch.cat(outputs, dim=2)


# ---- 04-1b two_dimensional_wrapper (with the learner's right wrapper)

MultiHeadAttentionWrapper = WrapperCorrect


def two_dimensional_d_out_2(d_in, context_length, dropout):
    # d_out=2 "for 2 features": 2 heads of 2 give 4
    return MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)


def two_dimensional_one_head(d_in, context_length, dropout):
    return MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=1)


def two_dimensional_dropout_zero(d_in, context_length, dropout):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)


def two_dimensional_keywords_correct(d_in, context_length, dropout):
    return MultiHeadAttentionWrapper(d_in=d_in, d_out=1, context_length=context_length, dropout=dropout,
                                     num_heads=2)


# ---- 04-2 split_heads


def split_view_only(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def split_float_head_dim(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out / num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


def split_dims_swapped(x, num_heads):
    # (head_dim, num_heads) instead of (num_heads, head_dim)
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return x.view(b, num_tokens, head_dim, num_heads).permute(0, 3, 1, 2)


def split_wrong_axes(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(2, 3)


def split_in_place(x, num_heads):
    # transpose_ on the input itself, then a reshape of that
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    x.transpose_(1, 2)
    return x.reshape(b, num_heads, head_dim, num_tokens).transpose(2, 3)


def split_unflatten_correct(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)


def split_reshape_permute_correct(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_tokens, num_heads, d_out // num_heads).permute(0, 2, 1, 3)


# ---- 04-3 merge_heads


def merge_view_after_transpose(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).view(b, num_tokens, num_heads * head_dim)


def merge_no_transpose(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.reshape(b, num_tokens, num_heads * head_dim)


def merge_cat_tokens(x):
    # one head after another along the token axis
    return torch.cat(x.unbind(1), dim=1)


def merge_transpose_last_two(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(2, 3).reshape(b, num_tokens, num_heads * head_dim)


def merge_permute_flatten_correct(x):
    return x.permute(0, 2, 1, 3).flatten(2)


def merge_cat_heads_correct(x):
    # heads side by side along the features
    return torch.cat(x.unbind(1), dim=-1)


# ---- 04-4 MultiHeadAttention.forward


class MHAKeysTranspose12(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHANoOutProj(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return merge_heads(attn_weights @ values)


class MHAScaleByDOut(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.d_out**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHAFullMask(GivenMHA):
    def forward(self, x, attention_mask=None):
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHADropoutAfterOutProj(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        return self.dropout(self.out_proj(merge_heads(attn_weights @ values)))


class MHAInlineViewAfterTranspose(GivenMHA):
    # everything inline; the merge is transpose then .view
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context = (attn_weights @ values).transpose(1, 2).view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class MHAMergeWithoutTranspose(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context = (attn_weights @ values).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class MHATruncatesBuffer(GivenMHA):
    # cuts the buffer itself to num_tokens, for good
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        self.mask = self.mask[:num_tokens, :num_tokens]
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHAFloatHeadDim(GivenMHA):
    # computed head_dim again in forward, with /
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        head_dim = self.d_out / self.num_heads
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / head_dim**0.5, dim=-1))
        return self.out_proj((attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


class MHASoftmaxDimMinus2(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-2))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHANoScale(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class MHAInlineCorrect(GivenMHA):
    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape

        def heads(t):
            return t.reshape(b, num_tokens, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        queries, keys, values = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        scores = queries @ keys.transpose(-1, -2) / self.head_dim**0.5
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens].bool(), float("-inf"))
        weights = self.dropout(scores.softmax(-1))
        return self.out_proj((weights @ values).permute(0, 2, 1, 3).reshape(b, num_tokens, self.d_out))


class MHAHelpersCorrect(GivenMHA):
    # the learner's split_heads/merge_heads, and the padding step of 04-5 too
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
            attn_scores = attn_scores.masked_fill(padded, padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


# ---- 04-5 padding in MultiHeadAttention.forward: the 04-4 forward is right, only the padding step differs


class PaddingBase(GivenMHA):
    def padding(self, attn_scores, attention_mask):
        raise NotImplementedError

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = self.padding(attn_scores, attention_mask)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


class PaddingNegInf(PaddingBase):
    def padding(self, attn_scores, attention_mask):
        return attn_scores.masked_fill(attention_mask[:, None, None, :] == 0, -torch.inf)


class PaddingQueriesMasked(PaddingBase):
    # the padding selection put on the query axis
    def padding(self, attn_scores, attention_mask):
        padded = (attention_mask == 0)[:, None, :, None]
        return attn_scores.masked_fill(padded, padding_fill_value(attn_scores.dtype))


class PaddingInverted(PaddingBase):
    # filled where attention_mask is 1, the real tokens
    def padding(self, attn_scores, attention_mask):
        return attn_scores.masked_fill(attention_mask.bool()[:, None, None, :], padding_fill_value(attn_scores.dtype))


class PaddingFillZero(PaddingBase):
    def padding(self, attn_scores, attention_mask):
        return attn_scores.masked_fill(attention_mask[:, None, None, :] == 0, 0.0)


class PaddingNoHeadAxis(PaddingBase):
    # unsqueeze(1) only: (b, 1, num_tokens) lines up with (heads, queries, keys), not (b, ..., keys)
    def padding(self, attn_scores, attention_mask):
        return attn_scores.masked_fill(attention_mask.unsqueeze(1) == 0, padding_fill_value(attn_scores.dtype))


class PaddingFloat32Fill(PaddingBase):
    # the fill value of float32 whatever the scores' dtype
    def padding(self, attn_scores, attention_mask):
        return attn_scores.masked_fill(attention_mask[:, None, None, :] == 0, padding_fill_value(torch.float32))


class PaddingWeightsZeroed(GivenMHA):
    # hides padding after the softmax by multiplying the weights, no renormalising
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        if attention_mask is not None:
            attn_weights = attn_weights * attention_mask[:, None, None, :].to(attn_weights.dtype)
        attn_weights = self.dropout(attn_weights)
        return self.out_proj(merge_heads(attn_weights @ values))


class PaddingAfterCausalCorrect(GivenMHA):
    # the other order, which the notebook accepts
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        if attention_mask is not None:
            padded = ~attention_mask.bool()
            attn_scores = attn_scores.masked_fill(padded[:, None, None, :], padding_fill_value(attn_scores.dtype))
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))


# ---- 04-6 to_torch_multihead


def _torch_mha(mha):
    return nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True).to(
        dtype=mha.out_proj.weight.dtype, device=mha.out_proj.weight.device)


def _bias(layer):
    return layer.bias if layer.bias is not None else torch.zeros_like(layer.weight[:, 0])


def torch_mha_columns(mha):
    # stacked along dim 1
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=1))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_key_first(mha):
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_key.weight, mha.W_query.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_key), _bias(mha.W_query), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_bias_none(mha):
    # cat of the biases as they are: None when qkv_bias=False
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_transposed(mha):
    # "x @ W": transposed each weight before stacking
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight.T, mha.W_key.weight.T, mha.W_value.weight.T]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_no_out_proj(mha):
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
    return torch_mha


def torch_mha_no_value_error(mha):
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_default_dtype(mha):
    # never moved to mha's dtype and device
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_no_dropout(mha):
    # dropout left at its default, 0.0
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    weight = mha.out_proj.weight
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, bias=True, batch_first=True).to(
        dtype=weight.dtype, device=weight.device)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def torch_mha_out_proj_shared(mha):
    # out_proj assigned, not copied: the torch module now holds our out_proj itself
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = _torch_mha(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([_bias(mha.W_query), _bias(mha.W_key), _bias(mha.W_value)]))
    torch_mha.out_proj.weight = mha.out_proj.weight
    torch_mha.out_proj.bias = mha.out_proj.bias
    return torch_mha


def torch_mha_state_dict_correct(mha):
    d_out = mha.d_out
    if mha.W_query.weight.shape[1] != d_out:
        raise ValueError(f"nn.MultiheadAttention needs d_in == d_out, got d_in={mha.W_query.weight.shape[1]}")
    layers = (mha.W_query, mha.W_key, mha.W_value)
    biases = [layer.bias if layer.bias is not None else mha.out_proj.bias.new_zeros(d_out) for layer in layers]
    torch_mha = nn.MultiheadAttention(d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True,
                                      device=mha.out_proj.weight.device, dtype=mha.out_proj.weight.dtype)
    torch_mha.load_state_dict({
        "in_proj_weight": torch.cat([layer.weight for layer in layers], dim=0),
        "in_proj_bias": torch.cat(biases),
        "out_proj.weight": mha.out_proj.weight,
        "out_proj.bias": mha.out_proj.bias,
    })
    return torch_mha


# ---- 04-7 count_parameters


def count_state_dict(module):
    # "everything the module stores"
    return sum(tensor.numel() for tensor in module.state_dict().values())


def count_all_parameters(module):
    # requires_grad never looked at: frozen layers counted
    return sum(p.numel() for p in module.parameters())


def count_tensors(module):
    return len(list(module.parameters()))


def count_own_parameters(module):
    # recurse=False: only the module's own, none of its children's
    return sum(p.numel() for p in module.parameters(recurse=False) if p.requires_grad)


def count_per_module(module):
    # walks the modules by hand: a parameter shared by two modules is counted twice
    total = 0
    for submodule in module.modules():
        for p in submodule.parameters(recurse=False):
            if p.requires_grad:
                total += p.numel()
    return total


def count_weights_only(module):
    # counts the weight matrices, thinks biases are not parameters
    return sum(p.numel() for name, p in module.named_parameters() if p.requires_grad and name.endswith("weight"))


def count_named_correct(module):
    return sum(p.numel() for _, p in module.named_parameters() if p.requires_grad)


def count_filter_correct(module):
    trainable = filter(lambda p: p.requires_grad, module.parameters())
    return int(sum(p.nelement() for p in trainable))


ATTEMPTS = (
    Attempt("wrapper_python_list", "mha_wrapper", (WrapperPythonList,), "heads_plain_list", "heads in a Python list"),
    Attempt("wrapper_one_head_repeated", "mha_wrapper", (WrapperOneHeadRepeated,), "heads_shared",
            "ModuleList([head] * num_heads): one module repeated"),
    Attempt("wrapper_cat_tokens", "mha_wrapper", (WrapperCatTokens,),
            "heads_on_token_axis", "cat along dim=1, the tokens"),
    Attempt("wrapper_stack", "mha_wrapper", (WrapperStack,), "heads_stacked", "torch.stack(..., dim=-1)"),
    Attempt("wrapper_bias_dropped", "mha_wrapper", (WrapperBiasDropped,), "qkv_bias_ignored",
            "qkv_bias never passed to the heads"),
    Attempt("wrapper_heads_share_d_out", "mha_wrapper", (WrapperHeadsShareDOut,), "d_out_is_total",
            "each head built with d_out // num_heads"),
    Attempt("wrapper_append", "mha_wrapper", (WrapperCorrect,), CORRECT, "ModuleList().append in a loop, cat dim=2"),
    Attempt("two_d_d_out_2", "two_dimensional_wrapper", (two_dimensional_d_out_2,), "d_out_is_total",
            "d_out=2 with 2 heads (4 features)"),
    Attempt("two_d_one_head", "two_dimensional_wrapper", (two_dimensional_one_head,), "heads_traded_for_width",
            "num_heads=1, d_out=2"),
    Attempt("two_d_dropout_zero", "two_dimensional_wrapper", (two_dimensional_dropout_zero,), NONE_KNOWN,
            "dropout fixed at 0.0 instead of the argument"),
    Attempt("two_d_keywords", "two_dimensional_wrapper", (two_dimensional_keywords_correct,), CORRECT,
            "keyword arguments, d_out=1"),
    Attempt("split_view_only", "split_heads", (split_view_only,), "split_without_transpose",
            "view straight to (b, num_heads, num_tokens, head_dim)"),
    Attempt("split_float_head_dim", "split_heads", (split_float_head_dim,), NONE_KNOWN,
            "head_dim = d_out / num_heads"),
    Attempt("split_dims_swapped", "split_heads", (split_dims_swapped,), "split_wrong_axes",
            "view as (head_dim, num_heads), then permute"),
    Attempt("split_wrong_axes", "split_heads", (split_wrong_axes,), "split_wrong_axes", "transpose(2, 3)"),
    Attempt("split_in_place", "split_heads", (split_in_place,), "input_edited_in_place", "transpose_ on the input"),
    Attempt("split_unflatten", "split_heads", (split_unflatten_correct,), CORRECT, "unflatten(-1, (h, -1))"),
    Attempt("split_reshape_permute", "split_heads", (split_reshape_permute_correct,), CORRECT,
            "reshape then permute(0, 2, 1, 3)"),
    Attempt("merge_view_after_transpose", "merge_heads", (merge_view_after_transpose,), NONE_KNOWN,
            "transpose then .view"),
    Attempt("merge_no_transpose", "merge_heads", (merge_no_transpose,), "merge_without_transpose",
            "reshape without the transpose"),
    Attempt("merge_cat_tokens", "merge_heads", (merge_cat_tokens,),
            "heads_on_token_axis", "heads cat along the tokens"),
    Attempt("merge_transpose_last_two", "merge_heads", (merge_transpose_last_two,), "merge_wrong_axes",
            "transpose(2, 3) then reshape"),
    Attempt("merge_permute_flatten", "merge_heads", (merge_permute_flatten_correct,), CORRECT,
            "permute then flatten(2)"),
    Attempt("merge_cat_heads", "merge_heads", (merge_cat_heads_correct,), CORRECT, "cat(x.unbind(1), dim=-1)"),
    Attempt("mha_keys_transpose_1_2", "multi_head_attention", (MHAKeysTranspose12,), NONE_KNOWN,
            "keys.transpose(1, 2) on 4 axes"),
    Attempt("mha_no_out_proj", "multi_head_attention", (MHANoOutProj,), "missing_out_proj", "forgot self.out_proj"),
    Attempt("mha_scale_by_d_out", "multi_head_attention", (MHAScaleByDOut,), "scale_by_d_out", "sqrt(d_out)"),
    Attempt("mha_full_mask", "multi_head_attention", (MHAFullMask,),
            "mask_not_truncated", "mask not cut to num_tokens"),
    Attempt("mha_dropout_after_out_proj", "multi_head_attention", (MHADropoutAfterOutProj,), "dropout_not_on_weights",
            "dropout on the output"),
    Attempt("mha_inline_view_after_transpose", "multi_head_attention", (MHAInlineViewAfterTranspose,),
            NONE_KNOWN, "inline merge: transpose then .view"),
    Attempt("mha_merge_without_transpose", "multi_head_attention", (MHAMergeWithoutTranspose,),
            "merge_without_transpose", "merge as contiguous().view without the transpose"),
    Attempt("mha_truncates_buffer", "multi_head_attention", (MHATruncatesBuffer,), "state_changed_by_forward",
            "self.mask = self.mask[:n, :n] in forward"),
    Attempt("mha_float_head_dim", "multi_head_attention", (MHAFloatHeadDim,), NONE_KNOWN,
            "head_dim = d_out / num_heads in forward"),
    Attempt("mha_softmax_dim_minus_2", "multi_head_attention", (MHASoftmaxDimMinus2,), "softmax_wrong_dim",
            "softmax over dim=-2"),
    Attempt("mha_no_scale", "multi_head_attention", (MHANoScale,), "missing_scaling", "forgot to scale"),
    Attempt("mha_inline", "multi_head_attention", (MHAInlineCorrect,), CORRECT,
            "inline reshape/permute, scaled before the fill"),
    Attempt("mha_helpers", "multi_head_attention", (MHAHelpersCorrect,), CORRECT,
            "split_heads/merge_heads, padding step included"),
    Attempt("padding_neg_inf", "padding_mask", (PaddingNegInf,), "padding_neg_inf", "padding filled with -inf"),
    Attempt("padding_queries_masked", "padding_mask", (PaddingQueriesMasked,), "padding_query_axis",
            "padding put on the query axis"),
    Attempt("padding_inverted", "padding_mask", (PaddingInverted,), "padding_inverted",
            "filled where the mask is 1"),
    Attempt("padding_fill_zero", "padding_mask", (PaddingFillZero,), "padding_fill_too_high", "padding filled with 0"),
    Attempt("padding_no_head_axis", "padding_mask", (PaddingNoHeadAxis,), NONE_KNOWN,
            "unsqueeze(1) only"),
    Attempt("padding_float32_fill", "padding_mask", (PaddingFloat32Fill,), NONE_KNOWN,
            "finfo(float32).min whatever the dtype"),
    Attempt("padding_weights_zeroed", "padding_mask", (PaddingWeightsZeroed,), NONE_KNOWN,
            "weights multiplied by the mask after the softmax"),
    Attempt("padding_after_causal", "padding_mask", (PaddingAfterCausalCorrect,), CORRECT,
            "padding filled after the causal -inf (the accepted order)"),
    Attempt("padding_helpers", "padding_mask", (MHAHelpersCorrect,), CORRECT, "(attention_mask == 0).view(b,1,1,n)"),
    Attempt("torch_columns", "torch_equivalence", (torch_mha_columns,), NONE_KNOWN,
            "stacked along dim=1"),
    Attempt("torch_key_first", "torch_equivalence", (torch_mha_key_first,), "in_proj_order", "key, query, value"),
    Attempt("torch_bias_none", "torch_equivalence", (torch_mha_bias_none,), NONE_KNOWN,
            "cat of None biases without qkv_bias"),
    Attempt("torch_transposed", "torch_equivalence", (torch_mha_transposed,), NONE_KNOWN,
            "each weight transposed before stacking"),
    Attempt("torch_no_out_proj", "torch_equivalence", (torch_mha_no_out_proj,), NONE_KNOWN,
            "out_proj never copied"),
    Attempt("torch_no_value_error", "torch_equivalence", (torch_mha_no_value_error,), NONE_KNOWN,
            "no ValueError when d_in != d_out"),
    Attempt("torch_default_dtype", "torch_equivalence", (torch_mha_default_dtype,), NONE_KNOWN,
            "never moved to mha's dtype/device"),
    Attempt("torch_no_dropout", "torch_equivalence", (torch_mha_no_dropout,), NONE_KNOWN,
            "dropout left at 0.0"),
    Attempt("torch_out_proj_shared", "torch_equivalence", (torch_mha_out_proj_shared,), NONE_KNOWN,
            "out_proj's parameters assigned, shared with ours"),
    Attempt("torch_state_dict", "torch_equivalence", (torch_mha_state_dict_correct,), CORRECT,
            "load_state_dict with the stacked tensors, device/dtype at construction"),
    Attempt("count_state_dict", "parameter_counts", (count_state_dict,), "counts_buffers",
            "summed the state_dict: buffers counted"),
    Attempt("count_all_parameters", "parameter_counts", (count_all_parameters,), "counts_frozen",
            "frozen parameters counted"),
    Attempt("count_tensors", "parameter_counts", (count_tensors,), NONE_KNOWN,
            "len(list(parameters())): tensors, not numbers"),
    Attempt("count_own_parameters", "parameter_counts", (count_own_parameters,), NONE_KNOWN,
            "parameters(recurse=False): children never counted"),
    Attempt("count_per_module", "parameter_counts", (count_per_module,), NONE_KNOWN,
            "by hand over modules(): a shared parameter counted twice"),
    Attempt("count_weights_only", "parameter_counts", (count_weights_only,), NONE_KNOWN,
            "only the weights, biases left out"),
    Attempt("count_named", "parameter_counts", (count_named_correct,), CORRECT,
            "named_parameters with requires_grad"),
    Attempt("count_filter", "parameter_counts", (count_filter_correct,), CORRECT, "filter + nelement"),
)

__all__ = ["ATTEMPTS", "CORRECT", "NONE_KNOWN"]
