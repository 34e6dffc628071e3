"""Precision of diagnosis (devtools.precision): the first mistake the checks name for a wrong student is its own.

On the variant grid every variant carries its true misconception, so precision there must be 1.0: no variant's first
name is another mistake's. The mutants' labels (tests/mutants' TRUE_MISCONCEPTIONS) must agree with what the checks'
own tests assert of them.
"""

import pytest
import test_checks_basics_self_attention
import test_checks_causal
import test_checks_multihead

from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from devtools import precision


@pytest.fixture(scope="module")
def grid_diagnoses():
    return [precision.diagnose_student(student) for student in precision.grid_students()]


@pytest.mark.slow
def test_no_variant_of_the_grid_gets_a_wrong_first_name(grid_diagnoses):
    wrong_students = [diagnosis for diagnosis in grid_diagnoses if diagnosis.wrong_student]
    assert len(wrong_students) == len(grid_diagnoses)  # every mistake of the grid loses points
    found = precision.counts(grid_diagnoses)
    assert found.misnamed == 0, "\n".join(precision.wrong_names(grid_diagnoses))
    assert found.precision == 1.0 and found.named == found.wrong


def test_the_measure_counts_a_wrong_first_name_as_wrong():
    grid_student = precision.grid_students()[0]
    mislabelled = precision.Labelled("grid", "mislabelled", grid_student.exercise, grid_student.namespace,
                                     ("some_other_misconception",))
    diagnosis = precision.diagnose_student(mislabelled)
    assert diagnosis.verdict == "wrong"
    found = precision.counts([diagnosis])
    assert (found.wrong, found.misnamed, found.precision) == (1, 1, 0.0)


def test_every_label_is_a_declared_misconception_of_a_mutant_that_exists():
    labels = precision.true_misconceptions()
    assert labels
    names = {name for name, _ in precision.mutants()}
    for mutant, truth in labels.items():
        assert mutant in names, mutant
        assert all(misconception in MISCONCEPTIONS_BY_ID for misconception in truth), mutant


def test_the_labels_agree_with_what_the_checks_tests_assert():
    """Every misconception a check's test expects a mutant to be named with is among that mutant's labels."""
    labels = precision.true_misconceptions()
    for module in (test_checks_basics_self_attention, test_checks_causal, test_checks_multihead):
        for _exercise, student, _check, named, *_ in module.MISTAKES:
            if named in MISCONCEPTIONS_BY_ID:
                assert named in labels.get(student.__name__, ()), (student.__name__, named)
