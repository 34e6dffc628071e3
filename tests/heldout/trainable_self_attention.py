"""Held-out attempts at notebook 02 (SelfAttention_v1, SelfAttention_v2, load_v2_weights_into_v1)."""

import math

import torch
from torch import nn

from tests.heldout import CORRECT, NONE_KNOWN, Attempt


class GivenV1(nn.Module):
    """The notebook's SelfAttention_v1 __init__ (given); the learner writes forward."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))


class GivenV2(nn.Module):
    """The notebook's SelfAttention_v2 __init__ (given); the learner writes forward."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)


# ---- 02-1 SelfAttention_v1


class V1NoScale(GivenV1):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_weights = torch.softmax(queries @ keys.T, dim=-1)
        return attn_weights @ values


class V1ScaleByDk(GivenV1):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        d_k = keys.shape[-1]
        attn_weights = torch.softmax(queries @ keys.T / d_k, dim=-1)
        return attn_weights @ values


class V1ScaleByDin(GivenV1):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_weights = torch.softmax(queries @ keys.T / x.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V1SoftmaxDim0(GivenV1):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0)
        return attn_weights @ values


class V1KeysTimesQueries(GivenV1):
    # scores with keys first: entry [i, j] is key i against query j
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_weights = torch.softmax(keys @ queries.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V1TransposeQueries(GivenV1):
    # queries.T @ keys: (d_out, d_out) "scores"
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_weights = torch.softmax(queries.T @ keys / keys.shape[-1] ** 0.5, dim=-1)
        return values @ attn_weights


class V1WeightsTimesInputs(GivenV1):
    # the notebook-01 habit: weights @ inputs, values never used
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ x


class V1MathSqrtCorrect(GivenV1):
    def forward(self, x):
        queries = torch.matmul(x, self.W_query)
        keys = torch.matmul(x, self.W_key)
        values = torch.matmul(x, self.W_value)
        scores = torch.matmul(queries, keys.transpose(0, 1)) / math.sqrt(self.W_key.shape[1])
        return torch.matmul(torch.softmax(scores, dim=1), values)


class V1MultiplyCorrect(GivenV1):
    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(q @ k.mT * k.shape[-1] ** -0.5, dim=-1) @ v


# ---- 02-2 SelfAttention_v2


class V2WeightMatrix(GivenV2):
    # used the layer's weight as the matrix of v1
    def forward(self, x):
        keys = x @ self.W_key.weight
        queries = x @ self.W_query.weight
        values = x @ self.W_value.weight
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V2WeightTransposedNoBias(GivenV2):
    # x @ weight.T, as the notebook says the layer computes, and the bias forgotten
    def forward(self, x):
        keys = x @ self.W_key.weight.T
        queries = x @ self.W_query.weight.T
        values = x @ self.W_value.weight.T
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V2ScaleByDin(GivenV2):
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        d_k = x.shape[1]
        attn_weights = torch.softmax(queries @ keys.T / d_k**0.5, dim=-1)
        return attn_weights @ values


class V2ScaledTwice(GivenV2):
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T / keys.shape[-1] ** 0.5
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V2ScaleByNumTokens(GivenV2):
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_weights = torch.softmax(queries @ keys.T / len(x) ** 0.5, dim=-1)
        return attn_weights @ values


class V2ValuesFromKeys(GivenV2):
    # copy-paste slip: values projected with W_key
    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_key(x)
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class V2SqrtTensorCorrect(GivenV2):
    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        d_k = torch.tensor(keys.shape[-1], dtype=x.dtype, device=x.device)
        return torch.softmax((queries @ keys.transpose(-2, -1)) / torch.sqrt(d_k), dim=-1) @ values


# ---- 02-3 load_v2_weights_into_v1


def load_no_transpose(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)
    return sa_v1


def load_new_parameters(sa_v1, sa_v2):
    # replaced the parameters instead of copying into them
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.T)
    return sa_v1


def load_through_data(sa_v1, sa_v2):
    # .data = ...: same Parameter objects, but now aliases of v2's memory
    sa_v1.W_query.data = sa_v2.W_query.weight.data.T
    sa_v1.W_key.data = sa_v2.W_key.weight.data.T
    sa_v1.W_value.data = sa_v2.W_value.weight.data.T
    return sa_v1


def load_no_return(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)


def load_query_key_swapped(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
    return sa_v1


def load_without_no_grad(sa_v1, sa_v2):
    # in-place copy into a leaf that requires grad, outside torch.no_grad()
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
    return sa_v1


def load_view_for_transpose(sa_v1, sa_v2):
    # "change (d_out, d_in) into (d_in, d_out)": a view with the new shape
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.view(getattr(sa_v1, name).shape))
    return sa_v1


def load_state_dict_correct(sa_v1, sa_v2):
    # load_state_dict copies into the existing parameters
    sa_v1.load_state_dict({name: getattr(sa_v2, name).weight.T for name in ("W_query", "W_key", "W_value")})
    return sa_v1


def load_loop_t_correct(sa_v1, sa_v2):
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.t())
    return sa_v1


ATTEMPTS = (
    Attempt("v1_no_scale", "self_attention_v1", (V1NoScale,), "missing_scaling", "forgot to divide by sqrt(d_k)"),
    Attempt("v1_scale_by_dk", "self_attention_v1", (V1ScaleByDk,), "scale_wrong_value", "divided by d_k, not its root"),
    Attempt("v1_scale_by_din", "self_attention_v1", (V1ScaleByDin,), "scale_by_d_in",
            "sqrt of x.shape[-1] (d_in) instead of the key size"),
    Attempt("v1_softmax_dim0", "self_attention_v1", (V1SoftmaxDim0,), "softmax_wrong_dim", "softmax over dim 0"),
    Attempt("v1_keys_times_queries", "self_attention_v1", (V1KeysTimesQueries,), "query_key_swapped",
            "keys @ queries.T: scores transposed"),
    Attempt("v1_transpose_queries", "self_attention_v1", (V1TransposeQueries,), NONE_KNOWN,
            "queries.T @ keys, a (d_out, d_out) matrix, and values @ weights"),
    Attempt("v1_weights_times_inputs", "self_attention_v1", (V1WeightsTimesInputs,), NONE_KNOWN,
            "weights @ x: values never used (notebook 01's habit)"),
    Attempt("v1_math_sqrt", "self_attention_v1", (V1MathSqrtCorrect,), CORRECT,
            "torch.matmul, transpose(0, 1), math.sqrt of W_key.shape[1], softmax dim=1"),
    Attempt("v1_multiply_rsqrt", "self_attention_v1", (V1MultiplyCorrect,), CORRECT,
            "k.mT and multiplying by d_k ** -0.5"),
    Attempt("v2_weight_matrix", "self_attention_v2", (V2WeightMatrix,), "linear_as_matrix",
            "x @ layer.weight, no transpose"),
    Attempt("v2_weight_transposed_no_bias", "self_attention_v2", (V2WeightTransposedNoBias,),
            ("qkv_bias_ignored", "linear_as_matrix"),
            "x @ layer.weight.T: right without bias, the bias never added"),
    Attempt("v2_scale_by_din", "self_attention_v2", (V2ScaleByDin,), "scale_by_d_in", "sqrt(x.shape[1]), d_in"),
    Attempt("v2_scaled_twice", "self_attention_v2", (V2ScaledTwice,), "scale_wrong_value",
            "scaled the scores, then again inside the softmax"),
    Attempt("v2_scale_by_num_tokens", "self_attention_v2", (V2ScaleByNumTokens,), "scale_wrong_value",
            "sqrt(len(x)): the number of tokens"),
    Attempt("v2_values_from_keys", "self_attention_v2", (V2ValuesFromKeys,), NONE_KNOWN,
            "values = self.W_key(x), a copy-paste slip"),
    Attempt("v2_sqrt_tensor", "self_attention_v2", (V2SqrtTensorCorrect,), CORRECT,
            "torch.sqrt of a tensor made with x's dtype and device"),
    Attempt("transfer_no_transpose", "transfer_weights", (load_no_transpose,), "weights_not_transposed",
            "copied weight without transposing"),
    Attempt("transfer_new_parameters", "transfer_weights", (load_new_parameters,),
            ("parameters_replaced", "aliased_not_copied"),
            "sa_v1.W = nn.Parameter(weight.T): new objects sharing v2's memory"),
    Attempt("transfer_through_data", "transfer_weights", (load_through_data,), "aliased_not_copied",
            ".data = weight.data.T: aliases v2's memory"),
    Attempt("transfer_no_return", "transfer_weights", (load_no_return,), NONE_KNOWN, "forgot return sa_v1"),
    Attempt("transfer_query_key_swapped", "transfer_weights", (load_query_key_swapped,), "weights_mixed_up",
            "query and key copied into each other"),
    Attempt("transfer_without_no_grad", "transfer_weights", (load_without_no_grad,), "copy_without_no_grad",
            "copy_ outside torch.no_grad()"),
    Attempt("transfer_view_for_transpose", "transfer_weights", (load_view_for_transpose,), "reshape_not_transpose",
            "view to (d_in, d_out) instead of transposing"),
    Attempt("transfer_load_state_dict", "transfer_weights", (load_state_dict_correct,), CORRECT,
            "sa_v1.load_state_dict with the transposed weights"),
    Attempt("transfer_loop_t", "transfer_weights", (load_loop_t_correct,), CORRECT,
            "a loop over the names with getattr and .t()"),
)

__all__ = ["ATTEMPTS", "CORRECT", "NONE_KNOWN"]
