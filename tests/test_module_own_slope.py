"""A module's wrong gradient is said to come from a step of forward that autograd does not record only where the
learner's run proves it (issue 58): where the gradient is not the slope of the module's own outputs
(probing.module_own_slopes). A forward that clamps its scores at a value the probes' inputs reach has gradients
unlike the notes', yet autograd recorded every step: it is told so, and no mistake is named. A forward that computes
a step from a detached copy is still named.

Each attempt is written here in a learner's style, from the notebooks' instructions; the clamp sits just below the
largest score of the properties probe (its output stays right, its gradient does not: the check fails)."""

import torch
from torch import nn

from autograder.checking.judging import module_gradient_problem
from autograder.checking.probing import module_gradients
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks

CUT_SENTENCE = {"en": "where autograd does not record", "zh": "autograd 不记录的地方"}
OWN_SLOPE = {"en": "autograd followed your forward", "zh": "autograd 跟踪了你的 forward"}


def properties(exercise_id, name, student, lang="en"):
    """The properties check of check(...) (hidden cases included), as a learner reads it."""
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, {name: student}, lang,
                         include_hidden=True, seed=in_notebook.DEFAULT_SEED, diagnose=True)
    return next(result for result in results if result.id == f"{exercise_id}.properties")


class V1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))


class V1ClampedScores(V1):  # "keep the scores bounded": a cap the probe's largest score (about 2.2544) just passes
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = (queries @ keys.T).clamp(max=2.2543)
        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values


class V1NormaliserDetached(V1):  # the softmax's sum taken from a detached copy: a step autograd does not record
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        exps = (queries @ keys.T / keys.shape[-1] ** 0.5).exp()
        return exps / exps.detach().sum(dim=-1, keepdim=True) @ values


def test_a_clamping_self_attention_v1_is_not_said_to_compute_outside_autograd():
    for lang in ("en", "zh"):
        result = properties("self_attention_v1", "SelfAttention_v1", V1ClampedScores, lang)
        assert result.status != "passed"  # its gradient is not the notes': it loses the check's points
        assert result.misconception != "forward_step_detached"
        assert CUT_SENTENCE[lang] not in result.message
        assert OWN_SLOPE[lang] in result.message


def test_a_self_attention_v1_with_a_detached_normaliser_is_still_named():
    for lang in ("en", "zh"):
        result = properties("self_attention_v1", "SelfAttention_v1", V1NormaliserDetached, lang)
        assert result.misconception == "forward_step_detached"
        assert CUT_SENTENCE[lang] in result.message


class ClampedCausal(nn.Module):
    """CausalAttention as the notes build it, whose masked scores are capped from above "to keep exp() finite"."""

    CAP = 0.0

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        _, num_tokens, _ = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).clamp(max=self.CAP)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)) @ values


class CausalClampedScores(ClampedCausal):
    CAP = 1.2322  # the probe's largest visible score is about 1.2323


def test_a_clamping_causal_attention_is_not_said_to_compute_outside_autograd():
    for lang in ("en", "zh"):
        result = properties("causal_attention", "CausalAttention", CausalClampedScores, lang)
        assert result.status != "passed"
        assert result.misconception != "forward_step_detached"
        assert CUT_SENTENCE[lang] not in result.message
        assert OWN_SLOPE[lang] in result.message


class CausalNormaliserDetached(ClampedCausal):  # each row's sum taken from a detached copy of the weights
    CAP = float("inf")

    def forward(self, x):
        _, num_tokens, _ = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        exps = (scores / keys.shape[-1] ** 0.5).exp()
        return self.dropout(exps / exps.detach().sum(dim=-1, keepdim=True)) @ values


def test_a_causal_attention_with_a_detached_normaliser_is_still_named():
    for lang in ("en", "zh"):
        result = properties("causal_attention", "CausalAttention", CausalNormaliserDetached, lang)
        assert result.misconception == "forward_step_detached"
        assert CUT_SENTENCE[lang] in result.message


def reference_of(module, x, mix):
    """What variants.reference_gradients gives, taken here from a right module with the same weights."""
    backward = module_gradients(module, x, module, mix)
    return {"output": backward["output"], "input": backward["input"], "parameters": backward["parameters"]}


class V1CappedAt(V1):
    def __init__(self, d_in, d_out, cap):
        super().__init__(d_in, d_out)
        self.cap = cap

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = (queries @ keys.T).clamp(max=self.cap)
        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values


def test_the_slopes_are_read_on_the_modules_own_outputs():
    torch.manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64)
    mix = lambda output: torch.linspace(-1.0, 1.0, output.numel(), dtype=output.dtype).reshape(output.shape)  # noqa: E731
    right = V1CappedAt(3, 2, float("inf")).double()
    with torch.no_grad():
        largest = (x @ right.W_query @ (x @ right.W_key).T).flatten().sort().values
    clamped = V1CappedAt(3, 2, float(largest[-3] + largest[-4]) / 2).double()  # flat past it, no kink at a score
    detached = V1NormaliserDetached(3, 2).double()
    clamped.load_state_dict(right.state_dict())
    detached.load_state_dict(right.state_dict())
    reference = reference_of(right, x, mix)
    got = module_gradients(clamped, x, clamped, mix)
    assert got["input_own_slope"] is True and all(got["own_slopes"].values())
    verdict = module_gradient_problem(got, reference)
    assert verdict is not None and not verdict.passed and verdict.misconception is None
    assert verdict.message_key in ("module.input_gradient_own_slope", "module.gradient_own_slope")
    cut = module_gradients(detached, x, detached, mix)
    assert cut["input_own_slope"] is False
    verdict = module_gradient_problem(cut, reference)
    assert verdict is not None and verdict.misconception == "forward_step_detached"


def test_a_wrong_gradient_names_a_cut_only_where_some_slope_proves_it():
    expected = {"input": torch.ones(2), "parameters": {"W": torch.ones(2)}}
    for slope in (True, None):
        backward = {"input": torch.zeros(2), "parameters": {"W": torch.zeros(2)}, "state": {"W": torch.ones(2)},
                    "own_slopes": {} if slope is None else {"W": slope}}
        if slope is not None:
            backward["input_own_slope"] = slope
        verdict = module_gradient_problem(backward, expected)
        assert verdict.misconception is None and verdict.message_key == "module.input_gradient_own_slope"
    proven = {"input": torch.zeros(2), "parameters": {}, "state": {"W": torch.ones(2)}, "input_own_slope": True,
              "own_slopes": {"W": False}}  # the input's is its own slope; W's gradient proves the cut
    verdict = module_gradient_problem(proven, expected)
    assert verdict.misconception == "forward_step_detached" and verdict.message_key == "module.no_gradient"
    assert verdict.fields == {"name": "W"}
    hostile = {"input": torch.zeros(2), "parameters": {}, "state": {}, "input_own_slope": 0, "own_slopes": "False"}
    assert module_gradient_problem(hostile, expected).misconception is None  # only False itself proves anything
