"""Run an exercise's stored public checks on the student's objects: probe each case, then judge the data."""

from autograder.checking.probing import run_probe
from autograder.checking.results import judge_cases
from autograder.i18n import language
from autograder.integrations.student_kit.runtime.judges import JUDGES
from autograder.integrations.student_kit.runtime.probes import PROBES


def run_public(exercise_id, namespace, vectors, lang=None):
    """One CheckResult per stored public check of the exercise, in the live checks' order."""
    lang = lang or language()
    results = []
    for check in vectors.checks_of(exercise_id):
        probe, judge = PROBES[check.kind], JUDGES[check.kind]
        records = []
        for case in check.cases:
            data = run_probe(probe, namespace, case)
            records.append(data)
            if "error" in data:
                break
        results.append(judge_cases(check, list(check.cases), records, judge, lang, vectors.messages,
                                   vectors.misconceptions))
    return results
