"""nbgrader configuration of the attnkit course.

Run nbgrader from the repository root and this file is picked up: the source notebooks live in
`source/attention/`, `nbgrader generate_assignment attention` writes the student version to
`release/attention/` (committed; `make release` regenerates it), and the course id is `attnkit`.
`autograder.integrations.nbgrader_course` loads this same file for the throwaway courses it builds (demo, tests), adding
only its own root and gradebook path there.
"""

import autograder.safe_logging

c = get_config()  # noqa: F821 -- injected by traitlets when nbgrader loads this file

# Every line nbgrader logs (its console, --logfile, formgrader's server) shows the escape and control characters of
# the student ids, file names and cell ids it names, never sends them to the terminal (autograder/safe_logging.py).
autograder.safe_logging.install()

c.CourseDirectory.course_id = "attnkit"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# `nbgrader autograde` (and formgrader's Autograde button) grades in attnkit's sandbox, not in the student's kernel:
# nbgrader's default list with its first step, Execute, replaced (autograder/integrations/nbgrader_sandbox.py).
# Deleting this setting grades in the student's kernel, where student code can read the hidden checks and the
# reference and change its own grade; where the sandbox cannot run, autograde stops and says so instead.
c.Autograde.autograde_preprocessors = [
    "autograder.integrations.nbgrader_sandbox.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# Seconds per cell and per exercise's checks in the sandbox (attnkit grade's --timeout).
c.SandboxedExecute.timeout = 30

# Only where the setting above is removed: a graded cell imports torch and runs a few small checks in the student's
# kernel; the limit only stops a submission that loops forever (no credit for that cell).
c.ExecutePreprocessor.timeout = 120
