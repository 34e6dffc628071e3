"""Judges of causal_mask: decide from the probe's data, the case and the reference's expectations. Imports no
reference or declaration: the student kit ships it as it is."""

from autograder.checking.check_types import Verdict
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    causal_mask_verdict,
)
from autograder.course.n03_causal_attention.ex1_causal_mask.probe import MaskCase, MaskRecord

__all__ = ["judge_causal_mask"]


def judge_causal_mask(record: MaskRecord, case: MaskCase, expectations: Expectations) -> Verdict:
    """Shape, bool dtype, then the first wrong query/key pair. Expectations: mask."""
    return causal_mask_verdict(record["mask"], expectations["mask"], case["num_tokens"])
