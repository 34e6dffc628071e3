"""Sentences of rung 2 that must be true of the learner's own run (issue 58: no rung says anything false).

- "the tensor your code made in its place does not sum to 1" is not said where a tensor the code makes from it next,
  of its shape, does sum to 1 (a softmax of the squared scores: the squares are not the weights' only stand-in);
- a raise's operand that holds a step is said to hold its *values* (its dtype may differ: a float32 buffer), and
  where its kind differs from the notes' step (a float triangle for the boolean mask) both dtypes are said;
- a step reproduced in its numbers under another shape (squeezed to a 0-d tensor) is said so where the code then
  raised, not only "reproduces";
- a raise's operand is said in the shape the op read, unless a product read a view torch made inside the call;
- a view naming the batch and tokens the other way is not the notes' view, even where a batch of 1 keeps the order;
- columns of the weights are not called features; a sum made from a product is not "the next tensor" made; a 0-d
  result has no "other axes" (learners_2026_12j's five false sentences, in kinds, on attempts written here).
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


class LinearProjections(nn.Module):
    """SelfAttention_v2's constructor as the notebook hands it out: each attempt below writes its own forward."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)


class SqueezedScores(LinearProjections):
    """The scores squeezed "to drop stray axes": a single token's (1, 1) scores become a 0-d tensor."""

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
    # The earliest step held only in that shape (the scaled scores, made from the squeezed scores), not the last.
    earliest = {"en": "your scaled attention scores: the notes' numbers",
                "zh": "你的缩放后的注意力分数数值与笔记中的相同"}
    assert any(earliest[lang] in line for line in lines), lines


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
        # "(shape ...", or "(float64, shape ..." where the operands' dtypes differ
        said = line.split("it raised in an operation on your ")[1].split("shape ")[1].split(")")[0] + ")"
        assert said.count(",") >= 2 or "(" not in said, line  # a batch's three axes, never (batch * rows, keys)


def max_put_back_on_the_last_axis(x, dim=-1):
    """The maximum's lost axis restored with unsqueeze(-1), whatever `dim` was."""
    biggest = x.amax(dim=dim).unsqueeze(-1)
    shifted = torch.exp(x - biggest)
    return shifted / shifted.sum(dim=dim, keepdim=True)


def test_a_raise_operand_the_learner_reshaped_is_said_in_the_shape_the_op_read(monkeypatch):
    """A subtraction reads what the learner's code handed it: their unsqueezed maximum, said as (n, 1), not as the
    (n,) tensor it was made from (only a product's operands may be views torch made inside the call)."""
    lines = [line for line in departure_lines("softmax_stable", max_put_back_on_the_last_axis, "en", monkeypatch)
             if "it raised in an operation on" in line]
    assert lines, lines
    for line in lines:
        operand = line.split("your maximum of each row (shape ")[1].split(";")[0]
        assert operand.endswith(", 1)"), line


def heads_from_tokens_first(x, num_heads):
    """The shape unpacked as (tokens, batch, features): the view then names the batch and tokens the other way."""
    num_tokens, b, d_out = x.shape
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def test_a_view_with_batch_and_tokens_named_the_other_way_does_not_reproduce_the_heads_view(monkeypatch):
    """On a batch of one, (tokens, 1, heads, head size) holds the input's numbers in order, as the notes' view does;
    it is not the view (batch, tokens, heads, head size), so no line says the code reproduces it."""
    lines = departure_lines("split_heads", heads_from_tokens_first, "en", monkeypatch)
    assert lines, lines
    assert not any("reproduces the notes' input viewed as" in line for line in lines), lines


def test_a_one_token_batch_joined_into_its_tokens_still_holds_the_view():
    from autograder.checking.departure import held_joined

    viewed = torch.arange(24.0).reshape(1, 2, 3, 4)  # (batch 1, tokens 2, heads 3, head size 4)
    assert held_joined(viewed.reshape(2, 3, 4), viewed, ())  # batch and tokens joined: a right program's layout
    assert held_joined(viewed.reshape(1, 1, 2, 3, 4).reshape(1, 2, 3, 4)[0], viewed, ())
    assert not held_joined(viewed.reshape(2, 1, 3, 4), viewed, ())  # tokens first, then a batch of 1


class ContextFromTransposedValues(LinearProjections):
    """The context vectors as (values^T @ weights)^T: each value column paired with each weights column."""

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        weights = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        return (v.T @ weights).T


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_columns_of_the_weights_are_not_called_features(lang, monkeypatch):
    lines = departure_lines("self_attention_v2", ContextFromTransposedValues, lang, monkeypatch)
    paired = {"en": "each column of the notes' values with each column of the notes' attention weights",
              "zh": "笔记中的value的每一列与笔记中的注意力权重的每一列的点积"}[lang]
    assert any(paired in line for line in lines), lines
    assert not any({"en": "pairs of features", "zh": "配对的是特征"}[lang] in line for line in lines), lines


class OwnKeyOnly(LinearProjections):
    """Each query multiplied entry by entry with its own key, then summed: one score per token."""

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (q * k).sum(dim=-1)
        return torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1) @ v


def test_a_sum_of_products_is_not_called_the_next_tensor_made(monkeypatch):
    """q * k comes first (shape (6, 2)); the sum over features made from it is what the line describes, so it is
    not "the next tensor your code made"."""
    lines = departure_lines("self_attention_v2", OwnKeyOnly, "en", monkeypatch)
    described = [line for line in lines if "has shape (6,)" in line]
    assert described, lines
    assert all("the next tensor your code made" not in line and "then made from those steps" in line
               for line in described), described


def squeezed_at_the_end(x):
    exps = torch.exp(x)
    return (exps / exps.sum(dim=0, keepdim=True)).squeeze()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_zero_dimensional_result_is_not_said_to_have_other_axes(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("softmax_naive", squeezed_at_the_end, hint=1)
    text = output.getvalue()
    assert {"en": "output has shape (), not (1,)", "zh": "输出形状是 ()，而不是 (1,)"}[lang] in text, text
    assert {"en": "the same values in the same order", "zh": "数值相同、顺序也相同"}[lang] in text, text
    assert {"en": "other axes", "zh": "别的维度"}[lang] not in text, text


# learners_2026_12l's false sentences, in kinds: a sum that drops the summed axis is the notes' naive softmax's own
# (its sum over dim 0, broadcast along the right axis), never "the notes' numbers, but in shape (4,)"; a transform of
# the notes' step (|exp(x)| is exp(x)) proves nothing of what the code's tensors were made from.


def column_sums_as_one_number(x):
    """The denominator as a Python number: right on a vector, raises on a matrix."""
    exps = x.exp()
    return exps / exps.sum(0).item()


def sums_kept_as_a_column(x):
    """A kept axis added at the wrong end: (4,) sums made (4, 1), which do not broadcast over the columns."""
    exps = torch.exp(x)
    total = exps.sum(dim=0).unsqueeze(-1)
    return exps / total


def absolute_scores_first(x):
    """Negative scores "fixed" by their absolute values before the exponential."""
    exps = torch.exp(x.abs())
    return exps / exps.sum(dim=0)


@pytest.mark.parametrize("attempt", [column_sums_as_one_number, sums_kept_as_a_column])
def test_sums_that_drop_the_summed_axis_are_the_notes_own_shape(attempt, monkeypatch):
    lines = departure_lines("softmax_naive", attempt, "en", monkeypatch)
    assert any("reproduces the notes' exponentials, sums of the exponentials; then it raised" in line
               for line in lines), lines
    assert not any("but in shape" in line for line in lines), lines


def test_a_transform_of_the_notes_step_does_not_make_a_tensor_the_input(monkeypatch):
    lines = departure_lines("softmax_naive", absolute_scores_first, "en", monkeypatch)
    assert lines, lines
    assert not any("the input your function was given" in line for line in lines), lines


class SelfAttentionV2Batched(nn.Module):
    """12r's ry-v2-06: torch.bmm, which wants 3-D batches, on the 2-D queries and the keys transposed."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(queries, keys.transpose(-2, -1))
        return torch.bmm(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1), values)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_raise_operand_read_transposed_is_said_transposed_in_the_shape_the_op_read(lang, monkeypatch):
    """The product read the keys as (2, 6): "your keys (shape (6, 2))" was false of what it read."""
    lines = [line for line in departure_lines("self_attention_v2", SelfAttentionV2Batched, lang, monkeypatch)
             if {"en": "it raised in an operation on", "zh": "运算中抛出"}[lang] in line or "(2, 6)" in line]
    assert lines, lines
    turned = {"en": "your keys with their axes in another order (shape (2, 6) as the operation read them",
              "zh": "维度顺序被调换过的你的key（运算读到的形状是 (2, 6)"}[lang]
    assert all(turned in line for line in lines), lines
    unturned = {"en": "your keys (shape (6, 2)", "zh": "你的key（形状 (6, 2)"}[lang]
    assert not any(unturned in line for line in lines), lines


def float_triangle_fill(attn_scores):
    """Route 2 with the triangle of ones kept as floats: masked_fill refuses any mask but a boolean one."""
    num_tokens = attn_scores.shape[-1]
    above = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(above, -torch.inf), dim=-1)


def renormalised(attn_weights):
    """Route 1, right: the weights the learner leaves alone here."""
    kept = attn_weights * torch.tril(torch.ones_like(attn_weights))
    return kept / kept.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_raise_operand_holding_a_boolean_step_as_floats_says_both_dtypes(lang, monkeypatch):
    """The triangle's values are the notes' mask, its dtype is not: "reproduces … their values match" alone read as
    if the mask were right (12u's uz-mr-11)."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(
            "masking_routes", renormalised, float_triangle_fill, hint=2)
    lines = [line for line in output.getvalue().splitlines()
             if {"en": "it raised in an operation on", "zh": "运算中抛出"}[lang] in line]
    assert lines, lines
    said = {"en": "(float32, shape (6, 6); their values match the notes', whose dtype is bool)",
            "zh": "（float32，形状 (6, 6)；数值与笔记中的相同，但笔记中的 dtype 是 bool）"}[lang]
    assert all(said in line for line in lines), lines


def floored_exponentials(x):
    """Exponentials below a half raised to a half "so no weight vanishes", chosen entry by entry."""
    e = torch.where(torch.exp(x) > 0.5, torch.exp(x), torch.full_like(x, 0.5))
    return e / e.sum(dim=0)


def mirrored_exponentials(x):
    """exp(-x) for negative scores, kept "readable": the exponentials made, then replaced where x < 0."""
    grown = torch.exp(x)
    e = torch.where(x < 0, torch.exp(-x), grown)
    return e / e.sum(dim=0)


def finite_exponentials(x):
    """A right softmax that guards against inf: where keeps every finite exponential as it is."""
    e = torch.exp(x)
    e = torch.where(torch.isfinite(e), e, torch.zeros_like(e))
    return e / e.sum(dim=0)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("attempt", [floored_exponentials, mirrored_exponentials])
def test_exponentials_made_then_replaced_entry_by_entry_are_where_the_code_departs(attempt, lang, monkeypatch):
    """The notes' exponentials are made, but the code goes on with a tensor chosen entry by entry from them and
    other numbers: "reproduces the notes' exponentials, then departs at the sums" was false, and so would be "none
    of your tensors holds them" (12v's vy-sn-10)."""
    lines = departure_lines("softmax_naive", attempt, lang, monkeypatch)
    assert lines, lines
    said = {"en": "at their first step, the exponentials: an op of yours does make them, but your code goes on only "
                  "with a tensor made by choosing, entry by entry",
            "zh": "你的代码从笔记的第一步（指数）开始不同：你的某个运算确实算出了它，"
                  "但你的代码接着只用了另一个张量"}[lang]
    assert all(said in line for line in lines), lines


def test_a_where_that_keeps_the_exponentials_keeps_them_reproduced(monkeypatch):
    lines = departure_lines("softmax_naive", finite_exponentials, "en", monkeypatch)
    assert lines == [], lines  # right: every check passes, nothing departs
