"""Judges of split_heads and merge_heads: decide from the probe's data, the case and the reference's expectations.
Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import gradient_problem, no_gradient
from autograder.checking.pictures import merge_layout, split_layout
from autograder.course.n04_multi_head_attention.ex2_split_merge.probe import (
    HeadsCase,
    HeadsRecord,
    merge_input,
    split_input,
)

__all__ = ["input_and_graph", "judge_merge", "judge_split"]


def input_and_graph(function: str, data: HeadsRecord) -> Verdict | None:
    """The input left as it was and the output still in its graph, read from the student's own tensors (FACT); None
    when both hold."""
    change = data["input_change"]
    if change in ("values", "layout"):
        return Verdict(False, f"{function}.input_modified", misconception="heads_input_edited_in_place",
                       evidence=Evidence.FACT)
    if change == "written":  # the same numbers: an in-place operation on a view of it, not a change of the input
        return Verdict(False, f"{function}.input_written")
    if change == "metadata":
        return Verdict(False, f"{function}.input_metadata_changed")
    if data["gradient"] != "ok":  # no_gradient: the output is not in the input's graph, the fact of a cut
        return no_gradient(data["gradient"], data.get("gradient_error"))
    return None


def judge_split(record: HeadsRecord, case: HeadsCase, expectations: Expectations) -> Verdict:
    """Input left alone and gradients flowing, then the values, the reference's gradient and the dtype.
    Expectations: output, variants, input_gradient."""
    if (verdict := input_and_graph("split_heads", record)) is not None:
        return verdict
    x, got, want = split_input(case), record["out"], expectations["output"]
    if same(got, want):
        wrong = gradient_problem(record.get("input_gradient"), expectations["input_gradient"],
                                 own_slope=record.get("gradient_is_own_slope"))
        return wrong or dtype_verdict("split_heads", got, x.dtype)
    verdict = compare(got, want, message_key="split_heads.values", variants=expectations["variants"],
                      input_shape=tuple(x.shape))
    verdict.head_layout = split_layout(x, want, got, case["num_heads"])  # where each head's features landed
    return verdict


def judge_merge(record: HeadsRecord, case: HeadsCase, expectations: Expectations) -> Verdict:
    """Input left alone and gradients flowing, then the values (the split tensor itself for a round trip), the
    reference's gradient and the dtype. Expectations: output, variants, input_gradient."""
    if (verdict := input_and_graph("merge_heads", record)) is not None:
        return verdict
    x, got, want = merge_input(case), record["out"], expectations["output"]
    if same(got, want):
        wrong = gradient_problem(record.get("input_gradient"), expectations["input_gradient"],
                                 own_slope=record.get("gradient_is_own_slope"))
        return wrong or dtype_verdict("merge_heads", got, x.dtype)
    key = "merge_heads.round_trip" if case["layout"] == "split" else "merge_heads.values"
    verdict = compare(got, want, message_key=key, input_shape=tuple(x.shape))
    verdict.misconception = diagnose(got, want, expectations["variants"])
    verdict.evidence = None if verdict.misconception is None else Evidence.VARIANT
    verdict.head_layout = merge_layout(x, want, got)  # where each head's features landed
    return verdict
