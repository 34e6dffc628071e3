"""Rung 2 says HOW a learner's tensor departs when it is another simple computation of the departing step's own
operands (autograder.checking.step_relations.alternative_computation): another reduction (max, min, mean, sum,
log-sum-exp along another axis or over everything), the notes' step transformed entry by entry (absolute values,
squares, exponentials, logarithms), a product of another pair of operands (or of their rows: dot products, cosine
similarities). Said only when exactly one alternative fits, the notes' step does not, and the case tells the two
apart (issue 58).

The attempts are written here from the notebooks' instructions; each test fails without the family (before it,
rung 2 said "holds other numbers", or "computed from your ...", with no how). Each sentence is checked true against
the attempt's own numbers on the notes' inputs.
"""

import torch

from attnkit import solutions
from autograder.checking.departure import find_departure, step
from autograder.checking.step_relations import Alternative, alternative_computation
from autograder.checking.tensor_trace import INPUT, TracedTensor
from autograder.course.shared.inputs import NOTES_INPUTS
from tests.test_departure import ROUTES
from tests.test_departure_how import kinds, lines, traced_departure
from tests.test_no_answer import answer_pieces, leaks


def renormalise_by_the_largest(attn_weights):  # divides each masked row by its largest entry, not by its sum
    masked = attn_weights * torch.tril(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1]))
    return masked / masked.max(dim=-1, keepdim=True).values


def context_from_log_weights(inputs):  # the log of the weights (log_softmax), then the context vectors
    weights = torch.log_softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs


class ScoresWithTheValues(solutions.SelfAttention_v1):  # scores of the queries against the values, not the keys
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = queries @ values.T + 0 * keys.sum()
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


ATTEMPTS = [("masking_routes.renormalise_notes", (renormalise_by_the_largest, ROUTES[1])),
            ("context_vectors.notes", (context_from_log_weights,)),
            ("self_attention_v1.notes", (ScoresWithTheValues,))]


def test_another_reduction_of_the_same_operand_is_told():
    departure = traced_departure(*ATTEMPTS[0][:1], *ATTEMPTS[0][1])
    assert (departure.step, kinds(departure)) == ("row_sums", ["alt_reduction"])
    assert departure.facts[0].fields == {"op": "max", "operands": ("masked_weights",), "axis": 1}
    text = lines(departure)
    assert ("is the maximum of the notes' attention weights with the future zeroed along dimension 1, not the notes' "
            "sums of each row") in text[
        "en"], text
    assert "笔记中的" in text["zh"] and "沿第 1 个维度的最大值" in text["zh"], text
    # True of the attempt's own numbers: each row divided by its largest entry.
    weights = torch.softmax(solutions.attention_scores(torch.tensor(NOTES_INPUTS)), dim=-1)
    masked = weights * torch.ones(6, 6).tril()
    assert torch.allclose(renormalise_by_the_largest(weights), masked / masked.amax(dim=1, keepdim=True))


def test_the_step_transformed_entry_by_entry_is_told():
    departure = traced_departure(*ATTEMPTS[1][:1], *ATTEMPTS[1][1])
    assert (departure.matched, departure.step, kinds(departure)) == (("scores",), "weights", ["alt_transform"])
    assert departure.facts[0].fields["op"] == "log"
    text = lines(departure)
    assert "is the notes' attention weights with each entry replaced by its logarithm" in text["en"], text
    assert "每个元素换成它的对数" in text["zh"], text
    inputs = torch.tensor(NOTES_INPUTS)
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    assert torch.allclose(context_from_log_weights(inputs), weights.log() @ inputs, atol=1e-6)


def test_a_product_of_another_pair_of_operands_is_told():
    departure = traced_departure(*ATTEMPTS[2][:1], *ATTEMPTS[2][1])
    assert (departure.step, kinds(departure)) == ("scores", ["alt_dot_products"])
    assert departure.facts[0].fields["operands"] == ("queries", "values")
    text = lines(departure)
    assert ("holds the dot products of each row of the notes' queries with each row of the notes' values, not the "
            "notes' attention scores") in text["en"], text
    assert "笔记中的query的每一行与笔记中的value的每一行的点积" in text["zh"], text
    torch.manual_seed(0)
    module = ScoresWithTheValues(3, 2)
    x = torch.tensor(NOTES_INPUTS)
    queries, values = x @ module.W_query, x @ module.W_value
    expected = torch.softmax(queries @ values.T / 2 ** 0.5, dim=-1) @ values
    assert torch.allclose(module(x), expected)


def test_the_new_sentences_leak_no_answer():
    pieces, calls = answer_pieces()
    for check_id, objects in [*ATTEMPTS, *RESULT_ATTEMPTS]:
        for lang, line in lines(traced_departure(check_id, *objects)).items():
            assert line and "{" not in line and "departure." not in line, (lang, line)
            assert not leaks(line, pieces, calls), (check_id, lang, line)


def test_nothing_is_said_when_two_alternatives_fit():
    """Rows of one repeated number: their maximum, minimum and mean are one number each; none is proven."""
    scores = torch.tensor([[2.0, 2.0], [3.0, 3.0]], dtype=torch.float64)
    theirs = torch.tensor([[2.0], [3.0]], dtype=torch.float64)
    close = lambda got, expected: torch.allclose(got, expected)  # noqa: E731
    assert alternative_computation(theirs, scores.sum(dim=1, keepdim=True), {"scores": scores}, close) is None
    steps = [step("scores", scores), step("sums", scores.sum(dim=1, keepdim=True))]
    traced = [TracedTensor(INPUT, scores.clone(), ()), TracedTensor("op", scores.clone(), (0,)),
              TracedTensor("amax", theirs, (1,))]
    departure = find_departure(steps, traced, None)
    assert departure.step == "sums" and not any(kind.startswith("alt_") for kind in kinds(departure))
    # With rows of different numbers only the maximum fits: said.
    scores = torch.tensor([[2.0, 1.0], [3.0, 5.0]], dtype=torch.float64)
    assert alternative_computation(torch.tensor([[2.0], [5.0]], dtype=torch.float64),
                                   scores.sum(dim=1, keepdim=True), {"scores": scores}, close) == Alternative(
        "reduction", "max", ("scores",), 1)


def test_nothing_is_said_when_the_case_cannot_tell_the_alternative_from_the_step():
    """Sums over the other axis of a symmetric operand are the notes' own sums: on that case nothing departs; and an
    alternative equal to the notes' step is never the one said, even where the learner's tensor is another."""
    scores = torch.tensor([[1.0, 2.0], [2.0, 5.0]], dtype=torch.float64)
    close = lambda got, expected: torch.allclose(got, expected)  # noqa: E731
    notes = scores.sum(dim=1, keepdim=True)
    assert alternative_computation(scores.sum(dim=0, keepdim=True), notes, {"scores": scores}, close) is None
    # Sums over dimension 0 within the comparison's tolerance of the notes' sums over dimension 1: a tensor near
    # the first and not the second is not said to be the first (the case does not tell them apart).
    scores = torch.tensor([[1.0, 2.0], [2.2, 5.0]], dtype=torch.float64)
    loose = lambda got, expected: got.shape == expected.shape and bool(  # noqa: E731
        ((got - expected).abs() <= 0.3).all())
    theirs = torch.tensor([[3.4, 6.9]], dtype=torch.float64)
    notes = scores.sum(dim=1, keepdim=True)
    assert alternative_computation(theirs, notes, {"scores": scores}, loose) is None
    assert alternative_computation(theirs, notes + 1, {"scores": scores}, loose) == Alternative(
        "reduction", "sum", ("scores",), 0)  # where the step is told apart from it, the same tensor is said to be it


def context_mixing_the_scores(inputs):  # the weights mix the scores, not the input vectors
    scores = inputs @ inputs.T
    return torch.softmax(scores, dim=-1) @ scores


class ContextOfTheInputs(solutions.SelfAttention_v2):  # the weights mix the inputs; the values never made
    def forward(self, x):
        queries, keys = self.W_query(x), self.W_key(x)
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ x


RESULT_ATTEMPTS = [("context_vectors.notes", (context_mixing_the_scores,)),
                   ("self_attention_v2.notes", (ContextOfTheInputs,))]


def test_a_result_made_from_another_pair_of_the_notes_steps_is_told_which_product_it_is():
    departure = traced_departure("context_vectors.notes", context_mixing_the_scores)
    assert (departure.step, kinds(departure)) == ("context_vectors", ["shape", "alt_product"])
    assert departure.facts[1].fields["operands"] == ("weights", "scores")
    text = lines(departure)
    assert ("the result your function returns is the matrix product of the notes' attention weights and the notes' "
            "attention scores, not the notes' context vectors") in text["en"], text
    assert "你的函数返回的结果是笔记中的注意力权重与笔记中的注意力分数的矩阵乘积，而不是笔记中的上下文向量" in text[
        "zh"], text
    inputs = torch.tensor(NOTES_INPUTS)
    scores = solutions.attention_scores(inputs)
    assert torch.allclose(context_mixing_the_scores(inputs), torch.softmax(scores, dim=-1) @ scores)


def test_a_result_past_the_departing_step_is_told_against_the_notes_last_step():
    departure = traced_departure("self_attention_v2.notes", ContextOfTheInputs)
    assert (departure.step, kinds(departure)) == ("values", ["alt_product"])
    assert departure.facts[0].fields["operands"] == ("weights", "inputs") and departure.facts[0].of == "context_vectors"
    text = lines(departure)
    assert ("the result your function returns is the matrix product of the notes' attention weights and the input "
            "your function was given, not the notes' context vectors") in text["en"], text
    assert "笔记中的注意力权重与传给你的函数的输入的矩阵乘积，而不是笔记中的上下文向量" in text["zh"], text
    torch.manual_seed(0)
    module = ContextOfTheInputs(3, 2)
    x = torch.tensor(NOTES_INPUTS)
    weights = torch.softmax(module.W_query(x) @ module.W_key(x).T / 2 ** 0.5, dim=-1)
    assert torch.allclose(module(x), weights @ x)


def test_a_product_too_large_to_compute_is_not_tried():
    """Operands of many rows and one column: their rows' dot products would hold rows squared entries. The bound is
    read from the shapes before any product is computed (the case's operands are the course's, but it is kept)."""
    from autograder.checking import step_relations

    tall = torch.ones(2**14, 1, dtype=torch.float64)
    assert step_relations._product(tall, tall, "dot_products") is None
    assert step_relations._product(tall[:8], tall[:8], "dot_products").shape == (8, 8)


def test_a_pairing_of_two_operands_is_found_in_the_order_the_learner_took_them():
    """queries^T @ keys and keys^T @ queries hold one pairing of features transposed: each is found in its own order
    (only one order was tried before: a learner's queries.T @ keys went unexplained), and a pairing whose two orders
    give the same numbers (a tensor with itself) is one computation, not two that leave it ambiguous."""
    generator = torch.Generator().manual_seed(3)
    queries, keys = torch.randn(6, 2, generator=generator), torch.randn(6, 2, generator=generator)
    scores = queries @ keys.T
    close = lambda got, expected: got.shape == expected.shape and bool(torch.allclose(got, expected))  # noqa: E731
    operands = {"queries": queries, "keys": keys}
    assert alternative_computation(queries.T @ keys, scores, operands, close) == Alternative(
        "feature_products", "", ("queries", "keys"))
    assert alternative_computation(keys.T @ queries, scores, operands, close) == Alternative(
        "feature_products", "", ("keys", "queries"))
    assert alternative_computation(keys @ queries.T, scores, operands, close) == Alternative(
        "dot_products", "", ("keys", "queries"))
    assert alternative_computation(queries.T @ queries, scores, operands, close) == Alternative(
        "feature_products", "", ("queries", "queries"))


def test_a_slice_that_happens_to_be_the_maximum_is_not_said_a_maximum():
    """12t's tz-pm-09: head 0's scores (a `select`) were "the maximum of the notes' attention scores along dimension
    1" because on that input head 0 was the larger everywhere. A maximum is said only of what a picking op made."""
    scores = torch.tensor([[2.0, 1.0], [3.0, 5.0]], dtype=torch.float64)
    steps = [step("scores", scores), step("sums", scores.sum(dim=1, keepdim=True))]
    largest = torch.tensor([[2.0], [5.0]], dtype=torch.float64)
    for op, said in (("amax", True), ("select", False)):
        traced = [TracedTensor(INPUT, scores.clone(), ()), TracedTensor("op", scores.clone(), (0,)),
                  TracedTensor(op, largest, (1,))]
        departure = find_departure(steps, traced, None)
        assert departure.step == "sums", departure
        assert ("alt_reduction" in kinds(departure)) is said, (op, departure)
