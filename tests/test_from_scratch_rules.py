"""From-scratch rules see through aliases: whatever path the student takes to torch's softmax or to its attention
(torch.ops.aten, torch._C, private functions, a partial, a dict, a torch.library op, modes switched off one at a
time), the rule check fails and names the public function; from-scratch code in several styles passes.

Every student here is graded in-process with autograder.running.runner.run_exercise, as `attnkit check` does.
"""

import concurrent.futures
import contextlib
import functools
import math
import threading
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import _disable_current_modes

from attnkit import solutions
from autograder.checking import torch_recorders
from autograder.checking.check_types import PASSED
from autograder.checking.torch_recorders import (
    CUSTOM_OP,
    MODES_OFF,
    OP_FAMILIES,
    FunctionCalls,
    MatmulCount,
    call_watched,
    called_functions,
    called_functions_until_raise,
    forbidden_calls,
    op_name,
)
from autograder.course import catalog
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.n01_attention_without_weights.ex1_softmax.judge import SOFTMAX_FUNCTIONS
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import case_tensor
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention.probe import BUILTIN_ATTENTION
from autograder.course.shared.inputs import ATTENTION_FUNCTIONS
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.runner import DEFAULT_SEED, cases_for, run_exercise
from devtools import student_kit_agreement as agreement

ATEN = torch.ops.aten
SEEDS = (DEFAULT_SEED, 0, 1)
RULE_CHECKS = {
    "softmax_naive": "softmax_naive.from_scratch",
    "softmax_stable": "softmax_stable.from_scratch",
    "self_attention_v1": "self_attention_v1.from_scratch",
    "self_attention_v2": "self_attention_v2.from_scratch",
    "causal_attention": "causal_attention.random",
    "multi_head_attention": "multi_head_attention.heads",
}


def grade(exercise_id, student, seed=DEFAULT_SEED):
    results = run_exercise(exercise_id, {EXERCISES_BY_ID[exercise_id].names[0]: student}, seed=seed, lang="en")
    return {result.id: result for result in results}


def assert_rule_fails_naming(exercise_id, student, name):
    result = grade(exercise_id, student)[RULE_CHECKS[exercise_id]]
    assert result.status != PASSED, f"{exercise_id}: the rule check passed"
    assert name in result.message, result.message
    # What the student reads is the public function, not the dispatcher's spelling of it.
    assert "aten::" not in result.message and "VariableFunctions" not in result.message, result.message


# ---------------------------------------------------------------------------------------------
# Student ops the recorders cannot look inside: registered with torch.library, or an autograd.Function.


@torch.library.custom_op("attnkit_student::hidden_softmax", mutates_args=())
def hidden_softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.softmax(x, dim)


@torch.library.custom_op("attnkit_student::hidden_attention", mutates_args=())
def hidden_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        return torch.softmax(x, dim)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


# ---------------------------------------------------------------------------------------------
# Softmax: every path, as softmax_stable(x, dim) and as softmax_naive(x) (dim 0)


def softmax_via_attention(x, dim):
    """softmax(x) along dim as attention weights: one query of 1 against keys x, values the identity."""
    moved = x.movedim(dim, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n, 1)
    query = torch.ones(rows.shape[0], 1, 1, dtype=x.dtype)
    values = torch.eye(n, dtype=x.dtype).expand(rows.shape[0], n, n)
    weights = F.scaled_dot_product_attention(query, rows, values, scale=1.0)
    return weights.reshape(moved.shape).movedim(-1, dim)


def softmax_by_rows(x, dim, rows_softmax):
    """softmax along dim, by rows_softmax applied to a (rows, n) view."""
    moved = x.movedim(dim, -1)
    return rows_softmax(moved.reshape(-1, moved.shape[-1])).reshape(moved.shape).movedim(-1, dim)


def python_key_excluded():
    return torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Python))


def softmax_with_modes(x, dim, disable):
    with disable():
        return torch.softmax(x, dim)


SOFTMAX_PATHS = {  # label: (softmax(x, dim), the name the message must give)
    "F.softmax": (lambda x, d: F.softmax(x, dim=d), "softmax"),
    "torch.softmax": (lambda x, d: torch.softmax(x, d), "softmax"),
    "Tensor.softmax": (lambda x, d: x.softmax(d), "softmax"),
    "nn.Softmax": (lambda x, d: nn.Softmax(dim=d)(x), "softmax"),
    "torch.special.softmax": (lambda x, d: torch.special.softmax(x, d), "softmax"),
    "torch._softmax": (lambda x, d: torch._softmax(x, d, False), "softmax"),
    "aten._softmax.default": (lambda x, d: ATEN._softmax.default(x, d, False), "softmax"),
    "aten._softmax packet": (lambda x, d: ATEN._softmax(x, d, False), "softmax"),
    "aten.softmax.int": (lambda x, d: ATEN.softmax.int(x, d), "softmax"),
    "aten._safe_softmax": (lambda x, d: ATEN._safe_softmax.default(x, d), "softmax"),
    "getattr(torch.ops.aten)": (lambda x, d: getattr(torch.ops.aten, "_soft" + "max").default(x, d, False), "softmax"),
    "functools.partial": (lambda x, d: functools.partial(torch.softmax, dim=d)(x), "softmax"),
    "kept in a dict": (lambda x, d: {"f": F.softmax}["f"](x, d), "softmax"),
    "torch._C._VariableFunctions": (lambda x, d: torch._C._VariableFunctions.softmax(x, d), "softmax"),
    "torch._C._VariableFunctions._softmax": (lambda x, d: torch._C._VariableFunctions._softmax(x, d, False),
                                             "softmax"),
    "torch._C.TensorBase.softmax": (lambda x, d: torch._C.TensorBase.softmax(x, d), "softmax"),
    "sparse softmax": (lambda x, d: torch.sparse.softmax(x.to_sparse(), d).to_dense(), "softmax"),
    "F.log_softmax": (lambda x, d: torch.exp(F.log_softmax(x, d)), "log_softmax"),
    "aten._log_softmax.default": (lambda x, d: torch.exp(ATEN._log_softmax.default(x, d, False)), "log_softmax"),
    "aten.log_softmax.int": (lambda x, d: torch.exp(ATEN.log_softmax.int(x, d)), "log_softmax"),
    "torch.special.log_softmax": (lambda x, d: torch.exp(torch.special.log_softmax(x, d)), "log_softmax"),
    "F.softmin": (lambda x, d: F.softmin(-x, d), "softmin"),
    "nn.Softmin": (lambda x, d: nn.Softmin(d)(-x), "softmin"),
    "autograd.Function": (lambda x, d: SoftmaxFunction.apply(x, d), "softmax"),
    "torch.vmap": (lambda x, d: softmax_by_rows(x, d, torch.vmap(functools.partial(torch.softmax, dim=0))),
                   "softmax"),
    "torch.library op": (lambda x, d: torch.ops.attnkit_student.hidden_softmax(x, d), CUSTOM_OP),
    "attention as a softmax": (softmax_via_attention, "scaled_dot_product_attention"),
    # One recorder switched off: the other one still sees the op, and notes that its partner was off.
    "torch function modes off": (functools.partial(softmax_with_modes, disable=torch._C.DisableTorchFunction),
                                 MODES_OFF),
    "dispatch modes off": (functools.partial(softmax_with_modes, disable=_disable_current_modes), MODES_OFF),
    "dispatch modes off, by name": (functools.partial(softmax_with_modes, disable=_disable_current_modes), "softmax"),
    "python dispatch key excluded": (functools.partial(softmax_with_modes, disable=python_key_excluded), MODES_OFF),
}


def stable_student(path):
    def softmax_stable(x, dim=-1):
        return path(x, dim)

    return softmax_stable


def naive_student(path):
    def softmax_naive(x):
        return path(x, 0)

    return softmax_naive


@pytest.mark.parametrize("label", SOFTMAX_PATHS)
def test_every_path_to_torch_softmax_fails_the_rule_and_is_named(label):
    path, name = SOFTMAX_PATHS[label]
    x = torch.rand(4, 5, dtype=torch.float64) * 8 - 4
    # The student's function is a correct softmax: only the rule can catch it.
    torch.testing.assert_close(path(x, 1), torch.softmax(x, 1))
    assert_rule_fails_naming("softmax_stable", stable_student(path), name)
    assert_rule_fails_naming("softmax_naive", naive_student(path), name)


def test_a_student_who_calls_the_recorded_name_through_aten_gets_the_readable_message():
    def softmax_stable(x, dim=-1):
        return torch.ops.aten._softmax.default(x, dim, False)

    message = grade("softmax_stable", softmax_stable)["softmax_stable.from_scratch"].message
    assert "calls softmax when run on an input of shape (" in message, message


def stable_book(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values
    exp = torch.exp(shifted)
    return exp / exp.sum(dim=dim, keepdim=True)


def stable_logsumexp(x, dim=-1):
    # logsumexp is a reduction, not a softmax: normalising with it is still the student's own softmax.
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))


def stable_amax_methods(x, dim=-1):
    exp = (x - x.amax(dim, keepdim=True)).exp()
    return exp.div(exp.sum(dim, keepdim=True))


def stable_functional(x, dim=-1):
    exp = torch.exp(torch.sub(x, torch.max(x, dim, keepdim=True)[0]))
    return torch.div(exp, torch.sum(exp, dim, keepdim=True))


def stable_grad_mode_contexts(x, dim=-1):
    # Grad modes and a device context push state (a device context is itself a torch function mode): not a switch-off.
    # (inference_mode or no_grad would push state too, but stop the gradients every function must let through.)
    with torch.enable_grad(), torch.device(x.device):
        exp = torch.exp(x - x.amax(dim, keepdim=True))
        total = exp.sum(dim, keepdim=True)
    with torch.set_grad_enabled(True):
        return (exp / total).clone()


def naive_book(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


def naive_methods(x):
    return x.exp() / x.exp().sum(0)


def naive_einsum(x):
    exp = torch.exp(x)
    return exp / torch.einsum("i...->...", exp)


CORRECT_SOFTMAX = [
    ("softmax_stable", solutions.softmax_stable),
    ("softmax_stable", stable_book),
    ("softmax_stable", stable_logsumexp),
    ("softmax_stable", stable_amax_methods),
    ("softmax_stable", stable_functional),
    ("softmax_stable", stable_grad_mode_contexts),
    ("softmax_naive", solutions.softmax_naive),
    ("softmax_naive", naive_book),
    ("softmax_naive", naive_methods),
    ("softmax_naive", naive_einsum),
]


@pytest.mark.parametrize(("exercise_id", "student"), CORRECT_SOFTMAX, ids=lambda v: getattr(v, "__name__", v))
def test_softmax_written_from_scratch_passes_every_check(exercise_id, student):
    for seed in SEEDS:
        results = grade(exercise_id, student, seed=seed)
        failed = [f"{r.id}: {r.message}" for r in results.values() if r.status != PASSED]
        assert not failed, f"seed {seed}: {failed}"


# ---------------------------------------------------------------------------------------------
# Attention: every path to scaled_dot_product_attention, in SelfAttention_v1/v2, CausalAttention and
# MultiHeadAttention


def four_d(attend):
    """attend(q, k, v, causal) on (..., T, d) through a kernel that wants (batch, heads, T, d)."""

    @functools.wraps(attend)
    def on_any_shape(q, k, v, causal):
        shape = q.shape
        flat = [t.reshape(1, -1, *t.shape[-2:]) for t in (q, k, v)]
        return attend(*flat, causal).reshape(*shape[:-1], v.shape[-1])

    return on_any_shape


def attend_with_modes(q, k, v, causal, disable):
    with disable():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def attend_math_backend(q, k, v, causal):
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


SDPA = "scaled_dot_product_attention"
ATTENTION_PATHS = {  # label: (attend(q, k, v, causal), the name the message must give)
    "F.scaled_dot_product_attention": (lambda q, k, v, c: F.scaled_dot_product_attention(q, k, v, is_causal=c), SDPA),
    "torch._C._nn": (lambda q, k, v, c: torch._C._nn.scaled_dot_product_attention(q, k, v, is_causal=c), SDPA),
    "aten.scaled_dot_product_attention.default": (
        lambda q, k, v, c: ATEN.scaled_dot_product_attention.default(q, k, v, None, 0.0, c), SDPA),
    "getattr(torch.ops.aten)": (
        lambda q, k, v, c: getattr(torch.ops.aten, "scaled_dot_product_" + "attention").default(q, k, v, is_causal=c),
        SDPA),
    "aten._scaled_dot_product_flash_attention_for_cpu": (four_d(
        lambda q, k, v, c: ATEN._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, 0.0, c)[0]), SDPA),
    "aten._scaled_dot_product_attention_math": (
        lambda q, k, v, c: ATEN._scaled_dot_product_attention_math.default(q, k, v, None, 0.0, c)[0], SDPA),
    "torch._scaled_dot_product_attention_math": (
        lambda q, k, v, c: torch._scaled_dot_product_attention_math(q, k, v, is_causal=c)[0], SDPA),
    "torch._C._VariableFunctions": (
        lambda q, k, v, c: torch._C._VariableFunctions._scaled_dot_product_attention_math(q, k, v, is_causal=c)[0],
        SDPA),
    "math backend": (attend_math_backend, SDPA),
    "functools.partial": (lambda q, k, v, c: functools.partial(F.scaled_dot_product_attention, dropout_p=0.0)(
        q, k, v, is_causal=c), SDPA),
    "kept in a dict": (lambda q, k, v, c: {"f": F.scaled_dot_product_attention}["f"](q, k, v, is_causal=c), SDPA),
    "torch.library op": (lambda q, k, v, c: torch.ops.attnkit_student.hidden_attention(q, k, v, c), CUSTOM_OP),
    # On 2-D and 3-D inputs F.scaled_dot_product_attention runs the composite math kernel, which the dispatcher
    # only shows as bmm and softmax: with the function recorder off, the switch itself is what gets named.
    "torch function modes off": (functools.partial(attend_with_modes, disable=torch._C.DisableTorchFunction),
                                 MODES_OFF),
    "dispatch modes off": (functools.partial(attend_with_modes, disable=_disable_current_modes), SDPA),
    "python dispatch key excluded": (functools.partial(attend_with_modes, disable=python_key_excluded), SDPA),
}


def self_attention_v1(attend):
    class SelfAttention_v1(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.W_query = nn.Parameter(torch.rand(d_in, d_out))
            self.W_key = nn.Parameter(torch.rand(d_in, d_out))
            self.W_value = nn.Parameter(torch.rand(d_in, d_out))

        def forward(self, x):
            return attend(x @ self.W_query, x @ self.W_key, x @ self.W_value, False)

    return SelfAttention_v1


def self_attention_v2(attend):
    class SelfAttention_v2(nn.Module):
        def __init__(self, d_in, d_out, qkv_bias=False):
            super().__init__()
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

        def forward(self, x):
            return attend(self.W_query(x), self.W_key(x), self.W_value(x), False)

    return SelfAttention_v2


def causal_attention(attend):
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
            return attend(self.W_query(x), self.W_key(x), self.W_value(x), True)

    return CausalAttention


def multi_head_attention(attend):
    class MultiHeadAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, _ = x.shape
            q, k, v = (layer(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
                       for layer in (self.W_query, self.W_key, self.W_value))
            context = attend(q, k, v, True).transpose(1, 2).reshape(b, num_tokens, self.d_out)
            return self.out_proj(context)

    return MultiHeadAttention


ATTENTION_MODULES = {
    "self_attention_v1": self_attention_v1,
    "self_attention_v2": self_attention_v2,
    "causal_attention": causal_attention,
    "multi_head_attention": multi_head_attention,
}


@pytest.mark.parametrize("label", ATTENTION_PATHS)
@pytest.mark.parametrize("exercise_id", ATTENTION_MODULES)
def test_every_path_to_library_attention_fails_the_rule_and_is_named(exercise_id, label):
    attend, name = ATTENTION_PATHS[label]
    q, k, v = (torch.rand(2, 3, 5, 4, dtype=torch.float64) for _ in range(3))
    # The path computes attention itself: only the rule can catch it.
    torch.testing.assert_close(attend(q, k, v, True), F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert_rule_fails_naming(exercise_id, ATTENTION_MODULES[exercise_id](attend), name)


def attend_flex(q, k, v, causal):
    from torch.nn.attention.flex_attention import flex_attention

    return flex_attention(q, k, v)


@pytest.mark.parametrize("exercise_id", ATTENTION_MODULES)
@pytest.mark.slow
def test_flex_attention_does_not_pass_the_rule(exercise_id):
    # A higher-order op: it refuses to run under the recorders, so the probe reports a crash.
    result = grade(exercise_id, ATTENTION_MODULES[exercise_id](four_d(attend_flex)))[RULE_CHECKS[exercise_id]]
    assert result.status != PASSED


def attend_einsum(q, k, v, causal):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
    if causal:
        future = torch.triu(torch.ones(scores.shape[-2:], dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    exp = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    return torch.einsum("...qk,...kd->...qd", exp / exp.sum(dim=-1, keepdim=True), v)


def attend_matmul_softmax(q, k, v, causal):
    scores = torch.matmul(q, k.transpose(-2, -1)) * k.shape[-1] ** -0.5
    if causal:
        scores = scores + torch.full(scores.shape[-2:], float("-inf"), dtype=scores.dtype).triu(1)
    return torch.softmax(scores, dim=-1) @ v


def attend_bmm_logsumexp(q, k, v, causal):
    shape = q.shape
    q3, k3, v3 = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))
    scores = torch.bmm(q3, k3.transpose(1, 2)) / k.shape[-1] ** 0.5
    if causal:
        scores = torch.where(torch.ones_like(scores, dtype=torch.bool).tril(), scores, float("-inf"))
    weights = torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))
    return torch.bmm(weights, v3).reshape(*shape[:-1], v.shape[-1])


CORRECT_ATTENTION = [
    ("self_attention_v1", solutions.SelfAttention_v1),
    ("self_attention_v2", solutions.SelfAttention_v2),
    ("causal_attention", solutions.CausalAttention),
    ("multi_head_attention", solutions.MultiHeadAttention),
    *((exercise_id, ATTENTION_MODULES[exercise_id](attend))
      for exercise_id in ("self_attention_v1", "self_attention_v2")
      for attend in (attend_einsum, attend_matmul_softmax, attend_bmm_logsumexp)),
]


@pytest.mark.parametrize(("exercise_id", "student"), CORRECT_ATTENTION,
                         ids=lambda v: getattr(v, "__qualname__", v).split(".")[0])
def test_attention_written_from_scratch_passes_every_check(exercise_id, student):
    for seed in SEEDS:
        results = grade(exercise_id, student, seed=seed)
        failed = [f"{r.id}: {r.message}" for r in results.values() if r.status != PASSED]
        assert not failed, f"seed {seed}: {failed}"


@pytest.mark.parametrize("exercise_id", ("causal_attention", "multi_head_attention"))
@pytest.mark.parametrize("attend", (attend_einsum, attend_matmul_softmax, attend_bmm_logsumexp))
def test_attention_written_from_scratch_passes_the_rule(exercise_id, attend):
    # These modules skip dropout, so other checks of these exercises may fail: the rule must not.
    result = grade(exercise_id, ATTENTION_MODULES[exercise_id](attend))[RULE_CHECKS[exercise_id]]
    assert result.status == PASSED, result.message


# ---------------------------------------------------------------------------------------------
# The recorder itself


def test_the_reference_solutions_record_no_forbidden_op():
    x = torch.rand(2, 5, 6)
    runs = [
        called_functions(solutions.softmax_naive, torch.rand(7)),
        called_functions(solutions.softmax_stable, torch.rand(3, 7), -1),
        called_functions(solutions.SelfAttention_v1(6, 4), x[0]),
        called_functions(solutions.SelfAttention_v2(6, 4), x[0]),
        called_functions(solutions.CausalAttention(6, 4, 5, 0.5), x),
        called_functions(solutions.MultiHeadAttention(6, 4, 5, 0.5, 2), x),
        called_functions(solutions.MultiHeadAttention(6, 4, 5, 0.5, 2), x, torch.ones(2, 5)),
    ]
    for index, (_, names) in enumerate(runs):
        banned = ATTENTION_FUNCTIONS | BUILTIN_ATTENTION | (SOFTMAX_FUNCTIONS if index < 2 else frozenset())
        assert forbidden_calls(names, banned) == [], (index, names)
    assert "softmax" in runs[2][1]  # attention may use torch's softmax: it is recorded, and allowed


def test_names_are_sorted_plain_strings():
    _, names = called_functions(lambda t: ATEN._softmax.default(t, 0, False) + torch.exp(t), torch.rand(3))
    assert names == sorted(set(names)) and all(type(name) is str for name in names)
    assert names == ["add", "exp", "softmax"]


def test_every_alias_is_folded_into_a_name_the_rules_forbid():
    assert set(OP_FAMILIES.values()) <= SOFTMAX_FUNCTIONS
    assert {family for family in OP_FAMILIES.values() if family != "softmax" and "softmax" not in family} \
        <= ATTENTION_FUNCTIONS & BUILTIN_ATTENTION
    assert CUSTOM_OP in SOFTMAX_FUNCTIONS & ATTENTION_FUNCTIONS & BUILTIN_ATTENTION


def test_op_name_reads_torch_ops_and_torch_functions_alike():
    assert op_name(ATEN._softmax.default) == op_name(ATEN.softmax.int) == op_name(torch.softmax) == "softmax"
    assert op_name(ATEN._scaled_dot_product_flash_attention_for_cpu.default) == SDPA
    assert op_name(torch.ops.attnkit_student.hidden_softmax.default) == CUSTOM_OP
    assert op_name(torch.Tensor.exp) == op_name(ATEN.exp.default) == "exp"


def test_forbidden_calls_reads_names_recorded_before_aliases_were_folded():
    # Data from an older student kit (or a test) may still carry the qualified names.
    assert forbidden_calls(["_VariableFunctionsClass._softmax", "TensorBase.exp"], SOFTMAX_FUNCTIONS) == ["softmax"]


def test_both_recorders_are_removed_even_when_the_student_raises():
    def crash(x):
        torch.softmax(x, 0)
        raise ValueError("student bug")

    functions, dispatch = torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()
    with pytest.raises(ValueError):
        called_functions(crash, torch.rand(3))
    assert (torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()) == (functions, dispatch)


def test_calls_until_a_raise_keep_what_ran_before_it_and_remove_both_recorders():
    def crash_on_matrices(x):
        weights = torch.softmax(x, 0)
        if x.dim() > 1:
            raise ValueError("student bug")
        return weights

    functions, dispatch = torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()
    names = called_functions_until_raise(crash_on_matrices, torch.rand(2, 3))
    assert forbidden_calls(names, SOFTMAX_FUNCTIONS) == ["softmax"]
    assert (torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()) == (functions, dispatch)
    assert called_functions_until_raise(crash_on_matrices, torch.rand(3)) == called_functions(crash_on_matrices,
                                                                                               torch.rand(3))[1]


class PassThroughMode(TorchFunctionMode):
    def __init__(self, inside=None):
        super().__init__()
        self.inside = inside  # called while this mode handles a call (the mode is off the stack then)
        self.seen = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if self.inside is not None and self.seen is None:
            self.seen = self.inside()
        return func(*args, **(kwargs or {}))


def all_disabled_both_ways():
    """(torch's own answer, torch_recorders' reading for torch 2.0-2.4) to "are torch function modes all off?"."""
    return torch._C._is_torch_function_all_disabled(), torch_recorders._function_modes_all_disabled_before_2_5()


@pytest.mark.parametrize("disable", [contextlib.nullcontext, torch._C.DisableTorchFunctionSubclass,
                                     torch._C.DisableTorchFunction])
def test_the_all_disabled_reading_for_torch_before_2_5_agrees_with_torchs_own(disable):
    # torch 2.0-2.4 lack torch._C._is_torch_function_all_disabled (the student kit runs under the learner's torch,
    # devtools/kit_torch_matrix.py): the reading made of what they expose agrees with it in every state, with the mode
    # stack empty, holding a mode, and inside a mode's handling (popped), and leaves the stack as it was.
    expected = disable is torch._C.DisableTorchFunction
    stack = torch._C._len_torch_function_stack()
    with disable():
        assert all_disabled_both_ways() == (expected, expected)
    with PassThroughMode(), disable():
        assert all_disabled_both_ways() == (expected, expected)
    def inside():
        with disable():
            return all_disabled_both_ways()

    mode = PassThroughMode(inside=inside)
    with mode:
        torch.zeros(1)
    assert mode.seen == (expected, expected)
    assert torch._C._len_torch_function_stack() == stack


@pytest.fixture
def recorders_as_before_torch_2_5(monkeypatch):
    monkeypatch.setattr(torch_recorders, "_function_modes_all_disabled",
                        torch_recorders._function_modes_all_disabled_before_2_5)


@pytest.mark.parametrize("label", ["torch function modes off", "dispatch modes off", "F.softmax"])
def test_the_softmax_rule_sees_the_same_with_the_reading_for_torch_before_2_5(recorders_as_before_torch_2_5, label):
    path, name = SOFTMAX_PATHS[label]
    assert_rule_fails_naming("softmax_stable", stable_student(path), name)
    result = grade("softmax_stable", stable_book)[RULE_CHECKS["softmax_stable"]]
    assert result.status == PASSED, result.message


@pytest.mark.parametrize("label", ["torch function modes off", "F.scaled_dot_product_attention"])
def test_the_attention_rule_sees_the_same_with_the_reading_for_torch_before_2_5(recorders_as_before_torch_2_5, label):
    attend, name = ATTENTION_PATHS[label]
    assert_rule_fails_naming("multi_head_attention", ATTENTION_MODULES["multi_head_attention"](attend), name)
    result = grade("multi_head_attention", solutions.MultiHeadAttention)[RULE_CHECKS["multi_head_attention"]]
    assert result.status == PASSED, result.message


def test_matmul_count_and_forward_watch_still_work_beside_the_dispatch_recorder():
    module = solutions.MultiHeadAttention(6, 4, 5, 0.0, 2)
    with FunctionCalls() as calls, MatmulCount() as counter:
        module(torch.rand(2, 5, 6))
    assert counter.count > 0 and "softmax" in calls.names and "linear" in calls.names

    class BatchedT(nn.Module):
        def forward(self, x):
            return x @ x.T

    with pytest.raises(RuntimeError, match="must match"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates .T on a batch: the mistake the watch names
        call_watched(BatchedT(), torch.rand(2, 3, 4))
    output, watch = call_watched(solutions.CausalAttention(6, 4, 5, 0.0), torch.rand(2, 5, 6))
    assert output.shape == (2, 5, 4) and not watch.batched_transpose and "softmax" in watch.names


# ---------------------------------------------------------------------------------------------
# Routes no recorder sees (both switched off, another thread, a redispatch to a backend key): what they compute is a
# tensor no recorder saw made, so the rule fails closed (torch_recorders.Origins). Once strict xfails.


def softmax_both_recorders_off(x, dim=-1):
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        return torch.softmax(x, dim)


def softmax_in_a_thread(x, dim=-1):
    # Both modes are thread-local: ops run by another thread reach neither recorder.
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("out", torch.softmax(x, dim)))
    worker.start()
    worker.join()
    return result["out"]


POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # started before any call, as in an earlier cell


def softmax_in_a_pool_then_scaled(x, dim=-1):
    # Started before the call, and the thread's result goes through a recorded op before it is returned.
    return POOL.submit(torch.softmax, x, dim).result() * 1.0


def softmax_by_redispatch(x, dim=-1):
    return ATEN._softmax.default.redispatch(torch._C.DispatchKeySet(torch._C.DispatchKey.CPU), x, dim, False)


def softmax_from_numpy_with_a_straight_through_gradient(x, dim=-1):
    # NumPy numbers (no recorder sees NumPy), and a gradient faked so that one seems to flow.
    values = x.detach().numpy()
    exp = np.exp(values - values.max(axis=dim, keepdims=True))
    y = torch.from_numpy(exp / exp.sum(axis=dim, keepdims=True)).to(x.dtype)
    return y + (x - x.detach())


def softmax_library_detached_with_a_straight_through_gradient(x, dim=-1):
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        y = torch.softmax(x, dim).detach()
    return y + (x - x.detach())


@pytest.mark.parametrize("student", (softmax_both_recorders_off, softmax_in_a_thread, softmax_in_a_pool_then_scaled,
                                     softmax_by_redispatch, softmax_from_numpy_with_a_straight_through_gradient,
                                     softmax_library_detached_with_a_straight_through_gradient),
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("exercise_id", ("softmax_naive", "softmax_stable"))
def test_a_softmax_no_recorder_sees_fails_the_rule(exercise_id, student):
    x = torch.rand(3, 5)
    torch.testing.assert_close(student(x, -1), torch.softmax(x, -1))  # it computes a softmax: only the rule can tell
    result = grade(exercise_id, student)[RULE_CHECKS[exercise_id]]
    assert result.status != PASSED, result.message


def attend_in_a_thread(q, k, v, causal):
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault(
        "out", F.scaled_dot_product_attention(q, k, v, is_causal=causal)))
    worker.start()
    worker.join()
    return result["out"]


def attend_by_redispatch(q, k, v, causal):
    # The CPU flash kernel, reached below the Python dispatch key. (A redispatch of the composite math kernel runs
    # matmul and softmax through the dispatcher again, where the recorder sees them: no hidden route.)
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    return ATEN._scaled_dot_product_flash_attention_for_cpu.default.redispatch(keys, q, k, v, 0.0, causal)[0]


@pytest.mark.parametrize("attend", (attend_in_a_thread, attend_by_redispatch), ids=lambda f: f.__name__)
@pytest.mark.parametrize("exercise_id", ATTENTION_MODULES)
def test_library_attention_no_recorder_sees_fails_the_rule(exercise_id, attend):
    q, k, v = (torch.rand(2, 3, 5, 4, dtype=torch.float64) for _ in range(3))
    torch.testing.assert_close(attend(q, k, v, True), F.scaled_dot_product_attention(q, k, v, is_causal=True))
    result = grade(exercise_id, ATTENTION_MODULES[exercise_id](attend))[RULE_CHECKS[exercise_id]]
    assert result.status != PASSED, result.message


SHIFT = torch.zeros(40)  # a constant of the notebook, made before any call


def softmax_with_a_global_constant(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values + SHIFT[: x.shape[-1]]
    return shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)


def softmax_with_a_constant_made_in_the_call(x, dim=-1):
    exp = (x - x.max(dim=dim, keepdim=True).values).exp() * torch.tensor([1.0] * x.shape[-1])
    return exp / exp.sum(dim=dim, keepdim=True)


def softmax_with_a_closure_constant():
    ones = torch.ones(40)

    def softmax(x, dim=-1):
        exp = (x - x.max(dim=dim, keepdim=True).values).exp() * ones[: x.shape[-1]]
        return exp / exp.sum(dim=dim, keepdim=True)

    return softmax


def attend_with_a_kept_mask():
    masks = {}

    def attend(q, k, v, causal):
        size = q.shape[-2]
        if size not in masks:  # a cache filled on the first call: later calls use a tensor made before them
            masks[size] = torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)
        scores = (q @ k.transpose(-2, -1)) / k.shape[-1] ** 0.5
        if causal:
            scores = scores.masked_fill(masks[size], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    return attend


@pytest.mark.parametrize("student", (softmax_with_a_global_constant, softmax_with_a_closure_constant(),
                                     softmax_with_a_constant_made_in_the_call), ids=("global", "closure", "made"))
@pytest.mark.parametrize("exercise_id", ("softmax_naive", "softmax_stable"))
def test_tensors_made_before_the_call_are_no_hidden_route(exercise_id, student):
    result = grade(exercise_id, student)[RULE_CHECKS[exercise_id]]
    assert result.status == PASSED, result.message


@pytest.mark.parametrize("exercise_id", ("causal_attention", "multi_head_attention"))
def test_a_mask_kept_between_calls_is_no_hidden_route(exercise_id):
    result = grade(exercise_id, ATTENTION_MODULES[exercise_id](attend_with_a_kept_mask()))[RULE_CHECKS[exercise_id]]
    assert result.status == PASSED, result.message


# ---------------------------------------------------------------------------------------------
# The rule holds on every kind of input the exercise grades, not only on the vector it used to run on: a softmax
# that calls torch's own on matrices alone loses the rule's point, in the preview (check(...) and the kit) as in
# grading, and the message names the function and the shape it was called on.


def naive_builtin_off_vectors(x):
    if x.dim() != 1:
        return torch.softmax(x, dim=0)
    e = torch.exp(x)
    return e / e.sum()


def stable_builtin_off_vectors(x, dim=-1):
    if x.dim() != 1:
        return torch.softmax(x, dim=dim)
    e = torch.exp(x - x.max())
    return e / e.sum()


def naive_loop(x):
    columns = x.reshape(x.shape[0], -1)
    out = []
    for j in range(columns.shape[1]):
        exps = [torch.exp(columns[i, j]) for i in range(columns.shape[0])]
        total = exps[0]
        for value in exps[1:]:
            total = total + value
        out.append(torch.stack([value / total for value in exps]))
    return torch.stack(out, dim=1).reshape(x.shape)


def stable_loop(x, dim=-1):
    moved = x.movedim(dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    out = []
    for r in range(rows.shape[0]):
        largest = rows[r, 0]
        for value in rows[r, 1:]:
            largest = torch.maximum(largest, value)
        exps = [torch.exp(rows[r, k] - largest) for k in range(rows.shape[1])]
        total = exps[0]
        for value in exps[1:]:
            total = total + value
        out.append(torch.stack([value / total for value in exps]))
    return torch.stack(out).reshape(moved.shape).movedim(-1, dim)


BUILTIN_OFF_VECTORS = [("softmax_naive", naive_builtin_off_vectors), ("softmax_stable", stable_builtin_off_vectors)]
# The case's input, the one the function was run on (not necessarily the tensor softmax was handed).
SHAPE_CALLED = {"en": "calls softmax when run on an input of shape {shape}",
                "zh": "在处理形状为 {shape} 的输入时调用了 softmax"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "student"), BUILTIN_OFF_VECTORS, ids=lambda v: getattr(v, "__name__", v))
def test_torch_softmax_on_matrices_alone_loses_the_rule_with_the_shape_it_was_called_on(exercise_id, student, lang):
    for include_hidden, check_id in ((True, RULE_CHECKS[exercise_id]), (False, f"{RULE_CHECKS[exercise_id]}.preview")):
        results = {r.id: r for r in run_exercise(exercise_id, {exercise_id: student}, include_hidden=include_hidden,
                                                 lang=lang)}
        rule = results[check_id]
        assert rule.status != PASSED and rule.score == 0, (check_id, rule.message)
        # Only the rule costs: the values are right everywhere.
        assert all(r.status == PASSED for r in results.values() if r.id != check_id), check_id
        # The shape named is one the function was called on with a matrix (where it did call softmax), read from
        # this run's cases, and the only name is softmax.
        check = catalog.CHECKS_BY_ID[check_id]
        called = [tuple(case_tensor(case).shape) for case in cases_for(check, DEFAULT_SEED)]
        named = [shape for shape in called
                 if len(shape) != 1 and SHAPE_CALLED[lang].format(shape=shape) in rule.message]
        assert named, rule.message
        assert not any(other in rule.message for other in ("log_softmax", "scaled_dot_product_attention")), rule.message


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "student"), BUILTIN_OFF_VECTORS, ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.slow
def test_the_kit_shows_the_rule_failing_on_matrices_as_check_does(exercise_id, student, lang):
    vectors = vectors_from_document(vectors_document())
    compared, disagreements = agreement.compare_student(
        agreement.Student(f"builtin-off-vectors/{exercise_id}", exercise_id, {exercise_id: student}), vectors, lang)
    assert compared and not disagreements, disagreements
    kit = {r.id: r for r in run_public(exercise_id, {exercise_id: student}, vectors, lang)}
    assert kit[f"{RULE_CHECKS[exercise_id]}.preview"].status != PASSED


@pytest.mark.parametrize(("exercise_id", "student"),
                         [("softmax_naive", solutions.softmax_naive), ("softmax_naive", naive_loop),
                          ("softmax_stable", solutions.softmax_stable), ("softmax_stable", stable_loop)],
                         ids=lambda v: getattr(v, "__name__", v))
def test_from_scratch_softmax_keeps_full_marks_on_every_kind_of_input(exercise_id, student):
    for seed in SEEDS:
        results = grade(exercise_id, student, seed=seed)
        assert sum(r.score for r in results.values()) == EXERCISES_BY_ID[exercise_id].points, (
            seed, [f"{r.id}: {r.message}" for r in results.values() if r.status != PASSED])


def attend_builtin_on_long_inputs(q, k, v, causal):
    if q.shape[-2] > 16:  # the notes have 6 tokens: built-in attention only where the notes never look
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return attend_einsum(q, k, v, causal)


ATTENTION_CALLED = {"en": "calls scaled_dot_product_attention when run on an input of shape {shape}",
                    "zh": "在处理形状为 {shape} 的输入时调用了 scaled_dot_product_attention"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("exercise_id", ["self_attention_v1", "self_attention_v2"])
def test_builtin_attention_on_long_inputs_alone_loses_the_rule_with_the_shape(exercise_id, lang):
    student = ATTENTION_MODULES[exercise_id](attend_builtin_on_long_inputs)
    name = EXERCISES_BY_ID[exercise_id].names[0]
    for include_hidden, check_id in ((True, RULE_CHECKS[exercise_id]), (False, f"{RULE_CHECKS[exercise_id]}.preview")):
        results = {r.id: r for r in run_exercise(exercise_id, {name: student}, include_hidden=include_hidden,
                                                 lang=lang)}
        rule = results[check_id]
        assert rule.status != PASSED and rule.score == 0, (check_id, rule.message)
        assert all(r.status == PASSED for r in results.values() if r.id != check_id), check_id
        shapes = [(case["num_tokens"], case["d_in"]) for case in cases_for(catalog.CHECKS_BY_ID[check_id], DEFAULT_SEED)
                  if "num_tokens" in case]
        assert any(n > 16 and ATTENTION_CALLED[lang].format(shape=(n, d)) in rule.message for n, d in shapes), (
            rule.message)


def stable_shifting_matrices_in_place(x, dim=-1):
    if x.dim() > 1:  # an edit the vectors never see: the caller's matrix is shifted in place
        x.sub_(x.amax(dim=dim, keepdim=True))
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def stable_writing_matrices_back(x, dim=-1):
    if x.dim() > 1:  # the same values written back: the caller's numbers are as they were
        x.copy_(x.clone())
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def test_the_rule_reads_an_input_edited_in_place_on_matrices_and_not_the_same_values_written_back():
    check_id = RULE_CHECKS["softmax_stable"]
    edited = {r.id: r for r in run_exercise("softmax_stable", {"softmax_stable": stable_shifting_matrices_in_place},
                                            include_hidden=True, lang="en")}
    assert edited[check_id].status != PASSED and edited[check_id].score == 0, edited[check_id].message
    written = {r.id: r for r in run_exercise("softmax_stable", {"softmax_stable": stable_writing_matrices_back},
                                             include_hidden=True, lang="en")}
    assert written[check_id].status == PASSED, written[check_id].message
