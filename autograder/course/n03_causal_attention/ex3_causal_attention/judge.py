"""Judges of CausalAttention: decide from the probe's data, the case and the reference's expectations. Imports no
reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import REPRODUCED_BY, compare, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.fitted import name_fill, reproducing_fills, with_fit, with_notebook_scale
from autograder.checking.judging import (
    hidden_keys,
    located_fault,
    mask_family,
    returned_weights,
)
from autograder.course.n03_causal_attention.ex3_causal_attention.probe import (
    CausalCase,
    CausalForwardRecord,
    attention_input,
)
from autograder.course.shared.inputs import NOTEBOOK_SIZES

__all__ = ["judge_forward"]


def judge_forward(record: CausalForwardRecord, case: CausalCase, expectations: Expectations) -> Verdict:
    """CausalAttention's output with the student's own weights; no built-in attention. Expectations: output,
    variants."""
    if record["forbidden"]:
        return Verdict(False, "causal_attention.builtin", {"names": ", ".join(record["forbidden"])})
    x, got, want = attention_input(case), record["output"], expectations["output"]
    if not record.get("input_kept", True) and not same(got, want):
        # Wrong numbers because forward edited x itself first: that is the mistake, not the scale it seems to be.
        return Verdict(False, "contract.input_modified", misconception="input_edited_in_place",
                       evidence=Evidence.FACT)
    if same(got, want):
        return dtype_verdict("causal_weights", got, want.dtype)
    if got.shape != want.shape and (stopped_early := returned_weights(got, expectations)) is not None:
        return stopped_early
    verdict = compare(got, want, message_key="causal_attention.wrong_output", variants=expectations["variants"],
                      input_shape=tuple(x.shape))
    with_notebook_scale(verdict, record.get("weights_seen"), expectations["raw_scores"], NOTEBOOK_SIZES,
                        case["d_out"] ** 0.5)
    ambiguous = REPRODUCED_BY in verdict.fields and verdict.misconception is None  # the other cases decide
    if not ambiguous and verdict.misconception is None and (
            fills := reproducing_fills(got, want, expectations.get("fills", ()))):
        return name_fill(verdict, fills)
    if verdict.misconception is None and record["transpose_batched"]:
        verdict.misconception, verdict.evidence = "transpose_batched", Evidence.FACT
    if verdict.misconception is None and (seen := record.get("weights_seen")) is not None:
        verdict.misconception = mask_family(hidden_keys(seen))  # a mask written another way than the variants
        verdict.evidence = Evidence.FACT if verdict.misconception else None
    if verdict.misconception is None and got.shape == want.shape:
        # No catalogued mistake: say which stage first differs, and the scale used if that is what differs.
        sizes = {"d_out": case["d_out"], "d_in": case["d_in"]}
        located = located_fault(record.get("weights_seen"), expectations, scaled_by="d_out", sizes=sizes,
                                after_key="attention.after_weights",
                                notebook_sizes=NOTEBOOK_SIZES, weights_alone=record.get("weights_alone"))
        if located is not None:
            with_fit(verdict, located)
    return verdict
