"""What notebook cells call: `check` for instant public feedback, `grade` for a graded test cell."""

from autograder.checking.feedback import show_png
from autograder.course.exercises import exercise as find_exercise
from autograder.i18n import language
from autograder.running.rendering import heatmap_png, table
from autograder.running.runner import DEFAULT_SEED, run_exercise


def check(exercise_id, *objects):
    """Run the public checks of one exercise and print what passed, what failed and why."""
    lang = language()
    results = run_exercise(exercise_id, find_exercise(exercise_id).namespace(objects), include_hidden=False, lang=lang)
    print(table(exercise_id, results, lang, hidden=False))
    for result in results:
        if result.heatmap is not None:
            show_png(heatmap_png(*result.heatmap))


def grade(exercise_id, *objects, seed=DEFAULT_SEED):
    """Run every check of one exercise and return the score: nbgrader reads it as partial credit.

    The printed table comes from check messages only, which never hold hidden inputs or values.
    """
    lang = language()
    results = run_exercise(exercise_id, find_exercise(exercise_id).namespace(objects), seed=seed, lang=lang)
    print(table(exercise_id, results, lang, hidden=True))
    return float(sum(result.score for result in results))

