"""Probes of causal_mask: run the student's objects on a case and return plain data. Imports no reference, judge
or declaration: the grading child holds it."""

from typing import TypedDict

from torch import Tensor

from autograder.checking.probing import (
    lookup,
    plain,
)
from autograder.course.shared.records import Namespace

__all__ = ["MaskCase", "MaskRecord", "probe_causal_mask"]


class MaskCase(TypedDict):
    num_tokens: int


class MaskRecord(TypedDict):
    mask: Tensor


def probe_causal_mask(namespace: Namespace, case: MaskCase) -> MaskRecord:
    causal_mask = lookup(namespace, "causal_mask")
    return {"mask": plain(causal_mask(case["num_tokens"]))}
