"""Section 3.3: attention without trainable weights."""

import torch


def attention_scores_for_query(inputs, query):
    """Dot product of one query vector with every input token: (num_tokens,)."""
    return inputs @ query


def attention_scores(inputs):
    """Dot products of every token with every token: (num_tokens, num_tokens)."""
    return inputs @ inputs.T


def softmax_naive(x):
    """The notes' softmax over dim 0: overflows for large inputs (exp(1000) is inf)."""
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def softmax_stable(x, dim=-1):
    """Softmax that subtracts the maximum first, so exp never sees a large positive number."""
    shifted = x - x.max(dim=dim, keepdim=True).values
    exp = torch.exp(shifted)
    return exp / exp.sum(dim=dim, keepdim=True)


def context_vector_for_query(inputs, query):
    """Weighted sum of the inputs, weighted by softmax(scores of one query): (d_in,)."""
    attn_weights = torch.softmax(attention_scores_for_query(inputs, query), dim=0)
    return attn_weights @ inputs


def context_vectors(inputs):
    """Context vector of every token at once: softmax over each row, then one matrix product."""
    attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return attn_weights @ inputs
