"""Every misconception in the catalogue is exercised by at least one student-style mutant.

The three mutation suites (one per checks module) each hold a MISTAKES table whose last column is
the misconception a mutant must be named with (or a message fragment when no misconception fits);
their own tests assert that the mutant loses points in the right exercise and gets that name. The
variant grid (devtools.variant_grid, asserted by tests/test_variant_grid.py) adds every single-knob mistake
of the module exercises, each with the misconception it must be named with; the counting and split/merge contracts'
wrong attempts (tests/test_counting_contract.py, tests/test_split_merge_contract.py) add theirs.
"""

import test_checks_basics_self_attention
import test_checks_causal
import test_checks_multihead
import test_counting_contract
import test_split_merge_contract

from autograder.course.catalog import MISCONCEPTIONS
from devtools.variant_grid import grid

SUITES = (test_checks_basics_self_attention, test_checks_causal, test_checks_multihead)


def named_by_mutants():
    named = set()
    for suite in SUITES:
        for row in suite.MISTAKES:
            values = getattr(row, "values", row)  # pytest.param rows carry their tuple in .values
            named.add(values[-1])
    named.update(variant.misconception for variant in grid() if variant.misconception)
    # The contracts' learner-style attempts: each of their tests asserts the attempt is named with its mistake.
    named.update(mistake for _attempt, mistake in test_counting_contract.WRONG if mistake)
    named.update(row[2] for row in test_split_merge_contract.WRONG if row[2])
    return named


def test_every_misconception_has_a_mutant_that_is_named():
    missing = sorted({m.id for m in MISCONCEPTIONS} - named_by_mutants())
    assert not missing, f"misconceptions no mutant is named with: {missing}"
