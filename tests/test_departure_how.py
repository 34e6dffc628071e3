"""Rung 2 says HOW a learner's tensor departs from the notes' step, read from the two tensors of their own run
(autograder.checking.departure, autograder.checking.step_relations): a constant factor (named by the case's size
whose square root it is, only when one size fits), the slices along one dimension in another order, weights that
sum to 1 over the whole tensor, a constant added, the step it is made from times a number, entries zeroed or kept,
the function's result against the notes' last step. Each fact is said only where it holds exactly on the case and
tells the learner's tensor from the notes' (issue 58: "a named mistake is a proven mistake").

The attempts are written here as a learner would from the notebooks' instructions (not from any evaluation set);
each test fails without the fact it checks (before it, rung 2 said "holds other numbers", or nothing).
"""

import pytest
import torch

from attnkit import solutions
from autograder.checking.departure import (
    FROM_PREVIOUS,
    OUTPUT,
    STEPS,
    Departure,
    departure_line,
    find_departure,
    recorded_output,
    step,
)
from autograder.checking.step_relations import case_sizes, named_size
from autograder.checking.tensor_trace import INPUT, TracedTensor, traced_probe
from autograder.course import catalog
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.runner import cases_for
from tests.test_departure import ROUTES
from tests.test_no_answer import answer_pieces, leaks

SEED = in_notebook.DEFAULT_SEED


def traced_departure(check_id: str, *objects) -> Departure:
    """The departure of `objects` on the first case of the public check `check_id`, with the function's output (as
    check(...) diagnoses it)."""
    exercise = next(e for e in in_notebook.EXERCISES if check_id.startswith(e.id + "."))
    check = next(check for check in catalog.checks_of(exercise.id, include_hidden=False) if check.id == check_id)
    case = cases_for(check, SEED)[0]
    record, traced = traced_probe(resolve(in_notebook._runnable(check, SEED).probe), exercise.namespace(objects), case)
    assert "error" not in record, record
    return find_departure(check.expect(record, case)[STEPS], traced, recorded_output(record))


def kinds(departure: Departure) -> list[str]:
    return [fact.kind for fact in departure.facts]


def lines(departure: Departure) -> dict[str, str]:
    return {lang: departure_line(departure, lang, catalog.MESSAGES) for lang in ("en", "zh")}


# ------------------------------------------------------------------ learner attempts, each with a how


class CausalDividedByDk(solutions.CausalAttention):  # divides by d_k itself, not by its square root
    def forward(self, x):
        num_tokens = x.shape[1]
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1], dim=-1)
        return self.dropout(weights) @ values


def neg_inf_normalised_over_everything(attn_scores):  # one softmax over all the entries at once
    hidden = torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]).triu(1).bool()
    masked = attn_scores.masked_fill(hidden, -torch.inf)
    return torch.softmax(masked.reshape(-1), dim=0).reshape(masked.shape)


def neg_inf_halved(attn_scores):  # halves the masked scores before the softmax
    hidden = torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]).triu(1).bool()
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf) * 0.5, dim=-1)


class WrapperHeadsLastFirst(solutions.MultiHeadAttentionWrapper):  # the heads side by side, last one first
    def forward(self, x):
        return torch.cat([head(x) for head in reversed(self.heads)], dim=-1)


def context_of_tokens_in_reverse(inputs):  # the weights' rows taken last token first
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights.flip(0) @ inputs


def softmax_over_squares(x):  # the exponentials over the sum of the squared inputs
    return torch.exp(x) / (x * x).sum(dim=0)


def softmax_averaged(x):  # each exponential over the average of the exponentials
    exps = x.exp()
    return exps / (exps.sum(dim=0) / x.shape[0])


def test_a_scale_by_d_k_instead_of_its_root_is_told_with_the_size():
    departure = traced_departure("causal_attention.notes", CausalDividedByDk)
    assert departure.step == "scaled_scores" and kinds(departure) == ["divided_root"]
    fields = departure.facts[0].fields
    assert (fields["factor"], fields["size"], fields["value"]) == ("1.41", "d_k", 2)  # 2 / sqrt(2) = sqrt(2)
    text = lines(departure)
    assert "divided by 1.41, the square root of d_k, the size of each key (2)" in text["en"]
    assert "除以 1.41，即d_k（每个 key 的大小）（2）的平方根" in text["zh"]


def test_weights_normalised_over_the_whole_tensor_are_told_so():
    departure = traced_departure("masking_routes.neg_inf_notes", ROUTES[0], neg_inf_normalised_over_everything)
    assert departure.step == "weights" and kinds(departure) == ["sums_all"]
    text = lines(departure)
    assert ("sums to 1 over all its entries together; in the notes' attention weights, the entries sum to 1 along "
            "dimension 1") in text["en"]
    assert "所有元素加起来等于 1" in text["zh"]


def test_a_scale_between_two_steps_is_told_from_the_step_it_is_made_from():
    departure = traced_departure("masking_routes.neg_inf_notes", ROUTES[0], neg_inf_halved)
    assert (departure.matched, departure.step) == (("causal_mask", "masked_scores"), "weights")
    assert [(fact.kind, fact.about, fact.of, fact.fields["factor"]) for fact in departure.facts] == [
        ("divided", FROM_PREVIOUS, "masked_scores", "2")]
    assert ("the tensor your code made in its place from the notes' masked attention scores is the notes' masked "
            "attention scores divided by 2") in lines(departure)["en"]


def test_heads_in_another_order_are_told_with_their_dimension():
    departure = traced_departure("mha_wrapper.notes", WrapperHeadsLastFirst)
    assert (departure.matched, departure.step, kinds(departure)) == (
        ("head_0", "head_1"), "heads_concatenated", ["permuted"])
    fields = departure.facts[0].fields
    assert (fields["axis"], fields["size"], fields["reversed"]) == (2, 4, False)  # heads swapped, features in order
    # The features' slices reordered are the heads reordered: said by the step's name for that axis (its heads
    # and features declared), not as 4 slices rolled round by 2 (issue 58).
    assert fields["name"] == "heads"
    text = lines(departure)
    assert text["en"].endswith("holds the notes' context vectors of all heads side by side with its heads in another "
                               "order"), text["en"]
    assert text["zh"].endswith("只是头的顺序不同"), text["zh"]


def test_tokens_in_reverse_order_are_told_reversed():
    departure = traced_departure("context_vectors.notes", context_of_tokens_in_reverse)
    assert (departure.matched, departure.step, kinds(departure)) == (
        ("scores", "weights"), "context_vectors", ["permuted"])
    fields = departure.facts[0].fields
    assert (fields["axis"], fields["size"], fields["reversed"]) == (0, 6, True)
    text = lines(departure)
    assert "with its 6 slices along dimension 0 (of shape (6, 3)) in reverse order" in text["en"]
    assert "顺序反了过来" in text["zh"]


def test_the_result_is_told_against_the_notes_last_step_when_the_step_has_no_stand_in():
    departure = traced_departure("softmax_naive.notes", softmax_over_squares)
    assert departure.step == "sums"
    assert [(fact.kind, fact.about, fact.of) for fact in departure.facts] == [("factor", OUTPUT, "division")]
    assert "the result your function returns is the notes' exponentials divided by their sum times" in lines(
        departure)["en"]


def test_a_result_a_size_times_the_notes_is_told_with_the_size():
    departure = traced_departure("softmax_naive.notes", softmax_averaged)
    assert (departure.matched, departure.step) == (("exponentials", "sums"), "division")
    assert [(fact.kind, fact.about, fact.fields["factor"], fact.fields["size"]) for fact in departure.facts] == [
        ("factor_size", OUTPUT, "6", "summed")]  # the notes' 6 scores: each sum adds up 6 entries
    text = lines(departure)
    assert ("the result your function returns is the notes' exponentials divided by their sum times 6, which is the "
            "number of entries each of the notes' sums adds up") in text["en"]
    assert "你的函数返回的结果是笔记中的指数除以它们的和乘以 6，也就是笔记中每个和所相加的元素个数" in text["zh"]


def test_a_result_that_holds_the_last_step_is_told_nothing_of_it():
    """softmax is the same for scores shifted by any number: a result that is the notes' own is not said to hold
    their numbers "in other places" (nor other numbers)."""
    def shifted_by_one_more(x, dim=-1):
        exps = torch.exp(x - x.max(dim=dim, keepdim=True).values + 1)
        return exps / exps.sum(dim=dim, keepdim=True)
    departure = traced_departure("softmax_stable.notes", shifted_by_one_more)
    assert departure.step == "exponentials"
    assert all(fact.about != OUTPUT for fact in departure.facts), departure.facts


# ------------------------------------------------------------------ facts from hand-made traces (exactness, truth)


def test_entries_set_to_0_or_kept_are_counted_where_every_other_entry_is_the_notes():
    torch.manual_seed(0)
    scores = torch.randn(4, 4, dtype=torch.float64)
    weights = torch.softmax(scores, dim=-1) * torch.ones(4, 4).tril()
    steps = [step("scores", scores), step("masked_weights", weights)]
    zeroed = weights.clone()
    zeroed[3, 0] = 0
    kept = weights + torch.ones(4, 4).triu(1) * 0.25
    for theirs, kind, count in ((zeroed, "zeroed", 1), (kept, "extra", 6)):
        traced = [TracedTensor(INPUT, scores.clone(), ()), TracedTensor("op", scores.clone(), (0,)),
                  TracedTensor("op", theirs, (1,))]
        departure = find_departure(steps, traced, None)
        assert departure.step == "masked_weights" and [(f.kind, f.fields["count"]) for f in departure.facts] == [
            (kind, count)]


def test_no_entry_is_called_kept_where_the_notes_step_is_all_zeros():
    """The notes' inputs minus their maximum on [5, 5] are [0, 0]: a tensor of [10, 10] in their place is no "step
    but kept entries"; it is the step plus 10."""
    x = torch.tensor([5.0, 5.0], dtype=torch.float64)
    steps = [step("maximum", x.max(dim=0, keepdim=True).values), step("shifted", x - 5)]
    traced = [TracedTensor(INPUT, x, ()), TracedTensor("max", torch.tensor([5.0], dtype=torch.float64), (0,)),
              TracedTensor("add", x + 5, (0, 1))]
    departure = find_departure(steps, traced, None)
    assert departure.step == "shifted" and kinds(departure) == ["plus"]
    assert departure.facts[0].fields["offset"] == "10"


def test_weights_are_not_said_to_sum_to_1_elsewhere_where_the_notes_do_too():
    """A doubly stochastic step sums to 1 along both dimensions: "along dimension 0 instead of 1" would tell
    nothing, and over the whole tensor a single row is the notes' own normalisation."""
    notes = torch.tensor([[0.7, 0.3], [0.3, 0.7]], dtype=torch.float64)
    theirs = torch.tensor([[0.6, 0.4], [0.4, 0.6]], dtype=torch.float64)
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    steps = [step("scores", scores), step("weights", notes)]
    traced = [TracedTensor(INPUT, scores, ()), TracedTensor("op", scores.clone(), (0,)),
              TracedTensor("softmax", theirs, (1,))]
    departure = find_departure(steps, traced, None)
    assert departure.step == "weights" and kinds(departure)[:1] == ["differs"]  # (made from the scores: said too)
    row = torch.tensor([[0.2, 0.8]], dtype=torch.float64)
    steps = [step("scores", scores[:1]), step("weights", row)]
    traced = [TracedTensor(INPUT, scores[:1], ()), TracedTensor("op", scores[:1].clone(), (0,)),
              TracedTensor("softmax", torch.tensor([[0.4, 0.6]], dtype=torch.float64), (1,))]
    assert "sums_all" not in kinds(find_departure(steps, traced, None))


def test_a_tensor_holding_another_of_the_notes_steps_is_told_which():
    """Their code made the values' numbers again where the context vectors go (the weights read, then dropped)."""
    x = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], dtype=torch.float64)
    values, scores = x * 3, x @ x.T
    weights = torch.softmax(scores, dim=-1)
    steps = [step("values", values), step("scores", scores), step("weights", weights),
             step("context_vectors", weights @ values)]
    traced = [TracedTensor(INPUT, x, ()), TracedTensor("mul", values, (0,)), TracedTensor("mm", scores, (0,)),
              TracedTensor("softmax", weights, (2,)), TracedTensor("op", values.clone(), (3, 1))]
    departure = find_departure(steps, traced, None)
    assert departure.step == "context_vectors" and departure.facts[0].kind == "other_step"
    assert departure.facts[0].fields == {"other": "values"}
    assert "holds the notes' values, not their context vectors" in lines(departure)["en"]
    # A tensor that is the context vectors' own numbers in their place is no other step (it is the step itself).
    traced[-1] = TracedTensor("op", weights @ values, (3, 1))
    assert find_departure(steps, traced, None).step is None


@pytest.mark.parametrize(("factor", "sizes", "named"), [
    (2 ** 0.5, {"d_k": 2, "num_tokens": 6}, ("d_k", "root")),
    (2 ** 0.5, {"d_out": 2, "num_heads": 2, "head_dim": 1}, None),  # the notes' 2 heads of size 1
    (2.0, {"num_heads": 4, "head_dim": 2}, None),  # sqrt(4) and 2 itself: two sizes fit
    (6.0, {"num_tokens": 6, "d_k": 2}, ("num_tokens", "size")),
    (3.0, {"num_tokens": 6, "d_k": 2}, None),
])
def test_a_size_is_named_only_when_it_alone_fits(factor, sizes, named):
    assert named_size(factor, sizes) == named


def test_the_case_sizes_are_read_from_the_steps_shapes():
    assert case_sizes({"keys": (2, 6, 4), "split_keys": (2, 2, 6, 2)}) == {
        "num_tokens": 6, "num_heads": 2, "head_dim": 2, "d_out": 4}
    assert case_sizes({"keys": (1, 6, 2), "scores": (1, 6, 6)}) == {"d_k": 2, "num_tokens": 6}
    assert case_sizes({"exponentials": (5, 4), "sums": (1, 4)}) == {"summed": 5}


def test_the_new_sentences_leak_no_answer():
    pieces, calls = answer_pieces()
    attempts = [("causal_attention.notes", (CausalDividedByDk,)),
                ("masking_routes.neg_inf_notes", (ROUTES[0], neg_inf_normalised_over_everything)),
                ("masking_routes.neg_inf_notes", (ROUTES[0], neg_inf_halved)),
                ("mha_wrapper.notes", (WrapperHeadsLastFirst,)),
                ("context_vectors.notes", (context_of_tokens_in_reverse,)),
                ("softmax_naive.notes", (softmax_over_squares,)), ("softmax_naive.notes", (softmax_averaged,))]
    for check_id, objects in attempts:
        for lang, line in lines(traced_departure(check_id, *objects)).items():
            assert line and "{" not in line and "step." not in line and "departure." not in line, (lang, line)
            assert not leaks(line, pieces, calls), (check_id, lang, line)


def test_a_route_that_returns_its_masked_scores_is_told_so():
    """The masking routes' probes record the result as "weights": it is read as the function's output too."""
    def masked_and_returned(attn_scores):
        return attn_scores.masked_fill(torch.ones_like(attn_scores).triu(1).bool(), -torch.inf)
    departure = traced_departure("masking_routes.neg_inf_notes", ROUTES[0], masked_and_returned)
    assert (departure.step, departure.returned) == ("weights", "masked_scores")
    text = lines(departure)
    assert "your function returns the masked attention scores, a step before the attention weights" in text["en"]
    assert "你的函数返回的是填入掩码后的注意力分数，这是注意力权重之前的一步" in text["zh"]
    assert recorded_output({"weights": torch.ones(2)}) is not None and recorded_output({"weights": 1.0}) is None


class ValuesFromKeyWeights(solutions.SelfAttention_v1):  # the values projected with the keys' weights
    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_key
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values + 0 * self.W_value.sum()


def test_a_step_computed_a_second_time_where_another_goes_is_told():
    """Their code computes the keys twice and the values never (the queries once: no second call of theirs)."""
    departure = traced_departure("self_attention_v1.notes", ValuesFromKeyWeights)
    assert (departure.matched, departure.step, kinds(departure)) == (("queries", "keys"), "values", ["repeated"])
    text = lines(departure)
    assert "your code computes the notes' keys a second time, and none of its tensors is the notes' values" in text[
        "en"]
    assert "你的代码把笔记中的key又算了一遍，而它算出的张量中没有一个是笔记中的value" in text["zh"]


def test_a_function_called_twice_is_not_said_to_compute_a_step_twice():
    """The renormalising route, run twice by its probe: every step appears twice, none more often than another."""
    from tests.test_departure import renormalise_forgotten
    departure = traced_departure("masking_routes.renormalise_notes", renormalise_forgotten, ROUTES[1])
    assert departure.step == "row_sums" and "repeated" not in kinds(departure)


class WrapperOfOneHeadOnly(solutions.MultiHeadAttentionWrapper):  # returns the first head's output, not all of them
    def forward(self, x):
        return self.heads[0](x)


class WrapperOfTheSecondHeadOnly(solutions.MultiHeadAttentionWrapper):  # returns heads[1]'s output alone
    def forward(self, x):
        return self.heads[1](x)


def test_a_head_is_named_the_way_the_notes_number_heads_from_zero():
    # The notes number heads from 0 (`heads[0]`; "head 1 of sequence 0" is the second): the first head is head 0.
    first = lines(traced_departure("mha_wrapper.notes", WrapperOfOneHeadOnly))
    assert "context vectors of head 0 (heads counted from 0, as in the notes)" in first["en"], first["en"]
    assert "头 0（与笔记一样从 0 开始编号）的上下文向量" in first["zh"], first["zh"]
    assert "your function returns the context vectors of head 0 (" in first["en"], first["en"]
    second = lines(traced_departure("mha_wrapper.notes", WrapperOfTheSecondHeadOnly))
    assert "your function returns the context vectors of head 1 (" in second["en"], second["en"]
    right = traced_departure("mha_wrapper.notes", solutions.MultiHeadAttentionWrapper)
    assert "your function returns the context vectors of head" not in lines(right)["en"]


def softmax_base_two(x):  # 2 to the scores, not e
    powers = 2 ** x
    return powers / powers.sum(0)


def softmax_stable_base_ten(x, dim=-1):  # 10 to the shifted scores
    shifted = x - x.max(dim=dim, keepdim=True).values
    powers = 10 ** shifted
    return powers / powers.sum(dim=dim, keepdim=True)


def test_exponentials_of_another_base_are_told_the_power_and_the_base():
    """2**x is e**x raised to the power ln 2: the tensor in the exponentials' place is told as the notes'
    exponentials to that power, powers of 2 where the notes' are powers of e (issue 58, a learner's attempt);
    true of the stable softmax's exponentials of the shifted scores as well."""
    departure = traced_departure("softmax_naive.notes", softmax_base_two)
    assert (departure.step, kinds(departure)) == ("exponentials", ["power_base"]), departure
    text = lines(departure)
    assert ("each entry of the tensor your code made in its place is the notes' exponentials raised to the power "
            "0.693: powers of 2, where the notes' are powers of e") in text["en"], text
    assert "每个元素都是笔记中的指数的 0.693 次幂：它们是 2 的幂" in text["zh"], text
    ten = traced_departure("softmax_stable.notes", softmax_stable_base_ten)
    assert kinds(ten) == ["power_base"] and ten.facts[0].fields["power"] == "2.3", ten
    assert "powers of 10, where the notes' are powers of e" in lines(ten)["en"]
