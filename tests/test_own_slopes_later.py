"""The own slopes of a gradient (probing.gradient_is_own_slope, probing.module_own_slopes) are read only for the checks
that failed without them (issue 59): a judge reads a slope only where a gradient is wrong, so a correct submission
pays none of their calls, in the full kit's process (run_exercise, check()) and in the student kit (run_public); a
wrong gradient still gets its sentence, from a second look at its failing check alone."""

import torch
from torch import nn

from attnkit import solutions
from autograder.checking import probing
from autograder.checking.probing import OWN_SLOPE_FIELDS, own_slopes_later, with_own_slopes_of
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from autograder.running.runner import probe_exercise, run_exercise

CUT_SENTENCE = "where autograd does not record"


class V1NormaliserDetached(nn.Module):  # the softmax's sum from a detached copy: a step autograd does not record
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        exps = (queries @ keys.T / keys.shape[-1] ** 0.5).exp()
        return exps / exps.detach().sum(dim=-1, keepdim=True) @ values


def context_vectors_weights_frozen(inputs):
    """The weights computed under no_grad: right values, and the gradient through them is missing."""
    with torch.no_grad():
        weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs


def slope_reads(monkeypatch):
    """The calls of module_own_slopes, as module_gradients makes them."""
    calls = []
    read = probing.module_own_slopes

    def counted(*arguments, **options):
        calls.append(1)
        return read(*arguments, **options)

    monkeypatch.setattr(probing, "module_own_slopes", counted)
    return calls


def counted(function):
    calls = []

    def student(*arguments, **options):
        calls.append(1)
        return function(*arguments, **options)
    return student, calls


def test_a_correct_modules_properties_read_no_own_slope(monkeypatch):
    calls = slope_reads(monkeypatch)
    namespace = {"SelfAttention_v1": solutions.SelfAttention_v1}
    results = run_exercise("self_attention_v1", namespace, lang="en")
    assert all(result.status == "passed" for result in results)
    run_checks(in_notebook.ReferenceExpectations(), "self_attention_v1", namespace, "en", include_hidden=True,
               seed=in_notebook.DEFAULT_SEED, diagnose=True)
    assert calls == []
    probe_exercise("self_attention_v1", namespace)  # a child's probes still read them on every case
    assert calls


def test_a_correct_function_is_called_no_more_than_without_slopes():
    student, calls = counted(solutions.context_vectors)
    results = run_exercise("context_vectors", {"context_vectors": student}, lang="en")
    assert all(result.status == "passed" for result in results)
    with_check = len(calls)
    calls.clear()
    with own_slopes_later():
        probe_exercise("context_vectors", {"context_vectors": student})
    assert with_check == len(calls)
    calls.clear()
    probe_exercise("context_vectors", {"context_vectors": student})
    assert len(calls) > with_check  # the slopes' own calls, which run_exercise no longer makes


def test_a_wrong_gradient_still_gets_its_sentence_in_process_and_in_the_kit(monkeypatch):
    calls = slope_reads(monkeypatch)
    vectors = vectors_from_document(vectors_document())
    namespace = {"SelfAttention_v1": V1NormaliserDetached}
    live = {result.id: result for result in run_exercise("self_attention_v1", namespace, lang="en")}
    assert live["self_attention_v1.properties"].misconception == "forward_step_detached"
    assert CUT_SENTENCE in live["self_attention_v1.properties"].message
    assert calls  # read in the second look
    # The kit runs public checks only: a module's properties (hidden) are not among them; a function's gradient is.
    frozen = {"context_vectors": context_vectors_weights_frozen}
    live_function = run_exercise("context_vectors", frozen, lang="en", include_hidden=False)
    kit_function = run_public("context_vectors", frozen, vectors, "en")
    assert any(result.misconception == "gradient_cut" for result in kit_function)
    assert [(r.id, r.misconception, r.message) for r in kit_function] == \
        [(r.id, r.misconception, r.message) for r in live_function]


def test_only_the_slopes_are_taken_from_the_second_look():
    first = {"output": torch.zeros(2), "backward": {"parameters": {"W": torch.ones(1)}, "state": {}}, "calls": ["a"]}
    again = {"output": torch.ones(2), "gradient_is_own_slope": False, "calls": ["b"],
             "backward": {"parameters": {}, "input_own_slope": True, "own_slopes": {"W": False}}}
    merged = with_own_slopes_of(first, again)
    assert merged["output"] is first["output"] and merged["calls"] == ["a"]
    assert merged["backward"]["parameters"]["W"] is first["backward"]["parameters"]["W"]
    assert merged["gradient_is_own_slope"] is False
    assert merged["backward"]["input_own_slope"] is True and merged["backward"]["own_slopes"] == {"W": False}
    assert "gradient_is_own_slope" not in first and "own_slopes" not in first["backward"]  # a copy, not an edit
    assert with_own_slopes_of({"x": 1}, "not a record") == {"x": 1}
    assert set(OWN_SLOPE_FIELDS) == {"gradient_is_own_slope", "input_own_slope", "own_slopes"}


def test_no_slope_is_read_inside_own_slopes_later():
    with own_slopes_later():
        assert probing.gradient_is_own_slope(lambda x: x * 2, torch.ones(3), torch.full((3,), 2.0)) is None
    assert probing.gradient_is_own_slope(lambda x: x * 2, torch.ones(3), 2 * probing.gradient_weights((3,))) is True
