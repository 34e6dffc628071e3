"""Every sentence of the ladder is true of the learner's code (issue 58): shapes and axes in the case's own layout,
the phase of an error from where it was raised, advice that moves the half that departs, no grader-internal names."""

import pathlib
import re

import numpy as np
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.departure import STEPS, departure_line
from autograder.checking.tensor_trace import traced_probe
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from autograder.running.runner import cases_for
from tests.test_departure import SEED, departure_of, public_check

# ------------------------------------------------------------------ synthetic learner attempts (written for this file)


class WeightsOverEverything(nn.Module):
    """Normalises the scores over the whole (num_tokens, num_tokens) matrix at once."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = queries @ keys.T / keys.shape[-1] ** 0.5
        weights = torch.exp(scores) / torch.exp(scores).sum()
        return weights @ values


class ContextFromTheInputs(nn.Module):
    """Weighs the inputs themselves, not the values: a (num_tokens, d_in) result."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys = self.W_query(x), self.W_key(x)
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ x


def lines(departure):
    return {lang: departure_line(departure, lang, catalog.MESSAGES) for lang in ("en", "zh")}


def test_axes_of_a_departure_are_counted_in_the_learners_two_dimensional_weights():
    departure = departure_of("self_attention_v1", WeightsOverEverything)
    assert departure.step == "weights" and departure.facts
    text = lines(departure)
    assert "dimension 1" in text["en"] and "dimension 3" not in text["en"], text
    assert "第 1 个维度" in text["zh"] and "第 3 个维度" not in text["zh"], text


def test_the_notes_steps_are_declared_in_the_cases_own_layout():
    """Rung 1 shows the expected output's shape; every step rung 2 speaks of is in that layout (no batch or head axis
    the case does not have): the last step has the output's shape, no step has more axes than it."""
    for exercise_id, route in (("self_attention_v1", solutions.SelfAttention_v1),
                               ("self_attention_v2", solutions.SelfAttention_v2),
                               ("causal_attention", solutions.CausalAttention)):
        check = public_check(exercise_id)
        exercise = next(e for e in in_notebook.EXERCISES if e.id == exercise_id)
        for case in cases_for(check, SEED):
            record, _traced = traced_probe(resolve(in_notebook._runnable(check, SEED).probe),
                                           exercise.namespace((route,)), case)
            expectations = check.expect(record, case)
            steps, output = expectations[STEPS], expectations["output"]
            assert tuple(steps[-1][1][0].shape) == tuple(output.shape), (exercise_id, steps[-1][0])
            for step_id, values, *_flags in steps:
                assert all(value.dim() <= output.dim() for value in values), (exercise_id, step_id)



def softmax_through_numpy(x):  # the call itself raises on an input of a graph
    exps = np.exp(x.numpy())
    return torch.as_tensor(exps / exps.sum(axis=0))


def softmax_dividing_in_place(x):  # the call runs; backward() raises (exp's saved output was edited)
    exps = torch.exp(x)
    exps /= exps.sum(dim=0)
    return exps


def gradient_message(function, lang):
    results = run_checks(in_notebook.ReferenceExpectations(), "softmax_naive", {"softmax_naive": function}, lang,
                         include_hidden=False, seed=SEED, diagnose=True)
    return next(result.message for result in results if result.id.startswith("softmax_naive.from_scratch"))


def test_an_error_of_the_call_itself_is_not_said_to_be_backwards():
    for lang in ("en", "zh"):
        message = gradient_message(softmax_through_numpy, lang)
        assert "RuntimeError" in message and "backward()" not in message, message
        assert "backward()" in gradient_message(softmax_dividing_in_place, lang)


def softmax_summing_the_last_axis(x, dim=-1):  # the maximum along dim (right), the sum along the last axis
    shifted = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return shifted / shifted.sum(dim=-1, keepdim=True)


def test_the_advice_for_disagreeing_reductions_never_moves_the_half_that_was_right():
    for lang, wrong in (("en", "maximum along the same dimension as the sum"), ("zh", "沿求和的那个维度取最大值")):
        results = run_checks(in_notebook.ReferenceExpectations(), "softmax_stable",
                             {"softmax_stable": softmax_summing_the_last_axis}, lang, include_hidden=False,
                             seed=SEED, diagnose=True)
        named = [result for result in results if result.misconception == "max_and_sum_axes_differ"]
        assert named, [(result.id, result.misconception) for result in results]
        for result in named:
            text = " ".join(result.ladder(3))
            assert wrong not in text and "dim" in result.change, text


def grader_class_names():
    """Every class the grader defines whose name is no word of the notebooks (CamelCase, two capitals or more)."""
    notebook_names = set(re.findall(r"^class (\w+)", "\n".join(
        path.read_text(encoding="utf-8") for path in pathlib.Path("solutions").glob("*.py")), re.MULTILINE))
    names = {name for path in pathlib.Path("autograder").rglob("*.py")
             for name in re.findall(r"^\s*class (\w+)", path.read_text(encoding="utf-8"), re.MULTILINE)
             if len(re.findall("[A-Z]", name)) >= 2}
    return names - notebook_names


def load_returning_v2(sa_v1, sa_v2):  # copies, then hands back the wrong module
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight.T)
    return sa_v2


def load_through_state_dict(sa_v1, sa_v2):  # v2's (d_out, d_in) weights loaded as they are into v1's
    sa_v1.load_state_dict({name: getattr(sa_v2, name).weight for name in ("W_query", "W_key", "W_value")})
    return sa_v1


def test_no_learner_facing_text_names_a_class_of_the_grader():
    internal = grader_class_names()
    assert {"LinearProjections", "ParameterProjections"} <= internal
    for lang in ("en", "zh"):
        for load in (load_returning_v2, load_through_state_dict):
            results = run_checks(in_notebook.ReferenceExpectations(), "transfer_weights",
                                 {"load_v2_weights_into_v1": load}, lang, include_hidden=False, seed=SEED,
                                 diagnose=True)
            assert any(result.status != "passed" for result in results)
            for result in results:
                text = " ".join([result.message, *result.ladder(3)])
                assert not set(re.findall(r"\w+", text)) & internal, (load.__name__, text)


class ValuesFromTheQueryWeights(nn.Module):
    """Creates W_value as the notes do, then computes the values with W_query."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys = x @ self.W_query, x @ self.W_key
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ (x @ self.W_query)


def test_a_parameter_the_notes_require_is_never_advised_away():
    for lang, away in (("en", "does not need"), ("zh", "用不到的参数")):
        results = run_checks(in_notebook.ReferenceExpectations(), "self_attention_v1",
                             {"SelfAttention_v1": ValuesFromTheQueryWeights}, lang, include_hidden=False, seed=SEED,
                             diagnose=True)
        named = [result for result in results if result.misconception == "parameter_unused"]
        assert named, [(result.id, result.misconception) for result in results]
        assert all(away not in " ".join(result.ladder(3)) for result in named)


def softmax_unkept_maximum(x, dim=-1):  # the maximum reduced without keeping its axis: raises where it cannot line up
    largest = x.max(dim=dim).values
    exps = torch.exp(x - largest)
    return exps / exps.sum(dim=dim, keepdim=True)


def test_errors_the_named_mistake_reproduces_are_folded_under_it_not_called_unexplained():
    for lang, unexplained in (("en", "nothing shows"), ("zh", "没有证据表明")):
        results = run_checks(in_notebook.ReferenceExpectations(), "softmax_stable",
                             {"softmax_stable": softmax_unkept_maximum}, lang, include_hidden=False, seed=SEED,
                             diagnose=True)
        failing = [result for result in results if result.status != "passed"]
        assert any(result.status == "error" for result in failing)
        # Its own spelling raises the same error, numbers included, on each case that raised: the mistake is proven.
        assert all(result.misconception == "missing_keepdim" for result in failing), [
            (result.id, result.status, result.misconception) for result in failing]
        assert not any(unexplained in " ".join([result.message, *result.ladder(3)]) for result in results)


def test_a_raise_on_a_matrix_costs_the_value_checks_not_the_from_scratch_rule():
    """The rule runs on matrices too (a torch softmax called there must lose it), but code that raises there without
    calling one keeps it, public and hidden: its keepdim mistake already costs the checks of those values."""
    for include_hidden in (False, True):
        results = run_checks(in_notebook.ReferenceExpectations(), "softmax_stable",
                             {"softmax_stable": softmax_unkept_maximum}, "en", include_hidden=include_hidden,
                             seed=SEED, diagnose=False)
        rules = [result for result in results if result.id.startswith("softmax_stable.from_scratch")]
        assert rules and all(result.status == "passed" for result in rules), [
            (result.id, result.status, result.message) for result in rules]
        assert any(result.status != "passed" for result in results)
