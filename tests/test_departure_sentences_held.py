"""Sentences of rung 2 that must be true of the learner's own run (issue 58: no rung says anything false).

- "the tensor your code made in its place does not sum to 1" is not said where a tensor the code makes from it next,
  of its shape, does sum to 1 (a softmax of the squared scores: the squares are not the weights' only stand-in);
- a raise's operand that holds a step is said to hold its *values* (its dtype may differ: a float32 buffer);
- a step reproduced in its numbers under another shape (squeezed to a 0-d tensor) is said so where the code then
  raised, not only "reproduces".
The attempts are written here, in a learner's style."""

import contextlib
import io

import pytest
import torch
from torch import nn

from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


def squared_scores(inputs):
    """"Sharper" weights: the scores squared before the softmax."""
    scores = inputs @ inputs.T
    weights = torch.softmax(scores ** 2, dim=-1)
    return weights @ inputs


class WeightsIntoAnEmptyBuffer(nn.Module):
    """The weights written into a preallocated torch.empty (float32 whatever the input)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        weights = torch.empty(x.shape[0], x.shape[0])
        weights[:] = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        return weights @ v


class SqueezedScores(nn.Module):
    """The scores squeezed "to drop stray axes": a single token's (1, 1) scores become a 0-d tensor."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (q @ k.T).squeeze()
        weights = torch.softmax(scores / k.shape[-1] ** 0.5, dim=1)
        return weights @ v


def departure_lines(exercise, attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise, attempt, hint=2)
    departs = {"en": "where it departs", "zh": "从哪里开始不同"}[lang]
    return [line for line in output.getvalue().splitlines() if departs in line]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_sum_fact_where_a_tensor_made_next_sums_to_1(lang, monkeypatch):
    lines = departure_lines("context_vectors", squared_scores, lang, monkeypatch)
    assert lines, lines
    assert not any({"en": "does not sum to 1", "zh": "加起来不等于 1"}[lang] in line for line in lines), lines


def test_a_raise_operand_holding_a_step_is_said_to_hold_its_values(monkeypatch):
    lines = departure_lines("self_attention_v1", WeightsIntoAnEmptyBuffer, "en", monkeypatch)
    assert any("their values match the notes'" in line for line in lines), lines
    assert not any("they match the notes'" in line for line in lines), lines


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_step_reproduced_under_another_shape_says_the_shape_before_the_raise(lang, monkeypatch):
    lines = departure_lines("self_attention_v2", SqueezedScores, lang, monkeypatch)
    said = {"en": "but in shape (), where the notes' have shape (1, 1)", "zh": "但形状是 ()，笔记中的形状是 (1, 1)"}
    assert any(said[lang] in line for line in lines), lines


def heads_into_a_fresh_buffer(x, num_heads):
    """Each head's slice copied into a buffer allocated up front (float32, whatever the input's dtype)."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    out = x.new_empty((b, num_heads, num_tokens, head_dim), dtype=torch.float32)
    for head in range(num_heads):
        out[:, head].copy_(x[..., head * head_dim:(head + 1) * head_dim])
    return out


def stacked_in_one_copy_without_the_output_bias(mha):
    """The three projections copied in one go; out_proj's weight copied, its bias forgotten."""
    d = mha.d_out
    torch_mha = nn.MultiheadAttention(d, mha.num_heads, bias=True, batch_first=True, dtype=mha.W_query.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
    return torch_mha


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_buffer_filled_by_copies_holds_what_was_copied_never_old_memory(lang, monkeypatch):
    """torch.empty's memory is traced as never written (NaN) and each copy_ into a slice of it refreshes the buffer:
    the heads it holds are the notes' (its dtype is what fails), so no step is said to depart in value."""
    assert departure_lines("split_heads", heads_into_a_fresh_buffer, lang, monkeypatch) == []


def test_weights_copied_into_a_parameter_in_place_are_held_there(monkeypatch):
    lines = departure_lines("torch_equivalence", stacked_in_one_copy_without_the_output_bias, "en", monkeypatch)
    assert lines and all("reproduces the notes' projection weights stacked as one input projection" in line
                         for line in lines), lines


def test_the_trace_sees_an_empty_buffer_as_unwritten_and_follows_copies_into_it():
    from autograder.checking.tensor_trace import UNWRITTEN, WRITTEN, TensorTrace

    source = torch.arange(6.0).reshape(2, 3)
    with torch.no_grad(), TensorTrace() as trace:
        buffer = torch.empty(2, 3)
        buffer[0].copy_(source[0])
        buffer[1].copy_(source[1])
    ops = [entry.op for entry in trace.traced]
    assert ops[0] == UNWRITTEN and bool(torch.isnan(trace.traced[0].value).all())
    whole = [entry.value for entry in trace.traced if entry.op == WRITTEN and entry.value.shape == (2, 3)]
    assert torch.isnan(whole[0][1]).all() and torch.equal(whole[0][0], source[0].double())  # row 1 not written yet
    assert torch.equal(whole[-1], source.double())


class HeadsInADict(nn.Module):
    """The heads kept in an nn.ModuleDict keyed by name: registered, under other names than heads.0, heads.1."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        from attnkit import solutions

        super().__init__()
        self.heads = nn.ModuleDict({f"head{index}": solutions.CausalAttention(d_in, d_out, context_length, dropout,
                                                                              qkv_bias)
                                    for index in range(num_heads)})

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads.values()], dim=-1)


def test_heads_registered_under_other_names_are_not_said_unregistered(monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("mha_wrapper", HeadsInADict, hint=2)
    text = output.getvalue()
    assert "registered, but under names such as heads.head0." in text, text
    assert "not registered submodules" not in text, text


def renormalised_by_a_column_of_ones(attn_weights):
    """Row sums as a product with a column of ones (float32, whatever the weights' dtype)."""
    num_tokens = attn_weights.shape[-1]
    kept = attn_weights * torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype))
    sums = kept @ torch.ones(num_tokens, 1)
    return kept / sums


def test_a_raise_operand_is_said_in_the_learners_own_shape_not_the_view_the_op_read(monkeypatch):
    """torch.matmul hands a batch of weights to its kernel flattened: the operand said is the learner's tensor."""
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(
            "masking_routes", renormalised_by_a_column_of_ones, torch.softmax, hint=2)
    lines = [line for line in output.getvalue().splitlines() if "it raised in an operation on" in line]
    assert lines, output.getvalue()
    for line in lines:
        said = line.split("it raised in an operation on your ")[1].split("(shape ")[1].split(")")[0] + ")"
        assert said.count(",") >= 2 or "(" not in said, line  # a batch's three axes, never (batch * rows, keys)
