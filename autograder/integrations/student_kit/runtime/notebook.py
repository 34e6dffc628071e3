"""What notebook cells call in the student kit: the one notebook runtime (autograder.running.notebook_runtime) with
the expectations read from the stored vectors.

`grade` exists so that a notebook importing it still runs, but grading needs the hidden checks, which only
the instructor's full kit has.
"""

from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import installed_vectors
from autograder.running.notebook_runtime import NotebookRuntime, kernel_heap_settled

__all__ = ["check", "check_all", "grade"]

kernel_heap_settled()  # the session starts: the import cell's heap is never walked again
RUNTIME = NotebookRuntime(StoredExpectations(installed_vectors))  # the kernel's session (its hint ladder)
check = RUNTIME.check
check_all = RUNTIME.check_all
grade = RUNTIME.grade
