"""`nbgrader export` for the attnkit course: nbgrader's CSV, its columns, rows and totals, written as CSV a
spreadsheet reads right.

nbgrader's own CsvExportPlugin joins cells with commas unquoted (a name "Lovelace, Ann" shifts every column after
it), leaves the timestamp empty where nbgrader recorded none (a submission copied by hand has no timestamp.txt)
and lets a cell start a formula. This plugin, set in the repository's nbgrader_config.py, keeps its options
(--to, --assignment, --student) and its sums (score = the submission's score less its late penalty, never below 0)
and writes:

- the students' names from the gradebook (`attnkit course new --roster` or `nbgrader db student add` put them
  there); where the gradebook has none the cells are empty, and the log says which students lack one;
- the timestamp nbgrader recorded, else "none recorded", or "no submission" for a student who handed nothing in;
- cells quoted by the csv module where needed, and text that a spreadsheet would run as a formula with a leading "'".
"""

import csv
import io

from nbgrader.api import Assignment, Gradebook, MissingEntry, Student
from nbgrader.plugins.export import CsvExportPlugin

from autograder.outputs.records import spreadsheet_text, write_atomically

__all__ = ["NO_SUBMISSION", "NO_TIMESTAMP"]

COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
           "late_submission_penalty", "score", "max_score")  # nbgrader's CsvExportPlugin's, in its order
NO_TIMESTAMP = "none recorded"
NO_SUBMISSION = "no submission"
DEFAULT_DESTINATION = "grades.csv"  # CsvExportPlugin's


class CourseCsvExport(CsvExportPlugin):
    """nbgrader's CSV export with names, timestamps and quoting (see the module's docstring)."""

    def export(self, gradebook: Gradebook) -> None:
        destination = self.to or DEFAULT_DESTINATION
        students = {str(item) for item in self.student}
        assignments = {str(item) for item in self.assignment}
        self.log.info("Exporting grades to %s", destination)
        rows: list[list[str]] = [list(COLUMNS)]
        unnamed: set[str] = set()
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                if not (student.first_name or student.last_name):
                    unnamed.add(student.id)
                rows.append(_row(gradebook, assignment, student))
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        write_atomically(destination, buffer.getvalue())
        if unnamed:
            self.log.warning("%d students have no name in the gradebook, their name cells are empty: %s (add names "
                             "with `nbgrader db student add ID --last-name=... --first-name=...`)", len(unnamed),
                             ", ".join(sorted(unnamed)[:10]) + (", ..." if len(unnamed) > 10 else ""))


def _row(gradebook: Gradebook, assignment: Assignment, student: Student) -> list[str]:
    try:
        submission = gradebook.find_submission(assignment.name, student.id)
    except MissingEntry:  # nothing handed in: 0, as nbgrader exports it
        timestamp, raw, penalty, score = NO_SUBMISSION, 0.0, 0.0, 0.0
    else:
        raw = float(submission.score or 0.0)
        penalty = float(submission.late_submission_penalty or 0.0)
        score = max(0.0, raw - penalty)
        timestamp = str(submission.timestamp) if submission.timestamp is not None else NO_TIMESTAMP
    duedate = "" if assignment.duedate is None else str(assignment.duedate)
    text = [assignment.name, duedate, timestamp, student.id, student.last_name or "", student.first_name or "",
            student.email or ""]
    numbers = [raw, penalty, score, float(assignment.max_score or 0.0)]  # str(float), as nbgrader writes them
    return [*(spreadsheet_text(value) for value in text), *(str(number) for number in numbers)]
