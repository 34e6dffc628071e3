"""Every sentence true of the code it speaks to (issue 58, item 5): the hints a learner reads after a failing check
say nothing of their code that is not so.

Each attempt below is written here in a learner's style, from the notebooks' instructions: code that raises before
a step two of the notes' steps share on the notes' case, settings a module is built with, a split whose transpose
is missing, a correct line beside the one that raised, swapped arguments. Each test says which sentence it keeps
out and fails without the fix that keeps it out.
"""

import contextlib
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.departure import find_departure, step
from autograder.checking.diagnosis import symptom
from autograder.checking.tensor_trace import TracedTensor
from autograder.course.shared.inputs import NOTES_INPUTS
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


def printed(exercise_id, *attempt, hint=2):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, *attempt, hint=hint)
    return output.getvalue()


def departure_text(text):
    return "\n".join(line for line in text.splitlines() if "where it departs" in line)


# ---------------------------------------------------------------------------------------------
# 1. coincident steps: a tensor that holds two of the notes' steps proves only the earlier one


class PaddingNotBroadcast(solutions.MultiHeadAttention):
    """The padding mask used as it came, (b, num_tokens), against scores of four axes: it raises there, before any
    scaling; on the notes' heads of size 1 its scores are the scaled scores too."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        if attention_mask is not None:
            scores = scores.masked_fill(~attention_mask.bool(), -1e9)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(out)


def test_code_that_raises_before_scaling_is_not_said_to_reproduce_the_scaled_scores():
    """Nor that none of its tensors held them: its scores hold their numbers on heads of size 1 (12t's tz-ma-01 was
    told "none of the tensors your code made holds the notes' keys split into heads" of keys that did)."""
    text = departure_text(printed("padding_mask", PaddingNotBroadcast))
    assert "your code reproduces the notes' queries, keys, values, queries split into heads, keys split into heads, " \
        "attention scores; on this case a tensor of yours has the numbers of the notes' scaled attention scores too, " \
        "though they prove nothing" in text, text
    assert "scaled attention scores; then" not in text and "before any of its tensors held" not in text, text


class KeysTurnedOnTheWrongAxes(solutions.MultiHeadAttention):
    """12t's tz-ma-01: the keys' heads and head_dim swapped (transpose(1, 3)) before the product."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        scores = (q @ k.transpose(1, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))


def test_keys_turned_on_the_wrong_axes_are_said_as_the_code_holds_and_the_product_read_them():
    """Its split keys hold the notes' (never "none of your tensors holds them"), its split queries keep the notes'
    shape (matmul's flattened view of them is not theirs), and the operand the product read is the keys turned."""
    text = departure_text(printed("multi_head_attention", KeysTurnedOnTheWrongAxes))
    assert text, text
    assert "none of the tensors your code made on this case holds the notes' keys split into heads" not in text, text
    assert "but in shape (4, 6, 1)" not in text, text
    assert "your keys with their axes in another order (shape (4, 5, 4) as the operation read them" in text or \
        "your keys split into heads with their axes in another order" in text or "keys (shape" not in text, text


class WrapperRepeatingHeadZero(torch.nn.Module):
    """12t's tz-mw-07: head 0's output placed side by side with itself; head 1 is built, never run."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = torch.nn.ModuleList([solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                          for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([self.heads[0](x)] * len(self.heads), dim=-1)


def test_a_head_only_the_probe_runs_is_not_said_reproduced():
    """The check calls each head itself after the wrapper's forward (to compare the output with the heads' outputs
    side by side): that run of head 1 is the probe's, not the forward diagnosed."""
    text = departure_text(printed("mha_wrapper", WrapperRepeatingHeadZero))
    assert "your code reproduces the notes' context vectors of head 0 (heads counted from 0, as in the notes), then " \
        "departs from them at the context vectors of head 1" in text, text


def test_a_tensor_that_holds_an_earlier_step_too_proves_only_that_one():
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    steps = [step("scores", scores), step("scaled_scores", scores / 1.0), step("weights", scores.softmax(-1))]
    traced = [TracedTensor("mm", scores.double(), ()), TracedTensor("mul", scores.double() * 3, (0,))]
    departure = find_departure(steps, traced, None)
    assert departure.matched == ("scores",) and departure.step == "scaled_scores", departure


def test_a_tensor_of_one_repeated_number_proves_no_step():
    """exp(x + max) underflows to zeros on two equal large negative scores: the notes' shifted scores are zeros
    too. Zeros are made many ways: the step is not reproduced on that evidence."""
    x = torch.tensor([-800.0, -800.0])
    shifted = x - x.max()
    steps = [step("maximum", x.max().reshape(1), ordered=True), step("shifted", shifted, ordered=True),
             step("exponentials", shifted.exp(), ordered=True)]
    traced = [TracedTensor("input", x.double(), ()), TracedTensor("max", x.max().reshape(1).double(), (0,)),
              TracedTensor("add", (x + x.max()).double(), (0, 1)), TracedTensor("exp", (x + x.max()).exp().double(),
                                                                                (2,))]
    departure = find_departure(steps, traced, None)
    assert departure.matched == ("maximum",) and departure.step == "shifted", departure
    # A function that returned: zeros are still no proof of the shifted scores, and no reason to pass over them.
    returned = find_departure(steps, traced, (x + x.max()).exp())
    assert returned.matched == ("maximum",) and returned.step == "shifted", returned


def test_a_function_returning_a_step_that_coincides_with_a_later_one_is_told_the_earlier():
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    steps = [step("scores", scores), step("scaled_scores", scores / 1.0), step("weights", scores.softmax(-1))]
    traced = [TracedTensor("mm", scores.double(), ())]
    assert find_departure(steps, traced, scores).returned == "scores"


def test_an_output_that_holds_the_last_step_too_is_not_said_to_return_an_earlier_one():
    """On one token the context vector is the value vector: an output holding both (context vectors cast to another
    dtype, failing for that) does not prove the function returns its values."""
    values = torch.tensor([[0.5, -1.0]])
    steps = [step("values", values), step("scores", torch.tensor([[2.0]])), step("weights", torch.tensor([[1.0]])),
             step("context_vectors", values.clone())]
    traced = [TracedTensor("mm", values.double(), ())]
    assert find_departure(steps, traced, values).returned is None


def test_a_last_step_held_only_where_it_coincides_with_an_earlier_one_is_not_said_to_be_missing():
    """One token, the whole computation right, the output cast to float32 at the end: the tensor holding the context
    vectors holds the values too. Rung 2 must not say that no tensor of the learner's holds the context vectors."""
    values = torch.tensor([[0.5, -1.0]])
    scores = torch.tensor([[2.0]])
    steps = [step("values", values), step("scores", scores), step("weights", torch.tensor([[1.0]])),
             step("context_vectors", values.clone())]
    traced = [TracedTensor("linear", values.double(), ()), TracedTensor("mm", scores.double(), ()),
              TracedTensor("softmax", torch.ones(1, 1, dtype=torch.float64), (1,)),
              TracedTensor("mm", values.double(), (2, 0))]
    departure = find_departure(steps, traced, values.float())
    assert departure.step is None, departure


# ---------------------------------------------------------------------------------------------
# 5. wording that presumes what the code does not do


def softmax_exponentials_unrecorded(x):
    """The sum of the exponentials taken from a copy autograd does not follow: the values are right."""
    exps = torch.exp(x)
    frozen = exps.clone().detach()
    return exps / frozen.sum(0)


class ValuesFromKeys(solutions.SelfAttention_v1):
    """SelfAttention_v1 (raw parameters, no layers) with the values taken through the keys' matrix."""

    def forward(self, x):
        queries, keys = x @ self.W_query, x @ self.W_key
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ keys


def copy_as_stored(sa_v1, sa_v2):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight)
        sa_v1.W_key.copy_(sa_v2.W_key.weight)
        sa_v1.W_value.copy_(sa_v2.W_value.weight)
    return sa_v1


class ContextDividedByRoot(solutions.SelfAttention_v2):
    """The square root applied to the context vectors at the end: the weights sum to 1."""

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        weights = torch.softmax(queries @ keys.T, dim=-1)
        return weights @ values / keys.shape[-1] ** 0.5


def stable_sum_without_keepdim(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim)


@pytest.mark.parametrize(("exercise_id", "attempt", "false"), [
    ("softmax_naive", softmax_exponentials_unrecorded, "for show"),
    ("self_attention_v1", ValuesFromKeys, "layer itself"),
    ("transfer_weights", copy_as_stored, "reshaping"),
    ("self_attention_v2", ContextDividedByRoot, "weights after"),
    ("self_attention_v2", ContextDividedByRoot, "dividing the weights"),
    ("softmax_stable", stable_sum_without_keepdim, "maximum and sum"),
])
def test_no_rung_presumes_a_call_or_a_tensor_the_code_does_not_have(exercise_id, attempt, false):
    texts = [printed(exercise_id, attempt, hint=rung) for rung in (1, 2, 3)]
    assert any("✘" in text for text in texts)
    assert all(false not in text for text in texts), texts


# ---------------------------------------------------------------------------------------------
# 4. a line is blamed only for what it raised


class WeightsMadeSingle(solutions.MultiHeadAttention):
    """The weights cast to float32 after the softmax: on float64 inputs the product with the values raises, on a
    line whose transpose (of the product's result) is right."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1).float())
        out = (weights @ v).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(out)


def test_a_right_transpose_on_a_line_that_raised_for_another_reason_is_not_blamed():
    text = printed("multi_head_attention", WeightsMadeSingle, hint=2)
    assert "float" in text.lower() or "double" in text.lower(), text
    assert "swaps axes 1 and 2" not in text, text


@pytest.mark.parametrize(("line", "message", "blamed"), [
    ("scores = queries @ keys.transpose(1, 2)", "Expected size for first two dimensions of batch2 tensor to be: "
     "[4, 2] but got: [4, 6].", True),
    ("scores = torch.matmul(q, k.transpose(1, 2))", "Expected size for first two dimensions of batch2 tensor to be: "
     "[4, 2] but got: [4, 6].", True),
    ("ctx = (w @ v).transpose(1, 2).contiguous()", "expected m1 and m2 to have the same dtype, but got: float != "
     "double", False),
    ("ctx = (w @ v).transpose(1, 2).contiguous()", "Expected size for first two dimensions of batch2 tensor to be: "
     "[4, 6] but got: [4, 5].", False),
])
def test_the_transpose_rule_needs_a_shape_error_of_a_product_of_the_transpose(line, message, blamed):
    verdict = symptom({"type": "RuntimeError", "message": message, "line": line})
    assert (verdict.message_key == "error.transpose_4d") is blamed, verdict


# ---------------------------------------------------------------------------------------------
# 2. a departure is the first thing that differs


def to_torch_heads_from_the_width(mha):
    """Every weight copied exactly; the module built with one head per feature."""
    converted = nn.MultiheadAttention(mha.d_out, mha.d_out, dropout=mha.dropout.p, batch_first=True)
    converted = converted.to(mha.W_query.weight.dtype)
    with torch.no_grad():
        converted.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        biases = [layer.bias if layer.bias is not None else torch.zeros(mha.d_out, dtype=layer.weight.dtype)
                  for layer in (mha.W_query, mha.W_key, mha.W_value)]
        converted.in_proj_bias.copy_(torch.cat(biases))
        converted.out_proj.weight.copy_(mha.out_proj.weight)
        converted.out_proj.bias.copy_(mha.out_proj.bias)
    return converted


def test_a_module_built_with_a_wrong_setting_is_not_said_to_depart_at_its_output_projection():
    text = printed("torch_equivalence", to_torch_heads_from_the_width, hint=2)
    assert "num_heads" in text, text
    assert "departs from them at the output projection" not in text, text


def split_heads_swapping_the_last_two(x, num_heads):
    """The notes' view into heads, then the wrong pair of axes swapped: tokens stay second."""
    batch, tokens, width = x.shape
    per_head = width // num_heads
    return x.view(batch, tokens, num_heads, per_head).transpose(-1, -2)


def test_the_notes_view_into_heads_is_recognised_when_only_the_transpose_is_wrong():
    text = departure_text(printed("split_heads", split_heads_swapping_the_last_two))
    assert "at their first step" not in text, text
    assert "reproduces the notes' input viewed as (batch, tokens, heads, head size)" in text, text
    assert "input split into heads" in text, text


# ---------------------------------------------------------------------------------------------
# 3. a name needs proof: swapped arguments are not "a parameter unused", and their dropout is told by its rate


class WrapperArgumentsCrossed(nn.Module):
    """The heads built with the rate where the bias flag goes and the flag where the rate goes."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([solutions.CausalAttention(d_in, d_out, context_length, dropout=qkv_bias,
                                                              qkv_bias=dropout) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def test_crossed_constructor_arguments_are_not_named_by_their_effects():
    """With qkv_bias on, the heads drop at rate 1 while training: no gradient reaches W_query, which proves no unused
    parameter; the dropout check says which rate the layers hold. (With qkv_bias off their rate is 0, as where the
    rate is never passed on: both are named "dropout that drops nothing while training", true of both; the rung-3
    advice says each condition on the way to the dropout, its rate among them.)"""
    texts = [printed("mha_wrapper", WrapperArgumentsCrossed, hint=rung) for rung in (2, 3)]
    for text in texts:
        assert "output does not depend on" not in text and "does not depend on it at all" not in text, text
        assert "never reaches the attention weights" not in text and "dropout never applied" not in text, text
    assert "with the rate the module is built with" in texts[1], texts[1]
    assert "dropout layer with rate 1" in texts[0] and "dropout layer with rate 0" in texts[0], texts[0]


class SpareDropoutLayer(solutions.MultiHeadAttention):
    """The notes' module with one more dropout layer it never calls: its forward is right, so nothing fails."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, num_heads, qkv_bias)
        self.spare = nn.Dropout(0.3)


def test_a_layer_at_another_rate_fails_nothing_that_passes():
    text = printed("multi_head_attention", SpareDropoutLayer, hint=1)
    assert "✘" not in text and "dropout layer with rate" not in text, text


# ---------------------------------------------------------------------------------------------
# 6. how a tensor departs (autograder.checking.step_relations): each sentence checked against the learner's own numbers


def test_each_how_sentence_is_true_of_the_code_that_makes_it():
    """The rung-2 sentence of each attempt of tests/test_departure_how.py, as check(...) prints it, and the fact it
    states recomputed here from the attempt's own tensors on the notes' case."""
    from tests import test_departure_how as how

    inputs = torch.tensor(NOTES_INPUTS)
    scores = solutions.attention_scores(inputs)
    # Tokens in reverse order: their context vectors are the notes' with the rows reversed.
    text = departure_text(printed("context_vectors", how.context_of_tokens_in_reverse))
    assert "its 6 slices along dimension 0 (of shape (6, 3)) in reverse order" in text, text
    assert torch.allclose(how.context_of_tokens_in_reverse(inputs), solutions.context_vectors(inputs).flip(0))
    # Weights normalised over the whole tensor: all entries sum to 1, each row does not.
    text = departure_text(printed("masking_routes", how.ROUTES[0], how.neg_inf_normalised_over_everything))
    assert "sums to 1 over all its entries together" in text, text
    weights = how.neg_inf_normalised_over_everything(scores)
    assert abs(float(weights.sum()) - 1) < 1e-6 and not torch.allclose(weights.sum(-1), torch.ones(6))
    # The masked scores halved before the softmax: their weights are the softmax of half the notes' masked scores.
    text = departure_text(printed("masking_routes", how.ROUTES[0], how.neg_inf_halved))
    assert "from the notes' masked attention scores is the notes' masked attention scores divided by 2" in text, text
    masked = scores.masked_fill(solutions.causal_mask(6), -torch.inf)
    assert torch.allclose(how.neg_inf_halved(scores), torch.softmax(masked / 2, dim=-1))
    # A mean where the notes sum: the result is the notes' times the 6 entries each sum adds up.
    text = departure_text(printed("softmax_naive", how.softmax_averaged))
    assert "times 6, which is the number of entries each of the notes' sums adds up" in text, text
    row = scores[1]
    assert torch.allclose(how.softmax_averaged(row), 6 * torch.softmax(row, dim=0))


def neg_inf_without_the_softmax(attn_scores):  # masks the scores and stops there
    hidden = attn_scores.clone()
    hidden[torch.ones_like(attn_scores, dtype=torch.bool).triu(1)] = float("-inf")
    return hidden


def test_masked_scores_returned_are_not_read_as_weights(monkeypatch):
    """Masked scores hold -inf above the diagonal: rung 1 says the result holds infinite entries, not that a token
    "gives weight" to a later one (it gives no weight at all: these are no weights)."""
    attempt = (solutions.causal_weights_renormalised, neg_inf_without_the_softmax)
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    text = printed("masking_routes", *attempt, hint=1)
    assert "gives weight to token" not in text, text
    assert "the result holds 15 infinite entries, the first in the row of token 0" in text, text
    monkeypatch.setenv("ATTNKIT_LANG", "zh")
    text = printed("masking_routes", *attempt, hint=1)
    assert "结果中有 15 个无穷大的元素" in text and "权重：对角线上方" not in text, text
