"""Student-style implementations for notebooks 01 and 02: the book's code, correct rewrites and known mistakes.

Each mistake is written the way a student would write it, so the tests can check that the grader
takes points in the right exercise and names the right misconception.
"""

import numpy as np
import torch
from torch import nn

# ---------------------------------------------------------------------------------------------
# softmax_naive


def softmax_naive_book(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def softmax_naive_divide_by_sum(x):
    return x / x.sum(dim=0)  # the normalisation the notes show just before the softmax


def softmax_naive_builtin(x):
    return torch.softmax(x, dim=0)


def softmax_naive_last_axis(x):
    """The softmax of notebook 02's attention rows, written here: the notes' naive softmax runs over dim 0."""
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def softmax_naive_float32(x):
    x = x.float()  # "to be safe"
    return torch.exp(x) / torch.exp(x).sum()


# ---------------------------------------------------------------------------------------------
# softmax_stable


def softmax_stable_exp_methods(x, dim=-1):
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)


def softmax_stable_no_shift(x, dim=-1):
    return torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)


def softmax_stable_dim0(x, dim=-1):
    shifted = x - x.max(dim=0).values  # copied from softmax_naive's sum(dim=0)
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=0)


def softmax_stable_last_dim(x, dim=-1):
    shifted = x - x.max(dim=-1, keepdim=True).values
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=-1, keepdim=True)


def softmax_stable_default_dim0(x, dim=0):
    """The notes' softmax_naive normalised dim 0, so the default follows it."""
    shifted = x - x.max(dim=dim, keepdim=True).values
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True)


def softmax_stable_max_over_first_axis(x, dim=-1):
    """The maximum over the first axis (one per column), the sum over dim."""
    shifted = x - x.max(dim=0, keepdim=True).values
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True)


def softmax_stable_no_keepdim(x, dim=-1):
    shifted = x - x.max(dim=dim).values
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim)


def softmax_stable_in_place(x, dim=-1):
    x -= x.max(dim=dim, keepdim=True).values
    return torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)


def softmax_stable_numpy(x, dim=-1):
    """Right numbers from NumPy: autograd cannot follow them back."""
    values = x.detach().numpy()
    exp = np.exp(values - values.max(axis=dim, keepdims=True))
    return torch.from_numpy(exp / exp.sum(axis=dim, keepdims=True))


def softmax_stable_builtin(x, dim=-1):
    return torch.nn.functional.softmax(x, dim=dim)


def softmax_stable_log_softmax(x, dim=-1):
    return x.log_softmax(dim=dim).exp()


# ---------------------------------------------------------------------------------------------
# context_vectors


def context_vectors_detached(inputs):
    """"The weights are only looked up": detached, so no gradient reaches the inputs through them."""
    weights = torch.softmax(inputs @ inputs.T, dim=-1).detach()
    return weights @ inputs.detach()


def context_vectors_no_softmax(inputs):
    return (inputs @ inputs.T) @ inputs


def context_vectors_scaled(inputs):
    return torch.softmax(inputs @ inputs.T / inputs.shape[-1] ** 0.5, dim=-1) @ inputs


def context_vectors_book(inputs):
    attn_scores = inputs @ inputs.T
    attn_weights = torch.softmax(attn_scores, dim=-1)
    all_context_vecs = attn_weights @ inputs
    return all_context_vecs


def context_vectors_loops(inputs):
    num_tokens = inputs.shape[0]
    attn_scores = torch.empty(num_tokens, num_tokens, dtype=inputs.dtype)
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    return torch.softmax(attn_scores, dim=1) @ inputs


def softmax_stable_global_max(x, dim=-1):
    shifted = x - x.max()  # one maximum for the whole tensor
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim, keepdim=True)


def context_vectors_wrong_dim(inputs):
    return torch.softmax(inputs @ inputs.T, dim=0) @ inputs


def context_vectors_divide_by_sum(inputs):
    scores = inputs @ inputs.T
    return (scores / scores.sum(dim=-1, keepdim=True)) @ inputs


def context_vectors_notes_size(inputs):
    attn_scores = torch.empty(6, 6)  # the notes' loop, sized for their six tokens
    for i, x_i in enumerate(inputs):
        for j, x_j in enumerate(inputs):
            attn_scores[i, j] = torch.dot(x_i, x_j)
    return torch.softmax(attn_scores, dim=-1) @ inputs


def context_vectors_float32(inputs):
    inputs = inputs.float()
    return torch.softmax(inputs @ inputs.T, dim=-1) @ inputs


# ---------------------------------------------------------------------------------------------
# SelfAttention_v1: the notes' constructor, different forwards


class V1Base(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))


class SelfAttention_v1_book(V1Base):
    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T  # omega
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


class SelfAttention_v1_other_order(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        d_k = keys.shape[1]
        return torch.softmax(queries @ keys.T / d_k**0.5, dim=1) @ values


class SelfAttention_v1_no_scaling(V1Base):
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        return torch.softmax(queries @ keys.T, dim=-1) @ values


class SelfAttention_v1_scale_d_in(V1Base):
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        return torch.softmax(queries @ keys.T / x.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v1_dim0(V1Base):
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0) @ values


class SelfAttention_v1_swapped(V1Base):
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        return torch.softmax(keys @ queries.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v1_detached(V1Base):
    def forward(self, x):
        keys = x @ self.W_key.detach()  # "the keys are fixed"
        queries, values = x @ self.W_query, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v1_sdpa(V1Base):
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.nn.functional.scaled_dot_product_attention(queries, keys, values)


# ---------------------------------------------------------------------------------------------
# SelfAttention_v2


class V2Base(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)


class SelfAttention_v2_fixed_book(V2Base):
    """The notes' class with the layers called, as the book's own repository has it."""

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


class SelfAttention_v2_notes_text(V2Base):
    """Exactly the notes' forward: `x @ self.W_key` with an nn.Linear raises TypeError."""

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value

        attn_scores = queries @ keys.T  # omega
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)

        context_vec = attn_weights @ values
        return context_vec


class SelfAttention_v2_weight_matrix(V2Base):
    def forward(self, x):
        keys = x @ self.W_key.weight  # runs only when d_in == d_out, and then uses W instead of W.T
        queries = x @ self.W_query.weight
        values = x @ self.W_value.weight
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v2_bias_dropped(V2Base):
    def forward(self, x):
        keys, queries, values = (x @ layer.weight.T for layer in (self.W_key, self.W_query, self.W_value))
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v2_other_order(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.transpose(0, 1) / keys.size(-1) ** 0.5, dim=-1) @ values


class SelfAttention_v2_no_scaling(V2Base):
    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        return torch.softmax(queries @ keys.T, dim=-1) @ values


class SelfAttention_v2_dim0(V2Base):
    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=0) @ values


class SelfAttention_v2_swapped(V2Base):
    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        return torch.softmax(keys @ queries.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v2_no_grad(V2Base):
    def forward(self, x):
        with torch.no_grad():  # "the weights are not trained here"
            keys = self.W_key(x)
        queries, values = self.W_query(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v2_sdpa(V2Base):
    def forward(self, x):
        return torch.nn.functional.scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))


# ---------------------------------------------------------------------------------------------
# load_v2_weights_into_v1 (exercise 3.1)


def load_book(sa_v1, sa_v2):
    """The book's solution: new Parameters holding the transposes."""
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)


def load_new_parameters(sa_v1, sa_v2):
    """Copies, but into brand-new Parameters: an optimizer made for sa_v1 before the call no longer trains it."""
    for name in ("W_query", "W_key", "W_value"):
        setattr(sa_v1, name, torch.nn.Parameter(getattr(sa_v2, name).weight.T.clone()))
    return sa_v1


def load_frozen(sa_v1, sa_v2):
    """Switches requires_grad off to copy in place without no_grad, and never back on: v1 can no longer learn."""
    for name in ("W_query", "W_key", "W_value"):
        parameter = getattr(sa_v1, name)
        parameter.requires_grad_(False)
        parameter.copy_(getattr(sa_v2, name).weight.detach().T)
    return sa_v1


def load_grad_left_off(sa_v1, sa_v2):
    """Gradients switched off for the whole process to copy, and never switched back on."""
    torch.set_grad_enabled(False)
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.T)
    return sa_v1


def load_unfrozen_by_the_copy(sa_v1, sa_v2):
    """requires_grad switched off, then a copy autograd records: each parameter becomes the copy's result, no leaf."""
    for name in ("W_query", "W_key", "W_value"):
        parameter = getattr(sa_v1, name)
        parameter.requires_grad = False
        parameter.copy_(getattr(sa_v2, name).weight.T)
    return sa_v1


def load_copy_without_no_grad(sa_v1, sa_v2):
    """The in-place copy, with autograd still recording."""
    sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
    sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
    sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
    return sa_v1


def load_data_assignment(sa_v1, sa_v2):
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).data = getattr(sa_v2, name).weight.data.T.clone()
    return sa_v1


def load_copy_untransposed(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)


def load_parameter_untransposed(sa_v1, sa_v2):
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight)
    sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight)
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight)


def load_mixed_up(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)


def load_transposing_v2_in_place(sa_v1, sa_v2):
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            weight = getattr(sa_v2, name).weight
            weight.t_()  # t_ transposes sa_v2's own weight
            getattr(sa_v1, name).copy_(weight)


def load_returns_copies(sa_v1, sa_v2):
    return sa_v2.W_query.weight.T, sa_v2.W_key.weight.T, sa_v2.W_value.weight.T


def load_reshape(sa_v1, sa_v2):
    """reshape in place of .T: the shapes match, the numbers are only regrouped."""
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            parameter = getattr(sa_v1, name)
            parameter.copy_(getattr(sa_v2, name).weight.reshape(parameter.shape))
    return sa_v1


def load_no_return(sa_v1, sa_v2):
    """Right copies, and nothing returned although the exercise asks for sa_v1."""
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.T)


def context_vectors_weights_no_grad(inputs):
    """"The weights are only coefficients": computed with gradients off, so they count as constants and the
    gradient that reaches the inputs through them is lost (issue 58)."""
    with torch.no_grad():
        attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return attn_weights @ inputs


def context_vectors_shifted_in_place_no_grad(inputs):
    """The scores shifted by their row maximum IN PLACE with gradients off: softmax ignores a shift, so the values and
    even the gradient are the right ones, but an edit autograd never records is part of the computation."""
    scores = inputs @ inputs.T
    with torch.no_grad():
        scores -= scores.amax(dim=1, keepdim=True)
    return torch.softmax(scores, dim=1) @ inputs


def context_vectors_shift_built_no_grad(inputs):
    """The row maximum taken with gradients off (out of every graph), subtracted with gradients on. Correct."""
    scores = inputs @ inputs.T
    with torch.no_grad():
        shift = scores.amax(dim=1, keepdim=True)
        shift.clamp_(min=-1e6)
    return torch.softmax(scores - shift, dim=1) @ inputs


class SelfAttention_v2_normaliser_no_grad(V2Base):
    """The softmax written out, its row sums taken with gradients off ("a sum is just a number"): the right output,
    a gradient without the normaliser's part (issue 58)."""

    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.T / keys.shape[-1] ** 0.5
        exps = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        return (exps / row_sums) @ values


class SelfAttention_v1_weights_normalised_in_forward(V1Base):
    """Rescales its own query weights in place on every call ("keep them small"): forward edits the module's
    parameters (issue 58: named without a word of buffers, which SelfAttention_v1 has none of)."""

    def forward(self, x):
        with torch.no_grad():
            self.W_query /= self.W_query.norm()
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class SelfAttention_v2_layers_in_forward(V2Base):
    """Builds new nn.Linear layers on every call instead of calling its own: their weights are new random tensors on
    the CPU (issue 58: named a tensor made in forward, told of the module's own weights, not of a buffer)."""

    def forward(self, x):
        d_in, d_out = x.shape[-1], self.W_query.out_features
        # Seeded in a forked generator: the same new layers on every run, so that two runs of the class (with and
        # without the deferred imports' stand-ins) tell this student the same numbers; still new CPU tensors.
        with torch.random.fork_rng():
            torch.manual_seed(0)
            keys, queries, values = (nn.Linear(d_in, d_out, bias=False)(x) for _ in range(3))
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


# ---------------------------------------------------------------------------------------------
# What each wrong mutant above gets wrong: the named families its bug belongs to (devtools.precision measures
# whether the first mistake the checks name is one of them); () where the bug is no named family (then no name is
# right). The correct mutants are not listed.

TRUE_MISCONCEPTIONS = {
    "context_vectors_shifted_in_place_no_grad": ("gradient_cut",),
    "softmax_stable_global_max": ("softmax_global_max",),
    "softmax_naive_divide_by_sum": ("normalised_without_exp",),
    "softmax_naive_builtin": (),
    "softmax_naive_float32": (),
    "softmax_naive_last_axis": ("softmax_sum_wrong_axis",),
    "softmax_stable_no_shift": ("naive_softmax_overflow",),
    "softmax_stable_dim0": ("softmax_dim_ignored",),
    "softmax_stable_last_dim": ("softmax_dim_ignored",),
    "softmax_stable_default_dim0": ("default_dim_changed",),
    "softmax_stable_max_over_first_axis": ("max_and_sum_axes_differ",),
    "softmax_stable_no_keepdim": ("missing_keepdim",),
    "softmax_stable_in_place": ("input_edited_in_place",),
    "softmax_stable_numpy": ("gradient_cut",),
    "softmax_stable_builtin": (),
    "softmax_stable_log_softmax": (),
    "context_vectors_detached": ("gradient_cut",),
    "context_vectors_weights_no_grad": ("gradient_cut",),
    "context_vectors_no_softmax": ("scores_as_weights",),
    "context_vectors_scaled": ("scaled_without_weights",),
    "context_vectors_wrong_dim": ("context_weights_other_axis",),
    "context_vectors_divide_by_sum": ("context_normalised_without_exp",),
    "context_vectors_notes_size": (),
    "context_vectors_float32": (),
    "SelfAttention_v1_no_scaling": ("missing_scaling",),
    "SelfAttention_v1_scale_d_in": ("scale_by_d_in",),
    "SelfAttention_v1_dim0": ("softmax_wrong_dim",),
    "SelfAttention_v1_swapped": ("query_key_swapped",),
    "SelfAttention_v1_detached": ("gradient_cut", "parameter_detached"),
    "SelfAttention_v1_sdpa": (),
    "SelfAttention_v1_weights_normalised_in_forward": ("parameters_changed_by_forward",),
    "SelfAttention_v2_layers_in_forward": ("forward_tensor_on_cpu",),
    "SelfAttention_v2_notes_text": ("linear_as_matrix",),
    "SelfAttention_v2_weight_matrix": ("linear_as_matrix",),
    "SelfAttention_v2_no_scaling": ("missing_scaling",),
    "SelfAttention_v2_dim0": ("softmax_wrong_dim",),
    "SelfAttention_v2_swapped": ("query_key_swapped",),
    "SelfAttention_v2_bias_dropped": ("qkv_bias_ignored", "parameter_unused"),
    "SelfAttention_v2_no_grad": ("gradient_cut", "parameter_detached"),
    "SelfAttention_v2_normaliser_no_grad": ("forward_step_detached",),
    "SelfAttention_v2_sdpa": (),
    "load_book": ("aliased_not_copied",),
    "load_new_parameters": ("parameters_replaced",),
    "load_frozen": ("parameters_left_frozen",),
    "load_unfrozen_by_the_copy": ("copy_recorded_into_parameter",),
    "load_grad_left_off": ("grad_mode_left_off",),
    "load_copy_without_no_grad": ("copy_without_no_grad",),
    "load_copy_untransposed": ("weights_not_transposed",),
    "load_parameter_untransposed": ("weights_not_transposed", "aliased_not_copied"),
    "load_mixed_up": ("weights_mixed_up",),
    "load_transposing_v2_in_place": (),
    "load_returns_copies": (),
    "load_reshape": ("reshape_not_transpose",),
    "load_no_return": (),
}
