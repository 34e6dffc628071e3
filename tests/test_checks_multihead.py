"""The checks of notebook 04: full marks for the reference and the book, named mistakes for the rest."""

import json
import re
from pathlib import Path

import pytest
import torch
from check_helpers import assert_full_marks, results_by_id, score
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import multihead as mutants

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.checking.probing import ProbeError, as_count
from autograder.course import catalog, variants
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.n04_multi_head_attention.ex1_wrapper import declaration as ex1_wrapper
from autograder.course.n04_multi_head_attention.ex2_split_merge import declaration as ex2_split_merge
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention import declaration as ex3_multi_head_attention
from autograder.course.n04_multi_head_attention.ex4_torch_equivalence import declaration as ex4_torch_equivalence
from autograder.course.n04_multi_head_attention.ex5_parameter_counts import declaration as ex5_parameter_counts
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.probe import counted_module
from autograder.running.runner import DEFAULT_SEED, cases_for, probe_exercise
from devtools import student_variants as students

EXERCISE_IDS = (
    "mha_wrapper",
    "two_dimensional_wrapper",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "torch_equivalence",
    "parameter_counts",
)
SEEDS = (DEFAULT_SEED, 0, 1, 2, 3)
SEEDED = json.loads((Path(__file__).parent / "seeded_outputs.json").read_text(encoding="utf-8"))


def namespace_for(exercise_id, student):
    return {EXERCISES_BY_ID[exercise_id].names[0]: student}


def run(exercise_id, student, seed=DEFAULT_SEED, lang="en", include_hidden=True):
    return results_by_id(exercise_id, namespace_for(exercise_id, student), seed=seed, lang=lang,
                         include_hidden=include_hidden)


def reference(exercise_id):
    return getattr(solutions, EXERCISES_BY_ID[exercise_id].names[0])


# ---------------------------------------------------------------------------------------------
# Full marks, and fast


CORRECT = [
    ("mha_wrapper", mutants.WrapperBook),
    ("mha_wrapper", mutants.WrapperAppendLoop),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_book),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_keywords),
    ("split_heads", mutants.split_heads_book),
    ("split_heads", mutants.split_heads_reshape_permute),
    ("split_heads", mutants.split_heads_unflatten),
    ("merge_heads", mutants.merge_heads_book),
    ("merge_heads", mutants.merge_heads_reshape),
    ("merge_heads", mutants.merge_heads_flatten),
    ("multi_head_attention", mutants.MHABook),
    ("multi_head_attention", mutants.MHAReorderedInit),
    ("multi_head_attention", mutants.MHAEinsum),
    ("padding_mask", mutants.MHABook),
    ("padding_mask", mutants.MHAReorderedInit),
    ("padding_mask", mutants.MHAEinsum),
    # Padding filled after the causal -inf: queries that see only padding get other (finite) weights, which
    # carry no information; every other output is the reference's.
    ("padding_mask", mutants.MHAPaddingAfterCausal),
    # Issue 58: the mask flipped on a copy, or a new bool mask: the caller's attention_mask is left as it was.
    ("padding_mask", mutants.MHAPaddingMaskCloned),
    ("padding_mask", mutants.MHAPaddingNewBoolMask),
    # Issue 58: edits of tensors out of every graph under no_grad, and other fills: the no_grad rule spares them.
    ("padding_mask", mutants.MHAPaddingWhere),
    ("padding_mask", mutants.MHAPaddingAdditive),
    ("padding_mask", mutants.MHAPaddingMaskBuiltNoGrad),
    ("multi_head_attention", mutants.MHAPaddingMaskCloned),
    ("torch_equivalence", mutants.to_torch_multihead_book),
    ("parameter_counts", mutants.count_parameters_book),
    ("parameter_counts", mutants.count_parameters_loop),
]


@pytest.mark.parametrize(("exercise_id", "student"), CORRECT, ids=lambda v: getattr(v, "__name__", v))
def test_correct_implementations_earn_full_marks(exercise_id, student):
    for seed in SEEDS:
        assert_full_marks(exercise_id, run(exercise_id, student, seed=seed), seed)


# ---------------------------------------------------------------------------------------------
# Mistakes: the right checks fail, with the right misconception or message

ALL_MHA = {"notes", "reference", "properties"}
# A wrapper whose output has another shape fails every check of its contract too: nothing else can be judged.
WRAPPER_SHAPE = {"notes", "shapes", "structure", "modes", "device", "properties"}
ALL_PADDING = {"example", "hidden"}

# (exercise, student, checks that must fail (suffixes), misconception named, or a fragment of the message)
MISTAKES = [
    ("mha_wrapper", mutants.WrapperTokenAxis, WRAPPER_SHAPE, "heads_on_token_axis"),
    # The notes' cat(dim=0) on a batch joins the heads along the batch axis: "along the token axis" would be false
    # (issue 58), so no name; the shape the check shows says which axis grew.
    ("mha_wrapper", mutants.WrapperFirstAxis, WRAPPER_SHAPE, "the output has the wrong shape"),
    ("mha_wrapper", mutants.WrapperStacked, WRAPPER_SHAPE, "heads_stacked"),
    # Heads in a plain list are missing from state_dict() too: a fresh module loading it keeps its own heads.
    ("mha_wrapper", mutants.WrapperPlainList, WRAPPER_SHAPE | {"state"}, "heads_plain_list"),
    # The structure check promises heads "that start from weights of their own": one module repeated fails it.
    ("mha_wrapper", mutants.WrapperSharedHead, {"notes", "shapes", "structure"}, "heads_shared"),
    ("mha_wrapper", mutants.WrapperReseededHeads, {"structure"}, "heads_identical_init"),
    # Heads of d_out // num_heads features: their expected outputs, run with their own weights, are as narrow.
    ("mha_wrapper", mutants.WrapperNarrowHeads, WRAPPER_SHAPE, "each head is asked for d_out"),
    ("mha_wrapper", mutants.WrapperDropsBias, {"shapes", "structure"}, "pass qkv_bias on"),
    ("mha_wrapper", mutants.WrapperDropsBias, {"shapes", "structure"}, "qkv_bias_ignored"),
    # Its heads (notebook 03's CausalAttention, edited) forgot the scaling and the dropout.
    ("mha_wrapper", mutants.WrapperOfUnscaledHeads, {"notes", "shapes", "modes"}, "fix CausalAttention first"),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_d_out_2, {"notes", "sizes"}, "d_out_is_total"),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_one_head, {"notes", "sizes"},
     "heads_traded_for_width"),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_fixed_sizes, {"notes", "sizes"},
     "the call asked for d_in 5, context_length 8 and dropout 0.5"),
    ("two_dimensional_wrapper", mutants.two_dimensional_wrapper_single_attention, {"notes", "sizes"},
     "expected a MultiHeadAttentionWrapper"),
    ("split_heads", mutants.split_heads_detached, {"notes", "inputs", "shapes", "strided"}, "gradient_cut"),
    ("split_heads", mutants.split_heads_first_head_detached, {"notes", "inputs", "shapes", "strided"}, "gradient_cut"),
    # Issue 58: a step computed with gradients off: the right output, another gradient.
    ("multi_head_attention", mutants.MHANormaliserNoGrad, {"properties"}, "forward_step_detached"),
    ("padding_mask", mutants.MHAPaddingNoGrad, {"example", "hidden"}, "forward_step_detached"),
    # Issue 58: the scores filled IN PLACE with gradients off (or through .data): right values, an unrecorded edit.
    ("padding_mask", mutants.MHAPaddingFilledInPlaceNoGrad, ALL_PADDING, "forward_step_detached"),
    ("padding_mask", mutants.MHAPaddingFilledInPlaceNoGrad, ALL_PADDING, "while gradients were switched off"),
    ("padding_mask", mutants.MHAPaddingFilledThroughData, ALL_PADDING, "forward_step_detached"),
    # Issue 58: every tensor forward is handed is read again after the call, the attention_mask as x.
    ("padding_mask", mutants.MHAPaddingMaskEditedInPlace, ALL_PADDING, "input_edited_in_place"),
    ("padding_mask", mutants.MHAPaddingMaskEditedInPlace, ALL_PADDING, "changed the attention_mask it was given"),
    ("multi_head_attention", mutants.MHAInputScaledInPlace, ALL_MHA, "input_edited_in_place"),
    ("split_heads", mutants.split_heads_view_only, {"notes", "inputs", "shapes", "strided"}, "split_without_transpose"),
    ("split_heads", mutants.split_heads_reshape_only, {"notes", "inputs", "shapes", "strided"},
     "split_without_transpose"),
    ("split_heads", mutants.split_heads_float, {"inputs", "shapes", "strided"}, "keep the input's dtype"),
    ("merge_heads", mutants.merge_heads_no_transpose, {"notes", "inputs", "shapes", "round_trip"},
     "merge_without_transpose"),
    ("merge_heads", mutants.merge_heads_token_axis, {"notes", "inputs", "shapes", "round_trip"}, "heads_on_token_axis"),
    ("merge_heads", mutants.merge_heads_like_the_notes, {"notes", "inputs", "shapes", "round_trip"},
     "the output has the wrong shape"),  # the batch axis, as WrapperFirstAxis: no name
    ("merge_heads", mutants.merge_heads_no_contiguous, {"notes", "inputs", "shapes", "round_trip"},
     "a view failed on a non-contiguous tensor"),
    ("merge_heads", mutants.merge_heads_transpose_in_place, {"notes", "inputs", "shapes", "round_trip"},
     "heads_input_edited_in_place"),
    ("parameter_counts", mutants.count_parameters_children_only, {"kinds", "modules"}, "counts_children_only"),
    ("parameter_counts", mutants.count_parameters_linear_only, {"kinds", "modules"}, "counts_linear_only"),
    ("parameter_counts", mutants.count_parameters_every_module, {"notes", "kinds", "modules"}, "counts_nested_twice"),
    ("parameter_counts", mutants.count_parameters_every_name, {"kinds", "modules"}, "counts_shared_twice"),
    ("multi_head_attention", mutants.MHANoScaling, {"reference"}, "missing_scaling"),
    ("multi_head_attention", mutants.MHAMaskRebound, {"state"}, "state_changed_by_forward"),
    ("multi_head_attention", mutants.MHAHalfPower, {"notes", "reference"}, "scale_wrong_value"),
    ("padding_mask", mutants.MHAPaddingFilledWithZero, ALL_PADDING, "padding_fill_too_high"),
    ("multi_head_attention", mutants.MHATransposedLikeCausal,
     {"notes", "reference", "heads", "structure", "modes", "device", "properties", "state"},
     "these tensors have four axes"),
    ("multi_head_attention", mutants.MHAScaleByDOut, ALL_MHA - {"properties"}, "scale_by_d_out"),
    ("multi_head_attention", mutants.MHAScaleByDIn, ALL_MHA - {"properties"}, "scale_by_d_in"),
    ("multi_head_attention", mutants.MHASoftmaxDim2, ALL_MHA, "softmax_wrong_dim"),
    # It also makes its mask in forward, on the CPU; and the first token, seeing nothing, gets nan gradients.
    ("multi_head_attention", mutants.MHAMaskWithDiagonal, {"notes", "reference", "device", "properties"},
     "mask_includes_diagonal"),
    ("multi_head_attention", mutants.MHAMaskWithDiagonal, {"notes", "reference", "device", "properties"},
     "tensor_created_on_cpu"),
    ("multi_head_attention", mutants.MHAMaskInverted, ALL_MHA, "mask_inverted"),
    ("multi_head_attention", mutants.MHAMaskedFillDropped, ALL_MHA, "masked_fill_result_dropped"),
    ("multi_head_attention", mutants.MHAQueryKeySwapped, ALL_MHA - {"properties"}, "query_key_swapped"),
    ("multi_head_attention", mutants.MHASplitWithoutTranspose, ALL_MHA | {"heads"}, "split_without_transpose"),
    ("multi_head_attention", mutants.MHAMergeWithoutTranspose, ALL_MHA | {"heads"}, "merge_without_transpose"),
    ("multi_head_attention", mutants.MHAMissingOutProj, ALL_MHA, "missing_out_proj"),
    ("multi_head_attention", mutants.MHAPerHeadLoop, {"heads"}, "loop_over_heads"),
    ("multi_head_attention", mutants.MHADataQueries, {"properties"}, "no gradient reaches W_query.weight"),
    # head_dim first in the split and in the merge: two knobs at once, no single variant reproduces it.
    ("multi_head_attention", mutants.MHAHeadDimFirst, {"reference", "heads"}, "changed another head's output"),
    ("multi_head_attention", mutants.MHAHeadDimFirst, {"reference", "heads"}, "split_wrong_axes"),
    ("multi_head_attention", mutants.MHANoContiguous,
     {"reference", "properties", "heads", "structure", "modes", "device", "state"},
     "a view failed on a non-contiguous tensor"),
    # The padding step: the book's forward (no attention_mask) and the ways of getting the padding wrong
    ("padding_mask", mutants.MHABookWithoutPadding, ALL_PADDING, "forward takes no attention_mask yet"),
    ("padding_mask", mutants.MHAPaddingNegInf, ALL_PADDING, "padding_neg_inf"),
    # Issue 34: the mask on the query axis is not "attention_mask not applied"; a padding view with the notebook's
    # batch size runs on the example's batch of 2 and fails on another.
    ("padding_mask", mutants.MHAPaddingQueryAxis, ALL_PADDING, "padding_query_axis"),
    ("padding_mask", mutants.MHAPaddingGlobalBatch, {"hidden"}, "size_from_notebook"),
    ("split_heads", mutants.split_heads_head_dim_first, {"notes", "inputs", "shapes", "strided"}, "split_wrong_axes"),
    ("padding_mask", mutants.MHAPaddingIgnored, ALL_PADDING, "padding_ignored"),
    ("padding_mask", mutants.MHAPaddingInverted, ALL_PADDING, "padding_inverted"),
    # A wrong forward also costs the padding checks, which run the same forward with a mask
    ("padding_mask", mutants.MHANoScaling, {"hidden"}, "missing_scaling"),
    ("padding_mask", mutants.MHAScaleByDOut, ALL_PADDING, "scale_by_d_out"),
    ("padding_mask", mutants.MHAScaleByDIn, ALL_PADDING, "scale_by_d_in"),
    ("padding_mask", mutants.MHASoftmaxDim2, ALL_PADDING, "softmax_wrong_dim"),
    ("padding_mask", mutants.MHAMaskWithDiagonal, ALL_PADDING, "mask_includes_diagonal"),
    ("padding_mask", mutants.MHAMaskInverted, ALL_PADDING, "mask_inverted"),
    ("padding_mask", mutants.MHAMaskedFillDropped, ALL_PADDING, "masked_fill_result_dropped"),
    ("padding_mask", mutants.MHAQueryKeySwapped, ALL_PADDING, "query_key_swapped"),
    ("padding_mask", mutants.MHASplitWithoutTranspose, ALL_PADDING, "split_without_transpose"),
    ("padding_mask", mutants.MHAMergeWithoutTranspose, ALL_PADDING, "merge_without_transpose"),
    ("padding_mask", mutants.MHAMissingOutProj, ALL_PADDING, "missing_out_proj"),
    ("padding_mask", mutants.MHAHeadDimFirst, {"hidden"}, "split_wrong_axes"),
    ("padding_mask", mutants.MHANoContiguous, {"hidden"}, "a view failed on a non-contiguous tensor"),
    ("torch_equivalence", mutants.to_torch_multihead_key_first, {"notes", "shapes"}, "in_proj_order"),
    ("torch_equivalence", mutants.to_torch_multihead_transposed, {"notes", "shapes"}, "transposed matrices"),
    ("torch_equivalence", mutants.to_torch_multihead_sequence_first, {"notes", "shapes"}, "batch_first on"),
    ("torch_equivalence", mutants.to_torch_multihead_forgets_out_bias, {"notes", "shapes"}, "out_proj's bias"),
    ("torch_equivalence", mutants.to_torch_multihead_no_dropout, {"shapes"}, "dropout probability"),
    ("torch_equivalence", mutants.to_torch_multihead_float32, {"shapes"}, "torch.float64"),
    ("torch_equivalence", mutants.to_torch_multihead_no_check, {"shapes"}, "must raise ValueError"),
    ("torch_equivalence", mutants.to_torch_multihead_identity_check, {"shapes"}, "raised ValueError"),
    ("torch_equivalence", mutants.to_torch_multihead_shared_out_proj, {"notes", "shapes"},
     "weights_shared_with_source"),
    # Issue 58: the weights of the module it is handed are read again after the call, as every tensor argument.
    ("torch_equivalence", mutants.to_torch_multihead_out_proj_copied_backwards, {"notes", "shapes"},
     "your to_torch_multihead changed the mha it was given"),
    ("parameter_counts", mutants.count_parameters_state_dict, {"notes", "kinds", "modules"}, "counts_state_dict"),
    ("parameter_counts", mutants.count_parameters_with_buffers, {"notes", "kinds", "modules"}, "counts_buffers"),
    ("parameter_counts", mutants.count_parameters_all, {"kinds", "modules"}, "counts_frozen"),
    ("parameter_counts", mutants.count_parameters_as_string, {"notes", "kinds", "modules"}, "expected a whole number"),
    # Named from the exception only because the mistake's own variant raises the same one on the case.
    ("merge_heads", mutants.merge_heads_no_contiguous, {"notes", "shapes", "round_trip", "inputs"},
     "view_after_transpose"),
    ("multi_head_attention", mutants.MHANoContiguous,
     {"reference", "properties", "heads", "structure", "modes", "device", "state"}, "view_after_transpose"),
    ("split_heads", mutants.split_heads_true_division, {"notes", "shapes", "strided", "inputs"}, "head_dim_float"),
    ("multi_head_attention", mutants.MHAHeadDimFloat,
     {"notes", "reference", "properties", "heads", "structure", "modes", "device", "state"}, "head_dim_float"),
    ("padding_mask", mutants.MHAHeadDimFloat, ALL_PADDING, "head_dim_float"),
]


@pytest.mark.parametrize(("exercise_id", "student", "failing", "expected"), MISTAKES,
                         ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.slow
def test_mistakes_lose_the_right_checks_and_are_named(exercise_id, student, failing, expected):
    for seed in SEEDS:
        results = run(exercise_id, student, seed=seed)
        failed = {check_id.split(".", 1)[1]: r for check_id, r in results.items() if r.status != PASSED}
        assert set(failed) == failing, f"seed {seed}"
        assert score(results) < EXERCISES_BY_ID[exercise_id].points
        if re.fullmatch(r"[a-z_]+", expected):
            assert expected in {r.misconception for r in failed.values()}, f"seed {seed}"
        else:
            assert any(expected in r.message for r in failed.values()), f"seed {seed}"


# Forwards whose only fault is the padding step: the book's forward(self, x) among them.
PADDING_ONLY = [mutants.MHABookWithoutPadding, mutants.MHAPaddingNegInf, mutants.MHAPaddingIgnored,
                mutants.MHAPaddingInverted]


@pytest.mark.parametrize("student", PADDING_ONLY, ids=lambda v: v.__name__)
def test_a_forward_without_the_padding_step_keeps_every_multi_head_attention_point(student):
    for seed in SEEDS:
        assert_full_marks("multi_head_attention", run("multi_head_attention", student, seed=seed), seed)
        padding = run("padding_mask", student, seed=seed)
        assert score(padding) == 0, f"seed {seed}"


# Mistakes whose reach depends on the sizes drawn (head_dim from d_in is right whenever the two agree; a squeeze only
# bites on a batch of one): the check that shows them, and the message, on every seed.
LOCATED = [
    (mutants.MHAHeadDimFromInput, "multi_head_attention.reference", "but the tensor holds"),
    (mutants.MHASqueezed, "multi_head_attention.reference", "the numbers are right"),
    (mutants.MHAValuesFromKeys, "multi_head_attention.reference", "what reaches out_proj is not"),
    (mutants.MHAResidualAdded, "multi_head_attention.reference", "goes wrong at out_proj or after it"),
]


@pytest.mark.parametrize(("student", "check_id", "fragment"), LOCATED, ids=lambda v: getattr(v, "__name__", None))
def test_faults_without_a_name_are_located(student, check_id, fragment):
    for seed in SEEDS:
        results = run("multi_head_attention", student, seed=seed)
        assert results[check_id].status != PASSED, f"seed {seed}"
        assert fragment in results[check_id].message, f"seed {seed}: {results[check_id].message}"


class WrapperHeadsElsewhere(torch.nn.Module):
    """12r's rz-mw-11: the heads registered, in an nn.ModuleList, under another name than the promised `heads`."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.attn_heads = torch.nn.ModuleList(
            [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.attn_heads], dim=-1)


def test_heads_registered_under_another_name_are_told_one_thing_and_never_unregistered():
    for lang in ("en", "zh"):
        results = run("mha_wrapper", WrapperHeadsElsewhere, lang=lang, include_hidden=False)
        failing = [result for result in results.values() if result.status != PASSED]
        assert len(failing) > 2
        told = catalog.MESSAGES["mha_wrapper.no_heads"][lang]
        assert all(told in result.message for result in failing), [result.message for result in failing]
        assert not any(catalog.MESSAGES["contract.heads_not_registered"][lang][:20] in result.message
                       for result in results.values())


def test_builtin_attention_is_refused_even_when_its_numbers_are_right():
    results = run("multi_head_attention", mutants.MHAWithSDPA)
    assert results["multi_head_attention.notes"].status == PASSED
    assert results["multi_head_attention.reference"].status == PASSED
    heads = results["multi_head_attention.heads"]
    assert heads.status != PASSED
    assert "scaled_dot_product_attention" in heads.message


def test_a_misconception_is_only_named_for_a_check_it_explains():
    """Unscaled attention cannot show on the notes' head_dim = 1: the public check passes, hidden ones name it."""
    results = run("multi_head_attention", mutants.MHANoScaling)
    assert results["multi_head_attention.notes"].status == PASSED
    assert results["multi_head_attention.reference"].misconception == "missing_scaling"


# ---------------------------------------------------------------------------------------------
# Feedback: public checks show values, hidden checks never do; both languages


def test_public_failures_show_expected_and_got_hidden_ones_do_not():
    results = run("mha_wrapper", mutants.WrapperTokenAxis)
    assert results["mha_wrapper.notes"].details
    assert not results["mha_wrapper.shapes"].details
    counts = run("parameter_counts", mutants.count_parameters_state_dict)
    # the student's own count, never the expected one: exercise 3.3 asks for that number as a prediction
    assert re.search(r"\d", counts["parameter_counts.notes"].message)
    assert "2,360,064" not in counts["parameter_counts.notes"].message
    assert not re.search(r"\d", counts["parameter_counts.modules"].message)


def test_a_public_padding_failure_shows_the_mask_of_its_case_and_a_hidden_one_does_not():
    """Which tokens are padded decides what is right: the failing public case's attention_mask is shown with its
    input's shape (the first public case pads both sequences, the notes' only the second)."""
    results = run("padding_mask", mutants.MHAPaddingFilledWithZero)
    details = results["padding_mask.example"].details
    assert "attention_mask: [[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]]" in details, details
    assert "attention_mask" not in results["padding_mask.hidden"].details
    zh = run("padding_mask", mutants.MHAPaddingFilledWithZero, lang="zh")["padding_mask.example"].details
    assert "attention_mask：[[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]]" in zh, zh


def test_feedback_in_chinese():
    results = run("padding_mask", mutants.MHAPaddingNegInf, lang="zh")
    message = results["padding_mask.hidden"].full_message
    assert "只能看到 padding 的 query 得到了 NaN" in message
    assert re.search(r"[\u4e00-\u9fff]", results["padding_mask.example"].message)
    book = run("padding_mask", mutants.MHABookWithoutPadding, lang="zh")
    assert "forward 还不接受 attention_mask" in book["padding_mask.example"].message


def test_the_notes_seeded_outputs_come_out_of_the_probes():
    """Seed 123 and the notes' batch reproduce the numbers printed in the notes (tests/seeded_outputs.json)."""
    wrapper = probe_exercise("mha_wrapper", namespace_for("mha_wrapper", reference("mha_wrapper")),
                             include_hidden=False)["mha_wrapper.notes"][0]["out"]
    assert torch.allclose(wrapper[0, 0], printed("mha_wrapper")[0, 0], atol=1e-4)
    mha = probe_exercise("multi_head_attention", namespace_for("multi_head_attention", solutions.MultiHeadAttention),
                         include_hidden=False)["multi_head_attention.notes"][0]["out"]
    assert torch.allclose(mha[0, 0], printed("multi_head_attention")[0, 0], atol=1e-4)


def printed(entry_id):
    """The output the notes print for `entry_id`, as tests/seeded_outputs.json records it."""
    return torch.tensor(next(entry["expected"] for entry in SEEDED["printed"] if entry["id"] == entry_id))


# ---------------------------------------------------------------------------------------------
# Probes: plain data, no reference, no side effects, silent


def assert_plain(value, path="data"):
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), path
            assert_plain(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            assert_plain(item, f"{path}[{index}]")
    elif isinstance(value, torch.Tensor):
        assert value.device.type == "cpu" and not value.requires_grad, path
    else:
        assert value is None or isinstance(value, bool | int | float | str), f"{path}: {type(value)}"


NOTEBOOK_MODULES = (ex1_wrapper, ex2_split_merge, ex3_multi_head_attention, ex4_torch_equivalence,
                    ex5_parameter_counts)


class Forbidden:
    def __getattr__(self, name):
        raise AssertionError(f"a probe used solutions.{name}")


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_probes_return_plain_data_without_the_reference(exercise_id, monkeypatch):
    with_reference = [module for module in NOTEBOOK_MODULES if "solutions" in vars(module)]
    assert with_reference  # split_heads and merge_heads are judged against solutions
    for module in with_reference:  # the judges' reference: a probe must never reach it
        monkeypatch.setattr(module, "solutions", Forbidden())
    records = probe_exercise(exercise_id, namespace_for(exercise_id, reference(exercise_id)))
    for check_id, data_per_case in records.items():
        for data in data_per_case:
            assert "error" not in data, (check_id, data.get("error"))
            assert_plain(data)


@pytest.mark.parametrize("exercise_id", EXERCISE_IDS)
def test_grading_leaves_the_notebook_rng_alone_and_prints_nothing(exercise_id, capfd):
    torch.manual_seed(7)
    expected_next = torch.rand(3)
    torch.manual_seed(7)
    run(exercise_id, reference(exercise_id))
    assert torch.equal(torch.rand(3), expected_next)
    run("padding_mask", mutants.MHAPaddingNegInf)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.slow
def test_judging_mistakes_prints_nothing(capfd):
    for exercise_id, student, _, _ in MISTAKES:
        run(exercise_id, student)
    run("multi_head_attention", mutants.MHAWithSDPA)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize(("value", "count"), [(7, 7), (7.0, 7), (torch.tensor(7), 7)])
def test_counts_may_be_ints_integral_floats_or_one_element_tensors(value, count):
    assert as_count(value) == count


@pytest.mark.parametrize("value", [True, 7.5, "7", [7], torch.tensor([7, 1])])
def test_anything_else_is_not_a_count(value):
    with pytest.raises(ProbeError):
        as_count(value)


def test_hidden_cases_cover_the_edges():
    cases = cases_for(catalog.CHECKS_BY_ID["multi_head_attention.reference"], DEFAULT_SEED)
    assert any(case["num_tokens"] == 1 for case in cases) and any(case["num_tokens"] > 16 for case in cases)
    assert any(case["num_heads"] == 1 for case in cases) and any(case["num_heads"] >= 4 for case in cases)
    assert any(case["dtype"] == "float64" for case in cases)
    for case in cases:
        assert case["d_out"] // case["num_heads"] >= 2
        assert case["d_in"] != case["d_out"] and case["num_tokens"] <= case["context_length"]
    # Every case but the last needs the mask cut to num_tokens; the last is the edge the notes' batch shows, drawn on
    # every seed: a batch of one at context_length (tests/test_hidden_edge_sizes.py).
    assert all(case["num_tokens"] < case["context_length"] for case in cases[:-1])
    assert cases[-1]["num_tokens"] == cases[-1]["context_length"] and cases[-1]["batch"] == 1


# ---------------------------------------------------------------------------------------------
# Properties of the reference the checks compare against

shapes = st.tuples(st.integers(1, 3), st.integers(1, 20), st.integers(1, 4), st.integers(1, 5))


@settings(max_examples=30, deadline=None)
@given(shapes)
def test_split_then_merge_gives_the_input_back(shape):
    b, num_tokens, num_heads, head_dim = shape
    x = torch.randn(b, num_tokens, num_heads * head_dim, dtype=torch.float64)
    heads = solutions.split_heads(x, num_heads)
    assert heads.shape == (b, num_heads, num_tokens, head_dim)
    for head in range(num_heads):
        assert torch.equal(heads[:, head], x[..., head * head_dim:(head + 1) * head_dim])
    assert torch.equal(solutions.merge_heads(heads), x)


@settings(max_examples=25, deadline=None)
@given(shapes, st.data())
def test_functional_reference_matches_the_module_with_padding(shape, data):
    b, num_tokens, num_heads, head_dim = shape
    d_in = data.draw(st.integers(1, 6))
    mask = torch.tensor(data.draw(st.lists(st.lists(st.integers(0, 1), min_size=num_tokens, max_size=num_tokens),
                                           min_size=b, max_size=b)))
    mha = solutions.MultiHeadAttention(d_in, num_heads * head_dim, num_tokens + 1, 0.0, num_heads,
                                       qkv_bias=data.draw(st.booleans())).double()
    x = torch.randn(b, num_tokens, d_in, dtype=torch.float64)
    with torch.no_grad():
        out = mha(x, attention_mask=mask)
    weights = {name: value for name, value in mha.state_dict().items() if name != "mask"}
    assert torch.isfinite(out).all()
    assert torch.allclose(out, variants.attention(x, weights, num_heads=num_heads, attention_mask=mask))
    _, attn_weights = variants.attention(x, weights, num_heads=num_heads, attention_mask=mask, return_weights=True)
    assert torch.allclose(attn_weights.sum(dim=-1), torch.ones(()).double())
    assert (attn_weights.triu(diagonal=1) == 0).all()  # causal even in rows that see only padding


@settings(max_examples=20, deadline=None)
@given(shapes, st.data())
def test_reference_is_causal(shape, data):
    b, num_tokens, num_heads, head_dim = shape
    cut = data.draw(st.integers(0, num_tokens - 1))
    mha = solutions.MultiHeadAttention(3, num_heads * head_dim, num_tokens, 0.0, num_heads)
    x = torch.randn(b, num_tokens, 3)
    changed = x.clone()
    changed[:, cut:] = torch.randn(b, num_tokens - cut, 3)
    with torch.no_grad():
        assert torch.allclose(mha(x)[:, :cut], mha(changed)[:, :cut])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40), st.booleans(), st.booleans()), min_size=1,
                max_size=5), st.integers(1, 64), st.booleans())
def test_the_counted_modules_hold_what_their_specs_say(linears, side, nested):
    layers = [[f"layer{i}", {"kind": "linear", "d_in": d_in, "d_out": d_out, "bias": bias, "frozen": not trainable}]
              for i, (d_in, d_out, bias, trainable) in enumerate(linears)]
    block = {"kind": "module", "buffers": [["mask", [side, side], True]], "children": layers}
    node = {"kind": "module", "children": [["heads", {"kind": "module_list", "items": [block, block]}]]} \
        if nested else block
    sizes = [(d_in * d_out + (d_out if bias else 0), trainable) for d_in, d_out, bias, trainable in linears]
    copies = 2 if nested else 1
    module = counted_module(node)
    assert solutions.count_parameters(module) == copies * sum(size for size, trainable in sizes if trainable)
    assert sum(p.numel() for p in module.parameters()) == copies * sum(size for size, _ in sizes)
    assert sum(b.numel() for b in module.buffers()) == copies * side * side


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 12), st.booleans())
def test_torch_multihead_computes_what_our_module_computes(num_heads, head_dim, num_tokens, qkv_bias):
    d_model = num_heads * head_dim
    mha = solutions.MultiHeadAttention(d_model, d_model, num_tokens, 0.0, num_heads, qkv_bias=qkv_bias).double()
    torch_mha = solutions.to_torch_multihead(mha).eval()
    x = torch.randn(2, num_tokens, d_model, dtype=torch.float64)
    future = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        theirs, _ = torch_mha(x, x, x, attn_mask=future, need_weights=False)
        assert torch.allclose(theirs, mha(x))


def test_a_view_of_a_non_contiguous_input_without_a_transpose_is_not_told_to_call_contiguous_after_transpose():
    """split_heads viewed straight to the head shape has no transpose: the strided check says the input itself is not
    contiguous; merge_heads that transposes and then views is told about .contiguous() after the transpose."""
    strided = run("split_heads", mutants.split_heads_view_only)["split_heads.strided"]
    assert strided.status != PASSED and "the input is not contiguous" in strided.message
    assert "after a transpose" not in strided.message
    merged = run("merge_heads", mutants.merge_heads_no_contiguous)["merge_heads.shapes"]
    assert merged.status != PASSED and "after a transpose" in merged.message


def test_a_name_that_says_transpose_is_no_transpose():
    """The evidence is a transpose in the code, not the word in a function's name."""

    def split_without_transpose(x, num_heads):
        b, num_tokens, d_out = x.shape
        return x.view(b, num_heads, num_tokens, d_out // num_heads)

    strided = run("split_heads", split_without_transpose)["split_heads.strided"]
    assert strided.status != PASSED and "the input is not contiguous" in strided.message


def test_a_causal_fill_that_is_finite_but_too_small_loses_points_and_low_enough_fills_keep_them():
    small, low = (students.multi_head_attention(students.Knobs(fill=fill)) for fill in (-1e4, -1e9))
    public = run("multi_head_attention", small, include_hidden=False)
    assert any(result.status != PASSED for result in public.values())
    assert score(run("multi_head_attention", small)) < EXERCISES_BY_ID["multi_head_attention"].points
    assert score(run("multi_head_attention", low)) == EXERCISES_BY_ID["multi_head_attention"].points


def to_torch_multihead_out_proj_transposed(mha):
    """The reference with one change: out_proj's weight copied transposed (h-te-11)."""
    torch_mha = solutions.to_torch_multihead(mha)
    with torch.no_grad():
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight.T)
    return torch_mha


@pytest.mark.parametrize(("lang", "transposed", "not_copied"), [
    ("en", "out_proj's weight holds mha.out_proj's weight transposed", "not copied"),
    ("zh", "out_proj 的 weight 中放的是 mha.out_proj 的 weight 的转置", "没有从 mha.out_proj 复制"),
])
def test_an_out_proj_weight_copied_transposed_is_said_transposed_not_uncopied(lang, transposed, not_copied):
    # Issue 58 (h-te-11): what the values prove, read from their object: the source's weight is there, transposed.
    results = run("torch_equivalence", to_torch_multihead_out_proj_transposed, lang=lang)
    messages = [r.message for r in results.values() if r.status != PASSED]
    assert messages and all(transposed in m and not_copied not in m for m in messages), messages


def to_torch_multihead_query_rows_scaled(mha):
    """The reference with one change: the query rows of in_proj_weight scaled by 1 / sqrt(head_dim) (a scale
    nn.MultiheadAttention applies itself)."""
    torch_mha = solutions.to_torch_multihead(mha)
    d_out = mha.d_out
    with torch.no_grad():
        torch_mha.in_proj_weight[:d_out].mul_(mha.head_dim ** -0.5)
    return torch_mha


def to_torch_multihead_key_and_value_rows_doubled(mha):
    torch_mha = solutions.to_torch_multihead(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight[mha.d_out:].mul_(2.0)
    return torch_mha


@pytest.mark.parametrize(("lang", "attempt", "said"), [
    ("en", to_torch_multihead_query_rows_scaled,
     "the rows of in_proj_weight for W_query do not hold its weight, while the other two projections' rows do"),
    ("zh", to_torch_multihead_query_rows_scaled, "in_proj_weight 中对应 W_query 的那些行不是它的权重"),
    ("en", to_torch_multihead_key_and_value_rows_doubled,
     "the rows of in_proj_weight for W_key and W_value do not hold their weights, while the third projection's"),
])
def test_the_rows_of_in_proj_weight_that_differ_are_said_by_their_projection(lang, attempt, said):
    # learners_2026_12m z-te-08, after the measure: "does not hold W_query, W_key and W_value's weights" where two of
    # the three blocks are theirs. Read block by block from their tensor.
    results = run("torch_equivalence", attempt, lang=lang)
    messages = [r.message for r in results.values() if r.status != PASSED]
    assert messages and all(said in m for m in messages), messages


class MHAFirstSequencePadding(solutions.MultiHeadAttention):
    """The reference with one change: the first sequence's attention_mask applied to every sequence (h-pm-10)."""

    def forward(self, x, attention_mask=None):
        if attention_mask is not None:
            attention_mask = attention_mask[0].expand_as(attention_mask)
        return super().forward(x, attention_mask)


@pytest.mark.parametrize(("lang", "not_applied"), [("en", "attention_mask not applied"),
                                                   ("zh", "没有应用 attention_mask")])
def test_one_sequences_padding_for_every_sequence_is_not_named_a_mask_not_applied(lang, not_applied):
    # Issue 58 (h-pm-10): "not applied" needs a case that tells it apart; the public check has one (every sequence
    # padded, each its own way), and there the two outputs differ, so no check names it.
    results = run("padding_mask", MHAFirstSequencePadding, lang=lang)
    failed = [r for r in results.values() if r.status != PASSED]
    assert {r.id for r in failed} == {"padding_mask.example", "padding_mask.hidden"}
    assert all(r.misconception != "padding_ignored" and not_applied not in r.full_message for r in failed), [
        r.full_message for r in failed]
    # The control: a mask truly left out keeps its name on both checks.
    ignored = run("padding_mask", mutants.MHAPaddingIgnored, lang=lang)
    assert {r.misconception for r in ignored.values()} == {"padding_ignored"}
