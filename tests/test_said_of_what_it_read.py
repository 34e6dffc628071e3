"""Sentences held to what the check could read (learners_2026_12n, after the measure; issue 58's "every sentence true
of the code it speaks to"). The attempts are written here in a learner's style.

- A property whose output is NaN throughout cannot show it: NaN times a dropout mask is NaN again, and a head whose
  output is NaN stays NaN whatever its weights. "Nothing is ever dropped" (naming dropout that drops nothing) and
  "changing one head's query weights did not change that head's output" were said of a module that applies dropout
  and keeps its heads apart; the property takes no point for what it cannot read, and the value checks say what is
  wrong.
- A raise between tensors of two dtypes says each operand's dtype.
- A transfer that fills and returns a module of its own is said to return "a SelfAttention_v1 object", not
  "SelfAttention_v1" (the class); the built-in rule says the shape of the input the module was run on, not of what it
  handed the built-in.
"""

import contextlib
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


class AdditiveInfMask(solutions.MultiHeadAttention):
    """The mask added as mask * -inf: 0 * -inf is NaN, so every score (and every weight) is NaN; dropout and the
    heads as the notes have them."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        scores = queries @ keys.transpose(2, 3) + self.mask[:num_tokens, :num_tokens] * -torch.inf
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj(solutions.merge_heads(weights @ values))


class InputMadeDouble(solutions.SelfAttention_v1):
    """The input made float64 "for precision"; the weights stay float32."""

    def forward(self, x):
        x = x.double()
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


def into_a_fresh_module(sa_v1, sa_v2):
    """The weights copied into a new SelfAttention_v1, which is returned; sa_v1 is never touched."""
    d_out, d_in = sa_v2.W_query.weight.shape
    fresh = solutions.SelfAttention_v1(d_in, d_out)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(fresh, name).copy_(getattr(sa_v2, name).weight.T)
    return fresh


class BuiltInOnProjections(solutions.SelfAttention_v1):
    """The projections handed to the built-in attention, with a batch axis added."""

    def forward(self, x):
        q, k, v = (x @ w for w in (self.W_query, self.W_key, self.W_value))
        return nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]


def printed(exercise_id, attempt, lang="en", hint=2):
    output = io.StringIO()
    with contextlib.redirect_stdout(output), pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTNKIT_LANG", lang)
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, attempt, hint=hint)
    return output.getvalue()


def test_nan_weights_name_no_dropout_mistake_and_no_unchanged_head():
    text = printed("multi_head_attention", AdditiveInfMask)
    assert "NaN" in text, text
    assert "nothing is ever dropped" not in text and "drops nothing" not in text, text
    assert "did not change that head's output" not in text, text
    passing = [line for line in text.splitlines() if line.startswith("  ✔")]
    assert any("dropout in training mode only" in line for line in passing), text
    module = AdditiveInfMask(3, 2, 6, 0.5, 2).train()
    assert torch.isnan(module(torch.rand(1, 6, 3))).all()


def test_a_module_without_dropout_and_finite_weights_still_loses_the_dropout_point():
    class NoDropout(solutions.MultiHeadAttention):
        def forward(self, x, attention_mask=None):
            self.dropout.p = 0.0  # the mistake: dropout switched off inside forward
            return super().forward(x, attention_mask)
    text = printed("multi_head_attention", NoDropout)
    assert any(line.startswith("  ✘") and "dropout" in line for line in text.splitlines()), text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_raise_between_two_dtypes_says_each_operands_dtype(lang):
    text = printed("self_attention_v1", InputMadeDouble, lang)
    said = {"en": "a float64 tensor of shape (6, 3) and a float32 tensor of shape (3, 2)",
            "zh": "一个形状为 (6, 3) 的 float64 张量和一个形状为 (3, 2) 的 float32 张量"}[lang]
    assert said in text, text


def test_operands_of_one_dtype_are_said_by_shape_alone():
    class Untransposed(solutions.SelfAttention_v1):
        def forward(self, x):
            return super().forward(x @ self.W_query.T)
    text = printed("self_attention_v1", Untransposed)
    assert "float32 tensor" not in text and "float64 tensor" not in text, text


def test_a_fresh_module_returned_is_said_as_an_object_of_its_type():
    text = printed("transfer_weights", into_a_fresh_module)
    assert "returned a SelfAttention_v1 object, not sa_v1" in text, text
    assert "returned SelfAttention_v1" not in text, text


def test_the_built_in_rule_says_the_input_the_module_was_run_on():
    text = printed("self_attention_v1", BuiltInOnProjections)
    assert "calls scaled_dot_product_attention when run on an input of shape (" in text, text
