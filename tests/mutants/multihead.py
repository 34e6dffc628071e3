"""Student-style implementations for notebook 04: the book's code, correct rewrites and known mistakes.

Written the way a student fills in the notebook: the book's names and idioms, the study notes'
shortcuts. MultiHeadAttention mutants keep the given __init__ (`GivenMultiHeadAttention`) and
write their own forward, as the exercise asks.
"""

import torch
import torch.nn.functional as F
from torch import nn

# ---------------------------------------------------------------------------------------------
# The given pieces: CausalAttention from notebook 03, MultiHeadAttention's __init__, the padding fill.


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
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


class CausalAttentionUnscaled(CausalAttention):
    """A head from a notebook 03 that forgot the scaling: the wrapper on top of it is fine."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return torch.softmax(attn_scores, dim=-1) @ values


def padding_fill_value(dtype):
    return torch.finfo(dtype).min


class GivenMultiHeadAttention(nn.Module):
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


# ---------------------------------------------------------------------------------------------
# mha_wrapper


class WrapperBook(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperReseededHeads(nn.Module):
    """Every head built under the same seed "for reproducibility": all heads start, and stay, identical."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        heads = []
        for _ in range(num_heads):
            torch.manual_seed(123)
            heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))
        self.heads = nn.ModuleList(heads)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class WrapperAppendLoop(nn.Module):
    """Correct, with an explicit loop and append instead of a comprehension."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        return torch.cat(outputs, dim=2)


class WrapperTokenAxis(WrapperBook):
    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=1)


class WrapperFirstAxis(WrapperBook):
    """The study notes' torch.cat(..., dim=0), copied onto a batched input."""

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=0)


class WrapperStacked(WrapperBook):
    def forward(self, x):
        return torch.stack([head(x) for head in self.heads], dim=-1)


class WrapperPlainList(WrapperBook):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]


class WrapperSharedHead(WrapperBook):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads)


class WrapperNarrowHeads(WrapperBook):
    """Splits d_out among the heads as MultiHeadAttention does: each head d_out // num_heads wide."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out // num_heads, context_length, dropout, qkv_bias) for _ in range(num_heads)])


class WrapperDropsBias(WrapperBook):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout) for _ in range(num_heads)])


class WrapperOfUnscaledHeads(WrapperBook):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList(
            [CausalAttentionUnscaled(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )


# ---------------------------------------------------------------------------------------------
# split_heads


def split_heads_book(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    x = x.view(b, num_tokens, num_heads, head_dim)
    return x.transpose(1, 2)


def split_heads_reshape_permute(x, num_heads):
    b, num_tokens, _ = x.shape
    return x.reshape(b, num_tokens, num_heads, -1).permute(0, 2, 1, 3)


def split_heads_unflatten(x, num_heads):
    return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)


def split_heads_detached(x, num_heads):
    """Right shape and numbers, cut off from the graph."""
    b, num_tokens, d_out = x.shape
    return x.detach().view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_heads_view_only(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def split_heads_reshape_only(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_heads, num_tokens, d_out // num_heads)


def split_heads_float(x, num_heads):
    """Correct layout, but `.float()` to be safe turns float64 inputs into float32."""
    b, num_tokens, d_out = x.shape
    return x.float().view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_heads_head_dim_first(x, num_heads):
    """Split along the wrong axis: each "head" takes every num_heads-th feature."""
    b, num_tokens, d_out = x.shape
    return x.reshape(b, num_tokens, d_out // num_heads, num_heads).permute(0, 3, 1, 2)


# ---------------------------------------------------------------------------------------------
# merge_heads


def merge_heads_book(x):
    b, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)
    return x.contiguous().view(b, num_tokens, num_heads * head_dim)


def merge_heads_reshape(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).reshape(b, num_tokens, -1)


def merge_heads_flatten(x):
    return x.transpose(1, 2).flatten(2)


def merge_heads_no_transpose(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.reshape(b, num_tokens, num_heads * head_dim)


def merge_heads_token_axis(x):
    return torch.cat([x[:, head] for head in range(x.shape[1])], dim=1)


def merge_heads_like_the_notes(x):
    """The study notes: o = torch.cat([o_head1, o_head2], dim=0)."""
    return torch.cat([x[:, head] for head in range(x.shape[1])], dim=0)


def merge_heads_no_contiguous(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).view(b, num_tokens, num_heads * head_dim)


def merge_heads_transpose_in_place(x):
    b, num_heads, num_tokens, head_dim = x.shape
    x.transpose_(1, 2)
    return x.reshape(b, num_tokens, num_heads * head_dim)


# ---------------------------------------------------------------------------------------------
# multi_head_attention: the forward a student writes under the given __init__


class MHABook(GivenMultiHeadAttention):
    """The notes' forward (masked_fill_ in place, unsqueezed mask), plus the padding step."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
            attn_scores.masked_fill_(padded, padding_fill_value(attn_scores.dtype))
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        mask_unsqueezed = mask_bool.unsqueeze(0).unsqueeze(0)
        attn_scores.masked_fill_(mask_unsqueezed, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec


class MHABookWithoutPadding(GivenMultiHeadAttention):
    """The notes' class as printed: forward(self, x) has no attention_mask."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAHalfPower(GivenMultiHeadAttention):
    """`self.head_dim ** 1/2` divides by head_dim / 2."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim ** 1 / 2, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHATransposedLikeCausal(GivenMultiHeadAttention):
    """CausalAttention's `keys.transpose(1, 2)` kept on the heads' four axes."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMaskRebound(GivenMultiHeadAttention):
    """Cuts the mask buffer itself to the input's length: the next, longer input no longer fits it."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        self.mask = self.mask[:num_tokens, :num_tokens]
        attn_scores = attn_scores.masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingFilledWithZero(GivenMultiHeadAttention):
    """Padding "switched off" with 0, as one would zero a weight: a score of 0 still beats negative real scores."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens), 0.0)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAValuesFromKeys(GivenMultiHeadAttention):
    """Right weights, applied to the keys instead of the values."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens],
                                                                   -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ keys).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAResidualAdded(MHABookWithoutPadding):
    """Adds the input back after out_proj, as a transformer block does (but that is the block's job)."""

    def forward(self, x):
        return super().forward(x) + x[..., :1]


class MHAHeadDimFromInput(GivenMultiHeadAttention):
    """head_dim recomputed in forward from the input's size instead of d_out."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        head_dim = d_in // self.num_heads
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        attn_scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens],
                                                                   -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / head_dim**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHASqueezed(MHABookWithoutPadding):
    """A squeeze at the end "to drop the extra axis": a batch of one loses its batch axis."""

    def forward(self, x):
        return super().forward(x).squeeze()


class MHAReorderedInit(MHABook):
    """Correct forward; the student rewrote __init__ creating out_proj first and value before key."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.out_proj = nn.Linear(d_out, d_out)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
        self.dropout = nn.Dropout(dropout)
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads


class MHAEinsum(GivenMultiHeadAttention):
    """Correct with einsum, reshape and additive masks."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        q, k, v = (layer(x).reshape(shape) for layer in (self.W_query, self.W_key, self.W_value))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask[:, None, None, :] == 0, torch.finfo(scores.dtype).min)
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens] == 1, float("-inf"))
        weights = self.dropout(F.softmax(scores / self.head_dim**0.5, dim=-1))
        context = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


class MHAPerHeadLoop(GivenMultiHeadAttention):
    """Right numbers, but one head at a time: the wrapper's loop inside the split projections."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        future = self.mask.bool()[:num_tokens, :num_tokens]
        outputs = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            scores = queries[:, :, cols] @ keys[:, :, cols].transpose(1, 2)
            if attention_mask is not None:
                scores = scores.masked_fill((attention_mask == 0).view(b, 1, num_tokens),
                                            padding_fill_value(scores.dtype))
            scores = scores.masked_fill(future, -torch.inf)
            weights = self.dropout(torch.softmax(scores / self.head_dim**0.5, dim=-1))
            outputs.append(weights @ values[:, :, cols])
        return self.out_proj(torch.cat(outputs, dim=-1))


class MHAWithSDPA(GivenMultiHeadAttention):
    """Correct numbers from PyTorch's fused attention instead of writing it."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q, k, v = (
            layer(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            for layer in (self.W_query, self.W_key, self.W_value)
        )
        allowed = ~self.mask.bool()[:num_tokens, :num_tokens]
        if attention_mask is not None:
            allowed = allowed & (attention_mask != 0).view(b, 1, 1, num_tokens)
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        return self.out_proj(context.transpose(1, 2).reshape(b, num_tokens, self.d_out))


class MHANoScaling(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAScaleByDOut(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.d_out**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAScaleByDIn(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / d_in**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHASoftmaxDim2(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=2))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMaskWithDiagonal(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=0).bool()
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMaskInverted(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens].T  # "the mask is the other way round"
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMaskedFillDropped(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # result not kept
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAQueryKeySwapped(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = keys @ queries.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHASplitWithoutTranspose(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, self.num_heads, num_tokens, self.head_dim)
        keys = self.W_key(x).view(b, self.num_heads, num_tokens, self.head_dim)
        values = self.W_value(x).view(b, self.num_heads, num_tokens, self.head_dim)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMergeWithoutTranspose(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAMissingOutProj(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)


class MHANoContiguous(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAHeadDimFirst(GivenMultiHeadAttention):
    """view(b, num_tokens, head_dim, num_heads): each "head" takes every num_heads-th feature."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.head_dim, self.num_heads).permute(0, 3, 1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.head_dim, self.num_heads).permute(0, 3, 1, 2)
        values = self.W_value(x).view(b, num_tokens, self.head_dim, self.num_heads).permute(0, 3, 1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).permute(0, 2, 3, 1).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingNegInf(GivenMultiHeadAttention):
    """-inf for padding too, as for the future: NaN for queries that see only padding."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens), -torch.inf)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingAfterCausal(GivenMultiHeadAttention):
    """Padding filled after the future: a padded future key gets the finite fill back."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingIgnored(MHABookWithoutPadding):
    """Accepts attention_mask (so nothing crashes) and never uses it."""

    def forward(self, x, attention_mask=None):
        return super().forward(x)


class MHAPaddingQueryAxis(GivenMultiHeadAttention):
    """The padding mask viewed (b, 1, num_tokens, 1): it hides padded queries' rows, not padded keys."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, num_tokens, 1),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


batch_size = 2  # the notebook's example batch, defined in a cell above


class MHAPaddingGlobalBatch(GivenMultiHeadAttention):
    """The padding view built from the notebook's batch_size instead of the input's own b."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(batch_size, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingInverted(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill(attention_mask.bool().view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHADataQueries(GivenMultiHeadAttention):
    """Right values, but the queries come from W_query.weight.data: no gradient ever reaches W_query."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = F.linear(x, self.W_query.weight.data, self.W_query.bias)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


# ---------------------------------------------------------------------------------------------
# torch_equivalence


def to_torch_multihead_book(mha):
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        else:
            torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_shared_out_proj(mha):
    """The book's copy of the projections, but our out_proj module itself put into the new one."""
    torch_mha = to_torch_multihead_book(mha)
    torch_mha.out_proj = mha.out_proj
    return torch_mha


def to_torch_multihead_out_proj_copied_backwards(mha):
    """The book's copy, but out_proj's weight copied the wrong way round (`ours.copy_(theirs)`): the new module keeps
    its own random out_proj weight, and the caller's MultiHeadAttention gets it written over its own."""
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        else:
            torch_mha.in_proj_bias.zero_()
        mha.out_proj.weight.copy_(torch_mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_identity_check(mha):
    """The book's copy, but the sizes compared with `is`: right for small ints only, which Python caches."""
    if mha.W_query.in_features is not mha.d_out:
        raise ValueError("d_in must equal d_out")
    return to_torch_multihead_book(mha)


def to_torch_multihead_no_check(mha):
    """The book's copy without the d_in == d_out check: a mismatch crashes inside copy_ instead."""
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_key_first(mha):
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_key.weight, mha.W_query.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_key.bias, mha.W_query.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_transposed(mha):
    """Copies weight.T, as if nn.Linear's weight were (in, out)."""
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight.T, mha.W_key.weight.T, mha.W_value.weight.T]))
        torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_sequence_first(mha):
    """Right weights; batch_first left at its default (False)."""
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_forgets_out_bias(mha):
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    torch_mha = torch_mha.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
    return torch_mha


def to_torch_multihead_no_dropout(mha):
    """Right weights and output, but the dropout probability stays at its default 0.0."""
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, batch_first=True).to(mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_multihead_float32(mha):
    """Right weights, but never moved to mha's dtype: float64 modules get a float32 copy."""
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("d_in must equal d_out")
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        if mha.W_query.bias is not None:
            torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


# ---------------------------------------------------------------------------------------------
# parameter_counts


def count_parameters_book(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def count_parameters_loop(module):
    total = 0
    for _name, param in module.named_parameters():
        if param.requires_grad:
            total += param.numel()
    return total


def count_parameters_state_dict(module):
    return sum(tensor.numel() for tensor in module.state_dict().values())


def count_parameters_with_buffers(module):
    return sum(p.numel() for p in module.parameters()) + sum(b.numel() for b in module.buffers())


def count_parameters_children_only(module):
    # walks the children: a layer with no children of its own, or a parameter on the module itself, is never reached
    return sum(p.numel() for child in module.children() for p in child.parameters() if p.requires_grad)


def count_parameters_linear_only(module):
    # only the weights and biases of the nn.Linear layers
    return sum(p.numel() for layer in module.modules() if isinstance(layer, nn.Linear)
               for p in layer.parameters(recurse=False) if p.requires_grad)


def count_parameters_every_module(module):
    # parameters() of every module of modules(): a nested parameter counted once per module above it
    return sum(p.numel() for layer in module.modules() for p in layer.parameters() if p.requires_grad)


def count_parameters_every_name(module):
    # named_parameters without removing duplicates: a tied parameter counted under each of its names
    return sum(p.numel() for _, p in module.named_parameters(remove_duplicate=False) if p.requires_grad)


def count_parameters_all(module):
    return sum(p.numel() for p in module.parameters())


def count_parameters_as_string(module):
    return f"{sum(p.numel() for p in module.parameters() if p.requires_grad):,}"


# ---------------------------------------------------------------------------------------------
# Book exercise 3.2: a wrapper with num_heads=2 whose context vectors have 2 features.


def two_dimensional_wrapper_book(d_in, context_length, dropout):
    return WrapperBook(d_in, 1, context_length, dropout, num_heads=2)


def two_dimensional_wrapper_keywords(d_in, context_length, dropout):
    return WrapperBook(num_heads=2, d_out=1, d_in=d_in, context_length=context_length, dropout=dropout)


def two_dimensional_wrapper_d_out_2(d_in, context_length, dropout):
    return WrapperBook(d_in, 2, context_length, dropout, num_heads=2)  # 2 features per head: 4 in all


def two_dimensional_wrapper_one_head(d_in, context_length, dropout):
    return WrapperBook(d_in, 2, context_length, dropout, num_heads=1)  # 2 features, but from one head


def two_dimensional_wrapper_fixed_sizes(d_in, context_length, dropout):
    return WrapperBook(d_in, 1, 6, 0.0, num_heads=2)  # the notes' context_length and dropout, whatever is asked


def two_dimensional_wrapper_single_attention(d_in, context_length, dropout):
    return CausalAttention(d_in, 2, context_length, dropout)  # 2 features, but no heads at all


# ---------------------------------------------------------------------------------------------
# A head size by true division: d_out / num_heads is a float even when it divides, and view() refuses it.


def split_heads_true_division(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out / num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


class MHAHeadDimFloat(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        head_dim = self.d_out / self.num_heads
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class MHAPaddingNoGrad(GivenMultiHeadAttention):
    """The padding step under torch.no_grad() ("masking is not learned"): the scores it returns are cut from the
    graph, so with a mask no gradient reaches W_query and W_key, while without one forward is right (issue 58)."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            with torch.no_grad():
                padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
                attn_scores = attn_scores.masked_fill(padded, torch.finfo(attn_scores.dtype).min)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)


class MHANormaliserNoGrad(GivenMultiHeadAttention):
    """The softmax written out, its row sums taken with gradients off: the right output, wrong gradients (issue 58)."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                                  padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        scaled = attn_scores / keys.shape[-1] ** 0.5
        exps = torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        context = (self.dropout(exps / row_sums) @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)



def _padded_forward(module, x, padded_keys):
    """The reference's forward, its padding step given as a function of the scores' shape (b, num_tokens)."""
    b, num_tokens, d_in = x.shape
    queries = module.W_query(x).view(b, num_tokens, module.num_heads, module.head_dim).transpose(1, 2)
    keys = module.W_key(x).view(b, num_tokens, module.num_heads, module.head_dim).transpose(1, 2)
    values = module.W_value(x).view(b, num_tokens, module.num_heads, module.head_dim).transpose(1, 2)
    attn_scores = queries @ keys.transpose(2, 3)
    attn_scores = padded_keys(attn_scores)
    attn_scores = attn_scores.masked_fill(module.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
    attn_weights = module.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
    context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, module.d_out)
    return module.out_proj(context)


class MHAPaddingMaskEditedInPlace(GivenMultiHeadAttention):
    """Issue 58's hole: the padding step flips the caller's attention_mask in place (sub_, neg_: now 1 marks
    padding) and fills where it is 1. The right output; the caller's mask now says the opposite of what it said."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            attention_mask.sub_(1).neg_()  # now 1 = padding
            return attn_scores.masked_fill(attention_mask.bool()[:, None, None, :],
                                           padding_fill_value(attn_scores.dtype))

        return _padded_forward(self, x, padded_keys)


class MHAPaddingMaskCloned(GivenMultiHeadAttention):
    """The same flip on a copy of the mask (clone, then sub_ and neg_): the caller's mask is left alone. Correct."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            m = attention_mask.clone()
            m.sub_(1).neg_()
            return attn_scores.masked_fill(m.bool()[:, None, None, :], padding_fill_value(attn_scores.dtype))

        return _padded_forward(self, x, padded_keys)


class MHAPaddingNewBoolMask(GivenMultiHeadAttention):
    """A new bool mask (attention_mask == 0) indexed to broadcast: nothing of the caller's is written. Correct."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            padded = attention_mask == 0
            return attn_scores.masked_fill(padded[:, None, None, :], padding_fill_value(attn_scores.dtype))

        return _padded_forward(self, x, padded_keys)


class MHAPaddingFilledInPlaceNoGrad(GivenMultiHeadAttention):
    """The scores filled in place inside torch.no_grad(): the right values, an edit autograd never records (its
    gradients differ only through queries that see nothing but padding, which no check compares)."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is not None:
                hidden = attention_mask.eq(0).unsqueeze(1).unsqueeze(2)
                with torch.no_grad():
                    attn_scores.masked_fill_(hidden, -1e9)
            return attn_scores

        return _padded_forward(self, x, padded_keys)


class MHAPaddingFilledThroughData(GivenMultiHeadAttention):
    """The scores filled in place through .data, gradients on: the same unrecorded edit, by another door."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is not None:
                attn_scores.data[(attention_mask == 0)[:, None, None, :].expand_as(attn_scores)] = -1e9
            return attn_scores

        return _padded_forward(self, x, padded_keys)


class MHAPaddingWhere(GivenMultiHeadAttention):
    """torch.where with a fill of -1e4 in the scores' dtype, out of place. Correct."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            keep = (attention_mask != 0).reshape(attention_mask.shape[0], 1, 1, -1)
            return torch.where(keep, attn_scores, torch.tensor(-1e4, dtype=attn_scores.dtype))

        return _padded_forward(self, x, padded_keys)


class MHAPaddingAdditive(GivenMultiHeadAttention):
    """An additive mask (0 for real keys, a large negative number for padding) built under no_grad, edited in place
    there (it is out of every graph), then added with gradients on. Correct."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            with torch.no_grad():
                bias = torch.zeros(attention_mask.shape, dtype=attn_scores.dtype, device=attn_scores.device)
                bias.masked_fill_(attention_mask == 0, torch.finfo(attn_scores.dtype).min / 2)
            return attn_scores + bias[:, None, None, :]

        return _padded_forward(self, x, padded_keys)


class MHAPaddingMaskBuiltNoGrad(GivenMultiHeadAttention):
    """The padded-key selection built under no_grad, then the scores filled in place with gradients on, as the
    notes fill the causal mask. Correct."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is not None:
                with torch.no_grad():
                    hidden = torch.ones_like(attention_mask, dtype=torch.bool)
                    hidden &= attention_mask == 0
                attn_scores.masked_fill_(hidden.view(hidden.shape[0], 1, 1, -1), padding_fill_value(attn_scores.dtype))
            return attn_scores

        return _padded_forward(self, x, padded_keys)


class MHAInputScaledInPlace(GivenMultiHeadAttention):
    """forward scales the caller's x in place before projecting it (x /= 1 would be a write with the same values)."""

    def forward(self, x, attention_mask=None):
        x.mul_(2)

        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            return attn_scores.masked_fill((attention_mask == 0)[:, None, None, :],
                                           padding_fill_value(attn_scores.dtype))

        return _padded_forward(self, x / 2, padded_keys)

def split_heads_first_head_detached(x, num_heads):
    """Each head sliced out by hand, the first one detached: right numbers, and only head 0's features get no
    gradient (issue 58: before, "some gradient reaches the input" let this through)."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    heads = [x[..., h * head_dim:(h + 1) * head_dim] for h in range(num_heads)]
    heads[0] = heads[0].detach()
    return torch.stack(heads, dim=1)


# ---------------------------------------------------------------------------------------------
# What each wrong mutant above gets wrong: the named families its bug belongs to (devtools.precision measures
# whether the first mistake the checks name is one of them); () where the bug is no named family (then no name is
# right). The correct mutants are not listed.

TRUE_MISCONCEPTIONS = {
    "MHAPaddingFilledInPlaceNoGrad": ("forward_step_detached",),
    "MHAPaddingFilledThroughData": ("forward_step_detached",),
    "count_parameters_children_only": ("counts_children_only",),
    "count_parameters_linear_only": ("counts_linear_only",),
    "count_parameters_every_module": ("counts_nested_twice",),
    "count_parameters_every_name": ("counts_shared_twice",),
    "WrapperTokenAxis": ("heads_on_token_axis",),
    "WrapperFirstAxis": ("heads_on_token_axis",),
    "WrapperStacked": ("heads_stacked",),
    "WrapperPlainList": ("heads_plain_list",),
    "WrapperSharedHead": ("heads_shared",),
    "WrapperReseededHeads": ("heads_identical_init",),
    "WrapperDropsBias": ("qkv_bias_ignored",),
    "WrapperOfUnscaledHeads": ("missing_scaling", "dropout_missing"),  # its heads apply no dropout either
    "two_dimensional_wrapper_d_out_2": ("d_out_is_total",),
    "two_dimensional_wrapper_one_head": ("heads_traded_for_width",),
    "two_dimensional_wrapper_fixed_sizes": (),
    "two_dimensional_wrapper_single_attention": (),
    "split_heads_detached": ("gradient_cut",),
    "split_heads_first_head_detached": ("gradient_cut",),
    "MHANormaliserNoGrad": ("forward_step_detached",),
    "MHAPaddingNoGrad": ("forward_step_detached",),
    "MHAPaddingMaskEditedInPlace": ("input_edited_in_place",),
    "MHAInputScaledInPlace": ("input_edited_in_place",),
    "split_heads_view_only": ("split_without_transpose",),
    "split_heads_reshape_only": ("split_without_transpose",),
    "split_heads_head_dim_first": ("split_wrong_axes",),
    "split_heads_float": (),
    "merge_heads_no_transpose": ("merge_without_transpose",),
    "merge_heads_token_axis": ("heads_on_token_axis",),
    "merge_heads_like_the_notes": ("heads_on_token_axis",),
    "merge_heads_no_contiguous": ("view_after_transpose",),
    "merge_heads_transpose_in_place": ("heads_input_edited_in_place",),
    "MHANoScaling": ("missing_scaling",),
    "MHAMaskRebound": ("state_changed_by_forward",),
    "MHAHalfPower": ("scale_wrong_value",),
    "MHAPaddingFilledWithZero": ("padding_fill_too_high",),
    "MHAScaleByDOut": ("scale_by_d_out",),
    "MHAScaleByDIn": ("scale_by_d_in",),
    "MHASoftmaxDim2": ("softmax_wrong_dim",),
    "MHAMaskWithDiagonal": ("mask_includes_diagonal", "tensor_created_on_cpu"),
    "MHAMaskInverted": ("mask_inverted",),
    "MHAMaskedFillDropped": ("masked_fill_result_dropped",),
    "MHAQueryKeySwapped": ("query_key_swapped",),
    "MHASplitWithoutTranspose": ("split_without_transpose",),
    "MHAMergeWithoutTranspose": ("merge_without_transpose",),
    "MHAMissingOutProj": ("missing_out_proj",),
    "MHAPerHeadLoop": ("loop_over_heads",),
    "MHAPaddingNegInf": ("padding_neg_inf",),
    "MHAPaddingIgnored": ("padding_ignored",),
    "MHAPaddingInverted": ("padding_inverted",),
    "MHAPaddingQueryAxis": ("padding_query_axis",),
    "MHAPaddingGlobalBatch": ("size_from_notebook",),
    "MHATransposedLikeCausal": (),
    "MHAValuesFromKeys": ("parameter_unused",),  # W_value: the graph shows it unused
    "MHAResidualAdded": (),
    "MHAHeadDimFromInput": (),
    "MHASqueezed": (),
    "MHAWithSDPA": ("dropout_missing",),  # the fused attention here is called without the dropout rate
    "CausalAttentionUnscaled": ("missing_scaling", "dropout_missing"),
    "MHADataQueries": ("gradient_cut", "parameter_detached"),
    "MHAHeadDimFirst": ("split_wrong_axes",),
    "MHANoContiguous": ("view_after_transpose",),
    "MHABookWithoutPadding": (),
    "to_torch_multihead_key_first": ("in_proj_order",),
    "to_torch_multihead_shared_out_proj": ("weights_shared_with_source",),
    "to_torch_multihead_out_proj_copied_backwards": (),
    "to_torch_multihead_transposed": (),
    "to_torch_multihead_sequence_first": (),
    "to_torch_multihead_forgets_out_bias": (),
    "to_torch_multihead_no_dropout": (),
    "to_torch_multihead_float32": (),
    "to_torch_multihead_no_check": (),
    "to_torch_multihead_identity_check": (),
    "count_parameters_state_dict": ("counts_state_dict",),
    "count_parameters_with_buffers": ("counts_buffers",),
    "count_parameters_all": ("counts_frozen",),
    "count_parameters_as_string": (),
    "split_heads_true_division": ("head_dim_float",),
    "MHAHeadDimFloat": ("head_dim_float",),
}
