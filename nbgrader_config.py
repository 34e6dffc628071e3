"""nbgrader configuration of the attnkit course: grading in attnkit's sandbox, and the course's settings.

nbgrader reads the nbgrader_config.py of the folder it runs in: run nbgrader in the course folder. A course made by
`attnkit course new DIR` holds a copy of this file, with DIR's own folder, gradebook and exchange set at its end:
`cd DIR`, then `nbgrader release_assignment attention`, `nbgrader collect attention`, `nbgrader autograde
attention`, ... (docs/instructor/setup.md). The course id is `attnkit`. In the attnkit checkout,
`autograder.integrations.nbgrader_course` loads this file for the throwaway courses it builds (`make release`, which
regenerates the committed `release/attention/` from `source/attention/`; the demo; the tests), adding only their own
root and gradebook.
"""

import autograder.integrations.nbgrader_formgrader_escaping
import autograder.integrations.nbgrader_formgrader_late
import autograder.integrations.nbgrader_gradebook_engine
import autograder.integrations.nbgrader_gradebook_warnings
import autograder.integrations.nbgrader_quiet_log
import autograder.integrations.nbgrader_student_guard
import autograder.safe_logging
from autograder.integrations import nbgrader_feedback_page

c = get_config()  # noqa: F821 -- injected by traitlets when nbgrader loads this file

# Every line nbgrader logs (its console, --logfile, formgrader's server) shows the escape and control characters of
# the student ids, file names and cell ids it names, never sends them to the terminal (autograder/safe_logging.py).
autograder.safe_logging.install()
# nbgrader's Gradebook.add_submission warns three SQLAlchemy SAWarnings per new submission that lose nothing; only
# those, raised from nbgrader.api, are not shown (autograder/integrations/nbgrader_gradebook_warnings.py).
autograder.integrations.nbgrader_gradebook_warnings.install()
# nbgrader opens its gradebook five or six times a notebook, each open a new SQLAlchemy engine whose queries are all
# compiled again: one engine per gradebook in the process instead, each open still its own session, connection and
# commits (autograder/integrations/nbgrader_gradebook_engine.py).
autograder.integrations.nbgrader_gradebook_engine.install()
# A student id or name reaches nbgrader's gradebook (db student add/import, formgrader's student editor, autograde's
# new student from a submitted/ folder) only as the roster takes it: an id of letters, digits and -_.; a name without
# control characters or '<'/'>' (autograder/integrations/nbgrader_student_guard.py). formgrader's pages print ids and
# names as text, and its scripts get them as JavaScript strings: where this runs in formgrader's server (`attnkit
# course formgrader`, or `jupyter lab` in the course folder), formgrader's templates autoescape
# (autograder/integrations/nbgrader_formgrader_escaping.py).
autograder.integrations.nbgrader_student_guard.install()
autograder.integrations.nbgrader_formgrader_escaping.install()
# formgrader's totals (its students, a student's assignment and notebooks, the submissions) are less the late penalty,
# as in the export, the LMS files, the class report and the feedback; its total columns say so
# (autograder/integrations/nbgrader_formgrader_late.py).
autograder.integrations.nbgrader_formgrader_late.install()
# `nbgrader autograde` says one line per student and how far it is; nbgrader's lines for every notebook (sanitizing,
# converting, writing) and attnkit's score of each are shown with --log-level=INFO or DEBUG. Warnings and errors are
# always shown (autograder/integrations/nbgrader_quiet_log.py).
autograder.integrations.nbgrader_quiet_log.install()

c.CourseDirectory.course_id = "attnkit"
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# `nbgrader autograde` (and formgrader's Autograde button) grades in attnkit's sandbox, not in the student's kernel:
# nbgrader's default list with its first step, Execute, replaced (autograder/integrations/nbgrader_sandbox.py), and
# CheckCellMetadata by the same check with its schema checked once per process, not per cell.
# Deleting this setting grades in the student's kernel, where student code can read the hidden checks and the
# reference and change its own grade; where the sandbox cannot run, autograde stops and says so instead.
c.Autograde.autograde_preprocessors = [
    "autograder.integrations.nbgrader_sandbox.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    # nbgrader's SaveAutoGrades, its commits per graded cell made one per notebook: the same rows, scores and
    # comments (autograder/integrations/nbgrader_saved_grades.py)
    "autograder.integrations.nbgrader_saved_grades.SavedInOneCommit",
    "nbgrader.preprocessors.AssignLatePenalties",
    "autograder.integrations.nbgrader_metadata.SchemaCheckedOnce",
    # Last: the student's markdown, raw cells, attachments, outputs and metadata made safe to render, so that nothing
    # a student wrote runs in the browser that opens the autograded notebook (formgrader, served with the
    # instructor's token) or the feedback (autograder/integrations/nbgrader_markup.py).
    "autograder.integrations.nbgrader_markup.SanitizeStudentMarkup",
]
# The feedback page is rendered from autograded/: sanitized again there (a notebook autograded before the line above).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "autograder.integrations.nbgrader_markup.SanitizeStudentMarkup",
]
# nbgrader's feedback page with alternative text (a heatmap's words) on every SVG picture, for the feedback's exporter
# only (autograder/integrations/nbgrader_feedback_page.py).
c.GenerateFeedback.HTMLExporter.template_name = nbgrader_feedback_page.TEMPLATE
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = nbgrader_feedback_page.template_basedirs()
c.GenerateFeedback.HTMLExporter.extra_template_paths = nbgrader_feedback_page.template_paths()
# Before any grading, `autograded/` holds only what the student handed in: nbgrader's copy follows links as the
# instructor, so attnkit's first sanitizing step reads the notebook again without following links and removes what
# nbgrader copied through a link, a hard link to a file outside the submission or a special file, with a note naming
# it (autograder/integrations/nbgrader_intake.py). nbgrader's default list with that step first.
# Just before OverwriteCells, a locked cell handed in exactly as released gets its hidden tests back, so that nbgrader's
# checksum check warns only about a cell the student really changed (jupyter/nbgrader#1961:
# autograder/integrations/nbgrader_hidden_tests.py).
c.Autograde.sanitize_preprocessors = [
    "autograder.integrations.nbgrader_intake.OwnFilesOnly",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "autograder.integrations.nbgrader_hidden_tests.RestoreHiddenTests",
    # A graded cell handed in with the points of an earlier release of the course (before `attnkit course points`
    # changed them) gets the course's, said once per run, not warned per cell (integrations/nbgrader_points.py).
    "autograder.integrations.nbgrader_points.EarlierReleasePoints",
    "nbgrader.preprocessors.OverwriteCells",
    # nbgrader's CheckCellMetadata, its schema checked once per process (autograder/integrations/nbgrader_metadata.py)
    "autograder.integrations.nbgrader_metadata.SchemaCheckedOnce",
]
# A notebook handed in under another name (`04_multi_head_attention-Copy1.ipynb` with the original deleted, `Copy of
# ...`, in a subfolder or a zip) is autograded under its own name, from the file `attnkit grade` grades as it: nbgrader
# converts only the files of the notebooks' own names; the hook adds the others to its list and the exporter reads them
# as empty notebooks, which attnkit's first sanitizing step fills (autograder/integrations/nbgrader_renamed.py).
c.Autograde.pre_convert_hook = "autograder.integrations.nbgrader_renamed.also_convert_renamed"
c.Autograde.exporter_class = "autograder.integrations.nbgrader_renamed.RenamedNotebookExporter"
# `nbgrader collect` from the default exchange copies only the student's own files: nbgrader's copy follows links as
# the instructor; attnkit's leaves out links, special files and hard links to files outside the submission.
c.ExchangeFactory.collect = "autograder.integrations.nbgrader_intake.OwnFilesCollect"
# The late policy (docs/instructor/setup.md): once the assignment has a due date (`nbgrader db assignment add attention
# --duedate="2027-03-01 17:00:00 Asia/Shanghai"`), a submission handed in after it loses percent_per_day percent of its
# points per day or part of a day late, up to all of them (autograder/integrations/nbgrader_late_penalty.py);
# nbgrader's own policies instead: c.LateSubmissionPlugin.penalty_method = "none" (no penalty) or "zero".
c.AssignLatePenalties.plugin_class = "autograder.integrations.nbgrader_late_penalty.PerDayLatePenalty"
c.PerDayLatePenalty.percent_per_day = 10
# CPU seconds per cell and per exercise's checks in the sandbox (attnkit grade's --timeout); code that waits gets twice
# that of wall-clock time (c.SandboxedExecute.wall_factor).
c.SandboxedExecute.timeout = 30

# Only where the setting above is removed: a graded cell imports torch and runs a few small checks in the student's
# kernel; the limit only stops a submission that loops forever (no credit for that cell).
c.ExecutePreprocessor.timeout = 120
# `nbgrader export` writes nbgrader's CSV as real CSV: names from the gradebook, the timestamp nbgrader recorded or
# "none recorded" (never an empty cell nor "None"), cells quoted, no cell a spreadsheet runs as a formula
# (autograder/integrations/nbgrader_export.py).
c.ExportApp.plugin_class = "autograder.integrations.nbgrader_export.CourseCsvExport"
