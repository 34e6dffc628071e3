"""A raise names a known mistake only when the mistake's variant raised it on tensors of the same shapes and
magnitudes as the learner's (issue 58, point 4): the numbers of an error can coincide on tensors that are other
things. Read from set 12g's hand-scoring (n-ca-01): feature-by-feature scores (b, d_out, d_out) against a mask
truncated to the input's tokens raise "size d_out against num_tokens", the very text the untruncated mask raises on
an input as long as d_out. The attempts here are written for this test, as a learner writes them from notebook 03.
"""

import torch
from torch import nn

from autograder.checking.reproduction import RaisedError, VariantError, raising_the_same
from autograder.checking.tensor_trace import OPERANDS, probe_with_raised_operands
from tests.check_helpers import results_by_id
from tests.test_step_sentences import printed_in

NAMES = {"en": "mask not truncated to num_tokens", "zh": "掩码没有截断到 num_tokens"}
HINTS = {"en": "the mask stored for the longest input is larger", "zh": "按最长输入存放的掩码比本次输入的分数大"}
DEPARTS = {"en": "departs from them at the attention scores", "zh": "从注意力分数开始不同"}


class Given(nn.Module):
    """Notebook 03's given __init__."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


class FeatureScores(Given):
    """Scores as the product of the queries' features with the keys' (the transpose on the wrong operand); the mask
    sliced to the input, as the notes have it."""

    def forward(self, x):
        num_tokens = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(q.mT, k)
        future = self.mask[:num_tokens, :num_tokens].bool()
        weights = torch.softmax(scores.masked_fill(future, float("-inf")) / k.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ v


class WholeMask(Given):
    """Control: the mask really left at context_length (masked_fill, not in place)."""

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(q, k.mT)
        weights = torch.softmax(scores.masked_fill(self.mask.bool(), float("-inf")) / k.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ v


def test_scores_of_features_against_a_truncated_mask_are_never_named_an_untruncated_mask():
    for include_hidden in (False, True):  # the previews' cases (one coincides in its error's text), and grading's
        results = results_by_id("causal_attention", {"CausalAttention": FeatureScores},
                                include_hidden=include_hidden)
        failing = {check_id: r for check_id, r in results.items() if r.status != "passed"}
        assert failing
        assert all(r.misconception != "mask_not_truncated" and "mask_not_truncated" not in r.reproduced_by
                   for r in failing.values()), {check_id: r.misconception for check_id, r in failing.items()}


def test_rung_2_says_where_the_feature_scores_depart_and_names_no_mask_in_both_languages():
    for lang in ("en", "zh"):
        text = printed_in(lang, "causal_attention", FeatureScores)
        assert NAMES[lang] not in text and HINTS[lang] not in text, text
        assert DEPARTS[lang] in text, text


def test_a_mask_really_left_at_context_length_keeps_its_name_in_both_languages():
    results = results_by_id("causal_attention", {"CausalAttention": WholeMask})
    assert {r.misconception for r in results.values() if r.status != "passed"} == {"mask_not_truncated"}
    for lang in ("en", "zh"):
        text = printed_in(lang, "causal_attention", WholeMask)
        assert NAMES[lang] in text and HINTS[lang] in text, text


def test_the_error_records_the_shapes_and_magnitudes_its_op_read():
    def probe(namespace, case):
        return {"out": namespace["f"](case["x"])}

    def f(x):
        return x + torch.ones(3)

    data = probe_with_raised_operands(probe, {"f": f}, {"x": torch.full((2,), -2.0)})
    assert data["error"][OPERANDS] == [[2, "4"], [3, "3"]], data


def test_the_same_text_on_other_operands_names_nothing():
    message = "The size of tensor a (5) must match the size of tensor b (7) at non-singleton dimension 2"
    variant = VariantError("mask_not_truncated", RaisedError("RuntimeError", message, "(2, 5, 5)~27.7 (7, 7)~21"))
    same = {"type": "RuntimeError", "message": message, OPERANDS: [[2, 5, 5, "27.7"], [7, 7, "21"]]}
    assert raising_the_same(same, [variant]) == ("mask_not_truncated",)
    other_shapes = {**same, OPERANDS: [[2, 7, 7, "27.7"], [5, 5, "10"]]}
    other_values = {**same, OPERANDS: [[2, 5, 5, "13.1"], [7, 7, "21"]]}
    untraced = {"type": "RuntimeError", "message": message}
    odd = {**same, OPERANDS: [[2, 5, 5, "27.7", "x"], "(7, 7)"]}
    for error in (other_shapes, other_values, untraced, odd):
        assert raising_the_same(error, [variant]) == (), error
    # Plain data the kit stores: three parts (a kit built before the operands) still read, with no operands.
    assert VariantError.from_plain(variant.plain()) == variant
    assert VariantError.from_plain(["m", "RuntimeError", message]).error.operands == ""
