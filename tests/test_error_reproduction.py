"""A mistake is named from an exception only when its variant of the reference, run by the same probe on the same case,
raises the same error (autograder.checking.reproduction, autograder.course.error_variants): never from words or
numbers found in the message.

The students are written as a learner writes them from the release notebooks: the given __init__ kept, forward (or the
function) written with one mistake.
"""

import json

import pytest
import torch
from check_helpers import results_by_id
from torch import nn

from autograder.checking.check_types import ERROR, PASSED, Evidence
from autograder.checking.diagnosis import explain_error
from autograder.checking.expectations import RAISED, Expectations
from autograder.checking.reproduction import RaisedError, VariantError, normalised, reproducing
from autograder.course import catalog
from autograder.course.error_variants import Knobs, causal_attention_with, variant_errors
from autograder.course.n03_causal_attention.ex3_causal_attention.probe import probe_forward
from autograder.integrations.student_kit.runtime.tensors import decode, encode
from autograder.running.runner import DEFAULT_SEED, cases_for


class GivenCausalAttention(nn.Module):
    """Notebook 03's CausalAttention with its given __init__ and the buffer the learner registers."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


class KeysTransposedWithT(GivenCausalAttention):
    """SelfAttention_v2's `keys.T` carried over to a batch."""

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


class MaskNotTruncated(GivenCausalAttention):
    """The whole context_length mask on a shorter batch, filled in place."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool(), -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(attn_weights) @ values


class SoftmaxOverMissingAxis(GivenCausalAttention):
    """A mistake no variant raises: the softmax over an axis the 3-D scores do not have."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=3)
        return self.dropout(attn_weights) @ values


class GivenMultiHeadAttention(nn.Module):
    """Notebook 04's MultiHeadAttention with its given __init__."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def attend(self, x, attention_mask, head_dim, merge, padding_batch=None):
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill((attention_mask == 0).view(padding_batch or b, 1, 1, num_tokens),
                                                  torch.finfo(attn_scores.dtype).min)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(merge(attn_weights @ values, b, num_tokens))


class HeadDimFloat(GivenMultiHeadAttention):
    """`head_dim = d_out / num_heads` in forward: view() gets a float."""

    def forward(self, x, attention_mask=None):
        head_dim = self.d_out / self.num_heads
        return self.attend(x, attention_mask, head_dim,
                           lambda context, b, t: context.transpose(1, 2).contiguous().view(b, t, self.d_out))


class ViewAfterTranspose(GivenMultiHeadAttention):
    """The merge viewed straight after its transpose."""

    def forward(self, x, attention_mask=None):
        return self.attend(x, attention_mask, self.head_dim,
                           lambda context, b, t: context.transpose(1, 2).view(b, t, self.d_out))


batch_size = 2  # the notebook's example batch, as a learner's cell above the class defines it


class PaddingViewWithNotebookBatch(GivenMultiHeadAttention):
    """The padding mask viewed with the notebook's batch size instead of the input's."""

    def forward(self, x, attention_mask=None):
        return self.attend(x, attention_mask, self.head_dim,
                           lambda context, b, t: context.transpose(1, 2).contiguous().view(b, t, self.d_out),
                           padding_batch=batch_size)


def split_heads_true_division(x, num_heads):
    b, num_tokens, d_out = x.shape
    head_dim = d_out / num_heads
    return x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)


def merge_heads_view_after_transpose(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).view(b, num_tokens, num_heads * head_dim)


def failing(results):
    return {check_id: result for check_id, result in results.items() if result.status != PASSED}


def test_keys_T_on_a_batch_is_named_on_every_check_that_errors_and_never_as_an_unsliced_mask():
    results = results_by_id("causal_attention", {"CausalAttention": KeysTransposedWithT})
    errored = {check_id: r for check_id, r in results.items() if r.status == ERROR}
    # The forward pass, its hidden shapes and the whole module contract, the dropout check included.
    assert {"causal_attention.notes", "causal_attention.random", "causal_attention.modes"} <= set(errored)
    assert {r.misconception for r in errored.values()} == {"transpose_batched"}, \
        {check_id: (r.misconception, r.message) for check_id, r in errored.items()}
    assert all(r.misconception != "mask_not_truncated" for r in results.values())


def test_a_mask_really_left_at_context_length_is_named_where_it_crashes():
    results = failing(results_by_id("causal_attention", {"CausalAttention": MaskNotTruncated}))
    assert "causal_attention.random" in results and "causal_attention.modes" in results
    assert {r.misconception for r in results.values()} == {"mask_not_truncated"}


def test_a_crash_no_variant_raises_gets_its_symptom_and_no_name():
    results = failing(results_by_id("causal_attention", {"CausalAttention": SoftmaxOverMissingAxis}))
    assert results and all(r.status == ERROR and r.misconception is None for r in results.values())
    assert any("axis 3" in r.message for r in results.values())


def test_the_context_length_inside_an_error_text_names_nothing_by_itself():
    # The error text that used to be named "mask not truncated" because 8, the context length, appears in it: here
    # the one raising variant on the case raised another error, so no name; with no variants' errors, no name either.
    case = {"num_tokens": 6, "context_length": 8, "batch": 2}
    error = {"type": "RuntimeError", "line": "attn_scores = queries @ keys.T",
             "message": "The size of tensor a (6) must match the size of tensor b (8) at non-singleton dimension 0"}
    other = VariantError("mask_not_truncated", RaisedError(
        "RuntimeError", "The size of tensor a (6) must match the size of tensor b (8) at non-singleton dimension 2"))
    for expected in (None, Expectations({}), Expectations.computed(**{RAISED: lambda: [other.plain()]})):
        verdict = explain_error(error, case, expected)
        assert verdict.message_key == "error.broadcast_axis" and verdict.misconception is None
        assert verdict.evidence is None
    same = VariantError("transpose_batched", RaisedError.of(error))
    named = explain_error(error, case, Expectations.computed(**{RAISED: lambda: [other.plain(), same.plain()]}))
    assert (named.misconception, named.evidence) == ("transpose_batched", Evidence.ERROR)
    assert named.message_key == "error.broadcast_axis"  # the symptom on the student's line stays


@pytest.mark.parametrize(("exercise", "namespace", "mistake"), [
    ("multi_head_attention", {"MultiHeadAttention": HeadDimFloat}, "head_dim_float"),
    ("multi_head_attention", {"MultiHeadAttention": ViewAfterTranspose}, "view_after_transpose"),
    ("split_heads", {"split_heads": split_heads_true_division}, "head_dim_float"),
    ("merge_heads", {"merge_heads": merge_heads_view_after_transpose}, "view_after_transpose"),
    ("padding_mask", {"MultiHeadAttention": PaddingViewWithNotebookBatch}, "size_from_notebook"),
])
def test_a_float_head_dim_and_a_view_after_transpose_are_named(exercise, namespace, mistake):
    results = failing(results_by_id(exercise, namespace))
    assert results and {r.misconception for r in results.values()} == {mistake}
    assert all(r.mistake and r.hint for r in results.values())  # the table's rung 2 reaches the student


def test_a_float_head_dim_is_not_told_to_keep_the_signature():
    results = failing(results_by_id("split_heads", {"split_heads": split_heads_true_division}))
    assert all("signature" not in r.message and "refused" in r.message for r in results.values())


def test_a_variant_that_raises_nothing_proves_nothing():
    case = {"batch": 2, "num_tokens": 4, "context_length": 6, "d_in": 3, "d_out": 3, "qkv_bias": False,
            "dtype": "float32", "seed": 1, "init_seed": 2}
    # x @ W.weight runs when d_in == d_out: its variant raises nothing here, so it cannot name a crash.
    assert variant_errors(probe_forward, case, [
        ("linear_as_matrix", {"CausalAttention": causal_attention_with(Knobs(projection="matrix"))})]) == ()
    raising = variant_errors(probe_forward, {**case, "d_out": 2}, [
        ("linear_as_matrix", {"CausalAttention": causal_attention_with(Knobs(projection="matrix"))})])
    assert [variant.mistake for variant in raising] == ["linear_as_matrix"]


def test_two_mistakes_raising_the_same_error_name_neither():
    error = {"type": "RuntimeError", "message": "shapes do not fit (2x3 and 4x5)"}
    raised = RaisedError.of(error)
    assert reproducing(error, [VariantError("a", raised)]) == "a"
    assert reproducing(error, [VariantError("a", raised), VariantError("b", raised)]) is None
    assert reproducing({"type": "ValueError", "message": error["message"]}, [VariantError("a", raised)]) is None
    assert reproducing({"type": "ProbeError", "message": ""}, [VariantError("a", RaisedError("ProbeError", ""))]) \
        is None


def test_messages_compare_without_whitespace_or_addresses():
    assert normalised("bad  value\n at <obj at 0x7f3a2b>") == normalised("bad value at <obj at 0x55aa01>")
    assert normalised("size (6)") != normalised("size (8)")


def test_the_variants_errors_survive_the_student_kits_storage_and_nothing_else_passes_for_them():
    error = {"type": "RuntimeError", "message": "The size of tensor a (6) must match the size of tensor b (8)"}
    stored = json.loads(json.dumps(encode(Expectations.computed(
        **{RAISED: lambda: [VariantError("mask_not_truncated", RaisedError.of(error)).plain()]}).materialised())))
    verdict = explain_error(error, {}, Expectations.stored(decode(stored)))
    assert (verdict.misconception, verdict.evidence) == ("mask_not_truncated", Evidence.ERROR)
    for odd in ([["mask_not_truncated", "RuntimeError"]], "mask_not_truncated", [[1, 2, 3]], None):
        assert explain_error(error, {}, Expectations.stored({RAISED: odd})).misconception is None


def test_every_checks_expectations_can_be_built_after_a_crash():
    # The diagnosis of a crash now asks the check's expect for RAISED: an expect must read the probe's data lazily,
    # or a crashed case (data without weights) would break the grading instead of costing the check.
    crashed = {"error": {"type": "RuntimeError", "message": "shapes", "line": "", "code": ""}}
    for check in catalog.CHECKS:
        for case in cases_for(check, DEFAULT_SEED):
            check.expect(crashed, case)


def test_an_error_reproduces_whether_torch_names_its_operator_or_not():
    # torch 2.15 prefixes "mm: " where 2.13 (the kit's stored errors) does not: the mistake is named under both
    # (issue 59, devtools/kit_torch_matrix.py), and other shapes still are another error.
    stored = [VariantError("linear_as_matrix",
                           RaisedError("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)"))]
    for message in ("mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)",
                    "mm: mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)"):
        assert reproducing({"type": "RuntimeError", "message": message}, stored) == "linear_as_matrix"
    assert reproducing({"type": "RuntimeError", "message": "mm: mat1 and mat2 shapes cannot be multiplied "
                                                           "(6x3 and 2x4)"}, stored) is None
