"""No rung says anything false of the learner's code (issue 58): a line is quoted as the learner's only when it is
theirs, and "the message above already says what your line does wrong" only when the message quotes a line. The
attempts below are written here, in a learner's style, from the notebooks' instructions.
"""

import contextlib
import io
import linecache

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course import catalog
from autograder.course.assignment import DEFAULT_SEED
from autograder.grading.departures import trace_request
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import judge_exercise, probe_exercise, run_exercise

MESSAGES = catalog.MESSAGES


def printed(check, *arguments, **options):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check(*arguments, **options)
    return output.getvalue()


def check_function():
    return NotebookRuntime(in_notebook.ReferenceExpectations()).check


# ---------------------------------------------------------------------------------------------
# "your line" only where the message above quotes one


def torch_module_without_our_dropout(mha):
    """PyTorch's module built from ours, the dropout rate forgotten (it defaults to 0)."""
    module = nn.MultiheadAttention(mha.d_out, mha.num_heads, bias=True, batch_first=True)
    module = module.to(dtype=mha.out_proj.weight.dtype)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.cat(
            [mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        if mha.W_query.bias is None:
            module.in_proj_bias.zero_()
        else:
            module.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        module.out_proj.weight.copy_(mha.out_proj.weight)
        module.out_proj.bias.copy_(mha.out_proj.bias)
    return module


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_message_naming_no_line_is_not_said_to_name_one(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    check = check_function()
    for hint in (2, 3):
        text = printed(check, "torch_equivalence", torch_module_without_our_dropout, hint=hint)
        assert MESSAGES["ladder.cause_stated"][lang] not in text, text
        assert MESSAGES["ladder.cause_stated_in_message"][lang] in text, text


# ---------------------------------------------------------------------------------------------
# a line is quoted as the learner's only when it is in their answer


GIVEN_CELL = '''
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.attention_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
'''

ANSWER_CELL = '''
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, dropout, context_length, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
'''

RAISING_ANSWER_CELL = '''
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])
        self.rate = nn.Dropout(context_length)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
'''


def cells(*sources):
    """The namespace after running each source as a notebook cell of its own (its lines known to linecache, as a
    kernel keeps them)."""
    namespace = {"nn": nn, "torch": torch, "__name__": "__main__"}
    for index, source in enumerate(sources):
        filename = f"<test cell {index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own cells
    return namespace


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_line_of_the_given_class_is_not_quoted_as_the_learners(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    wrapper = cells(GIVEN_CELL, ANSWER_CELL)["MultiHeadAttentionWrapper"]
    text = printed(check_function(), "mha_wrapper", wrapper, hint=2)
    own = MESSAGES["departure.raised_at_line"][lang].split("`{line}`")[0]
    assert own not in text, text
    outside = MESSAGES["departure.raised_outside_called"][lang].split("`{line}`")[0]
    assert outside in text, text
    assert "`self.attention_dropout = nn.Dropout(dropout)`" in text, text
    assert "`[CausalAttention(d_in, d_out, dropout, context_length, qkv_bias) for _ in range(num_heads)])`" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_line_of_the_answer_is_still_quoted_as_the_learners(lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    wrapper = cells(GIVEN_CELL.replace("attention_dropout", "dropout"), RAISING_ANSWER_CELL)[
        "MultiHeadAttentionWrapper"]
    text = printed(check_function(), "mha_wrapper", wrapper, hint=2)
    own = MESSAGES["departure.raised_at_line"][lang].split("`{line}`")[0]
    assert own + "`self.rate = nn.Dropout(context_length)`" in text, text


# ---------------------------------------------------------------------------------------------
# a name needs a case where no other reading of the learner's code gives the same


def test_a_size_derived_from_d_in_is_not_named_a_constant_whole_width():
    """Half of d_in per head is right for d_in 3 and as wide as the whole output for d_in 5: the mistake "d_out is the
    whole output's width" (2 whatever d_in) would have failed the first case, which passes."""
    def two_dimensional_wrapper(d_in, context_length, dropout):
        half = d_in // 2
        return solutions.MultiHeadAttentionWrapper(d_in, half, context_length, dropout, num_heads=2)

    results = run_exercise("two_dimensional_wrapper", {"two_dimensional_wrapper": two_dimensional_wrapper})
    failing = [result for result in results if result.status != PASSED]
    assert failing
    assert all(result.misconception is None for result in failing), [r.misconception for r in failing]


def test_a_constant_whole_width_is_still_named():
    def two_dimensional_wrapper(d_in, context_length, dropout):
        return solutions.MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)

    results = run_exercise("two_dimensional_wrapper", {"two_dimensional_wrapper": two_dimensional_wrapper})
    assert {result.misconception for result in results if result.status != PASSED} == {"d_out_is_total"}


class HeadsJoinedAlongTheBatch(nn.Module):
    """The wrapper's heads joined along dim 0: of a batch, the batch axis, not the tokens'."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=0)


def merged_along_the_batch(x):
    return torch.cat(x.unbind(1), dim=0)


@pytest.mark.parametrize(("exercise", "names"), [
    ("mha_wrapper", {"MultiHeadAttentionWrapper": HeadsJoinedAlongTheBatch}),
    ("merge_heads", {"merge_heads": merged_along_the_batch}),
])
def test_heads_joined_along_the_batch_axis_are_not_named_joined_along_the_tokens(exercise, names):
    results = run_exercise(exercise, names)
    assert any(result.status != PASSED for result in results)
    assert "heads_on_token_axis" not in {result.misconception for result in results}


# ---------------------------------------------------------------------------------------------
# symptoms and advice true of the code they are shown for


class ScoresDroppedThenMasked(nn.Module):
    """Causal attention whose dropout acts on the scaled scores; the future is masked after it, so its weights are 0
    in both modes."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        tokens = x.shape[1]
        scaled = self.W_query(x) @ self.W_key(x).mT / self.d_out ** 0.5
        scaled = self.dropout(scaled)
        future = self.mask[:tokens, :tokens] == 1
        weights = torch.softmax(torch.where(future, float("-inf"), scaled), dim=-1)
        return weights @ self.W_value(x)


class HeadsInAList(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                      for _ in range(num_heads)]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def merged_head_size_first(x):
    b, heads, tokens, size = x.shape
    return x.permute(0, 2, 3, 1).reshape(b, tokens, heads * size)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_dropout_symptom_speaks_of_the_weights_it_reads(lang, monkeypatch):
    """The future's weights are exactly 0 in this code: "no weight is zero" would be false of them."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(check_function(), "causal_attention", ScoresDroppedThenMasked)
    assert MESSAGES["contract.dropout_before_softmax"][lang] in text, text
    assert {"en": "no weight is zero", "zh": "没有一个权重为 0"}[lang] not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_missing_parameter_is_not_said_to_come_from_other_layers(lang, monkeypatch):
    """The heads are the exercise's own, kept where the module does not register them."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(check_function(), "mha_wrapper", HeadsInAList, hint=3)
    # The contract's row folds under the mistake the first check proves from the module itself (one cause, one message).
    assert {"en": "heads kept in a plain Python list", "zh": "注意力头放在了普通 Python 列表里"}[lang] in text, text
    assert {"en": "more checks fail for the same reason", "zh": "因同样的原因未通过"}[lang] in text, text
    assert {"en": "builds other layers", "zh": "建立的层与练习要求的不同"}[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_merge_advice_does_not_ask_for_an_order_the_code_has(lang, monkeypatch):
    """The head size before the heads: the tokens already come before the heads in this code."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    text = printed(check_function(), "merge_heads", merged_head_size_first, hint=3)
    assert catalog.MISCONCEPTIONS_BY_ID["merge_wrong_axes"].change[lang] in text, text
    assert {"en": "in front of the heads axis", "zh": "移回头所在的维度前面"}[lang] not in text


# ---------------------------------------------------------------------------------------------
# the graded trace never fails on a module of other parameter names


class HeadsOfOtherNames(nn.Module):
    """Each head's projections under names of the learner's own, in a registered list."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([nn.ModuleDict({"q": nn.Linear(d_in, d_out, bias=qkv_bias),
                                                   "k": nn.Linear(d_in, d_out, bias=qkv_bias),
                                                   "v": nn.Linear(d_in, d_out, bias=qkv_bias)})
                                    for _ in range(num_heads)])

    def forward(self, x):
        outputs = []
        for head in self.heads:
            scores = head["q"](x) @ head["k"](x).mT
            outputs.append(torch.softmax(scores / scores.shape[-1] ** 0.5, dim=-1) @ head["v"](x))
        return torch.cat(outputs, dim=-1)


@pytest.mark.parametrize("wrapper", [HeadsInAList, HeadsOfOtherNames])
def test_the_graded_trace_request_never_fails_on_other_parameter_names(wrapper):
    records = probe_exercise("mha_wrapper", {"MultiHeadAttentionWrapper": wrapper})
    results = judge_exercise("mha_wrapper", records)
    assert any(result.status != PASSED for result in results)
    trace_request("mha_wrapper", results, records, DEFAULT_SEED)  # raised KeyError ('state', 'heads.0.W_query...')


class QueryWeightsTurned(nn.Module):
    """SelfAttention_v1 with W_query built (d_out, d_in), "as nn.Linear stores it", and applied as x @ W_query.T."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_out, d_in))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query.T, x @ self.W_key, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


def test_the_graded_trace_request_never_fails_on_weights_no_step_can_be_computed_with():
    """The steps are the reference's with the student's own weights; a W_query of shape (d_out, d_in) cannot make
    them: no case to trace, as check(...) reads it, not an internal error in the instructor's log (12w's wy-v1-15)."""
    records = probe_exercise("self_attention_v1", {"SelfAttention_v1": QueryWeightsTurned})
    results = judge_exercise("self_attention_v1", records)
    assert any(result.status != PASSED for result in results)
    trace_request("self_attention_v1", results, records, DEFAULT_SEED)  # raised RuntimeError (mat1 and mat2 ...)


def test_a_hostile_function_name_of_the_raising_line_is_shown_escaped_and_capped(monkeypatch):
    """The function around the raising line is the notebook's text (its code object's qualname, which code can set):
    shown escaped on one line and capped, as the line itself is."""
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    namespace = cells(GIVEN_CELL, ANSWER_CELL)
    given = namespace["CausalAttention"]
    init = given.__init__
    init.__code__ = init.__code__.replace(co_qualname="\x1b[2J\u202e" + "x" * 5000 + "\nfake line")
    text = printed(check_function(), "mha_wrapper", namespace["MultiHeadAttentionWrapper"], hint=2)
    assert MESSAGES["departure.raised_outside_called"]["en"].split("`{line}`")[0] in text, text
    assert "\x1b" not in text and "\u202e" not in text and "fake line\n" not in text
    assert "x" * 200 not in text
