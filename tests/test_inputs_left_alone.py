"""A call leaves every tensor it was handed as it was (issue 58: a forward that rewrote the caller's attention_mask in
place kept full marks, public and hidden, since only x was read again after the call).

probing.arguments_changes reads every tensor argument again after the call; judging.argument_changed says what
changed, its entries counted from the learner's own run. The public check says it first, the hidden one on other
values, and the student kit the same words from its stored vectors.
"""

import re

import pytest
import torch
from check_helpers import results_by_id, score
from mutants import multihead as mutants
from torch.overrides import TorchFunctionMode

from autograder.checking.check_types import PASSED, Evidence
from autograder.checking.judging import argument_changed
from autograder.checking.probing import arguments_changes, input_changes
from autograder.course import catalog
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention.probe import padding_mask
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.runner import DEFAULT_SEED, cases_for

PADDING_POINTS = EXERCISES_BY_ID["padding_mask"].points


def padding(student, lang="en", include_hidden=True):
    return results_by_id("padding_mask", {"MultiHeadAttention": student}, lang=lang, include_hidden=include_hidden)


def first_case_mask(check_id):
    """The attention_mask the check's first case hands forward, as the probe builds it."""
    return padding_mask(cases_for(catalog.CHECKS_BY_ID[check_id], DEFAULT_SEED)[0])


class FirstKeyMarkedReal(mutants.GivenMultiHeadAttention):
    """Marks the first key of every sequence real in the caller's mask (item assignment), then pads with it: only the
    sequences whose first token was padding change, so the count in the message is read from the run, not the
    mask's size."""

    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is None:
                return attn_scores
            kept = attention_mask == 0
            attention_mask[:, 0] = 1
            return attn_scores.masked_fill(kept[:, None, None, :], mutants.padding_fill_value(attn_scores.dtype))

        return mutants._padded_forward(self, x, padded_keys)


# ---------------------------------------------------------------------------------------------
# The hole: a mask rewritten in place


def test_a_mask_rewritten_in_place_fails_the_public_check_and_loses_every_padding_point():
    results = padding(mutants.MHAPaddingMaskEditedInPlace)
    assert {check_id: r.status == PASSED for check_id, r in results.items()} == {
        "padding_mask.example": False, "padding_mask.hidden": False}
    assert not catalog.CHECKS_BY_ID["padding_mask.example"].hidden  # the learner's own check(...) says it first
    assert score(results) == 0 < PADDING_POINTS
    public = results["padding_mask.example"]
    # sub_(1).neg_() flips every entry of the mask it is handed: all of them differ after the call.
    entries = first_case_mask("padding_mask.example").numel()
    assert (f"your forward changed the attention_mask it was given: {entries} of its {entries} entries differ "
            "after the call") in public.message
    assert public.misconception == "input_edited_in_place"
    assert all(r.misconception == "input_edited_in_place" for r in results.values())


def test_the_count_is_read_from_the_learners_run():
    """Only the sequences whose first token was padding change value: the message counts those entries; a case
    whose mask it writes with the values it already held is told it was written, not that its values changed."""
    results = padding(FirstKeyMarkedReal)
    assert score(results) == 0
    for check_id, result in results.items():
        mask = padding_mask(cases_for(catalog.CHECKS_BY_ID[check_id], DEFAULT_SEED)[result.failed_case])
        differ, size = int((mask[:, 0] == 0).sum()), mask.numel()
        if differ:
            assert (f"your forward changed the attention_mask it was given: {differ} of its {size} entries differ "
                    "after the call") in result.message, check_id
            assert result.misconception == "input_edited_in_place"
        else:
            assert ("your forward wrote into the attention_mask it was given: its values are the same after the call"
                    in result.message), check_id
            assert result.misconception is None  # no value changed: nothing proves the caller's tensor edited
    example = results["padding_mask.example"]
    assert "1 of its 12 entries differ" in example.message  # [[1]*6, [0, 0, 1, 1, 1, 1]]: one first token padded


def test_the_message_is_said_in_chinese_too():
    public = padding(mutants.MHAPaddingMaskEditedInPlace, lang="zh", include_hidden=False)["padding_mask.example"]
    entries = first_case_mask("padding_mask.example").numel()
    said = f"你的 forward 修改了传给它的 attention_mask：调用之后，它的 {entries} 个元素中有 {entries} 个与调用之前不同"
    assert said in public.message


@pytest.mark.parametrize("student", [mutants.MHAPaddingMaskCloned, mutants.MHAPaddingNewBoolMask, mutants.MHABook],
                         ids=lambda s: s.__name__)
def test_a_mask_copied_before_its_edit_or_a_new_bool_mask_keeps_full_marks(student):
    results = padding(student)
    assert all(r.status == PASSED and r.misconception is None for r in results.values())
    assert score(results) == pytest.approx(PADDING_POINTS)


def test_x_edited_in_place_is_said_with_its_count_and_named():
    results = results_by_id("multi_head_attention", {"MultiHeadAttention": mutants.MHAInputScaledInPlace})
    notes = results["multi_head_attention.notes"]
    assert notes.status != PASSED and notes.misconception == "input_edited_in_place"
    assert re.search(r"your forward changed the x it was given: (\d+) of its \1 entries differ", notes.message)
    # Its heads are independent: each of the heads probe's calls gets its own x, so the edit is not read as heads
    # mixing.
    assert results["multi_head_attention.heads"].status == PASSED


def test_the_weights_of_the_module_to_torch_multihead_is_handed_are_read_again():
    """The other exercise whose function is handed tensors besides an x: to_torch_multihead reads our module's weights
    and mask, and copying out_proj's weight the wrong way round writes over ours."""
    results = results_by_id("torch_equivalence",
                            {"to_torch_multihead": mutants.to_torch_multihead_out_proj_copied_backwards})
    assert all(r.status != PASSED for r in results.values()) and score(results) == 0
    for check_id, result in results.items():
        d_model = cases_for(catalog.CHECKS_BY_ID[check_id], DEFAULT_SEED)[result.failed_case]["d_model"]
        entries = d_model * d_model  # a fresh layer's random init differs from ours everywhere
        assert (f"your to_torch_multihead changed the mha it was given: {entries} of the {entries} entries of its "
                "out_proj.weight differ after the call") in result.message, check_id
    assert not catalog.CHECKS_BY_ID["torch_equivalence.notes"].hidden
    book = results_by_id("torch_equivalence", {"to_torch_multihead": mutants.to_torch_multihead_book})
    assert all(r.status == PASSED for r in book.values())


class _AlwaysEqual(torch.Tensor):
    """A class a learner swaps onto the caller's mask after editing it: its == answers "equal" to anything."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__eq__:
            return torch.ones(torch.Tensor.as_subclass(args[0], torch.Tensor).shape, dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})


class MaskEditedThenDisguised(mutants.GivenMultiHeadAttention):
    """The hole's forward, which then swaps a class onto the mask whose == says nothing changed."""

    def forward(self, x, attention_mask=None):
        out = mutants.MHAPaddingMaskEditedInPlace.forward(self, x, attention_mask)
        if attention_mask is not None:
            attention_mask.__class__ = _AlwaysEqual
        return out


class _EqualMode(TorchFunctionMode):
    """A mode a learner's forward leaves on: every == answers "equal"."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__eq__:
            return torch.ones(args[0].shape, dtype=torch.bool)
        return func(*args, **(kwargs or {}))


class MaskEditedThenModeLeftOn(mutants.GivenMultiHeadAttention):
    """The hole's forward, which then leaves a mode on whose == says nothing changed."""

    left_on: list[_EqualMode] = []  # the test turns them off again: this process runs other tests after it

    def forward(self, x, attention_mask=None):
        out = mutants.MHAPaddingMaskEditedInPlace.forward(self, x, attention_mask)
        if attention_mask is not None:
            mode = _EqualMode()
            mode.__enter__()
            self.left_on.append(mode)
        return out


def test_a_mode_left_on_cannot_answer_for_the_edited_mask():
    try:
        results = padding(MaskEditedThenModeLeftOn)
    finally:
        while MaskEditedThenModeLeftOn.left_on:
            MaskEditedThenModeLeftOn.left_on.pop().__exit__(None, None, None)
    assert score(results) == 0
    assert all("your forward changed the attention_mask it was given" in r.message for r in results.values())


def test_a_class_swapped_onto_the_edited_mask_cannot_answer_for_it():
    results = padding(MaskEditedThenDisguised)
    assert score(results) == 0
    assert all("your forward changed the attention_mask it was given in place: its class, dtype, device or "
               "requires_grad is not what it was before the call" in r.message for r in results.values())


# ---------------------------------------------------------------------------------------------
# The student kit: the same verdict and words from its stored vectors


@pytest.fixture(scope="module")
def vectors():
    return vectors_from_document(vectors_document())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_student_kit_says_the_same(vectors, lang):
    students = [("padding_mask", "MultiHeadAttention", student) for student in (
        mutants.MHAPaddingMaskEditedInPlace, FirstKeyMarkedReal, mutants.MHAPaddingMaskCloned)]
    students.append(("torch_equivalence", "to_torch_multihead", mutants.to_torch_multihead_out_proj_copied_backwards))
    for exercise_id, name, student in students:
        namespace = {name: student}
        kit = {r.id: r for r in run_public(exercise_id, namespace, vectors, lang)}
        live = results_by_id(exercise_id, namespace, lang=lang, include_hidden=False)
        assert set(kit) == set(live)
        for check_id, result in live.items():
            assert (kit[check_id].status, kit[check_id].misconception, kit[check_id].message) == (
                result.status, result.misconception, result.message), (student.__name__, check_id)


# ---------------------------------------------------------------------------------------------
# The helpers: every tensor argument, each change said as the fact it is


def test_arguments_changes_reads_every_tensor_argument_and_counts_the_entries():
    x, mask = torch.rand(2, 3), torch.tensor([[1, 1, 0], [0, 0, 1]])
    kept_x, kept_mask = x.clone(), mask.clone()

    def forward():
        mask[mask == 0] = 7
        return x * 2

    result, changes = arguments_changes({"x": x, "attention_mask": mask}, forward)
    assert torch.equal(result, kept_x * 2)
    assert changes == [{"argument": "attention_mask", "change": "values", "differ": 3, "size": 6,
                        "shape_before": [2, 3], "shape_after": [2, 3]}]
    assert torch.equal(x, kept_x) and not torch.equal(mask, kept_mask)


@pytest.mark.parametrize(("edit", "kind"), [
    (lambda t: t.unsqueeze_(0), "layout"),
    (lambda t: t.t_(), "layout"),
    (lambda t: t.mul_(1), "written"),
    (lambda t: t.requires_grad_(True), "metadata"),
    (lambda t: t.add_(1), "values"),
    (lambda t: t + 1, ""),
])
def test_each_kind_of_change(edit, kind):
    _, change = input_changes(torch.rand(3, 3), edit)
    assert change == kind


def test_nan_left_as_nan_is_no_change():
    x = torch.tensor([float("nan"), 1.0])
    assert input_changes(x, lambda t: t * 2)[1] == ""


@pytest.mark.parametrize(("change", "key", "named"), [
    ({"change": "values", "differ": 3, "size": 6}, "argument.values_changed", True),
    ({"change": "layout", "shape_before": [2, 3], "shape_after": [1, 2, 3]}, "argument.reshaped", True),
    ({"change": "layout", "shape_before": [3, 3], "shape_after": [3, 3]}, "argument.layout_changed", True),
    ({"change": "metadata"}, "argument.metadata_changed", False),
    ({"change": "written"}, "argument.written", False),
])
def test_argument_changed_names_only_what_the_values_or_layout_prove(change, key, named):
    verdict = argument_changed([{"argument": "attention_mask", **change}], "forward", ("x", "attention_mask"))
    assert verdict is not None and not verdict.passed and verdict.message_key == key
    assert (verdict.misconception, verdict.evidence) == (
        ("input_edited_in_place", Evidence.FACT) if named else (None, None))
    assert verdict.fields["argument"] == "attention_mask" and verdict.fields["caller"] == "forward"


def test_argument_changed_reads_nothing_from_a_name_or_kind_the_probe_does_not_write():
    assert argument_changed([], "forward", ("x",)) is None
    assert argument_changed([{"argument": "{evil}", "change": "values"}], "forward", ("x",)) is None
    assert argument_changed([{"argument": "x", "change": "other"}], "forward", ("x",)) is None
    # Counts and shapes that are no ints are read as nothing, never raised on: no sentence is made of them.
    garbled = {"argument": "x", "change": "values", "differ": "12", "size": 1.5, "shape_before": ["2"],
               "shape_after": None}
    assert argument_changed([garbled], "forward", ("x",)) is None
    reshaped = argument_changed([{**garbled, "change": "layout"}], "forward", ("x",))
    assert reshaped is not None and reshaped.fields["shape_before"] == reshaped.fields["shape_after"] == ()


# ---------------------------------------------------------------------------------------------
# Notebooks 01 and 03 read their input again through the same helper (input_changes)


def context_vectors_normalising_in_place(inputs):
    inputs.div_(inputs.norm(dim=-1, keepdim=True))  # the caller's embeddings are rescaled
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs


def context_vectors_unsqueezing_in_place(inputs):
    inputs.unsqueeze_(0)  # the caller's tensor gains an axis: other layout, same numbers
    weights = torch.softmax(inputs[0] @ inputs[0].T, dim=-1)
    return weights @ inputs[0]


@pytest.mark.parametrize("student", [context_vectors_normalising_in_place, context_vectors_unsqueezing_in_place],
                         ids=lambda f: f.__name__)
def test_context_vectors_edited_inputs_fail_where_the_text_says(student):
    results = results_by_id("context_vectors", {"context_vectors": student})
    failed = [r for r in results.values() if r.status != PASSED]
    assert any(r.cause is not None and r.cause.message_key == "context_vectors.input_changed" for r in failed), [
        (r.id, r.message) for r in failed]


class CausalAttentionScalingX(torch.nn.Module):
    """The notebook's CausalAttention whose forward scales the caller's x in place first: wrong numbers because x
    itself was edited, which the check says as such."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = torch.nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        _, num_tokens, _ = x.shape
        x.mul_(2)
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))
        return weights @ values


def test_causal_attention_with_x_edited_in_place_is_told_so():
    results = results_by_id("causal_attention", {"CausalAttention": CausalAttentionScalingX})
    keys = {r.cause.message_key for r in results.values() if r.status != PASSED and r.cause is not None}
    assert "contract.input_modified" in keys, keys
