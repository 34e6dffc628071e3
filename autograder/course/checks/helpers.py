"""Helpers shared by the checks of every notebook: the notes' inputs, dtypes, recorded calls, the dtype verdict.

Plain torch and the checking machinery only: probes (which run in the student's process) use them as much as judges.
"""


# Shared with the student kit, which copies autograder.checking: defined there, re-exported for the checks.
from autograder.checking.check_types import Misconception
from autograder.checking.compare import compare_named, dtype_name, dtype_verdict
from autograder.checking.probing import PROJECTIONS, called_functions, forbidden_calls
from autograder.course.probes.inputs import (
    ATTENTION_FUNCTIONS,
    DTYPES,
    NOTES_INPUTS,
    dtype_of,
    notes_batch,
    notes_inputs,
)

__all__ = ["M", "ATTENTION_FUNCTIONS", "DTYPES", "NOTES_INPUTS", "PROJECTIONS", "called_functions", "compare_named",
           "dtype_name", "dtype_of", "dtype_verdict", "forbidden_calls", "notes_batch", "notes_inputs"]


def M(misconception_id, name_en, name_zh, hint_en, hint_zh):  # noqa: N802 - reads as the entry it builds
    """One known mistake, declared in the misconceptions.py of the package whose checks first name it: its name and
    hint, each in English and Simplified Chinese. autograder.course.catalog gathers them all. One is reported only
    when a wrong variant of the reference reproduces the student's output (autograder.checking.compare.diagnose) or
    the probe saw the mistake itself."""
    return Misconception(misconception_id, {"en": name_en, "zh": name_zh}, {"en": hint_en, "zh": hint_zh})
