"""Section 3.6: multi-head attention, stacked heads and split weights; then our MultiHeadAttention against
PyTorch's own building blocks."""

import torch
import torch.nn.functional as F
from torch import nn

from attnkit.solutions.n03_causal_attention import CausalAttention


class MultiHeadAttentionWrapper(nn.Module):
    """num_heads independent CausalAttention heads run one after another: output (b, T, num_heads * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def split_heads(x, num_heads):
    """(b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim)."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    x = x.view(b, num_tokens, num_heads, head_dim)  # (b, num_tokens, num_heads, head_dim)
    return x.transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)


def merge_heads(x):
    """(b, num_heads, num_tokens, head_dim) -> (b, num_tokens, num_heads * head_dim)."""
    b, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
    # transpose leaves the memory non-contiguous; view needs it contiguous.
    return x.contiguous().view(b, num_tokens, num_heads * head_dim)


def padding_fill_value(dtype):
    """Finite fill for padded keys: a row whose visible keys are all padding gets uniform weights, not NaN."""
    return torch.finfo(dtype).min


class MultiHeadAttention(nn.Module):
    """All heads in one set of projections; attention_mask (b, num_tokens) marks padding with 0.

    A query whose visible keys are all padding gets uniform weights over them (no NaN): its
    output carries no information and should be ignored downstream, like the padding itself.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        # Creation order (query, key, value, out_proj) is what reproduces the seeded outputs.
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)  # (b, num_heads, num_tokens, head_dim)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)

        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_tokens)
        if attention_mask is not None:
            padded_keys = (attention_mask == 0).view(b, 1, 1, num_tokens)  # broadcast over heads and queries
            attn_scores = attn_scores.masked_fill(padded_keys, padding_fill_value(attn_scores.dtype))
        future = self.mask.bool()[:num_tokens, :num_tokens]  # (num_tokens, num_tokens)
        attn_scores = attn_scores.masked_fill(future, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = merge_heads(attn_weights @ values)  # (b, num_tokens, d_out)
        return self.out_proj(context_vec)


class MultiHeadAttentionSingle(nn.Module):
    """The single-sequence form: input (seq_len, embed_dim), no batch axis and no mask."""

    def __init__(self, embed_dim, head_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.q_proj = nn.Linear(embed_dim, head_dim * num_heads)
        self.k_proj = nn.Linear(embed_dim, head_dim * num_heads)
        self.v_proj = nn.Linear(embed_dim, head_dim * num_heads)
        self.out_proj = nn.Linear(head_dim * num_heads, embed_dim)

    def forward(self, x):
        seq_len, embed_dim = x.shape
        # (seq_len, embed_dim) -> (seq_len, num_heads, head_dim) -> (num_heads, seq_len, head_dim)
        q = self.q_proj(x).view(seq_len, self.num_heads, self.head_dim).transpose(0, 1)
        k = self.k_proj(x).view(seq_len, self.num_heads, self.head_dim).transpose(0, 1)
        v = self.v_proj(x).view(seq_len, self.num_heads, self.head_dim).transpose(0, 1)
        scores = q @ k.transpose(-2, -1) / self.head_dim**0.5  # (num_heads, seq_len, seq_len)
        attn_weights = torch.softmax(scores, dim=-1)
        out = (attn_weights @ v).transpose(0, 1)  # (seq_len, num_heads, head_dim)
        # Heads go back side by side along the feature axis, never along the token axis.
        return self.out_proj(out.reshape(seq_len, self.num_heads * self.head_dim))


def count_parameters(module):
    """Exercise 3.3: trainable parameters only (the mask buffer is not one)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def two_dimensional_wrapper(d_in, context_length, dropout):
    """Exercise 3.2: a MultiHeadAttentionWrapper that keeps num_heads at 2 and gives context vectors of 2 features."""
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)


# Our MultiHeadAttention against PyTorch's own building blocks (notebook 04's last section).
def to_torch_multihead(mha):
    """Copy a MultiHeadAttention (d_in == d_out) into an equivalent nn.MultiheadAttention.

    Call the result as torch_mha(x, x, x, attn_mask=causal_mask(num_tokens), need_weights=False).
    """
    d_out = mha.d_out
    if mha.W_query.in_features != d_out:
        raise ValueError(
            "nn.MultiheadAttention needs d_in == d_out for the query; "
            f"got d_in={mha.W_query.in_features}, d_out={d_out}"
        )
    torch_mha = nn.MultiheadAttention(
        embed_dim=d_out, num_heads=mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True
    )
    torch_mha = torch_mha.to(dtype=mha.W_query.weight.dtype, device=mha.W_query.weight.device)
    projections = (mha.W_query, mha.W_key, mha.W_value)
    with torch.no_grad():
        # PyTorch stacks the three projection matrices as rows of one (3 * d_out, d_out) matrix.
        torch_mha.in_proj_weight.copy_(torch.cat([p.weight for p in projections], dim=0))
        biases = [p.bias if p.bias is not None else torch.zeros_like(p.weight[:, 0]) for p in projections]
        torch_mha.in_proj_bias.copy_(torch.cat(biases))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def sdpa_causal(mha, x):
    """The same forward pass as mha(x) with F.scaled_dot_product_attention doing the attention."""
    queries = split_heads(mha.W_query(x), mha.num_heads)  # (b, num_heads, num_tokens, head_dim)
    keys = split_heads(mha.W_key(x), mha.num_heads)
    values = split_heads(mha.W_value(x), mha.num_heads)
    dropout_p = mha.dropout.p if mha.training else 0.0
    context = F.scaled_dot_product_attention(queries, keys, values, dropout_p=dropout_p, is_causal=True)
    return mha.out_proj(merge_heads(context))  # (b, num_tokens, d_out)
