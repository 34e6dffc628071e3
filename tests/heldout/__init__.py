"""A held-out set of learner attempts (issue 41, item 7), kept apart from every tuning set.

Written from the release notebooks' instructions only (what a learner sees), before the judges, the variant grid,
the mutants or the misconception texts were read: each attempt is the code a learner would type into a stub, with a
label saying which mistake of the course's table it makes (a table id), NONE_KNOWN where it makes a mistake the table
has no entry for, or CORRECT for a different but legitimate route (it must pass and get no name).
Nothing here may be tuned to the checks: a wrong name on this set is a bug of the checks, not of the set.
devtools/heldout_eval.py runs them; tests/test_heldout_attempts.py holds the measures.
"""

from dataclasses import dataclass
from typing import Any

CORRECT = "correct"
NONE_KNOWN = "none known"


@dataclass(frozen=True)
class Attempt:
    name: str
    exercise: str  # the exercise id, as check(...) takes it
    objects: tuple[Any, ...]  # what the learner passes to check(...), one per name of the exercise, in order
    # A mistake id of the table, or several where the attempt makes more than one (any of them is a right name),
    # NONE_KNOWN where the table has no entry for its mistake, or CORRECT.
    label: str | tuple[str, ...]
    story: str  # what the learner did, in words

    @property
    def mistakes(self) -> tuple[str, ...]:
        """The table ids a right name may be (none for CORRECT): the label's, and the entry added to the table after
        the set was written for exactly this attempt's mistake (LATER_ENTRIES)."""
        later = tuple(LATER_ENTRIES[self.name].entry for _ in (0,) if self.name in LATER_ENTRIES)
        if self.label == CORRECT:
            return ()
        if self.label == NONE_KNOWN:
            return later
        return (self.label if isinstance(self.label, tuple) else (self.label,)) + later

    @property
    def correct(self) -> bool:
        return self.label == CORRECT

    @property
    def in_table(self) -> bool:
        return bool(self.mistakes)


@dataclass(frozen=True)
class LaterEntry:
    """A table entry written after this set (issue 41's table, reproduction of errors, fitted families, contract),
    for the very mistake an attempt's story describes: the labels above stay as written; this says which later id
    also names that mistake, and why."""

    entry: str
    why: str


# Kept apart from the labels so that what was written before the judges were read stays visible (git log -p).
LATER_ENTRIES: dict[str, LaterEntry] = {
    "stable_global_max": LaterEntry("softmax_global_max", "the maximum over the whole tensor"),
    "context_weights_by_sum": LaterEntry("context_normalised_without_exp",
                                         "the context-vector exercise's own words for dividing by the sum"),
    "context_softmax_dim0": LaterEntry("context_weights_other_axis",
                                       "the context-vector exercise's own words for a softmax along the queries"),
    "context_inputs_first": LaterEntry("context_weights_other_axis",
                                       "the weights used transposed: a column of weights for each context vector"),
    "v1_scale_by_dk": LaterEntry("scale_by_d_k", "divided by d_k"),
    "v2_scaled_twice": LaterEntry("scale_by_d_k", "divided by the root of d_k twice, that is by d_k"),
    "v2_scale_by_num_tokens": LaterEntry("scale_by_num_tokens", "divided by the number of tokens"),
    "causal_scale_by_d_out": LaterEntry("scale_by_d_k", "one head: d_out is d_k, divided by it"),
    "v2_weight_transposed_no_bias": LaterEntry("parameter_unused", "the bias is never added: unused"),
    "v2_values_from_keys": LaterEntry("parameter_unused", "W_value is never used: the values come from W_key"),
    "route1_no_keepdim": LaterEntry("row_sums_without_keepdim", "route 1's own entry for the sums without keepdim"),
    "route1_on_cpu": LaterEntry("function_tensor_on_cpu", "the masking function's own words for a CPU tensor"),
    "route2_mask_on_cpu": LaterEntry("function_tensor_on_cpu", "the masking function's own words for a CPU tensor"),
    "split_in_place": LaterEntry("heads_input_edited_in_place", "split/merge's own words for an input edited"),
    "split_float_head_dim": LaterEntry("head_dim_float", "head_dim from true division"),
    "mha_float_head_dim": LaterEntry("head_dim_float", "head_dim from true division"),
    "merge_view_after_transpose": LaterEntry("view_after_transpose", "a view straight after the transpose"),
    "mha_inline_view_after_transpose": LaterEntry("view_after_transpose", "a view straight after the transpose"),
    "torch_out_proj_shared": LaterEntry("weights_shared_with_source",
                                        "exercise 04-6's own words for a parameter shared, not copied"),
    "count_state_dict": LaterEntry("counts_state_dict", "the state_dict's own entry (buffers and frozen ones)"),
    "count_per_module": LaterEntry("counts_shared_twice", "a shared parameter counted once per module"),
}


def all_attempts() -> tuple[Attempt, ...]:
    """Every attempt, notebook by notebook."""
    from tests.heldout import (
        attention_without_weights,
        causal_attention,
        multi_head_attention,
        trainable_self_attention,
    )

    return (attention_without_weights.ATTEMPTS + trainable_self_attention.ATTEMPTS + causal_attention.ATTEMPTS
            + multi_head_attention.ATTEMPTS)
