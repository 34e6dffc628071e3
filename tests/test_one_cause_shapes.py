"""A wrong output shape is one cause across an exercise's checks (issue 58 point 3): the module contract's device
check reports the shape its output has on the meta device (with the shapes, as a value check does), so an output
whose axes grow and shrink as the value row's do folds under that row; and an output with the same two neighbouring
axes joined into one on every check's own input (a reshape that folds the heads into the batch) is one row. The
attempts below are written here, in a learner's style."""

import contextlib
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import FAILED, Cause, CheckResult
from autograder.checking.feedback import rows
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime

META_ROW = {"en": "after the module moved to meta", "zh": "模块移到 meta 之后"}


class HeadsAddedUp(nn.Module):
    """Each head made as the notes make it; their outputs added up "to combine the heads"."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])

    def forward(self, x):
        total = self.heads[0](x)
        for head in self.heads[1:]:
            total = total + head(x)
        return total


def heads_into_the_batch(x, num_heads):
    """Split into heads, then every (sample, head) pair laid out as a sample of its own."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    split = x.view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    return split.reshape(b * num_heads, num_tokens, head_dim)


def printed(exercise, attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise, attempt, hint=2)
    return output.getvalue()


def shown_failures(text):
    """The ✘ rows that show a failure in full (not a fold's "more checks" line)."""
    return [line for line in text.splitlines() if line.startswith("  ✘") and "more check" not in line
            and "另有" not in line]


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_device_checks_wrong_shape_folds_under_the_value_rows_shape(lang, monkeypatch):
    text = printed("mha_wrapper", HeadsAddedUp, lang, monkeypatch)
    assert len(shown_failures(text)) == 1, text
    assert not any(META_ROW[lang] in line for line in shown_failures(text)), text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_heads_folded_into_the_batch_on_every_input_are_one_row(lang, monkeypatch):
    text = printed("split_heads", heads_into_the_batch, lang, monkeypatch)
    assert len(shown_failures(text)) == 1, text


def shaped(check_id, got, expected, key="shape.wrong", departure_step=""):
    fields = (("expected_shape", str(expected)), ("got_shape", str(got)))
    return CheckResult(check_id, "split_heads", 0.0, 1.0, FAILED, None, check_id, False, title=check_id,
                       cause=Cause(None, key, fields), departure_step=departure_step)


@pytest.mark.parametrize(("one", "other", "folded"), [
    (((4, 6, 2), (2, 2, 6, 2)), ((3, 5, 4), (1, 3, 5, 4)), True),  # heads into the batch, batch of two and of one
    (((4, 6, 2), (2, 2, 6, 2)), ((2, 12, 2), (2, 2, 6, 2)), False),  # joined elsewhere: heads into the tokens
    (((2, 6, 2), (2, 1, 6, 2)), ((3, 6, 2), (3, 1, 6, 2)), False),  # a size 1 beside: which pair is not read
])
def test_the_same_join_of_neighbouring_axes_is_one_cause_and_no_other_is(one, other, folded):
    table = rows([shaped("a", *one), shaped("b", *other, key="shape.same_numbers")])
    assert (len(table) == 1) is folded


def test_the_device_checks_shape_is_read_as_a_value_checks_is():
    value = shaped("a", (2, 6, 2), (2, 6, 4), departure_step="context_vectors")
    value = CheckResult(**{**value.__dict__, "departure": "where it departs — …"})
    device = shaped("b", (3, 7, 2), (3, 7, 4), key="contract.output_shape_on_device")
    [row] = rows([value, device])
    assert row.same_shape == [device]


def test_the_notes_modules_have_no_device_shape_row():
    """The reference passes: the new key is only said of a wrong shape."""
    x = torch.rand(2, 6, 3)
    assert solutions.MultiHeadAttentionWrapper(3, 2, 6, 0.0, 2)(x).shape == (2, 6, 4)
