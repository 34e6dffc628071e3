"""Helpers shared by the checks of every notebook: the notes' inputs, dtypes, recorded calls, the dtype verdict.

Plain torch and the checking machinery only: probes (which run in the student's process) use them as much as judges.
"""


# Shared with the student kit, which copies autograder.checking: defined there, re-exported for the checks.
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

__all__ = ["ATTENTION_FUNCTIONS", "DTYPES", "NOTES_INPUTS", "PROJECTIONS", "called_functions", "compare_named",
           "dtype_name", "dtype_of", "dtype_verdict", "forbidden_calls", "notes_batch", "notes_inputs"]








