"""Every sentence true of the code it speaks to (issue 58, items 4 and 5): a symptom's usual cause is said only when
the learner's own values prove it, and a name only where a case tells it apart. Each attempt below is a near-copy of
the reference with the one change a learner of set F (tests/evalsets/learners_2026_12c) made; the controls are the
reference and the named mistakes' own mutants, which keep their names."""

import contextlib
import io

import pytest
import torch
from mutants import causal as causal_mutants
from mutants import multihead as multihead_mutants
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import run_exercise


def printed(exercise_id, attempt, lang, monkeypatch, hint=2):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        objects = attempt if isinstance(attempt, tuple) else (attempt,)
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, *objects, hint=hint)
    return output.getvalue()


def names(exercise_id, attempt, check_id):
    results = {result.id: result for result in run_exercise(exercise_id, attempt, include_hidden=True)}
    return results[check_id].misconception


# ---------------------------------------------------------------------------------------------
# f-ca-14: keys summed over the batch look like a scale on the notes' batch of two copies


class KeysSummedOverTheBatch(solutions.CausalAttention):
    """The reference with an einsum whose keys' batch letter differs from the queries': each query meets the keys
    summed over the batch; on the notes' two copies, twice the notes' scores."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = torch.einsum("bid,njd->bij", queries, keys)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


SCALE_SENTENCE = {"en": "your scores were divided by", "zh": "你的分数除以的是"}
SCALE_NAME = {"en": "scores divided by the wrong number", "zh": "分数除以的数不对"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_keys_summed_over_a_batch_of_copies_are_not_called_a_scale(lang, monkeypatch):
    text = printed("causal_attention", KeysSummedOverTheBatch, lang, monkeypatch)
    assert SCALE_SENTENCE[lang] not in text and SCALE_NAME[lang] not in text, text
    assert names("causal_attention", {"CausalAttention": KeysSummedOverTheBatch}, "causal_attention.notes") is None


class ScaledByAnOddNumber(solutions.CausalAttention):
    """The reference dividing by a number of the learner's own: a pure scale, whatever the batch holds."""

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / 0.7071, dim=-1)
        attn_weights = self.dropout(attn_weights)
        return attn_weights @ values


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_pure_scale_on_the_notes_batch_is_still_said_and_named(lang, monkeypatch):
    text = printed("causal_attention", ScaledByAnOddNumber, lang, monkeypatch)
    assert SCALE_SENTENCE[lang] in text and SCALE_NAME[lang] in text, text


@pytest.mark.parametrize(("mutant", "check_id", "named"), [
    ("CausalAttention_global_d_k", "causal_attention.random", "size_from_notebook"),
    ("CausalAttention_missing_scaling", "causal_attention.notes", "missing_scaling")])
def test_the_scale_mutants_are_still_named(mutant, check_id, named):
    attempt = {"CausalAttention": getattr(causal_mutants, mutant)}
    assert names("causal_attention", attempt, check_id) == named


def test_the_reference_on_the_notes_batch_passes():
    assert names("causal_attention", {"CausalAttention": solutions.CausalAttention}, "causal_attention.notes") is None


# ---------------------------------------------------------------------------------------------
# f-wr-10: one head too few in a ModuleList is a count, not heads left unregistered, and no index of the probe's


class OneHeadTooFew(solutions.MultiHeadAttentionWrapper):
    """The reference wrapper whose loop starts at 1: a registered ModuleList of num_heads - 1 heads."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList(
            [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(1, num_heads)]
        )


UNREGISTERED = {"en": "not registered submodules", "zh": "不是注册的子模块"}
TOO_FEW = {"en": "self.heads holds 2 head(s), expected num_heads = 3",
           "zh": "self.heads 中有 2 个头，应当有 num_heads = 3 个"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_head_too_few_is_said_as_the_count_read_from_the_module(lang, monkeypatch):
    text = printed("mha_wrapper", OneHeadTooFew, lang, monkeypatch)
    assert UNREGISTERED[lang] not in text and "IndexError" not in text, text
    structure = [line for line in text.splitlines() if "qkv_bias 打开" in line or "qkv_bias on or off" in line]
    assert structure and TOO_FEW[lang] in structure[0], text
    results = {result.id: result for result in run_exercise("mha_wrapper", {"MultiHeadAttentionWrapper": OneHeadTooFew},
                                                            include_hidden=True)}
    device = [result for check_id, result in results.items() if check_id.endswith(".device")]
    assert device and all("IndexError" not in result.message and result.misconception is None for result in device)


def test_heads_in_a_plain_list_are_still_named():
    attempt = {"MultiHeadAttentionWrapper": multihead_mutants.WrapperPlainList}
    results = run_exercise("mha_wrapper", attempt, include_hidden=True)
    assert "heads_plain_list" in {result.misconception for result in results}


# ---------------------------------------------------------------------------------------------
# f-mh-12: a forward that edits W_query on every call is a state change, not heads mixed


class ScaleFoldedIntoTheQueryWeights(solutions.MultiHeadAttention):
    """The reference with the scale folded into W_query, in place, on every call (and not applied to the scores)."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        with torch.no_grad():
            self.W_query.weight /= self.head_dim ** 0.5
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))
        return self.out_proj(solutions.merge_heads(attn_weights @ values))


class MergedWithoutTheTranspose(solutions.MultiHeadAttention):
    """The reference merging the heads with a view alone: each output row holds pieces of several heads."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj((attn_weights @ values).contiguous().view(b, num_tokens, self.d_out))


HEADS_MIXED = {"en": "changing one head's query weights changed another head's output",
               "zh": "改变一个头的 query 权重却改变了另一个头的输出"}
STATE_CHANGED = {"en": "forward changed the values of the module's own parameter W_query.weight",
                 "zh": "forward 修改了模块自己的参数 W_query.weight 的数值"}


def heads_check(attempt):
    results = run_exercise("multi_head_attention", {"MultiHeadAttention": attempt}, include_hidden=True)
    return next(result for result in results if result.id == "multi_head_attention.heads")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_forward_that_edits_its_own_weights_is_not_called_heads_mixed(lang, monkeypatch):
    text = printed("multi_head_attention", ScaleFoldedIntoTheQueryWeights, lang, monkeypatch)
    assert HEADS_MIXED[lang] not in text and STATE_CHANGED[lang] in text, text
    assert heads_check(ScaleFoldedIntoTheQueryWeights).misconception == "state_changed_by_forward"


def test_heads_mixed_by_the_merge_are_still_said_so():
    assert heads_check(MergedWithoutTheTranspose).cause.message_key == "multi_head_attention.heads_mixed"


def test_the_reference_keeps_its_heads_independent():
    assert heads_check(solutions.MultiHeadAttention).status == PASSED


class ScoresShiftedByItsCallCount(solutions.MultiHeadAttention):
    """The reference whose forward keeps a plain counter and lets it into the values: no parameter or buffer
    changes, yet every call gives another output."""

    def forward(self, x, attention_mask=None):
        self.calls = getattr(self, "calls", 0) + 1
        return super().forward(x, attention_mask) + 0.01 * self.calls


def test_outputs_that_change_call_to_call_are_not_called_heads_mixed():
    heads = heads_check(ScoresShiftedByItsCallCount)
    assert heads.cause.message_key == "multi_head_attention.calls_differ" and heads.misconception is None


# ---------------------------------------------------------------------------------------------
# f-mr-15: nan weights from a shift by the row minimum (-inf) are not "every key hidden"


def causal_weights_neg_inf_shifted_by_the_row_minimum(attn_scores):
    """The reference route with a softmax written by hand that shifts by the row minimum: -inf in every row with a
    future, so inf - inf is nan there, although the key each token may see is still visible."""
    num_tokens = attn_scores.shape[-1]
    masked = attn_scores.masked_fill(solutions.causal_mask(num_tokens).to(attn_scores.device), -torch.inf)
    shifted = masked - masked.min(dim=-1, keepdim=True).values
    exponentials = torch.exp(shifted)
    return exponentials / exponentials.sum(dim=-1, keepdim=True)


def causal_weights_neg_inf_hiding_the_diagonal(attn_scores):
    """The reference route with the mask's diagonal hidden too: token 0 sees no key at all."""
    num_tokens = attn_scores.shape[-1]
    hidden = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=0)
    return torch.softmax(attn_scores.masked_fill(hidden.to(attn_scores.device), -torch.inf), dim=-1)


ALL_HIDDEN = {"en": "every key of that row was hidden", "zh": "这一行的所有 key 都被遮住了"}
TOKEN_0_NAN = {"en": "the weights of token 0 are nan", "zh": "token 0 的权重是 nan"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nan_from_a_shift_by_minus_inf_states_the_symptom_only(lang, monkeypatch):
    attempt = (solutions.causal_weights_renormalised, causal_weights_neg_inf_shifted_by_the_row_minimum)
    text = printed("masking_routes", attempt, lang, monkeypatch, hint=1)
    assert TOKEN_0_NAN[lang] in text and ALL_HIDDEN[lang] not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_nan_from_a_row_the_learners_mask_hides_whole_still_says_so(lang, monkeypatch):
    attempt = (solutions.causal_weights_renormalised, causal_weights_neg_inf_hiding_the_diagonal)
    text = printed("masking_routes", attempt, lang, monkeypatch, hint=1)
    assert TOKEN_0_NAN[lang] in text and ALL_HIDDEN[lang] in text, text


# ---------------------------------------------------------------------------------------------
# f-2d-07: "the heads are 4, 4 feature(s) wide" read as four heads


def two_dimensional_wrapper_half_of_d_in(d_in, context_length, dropout):
    """The reference with d_out written as d_in // 2: one feature per head only where d_in is 2 or 3."""
    return solutions.MultiHeadAttentionWrapper(d_in, d_in // 2, context_length, dropout, num_heads=2)


HEADS_WIDE = {"en": "each of the 2 heads is 2 feature(s) wide, so the context vectors have 4 features, not 2",
              "zh": "2 个头每个都有 2 个特征，所以上下文向量有 4 个特征，而不是 2 个"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_heads_width_is_said_with_their_count(lang, monkeypatch):
    text = printed("two_dimensional_wrapper", two_dimensional_wrapper_half_of_d_in, lang, monkeypatch, hint=1)
    assert HEADS_WIDE[lang] in text, text


def test_heads_as_wide_as_the_whole_output_are_still_named():
    results = run_exercise("two_dimensional_wrapper",
                           {"two_dimensional_wrapper": multihead_mutants.two_dimensional_wrapper_d_out_2},
                           include_hidden=True)
    assert {result.misconception for result in results} == {"d_out_is_total"}


# ---------------------------------------------------------------------------------------------
# f-mr-13: a mask of the notebook's fixed size, made on the CPU. The device check runs the route on the CPU first
# (the probe's own rule), where the fixed size raises as it does on the other sizes' check: it fails for the reason the
# row shows, and the CPU mask is never reached. A route whose only mistake is the CPU mask fails there alone.

NUM_TOKENS_OF_THE_NOTES = 6


def causal_weights_neg_inf_of_the_notes_size(attn_scores):
    """The reference route with the mask built from the notebook's num_tokens (6), left on the CPU."""
    masked = attn_scores.masked_fill(solutions.causal_mask(NUM_TOKENS_OF_THE_NOTES), -torch.inf)
    return torch.softmax(masked, dim=-1)


def causal_weights_neg_inf_mask_on_the_cpu(attn_scores):
    """The reference route with its mask left on the CPU."""
    num_tokens = attn_scores.shape[-1]
    return torch.softmax(attn_scores.masked_fill(solutions.causal_mask(num_tokens), -torch.inf), dim=-1)


SAME_REASON = {"en": "1 more check fails for the same reason", "zh": "另有 1 项检查因同样的原因未通过"}


def route_results(neg_inf):
    namespace = {"causal_weights_renormalised": solutions.causal_weights_renormalised,
                 "causal_weights_neg_inf": neg_inf, "causal_mask": solutions.causal_mask}
    return {result.id: result for result in run_exercise("masking_routes", namespace, include_hidden=False)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fixed_size_mask_fails_the_device_check_for_the_same_reason(lang, monkeypatch):
    text = printed("masking_routes", (solutions.causal_weights_renormalised, causal_weights_neg_inf_of_the_notes_size),
                   lang, monkeypatch, hint=1)
    failing = [line for line in text.splitlines() if line.startswith("  ✘")]
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    results = route_results(causal_weights_neg_inf_of_the_notes_size)
    sizes = [dict(result.cause.fields)["detail"] for result in results.values()
             if result.status != PASSED and "neg_inf" in result.id]
    assert len(sizes) == 2 and all("(6)" in detail for detail in sizes), sizes  # the code's own 6, on both


def test_a_mask_on_the_cpu_alone_fails_the_device_check_alone():
    results = route_results(causal_weights_neg_inf_mask_on_the_cpu)
    failing = {check_id: result.misconception for check_id, result in results.items() if result.status != PASSED}
    assert list(failing.values()) == ["function_tensor_on_cpu"], failing


# ---------------------------------------------------------------------------------------------
# l-mha-10's kind (issue 58): the scores multiplied by the root; the hint and the change spoke of "the order in which
# its power and its division apply", a precedence slip such code does not make.


class ScoresTimesTheRoot(solutions.CausalAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = (queries @ keys.transpose(1, 2)).masked_fill(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(attn_scores * keys.shape[-1] ** 0.5, dim=-1)) @ values


SCALE_HINT = {"en": "the operation that scales your scores, the expression it uses and the order in which that "
                    "expression's parts apply decide the number",
              "zh": "缩放你的分数的运算、它用到的表达式，以及表达式各部分的运算顺序，决定了这个数"}
SCALE_CHANGE = {"en": "scale the scores by a division by the square root of the size of each key, the root taken "
                      "before the division",
                "zh": "用除法缩放分数：除以每个 key 的大小的平方根，先开平方再做除法"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_product_by_the_root_is_not_told_of_the_order_of_its_power_and_its_division(lang, monkeypatch):
    text = printed("causal_attention", ScoresTimesTheRoot, lang, monkeypatch, hint=3)
    assert SCALE_NAME[lang] in text and SCALE_HINT[lang] in text and SCALE_CHANGE[lang] in text, text
    assert "its power and its division" not in text and "power applies before the division" not in text, text
    assert "其中乘方和除法的运算顺序" not in text and "确保乘方在除法之前" not in text, text
    assert names("causal_attention", {"CausalAttention": ScoresTimesTheRoot}, "causal_attention.notes") == (
        "scale_wrong_value")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_reference_and_the_other_scale_mistakes_get_no_wrong_value_hint(lang, monkeypatch):
    assert SCALE_HINT[lang] not in printed("causal_attention", solutions.CausalAttention, lang, monkeypatch, hint=3)
    missing = printed("causal_attention", causal_mutants.CausalAttention_missing_scaling, lang, monkeypatch, hint=3)
    assert SCALE_HINT[lang] not in missing and SCALE_CHANGE[lang] not in missing


# ---------------------------------------------------------------------------------------------
# scores squeezed "to be safe": one token's (1, 1) scores become a 0-d tensor, whose axes torch ranges as a 1-D one's


def context_vectors_squeezed_scores(inputs):
    scores = (inputs @ inputs.T).squeeze()
    return torch.softmax(scores, dim=1) @ inputs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_axis_past_a_zero_d_tensor_is_not_said_of_a_one_d_tensor(lang, monkeypatch):
    """torch's "expected to be in range of [-1, 0]" is a 0-d tensor's range as much as a 1-D one's: "axis 1 of a 1-D
    tensor" was false of the one-token case's 0-d scores (12w's wy-cv-10)."""
    text = printed("context_vectors", context_vectors_squeezed_scores, lang, monkeypatch, hint=1)
    said = {"en": "asks for axis 1 of a tensor with one axis or none (1-D or 0-D)",
            "zh": "要访问第 1 个维度，但这个张量最多只有一个维度（1 维或 0 维）"}[lang]
    assert said in text and {"en": "1-D tensor", "zh": "一个 1 维张量"}[lang] not in text, text


def softmax_stable_one_at_the_maximum(x, dim=-1):
    shifted = x - x.amax(dim=dim, keepdim=True)
    # exp(0) is 1: write it down instead of computing it
    exps = torch.where(shifted == 0, torch.ones_like(shifted), torch.exp(shifted))
    return exps / exps.sum(dim=dim, keepdim=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_constant_put_in_place_of_a_computed_value_is_among_the_ways_the_gradient_is_said_cut(lang, monkeypatch):
    """On tied maxima every exponential is the constant 1: autograd recorded every op, and the constant is what
    carries no gradient. The symptom and the hint say so among their examples (12w's wy-ss-08 read "NumPy, a
    detached result, a block with gradients switched off" as false of its code)."""
    text = printed("softmax_stable", softmax_stable_one_at_the_maximum, lang, monkeypatch)
    said = {"en": "a constant put in place of a value computed from the input",
            "zh": "用常数代替了由输入算出的值"}[lang]
    assert said in text, text
