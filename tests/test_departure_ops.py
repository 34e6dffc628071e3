"""Rung 2 says which OTHER OPERATION stands in a step's place when the learner's tensor there is made from inputs
that matched (autograder.checking.step_relations.ELEMENTWISE and PAIRED): another entry-by-entry operation between
the same operands (divided where the notes subtract), the dot products of matching rows only (where the notes take
all pairs), the pairs taken between features instead of tokens, each row scaled to unit length first (cosine
similarities), one term alone of the sum a matrix product adds up (a running total replaced instead of added to).
Said only when exactly one computation of the family reproduces the learner's tensor on the case and the notes'
step does not; otherwise less (issue 58).

The attempts are written here from the notebooks' instructions; each test fails without the family (before it,
rung 2 said "none of the tensors your code made on this case holds it" or "holds other numbers"), and each sentence
is checked true against the attempt's own numbers on the notes' inputs.
"""

import torch

from attnkit import solutions
from autograder.checking.step_relations import Alternative, alternative_computation
from autograder.course.shared.inputs import NOTES_INPUTS
from tests.test_departure_how import kinds, lines, traced_departure
from tests.test_no_answer import answer_pieces, leaks


def shift_by_dividing(x, dim=-1):  # divides by each row's largest entry instead of subtracting it
    largest = x.max(dim=dim, keepdim=True).values
    exponentials = torch.exp(x / largest)
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


def shift_by_multiplying(x, dim=-1):  # multiplies by each row's largest entry instead of subtracting it
    largest = x.max(dim=dim, keepdim=True).values
    exponentials = torch.exp(x * largest / 1000)
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


def shift_by_the_minimum(x, dim=-1):  # subtracts each row's smallest entry instead of its largest
    shifted = x - x.min(dim=dim, keepdim=True).values
    exponentials = shifted.exp()
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


def shift_by_the_mean(x, dim=-1):  # subtracts each row's mean instead of its largest entry
    shifted = x - x.mean(dim=dim, keepdim=True)
    exponentials = shifted.exp()
    return exponentials / exponentials.sum(dim=dim, keepdim=True)


class OwnRowsOnly(solutions.SelfAttention_v2):  # each query scored against its own key only
    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = (queries * keys).sum(dim=-1)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


def scores_between_features(inputs):  # the embedding's features scored against each other (d_in x d_in)
    similarities = inputs.T @ inputs
    return inputs @ torch.softmax(similarities, dim=-1)


def unit_rows_in_place(inputs):  # each row scaled to length 1 first, in the caller's tensor
    inputs /= inputs.norm(dim=-1, keepdim=True)
    return torch.softmax(inputs @ inputs.T, dim=-1) @ inputs


def unit_rows_copied(inputs):  # the same scores from a scaled copy: the scaled copy, not the input, is scored
    scaled = inputs / inputs.norm(dim=-1, keepdim=True)
    return torch.softmax(scaled @ scaled.T, dim=-1) @ scaled


def keeps_the_last_term(inputs):  # the loop over tokens replaces its total instead of adding to it
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    total = torch.zeros_like(inputs)
    for token in range(inputs.shape[0]):
        total = weights[:, token:token + 1] * inputs[token]
    return total


def keeps_the_first_term(inputs):  # the loop stops after its first token
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    total = torch.zeros_like(inputs)
    for token in range(inputs.shape[0]):
        total = total + weights[:, token:token + 1] * inputs[token]
        break
    return total


ATTEMPTS = [("softmax_stable.notes", (shift_by_dividing,)), ("softmax_stable.notes", (shift_by_multiplying,)),
            ("self_attention_v2.notes", (OwnRowsOnly,)), ("context_vectors.notes", (scores_between_features,)),
            ("context_vectors.notes", (unit_rows_in_place,)), ("context_vectors.notes", (keeps_the_last_term,)),
            ("context_vectors.notes", (keeps_the_first_term,)), ("softmax_stable.notes", (shift_by_the_minimum,)),
            ("softmax_stable.notes", (shift_by_the_mean,))]
INPUTS = torch.tensor(NOTES_INPUTS)


def alternative_kinds(departure) -> list[str]:
    return [kind for kind in kinds(departure) if kind.startswith("alt_")]


def test_another_entry_by_entry_operation_between_the_same_operands_is_told():
    departure = traced_departure(*ATTEMPTS[0][:1], *ATTEMPTS[0][1])
    assert (departure.matched, departure.step, kinds(departure)) == (("maximum",), "shifted", ["alt_elementwise"])
    assert departure.facts[0].fields["op"] == "divided"
    text = lines(departure)
    assert ("the tensor your code made in its place is the input your function was given divided by the notes' "
            "maximum of each row, entry by entry, not the notes' inputs minus their maximum") in text["en"], text
    assert "传给你的函数的输入逐元素除以笔记中的" in text["zh"], text
    # True of the attempt's own numbers: the notes' scores over their row maximum, then the softmax of that.
    scores = INPUTS @ INPUTS.T
    divided = scores / scores.amax(dim=-1, keepdim=True)
    assert torch.allclose(shift_by_dividing(scores), torch.softmax(divided, dim=-1))
    # Another operation between the same operands is told as that one, never as the division.
    other = traced_departure(*ATTEMPTS[1][:1], *ATTEMPTS[1][1])
    assert other.step == "shifted" and other.facts[0].fields["op"] == "times", other
    assert "times the notes' maximum of each row, entry by entry" in lines(other)["en"]


def test_the_dot_products_of_matching_rows_only_are_told():
    departure = traced_departure(*ATTEMPTS[2][:1], *ATTEMPTS[2][1])
    assert (departure.matched, departure.step) == (("queries", "keys", "values"), "scores")
    assert kinds(departure) == ["shape", "alt_row_dots"]
    text = lines(departure)
    assert ("a tensor your code then made from those steps has shape (6,), the notes' attention scores (6, 6); it "
            "holds only the dot product of each row of the notes' keys with the same row of the notes' queries, not "
            "those of every pair of rows that the notes' attention scores hold") in text["en"], text
    assert "的同一行的点积" in text["zh"], text
    torch.manual_seed(0)
    module = OwnRowsOnly(3, 2)
    queries, keys = module.W_query(INPUTS), module.W_key(INPUTS)
    assert torch.allclose((queries * keys).sum(-1), torch.diagonal(queries @ keys.T))


def test_pairs_of_features_instead_of_tokens_are_told_with_their_shape():
    departure = traced_departure(*ATTEMPTS[3][:1], *ATTEMPTS[3][1])
    assert (departure.matched, departure.step, kinds(departure)) == ((), "scores", ["shape", "alt_feature_products"])
    text = lines(departure)
    assert ("has shape (3, 3), the notes' attention scores (6, 6); the tensor your code made in its place holds the "
            "dot products of each column (feature) of the input your function was given with each of its columns, "
            "pairs of features instead of pairs of rows (tokens)") in text["en"], text
    assert "配对的是特征而不是行" in text["zh"], text
    assert torch.allclose(scores_between_features(INPUTS), INPUTS @ torch.softmax(INPUTS.T @ INPUTS, dim=-1))


def test_rows_scaled_to_unit_length_before_the_products_are_told():
    departure = traced_departure(*ATTEMPTS[4][:1], *ATTEMPTS[4][1])
    assert (departure.step, kinds(departure)) == ("scores", ["alt_cosine"])
    text = lines(departure)
    assert ("holds the cosine similarities of each row of the input your function was given with each of its rows "
            "(each row scaled to length 1 before the dot products), not the notes' attention scores") in text["en"]
    assert "余弦相似度" in text["zh"], text
    unit = INPUTS / INPUTS.norm(dim=-1, keepdim=True)
    assert torch.allclose(unit_rows_in_place(INPUTS.clone()), torch.softmax(unit @ unit.T, dim=-1) @ unit)


def test_one_term_alone_of_the_product_is_told_and_which():
    departure = traced_departure(*ATTEMPTS[5][:1], *ATTEMPTS[5][1])
    assert (departure.matched, departure.step, alternative_kinds(departure)) == (
        ("scores", "weights"), "context_vectors", ["alt_last_term"])
    text = lines(departure)
    assert ("the result your function returns is only the last of the terms (one per column of the notes' attention "
            "weights) that the matrix product of the notes' attention weights and the input your function was given "
            "adds up, not the notes' context vectors") in text["en"], text
    assert "中的最后一项" in text["zh"], text
    weights = torch.softmax(INPUTS @ INPUTS.T, dim=-1)
    assert torch.allclose(keeps_the_last_term(INPUTS), weights[:, -1:] * INPUTS[-1:])
    first = traced_departure(*ATTEMPTS[6][:1], *ATTEMPTS[6][1])
    assert alternative_kinds(first) == ["alt_first_term"], first
    assert "only the first of the terms" in lines(first)["en"] and "last of the terms" not in lines(first)["en"]


def test_another_reduction_at_the_first_step_is_told_of_the_input_a_probe_computed():
    """The softmax's probe computes the scores it passes: the tensor it computed is the input the function was given
    because, as the notes' input, its maximum of each row is the notes' first step; then the minimum in its place is
    said (its shape, a column, tells it from the minimum of each column on the notes' symmetric scores)."""
    departure = traced_departure(*ATTEMPTS[7][:1], *ATTEMPTS[7][1])
    assert (departure.matched, departure.step, kinds(departure)) == ((), "maximum", ["alt_reduction"])
    assert departure.facts[0].fields == {"op": "min", "operands": ("inputs",), "axis": 1}
    text = lines(departure)
    assert ("the tensor your code made in its place is the minimum of the input your function was given along "
            "dimension 1, not the notes' maximum of each row") in text["en"], text
    assert "沿第 1 个维度的最小值" in text["zh"], text
    scores = INPUTS @ INPUTS.T
    assert torch.allclose(shift_by_the_minimum(scores), torch.softmax(scores - scores.amin(1, keepdim=True), dim=1))
    mean = traced_departure(*ATTEMPTS[8][:1], *ATTEMPTS[8][1])
    assert mean.facts[0].fields["op"] == "mean" and "the mean of the input" in lines(mean)["en"], mean


def test_right_programs_and_other_mistakes_get_none_of_these_sentences():
    # A right program departs nowhere.
    for check_id, right in [("softmax_stable.notes", solutions.softmax_stable),
                            ("context_vectors.notes", solutions.context_vectors)]:
        assert traced_departure(check_id, right).step is None
    # Each attempt gets its own relation only: no two of the family are said of one tensor.
    said = [tuple(alternative_kinds(traced_departure(check_id, *objects))) for check_id, objects in ATTEMPTS]
    assert said == [("alt_elementwise",), ("alt_elementwise",), ("alt_row_dots",), ("alt_feature_products",),
                    ("alt_cosine",), ("alt_last_term",), ("alt_first_term",), ("alt_reduction",), ("alt_reduction",)]


def test_a_scaled_copy_is_not_called_the_input():
    """Scores of a copy the code computed from the input are not the input's: the computed copy stands between the
    input and the result, so the cosine is not said of the input (and nothing else of the family is)."""
    departure = traced_departure("context_vectors.notes", unit_rows_copied)
    assert departure.step == "scores" and not alternative_kinds(departure), departure


def test_nothing_is_said_when_two_operations_fit():
    """2 + 2 and 2 * 2: the case does not tell the sum from the product, so neither is said."""
    close = lambda got, expected: torch.allclose(got, expected)  # noqa: E731
    two = torch.full((2, 2), 2.0, dtype=torch.float64)
    notes = torch.zeros(2, 2, dtype=torch.float64)
    assert alternative_computation(two * 2, notes, {"first": two, "second": two.clone()}, close) is None
    first = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    second = torch.tensor([[2.0], [5.0]], dtype=torch.float64)
    assert alternative_computation(first / second, notes, {"first": first, "second": second}, close) == Alternative(
        "elementwise", "divided", ("first", "second"))
    # The notes' own operation is never said, even where the learner's tensor is near it.
    assert alternative_computation(first - second, first - second, {"first": first, "second": second}, close) is None


def test_the_new_sentences_leak_no_answer():
    pieces, calls = answer_pieces()
    for check_id, objects in ATTEMPTS:
        for lang, line in lines(traced_departure(check_id, *objects)).items():
            assert line and "{" not in line and "departure." not in line, (lang, line)
            assert not leaks(line, pieces, calls), (check_id, lang, line)


def test_operations_too_large_to_compute_are_not_tried():
    """A learner's operands of many rows and many columns: a term, the features' products or an entry-by-entry
    operation that broadcasts a column against a row would hold their product's count of entries. The bound is read
    from the shapes before anything is computed."""
    from autograder.checking import step_relations

    column, row = torch.ones(2**12, 2, dtype=torch.float64), torch.ones(2, 2**12, dtype=torch.float64)
    assert step_relations._paired(column, row, "last_term") is None
    assert step_relations._paired(row, row, "feature_products") is None
    assert step_relations._elementwise(column[:, :1], row[:1], "times") is None
    assert step_relations._paired(column[:8], row[:, :8], "last_term").shape == (8, 8)
    assert step_relations._elementwise(column[:8, :1], row[:1, :8], "times").shape == (8, 8)


def test_a_result_with_nan_in_it_still_finds_the_tensor_in_the_first_steps_place():
    """On a wide vector the minimum subtracted leaves 1000 to exponentiate: the result holds NaN, and is found among
    the traced tensors by its other entries, so the minimum in the maximum's place is said (before: nothing)."""
    from autograder.checking.departure import STEPS, find_departure, recorded_output
    from autograder.checking.tensor_trace import traced_probe
    from autograder.course import catalog
    from autograder.course.shared.plan import resolve
    from autograder.running import in_notebook
    from autograder.running.runner import cases_for

    seed = in_notebook.DEFAULT_SEED

    exercise = next(e for e in in_notebook.EXERCISES if e.id == "softmax_stable")
    check = next(check for check in catalog.checks_of("softmax_stable", include_hidden=False)
                 if check.id == "softmax_stable.large.preview")
    case = next(case for case in cases_for(check, seed) if case.get("values") == [-1000.0, 0.0, 1000.0])
    record, traced = traced_probe(resolve(in_notebook._runnable(check, seed).probe),
                                  exercise.namespace((shift_by_the_minimum,)), case)
    output = recorded_output(record)
    assert output is not None and bool(torch.isnan(output).any())
    departure = find_departure(check.expect(record, case)[STEPS], traced, output)
    assert departure.step == "maximum" and alternative_kinds(departure) == ["alt_reduction"], departure
    assert departure.facts[0].fields == {"op": "min", "operands": ("inputs",), "axis": 0}
    assert "is the minimum of the input your function was given along dimension 0" in lines(departure)["en"]
