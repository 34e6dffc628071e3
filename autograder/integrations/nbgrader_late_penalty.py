"""The course's late policy: `PerDayLatePenalty`, nbgrader's `LateSubmissionPlugin` with a penalty per day late.

nbgrader's own plugin knows two policies, no penalty (its default) and zero for any late submission. The course's
nbgrader_config.py sets this one (`c.AssignLatePenalties.plugin_class`): a submission handed in after the assignment's
due date (`nbgrader db assignment add attention --duedate=...`, or formgrader's Manage Assignments) loses
`percent_per_day` percent (default 10) of the points it earned for each day or part of a day past it, up to all of
them: an hour late keeps 90%, 25 hours late 80%, ten days late nothing. Without a due date nothing is late.

nbgrader calls the plugin once per notebook, with that notebook's score, when the notebook is autograded
(`AssignLatePenalties`), and stores the penalty in the gradebook; `nbgrader export`, `attnkit export`, `attnkit
report`, the feedback page and formgrader's totals (nbgrader_formgrader_late.py) subtract it. A manual grade saved
later does not change a stored penalty: autograding the student again (`nbgrader autograde attention --student ID
--force`, which keeps the manual grades) computes it from the new score.

nbgrader's two policies stay one setting away: `c.LateSubmissionPlugin.penalty_method = "none"` or `"zero"` (this
class is a LateSubmissionPlugin, so nbgrader's setting reaches it).
"""

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float

__all__ = ["PER_DAY", "PerDayLatePenalty", "THIS"]

THIS = f"{__name__}.PerDayLatePenalty"
PER_DAY = "per_day"
DAY_SECONDS = 24 * 60 * 60


class PerDayLatePenalty(LateSubmissionPlugin):
    """`percent_per_day` percent of the notebook's points per day or part of a day late (the module's docstring)."""

    penalty_method = Enum(
        (PER_DAY, "none", "zero"), default_value=PER_DAY,
        help="per_day: percent_per_day of the points per day or part of a day late, up to all of them; nbgrader's "
             "none (no penalty) and zero (a late submission scores 0).").tag(config=True)
    percent_per_day = Float(10.0, min=0.0, max=100.0, help="Percent of its points a late submission loses per day "
                            "or part of a day past the due date (penalty_method per_day).").tag(config=True)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float | None:
        if self.penalty_method != PER_DAY:
            return super().late_submission_penalty(student_id, score, total_seconds_late)
        days = math.ceil(total_seconds_late / DAY_SECONDS)
        return min(score, score * self.percent_per_day * days / 100.0)
