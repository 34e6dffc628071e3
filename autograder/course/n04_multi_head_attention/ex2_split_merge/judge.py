"""Judges of split_heads and merge_heads: decide from the probe's data, the case and the reference's expectations.
Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import no_gradient
from autograder.checking.pictures import merge_layout, split_layout
from autograder.course.n04_multi_head_attention.ex2_split_merge.probe import (
    HeadsCase,
    HeadsRecord,
    merge_input,
    split_input,
)


def judge_split(data: HeadsRecord, case: HeadsCase, expected: Expectations) -> Verdict:
    """Input left alone, then the values. Expectations: output, variants."""
    if not data["input_kept"]:
        return Verdict(False, "split_heads.input_modified")
    if data.get("gradient", "ok") != "ok":
        return no_gradient(data["gradient"])
    x, got, want = split_input(case), data["out"], expected["output"]
    if same(got, want):
        return dtype_verdict("split_heads", got, x.dtype)
    verdict = compare(got, want, message_key="split_heads.values", variants=expected["variants"],
                      input_shape=tuple(x.shape))
    verdict.head_layout = split_layout(x, want, got, case["num_heads"])  # where each head's features landed
    return verdict


def judge_merge(data: HeadsRecord, case: HeadsCase, expected: Expectations) -> Verdict:
    """Input left alone, then the values (the split tensor itself for a round trip). Expectations: output,
    variants."""
    if not data["input_kept"]:
        return Verdict(False, "merge_heads.input_modified")
    if data.get("gradient", "ok") != "ok":
        return no_gradient(data["gradient"])
    x, got, want = merge_input(case), data["out"], expected["output"]
    if same(got, want):
        return dtype_verdict("merge_heads", got, x.dtype)
    key = "merge_heads.round_trip" if case["layout"] == "split" else "merge_heads.values"
    verdict = compare(got, want, message_key=key, input_shape=tuple(x.shape))
    verdict.misconception = diagnose(got, want, expected["variants"])
    verdict.evidence = Evidence.VARIANT if verdict.misconception else None
    verdict.head_layout = merge_layout(x, want, got)  # where each head's features landed
    return verdict
