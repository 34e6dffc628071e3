"""No surprises: student-style buggy code that passes every public check of an exercise keeps its points at grading.

Every hidden check has a public preview (autograder.course.catalog): the same requirement shown with visible inputs
before it is graded on others. devtools.surprises measures it on every hand-written mutant, grid variant and
cosmic-ray mutant of solutions/.
"""

import pytest

from attnkit import solutions
from autograder.course import catalog
from autograder.running.runner import run_exercise
from devtools.student_kit_agreement import Student
from devtools.surprises import buggy_students, measure, outcome, table


class Counting:
    """A function right for its first `honest_calls` calls and off by 1 % afterwards: it passes whatever runs first."""

    def __init__(self, function, honest_calls):
        self.function, self.honest_calls, self.calls = function, honest_calls, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        result = self.function(*args, **kwargs)
        return result if self.calls <= self.honest_calls else result * 1.01


def test_the_measure_sees_a_surprise_and_not_the_reference():
    counter = Counting(solutions.softmax_naive, 10**9)
    run_exercise("softmax_naive", {"softmax_naive": counter}, include_hidden=False, lang="en")
    cheat = Student("cheat", "softmax_naive", {"softmax_naive": Counting(solutions.softmax_naive, counter.calls)})
    found = outcome(cheat)
    assert found.public_passed and found.lost > 0 and found.surprise
    assert not outcome(Student("reference", "softmax_naive", {"softmax_naive": solutions.softmax_naive})).surprise


def test_every_hidden_check_has_a_public_preview_and_grading_runs_no_preview():
    hidden = [check for check in catalog.CHECKS if check.hidden]
    previews = {check.id: check for check in catalog.CHECKS if check.preview}
    assert hidden and {f"{check.id}.preview" for check in hidden} == set(previews)
    for check in hidden:
        preview = previews[f"{check.id}.preview"]
        assert (preview.points, preview.hidden, preview.probe, preview.judge, preview.expect) == \
            (0, False, check.probe, check.judge, check.expect)
        assert preview.cases(None) == preview.cases(None)  # the same cases wherever check() runs
        assert preview in catalog.checks_of(check.exercise, include_hidden=False)
        assert preview not in catalog.checks_of(check.exercise, include_hidden=True)


@pytest.mark.slow
def test_no_buggy_student_passes_every_public_check_and_loses_points():
    outcomes = measure(buggy_students())
    assert len(outcomes) > 800  # hand-written mutants, grid variants and cosmic-ray's mutants
    assert any(found.student.startswith("cosmic-ray/") for found in outcomes)
    surprises = [found for found in outcomes if found.surprise]
    assert not surprises, table(outcomes) + "\n" + "\n".join(
        f"{found.student}: -{found.lost:g} ({', '.join(found.failed_hidden)})" for found in surprises)
