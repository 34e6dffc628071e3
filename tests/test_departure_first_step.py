"""Rung 2 says how the learner's tensor differs where nothing anchors "the tensor in its place" (issue 58): at the
notes' first step (no step matched before it), and where the learner's code raised before a tensor of the step's
size stood in its place. Only what the two tensors prove is said: a mask that differs from the notes' on whole
diagonals, square blocks each transposed, blocks joined along another axis, the step transposed, the shape of the
next tensor made from the right steps (and the other computation of them it is).

The attempts are written here as near-copies of the reference with one change, as a learner writes them from the
notebooks; each test fails without the change it checks (before it, rung 2 said only "none of the tensors your code
made on this case holds it", or "raised before any of its tensors held ...").
"""

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.step_relations import flipped_bands, restacked_blocks, transposed_blocks
from autograder.checking.tensor_trace import TensorTrace
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from solutions.n04_multi_head_attention import padding_fill_value
from tests.test_departure import raised_rows
from tests.test_departure_how import kinds, lines, traced_departure
from tests.test_no_answer import answer_pieces, leaks

SEED = in_notebook.DEFAULT_SEED


def failed_rows(exercise_id, namespace, lang="en"):
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                         seed=SEED, diagnose=True)
    return [result for result in results if result.status == "failed"]


def departures(exercise_id, namespace):
    """{lang: the departure lines of every failing or raising public check}."""
    found = {}
    for lang in ("en", "zh"):
        results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                             seed=SEED, diagnose=True)
        found[lang] = [result.departure for result in results if result.departure]
    return found


def _close(got, expected):
    return got.shape == expected.shape and bool(torch.allclose(got, expected))


# ------------------------------------------------------------------ learner attempts


def torch_mha_like(mha):
    w = mha.out_proj.weight
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, bias=True, batch_first=True)
    return torch_mha.to(device=w.device, dtype=w.dtype)


def copy_the_rest(torch_mha, mha):  # as the notes do: the biases stacked (zeros for none), out_proj copied
    projections = (mha.W_query, mha.W_key, mha.W_value)
    biases = [p.bias if p.bias is not None else torch.zeros_like(p.weight[:, 0]) for p in projections]
    torch_mha.in_proj_bias.copy_(torch.cat(biases))
    torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
    torch_mha.out_proj.bias.copy_(mha.out_proj.bias)


def to_torch_each_weight_transposed(mha):  # as if nn.Linear stored its weight (in, out)
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight.T, mha.W_key.weight.T, mha.W_value.weight.T]))
        copy_the_rest(torch_mha, mha)
    return torch_mha


def to_torch_side_by_side(mha):  # the three weights joined along dim 1: (d_out, 3 * d_in) raises at the copy
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=1))
        copy_the_rest(torch_mha, mha)
    return torch_mha


def to_torch_fresh_weights(mha):  # new random weights stacked: nothing ties them to the notes' (a control)
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([torch.randn_like(mha.W_query.weight) for _ in range(3)]))
        copy_the_rest(torch_mha, mha)
    return torch_mha


def to_torch_by_stack_and_flatten(mha):  # a right program: stack then flatten the first two axes
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        stacked = torch.stack([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]).flatten(0, 1)
        torch_mha.in_proj_weight.copy_(stacked)
        copy_the_rest(torch_mha, mha)
    return torch_mha


def mask_one_band_visible(num_tokens):  # the loop starts at i + 2: each token sees the next one
    mask = torch.zeros(num_tokens, num_tokens, dtype=torch.bool)
    for i in range(num_tokens):
        for j in range(i + 2, num_tokens):
            mask[i, j] = True
    return mask


def mask_diagonal_and_below_hidden(num_tokens):  # diagonal=-1: the diagonal and the one below it hidden too
    return torch.triu(torch.ones((num_tokens, num_tokens), dtype=torch.bool), diagonal=-1)


def mask_of_the_past(num_tokens):  # hides the earlier tokens instead of the later ones
    return torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=-1)


def mask_shuffled(num_tokens):  # the notes' count of hidden entries, in places no relation describes
    hidden = num_tokens * (num_tokens - 1) // 2  # the first entries, row by row
    return (torch.arange(num_tokens * num_tokens) < hidden).reshape(num_tokens, num_tokens)


def mask_by_loop(num_tokens):  # a right program: the future set entry by entry
    mask = torch.zeros(num_tokens, num_tokens, dtype=torch.bool)
    for i in range(num_tokens):
        for j in range(i + 1, num_tokens):
            mask[i, j] = True
    return mask


def mask_first_token_hides_itself(num_tokens):  # differs on part of the diagonal only: no band is said
    rows, columns = torch.arange(num_tokens)[:, None], torch.arange(num_tokens)[None, :]
    return (columns - rows + (rows + columns == 0).long()) > 0


def softmax_summed_over_the_rows(x):  # sums along the last axis: a matrix's (rows,) sums do not broadcast
    exps = torch.exp(x)
    return exps / exps.sum(dim=-1)


def softmax_in_float64(x):  # a right program: computed in float64, given back in the input's dtype
    exps = torch.exp(x.double())
    return (exps / exps.sum(dim=0, keepdim=True)).to(x.dtype)


def softmax_right_then_raising(x):  # every step right, then a line that raises: nothing departs
    exps = torch.exp(x)
    result = exps / exps.sum(dim=0, keepdim=True)
    if result.numel():
        raise RuntimeError("not done yet")
    return result


def softmax_summed_along_dim_1(x):  # dim=1 with keepdim: a vector has no dim 1, and the sum raises
    numerator = torch.exp(x)
    denominator = numerator.sum(dim=1, keepdim=True)
    return numerator / denominator


def softmax_catching_its_own_raise(x):  # the sum's raise is caught: the error is the code's own, not the sum's
    numerator = torch.exp(x)
    try:
        denominator = numerator.sum(dim=1, keepdim=True)
    except IndexError:
        raise ValueError("softmax_naive wants a matrix") from None
    return numerator / denominator


class PaddingMaskNotUnsqueezed(solutions.MultiHeadAttention):  # the (b, num_tokens) mask against 4-D scores
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = solutions.split_heads(self.W_query(x), self.num_heads)
        keys = solutions.split_heads(self.W_key(x), self.num_heads)
        values = solutions.split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            attn_scores = attn_scores.masked_fill(attention_mask == 0, padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(solutions.merge_heads(attn_weights @ values))


class QueriesTransposedInTheScores(solutions.SelfAttention_v1):  # queries.T @ keys: (d_out, d_out) "scores"
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        weights = torch.softmax(queries.T @ keys / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


class ScoresByEinsum(solutions.SelfAttention_v1):  # a right program written with einsum
    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        weights = torch.softmax(torch.einsum("qd,kd->qk", queries, keys) / keys.shape[-1] ** 0.5, dim=-1)
        return torch.einsum("qk,kd->qd", weights, values)


# ------------------------------------------------------------------ the relations, on their own


def test_a_mask_that_differs_on_whole_diagonals_is_said_by_its_diagonals():
    notes = torch.triu(torch.ones(5, 5), diagonal=1)
    assert flipped_bands(torch.triu(torch.ones(5, 5), diagonal=2), notes) == (1,)
    assert flipped_bands(torch.triu(torch.ones(5, 5), diagonal=-1), notes) == (0, -1)
    batched = torch.triu(torch.ones(2, 5, 5))
    assert flipped_bands(batched, notes.expand(2, 5, 5)) == (0,)
    part = notes.clone()
    part[0, 0] = 1  # one entry of the diagonal: no whole band
    assert flipped_bands(part, notes) == ()
    assert flipped_bands(1 - notes, notes) == ()  # every entry: more bands than a band says
    assert flipped_bands(notes * 0.5, notes) == ()  # not a 0/1 tensor
    assert flipped_bands(notes, notes) == ()


def test_blocks_each_transposed_and_blocks_joined_along_another_axis():
    blocks = [torch.arange(16.).reshape(4, 4) * (index + 1) for index in range(3)]
    stacked = torch.cat(blocks)
    assert transposed_blocks(torch.cat([block.T for block in blocks]), stacked, _close) == 3
    assert transposed_blocks(stacked, stacked, _close) == 0
    symmetric = torch.cat([block + block.T for block in blocks])
    assert transposed_blocks(symmetric, symmetric, _close) == 0  # transposing changes nothing: proves nothing
    assert transposed_blocks(stacked.flip(0), stacked, _close) == 0
    assert restacked_blocks(torch.cat(blocks, dim=1), stacked, _close) == (3, 0, 1)
    assert restacked_blocks(stacked, stacked, _close) is None
    assert restacked_blocks(stacked.T, stacked, _close) is None  # a transpose is not the blocks side by side


# ------------------------------------------------------------------ the first step


def test_weights_each_transposed_before_stacking_are_told_at_the_first_step():
    departure = traced_departure("torch_equivalence.notes", to_torch_each_weight_transposed)
    assert (departure.matched, departure.step, kinds(departure)) == ((), "stacked_projections", ["blocks_transposed"])
    assert departure.facts[0].fields == {"count": 3, "block": (4, 4)}
    told = departures("torch_equivalence", {"to_torch_multihead": to_torch_each_weight_transposed})
    assert any("the tensor your code made in its place holds the notes' projection weights stacked as one input "
               "projection as 3 blocks of shape (4, 4) along dimension 0, in their order, but each block transposed"
               in line for line in told["en"]), told["en"]
    zh = "沿第 0 个维度的 3 个形状为 (4, 4) 的块组成：顺序相同，但每一块都被转置了"
    assert any(zh in line for line in told["zh"]), told["zh"]


def test_weights_side_by_side_are_told_as_blocks_joined_along_another_axis_then_the_raise():
    shown = raised_rows("torch_equivalence", {"to_torch_multihead": to_torch_side_by_side})[0]
    assert ("the tensor your code made in its place has shape (4, 12), the notes' projection weights stacked as one "
            "input projection (12, 4): it is the notes' projection weights stacked as one input projection cut into "
            "3 equal blocks along dimension 0, each block as it is, joined along dimension 1 instead; then your code "
            "raised") in shown.departure, shown.departure
    zh = raised_rows("torch_equivalence", {"to_torch_multihead": to_torch_side_by_side}, "zh")[0]
    assert "形状是 (4, 12)" in zh.departure and "再沿第 1 个维度拼接起来的" in zh.departure, zh.departure


def test_a_mask_wrong_on_one_band_is_told_which_diagonals_differ():
    visible = departures("causal_mask", {"causal_mask": mask_one_band_visible})
    assert visible["en"] and all(
        "is the notes' causal mask with every entry on the diagonal 1 above the main one (column j = row i + 1) "
        "flipped (0 and 1, or False and True, swapped there) and every other entry as in the notes'" in line
        for line in visible["en"]), visible["en"]
    zh = "主对角线上方第 1 条对角线上（第 j 列 = 第 i 行 + 1）的每个元素都取了相反的值"
    assert all(zh in line for line in visible["zh"]), visible["zh"]
    hidden = departures("causal_mask", {"causal_mask": mask_diagonal_and_below_hidden})
    assert hidden["en"] and all(
        "every entry on the main diagonal (column j = row i) and on the diagonal 1 below the main one "
        "(column j = row i - 1) flipped" in line for line in hidden["en"]), hidden["en"]
    assert all("主对角线上（第 j 列 = 第 i 行）和主对角线下方第 1 条对角线上" in line for line in hidden["zh"])


def test_a_mask_of_the_past_is_the_notes_mask_transposed_and_a_shuffled_one_is_told_nothing():
    past = traced_departure("causal_mask.notes", mask_of_the_past)
    assert (past.step, kinds(past)) == ("causal_mask", ["transposed"])
    assert "the notes' causal mask transposed (its last two dimensions swapped)" in lines(past)["en"]
    # The same count of hidden entries elsewhere proves nothing of a mask ("the same numbers in other places").
    shuffled = traced_departure("causal_mask.notes", mask_shuffled)
    assert (shuffled.step, shuffled.facts) == ("causal_mask", ()), shuffled


def test_a_mask_wrong_in_part_of_a_band_or_fresh_weights_get_no_relation():
    """Precision: a difference no whole band describes, or numbers nothing ties to the notes', is told no how."""
    part = traced_departure("causal_mask.notes", mask_first_token_hides_itself)
    assert (part.step, "bands" in kinds(part)) == ("causal_mask", False)
    fresh = traced_departure("torch_equivalence.notes", to_torch_fresh_weights)
    assert (fresh.step, fresh.facts) == ("stacked_projections", ())


# ------------------------------------------------------------------ code that raised


def test_a_raise_at_the_sums_is_told_the_shape_and_axis_of_the_sums_it_made():
    shown = raised_rows("softmax_naive", {"softmax_naive": softmax_summed_over_the_rows})
    assert shown, "the matrix case raises"
    line = shown[0].departure
    assert ("your code reproduces the notes' exponentials, then departs from them at the sums of the exponentials: "
            "none of the tensors your code made on this case holds the notes' sums of the exponentials; the next "
            "tensor your code made from those steps has shape (5,), the notes' sums of the exponentials (4,); it is "
            "the sum of the notes' exponentials along dimension 1, not the notes' sums of the exponentials; then your "
            "code raised") in line, line
    zh = raised_rows("softmax_naive", {"softmax_naive": softmax_summed_over_the_rows}, "zh")[0].departure
    assert "你的代码接着由这些步骤算出的张量形状是 (5,)，而笔记中的指数之和形状是 (4,)；" \
           "它是笔记中的指数沿第 1 个维度的和" in zh, zh


def test_a_raise_after_scores_of_the_wrong_shape_is_told_their_shape():
    line = raised_rows("self_attention_v1", {"SelfAttention_v1": QueriesTransposedInTheScores})[0].departure
    assert ("then departs from them at the attention scores: none of the tensors your code made on this case holds "
            "the notes' attention scores; the next tensor your code made from those steps has shape (2, 2), the "
            "notes' attention scores (6, 6); it holds the dot products of each column (feature) of the notes' queries "
            "with each column of the notes' keys, pairs of features instead of pairs of rows (tokens), not the notes' "
            "attention scores; then your code raised") in line, line


def test_a_raise_in_an_operation_is_told_the_operands_it_read():
    """Nothing of the step's place was made: the op that raised is told by what it read, the learner's tensors that
    hold a step of the notes by that step's name (and the shape they had there), any other by its shape."""
    line = raised_rows("softmax_naive", {"softmax_naive": softmax_summed_along_dim_1})[0].departure
    assert line.endswith("your code reproduces the notes' exponentials; then it raised before any of its tensors held "
                         "the notes' sums of the exponentials; it raised in an operation on your exponentials "
                         "(shape (6,); their values match the notes')"), line
    zh = raised_rows("softmax_naive", {"softmax_naive": softmax_summed_along_dim_1}, "zh")[0].departure
    assert zh.endswith("它是在对你的指数（形状 (6,)，数值与笔记中的相同）进行的一次运算中抛出异常的"), zh
    padded = raised_rows("padding_mask", {"MultiHeadAttention": PaddingMaskNotUnsqueezed})[0].departure
    assert padded.endswith("it raised in an operation on your attention scores (shape (2, 2, 6, 6); their values "
                           "match the notes') and a tensor of shape (2, 6)"), padded


def test_a_raise_the_code_caught_is_not_told_as_the_operation_that_raised():
    """The sum raised, the code caught it and raised its own error: no operation of torch's raised what the learner
    sees, so none is told (the probe's message is the code's own)."""
    rows = raised_rows("softmax_naive", {"softmax_naive": softmax_catching_its_own_raise})
    assert rows and not any("in an operation" in row.departure for row in rows), [row.departure for row in rows]


def test_right_programs_get_no_departure_line():
    """Controls: the reference and legitimate alternatives (einsum, a float64 route, a loop, stack and flatten) have
    nothing to localise; code that raises after every step matched is told no step."""
    controls = [("causal_mask", {"causal_mask": solutions.causal_mask}),
                ("causal_mask", {"causal_mask": mask_by_loop}),
                ("torch_equivalence", {"to_torch_multihead": solutions.to_torch_multihead}),
                ("torch_equivalence", {"to_torch_multihead": to_torch_by_stack_and_flatten}),
                ("softmax_naive", {"softmax_naive": solutions.softmax_naive}),
                ("softmax_naive", {"softmax_naive": softmax_in_float64}),
                ("self_attention_v1", {"SelfAttention_v1": ScoresByEinsum})]
    for exercise_id, namespace in controls:
        assert departures(exercise_id, namespace) == {"en": [], "zh": []}, (exercise_id, namespace)
    raising = raised_rows("softmax_naive", {"softmax_naive": softmax_right_then_raising})
    assert raising and not any("next tensor" in row.departure or "in its place" in row.departure for row in raising)


def test_the_new_sentences_leak_no_answer():
    pieces, calls = answer_pieces()
    for check_id, objects in [("torch_equivalence.notes", (to_torch_each_weight_transposed,)),
                              ("causal_mask.notes", (mask_one_band_visible,)),
                              ("causal_mask.notes", (mask_diagonal_and_below_hidden,))]:
        for lang, line in lines(traced_departure(check_id, *objects)).items():
            assert line and "{" not in line and "step." not in line and "departure." not in line, (lang, line)
            assert any(how in line for how in ("in its place", "returns", "在这一步算出的张量", "返回的结果")), line
            assert not leaks(line, pieces, calls), (check_id, lang, line)
    for exercise_id, namespace in [("softmax_naive", {"softmax_naive": softmax_summed_over_the_rows}),
                                   ("torch_equivalence", {"to_torch_multihead": to_torch_side_by_side})]:
        for lang in ("en", "zh"):
            rows = raised_rows(exercise_id, namespace, lang)
            assert any(how in row.departure for row in rows for how in ("shape (", "形状是")), rows
            for row in rows:
                assert not leaks(row.departure, pieces, calls), (exercise_id, lang, row.departure)


class HostileError(RuntimeError):
    def __str__(self):
        raise SystemExit("the trace read a student's exception")


class RaisingTensor(torch.Tensor):  # a student's tensor subclass whose every op raises their own exception
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise HostileError(object())


def test_an_exception_of_the_students_making_is_never_read_by_the_trace():
    """The trace keeps the text of a raise only for torch's own exception classes with plain str arguments: a
    student's subclass (its __str__ runs their code) or a non-str argument is kept as "", which no record matches."""
    hostile = torch.Tensor._make_subclass(RaisingTensor, torch.ones(2, 3))
    with TensorTrace() as trace, pytest.raises(HostileError):
        hostile + 1
    assert trace.raised is not None and (trace.raised.shapes, trace.raised.message) == (((2, 3),), "")
    with TensorTrace() as trace, pytest.raises(RuntimeError):
        torch.ones(2, 3) @ torch.ones(2, 3)
    assert trace.raised is not None and "cannot be multiplied" in trace.raised.message
    assert trace.raised.shapes == ((2, 3), (2, 3))
