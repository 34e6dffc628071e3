"""The padding step's in-place fill under torch.no_grad(), made with the grader's recorder switched off (torch's
dispatch modes disabled, or the recorder popped off their stack), fails the padding_mask checks closed rather than
pass them unseen (issue 58: UntrackedEdits reads the edit from the edited tensor's version counter)."""

import pytest
import torch
from mutants.multihead import GivenMultiHeadAttention, _padded_forward
from test_checks_multihead import ALL_PADDING, run
from torch.utils._python_dispatch import (
    _disable_current_modes,
    _get_current_dispatch_mode_stack,
    _pop_mode,
    _push_mode,
)

from autograder.checking.check_types import PASSED


def _hidden(attention_mask):
    return attention_mask.eq(0).unsqueeze(1).unsqueeze(2)


class FilledWithModesDisabled(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is not None:
                with torch.no_grad(), _disable_current_modes():
                    attn_scores.masked_fill_(_hidden(attention_mask), -1e9)
            return attn_scores

        return _padded_forward(self, x, padded_keys)


class FilledWithTheModePopped(GivenMultiHeadAttention):
    def forward(self, x, attention_mask=None):
        def padded_keys(attn_scores):
            if attention_mask is not None:
                hidden = _hidden(attention_mask)
                popped = [_pop_mode() for _ in _get_current_dispatch_mode_stack()]  # every mode on: off
                try:
                    with torch.no_grad():
                        attn_scores.masked_fill_(hidden, -1e9)
                finally:
                    for mode in reversed(popped):
                        _push_mode(mode)
            return attn_scores

        return _padded_forward(self, x, padded_keys)


@pytest.mark.parametrize("student", [FilledWithModesDisabled, FilledWithTheModePopped])
@pytest.mark.slow
def test_a_fill_made_with_the_recorder_switched_off_fails_the_padding_checks(student):
    results = run("padding_mask", student)
    failed = {check_id.split(".", 1)[1]: result for check_id, result in results.items() if result.status != PASSED}
    assert set(failed) == ALL_PADDING
    for result in failed.values():
        assert "switched off torch's dispatch modes" in result.message and not result.misconception
