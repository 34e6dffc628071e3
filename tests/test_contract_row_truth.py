"""Every ✔ row of the module contract and every rung said to a module exercise is true of the code it speaks to
(issue 58, item 5), shown on learners' attempts written as near-copies of the notes' code with one change.

- A forward that casts its input with x.float() passes the device check: its row must promise no dtype, which the
  structure check's float64 row tests (and fails) instead.
- A forward that builds new nn.Linear layers on every call mixes their CPU weights into the work on the device: the
  mistake named is a tensor made in forward, and its advice speaks of the module's own weights, not of a registered
  buffer SelfAttention_v2 does not have; nor does a forward that edits v1's weights hear of buffers.
"""

import pytest
import torch
from mutants import causal as mutants
from torch import nn

from attnkit import solutions
from autograder.running.runner import run_exercise

LANGS = ("en", "zh")
DTYPE_WORDS = ("dtype", "float")


class SelfAttention_v1(nn.Module):  # noqa: N801 - the notebook's name
    """The notes' SelfAttention_v1 with one change: forward casts its input to float32 "to be safe"."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        x = x.float()
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class SelfAttention_v1_normalised(solutions.SelfAttention_v1):  # type: ignore[misc]  # noqa: N801
    """The notes' SelfAttention_v1 with one change: forward rescales its own query weights in place first."""

    def forward(self, x):
        with torch.no_grad():
            self.W_query /= self.W_query.norm()
        return super().forward(x)


class SelfAttention_v2(nn.Module):  # noqa: N801 - the notebook's name
    """The notes' SelfAttention_v2 with one change: forward builds new layers instead of calling the module's own."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        d_in, d_out = x.shape[-1], self.W_query.out_features
        keys = nn.Linear(d_in, d_out, bias=False)(x)
        queries = nn.Linear(d_in, d_out, bias=False)(x)
        values = nn.Linear(d_in, d_out, bias=False)(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class SelfAttention_v2_linear_calls(solutions.SelfAttention_v2):  # type: ignore[misc]  # noqa: N801
    """A route the notes teach: the layers' weights applied with torch.nn.functional.linear, which is what calling
    the layer does."""

    def forward(self, x):
        keys = nn.functional.linear(x, self.W_key.weight, self.W_key.bias)
        queries = nn.functional.linear(x, self.W_query.weight, self.W_query.bias)
        values = nn.functional.linear(x, self.W_value.weight, self.W_value.bias)
        attn_weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


def results(exercise_id, namespace, lang):
    return {result.id: result for result in run_exercise(exercise_id, namespace, lang=lang)}


@pytest.mark.parametrize("lang", LANGS)
def test_a_passing_device_row_promises_no_dtype_a_cast_in_forward_breaks(lang):
    got = results("self_attention_v1", {"SelfAttention_v1": SelfAttention_v1}, lang)
    structure, device = got["self_attention_v1.structure"], got["self_attention_v1.device"]
    assert structure.score < structure.max_score, structure  # the float64 row: forward raises on float64
    assert device.score == device.max_score, device
    assert not any(word in device.title for word in DTYPE_WORDS), device.title


@pytest.mark.parametrize("lang", LANGS)
def test_weights_edited_by_forward_are_told_of_parameters_not_a_buffer(lang):
    got = results("self_attention_v1", {"SelfAttention_v1": SelfAttention_v1_normalised}, lang)
    state = got["self_attention_v1.state"]
    assert state.misconception == "parameters_changed_by_forward", state
    ladder = " ".join(state.ladder(3))
    assert state.change and "buffer" not in ladder.lower(), ladder


@pytest.mark.parametrize("lang", LANGS)
def test_layers_built_in_forward_are_told_of_the_modules_own_weights_not_a_buffer(lang):
    got = results("self_attention_v2", {"SelfAttention_v2": SelfAttention_v2}, lang)
    device = got["self_attention_v2.device"]
    assert device.misconception == "forward_tensor_on_cpu", device
    ladder = " ".join(device.ladder(3))
    assert device.change and "buffer" not in ladder.lower(), ladder
    assert ("weights" if lang == "en" else "权重") in device.change, device.change


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("exercise_id", "class_name", "student"), [
    ("self_attention_v1", "SelfAttention_v1", solutions.SelfAttention_v1),
    ("self_attention_v2", "SelfAttention_v2", solutions.SelfAttention_v2),
    ("self_attention_v2", "SelfAttention_v2", SelfAttention_v2_linear_calls),
], ids=["v1-notes", "v2-notes", "v2-functional-linear"])
def test_the_notes_code_keeps_full_marks_unnamed(exercise_id, class_name, student, lang):
    got = results(exercise_id, {class_name: student}, lang)
    wrong = {check: (result.score, result.misconception) for check, result in got.items()
             if result.score < result.max_score or result.misconception}
    assert not wrong, wrong


def test_a_mask_made_in_forward_is_still_pointed_to_the_buffer():
    """Where the module has a mask buffer, the advice keeps it (the causal module's mistake, unchanged)."""
    got = results("causal_attention", {"CausalAttention": mutants.CausalAttention_fresh_mask_in_forward}, "en")
    device = got["causal_attention.device"]
    assert device.misconception == "tensor_created_on_cpu", device
    assert "buffer" in device.change, device.change
