"""UntrackedEdits (issue 58): an in-place edit of a tensor of autograd's graph that autograd does not record is read
from the run, and an edit autograd records, or of a tensor out of every graph, is not."""

import pytest
import torch

from autograder.checking.torch_recorders import MODES_OFF, UntrackedEdits

HIDDEN = torch.tensor([[False, True, False], [True, False, False], [False, False, True]])


def edits_of(forward):
    weight = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    with UntrackedEdits() as edits:
        forward(weight)
    return edits.ops


def filled_under_no_grad(weight):
    scores = weight @ weight.T
    with torch.no_grad():
        scores.masked_fill_(HIDDEN, -1e9)


def written_through_data(weight):
    (weight @ weight.T).data.masked_fill_(HIDDEN, -1e9)


def written_through_detach(weight):
    (weight @ weight.T).detach().masked_fill_(HIDDEN, -1e9)


def written_out_under_no_grad(weight):
    scores = weight @ weight.T
    with torch.no_grad():
        torch.mul(scores, 2.0, out=scores)


def parameter_edited_under_no_grad(weight):
    with torch.no_grad():
        weight.add_(1.0)


@pytest.mark.parametrize("forward", [filled_under_no_grad, written_through_data, written_through_detach,
                                     written_out_under_no_grad, parameter_edited_under_no_grad])
def test_an_edit_autograd_does_not_record_is_seen(forward):
    assert edits_of(forward)


def filled_with_gradients_on(weight):
    (weight @ weight.T).masked_fill_(HIDDEN, -1e9)


def filled_out_of_place(weight):
    (weight @ weight.T).masked_fill(HIDDEN, -1e9)


def mask_built_and_edited_under_no_grad(weight):
    with torch.no_grad():
        bias = torch.zeros(3, 3, dtype=weight.dtype)
        bias.masked_fill_(HIDDEN, -1e9)
        keep = torch.ones(3, 3, dtype=torch.bool)
        keep &= ~HIDDEN
    (weight @ weight.T) + bias


def where_out_of_place(weight):
    torch.where(HIDDEN, torch.tensor(-1e4, dtype=weight.dtype), weight @ weight.T)


@pytest.mark.parametrize("forward", [filled_with_gradients_on, filled_out_of_place,
                                     mask_built_and_edited_under_no_grad, where_out_of_place])
def test_an_edit_autograd_records_or_of_a_tensor_out_of_every_graph_is_not(forward):
    assert edits_of(forward) == []


def test_backward_accumulating_gradients_is_no_edit():
    weight = torch.randn(3, 3, requires_grad=True)
    with UntrackedEdits() as edits:
        (weight @ weight).sum().backward()
        (weight @ weight).sum().backward()
    assert edits.ops == []


# An edit made with the recorder switched off is not seen as an op: its tensor's version counter still moves, and the
# recorder fails closed (MODES_OFF) rather than pass it (issue 58).
def filled_with_modes_disabled(weight):
    from torch.utils._python_dispatch import _disable_current_modes
    scores = weight @ weight.T
    with torch.no_grad(), _disable_current_modes():
        scores.masked_fill_(HIDDEN, -1e9)
    return scores.softmax(dim=-1)


def filled_with_the_mode_popped(weight):
    from torch.utils._python_dispatch import _pop_mode, _push_mode
    scores = weight @ weight.T
    mode = _pop_mode()
    try:
        with torch.no_grad():
            scores.view(9).mul_(2.0)
    finally:
        _push_mode(mode)


def last_edit_with_modes_disabled(weight):
    from torch.utils._python_dispatch import _disable_current_modes
    scores = (weight @ weight.T).add_(1.0)  # a seen edit first, then one unseen: two moves, one seen
    with torch.no_grad(), _disable_current_modes():
        scores.add_(1.0)


@pytest.mark.parametrize("forward", [filled_with_modes_disabled, filled_with_the_mode_popped,
                                     last_edit_with_modes_disabled])
def test_an_edit_made_with_the_recorder_switched_off_fails_closed(forward):
    assert MODES_OFF in edits_of(forward)


def edited_through_views_seen(weight):
    scores = weight @ weight.T
    scores.view(9).add_(1.0)
    scores.t().mul_(2.0)
    out = torch.ones(3, 3, dtype=weight.dtype)
    torch.mul(out, 2.0, out=out)
    out.view(9)[0] = 5.0
    return (scores + out).softmax(dim=-1)


def test_edits_seen_through_views_and_out_are_not_taken_for_hidden_ones():
    assert MODES_OFF not in edits_of(edited_through_views_seen)
    assert edits_of(edited_through_views_seen) == []
