"""Held-out attempts at notebook 01 (softmax_naive, softmax_stable, context_vectors), from its instructions only."""

import torch

from tests.heldout import CORRECT, NONE_KNOWN, Attempt

# Given in the notebook: the learner calls these.


def attention_scores(inputs):
    return inputs @ inputs.T


def attention_scores_for_query(inputs, query):
    return inputs @ query


def context_vector_for_query(inputs, query):
    attn_weights = torch.softmax(attention_scores_for_query(inputs, query), dim=0)
    return attn_weights @ inputs


# ---- 01-1 softmax_naive


def softmax_naive_sum_everything(x):
    # "divide by the sum of the exponentials": summed the whole tensor, not dim 0
    return torch.exp(x) / torch.exp(x).sum()


def softmax_naive_last_dim(x):
    # the habit from torch.softmax(..., dim=-1): sums each row instead of each column
    exps = torch.exp(x)
    return exps / exps.sum(dim=-1, keepdim=True)


def softmax_naive_exp_in_place(x):
    # saves memory by exponentiating in place: the caller's scores are gone
    x.exp_()
    return x / x.sum(dim=0)


def softmax_naive_float32(x):
    # "make sure it is a float tensor" before exp
    x = x.float()
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def softmax_naive_through_data(x):
    # x.data, as an older tutorial did: the result no longer depends on x for autograd
    exps = torch.exp(x.data)
    return exps / exps.sum(dim=0)


def softmax_naive_correct_keepdim(x):
    exps = x.exp()
    return exps / exps.sum(0, keepdim=True)


# ---- 01-2 softmax_stable


def softmax_stable_max_no_keepdim(x, dim=-1):
    # forgot keepdim on the max (kept it on the sum)
    shifted = x - x.max(dim=dim).values
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_global_max(x, dim=-1):
    # one max over the whole tensor: "any constant works"
    exps = torch.exp(x - x.max())
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_sum_dim0(x, dim=-1):
    # subtracts the max along dim, but copied the sum over dim 0 from softmax_naive
    exps = torch.exp(x - x.max(dim=dim, keepdim=True).values)
    return exps / exps.sum(dim=0, keepdim=True)


def softmax_stable_sum_no_keepdim(x, dim=-1):
    exps = torch.exp(x - x.max(dim=dim, keepdim=True).values)
    return exps / exps.sum(dim=dim)


def softmax_stable_no_shift(x, dim=-1):
    # got the dims right and forgot the point of the exercise: no max subtracted
    exps = torch.exp(x)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_max_tuple(x, dim=-1):
    # torch.max with a dim returns (values, indices): subtracted the pair
    exps = torch.exp(x - torch.max(x, dim=dim, keepdim=True))
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_subtract_in_place(x, dim=-1):
    x -= x.max(dim=dim, keepdim=True).values
    exps = torch.exp(x)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_default_dim0(x, dim=0):
    # kept the default of softmax_naive
    exps = torch.exp(x - x.max(dim=dim, keepdim=True).values)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_amax_correct(x, dim=-1):
    shifted = x - torch.amax(x, dim=dim, keepdim=True)
    exps = shifted.exp()
    return exps / torch.sum(exps, dim=dim, keepdim=True)


def softmax_stable_indexed_max_correct(x, dim=-1):
    maximum = x.max(dim, keepdim=True)[0]
    numerator = torch.exp(x - maximum)
    denominator = numerator.sum(dim, keepdim=True)
    return numerator / denominator


# ---- 01-3 context_vectors


def context_vectors_softmax_dim0(inputs):
    attn_weights = torch.softmax(attention_scores(inputs), dim=0)
    return attn_weights @ inputs


def context_vectors_scaled(inputs):
    # already knows transformers: scaled the scores by sqrt(d)
    scores = attention_scores(inputs)
    attn_weights = torch.softmax(scores / inputs.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ inputs


def context_vectors_weights_by_sum(inputs):
    # the first idea of the notebook: divide by the sum instead of the softmax
    scores = attention_scores(inputs)
    attn_weights = scores / scores.sum(dim=-1, keepdim=True)
    return attn_weights @ inputs


def context_vectors_inputs_first(inputs):
    attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return (inputs.T @ attn_weights).T


def context_vectors_float32(inputs):
    inputs = inputs.to(torch.float32)
    attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return attn_weights @ inputs


def context_vectors_loop_correct(inputs):
    # one row at a time with the notebook's own function: slower, same numbers
    return torch.stack([context_vector_for_query(inputs, query) for query in inputs])


def context_vectors_dim1_correct(inputs):
    return torch.softmax(inputs @ inputs.T, dim=1) @ inputs


ATTEMPTS = (
    Attempt("naive_sum_everything", "softmax_naive", (softmax_naive_sum_everything,), "softmax_sum_wrong_axis",
            "summed the exponentials of the whole tensor, not along dim 0"),
    Attempt("naive_last_dim", "softmax_naive", (softmax_naive_last_dim,), "softmax_sum_wrong_axis",
            "summed along the last dim (rows) instead of dim 0"),
    Attempt("naive_exp_in_place", "softmax_naive", (softmax_naive_exp_in_place,), "input_edited_in_place",
            "exponentiated the input in place with exp_"),
    Attempt("naive_float32", "softmax_naive", (softmax_naive_float32,), NONE_KNOWN,
            "cast the input to float32 first"),
    Attempt("naive_through_data", "softmax_naive", (softmax_naive_through_data,), "gradient_cut",
            "exp of x.data: the graph to x is cut"),
    Attempt("naive_keepdim", "softmax_naive", (softmax_naive_correct_keepdim,), CORRECT,
            "sum over dim 0 with keepdim=True"),
    Attempt("stable_max_no_keepdim", "softmax_stable", (softmax_stable_max_no_keepdim,), "missing_keepdim",
            "max without keepdim, sum with it"),
    Attempt("stable_global_max", "softmax_stable", (softmax_stable_global_max,), NONE_KNOWN,
            "subtracted the max of the whole tensor"),
    Attempt("stable_sum_dim0", "softmax_stable", (softmax_stable_sum_dim0,), "max_and_sum_axes_differ",
            "max along dim, sum along dim 0"),
    Attempt("stable_sum_no_keepdim", "softmax_stable", (softmax_stable_sum_no_keepdim,), "missing_keepdim",
            "sum without keepdim"),
    Attempt("stable_no_shift", "softmax_stable", (softmax_stable_no_shift,), "naive_softmax_overflow",
            "forgot to subtract the max"),
    Attempt("stable_max_tuple", "softmax_stable", (softmax_stable_max_tuple,), NONE_KNOWN,
            "subtracted torch.max's (values, indices) pair"),
    Attempt("stable_subtract_in_place", "softmax_stable", (softmax_stable_subtract_in_place,), "input_edited_in_place",
            "x -= max: the caller's tensor changes"),
    Attempt("stable_default_dim0", "softmax_stable", (softmax_stable_default_dim0,), "default_dim_changed",
            "default dim=0 instead of -1"),
    Attempt("stable_amax", "softmax_stable", (softmax_stable_amax_correct,), CORRECT, "torch.amax with keepdim"),
    Attempt("stable_indexed_max", "softmax_stable", (softmax_stable_indexed_max_correct,), CORRECT,
            "x.max(dim, keepdim=True)[0], positional dims"),
    Attempt("context_softmax_dim0", "context_vectors", (context_vectors_softmax_dim0,), "softmax_wrong_dim",
            "softmax over dim 0 (columns)"),
    Attempt("context_scaled", "context_vectors", (context_vectors_scaled,), "scaled_without_weights",
            "divided the scores by sqrt(d_in) (no scaling in notebook 01)"),
    Attempt("context_weights_by_sum", "context_vectors", (context_vectors_weights_by_sum,), "normalised_without_exp",
            "normalised each row by its sum instead of softmax"),
    Attempt("context_inputs_first", "context_vectors", (context_vectors_inputs_first,), NONE_KNOWN,
            "(inputs.T @ weights).T: the weights used transposed"),
    Attempt("context_float32", "context_vectors", (context_vectors_float32,), NONE_KNOWN, "cast the input to float32"),
    Attempt("context_loop", "context_vectors", (context_vectors_loop_correct,), CORRECT,
            "a loop over the notebook's context_vector_for_query, stacked"),
    Attempt("context_dim1", "context_vectors", (context_vectors_dim1_correct,), CORRECT,
            "softmax over dim=1 on the 2-D scores"),
)

__all__ = ["ATTEMPTS", "CORRECT", "NONE_KNOWN"]
