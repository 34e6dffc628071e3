"""Run an exercise's checks in two halves: probe the student's code, then judge the data.

`probe_exercise` touches the student's objects and returns plain data only; `judge_exercise`
needs nothing but that data, the seed and the reference. `run_exercise` does both in one process
(the notebook); autograder.isolation.supervisor runs the first half in a sandboxed child process.
What an exception means is autograder.checking.diagnosis's job; the verdict's text is autograder.checking.results'
(shared with the student kit).
"""

import random
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

from autograder.checking.attempt import one_diagnosis
from autograder.checking.check_types import Case, Check, CheckResult
from autograder.checking.expectations import Expectations
from autograder.checking.probing import grader_torch_state
from autograder.checking.results import judge_cases
from autograder.course import catalog
from autograder.course.assignment import DEFAULT_SEED
from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import exercise as find_exercise
from autograder.course.shared.plan import ExerciseProbes, PlannedCheck, address_of, probe_checks
from autograder.i18n import language
from autograder.running.notebook_runtime import probed_and_judged
from autograder.running.record_parts import RecordPart, fingerprint
from autograder.running.threads import single_threaded
from autograder.running.timing import StageTimes

__all__ = [
    "ClassExpectations", "DEFAULT_SEED", "MISCONCEPTIONS_BY_ID", "cases_for", "judge_exercise", "planned_probes",
    "probe_exercise", "run_exercise",
]


class _NoRecord(Mapping[str, Any]):
    """The record an expect marked case_alone is called with: reading it is the grader's error, never another
    student's data."""

    def __getitem__(self, name: str) -> NoReturn:
        raise LookupError(f"an expect marked case_alone read the record ({name!r})")

    def __iter__(self) -> Iterator[str]:
        raise LookupError("an expect marked case_alone read the record")

    def __len__(self) -> int:
        raise LookupError("an expect marked case_alone read the record")


NO_RECORD = _NoRecord()


class ClassExpectations:
    """The Expectations of every case, for every student graded with this object: computed once per case where the
    check's expect reads the case alone (Check.expect_from_case: the same for the whole class, as lazily as before:
    a value no judge asked for is never computed); once per case and per distinct part of the record where it reads
    the case and some keys of the record (Check.expect_record_keys: the students whose modules started from the same
    weights, and saw the same there, share them; record_parts says when two parts are the same); once per student's
    record otherwise. A class's grading keeps one (autograder.grading.notebooks.grade_notebooks); judges only read
    what they are given."""

    # Of the record parts' tensor bytes kept as keys (and as much again in their copies): the least recently used
    # part goes first, so that a class of unusual records costs memory up to here and then time, as before.
    MAX_KEPT_BYTES = 32 << 20

    def __init__(self) -> None:
        self._by_case: dict[tuple[str, int, int], Expectations] = {}
        self._by_part: OrderedDict[tuple[str, int, int, Hashable], tuple[Expectations, int]] = OrderedDict()
        self._kept_bytes = 0

    def of(self, check: Check, seed: int, index: int, record: Mapping[str, Any], case: Case) -> Expectations:
        if check.expect_from_case:
            key = (check.id, seed, index)
            if key not in self._by_case:
                self._by_case[key] = check.expect(NO_RECORD, case)
            return self._by_case[key]
        keys = check.expect_record_keys
        if keys is None:
            return check.expect(record, case)
        found = fingerprint(record, keys)
        if found is None:  # not comparable to the byte: this student's alone
            return check.expect(RecordPart(record, keys), case)
        part, size = found
        key_of_part = (check.id, seed, index, part)
        if key_of_part in self._by_part:
            self._by_part.move_to_end(key_of_part)
            return self._by_part[key_of_part][0]
        expectations = check.expect(RecordPart(record, keys), case)
        self._by_part[key_of_part] = (expectations, size)
        self._kept_bytes += size
        while self._kept_bytes > self.MAX_KEPT_BYTES and len(self._by_part) > 1:
            _, (_, dropped) = self._by_part.popitem(last=False)
            self._kept_bytes -= dropped
        return expectations


def cases_for(check: Check, seed: int) -> list[Case]:
    """The check's cases for this seed: the same on the probe side and the judge side."""
    return check.cases(random.Random(f"{seed}/{check.id}"))


def probe_exercise(exercise_id: str, namespace: Mapping[str, Any], *, seed: int = DEFAULT_SEED,
                   include_hidden: bool = True) -> dict[str, list[dict[str, Any]]]:
    """{check id: [probe data per case]}; a check stops at its first case that raised."""
    with single_threaded():
        return probe_checks(planned_probes(exercise_id, seed=seed, include_hidden=include_hidden).checks, namespace)


def planned_probes(exercise_id: str, *, seed: int = DEFAULT_SEED, include_hidden: bool = True) -> ExerciseProbes:
    """The exercise's probes and cases as plain data: all that the grading child is told of its checks."""
    checks = catalog.checks_of(exercise_id, include_hidden=include_hidden)
    planned = tuple(PlannedCheck(check.id, address_of(check.probe), tuple(cases_for(check, seed))) for check in checks)
    return ExerciseProbes(exercise_id, tuple(find_exercise(exercise_id).names), planned)


def judge_exercise(exercise_id: str, records: Mapping[str, Sequence[dict[str, Any]]], *, seed: int = DEFAULT_SEED,
                   include_hidden: bool = True, lang: str | None = None, times: StageTimes | None = None,
                   expectations: ClassExpectations | None = None) -> list[CheckResult]:
    """One CheckResult per check, from probe data alone, read together as one attempt (autograder.checking.attempt).
    `times` (a StageTimes), when given, is told the seconds spent judging (the reference's expectations included).
    `expectations`, when given, is the class's (ClassExpectations): what depends on a case alone is computed once.
    """
    lang = lang or language()
    started = time.perf_counter()
    expectations = expectations or ClassExpectations()
    with single_threaded(), grader_torch_state():  # expectations and judges in the grader's torch settings
        results = [
            _judge_check(check, records.get(check.id), seed, lang, expectations)
            for check in catalog.checks_of(exercise_id, include_hidden=include_hidden)
        ]
        results = one_diagnosis(results, lang, catalog.MESSAGES, MISCONCEPTIONS_BY_ID)
    if times is not None:
        times.add("judges", time.perf_counter() - started)
    return results


def run_exercise(exercise_id: str, namespace: Mapping[str, Any], *, seed: int = DEFAULT_SEED,
                 include_hidden: bool = True, lang: str | None = None,
                 expectations: ClassExpectations | None = None) -> list[CheckResult]:
    """probe_exercise then judge_exercise, in this process; the own slopes of a gradient are read only for the
    checks that failed without them, and those judged again (notebook_runtime.probed_and_judged)."""
    find_exercise(exercise_id)
    checks = planned_probes(exercise_id, seed=seed, include_hidden=include_hidden).checks

    def judged(records: Mapping[str, Sequence[dict[str, Any]]]) -> list[CheckResult]:
        return judge_exercise(exercise_id, records, seed=seed, include_hidden=include_hidden, lang=lang,
                              expectations=expectations)

    return probed_and_judged(checks, namespace, judged)[1]


def _judge_check(check: Check, data_per_case: Sequence[dict[str, Any]] | None, seed: int, lang: str,
                 expectations: ClassExpectations) -> CheckResult:
    def expectations_of(index: int, record: dict[str, Any], case: Case) -> Expectations:
        return expectations.of(check, seed, index, record, case)

    return judge_cases(check, cases_for(check, seed), data_per_case, expectations_of, lang, catalog.MESSAGES,
                       MISCONCEPTIONS_BY_ID)
