"""The grading record's shape, typed: what students/<id>.json holds and Gradescope's results.json.

They are JSON documents, written and read back as plain dicts (a record from an earlier run must still read), so
they are TypedDicts: mypy checks every key the writers set and the readers (the class report, merge, similarity)
look up, and the bytes on disk stay what they were.
"""

from typing import NotRequired, TypedDict

__all__ = [
    "Cell", "CheckDocument", "GradescopeResults", "GradescopeTest", "HeatmapDocument", "NotebookDocument",
    "StudentDocument",
]

Cell = float | str  # one value of a heatmap's matrix: a finite number, or "inf", "-inf", "nan" (JSON has none)


class HeatmapDocument(TypedDict):
    """A failed public check's heatmap (autograder.outputs.picture_documents): the first matrix of the expected and
    the student's tensor, their whole shapes, and whether both are bool masks."""

    expected: list[list[Cell]]
    got: list[list[Cell]]
    expected_shape: list[int]
    got_shape: list[int]
    mask: bool


class CheckDocument(TypedDict):
    """One check's verdict in a student's record."""

    id: str
    exercise: str
    score: float
    max_score: float
    status: str  # passed | failed | error
    misconception: str | None
    message: str
    hidden: bool
    details: NotRequired[list[str]]  # public checks only: input shape, expected and got values
    wrong_outputs: NotRequired[list[str]]  # hidden checks: "check#case:fingerprint", for `attnkit similarity`
    heatmap: NotRequired[HeatmapDocument]  # a failed public check's picture, for the feedback page
    departure_step: NotRequired[str]  # the notes' step the run first departs from (autograder.grading.departures)
    departure_lost: NotRequired[str]  # why the departure asked for was not computed (check_types.Untraced)


class NotebookDocument(TypedDict):
    """One notebook of a student's record: graded, or why not."""

    notebook: str
    path: str
    status: str  # graded, missing, unreadable, grader_error
    reason: str
    score: float
    max_score: float
    sha256: str
    checks: list[CheckDocument]
    notes: list[str]
    problems: NotRequired[list[str]]  # what changed the grade (grades.csv's problems column); absent when nothing


class StudentDocument(TypedDict):
    """students/<id>.json: the whole record. No submission hash (and a grader_error) when grading failed."""

    student_id: str
    assignment: str
    submission_hash: str
    seed: int
    score: float
    max_score: float
    notebooks: list[NotebookDocument]
    grader_error: NotRequired[str]


class GradescopeTest(TypedDict):
    name: str
    number: str
    score: float
    max_score: float
    status: str
    output: str
    visibility: str
    tags: list[str]


class GradescopeResults(TypedDict):
    """results.json in Gradescope's autograder format."""

    score: float
    output: str
    visibility: str
    stdout_visibility: str
    tests: list[GradescopeTest]
    execution_time: NotRequired[int]  # whole seconds (the Gradescope bundle's run sets it)
