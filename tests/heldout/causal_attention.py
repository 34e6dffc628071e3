"""Held-out attempts at notebook 03 (causal_mask, the two masking routes, CausalAttention)."""

import torch
from torch import nn

from tests.heldout import CORRECT, NONE_KNOWN, Attempt

# ---- 03-1 causal_mask


def causal_mask_diagonal_0(num_tokens):
    # hides the diagonal too: a token cannot see itself
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=0).bool()


def causal_mask_tril(num_tokens):
    # tril, "the lower triangle is what a token sees": True where it may look
    return torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool))


def causal_mask_floats(num_tokens):
    # the book's float mask (1.0 above the diagonal): never made boolean
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1)


def causal_mask_diagonal_minus_1(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=-1).bool()


def causal_mask_tril_equals_zero_correct(num_tokens):
    return torch.tril(torch.ones(num_tokens, num_tokens)) == 0


def causal_mask_inverted_tril_correct(num_tokens):
    return ~torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool))


def causal_mask_arange_correct(num_tokens):
    positions = torch.arange(num_tokens)
    return positions[None, :] > positions[:, None]


# ---- 03-2 the masking routes: right ones to pair a wrong route with


def renormalised_right(attn_weights):
    n = attn_weights.shape[-1]
    lower = torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * lower
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_right(attn_scores):
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf), dim=-1)


def renormalised_no_keepdim(attn_weights):
    n = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    return masked / masked.sum(dim=-1)


def renormalised_on_cpu(attn_weights):
    # the triangle built without a device
    n = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(n, n, dtype=attn_weights.dtype))
    return masked / masked.sum(dim=-1, keepdim=True)


def renormalised_triu(attn_weights):
    # triu for the triangle of ones: keeps the future, zeroes the past
    n = attn_weights.shape[-1]
    masked = attn_weights * torch.triu(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    return masked / masked.sum(dim=-1, keepdim=True)


def renormalised_in_place(attn_weights):
    n = attn_weights.shape[-1]
    attn_weights *= torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    attn_weights /= attn_weights.sum(dim=-1, keepdim=True)
    return attn_weights


def renormalised_column_sums(attn_weights):
    n = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))
    return masked / masked.sum(dim=-2, keepdim=True)


def renormalised_not_renormalised(attn_weights):
    # zeroed the future and stopped there
    n = attn_weights.shape[-1]
    return attn_weights * torch.tril(torch.ones(n, n, dtype=attn_weights.dtype, device=attn_weights.device))


def neg_inf_fill_zero(attn_scores):
    # "hide" the future with 0
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, 0.0), dim=-1)


def neg_inf_in_place(attn_scores):
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    attn_scores.masked_fill_(mask, -torch.inf)
    return torch.softmax(attn_scores, dim=-1)


def neg_inf_mask_on_cpu(attn_scores):
    # the notebook's causal_mask, on the CPU whatever the scores' device
    mask = torch.triu(torch.ones(attn_scores.shape[-1], attn_scores.shape[-1], dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf), dim=-1)


def neg_inf_softmax_dim_minus_2(attn_scores):
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf), dim=-2)


def neg_inf_scales_again(attn_scores):
    # divided by sqrt(d_k) although the scores are already scaled (d_k taken from the last axis)
    n = attn_scores.shape[-1]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf) / n**0.5, dim=-1)


def neg_inf_tril_mask(attn_scores):
    # filled where tril is True: the past and the diagonal get -inf
    n = attn_scores.shape[-1]
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool, device=attn_scores.device))
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf), dim=-1)


def renormalised_tril_of_weights_correct(attn_weights):
    # torch.tril on the weights themselves: the future is zeroed without building a triangle
    masked = torch.tril(attn_weights)
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_where_correct(attn_scores):
    n = attn_scores.shape[-1]
    future = torch.ones(n, n, dtype=torch.bool, device=attn_scores.device).triu(1)
    filled = torch.where(future, torch.full_like(attn_scores, float("-inf")), attn_scores)
    return filled.softmax(dim=-1)


# ---- 03-3 CausalAttention


class CausalKeysT(nn.Module):
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
        attn_scores = queries @ keys.T
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


class CausalFullMask(CausalKeysT):
    # the whole context_length mask, never cut to num_tokens
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalPlainAttribute(nn.Module):
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
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalGiven(CausalKeysT):
    """The right __init__ (a float buffer, as the book): the attempts below only change forward."""


class CausalDropoutOnScores(CausalGiven):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = self.dropout(queries @ keys.transpose(1, 2))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class CausalDropoutOnOutput(CausalGiven):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(attn_weights @ values)


class CausalNoDropout(CausalGiven):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class CausalBoolInForward(CausalGiven):
    # converts the buffer once, in forward, and keeps the result
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        self.mask = self.mask.bool()
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalFloatMaskFill(CausalGiven):
    # forgot .bool(): masked_fill with the float buffer
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalSoftmaxDim1(CausalGiven):
    # the book's older softmax over dim=1
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=1))
        return attn_weights @ values


class CausalScaleByDOut(CausalGiven):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / self.d_out, dim=-1))
        return attn_weights @ values


class CausalDiagonalBuffer(nn.Module):
    # buffer built with diagonal=0: each token hides itself
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length)))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalMaskMadeInForward(CausalGiven):
    # registers the buffer, then builds a fresh mask in forward (on the CPU) and uses that
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        mask = torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values


class CausalBoolBufferCorrect(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(-2, -1)) / keys.shape[-1] ** 0.5
        scores = torch.where(self.mask[:num_tokens, :num_tokens], float("-inf"), scores)
        return self.dropout(scores.softmax(dim=-1)) @ values


class CausalMatmulCorrect(CausalGiven):
    def forward(self, x):
        num_tokens = x.shape[1]
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = torch.matmul(queries, keys.mT)
        future = self.mask[:num_tokens, :num_tokens] == 1
        attn_scores.masked_fill_(future, -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.d_out**0.5, dim=-1)
        return torch.matmul(self.dropout(attn_weights), values)


ATTEMPTS = (
    Attempt("mask_diagonal_0", "causal_mask", (causal_mask_diagonal_0,),
            "mask_includes_diagonal", "triu with diagonal=0"),
    Attempt("mask_tril", "causal_mask", (causal_mask_tril,), "mask_inverted", "tril: True on what a token sees"),
    Attempt("mask_floats", "causal_mask", (causal_mask_floats,), NONE_KNOWN, "the book's float mask, not bool"),
    Attempt("mask_diagonal_minus_1", "causal_mask", (causal_mask_diagonal_minus_1,), "mask_includes_diagonal",
            "diagonal=-1: hides the diagonal and one below"),
    Attempt("mask_tril_equals_zero", "causal_mask", (causal_mask_tril_equals_zero_correct,), CORRECT,
            "tril(ones) == 0"),
    Attempt("mask_inverted_tril", "causal_mask", (causal_mask_inverted_tril_correct,), CORRECT, "~tril(bool ones)"),
    Attempt("mask_arange", "causal_mask", (causal_mask_arange_correct,), CORRECT, "compare positions j > i"),
    Attempt("route1_no_keepdim", "masking_routes", (renormalised_no_keepdim, neg_inf_right), "missing_keepdim",
            "route 1: row sums without keepdim"),
    Attempt("route1_on_cpu", "masking_routes", (renormalised_on_cpu, neg_inf_right), "tensor_created_on_cpu",
            "route 1: triangle made without the weights' device"),
    Attempt("route1_triu", "masking_routes", (renormalised_triu, neg_inf_right), "mask_inverted",
            "route 1: triu for the triangle of ones"),
    Attempt("route1_in_place", "masking_routes", (renormalised_in_place, neg_inf_right), "input_edited_in_place",
            "route 1: *= and /= on the caller's weights"),
    Attempt("route1_column_sums", "masking_routes", (renormalised_column_sums, neg_inf_right), "row_sums_wrong_axis",
            "route 1: sums over dim=-2"),
    Attempt("route1_not_renormalised", "masking_routes", (renormalised_not_renormalised, neg_inf_right),
            "mask_after_softmax_no_renorm", "route 1: zeroed the future, no division"),
    Attempt("route2_fill_zero", "masking_routes", (renormalised_right, neg_inf_fill_zero), NONE_KNOWN,
            "route 2: masked_fill with 0"),
    Attempt("route2_in_place", "masking_routes", (renormalised_right, neg_inf_in_place), "input_edited_in_place",
            "route 2: masked_fill_ on the caller's scores"),
    Attempt("route2_mask_on_cpu", "masking_routes", (renormalised_right, neg_inf_mask_on_cpu), "tensor_created_on_cpu",
            "route 2: the mask on the CPU"),
    Attempt("route2_softmax_dim_minus_2", "masking_routes", (renormalised_right, neg_inf_softmax_dim_minus_2),
            "softmax_wrong_dim", "route 2: softmax over dim=-2"),
    Attempt("route2_scales_again", "masking_routes", (renormalised_right, neg_inf_scales_again), "scale_wrong_value",
            "route 2: divided the already scaled scores by sqrt(n)"),
    Attempt("route2_tril_mask", "masking_routes", (renormalised_right, neg_inf_tril_mask),
            ("mask_inverted", "mask_includes_diagonal"),
            "route 2: filled where tril is True"),
    Attempt("routes_tril_of_weights_and_where", "masking_routes",
            (renormalised_tril_of_weights_correct, neg_inf_where_correct), CORRECT,
            "route 1 with torch.tril on the weights, route 2 with torch.where"),
    Attempt("causal_keys_T", "causal_attention", (CausalKeysT,), "transpose_batched", "keys.T with a batch axis"),
    Attempt("causal_full_mask", "causal_attention", (CausalFullMask,),
            "mask_not_truncated", "mask not cut to num_tokens"),
    Attempt("causal_plain_attribute", "causal_attention", (CausalPlainAttribute,), "mask_plain_attribute",
            "self.mask = ..., a plain attribute"),
    Attempt("causal_dropout_on_scores", "causal_attention", (CausalDropoutOnScores,), "dropout_before_softmax",
            "dropout on the scores before masking"),
    Attempt("causal_dropout_on_output", "causal_attention", (CausalDropoutOnOutput,), "dropout_not_on_weights",
            "dropout on the context vectors"),
    Attempt("causal_no_dropout", "causal_attention", (CausalNoDropout,), "dropout_missing",
            "self.dropout never applied"),
    Attempt("causal_bool_in_forward", "causal_attention", (CausalBoolInForward,), "state_changed_by_forward",
            "self.mask = self.mask.bool() in forward"),
    Attempt("causal_float_mask_fill", "causal_attention", (CausalFloatMaskFill,), NONE_KNOWN,
            "masked_fill with the float buffer (no .bool())"),
    Attempt("causal_softmax_dim1", "causal_attention", (CausalSoftmaxDim1,), "softmax_wrong_dim", "softmax over dim=1"),
    Attempt("causal_scale_by_d_out", "causal_attention", (CausalScaleByDOut,), "scale_wrong_value",
            "divided by d_out, not its root"),
    Attempt("causal_diagonal_buffer", "causal_attention", (CausalDiagonalBuffer,), "mask_includes_diagonal",
            "buffer made with triu(ones) (diagonal 0)"),
    Attempt("causal_mask_made_in_forward", "causal_attention", (CausalMaskMadeInForward,), "tensor_created_on_cpu",
            "a new CPU mask built in forward instead of the buffer"),
    Attempt("causal_bool_buffer", "causal_attention", (CausalBoolBufferCorrect,), CORRECT,
            "a boolean buffer, scaled before filling, torch.where"),
    Attempt("causal_matmul", "causal_attention", (CausalMatmulCorrect,), CORRECT,
            "torch.matmul, keys.mT, mask == 1, masked_fill_ on its own scores, sqrt(d_out)"),
)

__all__ = ["ATTEMPTS", "CORRECT", "NONE_KNOWN"]
