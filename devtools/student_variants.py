"""Attention modules written as a student would, with one knob per family of mistakes.

These are the students of the variant grid (devtools.variant_grid). They are written like notebook code (layers,
masked_fill, nn.Dropout), independently of autograder.course.variants, the functional reference the judges
use to name a mistake: the grid measures whether the checks recognise code they did not generate.

`Knobs()` is a correct module; every other value of a knob is one mistake (or one legitimate alternative).
"""

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

NOTEBOOK_BATCH_SIZE = 2  # the notebook's example batch: a size read from it instead of the input's own
# Padding fills applied before the causal mask (the others come after it, or not at all).
BEFORE_CAUSAL_FILLS = ("finfo_before", "minus_1e9_before", "neg_inf", "inverted", "query_axis", "global_batch")


@dataclass(frozen=True)
class Knobs:
    softmax_dim: int = -1  # the axis of the scores the softmax runs over
    scale: str = "keys"  # keys (keys.shape[-1]), d_out, d_in, none, after_softmax; or the root of keys.shape[-1]
    # dividing one projection instead of the scores: on_queries, on_keys (both right), on_values (= after_softmax);
    # d_k (the key size, not its root), twice (the root on the queries and on the scores), num_tokens
    mask: str = "future"  # future, with_diagonal, inverted, inverted_tril, dropped, after_softmax, not_truncated,
    # renormalised (the notes' other route: softmax over every key, zero the future, renormalise the rows)
    fill: float = -math.inf  # what masked scores are filled with
    dropout: str = "weights"  # weights, missing, scores, masked_scores, values, output, input, always
    buffer: str = "buffer"  # buffer, plain, parameter, not_persistent, fresh_in_forward
    swap_qk: bool = False
    bias: str = "qkv_bias"  # qkv_bias, always, never, out_proj_follows (MultiHeadAttention's out_proj)
    linear: str = "call"  # call, matrix (x @ layer.weight)
    split: str = "transpose"  # transpose, view_only, head_dim_first
    merge: str = "transpose"  # transpose, no_transpose, head_dim_first
    out_proj: bool = True
    only: str = "all"  # the projection the split and linear knobs touch: all, queries, keys, values
    padding_fill: str = "finfo_before"  # finfo_before, finfo_after, minus_1e20_after, minus_1e9_before, neg_inf,
    # ignored, inverted, query_axis, global_batch


def _mask_init(module, knobs, context_length):
    """The mask as the knob keeps it: a buffer, a plain attribute, a parameter, a buffer left out of state_dict."""
    diagonal = 0 if knobs.mask == "with_diagonal" else 1
    mask = torch.triu(torch.ones(context_length, context_length), diagonal=diagonal)
    if knobs.mask == "inverted":
        mask = torch.tril(torch.ones(context_length, context_length), diagonal=-1)
    if knobs.mask == "inverted_tril":  # tril where triu was meant: hides the past and the token itself
        mask = torch.tril(torch.ones(context_length, context_length))
    if knobs.buffer == "plain":
        module.mask = mask
    elif knobs.buffer == "parameter":
        module.mask = nn.Parameter(mask, requires_grad=False)
    else:
        module.register_buffer("mask", mask, persistent=knobs.buffer != "not_persistent")


def _blocked(module, knobs, num_tokens):
    """The (num_tokens, num_tokens) bool mask the forward pass uses."""
    if knobs.buffer == "fresh_in_forward":  # made again in forward, without device=: stays on the CPU
        return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
    if knobs.mask == "not_truncated":
        return module.mask.bool()
    return module.mask.bool()[:num_tokens, :num_tokens]


def _touches(knobs, role):
    return knobs.only in ("all", role)


def _project(layer, x, knobs, role):
    if knobs.linear == "matrix" and _touches(knobs, role):
        return x @ layer.weight + (layer.bias if layer.bias is not None else 0)
    return layer(x)


def _attend(module, knobs, queries, keys, values, d_in, num_tokens, padded=None):
    """Scores, mask, scale, softmax, dropout and the weighted sum over the last two axes of (..., tokens, dim)."""
    queries, keys, values = _scaled_projections(knobs, queries, keys, values)
    if knobs.swap_qk:
        queries, keys = keys, queries
    if knobs.dropout == "values":
        values = module.dropout(values)
    scores = queries @ keys.transpose(-2, -1)
    if knobs.dropout == "scores":
        scores = module.dropout(scores)
    if padded is not None and knobs.padding_fill in BEFORE_CAUSAL_FILLS:
        fill = {"minus_1e9_before": -1e9, "neg_inf": -math.inf}.get(knobs.padding_fill, torch.finfo(scores.dtype).min)
        scores = scores.masked_fill(~padded if knobs.padding_fill == "inverted" else padded, fill)
    blocked = _blocked(module, knobs, num_tokens)
    if knobs.mask == "dropped":
        scores.masked_fill(blocked, knobs.fill)  # the result is thrown away
    elif knobs.mask not in ("after_softmax", "renormalised"):
        scores = scores.masked_fill(blocked, knobs.fill)
    if padded is not None and knobs.padding_fill in ("finfo_after", "minus_1e20_after"):
        scores = scores.masked_fill(padded, torch.finfo(scores.dtype).min if knobs.padding_fill == "finfo_after"
                                    else -1e20)
    if knobs.dropout == "masked_scores":
        scores = module.dropout(scores)
    divisor = _divisor(knobs, keys, module.d_out, d_in)
    weights = torch.softmax(scores / divisor, dim=knobs.softmax_dim)
    if knobs.scale == "after_softmax":
        weights = weights / keys.shape[-1] ** 0.5
    if knobs.mask == "after_softmax":
        weights = weights.masked_fill(blocked, 0.0)
    if knobs.mask == "renormalised":  # times the lower triangle (1 - mask), then each row divided by its sum
        weights = weights * (1 - blocked.to(weights.dtype))
        weights = weights / weights.sum(dim=-1, keepdim=True)
    if knobs.dropout == "weights":
        weights = module.dropout(weights)
    elif knobs.dropout == "always":
        weights = F.dropout(weights, module.dropout.p, training=True)
    return weights @ values


def _divisor(knobs, keys, d_out, d_in):
    """What the scores are divided by: 1 where the scale went elsewhere (after the softmax, onto a projection)."""
    if knobs.scale == "d_k":  # the key size itself, not its root
        return keys.shape[-1]
    if knobs.scale == "twice":  # the root on the queries (_scaled_projections) and again on the scores
        return keys.shape[-1] ** 0.5
    if knobs.scale == "num_tokens":
        return keys.shape[-2]
    return {"keys": keys.shape[-1], "d_out": d_out, "d_in": d_in}.get(knobs.scale, 1) ** 0.5


def _scaled_projections(knobs, queries, keys, values):
    """The projections, one of them divided by the root of the key size when the scale knob puts it there."""
    root = keys.shape[-1] ** 0.5
    queries = queries / root if knobs.scale in ("on_queries", "twice") else queries
    keys = keys / root if knobs.scale == "on_keys" else keys
    values = values / root if knobs.scale == "on_values" else values
    return queries, keys, values


def causal_attention(knobs):
    class CausalAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
            super().__init__()
            bias = {"qkv_bias": qkv_bias, "always": True, "never": False}[knobs.bias]
            self.d_out = d_out
            self.W_query = nn.Linear(d_in, d_out, bias=bias)
            self.W_key = nn.Linear(d_in, d_out, bias=bias)
            self.W_value = nn.Linear(d_in, d_out, bias=bias)
            self.dropout = nn.Dropout(dropout)
            _mask_init(self, knobs, context_length)

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            if knobs.dropout == "input":
                x = self.dropout(x)
            keys = _project(self.W_key, x, knobs, "keys")  # (b, num_tokens, d_out)
            queries = _project(self.W_query, x, knobs, "queries")
            values = _project(self.W_value, x, knobs, "values")
            context = _attend(self, knobs, queries, keys, values, d_in, num_tokens)  # (b, num_tokens, d_out)
            return self.dropout(context) if knobs.dropout == "output" else context

    return CausalAttention


def multi_head_attention(knobs):
    class MultiHeadAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            bias = {"qkv_bias": qkv_bias, "always": True, "never": False, "out_proj_follows": qkv_bias}[knobs.bias]
            self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=bias)
            self.W_key = nn.Linear(d_in, d_out, bias=bias)
            self.W_value = nn.Linear(d_in, d_out, bias=bias)
            self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias if knobs.bias == "out_proj_follows" else True)
            self.dropout = nn.Dropout(dropout)
            _mask_init(self, knobs, context_length)

        def split(self, t, b, num_tokens, role):
            if not _touches(knobs, role):
                return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            if knobs.split == "view_only":
                return t.view(b, self.num_heads, num_tokens, self.head_dim)
            if knobs.split == "head_dim_first":
                return t.view(b, num_tokens, self.head_dim, self.num_heads).permute(0, 3, 1, 2)
            return t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        def merge(self, t, b, num_tokens):
            if knobs.merge == "no_transpose":
                return t.reshape(b, num_tokens, self.d_out)
            if knobs.merge == "head_dim_first":
                return t.permute(0, 2, 3, 1).reshape(b, num_tokens, self.d_out)
            return t.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)

        def forward(self, x, attention_mask=None):
            b, num_tokens, d_in = x.shape
            if knobs.dropout == "input":
                x = self.dropout(x)
            # (b, heads, num_tokens, head_dim)
            queries = self.split(_project(self.W_query, x, knobs, "queries"), b, num_tokens, "queries")
            keys = self.split(_project(self.W_key, x, knobs, "keys"), b, num_tokens, "keys")
            values = self.split(_project(self.W_value, x, knobs, "values"), b, num_tokens, "values")
            padded = None
            if attention_mask is not None and knobs.padding_fill == "query_axis":  # hides padded queries' rows
                padded = (attention_mask == 0).view(b, 1, num_tokens, 1)
            elif attention_mask is not None and knobs.padding_fill == "global_batch":  # the notebook's batch size
                padded = (attention_mask == 0).view(NOTEBOOK_BATCH_SIZE, 1, 1, num_tokens)
            elif attention_mask is not None and knobs.padding_fill != "ignored":
                padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
            context = _attend(self, knobs, queries, keys, values, d_in, num_tokens, padded)
            context = self.merge(context, b, num_tokens)  # (b, num_tokens, d_out)
            if knobs.dropout == "output":
                context = self.dropout(context)
            return self.out_proj(context) if knobs.out_proj else context

    return MultiHeadAttention


def self_attention_v1(knobs):
    class SelfAttention_v1(nn.Module):  # noqa: N801 - the book's name
        def __init__(self, d_in, d_out):
            super().__init__()
            self.d_out = d_out
            self.W_query = nn.Parameter(torch.rand(d_in, d_out))
            self.W_key = nn.Parameter(torch.rand(d_in, d_out))
            self.W_value = nn.Parameter(torch.rand(d_in, d_out))

        def forward(self, x):
            queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value  # (num_tokens, d_out)
            return _unmasked(self, knobs, queries, keys, values, x.shape[-1])

    return SelfAttention_v1


def self_attention_v2(knobs):
    class SelfAttention_v2(nn.Module):  # noqa: N801 - the book's name
        def __init__(self, d_in, d_out, qkv_bias=False):
            super().__init__()
            bias = {"qkv_bias": qkv_bias, "always": True, "never": False}[knobs.bias]
            self.d_out = d_out
            self.W_query = nn.Linear(d_in, d_out, bias=bias)
            self.W_key = nn.Linear(d_in, d_out, bias=bias)
            self.W_value = nn.Linear(d_in, d_out, bias=bias)

        def forward(self, x):
            queries = _project(self.W_query, x, knobs, "queries")  # (num_tokens, d_out)
            keys = _project(self.W_key, x, knobs, "keys")
            values = _project(self.W_value, x, knobs, "values")
            return _unmasked(self, knobs, queries, keys, values, x.shape[-1])

    return SelfAttention_v2


def _unmasked(module, knobs, queries, keys, values, d_in):
    """SelfAttention_v1/v2's forward after the projections: no mask, no dropout."""
    queries, keys, values = _scaled_projections(knobs, queries, keys, values)
    if knobs.swap_qk:
        queries, keys = keys, queries
    scores = queries @ keys.T  # (num_tokens, num_tokens)
    divisor = _divisor(knobs, keys, module.d_out, d_in)
    weights = torch.softmax(scores / divisor, dim=knobs.softmax_dim)
    if knobs.scale == "after_softmax":
        weights = weights / keys.shape[-1] ** 0.5
    return weights @ values


@dataclass(frozen=True)
class WrapperKnobs:
    join: str = "cat_features"  # cat_features, cat_tokens, cat_batch, stack_last, stack_first
    heads: str = "module_list"  # module_list, plain_list, shared
    dropout: str = "passed"  # passed, zero
    bias: str = "passed"  # passed, never


def wrapper(knobs, head_class):
    """MultiHeadAttentionWrapper over the notebook's given CausalAttention (`head_class`)."""
    class MultiHeadAttentionWrapper(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            p = dropout if knobs.dropout == "passed" else 0.0
            bias = qkv_bias if knobs.bias == "passed" else False
            if knobs.heads == "shared":
                heads = [head_class(d_in, d_out, context_length, p, bias)] * num_heads
            else:
                heads = [head_class(d_in, d_out, context_length, p, bias) for _ in range(num_heads)]
            self.heads = heads if knobs.heads == "plain_list" else nn.ModuleList(heads)

        def forward(self, x):
            outputs = [head(x) for head in self.heads]
            if knobs.join == "cat_tokens":
                return torch.cat(outputs, dim=1)
            if knobs.join == "cat_batch":
                return torch.cat(outputs, dim=0)
            if knobs.join == "stack_last":
                return torch.stack(outputs, dim=-1)
            if knobs.join == "stack_first":
                return torch.stack(outputs, dim=0)
            return torch.cat(outputs, dim=-1)

    return MultiHeadAttentionWrapper
