"""What notebook cells call in the student kit: `check` for instant public feedback from stored vectors.

`grade` exists so that a notebook importing it still runs, but grading needs the hidden checks, which only
the instructor's full kit has.
"""

import functools

import torch

from autograder.checking.feedback import (
    ExerciseProgress,
    HintLadder,
    defined_namespace,
    heatmap_png,
    notebook_exercises,
    show_png,
    summary,
    table,
)
from autograder.i18n import language
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import installed_vectors

GRADE_UNAVAILABLE = {
    "en": "grade({exercise_id!r}, ...) is not available in the student kit: your instructor grades your notebook "
          "with the full kit. Use check(...) for feedback.",
    "zh": "学生版工具包中没有 grade({exercise_id!r}, ...)：老师会用完整版工具包为你的 notebook 评分。"
          "请用 check(...) 获得反馈。",
}


@functools.cache
def _vectors():
    return installed_vectors()


_LADDER = HintLadder()  # the kernel's session: what the last check(...) of each exercise showed


def check(exercise_id, *objects, hint=None):
    """Run the public checks of one exercise and print what passed, what failed and why. A recognised mistake is
    named with hint=True, or on the next run that still fails (hint=False never names it)."""
    lang = language()
    vectors = _vectors()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: a second intra-op thread only adds waiting
    try:
        results = run_public(exercise_id, vectors.exercise(exercise_id).namespace(objects), vectors, lang)
    finally:
        torch.set_num_threads(threads)
    print(table(vectors.exercise(exercise_id), results, lang, hidden=False, messages=vectors.messages,
                hints=_LADDER.shows_hints(exercise_id, hint)))
    _LADDER.remember(exercise_id, results)
    for result in results:
        if result.heatmap is not None:
            show_png(heatmap_png(*result.heatmap, vectors.messages))


def check_all(notebook, namespace):
    """One line per exercise of `notebook` (done, failing or not started, public checks passed, points in all and
    checked at grading), then its totals: check_all("03_causal_attention", globals())."""
    lang = language()
    vectors = _vectors()
    progress = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for exercise in notebook_exercises(notebook, vectors.exercises.values()):
            defined = defined_namespace(exercise, namespace)
            results = run_public(exercise.id, defined, vectors, lang)
            progress.append(ExerciseProgress(exercise, results, len(defined) == len(exercise.names)))
    finally:
        torch.set_num_threads(threads)
    print(summary(notebook, progress, lang, messages=vectors.messages))


def grade(exercise_id, *objects, seed=None):
    """Not available here: says so in the student's language and returns None."""
    print(GRADE_UNAVAILABLE[language()].format(exercise_id=exercise_id))
