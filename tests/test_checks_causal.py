"""The checks of notebook 03: full marks for the reference and the book, named mistakes for the rest."""

import functools
import random
import re
import warnings

import pytest
import torch
from check_helpers import assert_full_marks, results_by_id, score
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import causal as mutants

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.checking.judging import mask_family
from autograder.checking.probing import rand, run_probe
from autograder.course import catalog
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.module_contract import cases as contract_cases
from autograder.course.module_contract import judge as contract_judges
from autograder.course.module_contract import probe as contract_probes
from autograder.course.module_contract.declaration import expect_contract
from autograder.course.n03_causal_attention.ex1_causal_mask import declaration as ex1_causal_mask
from autograder.course.n03_causal_attention.ex2_masking_routes import declaration as ex2_masking_routes
from autograder.course.n03_causal_attention.ex2_masking_routes import probe as routes_probes
from autograder.course.n03_causal_attention.ex3_causal_attention import declaration as ex3_causal_attention
from autograder.course.n03_causal_attention.ex3_causal_attention import probe as causal_attention_probes
from autograder.course.shared.inputs import notes_inputs
from autograder.course.variants import attention, mask_for
from autograder.running.runner import DEFAULT_SEED, cases_for

EXERCISE_IDS = ("causal_mask", "masking_routes", "causal_attention")
ROUTE_CHECKS = {  # masking_routes: the checks of each route, by the function they call
    "causal_weights_renormalised": {"masking_routes.renormalise_notes", "masking_routes.renormalise_random",
                                    "masking_routes.renormalise_device"},
    "causal_weights_neg_inf": {"masking_routes.neg_inf_notes", "masking_routes.neg_inf_random",
                               "masking_routes.neg_inf_device"},
}
DEVICE_CHECKS = {"masking_routes.renormalise_device", "masking_routes.neg_inf_device"}
SEEDS = (DEFAULT_SEED, 0, 1)
# Notebook 03's own checks and messages (the module contract's are tested with the contract).
NOTEBOOK_MODULES = (ex1_causal_mask, ex2_masking_routes, ex3_causal_attention)
CAUSAL_CHECKS = tuple(check for module in NOTEBOOK_MODULES for check in module.CHECKS)
CAUSAL_MESSAGES = {key: texts for module in NOTEBOOK_MODULES for key, texts in module.MESSAGES.items()}


def route_of(student):
    """The masking route a student function replaces: mutants are named after the function they stand for."""
    routes = [name for name in ROUTE_CHECKS if student.__name__.startswith(name)]
    assert len(routes) == 1, student.__name__
    return routes[0]


def namespace_for(exercise_id, student):
    """{name: object} as the notebook passes it. A masking_routes mutant replaces the route it is named
    after; the reference supplies the other, so only that route's checks can fail."""
    if isinstance(student, dict):
        return student
    names = EXERCISES_BY_ID[exercise_id].names
    if len(names) == 1:
        return {names[0]: student}
    return {**reference(exercise_id), route_of(student): student}


def run(exercise_id, student, seed=DEFAULT_SEED, include_hidden=True):
    return results_by_id(exercise_id, namespace_for(exercise_id, student), seed=seed, include_hidden=include_hidden)


def reference(exercise_id):
    """The reference namespace of an exercise: every name it passes, from solutions/."""
    return {name: getattr(solutions, name) for name in EXERCISES_BY_ID[exercise_id].names}


# ---------------------------------------------------------------------------------------------
# Full marks


CORRECT = [
    ("causal_mask", mutants.causal_mask_book),
    ("masking_routes", mutants.causal_weights_renormalised_on_device),
    ("masking_routes", mutants.causal_weights_neg_inf_on_device),
    ("masking_routes", mutants.causal_weights_neg_inf_future_built_no_grad),
    ("causal_attention", mutants.CausalAttention_book),
    ("causal_attention", mutants.CausalAttention_other_order),
    ("causal_attention", mutants.CausalAttention_bmm_other_mask),
    # Finite fills low enough for any score: legitimate alternatives to -inf.
    ("causal_attention", mutants.CausalAttention_fill_minus_1e9),
    ("causal_attention", mutants.CausalAttention_fill_finfo_min),
]


@pytest.mark.parametrize(("exercise_id", "student"), CORRECT, ids=lambda v: getattr(v, "__name__", v))
def test_book_code_and_correct_rewrites_earn_full_marks(exercise_id, student):
    for seed in SEEDS:
        assert_full_marks(exercise_id, run(exercise_id, student, seed=seed), seed)


def test_the_notes_routes_as_functions_lose_only_the_device_checks():
    """The notes' inline code, put in the functions as is, makes its mask on the CPU: right values, any leading
    dimensions, but on a GPU it fails (the meta device stands in): the device checks, and they alone, say so."""
    namespace = {"causal_weights_renormalised": mutants.causal_weights_renormalised_book,
                 "causal_weights_neg_inf": mutants.causal_weights_neg_inf_book}
    for seed in SEEDS:
        results = run("masking_routes", namespace, seed=seed)
        failed = {r.id: r for r in results.values() if r.status != PASSED}
        assert set(failed) == DEVICE_CHECKS, f"seed {seed}: {sorted(failed)}"
        assert all(r.misconception == "function_tensor_on_cpu" for r in failed.values())


# ---------------------------------------------------------------------------------------------
# Mistakes: (exercise, student code, check that must fail, misconception it must name, or None and a
# phrase of the message that must say what is wrong instead)

MISTAKES = [
    ("causal_mask", mutants.causal_mask_with_diagonal, "causal_mask.notes", "mask_includes_diagonal"),
    ("causal_mask", mutants.causal_mask_with_diagonal, "causal_mask.sizes", "mask_includes_diagonal"),
    ("causal_mask", mutants.causal_mask_inverted, "causal_mask.notes", "mask_inverted"),
    ("causal_mask", mutants.causal_mask_inverted, "causal_mask.sizes", "mask_inverted"),
    # tril where triu was meant hides the past and the diagonal: the inverted mask, not "also hides the diagonal".
    ("causal_mask", mutants.causal_mask_tril, "causal_mask.notes", "mask_inverted"),
    ("masking_routes", mutants.causal_weights_neg_inf_tril, "masking_routes.neg_inf_notes", "mask_inverted"),
    ("masking_routes", mutants.causal_weights_neg_inf_tril, "masking_routes.neg_inf_random", "mask_inverted"),
    ("causal_attention", mutants.CausalAttention_tril_mask, "causal_attention.notes", "mask_inverted"),
    ("causal_attention", mutants.CausalAttention_tril_mask, "causal_attention.random", "mask_inverted"),
    ("causal_attention", mutants.CausalAttention_global_d_k, "causal_attention.random", "size_from_notebook"),
    ("causal_attention", mutants.CausalAttention_modifies_input, "causal_attention.notes", "input_edited_in_place"),
    ("causal_mask", mutants.causal_mask_float, "causal_mask.notes", "bool tensor"),
    ("causal_mask", mutants.causal_mask_hardcoded, "causal_mask.sizes", "wrong shape"),
    ("masking_routes", mutants.causal_weights_renormalised_no_renorm, "masking_routes.renormalise_notes",
     "mask_after_softmax_no_renorm"),
    ("masking_routes", mutants.causal_weights_renormalised_no_renorm, "masking_routes.renormalise_random",
     "mask_after_softmax_no_renorm"),
    ("masking_routes", mutants.causal_weights_renormalised_with_diagonal, "masking_routes.renormalise_notes",
     "mask_includes_diagonal"),
    ("masking_routes", mutants.causal_weights_renormalised_with_diagonal, "masking_routes.renormalise_random",
     "mask_includes_diagonal"),
    ("masking_routes", mutants.causal_weights_renormalised_inverted, "masking_routes.renormalise_random",
     "mask_inverted"),
    ("masking_routes", mutants.causal_weights_renormalised_column_sums, "masking_routes.renormalise_notes",
     "row_sums_wrong_axis"),
    ("masking_routes", mutants.causal_weights_renormalised_no_keepdim, "masking_routes.renormalise_notes",
     "row_sums_without_keepdim"),
    ("masking_routes", mutants.causal_weights_renormalised_no_keepdim, "masking_routes.renormalise_random",
     "row_sums_without_keepdim"),
    ("masking_routes", mutants.causal_weights_renormalised_float32, "masking_routes.renormalise_random",
     "dtype float32"),
    ("masking_routes", mutants.causal_weights_renormalised_book, "masking_routes.renormalise_device",
     "function_tensor_on_cpu"),
    ("masking_routes", mutants.causal_weights_neg_inf_result_dropped, "masking_routes.neg_inf_notes",
     "masked_fill_result_dropped"),
    ("masking_routes", mutants.causal_weights_neg_inf_result_dropped, "masking_routes.neg_inf_random",
     "masked_fill_result_dropped"),
    ("masking_routes", mutants.causal_weights_neg_inf_wrong_dim, "masking_routes.neg_inf_notes", "softmax_wrong_dim"),
    ("masking_routes", mutants.causal_weights_neg_inf_wrong_dim, "masking_routes.neg_inf_random", "softmax_wrong_dim"),
    ("masking_routes", mutants.causal_weights_neg_inf_with_diagonal, "masking_routes.neg_inf_notes",
     "mask_includes_diagonal"),
    ("masking_routes", mutants.causal_weights_neg_inf_with_diagonal, "masking_routes.neg_inf_random",
     "mask_includes_diagonal"),
    ("masking_routes", mutants.causal_weights_neg_inf_inverted, "masking_routes.neg_inf_random", "mask_inverted"),
    ("masking_routes", mutants.causal_weights_neg_inf_book, "masking_routes.neg_inf_device", "function_tensor_on_cpu"),
    ("masking_routes", mutants.causal_weights_neg_inf_in_place, "masking_routes.neg_inf_notes",
     "input_edited_in_place"),
    ("masking_routes", mutants.causal_weights_neg_inf_detached, "masking_routes.neg_inf_notes",
     "no gradient flows back"),
    # Issue 58: a copy filled in place with gradients off: right weights and gradient, an unrecorded edit.
    ("masking_routes", mutants.causal_weights_neg_inf_copy_filled_no_grad, "masking_routes.neg_inf_notes",
     "gradient_cut"),
    ("masking_routes", mutants.causal_weights_neg_inf_copy_filled_no_grad, "masking_routes.neg_inf_random",
     "gradient_cut"),
    ("masking_routes", mutants.causal_weights_neg_inf_in_place, "masking_routes.neg_inf_random",
     "input_edited_in_place"),
    ("masking_routes", mutants.causal_weights_renormalised_in_place, "masking_routes.renormalise_notes",
     "input_edited_in_place"),
    ("masking_routes", mutants.causal_weights_renormalised_in_place, "masking_routes.renormalise_random",
     "input_edited_in_place"),
    ("causal_attention", mutants.CausalAttention_missing_scaling, "causal_attention.notes", "missing_scaling"),
    ("causal_attention", mutants.CausalAttention_missing_scaling, "causal_attention.random", "missing_scaling"),
    ("causal_attention", mutants.CausalAttention_softmax_wrong_dim, "causal_attention.random", "softmax_wrong_dim"),
    # Issue 58: the reference with the softmax over the queries leaks the future at the same positions, so the mistake
    # the value checks prove explains the causality check too (autograder.course.value_variants).
    ("causal_attention", mutants.CausalAttention_softmax_wrong_dim, "causal_attention.properties",
     "softmax_wrong_dim"),
    ("causal_attention", mutants.CausalAttention_mask_with_diagonal, "causal_attention.random",
     "mask_includes_diagonal"),
    ("causal_attention", mutants.CausalAttention_mask_inverted, "causal_attention.random", "mask_inverted"),
    ("causal_attention", mutants.CausalAttention_mask_inverted, "causal_attention.properties", "mask_inverted"),
    ("causal_attention", mutants.CausalAttention_masked_fill_dropped, "causal_attention.notes",
     "masked_fill_result_dropped"),
    ("causal_attention", mutants.CausalAttention_masked_fill_dropped, "causal_attention.random",
     "masked_fill_result_dropped"),
    ("causal_attention", mutants.CausalAttention_mask_after_softmax, "causal_attention.random",
     "mask_after_softmax_no_renorm"),
    ("causal_attention", mutants.CausalAttention_query_key_swapped, "causal_attention.random", "query_key_swapped"),
    ("causal_attention", mutants.CausalAttention_mask_not_truncated, "causal_attention.random", "mask_not_truncated"),
    ("causal_attention", mutants.CausalAttention_mask_not_truncated, "causal_attention.properties",
     "mask_not_truncated"),
    ("causal_attention", mutants.CausalAttention_half_power, "causal_attention.notes", "scale_wrong_value"),
    ("causal_attention", mutants.CausalAttention_half_power, "causal_attention.random", "scale_wrong_value"),
    ("causal_attention", mutants.CausalAttention_weights_transposed_on_values, "causal_attention.random",
     "the output goes wrong after them"),
    ("causal_attention", mutants.CausalAttention_returns_weights, "causal_attention.notes",
     "forward returns the attention weights"),
    ("causal_attention", mutants.CausalAttention_mask_rebound, "causal_attention.state", "state_changed_by_forward"),
    ("causal_attention", mutants.CausalAttention_mask_edited_in_place, "causal_attention.state",
     "state_changed_by_forward"),
    ("causal_attention", mutants.CausalAttention_transpose_batched, "causal_attention.notes", "transpose_batched"),
    ("causal_attention", mutants.CausalAttention_transpose_batched, "causal_attention.random", "transpose_batched"),
    ("causal_attention", mutants.CausalAttention_sdpa, "causal_attention.random", "scaled_dot_product_attention"),
    # Issue 41: the output moves with W_key and no gradient reaches it: the graph shows the cut, and names it.
    # The keys are detached after W_key is read inside the graph: the step is cut, not the parameter (issue 58).
    ("causal_attention", mutants.CausalAttention_detached_keys, "causal_attention.properties",
     "forward_step_detached"),
    # Issue 58: every parameter gets a gradient, but not the right one: the row sums were taken with gradients off.
    ("causal_attention", mutants.CausalAttention_normaliser_no_grad, "causal_attention.properties",
     "forward_step_detached"),
    ("masking_routes", mutants.causal_weights_renormalised_sums_no_grad, "masking_routes.renormalise_notes",
     "gradient_cut"),
    ("masking_routes", mutants.causal_weights_renormalised_sums_no_grad, "masking_routes.renormalise_random",
     "gradient_cut"),
    ("causal_attention", mutants.CausalAttention_modifies_input, "causal_attention.properties",
     "modified its input"),
    ("causal_attention", mutants.CausalAttention_dropout_in_eval, "causal_attention.modes", "dropout_in_eval"),
    ("causal_attention", mutants.CausalAttention_dropout_on_scores, "causal_attention.modes",
     "dropout_before_softmax"),
    ("causal_attention", mutants.CausalAttention_dropout_on_masked_scores, "causal_attention.modes",
     "dropout_before_softmax"),
    ("causal_attention", mutants.CausalAttention_dropout_on_values, "causal_attention.modes",
     "dropout_not_on_weights"),
    ("causal_attention", mutants.CausalAttention_no_dropout, "causal_attention.modes", "dropout_missing"),
    ("causal_attention", mutants.CausalAttention_dropout_not_scaled, "causal_attention.modes",
     "scaled up to make up for the dropped ones"),
    ("causal_attention", mutants.CausalAttentionWithoutBuffers, "causal_attention.device", "mask_plain_attribute"),
    ("causal_attention", mutants.CausalAttention_buffer_not_saved, "causal_attention.device", "mask_not_persistent"),
    ("causal_attention", mutants.CausalAttention_mask_parameter, "causal_attention.structure", "mask_as_parameter"),
    ("causal_attention", mutants.CausalAttention_no_buffer_line, "causal_attention.device",
     "registers the mask as a buffer"),
    ("causal_attention", mutants.CausalAttention_fresh_mask_in_forward, "causal_attention.device",
     "tensor_created_on_cpu"),
]

MISCONCEPTION_IDS = set(MISCONCEPTIONS_BY_ID)

# Mutants whose bug lives in one place only: every other check of the exercise must still pass.
FOCUSED = {
    mutants.causal_mask_hardcoded: {"causal_mask.sizes"},
    mutants.causal_weights_renormalised_float32: {"masking_routes.renormalise_random"},
    mutants.causal_weights_renormalised_book: {"masking_routes.renormalise_device"},
    mutants.causal_weights_neg_inf_book: {"masking_routes.neg_inf_device"},
    mutants.CausalAttention_detached_keys: {"causal_attention.properties"},
    mutants.CausalAttention_mask_edited_in_place: {"causal_attention.state"},
    mutants.CausalAttention_dropout_in_eval: {"causal_attention.modes"},
    mutants.CausalAttention_dropout_on_scores: {"causal_attention.modes"},
    mutants.CausalAttention_dropout_on_masked_scores: {"causal_attention.modes"},
    mutants.CausalAttention_dropout_on_values: {"causal_attention.modes"},
    mutants.CausalAttention_no_dropout: {"causal_attention.modes"},
    mutants.CausalAttention_dropout_not_scaled: {"causal_attention.modes"},
    mutants.CausalAttentionWithoutBuffers: {"causal_attention.device"},
    mutants.CausalAttention_buffer_not_saved: {"causal_attention.device"},
    mutants.CausalAttention_mask_parameter: {"causal_attention.structure"},
    mutants.CausalAttention_no_buffer_line: {"causal_attention.device"},
    mutants.CausalAttention_fresh_mask_in_forward: {"causal_attention.device"},
    mutants.CausalAttention_mask_not_truncated: {"causal_attention.random", "causal_attention.properties",
                                                 "causal_attention.structure", "causal_attention.modes",
                                                 "causal_attention.device", "causal_attention.state"},
}


@pytest.mark.parametrize(
    ("exercise_id", "student", "check_id", "named"),
    MISTAKES,
    ids=[f"{student.__name__}-{check_id.split('.')[-1]}" for _, student, check_id, _ in MISTAKES],
)
def test_mistake_loses_points_and_is_named(exercise_id, student, check_id, named):
    for seed in SEEDS:
        results = run(exercise_id, student, seed=seed)
        result = results[check_id]
        assert score(results) < EXERCISES_BY_ID[exercise_id].points
        assert result.status != PASSED, f"seed {seed}"
        if named in MISCONCEPTION_IDS:
            assert result.misconception == named, f"seed {seed}: {result.message}"
        else:  # no variant reproduces it: no name, but a message that says what is wrong
            assert result.misconception is None, f"seed {seed}: {result.message}"
            assert named in result.message, f"seed {seed}: {result.message}"
        failing = {r.id for r in results.values() if r.status != PASSED}
        if student in FOCUSED:
            assert failing == FOCUSED[student], f"seed {seed}: {failing}"
        if exercise_id == "masking_routes":  # a mistake in one route never costs the other route's checks
            assert failing <= ROUTE_CHECKS[route_of(student)], f"seed {seed}: {failing}"


def test_every_misconception_of_these_exercises_has_a_mutant():
    named = {named for _, _, _, named in MISTAKES if named in MISCONCEPTION_IDS}
    assert named >= {
        "mask_includes_diagonal", "mask_inverted", "mask_after_softmax_no_renorm", "masked_fill_result_dropped",
        "softmax_wrong_dim", "missing_scaling", "query_key_swapped", "mask_not_truncated", "transpose_batched",
        "dropout_in_eval", "dropout_before_softmax", "mask_plain_attribute", "row_sums_wrong_axis",
        "row_sums_without_keepdim", "dropout_missing",
        "dropout_not_on_weights", "mask_as_parameter", "mask_not_persistent", "tensor_created_on_cpu",
    }


def not_implemented(*args, **kwargs):
    raise NotImplementedError


class CausalAttentionStub(mutants.CausalAttention_forward_mistake):
    """The notebook's stub: __init__ without the register_buffer line, forward not written yet."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__(d_in, d_out, context_length, dropout, qkv_bias)
        del self.mask

    def forward(self, x):
        raise NotImplementedError


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_stubs_earn_nothing(exercise_id):
    student = CausalAttentionStub if exercise_id == "causal_attention" else not_implemented
    namespace = {name: student for name in EXERCISES_BY_ID[exercise_id].names}
    assert score(run(exercise_id, namespace)) == 0


@pytest.mark.parametrize("route", sorted(ROUTE_CHECKS))
def test_each_masking_route_earns_its_own_points(route):
    """One route written, the other still the stub: exactly the written route's checks pass."""
    namespace = {**{name: not_implemented for name in ROUTE_CHECKS}, route: getattr(solutions, route)}
    results = run("masking_routes", namespace)
    passed = {r.id for r in results.values() if r.status == PASSED}
    assert passed == ROUTE_CHECKS[route]
    assert score(results) == pytest.approx(EXERCISES_BY_ID["masking_routes"].points / 2)


def test_notes_literal_renormalise_passes_the_notes_but_not_batches():
    # The notes read the size from attn_scores.shape[0], right for their 6×6 matrix only.
    def causal_weights_renormalised(attn_weights):
        context_length = attn_weights.shape[0]
        masked_simple = attn_weights * torch.tril(torch.ones(context_length, context_length))
        return masked_simple / masked_simple.sum(dim=-1, keepdim=True)

    results = run("masking_routes", causal_weights_renormalised)
    assert results["masking_routes.renormalise_notes"].status == PASSED
    assert results["masking_routes.renormalise_random"].status != PASSED


# ---------------------------------------------------------------------------------------------
# The notes' numbers


NOTES_WEIGHTS = [
    [0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
    [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
    [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
    [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
    [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]
NOTES_MASKED = [
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
    [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
    [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]
NOTES_CONTEXT = [[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
                 [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081]]


def test_public_inputs_are_the_notes_numbers():
    weights = routes_probes.notes_attention_weights()
    assert torch.allclose(weights, torch.tensor(NOTES_WEIGHTS), atol=1e-4)
    # The notes scale the -inf-filled scores inside the softmax; both routes give their masked matrix.
    scores = routes_probes.notes_attention_scores()
    assert torch.allclose(solutions.causal_weights_neg_inf(scores / 2**0.5), torch.tensor(NOTES_MASKED), atol=1e-4)
    assert torch.allclose(solutions.causal_weights_renormalised(weights), torch.tensor(NOTES_MASKED), atol=1e-4)


def test_notes_weights_are_those_of_the_reference_self_attention_v2():
    torch.manual_seed(routes_probes.NOTES_V2_SEED)
    sa_v2 = solutions.SelfAttention_v2(3, 2)
    inputs = notes_inputs()
    scores = sa_v2.W_query(inputs) @ sa_v2.W_key(inputs).T
    assert torch.equal(scores.detach(), routes_probes.notes_attention_scores())


def test_notes_case_reproduces_the_notes_context_vectors():
    data = run_probe(causal_attention_probes.probe_forward, {"CausalAttention": solutions.CausalAttention},
                     ex3_causal_attention.notes_case())
    assert torch.allclose(data["output"], torch.tensor([NOTES_CONTEXT, NOTES_CONTEXT]), atol=1e-4)


def test_public_weights_check_shows_a_heatmap_and_the_values():
    results = run("masking_routes", mutants.causal_weights_renormalised_no_renorm, include_hidden=False)
    result = results["masking_routes.renormalise_notes"]
    assert result.heatmap is not None
    expected_line = next(line for line in result.details if line.startswith("expected"))
    assert "1.0000, 0.0000" in expected_line


def test_public_attention_check_shows_the_notes_shapes():
    result = run("causal_attention", mutants.CausalAttention_missing_scaling, include_hidden=False)[
        "causal_attention.notes"]
    assert any("(2, 6, 3)" in line for line in result.details)


@pytest.mark.parametrize(("exercise_id", "student", "check_id", "named"), MISTAKES[::2])
def test_hidden_messages_show_no_values(exercise_id, student, check_id, named):
    for result in run(exercise_id, student).values():
        if result.hidden:
            assert not result.details and result.heatmap is None
            assert not re.search(r"\d\.\d{3}", result.message), result.message


def test_every_message_is_in_both_languages():
    for check in CAUSAL_CHECKS:
        assert set(check.title) == {"en", "zh"} and all(check.title.values()), check.id
    for key, texts in CAUSAL_MESSAGES.items():
        assert set(texts) == {"en", "zh"}, key
        assert set(re.findall(r"{(\w+)", texts["en"])) == set(re.findall(r"{(\w+)", texts["zh"])), key


# ---------------------------------------------------------------------------------------------
# How the checks behave: plain probe data, silence, the notebook's RNG untouched, speed


def is_plain(value):
    if isinstance(value, torch.Tensor):
        return value.device.type == "cpu" and not value.requires_grad
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(is_plain(v) for v in value)
    return value is None or isinstance(value, bool | int | float | str)


@pytest.mark.parametrize("check", CAUSAL_CHECKS, ids=lambda check: check.id)
def test_probes_return_plain_data(check):
    namespace = reference(check.exercise)
    for case in cases_for(check, DEFAULT_SEED):
        data = run_probe(check.probe, namespace, case)
        assert "error" not in data, data
        assert is_plain(data), data


def test_cases_are_deterministic_and_carry_what_explain_error_needs():
    for check in CAUSAL_CHECKS:
        assert cases_for(check, 7) == cases_for(check, 7)
        if check.exercise == "causal_attention":
            for case in cases_for(check, 7):
                assert {"num_tokens", "context_length"} <= set(case)


def test_hidden_attention_shapes_cover_the_brief():
    draws = [cases_for(catalog.CHECKS_BY_ID["causal_attention.random"], seed) for seed in range(50)]
    cases = [case for draw in draws for case in draw]
    assert all(case["d_in"] != case["d_out"] and case["d_out"] >= 2 for case in cases)
    # Every case but each draw's last needs the mask cut to num_tokens; the last is the edge the notes' batch shows,
    # drawn on every seed: a batch of one at context_length (tests/test_hidden_edge_sizes.py).
    assert all(case["num_tokens"] < case["context_length"] for draw in draws for case in draw[:-1])
    assert all(draw[-1]["num_tokens"] == draw[-1]["context_length"] and draw[-1]["batch"] == 1 for draw in draws)
    assert {case["num_tokens"] for case in cases} >= {1, 17}
    assert {case["dtype"] for case in cases} == {"float32", "float64"}
    assert {case["qkv_bias"] for case in cases} == {True, False}


@pytest.mark.parametrize("student", [solutions.CausalAttention, mutants.CausalAttention_transpose_batched,
                                     mutants.CausalAttention_dropout_in_eval, mutants.CausalAttentionWithoutBuffers])
def test_checks_are_silent_and_leave_the_notebooks_rng_alone(student, capfd):
    torch.manual_seed(5)
    expected_draw = torch.rand(4)
    torch.manual_seed(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run("causal_attention", student)
    assert torch.equal(torch.rand(4), expected_draw)
    assert not caught
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# ---------------------------------------------------------------------------------------------
# The dropout statistics and the device helper


def test_dropout_rate_tolerance_is_wide_and_still_catches_a_double_dropout():
    spec = contract_probes.SPECS_BY_EXERCISE["causal_attention"]
    visible = contract_cases.DROPOUT_BATCH * contract_cases.DROPOUT_TOKENS * (contract_cases.DROPOUT_TOKENS + 1) / 2
    tolerance = contract_judges.RATE_DEVIATIONS * (0.25 / visible) ** 0.5
    assert tolerance < 0.25  # dropout applied twice zeroes 75 % instead of 50 %
    case = contract_cases.modes_cases(spec, random.Random(0))[0]

    class CausalAttention_dropout_twice(mutants.CausalAttention_forward_mistake):
        def forward(self, x):
            b, num_tokens, _ = x.shape
            scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
            scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
            weights = torch.softmax(scores / self.W_key.weight.shape[0] ** 0.5, dim=-1)
            return self.dropout(self.dropout(weights)) @ self.W_value(x)

    probe = functools.partial(contract_probes.probe_modes, spec)
    data = run_probe(probe, {"CausalAttention": CausalAttention_dropout_twice}, case)
    verdict = contract_judges.judge_modes(spec, data, case, expect_contract("modes", "causal_attention", data, case))
    assert not verdict.passed and verdict.message_key == "contract.dropout_rate"


def test_probe_device_prefers_a_gpu_and_can_be_forced():
    assert contract_probes.probe_device_kind("meta") == "meta"
    has_gpu = torch.cuda.is_available() or torch.backends.mps.is_available()
    assert (contract_probes.probe_device_kind() == "meta") is not has_gpu


# ---------------------------------------------------------------------------------------------
# Properties of the reference functions the judges rely on


@st.composite
def weight_shapes(draw):
    num_tokens = draw(st.integers(1, 20))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    return (*batch, num_tokens, num_tokens)


@settings(max_examples=30, deadline=None)
@given(shape=weight_shapes(), seed=st.integers(0, 2**31 - 1), dtype=st.sampled_from((torch.float32, torch.float64)))
def test_reference_masking_routes_give_causal_rows_that_sum_to_1(shape, seed, dtype):
    scores = rand(seed, *shape, dtype=dtype) * 3
    future = solutions.causal_mask(shape[-1])
    for weights in (solutions.causal_weights_renormalised(torch.softmax(scores, dim=-1)),
                    solutions.causal_weights_neg_inf(scores)):
        assert weights.dtype == dtype and weights.shape == scores.shape
        assert torch.all(weights.masked_select(future.expand_as(weights)) == 0)
        assert torch.allclose(weights.sum(dim=-1), torch.ones(shape[:-1], dtype=dtype))


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 3), num_tokens=st.integers(2, 20), extra=st.integers(0, 5), d_in=st.integers(1, 6),
       d_out=st.integers(1, 6), bias=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_reference_causal_attention_is_causal_and_matches_the_functional_form(batch, num_tokens, extra, d_in, d_out,
                                                                             bias, seed):
    torch.manual_seed(seed)
    module = solutions.CausalAttention(d_in, d_out, num_tokens + extra, 0.0, qkv_bias=bias).double()
    x = rand(seed, batch, num_tokens, d_in, dtype=torch.float64)
    position = seed % (num_tokens - 1)
    changed = x.clone()
    changed[:, position + 1:] = rand(seed + 1, batch, num_tokens - position - 1, d_in,
                                                   dtype=torch.float64)
    with torch.no_grad():
        output, output_changed = module(x), module(changed)
    assert output.dtype == torch.float64 and output.shape == (batch, num_tokens, d_out)
    assert torch.equal(output[:, : position + 1], output_changed[:, : position + 1])
    weights = {name: value for name, value in module.state_dict().items() if name != "mask"}
    assert torch.allclose(attention(x, weights), output)


def test_a_causal_fill_that_is_finite_but_too_small_loses_points_on_a_public_check():
    """-1e4 hides the future only while every visible score is above it: the wide case shows it, publicly too."""
    public = run("causal_attention", mutants.CausalAttention_small_fill, include_hidden=False)
    assert any(result.status != PASSED for result in public.values())
    graded = run("causal_attention", mutants.CausalAttention_small_fill)
    assert graded["causal_attention.random"].status != PASSED
    assert score(graded) < EXERCISES_BY_ID["causal_attention"].points


@pytest.mark.parametrize("kind", ["with_diagonal", "inverted", "inverted_with_diagonal", "future", "none"])
def test_the_mask_family_is_read_from_the_mask_itself(kind):
    expected = {"with_diagonal": "mask_includes_diagonal", "inverted": "mask_inverted",
                "inverted_with_diagonal": "mask_inverted", "future": None, "none": None}[kind]
    for num_tokens in (2, 5, 17):
        assert mask_family(mask_for(kind, num_tokens)) == expected
    # A mask wrong in one more place belongs to no family: no name rather than a wrong one.
    odd = mask_for(kind, 5).clone()
    odd[4, 0] = ~odd[4, 0]
    assert mask_family(odd) is None


def test_route_one_without_keepdim_gets_no_hint_about_a_maximum():
    """Route 1 takes no maximum: its missing keepdim is a broadcast of the row sums along the wrong axis."""
    results = run("masking_routes", mutants.causal_weights_renormalised_no_keepdim)
    failed = [result for result in results.values() if result.status != PASSED]
    # Where (..., T, T) / (..., T) cannot broadcast it crashes instead, and the crash names the shapes alone.
    assert failed and {result.misconception for result in failed} - {None} == {"row_sums_without_keepdim"}
    assert all("max" not in result.hint.lower() for result in failed)


class CausalAttention_mask_made_bool(solutions.CausalAttention):
    """The reference with one change: forward rebinds the float mask buffer to a bool copy (no view is edited)."""

    def forward(self, x):
        self.mask = self.mask.bool()
        return super().forward(x)


@pytest.mark.parametrize(("lang", "dtype_words", "presumed_cause"), [
    ("en", r"its dtype went from float\d+ to bool", "a view of a buffer"),
    ("zh", r"它的 dtype 从 float\d+ 变成了 bool", "视图"),
])
def test_a_buffer_retyped_by_forward_is_said_as_seen_not_as_a_view_edited(lang, dtype_words, presumed_cause):
    # Issue 58 (h-ca-06): the observed fact (which buffer, its dtype) is said, never a presumed cause it did not make.
    result = results_by_id("causal_attention", {"CausalAttention": CausalAttention_mask_made_bool}, lang=lang)[
        "causal_attention.state"]
    assert result.status != PASSED
    assert result.misconception == "state_changed_by_forward"
    assert re.search(dtype_words, result.message) and presumed_cause not in result.message, result.message


class CausalAttentionUndoingTheRescale(mutants.CausalAttention_forward_mistake):
    """12t's tz-ma-08: the dropped weights times (1 - p), "to undo dropout's rescaling", in both modes."""

    def forward(self, x):
        num_tokens = x.shape[1]
        attn_scores = self.scores(x)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / self.W_key.weight.shape[0] ** 0.5, dim=-1)
        return self.dropout(attn_weights) * (1 - self.dropout.p) @ self.W_value(x)


def test_a_rate_that_changes_the_eval_output_without_dropping_is_not_named_dropout_in_eval():
    """No dropout acts in eval mode (two eval calls agree): "dropout still active in eval mode" would be false."""
    result = results_by_id("causal_attention", {"CausalAttention": CausalAttentionUndoingTheRescale},
                           seed=DEFAULT_SEED)["causal_attention.modes"]
    assert result.status != PASSED
    assert result.misconception is None, result.misconception
    assert "does nothing" in result.message or "must do nothing" in result.message, result.message
