"""Every sentence true of the code it speaks to (issue 58, item 5): the hints a learner reads after a failing check
say nothing of their code that is not so.

Each attempt below is written here in a learner's style, from the notebooks' instructions: code that raises before
a step two of the notes' steps share on the notes' case, settings a module is built with, a split whose transpose
is missing, a correct line beside the one that raised, swapped arguments. Each test says which sentence it keeps
out and fails without the fix that keeps it out.
"""

import contextlib
import io

import torch

from attnkit import solutions
from autograder.checking.departure import find_departure, step
from autograder.checking.tensor_trace import TracedTensor
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime


def printed(exercise_id, *attempt, hint=2):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, *attempt, hint=hint)
    return output.getvalue()


def departure_text(text):
    return "\n".join(line for line in text.splitlines() if "where it departs" in line)


# ---------------------------------------------------------------------------------------------
# 1. coincident steps: a tensor that holds two of the notes' steps proves only the earlier one


class PaddingNotBroadcast(solutions.MultiHeadAttention):
    """The padding mask used as it came, (b, num_tokens), against scores of four axes: it raises there, before any
    scaling; on the notes' heads of size 1 its scores are the scaled scores too."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        if attention_mask is not None:
            scores = scores.masked_fill(~attention_mask.bool(), -1e9)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(out)


def test_code_that_raises_before_scaling_is_not_said_to_reproduce_the_scaled_scores():
    text = departure_text(printed("padding_mask", PaddingNotBroadcast))
    assert "attention scores; then it raised" in text, text
    assert "scaled attention scores;" not in text and "then it raised before any of its tensors held the notes' " \
        "scaled attention scores" in text, text


def test_a_tensor_that_holds_an_earlier_step_too_proves_only_that_one():
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    steps = [step("scores", scores), step("scaled_scores", scores / 1.0), step("weights", scores.softmax(-1))]
    traced = [TracedTensor("mm", scores.double(), ()), TracedTensor("mul", scores.double() * 3, (0,))]
    departure = find_departure(steps, traced, None)
    assert departure.matched == ("scores",) and departure.step == "scaled_scores", departure


def test_a_tensor_of_one_repeated_number_proves_no_step():
    """exp(x + max) underflows to zeros on two equal large negative scores: the notes' shifted scores are zeros
    too. Zeros are made many ways: the step is not reproduced on that evidence."""
    x = torch.tensor([-800.0, -800.0])
    shifted = x - x.max()
    steps = [step("maximum", x.max().reshape(1), ordered=True), step("shifted", shifted, ordered=True),
             step("exponentials", shifted.exp(), ordered=True)]
    traced = [TracedTensor("input", x.double(), ()), TracedTensor("max", x.max().reshape(1).double(), (0,)),
              TracedTensor("add", (x + x.max()).double(), (0, 1)), TracedTensor("exp", (x + x.max()).exp().double(),
                                                                                (2,))]
    departure = find_departure(steps, traced, None)
    assert departure.matched == ("maximum",) and departure.step == "shifted", departure


def test_a_function_returning_a_step_that_coincides_with_a_later_one_is_told_the_earlier():
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    steps = [step("scores", scores), step("scaled_scores", scores / 1.0), step("weights", scores.softmax(-1))]
    traced = [TracedTensor("mm", scores.double(), ())]
    assert find_departure(steps, traced, scores).returned == "scores"
