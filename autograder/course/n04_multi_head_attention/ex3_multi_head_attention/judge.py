"""Judges of MultiHeadAttention and its padding mask: decide from the probe's data, the case and the reference's
expectations. Imports no reference or declaration: the student kit ships it as it is."""

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import REPRODUCED_BY, compare, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.fitted import name_fill, reproducing_fills, with_fit, with_notebook_scale
from autograder.checking.judging import (
    PADDING_MISCONCEPTIONS,
    argument_changed,
    fitted_fill,
    hidden_keys,
    located_fault,
    mask_family,
    module_gradient_problem,
    returned_weights,
)
from autograder.checking.pictures import merged_block_layout
from autograder.checking.probing import informative_queries
from autograder.checking.torch_recorders import MODES_OFF
from autograder.course.module_contract.judge import state_change
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import (
    MHA_LAYERS,
    MultiHeadCase,
    attention_input,
)
from autograder.course.n04_multi_head_attention.ex3_multi_head_attention.probe import (
    HeadIndependenceRecord,
    MultiHeadRecord,
    VectorisedRecord,
    padding_mask,
)
from autograder.course.shared.inputs import NOTEBOOK_SIZES

__all__ = ["judge_mha", "judge_mha_heads"]

FORWARD_ARGUMENTS = ("x", "attention_mask")  # the tensors the probe hands forward (probe_mha)


def judge_mha(record: MultiHeadRecord, case: MultiHeadCase, expectations: Expectations) -> Verdict:
    """Layers, every tensor argument (x, attention_mask) left alone, then the output on every query that sees a
    real token. Expectations: output, variants; with a padding mask also padding_ignored and padding_inverted (the
    mask left out, the mask flipped), and gradients (the reference's, through the padding step, for the same weights
    and mix)."""
    missing = [layer for layer in MHA_LAYERS if f"{layer}.weight" not in record["state"]]
    if missing:
        return Verdict(False, "multi_head_attention.missing_layers", {"names": ", ".join(missing)})
    changed = argument_changed(record.get("inputs_changed"), "forward", FORWARD_ARGUMENTS)
    if changed is not None:
        return changed
    x, mask, got, want = attention_input(case), padding_mask(case), record["out"], expectations["output"]
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        if mask is None and (stopped_early := returned_weights(got, expectations)) is not None:
            return stopped_early
        return compare(got, want, message_key="multi_head_attention.values", input_shape=tuple(x.shape))
    # A query whose visible keys are all padding carries no information: any finite output is right for it (the
    # fill value and the order of the fills decide what it gets). Every other query is compared.
    shown = informative_queries(mask, got)
    if same(got[shown], want[shown]):
        if torch.isfinite(got[~shown]).all():
            if MODES_OFF in record.get("untracked_edits", ()):  # an edit made with the recorder off: fail closed
                return Verdict(False, "padding_mask.edit_unseen")
            if record.get("untracked_edits"):  # read from the run: an edit the graph does not hold
                return Verdict(False, "padding_mask.untracked_edit", misconception="forward_step_detached",
                               evidence=Evidence.FACT)
            gradients_wrong = padding_gradient_problem(record, shown, expectations)
            if gradients_wrong is not None:
                return gradients_wrong
            return dtype_verdict("multi_head_attention", got, x.dtype)
        # Right on every query that sees a real token, NaN only on those that see padding alone: the fill itself.
        return Verdict(False, "padding_mask.nan_blind_rows", misconception="padding_neg_inf", evidence=Evidence.FACT)
    wrong = [(misconception, output[shown]) for misconception, output in expectations["variants"]
             if output.shape == got.shape]
    verdict = compare(got[shown], want[shown], message_key="multi_head_attention.values",
                      input_shape=tuple(x.shape), variants=wrong)
    verdict.expected, verdict.got, verdict.compared = want, got, shown  # whole outputs shown, compared where shown
    if mask is not None:  # which tokens are padded decides which queries count: shown with the input
        verdict.input_mask = tuple(tuple(int(value) for value in row) for row in mask.tolist())
    if mask is None:
        with_notebook_scale(verdict, record.get("weights_seen"), expectations["raw_scores"], NOTEBOOK_SIZES,
                            (case["d_out"] // case["num_heads"]) ** 0.5)
    fills = [(fill, output[shown]) for fill, output in expectations.get("fills", ()) if output.shape == got.shape]
    # A finite causal fill reproduces the output (named when one value alone does): nothing else to locate.
    found = reproducing_fills(got[shown], want[shown], fills) if verdict.misconception is None else ()
    if found and REPRODUCED_BY not in verdict.fields:
        name_fill(verdict, found)
    elif verdict.misconception is None and mask is not None:
        verdict.message_key = padding_diagnosis(got, shown, expectations)
        verdict.misconception = PADDING_MISCONCEPTIONS.get(verdict.message_key)  # a padding variant reproduced it
        verdict.evidence = Evidence.VARIANT if verdict.misconception else None
        seen = record.get("weights_seen")
        if verdict.message_key == "multi_head_attention.values" and seen is not None:
            padded = (mask == 0).view(mask.shape[0], 1, 1, -1)
            fill = fitted_fill(seen, expectations["raw_scores"], (case["d_out"] // case["num_heads"]) ** 0.5, padded)
            if fill is not None:
                verdict.message_key, verdict.fields = "padding_mask.fill_too_high", {"fill": fill}
                # The fill fitted from the student's weights reproduces them on every padded key.
                verdict.misconception, verdict.evidence = "padding_fill_too_high", Evidence.VARIANT
    elif verdict.misconception is None and (seen := record.get("weights_seen")) is not None \
            and (family := mask_family(hidden_keys(seen))) is not None:
        verdict.misconception = family  # a mask written another way than the variants, named by what it hides
        verdict.evidence = Evidence.FACT
    elif verdict.misconception is None:
        # No catalogued mistake: say which stage first differs, and the scale used if that is what differs.
        sizes = {"head_dim": case["d_out"] // case["num_heads"], "d_out": case["d_out"], "d_in": case["d_in"]}
        located = located_fault(record.get("weights_seen"), expectations, scaled_by="head_dim", sizes=sizes,
                                after_key="attention.after_weights_heads", seen_merged=record.get("merged_seen"),
                                notebook_sizes=NOTEBOOK_SIZES)
        if located is not None:
            with_fit(verdict, located)
    if record.get("merged_seen") is not None:  # what out_proj received: the heads, merged
        verdict.head_layout = merged_block_layout(expectations["merged"], record["merged_seen"], case["num_heads"])
    return verdict


def padding_gradient_problem(record: MultiHeadRecord, shown: Tensor, expectations: Expectations) -> Verdict | None:
    """The padding step's own gradients: with the mask, against the reference's, only where forward's gradients
    without it are right (a step that is wrong without any mask is the multi-head checks' to charge, not this
    exercise's); None when they hold or cannot be told."""
    backward, unmasked = record.get("backward"), record.get("backward_unmasked")
    if backward is None or unmasked is None:
        return None
    reference = expectations["gradients"]
    if not same(unmasked["output"], reference["unmasked"]["output"]) \
            or module_gradient_problem(unmasked, reference["unmasked"]) is not None:
        return None
    if not same(backward["output"][shown], reference["masked"]["output"][shown]):
        return None
    return module_gradient_problem(backward, reference["masked"])


def padding_diagnosis(got: Tensor, shown: Tensor, expected: Expectations) -> str:
    """The message for a wrong output under a padding mask, judged on the queries that see a real token (and on
    every query for the mask on the query axis)."""
    if torch.isnan(got[shown]).any():
        return "padding_mask.nan"
    # The mask on the query axis: real queries then ignore it, so it is told from "ignored" by the padded queries'
    # own rows, every row compared (most specific first).
    if any(same(got, wrong) for wrong in expected["padding_query_axis"]):
        return "padding_mask.query_axis"
    # On a case with a sequence without padding, one sequence's mask applied to every sequence can give this too
    # (that sequence's mask is no mask at all): each padding check's first case, every sequence padded its own way,
    # tells them apart, and the first failing case decides the name (issue 58).
    if same(got[shown], expected["padding_ignored"][shown]):
        return "padding_mask.ignored"
    if same(got[shown], expected["padding_inverted"][shown]):
        return "padding_mask.inverted"
    return "multi_head_attention.values"


def judge_head_independence(record: HeadIndependenceRecord, case: MultiHeadCase, expectations: Expectations) -> Verdict:
    """With out_proj the identity, changing one head's W_query changes that head's columns only."""
    before, after = record["before"], record["after"]
    expected_shape = (case["batch"], case["num_tokens"], case["d_out"])
    if tuple(after.shape) != expected_shape or tuple(before.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(after.shape), "expected_shape": expected_shape})
    head_dim = case["d_out"] // case["num_heads"]
    changed_head = slice(case["head"] * head_dim, (case["head"] + 1) * head_dim)
    if not bool(torch.isfinite(before[..., changed_head]).any()):
        # The changed head's output is NaN or inf throughout, and stays so whatever its weights: whether the heads
        # are independent cannot be read from it ("did not change" would not be proven). The value checks say what
        # is wrong; this property takes no point for what its output cannot show.
        return Verdict(True)
    for head in range(case["num_heads"]):
        columns = slice(head * head_dim, (head + 1) * head_dim)
        unchanged = same(after[..., columns], before[..., columns])
        if head == case["head"] and unchanged:
            return Verdict(False, "multi_head_attention.head_unchanged")
        if head != case["head"] and not unchanged:
            return _not_mixed_unless_proven(record, before, case)
    return Verdict(True)  # a forward that changes its own state but keeps its heads apart: the state check's matter


def _not_mixed_unless_proven(record: HeadIndependenceRecord, before: Tensor, case: MultiHeadCase) -> Verdict:
    """Another head's columns changed: heads mixed, unless the module's first call changed its own state or two
    calls with nothing changed differ, which change every head's output with no head's weights changed."""
    if "state_before" in record and (changed := state_change(record["state_before"], record["state_after"],
                                                              record.get("parameter_names", ()))) is not None:
        key, fields = changed  # read from the module: the first call changed it, before any head's weights were
        return Verdict(False, key, fields, misconception="state_changed_by_forward", evidence=Evidence.FACT)
    if "repeated" in record and not same(record["repeated"], before):
        return Verdict(False, "multi_head_attention.calls_differ")
    if _heads_apart_at_out_proj(record, case):
        return Verdict(False, "multi_head_attention.mixed_after_out_proj")
    return Verdict(False, "multi_head_attention.heads_mixed")


def _heads_apart_at_out_proj(record: HeadIndependenceRecord, case: MultiHeadCase) -> bool:
    """Whether what forward passed to out_proj, (b, num_tokens, d_out) before and after one head's W_query changed,
    changed that head's columns only: the heads were kept apart up to out_proj, and what mixed them came after."""
    into_before, into_after = record.get("out_proj_before"), record.get("out_proj_after")
    expected_shape = (case["batch"], case["num_tokens"], case["d_out"])
    if into_before is None or into_after is None or tuple(into_before.shape) != expected_shape \
            or tuple(into_after.shape) != expected_shape:
        return False
    head_dim = case["d_out"] // case["num_heads"]
    for head in range(case["num_heads"]):
        columns = slice(head * head_dim, (head + 1) * head_dim)
        if (head == case["head"]) == same(into_after[..., columns], into_before[..., columns]):
            return False
    return True


def judge_vectorised(record: VectorisedRecord, case: MultiHeadCase, expectations: Expectations) -> Verdict:
    """No built-in attention, and as many matmuls for many heads as for few: one batched computation."""
    if record["builtins"]:
        return Verdict(False, "multi_head_attention.builtin", {"names": ", ".join(record["builtins"])})
    few_heads, many_heads = record["matmuls"]
    if many_heads > few_heads:
        return Verdict(False, "multi_head_attention.loop", {"few": case["num_heads"], "many": case["more_heads"]},
                       misconception="loop_over_heads", evidence=Evidence.FACT)  # matmuls counted
    return Verdict(True)


# Each judge takes its own record.
HEADS_JUDGES: dict[str, Callable[[Any, MultiHeadCase, Expectations], Verdict]] = {
    "heads": judge_head_independence, "vectorised": judge_vectorised}


def judge_mha_heads(record: HeadIndependenceRecord | VectorisedRecord, case: MultiHeadCase,
                    expectations: Expectations) -> Verdict:
    return HEADS_JUDGES[case["kind"]](record, case, expectations)
