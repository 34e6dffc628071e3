"""Three sentences said only where the learner's run proves them (issue 58: a public ✔ that loses points later, or a
name the code contradicts, is false).

1. "The computation leaves autograd's graph" is said of a wrong gradient only where the gradient is not the slope of
   the learner's own function (probing.gradient_is_own_slope): a function autograd followed step by step but which
   is flat where softmax is not (a clamp past its bound) has a zero gradient of its own, and no step left the graph.
2. "The transfer works ... in float64" is a ✔ only where v1's weights stay float64: the values alone, compared in
   float64, cannot tell float64 weights from ones rebuilt as float32.
3. A mistake is not named from a case its variant reproduces when, on another case of the same check, the learner's
   code raised and the variant did not: a mask cut to `len(x)` (the batch size) hides nothing on a batch of one, as a
   dropped fill does, but it raises on every other batch, where a dropped fill runs on.

Each attempt is written here in a learner's style, from the notebooks' instructions.
"""

import contextlib
import io

import pytest
import torch
from check_helpers import assert_full_marks, results_by_id, score

from attnkit import solutions
from autograder.checking.judging import gradient_problem
from autograder.checking.probing import gradient_is_own_slope
from autograder.course import catalog
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import DEFAULT_SEED

SEEDS = (DEFAULT_SEED, 0, 1)
CUT_NAME = "leaves autograd's graph"
CUT_SENTENCE = "where autograd does not record"


def printed(exercise_id, *attempt, hint=2):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, *attempt, hint=hint)
    return output.getvalue()


# ---------------------------------------------------------------------------------------------
# 1. a zero gradient of a flat function is not a cut graph


def softmax_stable_capped(x, dim=-1):
    """Keeps exp() finite by capping each score at 60 instead of shifting the row: recorded by autograd all along,
    flat past 60."""
    capped = x.clamp(max=60.0)
    exps = capped.exp()
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_stable_detached(x, dim=-1):
    """A right softmax computed from a detached copy, with a zero term of the input added so that backward runs:
    its gradient is no slope of its own values."""
    frozen = x.detach()
    exps = (frozen - frozen.max(dim=dim, keepdim=True).values).exp()
    return exps / exps.sum(dim=dim, keepdim=True) + 0 * x


def test_a_capped_softmax_is_not_said_to_leave_the_graph():
    results = results_by_id("softmax_stable", {"softmax_stable": softmax_stable_capped})
    failed = [r for r in results.values() if r.status != "passed"]
    assert failed  # large scores tie: it is wrong, and loses points
    assert all(r.misconception != "gradient_cut" for r in results.values())
    assert all(CUT_SENTENCE not in r.message for r in results.values())
    assert any("autograd followed your function" in r.message for r in results.values())
    text = printed("softmax_stable", softmax_stable_capped)
    assert CUT_NAME not in text and CUT_SENTENCE not in text


def test_a_softmax_computed_from_a_detached_copy_is_still_said_to_leave_the_graph():
    results = results_by_id("softmax_stable", {"softmax_stable": softmax_stable_detached})
    assert any(r.misconception == "gradient_cut" for r in results.values())
    assert score(results) < EXERCISES_BY_ID["softmax_stable"].points


def test_the_reference_softmax_keeps_full_marks():
    for seed in SEEDS:
        results = results_by_id("softmax_stable", {"softmax_stable": solutions.softmax_stable}, seed=seed)
        assert_full_marks("softmax_stable", results, seed)


def test_own_slope_is_read_from_the_functions_own_values():
    big = torch.tensor([1000.0, 1000.0, 999.0])
    zero = torch.zeros(3)
    assert gradient_is_own_slope(softmax_stable_capped, big, zero) is True  # flat past its cap: zero is its slope
    small = torch.tensor([0.5, -1.0, 2.0])
    assert gradient_is_own_slope(softmax_stable_detached, small, torch.zeros(3)) is False  # its values move

    def raises(_x):
        raise ValueError("no")

    assert gradient_is_own_slope(raises, small, torch.zeros(3)) is None


def test_a_wrong_gradient_names_a_cut_only_where_it_is_no_slope_of_the_function():
    expected, got = torch.ones(3), torch.zeros(3)
    assert gradient_problem(got, expected, own_slope=False).misconception == "gradient_cut"
    for own in (True, None):  # followed by autograd, or not readable: nothing proven
        verdict = gradient_problem(got, expected, own_slope=own)
        assert verdict is not None and not verdict.passed and verdict.misconception is None
        assert verdict.message_key == "function.gradient_own_slope_other"
    assert gradient_problem(expected, expected, own_slope=None) is None


def context_vectors_weights_frozen(inputs):
    """The weights computed under no_grad: right values, and the gradient through them is missing."""
    with torch.no_grad():
        weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs


def test_context_vectors_with_frozen_weights_still_named_a_cut():
    results = results_by_id("context_vectors", {"context_vectors": context_vectors_weights_frozen})
    assert any(r.misconception == "gradient_cut" for r in results.values())


# ---------------------------------------------------------------------------------------------
# 2. float64 weights stay float64


def load_rebuilt_as_float32(sa_v1, sa_v2):
    """Copies each transposed weight into v1's own parameters, but as a float32 tensor of its own: v1 keeps its
    objects and shares nothing, and float64 weights become float32."""
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(sa_v1, name).data = getattr(sa_v2, name).weight.T.to(torch.float32).clone()
    return sa_v1


def load_state_dict_transfer(sa_v1, sa_v2):
    state = {name: getattr(sa_v2, name).weight.T for name in ("W_query", "W_key", "W_value")}
    sa_v1.load_state_dict(state)
    return sa_v1


def load_data_copy(sa_v1, sa_v2):
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).data.copy_(getattr(sa_v2, name).weight.detach().T)
    return sa_v1


def load_clone_into_data(sa_v1, sa_v2):
    for name in ("W_query", "W_key", "W_value"):
        getattr(sa_v1, name).data = getattr(sa_v2, name).weight.detach().T.clone()
    return sa_v1


def test_weights_rebuilt_as_float32_lose_the_float64_points_public_preview_first():
    results = results_by_id("transfer_weights", {"load_v2_weights_into_v1": load_rebuilt_as_float32})
    failed = {r.id for r in results.values() if r.status != "passed"}
    assert failed == {"transfer_weights.shapes"}
    message = results["transfer_weights.shapes"].message
    assert "torch.float32" in message and "torch.float64" in message
    assert score(results) == pytest.approx(EXERCISES_BY_ID["transfer_weights"].points - 1.5)
    text = printed("transfer_weights", load_rebuilt_as_float32)  # check(...): the public preview says it first
    assert "✔ the transfer works" not in text
    assert "✘ the transfer works for other sizes, square ones included, and in float64" in text


@pytest.mark.parametrize("student", [solutions.load_v2_weights_into_v1, load_state_dict_transfer, load_data_copy,
                                     load_clone_into_data], ids=lambda f: f.__name__)
def test_transfers_that_keep_the_dtype_keep_full_marks(student):
    for seed in SEEDS:
        results = results_by_id("transfer_weights", {"load_v2_weights_into_v1": student}, seed=seed)
        assert_full_marks("transfer_weights", results, seed)


# ---------------------------------------------------------------------------------------------
# 3. a name one case reproduces, refuted by another case where the learner's code raised


class _HeadsAsTheNotes(solutions.MultiHeadAttention):
    """The notes' projections split into heads, and the weights' mix merged back through out_proj: the two attempts
    below differ only in the fill between."""

    def split(self, layer, x):
        b, num_tokens, _d_in = x.shape
        return layer(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

    def finish(self, scores, values):
        b, _heads, num_tokens, _ = scores.shape
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out))


class MaskCutToBatchSize(_HeadsAsTheNotes):
    """The number of tokens read as len(x), which is the batch size of a (b, num_tokens, d_in) input."""

    def forward(self, x, attention_mask=None):
        scores = self.split(self.W_query, x) @ self.split(self.W_key, x).transpose(2, 3)
        n = len(x)
        scores = scores.masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        return self.finish(scores, self.split(self.W_value, x))


class FillResultDropped(_HeadsAsTheNotes):
    """The fill called and its result left unused: the future stays visible on every batch."""

    def forward(self, x, attention_mask=None):
        num_tokens = x.shape[1]
        scores = self.split(self.W_query, x) @ self.split(self.W_key, x).transpose(2, 3)
        scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.finish(scores, self.split(self.W_value, x))


DROPPED_FILL = "masked_fill_result_dropped"


def test_a_mask_cut_to_the_batch_size_is_not_named_a_dropped_fill():
    results = results_by_id("multi_head_attention", {"MultiHeadAttention": MaskCutToBatchSize})
    failing = [r for r in results.values() if r.status != "passed"]
    assert failing
    assert all(r.misconception != DROPPED_FILL for r in failing), [(r.id, r.misconception) for r in failing]
    text = printed("multi_head_attention", MaskCutToBatchSize)
    assert catalog.MISCONCEPTIONS_BY_ID[DROPPED_FILL].name["en"] not in text, text
    assert "the mask has no effect" not in text, text


def test_a_dropped_fill_is_still_named_on_every_batch():
    results = results_by_id("multi_head_attention", {"MultiHeadAttention": FillResultDropped})
    assert any(r.misconception == DROPPED_FILL for r in results.values() if r.status != "passed")
