"""The variant grid (devtools.variant_grid): every single-knob mistake of every module exercise is caught and named.

Each family of mistakes (softmax axis, scale, mask, heads, dropout, buffer, projections, padding) is covered by
all its values, written as a student would (devtools.student_variants); legitimate alternatives (a fill value of
-1e9, a scale that is the same number, padding filled after the causal mask) must keep full marks.
"""

import pytest

from autograder.course.catalog import MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES_BY_ID
from devtools import variant_grid

MODULE_EXERCISES = {"self_attention_v1", "self_attention_v2", "causal_attention", "mha_wrapper",
                    "multi_head_attention", "padding_mask"}
FAMILIES = {"softmax axis", "scale", "mask", "heads", "dropout", "buffer", "projections", "padding"}


@pytest.fixture(scope="module")
def outcomes():
    return [variant_grid.grade(variant) for variant in variant_grid.grid()]


def test_the_grid_covers_every_module_exercise_and_family():
    variants = variant_grid.grid()
    assert {variant.exercise for variant in variants} == MODULE_EXERCISES
    assert {variant.family for variant in variants} == FAMILIES
    for variant in variants:
        assert variant.misconception is None or variant.misconception in MISCONCEPTIONS_BY_ID, variant
        assert variant.exercise in EXERCISES_BY_ID


@pytest.mark.slow
def test_every_mistake_loses_points_and_is_named_with_its_own_misconception(outcomes):
    wrong = variant_grid.problems(outcomes)
    assert wrong == [], "\n".join(wrong)


@pytest.mark.slow
def test_legitimate_alternatives_keep_full_marks(outcomes):
    alternatives = [outcome for outcome in outcomes if outcome.variant.misconception is variant_grid.EQUIVALENT]
    assert len(alternatives) >= 10
    assert all(outcome.score == outcome.max_score and not outcome.named for outcome in alternatives)


@pytest.mark.slow
def test_the_table_reports_the_whole_grid(outcomes):
    text = variant_grid.table(outcomes)
    mistakes = sum(outcome.variant.misconception is not None for outcome in outcomes)
    assert f"named with their own misconception: {mistakes}/{mistakes} (100.0 %); named with a wrong one: 0" in text
    assert all(exercise in text for exercise in MODULE_EXERCISES)
