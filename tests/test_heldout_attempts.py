"""The held-out learner attempts of tests/heldout/ (issue 41, item 7): work the checks were never tuned to.

A name shown for a mistake the attempt does not make is a failing test (precision 1.0 on this set), a correct
alternative never loses a point nor gets a name, and recall on the attempts whose mistake is in the table is
reported and held to 0.9. devtools/heldout_eval.py measures; `python -m devtools.heldout_eval --set heldout -v`
prints the same figures with every wrong name and miss, and --read the learner's read of every rung.
"""

import pytest

from autograder.course.catalog import MISCONCEPTIONS
from autograder.course.exercises import EXERCISES
from devtools import heldout_eval
from devtools.heldout_eval import Outcome, Student
from tests.heldout import all_attempts

RECALL_FLOOR = 0.9


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return [heldout_eval.diagnose(heldout_eval.heldout_student(attempt)) for attempt in all_attempts()]


def test_the_set_covers_every_exercise_with_labels_from_the_table():
    attempts = all_attempts()
    ids = {misconception.id for misconception in MISCONCEPTIONS}
    assert len(attempts) >= 60
    assert len({attempt.name for attempt in attempts}) == len(attempts)
    assert {attempt.exercise for attempt in attempts} == {exercise.id for exercise in EXERCISES}
    assert sum(attempt.correct for attempt in attempts) >= 10
    # A table id renamed or removed makes its attempts' labels stale: relabel them from the table's names.
    stale = [f"{attempt.name}: {label}" for attempt in attempts for label in attempt.mistakes if label not in ids]
    assert not stale, stale


@pytest.mark.slow
def test_no_attempt_is_shown_a_mistake_it_does_not_make(outcomes):
    print("\n" + heldout_eval.table(outcomes))
    wrong = heldout_eval.wrong_names(outcomes)
    assert not wrong, f"{len(wrong)} wrong names on the held-out set:\n" + "\n".join(wrong)


@pytest.mark.slow
def test_correct_alternatives_keep_full_marks_and_get_no_name(outcomes):
    assert sum(outcome.student.correct for outcome in outcomes) >= 10
    docked = heldout_eval.docked(outcomes)
    assert not docked, "\n".join(docked)


@pytest.mark.slow
def test_recall_on_attempts_whose_mistake_is_in_the_table(outcomes):
    found = heldout_eval.counts(outcomes)
    print(f"\nrecall {found.recall:.3f}: {found.in_table_right} of {found.in_table} named right")
    for line in heldout_eval.misses(outcomes):
        print(f"  {line}")
    assert found.recall >= RECALL_FLOOR


def _outcome(truth: tuple[str, ...], names: tuple[str, ...], lost: float, correct: bool = False) -> Outcome:
    return Outcome(Student("heldout", "made up", "causal_mask", {}, truth, correct), lost, names)


def test_the_measures_count_a_wrong_name_a_miss_and_a_docked_alternative():
    """The measures above can fail: a name beside the right one is wrong, none is a miss, a docked alternative
    is docked, whatever the checks say today."""
    right = _outcome(("mask_inverted",), ("mask_inverted",), 6)
    beside = _outcome(("mask_inverted",), ("mask_inverted", "mask_includes_diagonal"), 6)
    unknown = _outcome((), ("mask_inverted",), 6)
    missed = _outcome(("mask_inverted",), (), 6)
    docked = _outcome((), (), 1, correct=True)
    found = heldout_eval.counts([right, beside, unknown, missed, docked])
    assert (found.wrong, found.named, found.right, found.named_wrong) == (5, 3, 1, 2)
    assert found.precision == pytest.approx(1 / 3)
    assert (found.in_table, found.in_table_right, found.recall) == (3, 1, pytest.approx(1 / 3))
    assert found.docked == 1 and len(heldout_eval.docked([docked])) == 1
    assert len(heldout_eval.wrong_names([right, beside, unknown])) == 2
    assert heldout_eval.misses([missed]) and not heldout_eval.misses([right])


def test_the_learner_read_shows_three_rungs():
    attempt = next(attempt for attempt in all_attempts() if attempt.name == "mask_tril")
    read = heldout_eval.learner_read(attempt, "en")
    assert [line for line in read.splitlines() if line.startswith("--- hint=")] == [
        "--- hint=1", "--- hint=2", "--- hint=3"]
    assert "✘" in read


@pytest.mark.slow
def test_the_command_prints_the_table_and_every_wrong_name(outcomes, monkeypatch, capsys):
    """`python -m devtools.heldout_eval --set heldout -v` (the contributor guide shows it), on the outcomes measured
    above rather than measuring them twice."""
    by_label = {outcome.student.label: outcome for outcome in outcomes}
    monkeypatch.setattr(heldout_eval, "diagnose", lambda student, seed: by_label[student.label])
    assert heldout_eval.main(["--set", "heldout", "-v"]) == 0
    printed = capsys.readouterr().out
    found = heldout_eval.counts(outcomes)
    assert printed.splitlines()[0].split()[:3] == ["set", "attempts", "wrong"]
    assert printed.splitlines()[1].split()[:3] == ["heldout", str(found.attempts), str(found.wrong)]
    assert f"wrong names: {found.named_wrong}" in printed
    for line in heldout_eval.wrong_names(outcomes) + heldout_eval.misses(outcomes):
        assert line in printed
