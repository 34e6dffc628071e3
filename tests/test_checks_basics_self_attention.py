"""The checks of notebooks 01 and 02: full marks for the reference and the book, named mistakes for the rest."""

import re

import pytest
import torch
from check_helpers import assert_full_marks, results_by_id, score
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import basics_self_attention as mutants

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.checking.probing import run_probe
from autograder.course import catalog
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.shared.inputs import NOTES_INPUTS
from autograder.course.variants import attention
from autograder.isolation.wire import FrameReader, encode
from autograder.running.runner import DEFAULT_SEED, cases_for

EXERCISE_IDS = (
    "softmax_naive",
    "softmax_stable",
    "context_vectors",
    "self_attention_v1",
    "self_attention_v2",
    "transfer_weights",
)
SEEDS = (DEFAULT_SEED, 0, 1, 2, 3)


def run(exercise_id, student, seed=DEFAULT_SEED):
    return results_by_id(exercise_id, {EXERCISES_BY_ID[exercise_id].names[0]: student}, seed=seed)


def reference(exercise_id):
    return getattr(solutions, EXERCISES_BY_ID[exercise_id].names[0])


# ---------------------------------------------------------------------------------------------
# Full marks


CORRECT = [
    ("softmax_naive", mutants.softmax_naive_book),
    ("softmax_stable", mutants.softmax_stable_exp_methods),
    ("context_vectors", mutants.context_vectors_book),
    ("context_vectors", mutants.context_vectors_shift_built_no_grad),
    ("context_vectors", mutants.context_vectors_loops),
    ("self_attention_v1", mutants.SelfAttention_v1_book),
    ("self_attention_v1", mutants.SelfAttention_v1_other_order),
    ("self_attention_v2", mutants.SelfAttention_v2_fixed_book),
    ("self_attention_v2", mutants.SelfAttention_v2_other_order),
    ("transfer_weights", mutants.load_data_assignment),
]


@pytest.mark.parametrize(("exercise_id", "student"), CORRECT, ids=lambda v: getattr(v, "__name__", v))
def test_book_code_and_correct_rewrites_earn_full_marks(exercise_id, student):
    for seed in SEEDS:
        assert_full_marks(exercise_id, run(exercise_id, student, seed=seed), seed)


# ---------------------------------------------------------------------------------------------
# Mistakes: (exercise, student code, check that must fail, misconception it must name or None)

MISTAKES = [
    ("softmax_naive", mutants.softmax_naive_divide_by_sum, "softmax_naive.notes", "normalised_without_exp"),
    ("softmax_naive", mutants.softmax_naive_divide_by_sum, "softmax_naive.random", "normalised_without_exp"),
    ("softmax_naive", mutants.softmax_naive_builtin, "softmax_naive.from_scratch", None),
    ("softmax_naive", mutants.softmax_naive_float32, "softmax_naive.random", None),
    ("softmax_stable", mutants.softmax_stable_no_shift, "softmax_stable.notes", "naive_softmax_overflow"),
    ("softmax_stable", mutants.softmax_stable_no_shift, "softmax_stable.large", "naive_softmax_overflow"),
    ("softmax_stable", mutants.softmax_stable_dim0, "softmax_stable.notes", "softmax_dim_ignored"),
    ("softmax_stable", mutants.softmax_stable_last_dim, "softmax_stable.random", "softmax_dim_ignored"),
    ("context_vectors", mutants.context_vectors_no_softmax, "context_vectors.notes", "scores_as_weights"),
    ("context_vectors", mutants.context_vectors_detached, "context_vectors.float64", "gradient_cut"),
    # Issue 58: the right values, the weights computed with gradients off: the gradient back to the inputs is not
    # context_vectors' own.
    ("context_vectors", mutants.context_vectors_weights_no_grad, "context_vectors.float64", "gradient_cut"),
    # Issue 58: the scores edited in place with gradients off: right values and gradient, an edit autograd never
    # records, read from the run.
    ("context_vectors", mutants.context_vectors_shifted_in_place_no_grad, "context_vectors.float64", "gradient_cut"),
    ("softmax_stable", mutants.softmax_stable_numpy, "softmax_stable.from_scratch", "gradient_cut"),
    ("context_vectors", mutants.context_vectors_scaled, "context_vectors.notes", "scaled_without_weights"),
    ("softmax_stable", mutants.softmax_stable_default_dim0, "softmax_stable.random", "default_dim_changed"),
    # The notes' scores are symmetric: there a max along the other axis and a max without keepdim give the same
    # weights, so neither is proven on them alone (issue 41: the keepdim mistake was named this one); random scores
    # tell, and the attempt read as one then explains the notes' check by the mistake they prove (issue 58).
    ("softmax_stable", mutants.softmax_stable_max_over_first_axis, "softmax_stable.notes", "max_and_sum_axes_differ"),
    ("softmax_stable", mutants.softmax_stable_max_over_first_axis, "softmax_stable.random",
     "max_and_sum_axes_differ"),
    ("softmax_stable", mutants.softmax_stable_no_keepdim, "softmax_stable.notes", "missing_keepdim"),
    ("softmax_stable", mutants.softmax_stable_global_max, "softmax_stable.large", "softmax_global_max"),
    ("softmax_stable", mutants.softmax_stable_in_place, "softmax_stable.from_scratch", None),
    ("softmax_stable", mutants.softmax_stable_builtin, "softmax_stable.from_scratch", None),
    ("softmax_stable", mutants.softmax_stable_log_softmax, "softmax_stable.from_scratch", None),
    ("context_vectors", mutants.context_vectors_wrong_dim, "context_vectors.notes", "context_weights_other_axis"),
    ("context_vectors", mutants.context_vectors_wrong_dim, "context_vectors.random",
     "context_weights_other_axis"),
    ("context_vectors", mutants.context_vectors_divide_by_sum, "context_vectors.notes",
     "context_normalised_without_exp"),
    ("context_vectors", mutants.context_vectors_notes_size, "context_vectors.random", None),
    ("context_vectors", mutants.context_vectors_float32, "context_vectors.float64", None),
    ("self_attention_v1", mutants.SelfAttention_v1_no_scaling, "self_attention_v1.notes", "missing_scaling"),
    ("self_attention_v1", mutants.SelfAttention_v1_no_scaling, "self_attention_v1.shapes", "missing_scaling"),
    ("self_attention_v1", mutants.SelfAttention_v1_scale_d_in, "self_attention_v1.notes", "scale_by_d_in"),
    ("self_attention_v1", mutants.SelfAttention_v1_scale_d_in, "self_attention_v1.shapes", "scale_by_d_in"),
    ("self_attention_v1", mutants.SelfAttention_v1_dim0, "self_attention_v1.shapes", "softmax_wrong_dim"),
    ("self_attention_v1", mutants.SelfAttention_v1_swapped, "self_attention_v1.shapes", "query_key_swapped"),
    # Issue 41: what the graph shows is named: used but cut (detached, no_grad), or not used at all (a bias dropped).
    ("self_attention_v1", mutants.SelfAttention_v1_detached, "self_attention_v1.properties", "parameter_detached"),
    ("self_attention_v1", mutants.SelfAttention_v1_sdpa, "self_attention_v1.from_scratch", None),
    ("self_attention_v2", mutants.SelfAttention_v2_notes_text, "self_attention_v2.notes", "linear_as_matrix"),
    ("self_attention_v2", mutants.SelfAttention_v2_weight_matrix, "self_attention_v2.shapes", "linear_as_matrix"),
    ("self_attention_v2", mutants.SelfAttention_v2_bias_dropped, "self_attention_v2.shapes", None),
    ("self_attention_v2", mutants.SelfAttention_v2_bias_dropped, "self_attention_v2.properties", "parameter_unused"),
    ("self_attention_v2", mutants.SelfAttention_v2_no_scaling, "self_attention_v2.shapes", "missing_scaling"),
    ("self_attention_v2", mutants.SelfAttention_v2_dim0, "self_attention_v2.notes", "softmax_wrong_dim"),
    ("self_attention_v2", mutants.SelfAttention_v2_swapped, "self_attention_v2.shapes", "query_key_swapped"),
    ("self_attention_v2", mutants.SelfAttention_v2_no_grad, "self_attention_v2.properties", "parameter_detached"),
    ("self_attention_v2", mutants.SelfAttention_v2_normaliser_no_grad, "self_attention_v2.properties",
     "forward_step_detached"),
    ("self_attention_v2", mutants.SelfAttention_v2_sdpa, "self_attention_v2.from_scratch", None),
    # Issue 58: what each module holds decides the advice: v1 and v2 hold no buffer.
    ("self_attention_v1", mutants.SelfAttention_v1_weights_normalised_in_forward, "self_attention_v1.state",
     "parameters_changed_by_forward"),
    ("self_attention_v2", mutants.SelfAttention_v2_layers_in_forward, "self_attention_v2.device",
     "forward_tensor_on_cpu"),
    ("transfer_weights", mutants.load_copy_untransposed, "transfer_weights.notes", "weights_not_transposed"),
    # On other sizes too: a name must reproduce every failing case (issue 41). The untransposed copy raises on
    # non-square sizes with the numbers only it gives (its square run copies the weight as it is), and a square
    # case, where a reshape gives the same weight, lists both: the one every case holds is named (issue 58).
    ("transfer_weights", mutants.load_copy_untransposed, "transfer_weights.shapes", "weights_not_transposed"),
    ("transfer_weights", mutants.load_parameter_untransposed, "transfer_weights.notes", "weights_not_transposed"),
    ("transfer_weights", mutants.load_mixed_up, "transfer_weights.shapes", "weights_mixed_up"),
    # The book's own answer: right numbers, but v1's new Parameters are views of v2's weights (exercise 02-3 asks
    # for a copy, as its text says).
    ("transfer_weights", mutants.load_book, "transfer_weights.copies", "aliased_not_copied"),
    ("transfer_weights", mutants.load_new_parameters, "transfer_weights.copies", "parameters_replaced"),
    ("transfer_weights", mutants.load_copy_without_no_grad, "transfer_weights.notes", "copy_without_no_grad"),
    # requires_grad switched off to copy and left off: v1 can no longer be trained (12q's qy-tw-13 kept every point).
    ("transfer_weights", mutants.load_frozen, "transfer_weights.copies", "parameters_left_frozen"),
    # 12s's sy-tw-13: torch.set_grad_enabled(False) and never back on kept every point.
    ("transfer_weights", mutants.load_grad_left_off, "transfer_weights.copies", "grad_mode_left_off"),
    ("transfer_weights", mutants.load_unfrozen_by_the_copy, "transfer_weights.copies",
     "copy_recorded_into_parameter"),
    ("transfer_weights", mutants.load_transposing_v2_in_place, "transfer_weights.shapes", None),
    ("transfer_weights", mutants.load_returns_copies, "transfer_weights.notes", None),
    # Issue 34: reshape in place of .T (the shapes match) is named for what it is, and a function that fills sa_v1
    # without returning it loses the public check that says it must.
    ("transfer_weights", mutants.load_reshape, "transfer_weights.notes", "reshape_not_transpose"),
    ("transfer_weights", mutants.load_reshape, "transfer_weights.shapes", "reshape_not_transpose"),
    ("transfer_weights", mutants.load_no_return, "transfer_weights.returns", None),
    # A naive softmax over the last axis has no dim parameter: no hint about one.
    ("softmax_naive", mutants.softmax_naive_last_axis, "softmax_naive.random", "softmax_sum_wrong_axis"),
]


@pytest.mark.parametrize(
    ("exercise_id", "student", "check_id", "misconception"),
    MISTAKES,
    ids=[f"{student.__name__}-{check_id.split('.')[-1]}" for _, student, check_id, _ in MISTAKES],
)
def test_mistake_loses_points_and_is_named(exercise_id, student, check_id, misconception):
    for seed in SEEDS:
        results = run(exercise_id, student, seed=seed)
        assert score(results) < EXERCISES_BY_ID[exercise_id].points
        assert results[check_id].status != PASSED, f"seed {seed}"
        assert results[check_id].misconception == misconception, f"seed {seed}: {results[check_id].message}"


def not_implemented(*args, **kwargs):
    raise NotImplementedError


class SelfAttentionV1Stub(mutants.V1Base):
    """The notebook's stub: the constructor is given, forward is not written yet."""

    def forward(self, x):
        raise NotImplementedError


class SelfAttentionV2Stub(mutants.V2Base):
    def forward(self, x):
        raise NotImplementedError


STUBS = {"self_attention_v1": SelfAttentionV1Stub, "self_attention_v2": SelfAttentionV2Stub}


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_stubs_earn_nothing(exercise_id):
    student = STUBS.get(exercise_id, not_implemented)
    results = run(exercise_id, student)
    assert score(results) == 0
    assert all("NotImplementedError" in r.message for r in results.values())


def test_transfer_that_changes_nothing_earns_nothing():
    assert score(run("transfer_weights", lambda sa_v1, sa_v2: None)) == 0


def test_mistakes_are_named_only_where_they_apply():
    # A correct rewrite never gets a misconception, and an unrelated bug gets none either.
    for exercise_id, student in CORRECT:
        assert all(r.misconception is None for r in run(exercise_id, student).values())
    results = run("self_attention_v1", mutants.SelfAttention_v1_detached)
    assert {r.misconception for r in results.values()} == {None, "parameter_detached"}  # the graph's fact, only


def test_public_softmax_check_shows_the_notes_numbers():
    result = run("softmax_naive", mutants.softmax_naive_divide_by_sum)["softmax_naive.notes"]
    assert any("0.1385" in line and "0.2379" in line for line in result.details)


def test_public_context_check_shows_the_row_of_the_largest_difference():
    """Both sides show the same stretch of the notes' context vectors: the row where they differ most (issue 41)."""
    result = run("context_vectors", mutants.context_vectors_wrong_dim)["context_vectors.notes"]
    inputs = torch.tensor(NOTES_INPUTS)
    expected, got = solutions.context_vectors(inputs), mutants.context_vectors_wrong_dim(inputs)
    row = int((expected - got).abs().amax(dim=1).argmax())
    shown = {line.split(":")[0].strip(): line for line in result.details if line.startswith(("expected", "got"))}
    for side, values in (("expected", expected), ("got", got)):
        assert f"from index ({row}, 0)" in shown[side]
        assert ", ".join(f"{value:.4f}" for value in values[row].tolist()) in shown[side]


@pytest.mark.parametrize(("exercise_id", "student", "check_id", "misconception"), MISTAKES[::3])
def test_hidden_messages_show_no_values(exercise_id, student, check_id, misconception):
    for result in run(exercise_id, student).values():
        if result.hidden:
            assert not result.details and result.heatmap is None
            assert not re.search(r"\d\.\d{3}", result.message), result.message


# ---------------------------------------------------------------------------------------------
# How the checks behave: deterministic cases, plain probe data, silence, the notebook's RNG untouched


def is_plain(value):
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(is_plain(v) for v in value)
    return value is None or isinstance(value, bool | int | float | str | torch.Tensor)


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_cases_are_deterministic_and_probes_return_plain_data(exercise_id):
    namespace = {EXERCISES_BY_ID[exercise_id].names[0]: reference(exercise_id)}
    for check in catalog.checks_of(exercise_id):
        cases = cases_for(check, 7)
        assert cases == cases_for(check, 7)
        assert is_plain(cases)
        for case in cases:
            data = run_probe(check.probe, namespace, case)
            assert "error" not in data, data
            assert is_plain(data), check.id
            # What crosses from a sandboxed probe process decodes to a verdict that is the same.
            (sent,) = FrameReader().feed(encode({"event": "probe", "data": data}))
            assert check.judge(sent["data"], case, check.expect(sent["data"], case)).passed, check.id


def test_hidden_shapes_are_the_ones_the_brief_asks_for():
    for seed in range(50):
        v1_cases = cases_for(catalog.CHECKS_BY_ID["self_attention_v1.shapes"], seed)
        v2_cases = cases_for(catalog.CHECKS_BY_ID["self_attention_v2.shapes"], seed)
        assert all(c["d_in"] != c["d_out"] and c["d_out"] >= 2 for c in v1_cases)
        assert v2_cases[0]["d_in"] == v2_cases[0]["d_out"]  # where x @ W.weight runs and can be named
        assert any(c["num_tokens"] > 16 for c in v1_cases + v2_cases)
        assert any(c["dtype"] == "float64" for c in v1_cases) and any(c.get("qkv_bias") for c in v2_cases)
        transfer_cases = cases_for(catalog.CHECKS_BY_ID["transfer_weights.shapes"], seed)
        assert any(c["d_in"] == c["d_out"] for c in transfer_cases)
        assert any(c["d_in"] != c["d_out"] for c in transfer_cases)


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_checks_are_silent_and_leave_the_notebook_rng_alone(exercise_id, capfd):
    torch.manual_seed(42)
    untouched = torch.rand(4)
    torch.manual_seed(42)
    run(exercise_id, reference(exercise_id))
    assert torch.equal(torch.rand(4), untouched)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize("exercise_id", ("self_attention_v1", "self_attention_v2"))
def test_the_probes_build_under_the_cpu_stream_of_manual_seed_and_seed_no_accelerator(exercise_id, monkeypatch):
    """The module a probe builds starts with the weights torch.manual_seed(init_seed) gives the class, and no
    accelerator backend is seeded for it (torch.manual_seed formats a stack trace per backend while none is
    initialised: a millisecond or more per case in a grading child)."""
    from autograder.course.n02_trainable_self_attention.ex1_self_attention.probe import build_module

    accelerator_seeds = []
    for backend in (torch.cuda, torch.xpu, torch.mps):
        monkeypatch.setattr(backend, "manual_seed_all" if hasattr(backend, "manual_seed_all") else "manual_seed",
                            lambda seed: accelerator_seeds.append(seed))
    name = EXERCISES_BY_ID[exercise_id].names[0]
    student = reference(exercise_id)
    for case in cases_for(catalog.CHECKS_BY_ID[f"{exercise_id}.shapes"], DEFAULT_SEED):
        module = build_module(name, {name: student}, case)
        args = (case["d_in"], case["d_out"]) + ((case["qkv_bias"],) if "qkv_bias" in case else ())
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(case["init_seed"])  # what torch.manual_seed does on the CPU
            expected = student(*args)
        built = {key: value.double() for key, value in module.state_dict().items()}
        assert built.keys() == expected.state_dict().keys()
        assert all(torch.equal(built[key], value.double()) for key, value in expected.state_dict().items())
    assert accelerator_seeds == []


def test_transfer_does_not_need_the_students_classes():
    # Only the function is passed: the probe builds its own stand-ins for v1 and v2.
    results = run("transfer_weights", solutions.load_v2_weights_into_v1)
    assert all(r.status == PASSED for r in results.values())


# ---------------------------------------------------------------------------------------------
# The reference functions the checks compare with, over random shapes

shapes = st.lists(st.integers(1, 6), min_size=1, max_size=3)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, scale=st.sampled_from([1.0, 10.0, 1000.0]), seed=st.integers(0, 2**16), data=st.data())
def test_softmax_stable_matches_torch_and_stays_finite(shape, scale, seed, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = (torch.rand(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1) * scale
    got = solutions.softmax_stable(x, dim=dim)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, torch.softmax(x, dim=dim))
    torch.testing.assert_close(got.sum(dim=dim), torch.ones_like(got.sum(dim=dim)))


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_softmax_naive_matches_torch_on_moderate_vectors(length, seed):
    x = torch.rand(length, generator=torch.Generator().manual_seed(seed)) * 8 - 4
    torch.testing.assert_close(solutions.softmax_naive(x), torch.softmax(x, dim=0))


@settings(max_examples=30, deadline=None)
@given(num_tokens=st.integers(1, 20), d=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_context_vectors_are_convex_combinations_of_the_inputs(num_tokens, d, seed):
    inputs = torch.rand(num_tokens, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 4 - 2
    context = solutions.context_vectors(inputs)
    assert context.shape == inputs.shape
    assert (context >= inputs.min(dim=0).values - 1e-12).all() and (context <= inputs.max(dim=0).values + 1e-12).all()
    torch.testing.assert_close(context, torch.softmax(inputs @ inputs.T, dim=-1) @ inputs)


@settings(max_examples=25, deadline=None)
@given(num_tokens=st.integers(1, 20), d_in=st.integers(1, 8), d_out=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_v1_and_v2_match_the_functional_attention_and_transfer_makes_them_equal(num_tokens, d_in, d_out, seed):
    torch.manual_seed(seed)
    sa_v1, sa_v2 = solutions.SelfAttention_v1(d_in, d_out), solutions.SelfAttention_v2(d_in, d_out)
    x = torch.rand(num_tokens, d_in)
    v1_weights = {f"{name}.weight": getattr(sa_v1, name).T for name in ("W_query", "W_key", "W_value")}
    torch.testing.assert_close(sa_v1(x), attention(x, v1_weights, causal=False))
    torch.testing.assert_close(sa_v2(x), attention(x, dict(sa_v2.state_dict()), causal=False))
    solutions.load_v2_weights_into_v1(sa_v1, sa_v2)
    torch.testing.assert_close(sa_v1(x), sa_v2(x))


def test_a_function_without_dim_gets_no_hint_about_dim():
    """softmax_naive takes no dim and has no maximum: the hint speaks of the axis its sum runs along instead."""
    results = run("softmax_naive", mutants.softmax_naive_last_axis)
    failed = [result for result in results.values() if result.status != PASSED]
    assert failed and all(result.misconception not in ("softmax_dim_ignored", "max_and_sum_axes_differ")
                          for result in failed)
    assert all("dim" not in result.hint.replace("dimension", "") for result in failed)


def test_returning_nothing_loses_only_the_returns_check_which_is_public():
    results = run("transfer_weights", mutants.load_no_return)
    failed = {check_id for check_id, result in results.items() if result.status != PASSED}
    assert failed == {"transfer_weights.returns"}
    assert not results["transfer_weights.returns"].hidden
    assert "sa_v1" in results["transfer_weights.returns"].message
