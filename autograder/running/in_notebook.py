"""What notebook cells call: `check` for instant public feedback, `grade` for a graded test cell."""

from autograder.checking.feedback import (
    ExerciseProgress,
    HintLadder,
    defined_namespace,
    notebook_exercises,
    show_png,
    summary,
)
from autograder.course.catalog import MESSAGES
from autograder.course.exercises import EXERCISES
from autograder.course.exercises import exercise as find_exercise
from autograder.i18n import language
from autograder.running.rendering import heatmap_png, table
from autograder.running.runner import DEFAULT_SEED, run_exercise

_LADDER = HintLadder()  # the kernel's session: what the last check(...) of each exercise showed


def check(exercise_id, *objects, hint=None):
    """Run the public checks of one exercise and print what passed, what failed and why. A recognised mistake is
    named with hint=True, or on the next run that still fails (hint=False never names it)."""
    lang = language()
    results = run_exercise(exercise_id, find_exercise(exercise_id).namespace(objects), include_hidden=False, lang=lang)
    print(table(exercise_id, results, lang, hidden=False, hints=_LADDER.shows_hints(exercise_id, hint)))
    _LADDER.remember(exercise_id, results)
    for result in results:
        if result.heatmap is not None:
            show_png(heatmap_png(*result.heatmap))


def check_all(notebook, namespace):
    """One line per exercise of `notebook` (done, failing or not started, public checks passed, points in all and
    checked at grading), then its totals. A notebook's last cell passes its own globals():
    check_all("03_causal_attention", globals())."""
    lang = language()
    progress = []
    for exercise in notebook_exercises(notebook, EXERCISES):
        defined = defined_namespace(exercise, namespace)
        results = run_exercise(exercise.id, defined, include_hidden=False, lang=lang)
        progress.append(ExerciseProgress(exercise, results, len(defined) == len(exercise.names)))
    print(summary(notebook, progress, lang, messages=MESSAGES))


def grade(exercise_id, *objects, seed=DEFAULT_SEED):
    """Run every check of one exercise and return the score: nbgrader reads it as partial credit.

    The printed table comes from check messages only, which never hold hidden inputs or values.
    """
    lang = language()
    results = run_exercise(exercise_id, find_exercise(exercise_id).namespace(objects), seed=seed, lang=lang)
    print(table(exercise_id, results, lang, hidden=True))
    return float(sum(result.score for result in results))

