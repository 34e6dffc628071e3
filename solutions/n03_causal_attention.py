"""Section 3.5: causal attention, dropout and the mask as a buffer."""

import torch
from torch import nn


def causal_mask(num_tokens):
    """Bool (num_tokens, num_tokens), True strictly above the diagonal: what a token must not see."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)


def causal_weights_renormalised(attn_weights):
    """Route 1: zero the future with a lower-triangular matrix, then make rows sum to 1 again.

    attn_weights: (..., num_tokens, num_tokens), any leading dimensions, on any device (the result keeps them).
    """
    num_tokens = attn_weights.shape[-1]
    keep = torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * keep
    return masked / masked.sum(dim=-1, keepdim=True)


def causal_weights_neg_inf(attn_scores):
    """Route 2: fill the future with -inf before the softmax, so it gets exactly zero weight.

    attn_scores: (..., num_tokens, num_tokens), any leading dimensions, on any device (the result keeps them).
    """
    num_tokens = attn_scores.shape[-1]
    masked = attn_scores.masked_fill(causal_mask(num_tokens).to(attn_scores.device), -torch.inf)
    return torch.softmax(masked, dim=-1)


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        # A buffer moves with .to(device) and is saved in state_dict, but is not trained.
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)  # (b, num_tokens, d_out)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)  # (b, num_tokens, num_tokens)
        # Truncate: a batch may be shorter than context_length.
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values  # (b, num_tokens, d_out)
