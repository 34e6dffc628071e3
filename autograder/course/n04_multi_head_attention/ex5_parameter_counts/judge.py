"""Judges of count_parameters (book exercise 3.3): decide from the probe's data, the case and the reference's
expectations. Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.expectations import Expectations
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.probe import CountCase, CountRecord

__all__ = ["judge_count", "reproduced_mistake"]


def reproduced_mistake(data: CountRecord, right: int, wrong_counts: list[tuple[str, list[int]]]) -> str | None:
    """The one mistake whose wrong counter gives the student's count on the case's module, and the student's counts on
    every witness too; None when none does, or when two different mistakes do."""
    got = [data["count"], *data["witness_counts"]]
    mistakes = {mistake for mistake, counts in wrong_counts if counts[0] != right and counts == got}
    return mistakes.pop() if len(mistakes) == 1 else None


def judge_count(record: CountRecord, case: CountCase, expectations: Expectations) -> Verdict:
    """The trainable count of the case's module. Expectations: count (the reference's), wrong_counts ((mistake,
    counts) of each wrong counter on the case's module and on each witness)."""
    got, right = record["count"], expectations["count"]
    if got == right:
        return Verdict(True)
    mistake = reproduced_mistake(record, right, expectations["wrong_counts"])
    return Verdict(False, f"parameter_counts.wrong.{case['about']}", {"got": got}, misconception=mistake,
                   evidence=None if mistake is None else Evidence.VARIANT)
