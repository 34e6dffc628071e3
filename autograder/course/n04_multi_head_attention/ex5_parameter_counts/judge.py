"""Judges of count_parameters (book exercise 3.3): decide from the probe's data, the case and the reference's
expectations. Imports no reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.expectations import Expectations
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.probe import CountCase, CountRecord


def parameter_totals(case: CountCase) -> tuple[int, int, int]:
    """(trainable, frozen, buffer) element counts of the case's module, from its spec alone."""
    trainable = frozen = buffers = 0
    for spec in case["blocks"]:
        for _, d_in, d_out, bias, is_trainable in spec["linears"]:
            size = d_in * d_out + (d_out if bias else 0)
            trainable, frozen = (trainable + size, frozen) if is_trainable else (trainable, frozen + size)
        buffers += spec["mask"] ** 2
    return trainable, frozen, buffers


def judge_count(data: CountRecord, case: CountCase, expected: Expectations) -> Verdict:
    """The trainable count; a wrong one named when it counts buffers or frozen parameters. Needs no reference."""
    got = data["count"]
    trainable, frozen, buffers = parameter_totals(case)
    if got == trainable:
        return Verdict(True)
    wrong_counts = (
        ("counts_buffers", trainable + buffers),
        ("counts_frozen", trainable + frozen),
        ("counts_buffers", trainable + frozen + buffers),  # everything in state_dict()
    )
    misconception = next((m for m, count in wrong_counts if count != trainable and count == got), None)
    return Verdict(False, "parameter_counts.wrong", {"got": got, "expected": trainable}, misconception=misconception,
                   evidence=Evidence.VARIANT if misconception else None)  # a wrong count reproduces the student's
