"""Rung 3's "nothing new" line says what rung 2 told (issue 58): under a rung 2 that names no step of the notes (how
a count differs from the module's parameters, the line of the learner's code that raised) it never says "the line
above says at which step of the notes your computation first departs", which would be false of it.

Every attempt here is written in a learner's style for these tests.
"""

import contextlib
import io
import linecache

import pytest
import torch
from torch import nn

from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime

MESSAGES = catalog.MESSAGES


def printed(exercise, *answers, hint):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise, *answers, hint=hint)
    return output.getvalue()


def cells(*sources):
    """The namespace after running each source as a notebook cell of its own (its lines known to linecache)."""
    namespace = {"nn": nn, "torch": torch, "__name__": "__main__"}
    for index, source in enumerate(sources):
        filename = f"<stated kinds cell {index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own cells
    return namespace


def count_parameter_tensors(module):  # how many parameter tensors, not how many numbers they hold
    return len(list(module.parameters()))


def causal_mask_next_token_visible(num_tokens):  # hides from j > i + 1: the next token stays visible
    mask = torch.zeros(num_tokens, num_tokens, dtype=torch.bool)
    for i in range(num_tokens):
        mask[i, i + 2:] = True
    return mask


GIVEN_CELL = '''
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
'''

# A dropout rate built from a size (above 1): nn.Dropout raises at the learner's own line of __init__.
RAISING_WRAPPER_CELL = '''
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])
        self.scale = nn.Dropout(context_length * 2)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
'''


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_under_a_count_rung_3_says_the_count_was_told_not_a_step(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed("parameter_counts", count_parameter_tensors, hint=3)
    assert MESSAGES["label.count"][lang].split("{text}")[0] in text, text
    assert MESSAGES["ladder.count_stated"][lang] in text, text
    assert MESSAGES["ladder.departure_stated"][lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_under_the_line_that_raised_rung_3_says_a_line_raised_not_a_step(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    wrapper = cells(GIVEN_CELL, RAISING_WRAPPER_CELL)["MultiHeadAttentionWrapper"]
    text = printed("mha_wrapper", wrapper, hint=3)
    assert MESSAGES["label.raised"][lang].split("{text}")[0] in text, text
    assert MESSAGES["ladder.raised_stated"][lang] in text, text
    assert MESSAGES["ladder.departure_stated"][lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_under_a_step_that_departs_rung_3_still_names_the_step(lang, monkeypatch):
    """The other kinds' programs: a departure at a step of the notes keeps its line, and gets neither new one."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed("causal_mask", causal_mask_next_token_visible, hint=3)
    assert MESSAGES["label.departure"][lang].split("{text}")[0] in text, text
    assert MESSAGES["ladder.departure_stated"][lang] in text, text
    assert all(MESSAGES[f"ladder.{kind}_stated"][lang] not in text for kind in ("count", "raised", "step")), text


def correct_count(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def test_a_right_count_gets_no_stated_line():
    text = printed("parameter_counts", correct_count, hint=3)
    assert "✘" not in text, text
    assert all(MESSAGES[key]["en"] not in text for key in ("ladder.count_stated", "ladder.departure_stated")), text


def torch_module_out_proj_transposed(mha):  # every weight copied, out_proj's the wrong way round
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)
    torch_mha = torch_mha.to(mha.out_proj.weight.dtype)
    with torch.no_grad():
        torch_mha.in_proj_weight[:] = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=0)
        biases = [layer.bias for layer in (mha.W_query, mha.W_key, mha.W_value)]
        torch_mha.in_proj_bias[:] = 0.0 if biases[0] is None else torch.cat(biases)
        torch_mha.out_proj.weight[:] = mha.out_proj.weight.t()
        torch_mha.out_proj.bias[:] = mha.out_proj.bias
    return torch_mha


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_under_a_step_named_alone_rung_3_does_not_say_what_the_code_holds_there(lang, monkeypatch):
    """The line names the step the code departs at and no fact of the tensor there: rung 3 does not claim that it
    said what the code holds there."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed("torch_equivalence", torch_module_out_proj_transposed, hint=3)
    assert MESSAGES["label.departure"][lang].split("{text}")[0] in text, text
    assert MESSAGES["ladder.step_stated"][lang] in text, text
    assert MESSAGES["ladder.departure_stated"][lang] not in text, text


def causal_mask_as_integers(num_tokens):  # the right entries, as 0/1 integers rather than booleans
    return torch.ones(num_tokens, num_tokens, dtype=torch.int64).triu(diagonal=1)


TRIANGLE_OF_EIGHT = torch.ones(8, 8, dtype=torch.bool).triu(1)


def causal_mask_cut_from_a_fixed_one(num_tokens):  # right up to 8 tokens, a slice of a triangle made beforehand
    return TRIANGLE_OF_EIGHT[:num_tokens, :num_tokens]


@pytest.mark.parametrize("mask", [causal_mask_as_integers, causal_mask_cut_from_a_fixed_one])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_whose_tensors_were_not_traced_is_not_said_to_have_made_none(mask, lang, monkeypatch):
    """The code made its mask, but the trace holds none of its tensors: rung 2 does not say that it made none."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed("causal_mask", mask, hint=3)
    assert "✘" in text, text
    nothing = MESSAGES["departure.nothing"][lang].split("{step}")[0]
    assert nothing not in text, text
    assert MESSAGES["ladder.departure_stated"][lang] not in text and MESSAGES["ladder.step_stated"][lang] not in text


def merge_heads_into_a_new_buffer(x):  # head by head into zeros of the default dtype: float64 comes back float32
    batch, heads, tokens, width = x.shape
    merged = torch.zeros(batch, tokens, heads * width)
    for head in range(heads):
        merged[:, :, head * width:(head + 1) * width] = x[:, head]
    return merged


def split_heads_features_last(x, num_heads):  # the tokens moved behind the head size
    batch, tokens, features = x.shape
    return x.view(batch, tokens, num_heads, features // num_heads).permute(0, 2, 3, 1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_result_that_holds_the_step_is_not_said_to_hold_none_of_it(lang, monkeypatch):
    """The merge is right but in float32 (its dtype is what fails): the returned tensor holds the merged heads, so
    rung 2 never says that none of the code's tensors holds them."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed("merge_heads", merge_heads_into_a_new_buffer, hint=3)
    assert "✘" in text, text
    assert MESSAGES["label.departure"][lang].split("{text}")[0] not in text, text


def test_a_result_in_another_layout_still_departs():
    """The other kind's program: a result holding the split's numbers with its axes in another order still gets
    its departure, with what it holds."""
    text = printed("split_heads", split_heads_features_last, hint=2)
    assert "where it departs — your code reproduces the notes' input viewed as (batch, tokens, heads, head size), " \
           "then departs from them at the input split into heads" in text, text
    assert "with its tokens and features axes exchanged" in text, text


class LastSequencesPaddingForAll(nn.Module):
    """The padding of the batch's last sequence hides those keys in every sequence, then the causal mask: the
    code's masked scores are the tensor after both fills, not the one between them."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, attention_mask=None):
        b, t, _ = x.shape
        q, k, v = (layer(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        scores = q @ k.transpose(2, 3)
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask[-1] == 0, torch.finfo(scores.dtype).min)
        scores = scores.masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, t, self.d_out))


def test_what_masked_scores_show_is_counted_after_every_fill_the_code_applies():
    """The notes' case: its first sequence's last two keys are padding, its second's first two. The code hides the
    second's padding keys in both sequences: its masked scores show 3 entries of each head that the notes hide
    (the first sequence's padding keys its queries 4 and 5 see) and hide 11 that they keep (that sequence's keys 0
    and 1), 2 heads; the tensor between the two fills shows 31 of each head."""
    text = printed("padding_mask", LastSequencesPaddingForAll, hint=2)
    assert "the tensor your code made in its place shows 6 entries that the notes' masked attention scores hide" \
           in text, text
    assert "hides 22 entries that the notes' masked attention scores keep" in text, text
    assert "shows 62 entries" not in text, text
