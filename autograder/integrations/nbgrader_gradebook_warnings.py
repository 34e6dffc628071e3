"""Silence the SQLAlchemy `SAWarning`s of nbgrader's `Gradebook.add_submission`, and only those: `install()`.

nbgrader 0.9 (`nbgrader/api.py`, `Gradebook.add_submission`, called by autograde for each new submission) builds a
`SubmittedAssignment` from the assignment and the student, then walks `submission.assignment.notebooks` and each
notebook's cells to build the submitted notebooks before it adds the submission to the session. Under SQLAlchemy 2
a relationship no longer cascades a new object into the session, so each of those lazy loads autoflushes and warns
`Object of type <SubmittedAssignment> not in session, add operation along 'Assignment.submissions' will not
proceed` (and the same of `Student.submissions` and `Notebook.submissions`). Nothing is lost: `add_submission` adds
the submission, and with it every object built, right after, and the gradebook holds every grade (the course tests
read them back). The fix belongs in nbgrader (building the objects inside `Session.no_autoflush`); until then these
three messages, raised from `nbgrader.api`, are not shown. Any other warning, from nbgrader or SQLAlchemy, is.
"""

import warnings

from sqlalchemy.exc import SAWarning

__all__: list[str] = []

# The warnings add_submission's lazy loads raise, attributed by SQLAlchemy to the line of nbgrader.api that loads.
ADD_SUBMISSION_AUTOFLUSH = (r"Object of type <Submitted(Assignment|Notebook)> not in session, add operation along "
                            r"'(Assignment|Student|Notebook)\.submissions' will not proceed")
SOURCE_MODULE = r"nbgrader\.api\Z"


def install() -> None:
    """Ignore add_submission's autoflush warnings in this process; idempotent (the config may be loaded twice)."""
    warnings.filterwarnings("ignore", message=ADD_SUBMISSION_AUTOFLUSH, category=SAWarning, module=SOURCE_MODULE)
