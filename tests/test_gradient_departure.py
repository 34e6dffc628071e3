"""Rung 2 where a learner's values are right but their run leaves autograd's graph (issue 58, items 2 and 5): the
first of the notes' steps whose value their tensors hold while autograd recorded none of them, read from their own
run with gradients on (autograder.checking.gradient_departure, tensor_trace.graph_traced_probe).

Each attempt is the reference with one change, as a learner writes it. The controls (the reference, a detached
maximum in the stable softmax, gradients switched off around a mask alone) are told nothing of a gradient."""

import numpy as np
import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.departure import STEPS
from autograder.checking.gradient_departure import (
    GRAPH_STEPS,
    GradientDeparture,
    find_gradient_departure,
    gradient_line,
)
from autograder.checking.tensor_trace import INPUT, graph_traced_probe, trace_record, traced_probe
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from autograder.running.runner import cases_for
from tests.test_no_answer import answer_pieces, leaks

SEED = in_notebook.DEFAULT_SEED
CUT_WORDS = {"en": "not connected to the input in autograd's graph", "zh": "没有连接到输入"}
RAISED_WORDS = {"en": "given an input that requires grad", "zh": "输入需要梯度时"}


def softmax_through_numpy(x):  # the notes' naive softmax, its exponentials taken in NumPy
    exponentials = torch.from_numpy(np.exp(x.numpy()))
    return exponentials / exponentials.sum(dim=0)


def renormalised_through_a_new_tensor(attn_weights):  # route 1, its input rebuilt first
    attn_weights = torch.tensor(attn_weights)
    num_tokens = attn_weights.shape[-1]
    keep = torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * keep
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_filled_without_gradients(attn_scores):  # route 2, its fill done with gradients off
    num_tokens = attn_scores.shape[-1]
    with torch.no_grad():
        masked = attn_scores.masked_fill(solutions.causal_mask(num_tokens).to(attn_scores.device), -torch.inf)
    return torch.softmax(masked, dim=-1)


def neg_inf_mask_made_without_gradients(attn_scores):  # control: the mask needs no gradient
    num_tokens = attn_scores.shape[-1]
    with torch.no_grad():
        future = torch.triu(torch.ones(num_tokens, num_tokens, device=attn_scores.device), diagonal=1).bool()
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=-1)


def renormalised_with_a_mask_like_its_input(attn_weights):  # control: ones_like reads the input, needs no gradient
    masked = attn_weights * torch.tril(torch.ones_like(attn_weights))
    return masked / masked.sum(dim=-1, keepdim=True)


def softmax_stable_detached_maximum(x, dim=-1):  # control: softmax is shift-invariant, the gradient is still right
    shifted = x - x.max(dim=dim, keepdim=True).values.detach()
    exp = torch.exp(shifted)
    return exp / exp.sum(dim=dim, keepdim=True)


class ScoresWithoutGradientsThenRaises(nn.Module):  # SelfAttention_v1, its scores under no_grad, a wrong product
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        with torch.no_grad():
            weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values.T


ROUTES = {"causal_weights_renormalised": solutions.causal_weights_renormalised,
          "causal_weights_neg_inf": solutions.causal_weights_neg_inf}


def checked(exercise_id, namespace, lang):
    return run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                      seed=SEED, diagnose=True)


def gradient_departure_on(check_id, namespace):
    """The gradient departure of `namespace` on the first case of the public check `check_id`."""
    exercise = next(e for e in in_notebook.EXERCISES if check_id.startswith(e.id + "."))
    check = next(check for check in catalog.checks_of(exercise.id, include_hidden=False) if check.id == check_id)
    case = cases_for(check, SEED)[0]
    record, traced = graph_traced_probe(resolve(in_notebook._runnable(check, SEED).probe), namespace, case)
    expectations = check.expect(record, case)
    return find_gradient_departure(expectations[STEPS if STEPS in set(expectations) else GRAPH_STEPS], traced)


def failing(results):
    return [result for result in results if result.status != "passed"]


def test_a_softmax_through_numpy_is_told_the_step_it_raised_before_on_an_input_of_a_graph():
    for lang in ("en", "zh"):
        results = checked("softmax_naive", {"softmax_naive": softmax_through_numpy}, lang)
        [shown] = failing(results)  # its values are right: only the check that hands it a graph fails
        assert shown.misconception is None and RAISED_WORDS[lang] in shown.departure
        assert catalog.MESSAGES["step.exponentials"][lang] in shown.departure
        assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)


def test_a_route_that_rebuilds_its_input_is_told_its_first_step_carries_no_gradient():
    for lang in ("en", "zh"):
        results = checked("masking_routes", {**ROUTES, "causal_weights_renormalised":
                                             renormalised_through_a_new_tensor}, lang)
        shown = [result for result in failing(results) if result.departure]
        assert shown and all(result.id.startswith("masking_routes.renormalise") for result in failing(results))
        assert CUT_WORDS[lang] in shown[0].departure
        assert catalog.MESSAGES["step.masked_weights"][lang] in shown[0].departure
    departure = gradient_departure_on("masking_routes.renormalise_notes", {
        **ROUTES, "causal_weights_renormalised": renormalised_through_a_new_tensor})
    assert departure == GradientDeparture((), cut="masked_weights")


def test_a_fill_under_no_grad_is_told_the_masked_scores_carry_no_gradient():
    for lang in ("en", "zh"):
        results = checked("masking_routes", {**ROUTES, "causal_weights_neg_inf": neg_inf_filled_without_gradients},
                          lang)
        shown = [result for result in failing(results) if result.departure]
        assert shown and all(result.id.startswith("masking_routes.neg_inf") for result in failing(results))
        assert CUT_WORDS[lang] in shown[0].departure
        assert catalog.MESSAGES["step.masked_scores"][lang] in shown[0].departure
    # The mask is made from the sizes alone (from_inputs=False): the reference's carries no gradient either.
    departure = gradient_departure_on("masking_routes.neg_inf_notes", {
        **ROUTES, "causal_weights_neg_inf": neg_inf_filled_without_gradients})
    assert departure == GradientDeparture((), cut="masked_scores")


def test_code_that_raised_after_leaving_the_graph_is_told_both():
    """Where it raised (the value trace's line), then the first step it reproduced whose tensor autograd did not
    record: the module's parameters put every call in a graph."""
    for lang in ("en", "zh"):
        results = checked("self_attention_v1", {"SelfAttention_v1": ScoresWithoutGradientsThenRaises}, lang)
        shown = next(result for result in failing(results) if result.departure)
        raised_at, cut = shown.departure.rsplit(catalog.MESSAGES["departure.join"][lang], 1)
        assert catalog.MESSAGES["step.context_vectors"][lang] in raised_at
        assert CUT_WORDS[lang] in cut and catalog.MESSAGES["step.scores"][lang] in cut
        assert catalog.MESSAGES["step.queries"][lang] not in cut  # the projections are in the graph


def test_the_controls_are_told_nothing_of_a_gradient():
    controls = [("masking_routes.neg_inf_notes", ROUTES), ("masking_routes.renormalise_notes", ROUTES),
                ("masking_routes.neg_inf_notes", {**ROUTES,
                                                  "causal_weights_neg_inf": neg_inf_mask_made_without_gradients}),
                ("masking_routes.renormalise_notes", {**ROUTES, "causal_weights_renormalised":
                                                      renormalised_with_a_mask_like_its_input}),
                ("softmax_naive.from_scratch.preview", {"softmax_naive": solutions.softmax_naive}),
                ("softmax_stable.from_scratch.preview", {"softmax_stable": softmax_stable_detached_maximum}),
                ("softmax_stable.from_scratch.preview", {"softmax_stable": solutions.softmax_stable})]
    for check_id, namespace in controls:
        departure = gradient_departure_on(check_id, namespace)
        assert departure is not None and departure.cut is None and departure.absent is None, (check_id, departure)
        assert departure.connected, check_id  # every step of theirs was compared, and autograd recorded it
        assert gradient_line(departure, True, "en", catalog.MESSAGES) == ""
    for exercise_id, namespace in (("softmax_stable", {"softmax_stable": softmax_stable_detached_maximum}),
                                   ("masking_routes", {**ROUTES, "causal_weights_neg_inf":
                                                       neg_inf_mask_made_without_gradients})):
        assert not failing(checked(exercise_id, namespace, "en")), exercise_id


def neg_inf_gradients_switched_off_for_good(attn_scores):  # hostile: turns gradients off and leaves them off
    torch.set_grad_enabled(False)
    num_tokens = attn_scores.shape[-1]
    masked = attn_scores.masked_fill(solutions.causal_mask(num_tokens).to(attn_scores.device), -torch.inf)
    return torch.softmax(masked, dim=-1)


def renormalised_from_a_leaf_of_its_own(attn_weights):  # hostile: a new leaf that requires grad, cut from the input
    attn_weights = torch.tensor(attn_weights.tolist(), dtype=attn_weights.dtype, requires_grad=True)
    return solutions.causal_weights_renormalised(attn_weights)


def test_a_hostile_run_cannot_make_the_gradient_line_false_nor_leave_gradients_off():
    """Gradients turned off for good: nothing of the run is in a graph, so nothing is proven and nothing said (the
    check's own message says no gradient flows), and the grader's grad mode is back after check(...). A leaf of the
    learner's own that requires grad is part of a graph (its own): the line claims nothing of it either."""
    try:
        results = checked("masking_routes", {**ROUTES, "causal_weights_neg_inf":
                                             neg_inf_gradients_switched_off_for_good}, "en")
    finally:
        enabled = torch.is_grad_enabled()
        torch.set_grad_enabled(True)
    assert enabled
    assert failing(results) and not any(result.departure for result in failing(results))
    departure = gradient_departure_on("masking_routes.renormalise_notes", {
        **ROUTES, "causal_weights_renormalised": renormalised_from_a_leaf_of_its_own})
    assert departure is not None and departure.cut is None
    results = checked("masking_routes", {**ROUTES, "causal_weights_renormalised": renormalised_from_a_leaf_of_its_own},
                      "en")
    assert failing(results) and not any(CUT_WORDS["en"] in result.departure for result in results)


def test_a_run_with_gradients_off_says_nothing_of_the_graph():
    """The value trace (gradients off) and a trace from a grading child carry no `connected`: nothing is said."""
    check = next(check for check in catalog.checks_of("masking_routes", include_hidden=False)
                 if check.id == "masking_routes.neg_inf_notes")
    case = cases_for(check, SEED)[0]
    namespace = {**ROUTES, "causal_weights_neg_inf": neg_inf_filled_without_gradients}
    record, traced = traced_probe(resolve(in_notebook._runnable(check, SEED).probe), namespace, case)
    assert {entry.connected for entry in traced} == {None}
    assert find_gradient_departure(check.expect(record, case)[STEPS], traced) is None


def test_the_graph_trace_keeps_no_op_of_backward_and_sends_no_more_than_before():
    def probe(namespace, case):
        x = torch.arange(1.0, 5.0).requires_grad_(True)
        y = namespace["f"](x * 1)
        y.sum().backward()
        return {"output": y.detach()}

    record, traced = graph_traced_probe(probe, {"f": torch.exp}, None)
    assert "error" not in record
    made = [entry for entry in traced if entry.op != INPUT]
    # backward() makes its first gradient (ones) before autograd's engine runs: the engine's ops (exp's backward
    # multiplies) are not traced.
    assert [entry.op for entry in made] == ["arange", "mul", "exp", "sum", "ones_like"]
    assert [entry.connected for entry in made] == [False, True, True, True, False]
    assert all(len(entry) == 3 for entry in trace_record(traced))  # the wire format is unchanged


def test_the_gradient_lines_never_contain_the_answer_nor_a_call():
    pieces, calls = answer_pieces()
    lines = [gradient_line(GradientDeparture(("scores",), cut="weights"), False, lang, catalog.MESSAGES)
             for lang in ("en", "zh")]
    lines += [gradient_line(GradientDeparture(connected, absent="exponentials"), True, lang, catalog.MESSAGES)
              for connected in ((), ("maximum", "shifted")) for lang in ("en", "zh")]
    for line in lines:
        assert line and not leaks(line, pieces, calls), line
        assert not any(call in line for call in ("no_grad", "detach", "tolist", "numpy", "torch.tensor"))
    assert gradient_line(GradientDeparture((), absent="exponentials"), False, "en", catalog.MESSAGES) == ""


@pytest.mark.slow
def test_the_student_kit_says_the_same_from_its_stored_steps():
    """The kit has no reference: it reads the public cases' stored steps (the softmax rules check's included), and
    its check(...) traces the learner's run with gradients on as the full kit does."""
    from autograder.integrations.student_kit.build import vectors_document
    from autograder.integrations.student_kit.runtime.checking import StoredExpectations
    from autograder.integrations.student_kit.runtime.vectors import vectors_from_document

    vectors = vectors_from_document(vectors_document())
    kit, full = StoredExpectations(lambda: vectors), in_notebook.ReferenceExpectations()
    attempts = [("softmax_naive", {"softmax_naive": softmax_through_numpy}),
                ("masking_routes", {**ROUTES, "causal_weights_renormalised": renormalised_through_a_new_tensor}),
                ("masking_routes", {**ROUTES, "causal_weights_neg_inf": neg_inf_filled_without_gradients})]
    for exercise_id, namespace in attempts:
        for lang in ("en", "zh"):
            theirs = run_checks(kit, exercise_id, namespace, lang, include_hidden=False, seed=None, diagnose=True)
            ours = run_checks(full, exercise_id, namespace, lang, include_hidden=False, seed=SEED, diagnose=True)
            assert [r.departure for r in theirs] == [r.departure for r in ours]
            assert any(RAISED_WORDS[lang] in r.departure or CUT_WORDS[lang] in r.departure for r in theirs)
