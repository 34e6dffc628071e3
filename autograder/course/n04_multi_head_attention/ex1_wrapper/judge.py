"""Judges of MultiHeadAttentionWrapper and the two-dimensional wrapper (book exercise 3.2): decide from the probe's
data, the case and the reference's expectations. Imports no reference or declaration: the student kit ships it as it
is."""

from collections.abc import Mapping

import torch

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    first_wrong_head,
    wrapper_structure_problem,
)
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import (
    MultiHeadCase,
    TwoDimensionalCase,
    TwoDimensionalRecord,
    WrapperRecord,
    attention_input,
)

__all__ = ["head_width_problem", "judge_two_dimensional", "judge_wrapper"]


def judge_wrapper(record: WrapperRecord, case: MultiHeadCase, expectations: Expectations) -> Verdict:
    """Structure, then the heads' outputs side by side; a wrong join or the first wrong head named.
    Expectations: heads (each head's output with its own weights)."""
    problem = wrapper_structure_problem(record, case, record.get("state", {}))
    if problem is not None:
        return problem
    x, got, heads = attention_input(case), record["out"], expectations["heads"]
    narrow = head_width_problem(record.get("state", {}), case)
    if narrow is not None:
        return narrow
    want = torch.cat(heads, dim=-1)
    if same(got, want):
        return dtype_verdict("mha_wrapper", got, x.dtype)
    # The tokens' axis is the one before the features (dim 1 of a batch): joining along dim 0 of a batch is along
    # the batch axis, which the name "along the token axis" would say falsely (issue 58).
    wrong_joins = [("heads_on_token_axis", torch.cat(heads, dim=heads[0].dim() - 2))]
    wrong_joins += [("heads_stacked", torch.stack(heads, dim=dim)) for dim in (-1, -2, 1, 0)]
    misconception = diagnose(got, want, wrong_joins)
    if misconception is None:
        broken_head = first_wrong_head(record.get("head_outputs"), heads)
        if broken_head is not None:
            return Verdict(False, "mha_wrapper.head_wrong", {"head": broken_head})
    verdict = compare(got, want, message_key="mha_wrapper.values", input_shape=tuple(x.shape))
    verdict.misconception = misconception
    verdict.evidence = Evidence.VARIANT if misconception else None  # a wrong join of the heads reproduced it
    return verdict


def head_width_problem(state: Mapping[str, torch.Tensor], case: MultiHeadCase) -> Verdict | None:
    """A Verdict when a head was built for another output size than d_out (read from its value layer's weight, a fact);
    else None.

    The heads' expected outputs are the reference run with the learner's own weights, so they inherit a head's width:
    without this, heads of d_out // num_heads features would match themselves."""
    for index in range(case["num_heads"]):
        weight = state.get(f"heads.{index}.W_value.weight")
        if isinstance(weight, torch.Tensor) and weight.dim() == 2 and weight.shape[0] != case["d_out"]:
            return Verdict(False, "mha_wrapper.head_width",
                           {"head": index, "got": weight.shape[0], "d_out": case["d_out"],
                            "total": case["num_heads"] * case["d_out"]})
    return None


def judge_two_dimensional(record: TwoDimensionalRecord, case: TwoDimensionalCase,
                          expectations: Expectations) -> Verdict:
    """Book exercise 3.2: a MultiHeadAttentionWrapper of two heads one feature wide, built for the sizes asked.
    Needs no reference. The output itself is exercise 04-1's: a wrapper still wrong there costs nothing here."""
    if "head_count" not in record:
        return Verdict(False, "two_dimensional_wrapper.not_a_wrapper", {"got": record.get("type", "?")})
    if record["head_count"] != 2:
        # Heads traded for width: a head count other than two with heads wider than one feature, read from the
        # heads' own layers (heads counted, widths read). Heads already one feature wide are not made narrower: the
        # count alone is said (12v's vz-tw-10, num_heads = d_in - 1).
        widths = record.get("head_value_features") or record.get("head_out_features") or []
        traded = bool(widths) and all(width > 1 for width in widths)
        return Verdict(False, "two_dimensional_wrapper.head_count", {"got": record["head_count"]},
                       misconception="heads_traded_for_width" if traded else None,
                       evidence=Evidence.FACT if traded else None)
    out_features = record.get("head_out_features")
    if out_features is None:
        return Verdict(False, "two_dimensional_wrapper.not_causal_heads")
    # The context vectors are as wide as the values: a head's W_value, where W_query is built otherwise.
    widths = record.get("head_value_features") or out_features
    if sum(widths) != 2:
        # Every head as wide as the whole output asked for (read from the heads' own layers).
        misconception = "d_out_is_total" if set(out_features) == set(widths) == {2} else None
        # The head count and one width when every head has it ("the heads are 4" read as four heads): f-2d-07.
        key, fields = (("two_dimensional_wrapper.features", {"heads": len(widths), "width": widths[0]})
                       if len(set(widths)) == 1 else
                       ("two_dimensional_wrapper.features_uneven", {"widths": ", ".join(map(str, widths))}))
        return Verdict(False, key, {"got": sum(widths), **fields},
                       misconception=misconception, evidence=Evidence.FACT if misconception else None)
    if list(out_features) != list(widths):
        # Two features of context vectors, from values one wide, but queries and keys of another width: the heads
        # are not the ones d_out = 1 builds (their scores are other numbers, scaled by the keys' width).
        return Verdict(False, "two_dimensional_wrapper.projections_uneven", {
            "queries": ", ".join(map(str, out_features)), "values": ", ".join(map(str, widths))})
    asked = (case["d_in"], case["context_length"], float(case["dropout"]))
    for built in zip(record.get("head_in_features", []), record.get("head_context_length", [None] * 2),
                     record.get("head_dropout", [None] * 2), strict=True):
        if built != asked:
            got_d_in, got_context_length, got_dropout = built
            return Verdict(False, "two_dimensional_wrapper.sizes",
                           {"d_in": case["d_in"], "context_length": case["context_length"],
                            "dropout": case["dropout"], "got_d_in": got_d_in,
                            "got_context_length": got_context_length, "got_dropout": got_dropout})
    return _dtype_of_parameters_problem(record) or Verdict(True)


def _dtype_of_parameters_problem(record: TwoDimensionalRecord) -> Verdict | None:
    """A wrapper whose parameters are not in torch's default dtype: the notebook's batch (float32) cannot go
    through it, as the next cell of the notebook does."""
    default = str(torch.get_default_dtype()).removeprefix("torch.")
    others = [dtype for dtype in record.get("parameter_dtypes", []) if dtype != default]
    if not others:
        return None
    return Verdict(False, "two_dimensional_wrapper.dtype", {"got": ", ".join(others), "want": default})
