"""Probes of count_parameters (book exercise 3.3): run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

from typing import Any, NotRequired, TypedDict

from autograder.checking.probing import (
    as_count,
    counted_module,
    lookup,
)
from autograder.course.shared.records import Namespace


class CountCase(TypedDict):
    """A module to count, described block by block (probing.counted_module builds it)."""

    container: NotRequired[str]
    blocks: list[dict[str, Any]]


class CountRecord(TypedDict):
    count: int


def probe_count(namespace: Namespace, case: CountCase) -> CountRecord:
    count_parameters = lookup(namespace, "count_parameters")
    return {"count": as_count(count_parameters(counted_module(case)))}
