"""Student-style implementations for notebook 03: the book's code, correct rewrites and known mistakes.

Each mistake is written the way a student would write it (the book's names, the notes' idioms), so the
tests can check that the grader takes points in the right exercise and names the right misconception.
The CausalAttention mutants keep the given __init__ and change what the student writes: the
register_buffer line or the forward body.
"""

import torch
from torch import nn

# ---------------------------------------------------------------------------------------------
# causal_mask


def causal_mask_book(num_tokens):
    mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1)
    return mask.bool()


def causal_mask_with_diagonal(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=0)


def causal_mask_inverted(num_tokens):
    return torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=-1)


def causal_mask_float(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1)  # .bool() forgotten


def causal_mask_hardcoded(num_tokens):
    context_length = 6  # the notes' sentence
    return torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)


def causal_mask_tril(num_tokens):
    """tril where triu was meant: hides the past and the token itself, shows the future."""
    return torch.tril(torch.ones(num_tokens, num_tokens)).bool()


# ---------------------------------------------------------------------------------------------
# causal_weights_renormalised


def causal_weights_renormalised_book(attn_weights):
    context_length = attn_weights.shape[-1]
    mask_simple = torch.tril(torch.ones(context_length, context_length))
    masked_simple = attn_weights * mask_simple
    row_sums = masked_simple.sum(dim=-1, keepdim=True)
    return masked_simple / row_sums


def causal_weights_renormalised_on_device(attn_weights):
    """The notes' route, written for any device: the mask is made where the weights are."""
    context_length = attn_weights.shape[-1]
    mask_simple = torch.tril(torch.ones(context_length, context_length, device=attn_weights.device))
    masked_simple = attn_weights * mask_simple
    return masked_simple / masked_simple.sum(dim=-1, keepdim=True)


def causal_weights_renormalised_no_renorm(attn_weights):
    context_length = attn_weights.shape[-1]
    return attn_weights * torch.tril(torch.ones(context_length, context_length))


def causal_weights_renormalised_column_sums(attn_weights):
    context_length = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(context_length, context_length, device=attn_weights.device))
    return masked / masked.sum(dim=-2, keepdim=True)  # sums down the columns, across the queries


def causal_weights_renormalised_with_diagonal(attn_weights):
    context_length = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(context_length, context_length), diagonal=-1)
    return masked / masked.sum(dim=-1, keepdim=True)


def causal_weights_renormalised_inverted(attn_weights):
    context_length = attn_weights.shape[-1]
    masked = attn_weights * torch.triu(torch.ones(context_length, context_length))  # triu instead of tril
    return masked / masked.sum(dim=-1, keepdim=True)


def causal_weights_renormalised_no_keepdim(attn_weights):
    context_length = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(context_length, context_length))
    return masked / masked.sum(dim=-1)


def causal_weights_renormalised_in_place(attn_weights):
    """Right numbers, written into the caller's weights (and through the softmax's output autograd needs)."""
    context_length = attn_weights.shape[-1]
    attn_weights *= torch.tril(torch.ones(context_length, context_length))
    attn_weights /= attn_weights.sum(dim=-1, keepdim=True)
    return attn_weights


def causal_weights_renormalised_float32(attn_weights):
    mask_simple = torch.tril(torch.ones_like(attn_weights))
    masked = attn_weights.float() * mask_simple.float()  # "make sure both are floats"
    return masked / masked.sum(dim=-1, keepdim=True)


# ---------------------------------------------------------------------------------------------
# causal_weights_neg_inf


def causal_weights_neg_inf_book(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    return torch.softmax(masked, dim=-1)


def causal_weights_neg_inf_on_device(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length, device=attn_scores.device), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    return torch.softmax(masked, dim=-1)


def causal_weights_neg_inf_copy_filled_no_grad(attn_scores):
    """A copy of the scores (the caller's stay as they were) filled with -inf IN PLACE with gradients off: the right
    weights and gradient, an edit autograd never records."""
    num_tokens = attn_scores.shape[-1]
    scores = attn_scores.clone()
    with torch.no_grad():
        scores.masked_fill_(torch.ones(num_tokens, num_tokens, device=scores.device).triu(1).bool(), -torch.inf)
    return torch.softmax(scores, dim=-1)


def causal_weights_neg_inf_future_built_no_grad(attn_scores):
    """The future built and edited under no_grad (out of every graph), the copy filled with gradients on. Correct."""
    num_tokens = attn_scores.shape[-1]
    with torch.no_grad():
        future = torch.zeros(num_tokens, num_tokens, dtype=torch.bool, device=attn_scores.device)
        future |= torch.ones_like(future).triu(1)
    scores = attn_scores.clone()
    scores.masked_fill_(future, -torch.inf)
    return torch.softmax(scores, dim=-1)


def causal_weights_neg_inf_in_place(attn_scores):
    """Right numbers, but the caller's scores are masked too."""
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1).to(attn_scores.device)
    attn_scores.masked_fill_(mask.bool(), -torch.inf)
    return torch.softmax(attn_scores, dim=-1)


def causal_weights_neg_inf_detached(attn_scores):
    """Masks a detached copy "so the caller's scores stay as they were": no gradient gets back to them."""
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
    return torch.softmax(attn_scores.detach().masked_fill(mask, -torch.inf), dim=-1)


def causal_weights_neg_inf_result_dropped(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    attn_scores.masked_fill(mask.bool(), -torch.inf)  # returns a new tensor, which is thrown away
    return torch.softmax(attn_scores, dim=-1)


def causal_weights_neg_inf_wrong_dim(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    return torch.softmax(masked, dim=0)


def causal_weights_neg_inf_with_diagonal(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(context_length, context_length))  # diagonal=1 forgotten
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    return torch.softmax(masked, dim=-1)


def causal_weights_neg_inf_inverted(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.tril(torch.ones(context_length, context_length), diagonal=-1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    return torch.softmax(masked, dim=-1)


def causal_weights_neg_inf_tril(attn_scores):
    context_length = attn_scores.shape[-1]
    mask = torch.tril(torch.ones(context_length, context_length))  # tril where triu(diagonal=1) was meant
    return torch.softmax(attn_scores.masked_fill(mask.bool(), -torch.inf), dim=-1)


# ---------------------------------------------------------------------------------------------
# CausalAttention


class CausalAttention_book(nn.Module):
    """The notes' class, line for line."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class CausalAttention_other_order(nn.Module):
    """Correct, with the layers created value-first and a bool buffer."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        num_tokens = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(queries, keys.mT) / keys.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        return self.dropout(scores.softmax(dim=-1)) @ values


class CausalAttention_bmm_other_mask(nn.Module):
    """Correct, written differently: the mask built as 1 - tril, torch.bmm for both products, float('-inf')."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", 1 - torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        num_tokens = x.shape[1]
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(queries, keys.transpose(1, 2))
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens] == 1, float("-inf"))
        weights = self.dropout(torch.softmax(scores / keys.size(-1) ** 0.5, dim=-1))
        return torch.bmm(weights, values)


class CausalAttention_forward_mistake(CausalAttention_book):
    """The given __init__; subclasses rewrite forward the way a student got it wrong."""

    def scores(self, x):
        return self.W_query(x) @ self.W_key(x).transpose(1, 2)


class CausalAttention_missing_scaling(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_softmax_wrong_dim(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=1))
        return attn_weights @ self.W_value(x)


class CausalAttention_mask_with_diagonal(CausalAttention_forward_mistake):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length)))  # diagonal=1 forgotten


class CausalAttention_mask_inverted(CausalAttention_forward_mistake):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length), diagonal=-1))


class CausalAttention_masked_fill_dropped(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)  # result thrown away
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_mask_after_softmax(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_weights = torch.softmax(self.scores(x) / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = attn_weights.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], 0.0)
        return self.dropout(attn_weights) @ self.W_value(x)


class CausalAttention_query_key_swapped(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys, queries = self.W_key(x), self.W_query(x)
        attn_scores = keys @ queries.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_mask_not_truncated(CausalAttention_forward_mistake):
    def forward(self, x):
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool(), -torch.inf)  # works only when num_tokens == context_length
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_half_power(CausalAttention_forward_mistake):
    """`** 1/2` is `(d_k ** 1) / 2`: the scores are divided by d_k / 2, not its square root."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 1 / 2, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_weights_transposed_on_values(CausalAttention_forward_mistake):
    """Right weights, applied transposed: each key gathers from the queries instead."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights.transpose(1, 2) @ self.W_value(x)


class CausalAttention_returns_weights(CausalAttention_forward_mistake):
    """Stops one step early: the weights, not what they make of the values."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))


class CausalAttention_mask_rebound(CausalAttention_forward_mistake):
    """Keeps the cut mask for "next time": right on a first call, wrong shape for any longer one after it."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        self.mask = self.mask[:num_tokens, :num_tokens]  # rebinds the buffer to the cut copy
        attn_scores = self.scores(x).masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_mask_edited_in_place(CausalAttention_forward_mistake):
    """Turns the 0/1 mask into 0/-inf to add it to the scores, in a slice of the buffer: the buffer changes."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        additive = self.mask[:num_tokens, :num_tokens]  # a view of the buffer
        additive[additive == 1] = -torch.inf
        attn_scores = self.scores(x) + additive
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_transpose_batched(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.W_query(x) @ keys.T  # as in SelfAttention_v2, without the batch in mind
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_sdpa(CausalAttention_forward_mistake):
    def forward(self, x):
        return nn.functional.scaled_dot_product_attention(
            self.W_query(x), self.W_key(x), self.W_value(x), is_causal=True,
            dropout_p=self.dropout.p if self.training else 0.0)


class CausalAttention_detached_keys(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x).detach()  # "keys are only looked up"
        attn_scores = self.W_query(x) @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_modifies_input(CausalAttention_forward_mistake):
    def forward(self, x):
        x /= x.shape[-1] ** 0.5  # "normalise the embeddings", in the caller's tensor
        return super().forward(x)


class CausalAttention_dropout_in_eval(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = nn.functional.dropout(attn_weights, p=self.dropout.p)  # training=True by default
        return attn_weights @ self.W_value(x)


class CausalAttention_dropout_on_scores(CausalAttention_forward_mistake):
    """Dropout before the mask and the softmax: every row still sums to 1."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.dropout(self.scores(x) / keys.shape[-1] ** 0.5)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return torch.softmax(attn_scores, dim=-1) @ self.W_value(x)


class CausalAttention_dropout_on_masked_scores(CausalAttention_forward_mistake):
    """Dropout after the mask, before the softmax: -inf · 0 is nan."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_scores = self.dropout(attn_scores)
        return torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1) @ self.W_value(x)


class CausalAttention_dropout_on_values(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ self.dropout(self.W_value(x))


class CausalAttention_no_dropout(CausalAttention_forward_mistake):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1) @ self.W_value(x)


class CausalAttention_dropout_not_scaled(CausalAttention_forward_mistake):
    """A hand-made dropout mask that forgets the 1/(1-p)."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        if self.training:
            attn_weights = attn_weights * (torch.rand_like(attn_weights) >= self.dropout.p)
        return attn_weights @ self.W_value(x)


class CausalAttentionWithoutBuffers(nn.Module):
    """The notes' counter-example: the mask is a plain attribute, so .to(device) leaves it on the CPU."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(
            attn_scores / keys.shape[-1]**0.5, dim=-1
        )
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class CausalAttention_buffer_not_saved(CausalAttention_forward_mistake):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1),
                             persistent=False)


class CausalAttention_mask_parameter(CausalAttention_forward_mistake):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        del self.mask
        self.mask = nn.Parameter(torch.triu(torch.ones(context_length, context_length), diagonal=1),
                                 requires_grad=False)


class CausalAttention_no_buffer_line(CausalAttention_forward_mistake):
    """The register_buffer line left out, forward building its own mask on the CPU: right numbers, no buffer."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        del self.mask

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_fresh_mask_in_forward(CausalAttention_forward_mistake):
    """A registered buffer that forward ignores: it builds a new mask, on the CPU, at every call."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_tril_mask(CausalAttention_forward_mistake):
    """tril where triu was meant: the buffer hides the past and each token itself."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))


class CausalAttention_small_fill(CausalAttention_forward_mistake):
    """Masked scores filled with -1e4 "large enough": a visible score below it lets the future in."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -1e4)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_fill_minus_1e9(CausalAttention_forward_mistake):
    """Correct: -1e9 is below every score attention meets."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -1e9)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


class CausalAttention_fill_finfo_min(CausalAttention_forward_mistake):
    """Correct: the lowest value of the scores' dtype."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys = self.W_key(x)
        attn_scores = self.scores(x)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens],
                                              torch.finfo(attn_scores.dtype).min)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


d_k = 2  # the notebook's cell above: keys.shape[-1] of its example


class CausalAttention_global_d_k(CausalAttention_forward_mistake):
    """Scales by the notebook's d_k, right for the notes' d_out=2 only."""

    def forward(self, x):
        num_tokens = x.shape[1]
        attn_scores = self.scores(x)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / d_k ** 0.5, dim=-1))
        return attn_weights @ self.W_value(x)


def causal_weights_renormalised_sums_no_grad(attn_weights):
    """Route 1 with its row sums taken with gradients off ("they only rescale"): the right weights, and a gradient
    back to the scores without the renormalisation's part (issue 58)."""
    num_tokens = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype,
                                                  device=attn_weights.device))
    with torch.no_grad():
        row_sums = masked.sum(dim=-1, keepdim=True)
    return masked / row_sums


class CausalAttention_normaliser_no_grad(CausalAttention_forward_mistake):
    """The softmax written out, its row sums taken with gradients off: the right output, wrong gradients for every
    parameter and the input (issue 58)."""

    def forward(self, x):
        num_tokens = x.shape[1]
        keys, values = self.W_key(x), self.W_value(x)
        attn_scores = self.W_query(x) @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        scaled = attn_scores / keys.shape[-1] ** 0.5
        exps = torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        return self.dropout(exps / row_sums) @ values


# ---------------------------------------------------------------------------------------------
# What each wrong mutant above gets wrong: the named families its bug belongs to (devtools.precision measures
# whether the first mistake the checks name is one of them); () where the bug is no named family (then no name is
# right). The correct mutants are not listed.

TRUE_MISCONCEPTIONS = {
    "causal_weights_neg_inf_copy_filled_no_grad": ("gradient_cut",),
    "causal_weights_renormalised_column_sums": ("row_sums_wrong_axis",),
    "causal_mask_with_diagonal": ("mask_includes_diagonal",),
    "causal_mask_inverted": ("mask_inverted",),
    "causal_mask_tril": ("mask_inverted",),
    "causal_mask_float": (),
    "causal_mask_hardcoded": (),
    "causal_weights_renormalised_book": ("function_tensor_on_cpu",),
    "causal_weights_renormalised_no_renorm": ("mask_after_softmax_no_renorm", "function_tensor_on_cpu"),
    "causal_weights_renormalised_with_diagonal": ("mask_includes_diagonal", "function_tensor_on_cpu"),
    "causal_weights_renormalised_inverted": ("mask_inverted", "function_tensor_on_cpu"),
    "causal_weights_renormalised_no_keepdim": ("row_sums_without_keepdim",),
    "causal_weights_renormalised_in_place": ("input_edited_in_place", "function_tensor_on_cpu"),
    "causal_weights_renormalised_float32": (),
    "causal_weights_neg_inf_book": ("function_tensor_on_cpu",),
    "causal_weights_neg_inf_in_place": ("input_edited_in_place",),
    "causal_weights_neg_inf_detached": ("gradient_cut", "function_tensor_on_cpu"),  # its mask is made on the CPU
    "causal_weights_neg_inf_result_dropped": ("masked_fill_result_dropped", "function_tensor_on_cpu"),
    "causal_weights_neg_inf_wrong_dim": ("softmax_wrong_dim", "function_tensor_on_cpu"),
    "causal_weights_neg_inf_with_diagonal": ("mask_includes_diagonal", "function_tensor_on_cpu"),
    "causal_weights_neg_inf_inverted": ("mask_inverted", "function_tensor_on_cpu"),
    "causal_weights_neg_inf_tril": ("mask_inverted", "function_tensor_on_cpu"),
    "CausalAttention_missing_scaling": ("missing_scaling",),
    "CausalAttention_softmax_wrong_dim": ("softmax_wrong_dim",),
    "CausalAttention_mask_with_diagonal": ("mask_includes_diagonal",),
    "CausalAttention_mask_inverted": ("mask_inverted",),
    "CausalAttention_tril_mask": ("mask_inverted",),
    "CausalAttention_masked_fill_dropped": ("masked_fill_result_dropped",),
    "CausalAttention_mask_after_softmax": ("mask_after_softmax_no_renorm",),
    "CausalAttention_query_key_swapped": ("query_key_swapped",),
    "CausalAttention_mask_not_truncated": ("mask_not_truncated",),
    "CausalAttention_half_power": ("scale_wrong_value",),
    "CausalAttention_global_d_k": ("size_from_notebook",),
    "CausalAttention_small_fill": ("mask_fill_not_low_enough",),
    "CausalAttention_weights_transposed_on_values": (),
    "CausalAttention_returns_weights": (),
    "CausalAttention_mask_rebound": ("state_changed_by_forward",),
    "CausalAttention_mask_edited_in_place": ("state_changed_by_forward",),
    "CausalAttention_transpose_batched": ("transpose_batched",),
    "CausalAttention_sdpa": (),
    "CausalAttention_detached_keys": ("gradient_cut", "parameter_detached", "forward_step_detached"),
    "CausalAttention_normaliser_no_grad": ("forward_step_detached",),
    "causal_weights_renormalised_sums_no_grad": ("gradient_cut",),
    "CausalAttention_modifies_input": ("input_edited_in_place",),
    "CausalAttention_dropout_in_eval": ("dropout_in_eval",),
    "CausalAttention_dropout_on_scores": ("dropout_before_softmax",),
    "CausalAttention_dropout_on_masked_scores": ("dropout_before_softmax",),
    "CausalAttention_dropout_on_values": ("dropout_not_on_weights",),
    "CausalAttention_no_dropout": ("dropout_missing",),
    "CausalAttention_dropout_not_scaled": (),
    "CausalAttentionWithoutBuffers": ("mask_plain_attribute",),
    "CausalAttention_buffer_not_saved": ("mask_not_persistent",),
    "CausalAttention_mask_parameter": ("mask_as_parameter",),
    "CausalAttention_no_buffer_line": ("tensor_created_on_cpu",),
    "CausalAttention_fresh_mask_in_forward": ("tensor_created_on_cpu",),
}
