"""formgrader's pages show each total less its late penalty: `install()`, run by the course's nbgrader_config.py.

nbgrader stores a late submission's penalty in the gradebook, per notebook (`AssignLatePenalties`, the course's
policy: nbgrader_late_penalty.py), and subtracts it in `nbgrader export`; formgrader's pages add the grades up
without it, so a student an hour late showed 100 / 100 in formgrader and 90 in the export, the LMS files, the class
report and the feedback. Where formgrader's server loads the course's config, `install()` gives formgrader's handlers
`LatePenalisedAPI`, nbgrader's `NbGraderAPI` whose lists of students, submissions and submitted notebooks give each
`score` less that student's penalty (an assignment's never below 0, as `nbgrader export` counts it) and the penalty
itself as `late_submission_penalty`; the pages' total columns are headed "(late penalty subtracted)". The columns of
code, written and task scores, the grading page's cells and the averages of the gradebook's pages stay nbgrader's:
what the notebook earned before the penalty.

Where formgrader is not loaded (every other nbgrader command) nothing is imported or changed.
"""

import sys
from collections.abc import Callable, Iterable
from typing import Any

from jinja2 import BaseLoader, Environment
from nbgrader.apps.api import NbGraderAPI

from autograder.integrations.nbgrader_formgrader_escaping import FORMGRADER_MODULE, after_formgrader_settings

__all__ = ["LABEL", "LabelledTotals", "LatePenalisedAPI", "install"]

FORMGRADER_BASE = "nbgrader.server_extensions.formgrader.base"
LABEL = "(late penalty subtracted)"
# The total columns' headers of formgrader's pages (manage_submissions: "Score"), as nbgrader 0.9's templates write
# them; every other score column stays as it is.
_TOTAL_HEADERS = ('<th class="text-center">Overall Score</th>', '<th class="text-center">Score</th>')
_PENALTY = "late_submission_penalty"
_INSTALLED = "_attnkit_late_totals"

# (student id, assignment, notebook) -> that submitted notebook's late penalty, where it has one
Penalties = dict[tuple[str, str, str], float]


class LatePenalisedAPI(NbGraderAPI):
    """nbgrader's API with each total formgrader's pages show less its late penalty (the module's docstring)."""

    def late_penalties(self) -> Penalties:
        from nbgrader.api import Assignment, Notebook, SubmittedAssignment, SubmittedNotebook

        with self.gradebook as gradebook:
            rows = gradebook.db.query(SubmittedAssignment.student_id, Assignment.name, Notebook.name,
                                      SubmittedNotebook.late_submission_penalty) \
                .select_from(SubmittedNotebook) \
                .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id) \
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id) \
                .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id) \
                .filter(SubmittedNotebook.late_submission_penalty > 0).all()
        return {(student, assignment, notebook): float(penalty) for student, assignment, notebook, penalty in rows}

    def get_students(self) -> list[dict[str, Any]]:
        students: list[dict[str, Any]] = super().get_students()
        penalties = self.late_penalties()
        for student in students:
            lost = sum(value for (student_id, _, _), value in penalties.items() if student_id == student["id"])
            _subtract(student, min(lost, max(float(student["score"]), 0.0)))
        return students

    def get_submission(self, assignment_id: str, student_id: str, ungraded: Any = None,
                       students: Any = None) -> dict[str, Any] | None:
        submission: dict[str, Any] | None = super().get_submission(assignment_id, student_id, ungraded, students)
        if submission is not None:
            _penalise_submissions([submission], assignment_id, self.late_penalties())
        return submission

    def get_submissions(self, assignment_id: str) -> list[dict[str, Any]]:
        submissions: list[dict[str, Any]] = super().get_submissions(assignment_id)
        _penalise_submissions(submissions, assignment_id, self.late_penalties())
        return submissions

    def get_notebook_submissions(self, assignment_id: str, notebook_id: str) -> list[dict[str, Any]]:
        submissions: list[dict[str, Any]] = super().get_notebook_submissions(assignment_id, notebook_id)
        penalties = self.late_penalties()
        for submission in submissions:
            _penalise_notebook(submission, penalties.get((submission["student"], assignment_id, notebook_id), 0.0))
        return submissions

    def get_student_notebook_submissions(self, student_id: str, assignment_id: str) -> list[dict[str, Any]]:
        submissions: list[dict[str, Any]] = super().get_student_notebook_submissions(student_id, assignment_id)
        penalties = self.late_penalties()
        for submission in submissions:
            if submission.get("id") is not None:  # a notebook missing from autograded/ shows 0 already
                _penalise_notebook(submission, penalties.get((student_id, assignment_id, submission["name"]), 0.0))
        return submissions


def _penalise_submissions(submissions: Iterable[dict[str, Any]], assignment_id: str, penalties: Penalties) -> None:
    for submission in submissions:
        if _PENALTY in submission or not submission.get("autograded"):
            continue  # already done (get_submissions asks get_submission), or nothing graded yet: no penalty
        lost = sum(value for (student, assignment, _), value in penalties.items()
                   if student == submission["student"] and assignment == assignment_id)
        _subtract(submission, min(lost, max(float(submission["score"]), 0.0)))  # never below 0, as nbgrader export


def _penalise_notebook(submission: dict[str, Any], penalty: float) -> None:
    _subtract(submission, min(penalty, max(float(submission["score"]), 0.0)))


def _subtract(row: dict[str, Any], penalty: float) -> None:
    row[_PENALTY] = penalty
    row["score"] = float(row["score"]) - penalty


class LabelledTotals(BaseLoader):
    """A loader that gives its loader's templates with the total columns' headers saying the penalty is subtracted."""

    def __init__(self, loader: BaseLoader) -> None:
        self.loader = loader

    def get_source(self, environment: Environment, template: str) -> tuple[str, str | None, Callable[[], bool] | None]:
        source, filename, uptodate = self.loader.get_source(environment, template)
        if template.startswith(("manage_students", "manage_submissions", "gradebook_notebook_submissions")):
            for header in _TOTAL_HEADERS:
                source = source.replace(header, header.replace("</th>", f" {LABEL}</th>"))
        return source, filename, uptodate

    def list_templates(self) -> list[str]:
        return self.loader.list_templates()


def _label_totals(settings: dict[str, Any]) -> None:
    environment = settings["nbgrader_jinja2_env"]
    settings["nbgrader_jinja2_env"] = environment.overlay(loader=LabelledTotals(environment.loader))


def install() -> None:
    """Make formgrader's pages show totals less the late penalty, where formgrader is loaded here; idempotent."""
    if FORMGRADER_MODULE not in sys.modules:  # not the server: nothing to change
        return
    handlers: Any = sys.modules[FORMGRADER_BASE]
    handlers.NbGraderAPI = LatePenalisedAPI  # formgrader's BaseHandler.api makes one per request
    after_formgrader_settings(_INSTALLED, _label_totals)
