"""A held-out set of learner attempts (issue 41, item 7), kept apart from every tuning set.

Written from the release notebooks' instructions only (what a learner sees), before the judges, the variant grid,
the mutants or the misconception texts were read: each attempt is the code a learner would type into a stub, with a
label saying which mistake of the course's table it makes (a table id), NONE_KNOWN where it makes a mistake the table
has no entry for, or CORRECT for a different but legitimate route (it must pass and get no name).
Nothing here may be tuned to the checks: a wrong name on this set is a bug of the checks, not of the set.
devtools/heldout_eval.py runs them; tests/test_heldout_attempts.py holds the measures.
"""

from dataclasses import dataclass
from typing import Any

CORRECT = "correct"
NONE_KNOWN = "none known"


@dataclass(frozen=True)
class Attempt:
    name: str
    exercise: str  # the exercise id, as check(...) takes it
    objects: tuple[Any, ...]  # what the learner passes to check(...), one per name of the exercise, in order
    # A mistake id of the table, or several where the attempt makes more than one (any of them is a right name),
    # NONE_KNOWN where the table has no entry for its mistake, or CORRECT.
    label: str | tuple[str, ...]
    story: str  # what the learner did, in words

    @property
    def mistakes(self) -> tuple[str, ...]:
        """The table ids a right name may be (none for NONE_KNOWN or CORRECT)."""
        if self.label in (CORRECT, NONE_KNOWN):
            return ()
        return self.label if isinstance(self.label, tuple) else (self.label,)

    @property
    def correct(self) -> bool:
        return self.label == CORRECT

    @property
    def in_table(self) -> bool:
        return bool(self.mistakes)


def all_attempts() -> tuple[Attempt, ...]:
    """Every attempt, notebook by notebook."""
    from tests.heldout import (
        attention_without_weights,
        causal_attention,
        multi_head_attention,
        trainable_self_attention,
    )

    return (attention_without_weights.ATTEMPTS + trainable_self_attention.ATTEMPTS + causal_attention.ATTEMPTS
            + multi_head_attention.ATTEMPTS)
