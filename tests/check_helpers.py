"""Helpers the mutation suites share: run an exercise's checks on a namespace, keyed by check id."""

from autograder.runner import DEFAULT_SEED, run_exercise


def results_by_id(exercise_id, namespace, seed=DEFAULT_SEED, lang="en", include_hidden=True):
    results = run_exercise(exercise_id, namespace, seed=seed, lang=lang, include_hidden=include_hidden)
    return {result.id: result for result in results}


def score(results):
    return sum(result.score for result in results.values())
