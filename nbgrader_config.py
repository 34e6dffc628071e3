"""nbgrader configuration of the attnkit course.

Run nbgrader from the repository root and this file is picked up: the source notebooks live in
`source/attention/`, `nbgrader generate_assignment attention` writes the student version to
`release/attention/` (committed; `make release` regenerates it), and the course id is `attnkit`.
`autograder.integrations.nbgrader_course` loads this same file for the throwaway courses it builds (demo, tests), adding
only its own root and gradebook path there.
"""

c = get_config()  # noqa: F821 -- injected by traitlets when nbgrader loads this file

c.CourseDirectory.course_id = "attnkit"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# A graded cell imports torch and runs a few small checks: seconds, not minutes. The limit only
# stops a submission that loops forever (nbgrader then records an error and no credit for that cell).
c.ExecutePreprocessor.timeout = 120
