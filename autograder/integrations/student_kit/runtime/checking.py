"""Run an exercise's stored public checks on the student's objects: the full kit's probe and judge of each check,
with the expectations read from the stored vectors instead of computed from the reference."""

from autograder.checking.expectations import Expectations
from autograder.checking.probing import grader_torch_state
from autograder.checking.results import judge_cases
from autograder.course.shared.plan import PlannedCheck, probe_checks
from autograder.i18n import language


def run_public(exercise_id, namespace, vectors, lang=None):
    """One CheckResult per stored public check of the exercise, in the full kit's order."""
    lang = lang or language()
    stored = vectors.checks_of(exercise_id)
    planned = tuple(PlannedCheck(check.id, check.probe, check.cases) for check in stored)
    records = probe_checks(planned, namespace)
    results = []
    with grader_torch_state():  # judges compare in the grader's settings too, whatever a notebook cell set
        for check in stored:
            def expectations_of(index, case, data, check=check):
                return Expectations.stored(check.expected[index])

            results.append(judge_cases(check, list(check.cases), records.get(check.id), expectations_of, lang,
                                       vectors.messages, vectors.misconceptions))
    return results
