"""Rung 2 without a catalogue: where a learner's computation first departs from the notes' steps, proven by their
own run (autograder.checking.departure, autograder.checking.tensor_trace, autograder.running.diagnosing).

The learner attempts here are written as a learner would, from the notebooks' instructions, not from the table of
mistakes; each has a known first departing step. The reference and every route the notes teach depart nowhere."""

import linecache

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking import probing
from autograder.checking.departure import STEPS, departure_line, find_departure
from autograder.checking.departure import step as declared
from autograder.checking.probing import kept_if_raised, run_probe
from autograder.checking.tensor_trace import INPUT, TracedTensor, traced_probe
from autograder.course import catalog, variants
from autograder.course.shared.plan import resolve
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks
from autograder.running.runner import cases_for
from tests.test_no_answer import answer_pieces, leaks

SEED = in_notebook.DEFAULT_SEED


def public_check(exercise_id):
    return next(check for check in catalog.checks_of(exercise_id, include_hidden=False)
                if check.id.endswith((".notes", ".example")))


def departure_of(exercise_id, *objects):
    """The departure of `objects` on the exercise's first public case, traced as check(...) traces it."""
    check = public_check(exercise_id)
    exercise = next(e for e in in_notebook.EXERCISES if e.id == exercise_id)
    namespace = exercise.namespace(objects)
    case = cases_for(check, SEED)[0]
    record, traced = traced_probe(resolve(in_notebook._runnable(check, SEED).probe), namespace, case)
    assert "error" not in record, record
    steps = check.expect(record, case)[STEPS]
    output = record.get("output")
    return find_departure(steps, traced, output if isinstance(output, torch.Tensor) else None)


# ------------------------------------------------------------------ learner attempts, each with its first departure


def softmax_sum_of_inputs(x):
    return torch.exp(x) / x.sum()


def softmax_stable_no_exp(x, dim=-1):
    shifted = x - x.max(dim=dim, keepdim=True).values
    return shifted / shifted.sum(dim=dim, keepdim=True)


def context_returns_weights(inputs):
    scores = inputs @ inputs.T
    return torch.softmax(scores, dim=-1)


class KeysFromQueryWeights(nn.Module):  # SelfAttention_v1 with the keys projected by W_query
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_query, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values + 0 * self.W_key.sum()


class CausalZeroFill(solutions.CausalAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], 0.0)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ values


class CausalUnscaled(solutions.CausalAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores, dim=-1)) @ values


class MultiHeadMergedWithoutTranspose(solutions.MultiHeadAttention):
    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        heads = [self.W_query(x), self.W_key(x), self.W_value(x)]
        queries, keys, values = (t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2) for t in heads)
        scores = queries @ keys.transpose(2, 3)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ values).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


# ------------------------------------------------------------------ the notes' routes: no departure


class MultiHeadEinsum(solutions.MultiHeadAttention):  # heads read in place by einsum
    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        queries, keys, values = (t.view(shape) for t in (self.W_query(x), self.W_key(x), self.W_value(x)))
        scores = torch.einsum("bqhd,bkhd->bhqk", queries, keys)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj(torch.einsum("bhqk,bkhd->bqhd", weights, values).reshape(b, num_tokens, self.d_out))


class CausalScaledFirst(solutions.CausalAttention):  # scale, then fill -1e9: both right
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2) / keys.shape[-1] ** 0.5
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -1e9)
        return self.dropout(torch.softmax(scores, dim=-1)) @ values


class CausalRenormalised(solutions.CausalAttention):  # the notes' other route: softmax, zero the future, renormalise
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        weights = torch.softmax(queries @ keys.transpose(1, 2) / keys.shape[-1] ** 0.5, dim=-1)
        weights = solutions.causal_weights_renormalised(weights)
        return self.dropout(weights) @ values


def test_the_steps_end_at_the_reference():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    weights = {f"{name}.weight": torch.randn(6, 4, dtype=torch.float64) for name in ("W_query", "W_key", "W_value")}
    weights |= {"out_proj.weight": torch.randn(6, 6, dtype=torch.float64), "out_proj.bias": torch.randn(6).double()}
    mask = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])
    for knobs in ({"num_heads": 2}, {"num_heads": 3, "attention_mask": mask}, {"num_heads": 1, "causal": False}):
        steps = variants.attention_steps(x, weights, **knobs)
        assert torch.allclose(steps[-1][1][0], variants.attention(x, weights, **knobs))


def test_the_reference_and_the_notes_routes_depart_nowhere():
    routes = [
        ("softmax_naive", solutions.softmax_naive), ("softmax_stable", solutions.softmax_stable),
        ("context_vectors", solutions.context_vectors), ("self_attention_v1", solutions.SelfAttention_v1),
        ("self_attention_v2", solutions.SelfAttention_v2), ("causal_attention", solutions.CausalAttention),
        ("causal_attention", CausalScaledFirst), ("causal_attention", CausalRenormalised),
        ("multi_head_attention", solutions.MultiHeadAttention), ("padding_mask", solutions.MultiHeadAttention),
        ("multi_head_attention", MultiHeadEinsum),
    ]
    for exercise_id, route in routes:
        departure = departure_of(exercise_id, route)
        assert departure.step is None, (exercise_id, route, departure)


def test_each_attempt_departs_at_its_first_wrong_step_with_true_facts():
    sums = departure_of("softmax_naive", softmax_sum_of_inputs)
    assert (sums.matched, sums.step) == (("exponentials",), "sums")
    no_exp = departure_of("softmax_stable", softmax_stable_no_exp)
    assert (no_exp.matched, no_exp.step) == (("maximum", "shifted"), "exponentials")
    weights = departure_of("context_vectors", context_returns_weights)
    assert (weights.step, weights.returned) == ("context_vectors", "weights")
    keys = departure_of("self_attention_v1", KeysFromQueryWeights)
    assert (keys.matched, keys.step) == (("queries",), "keys")
    zero = departure_of("causal_attention", CausalZeroFill)
    assert zero.step == "scaled_scores" and [fact.kind for fact in zero.facts] == ["shown"]
    assert zero.facts[0].fields["count"] == 2 * 15  # the future of 6 tokens, in each of 2 sentences
    unscaled = departure_of("causal_attention", CausalUnscaled)
    assert unscaled.step == "scaled_scores" and [fact.kind for fact in unscaled.facts] == ["factor_root"]
    assert float(unscaled.facts[0].fields["factor"]) == round(2 ** 0.5, 2)  # d_out = 2: the root not divided by
    assert (unscaled.facts[0].fields["size"], unscaled.facts[0].fields["value"]) == ("d_k", 2)
    merged = departure_of("multi_head_attention", MultiHeadMergedWithoutTranspose)
    # The heads read before the tokens: the notes' merged heads with those two axes exchanged (step_relations).
    assert merged.step == "merged" and [fact.kind for fact in merged.facts] == ["reordered"]
    assert merged.facts[0].fields["swapped"] == ("tokens", "heads")
    assert "context_vectors" in merged.matched


def test_check_shows_the_departure_at_rung_2_in_both_languages():
    source = in_notebook.ReferenceExpectations()
    for lang, words in (("en", "where it departs — "), ("zh", "从哪里开始不同：")):
        results = run_checks(source, "softmax_naive", {"softmax_naive": softmax_sum_of_inputs}, lang,
                             include_hidden=False, seed=SEED, diagnose=True)
        shown = results[0]
        assert shown.misconception is None and shown.departure.startswith(words)
        assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)
        plain = run_checks(source, "softmax_naive", {"softmax_naive": softmax_sum_of_inputs}, lang,
                           include_hidden=False, seed=SEED)
        assert plain[0].departure == ""  # graded output and check_all never trace


def test_the_departure_text_never_contains_the_answer():
    pieces, calls = answer_pieces()
    attempts = [("softmax_naive", softmax_sum_of_inputs), ("softmax_stable", softmax_stable_no_exp),
                ("context_vectors", context_returns_weights), ("self_attention_v1", KeysFromQueryWeights),
                ("causal_attention", CausalZeroFill), ("causal_attention", CausalUnscaled),
                ("multi_head_attention", MultiHeadMergedWithoutTranspose)]
    for exercise_id, attempt in attempts:
        departure = departure_of(exercise_id, attempt)
        for lang in ("en", "zh"):
            line = departure_line(departure, lang, catalog.MESSAGES)
            assert line and not leaks(line, pieces, calls), (exercise_id, lang, line)


@pytest.mark.slow
def test_the_student_kit_localises_from_its_stored_steps_as_the_full_kit_does():
    """The kit has no reference: the build stores each public case's steps (an expectation like the others), and
    its check(...) runs the same diagnosis stage on them."""
    from autograder.integrations.student_kit.build import vectors_document
    from autograder.integrations.student_kit.runtime.checking import StoredExpectations
    from autograder.integrations.student_kit.runtime.vectors import vectors_from_document

    vectors = vectors_from_document(vectors_document())
    kit, full = StoredExpectations(lambda: vectors), in_notebook.ReferenceExpectations()
    attempts = [("softmax_naive", {"softmax_naive": softmax_sum_of_inputs}),
                ("context_vectors", {"context_vectors": context_returns_weights}),
                ("self_attention_v1", {"SelfAttention_v1": KeysFromQueryWeights})]
    for exercise_id, namespace in attempts:
        for lang in ("en", "zh"):
            theirs = run_checks(kit, exercise_id, namespace, lang, include_hidden=False, seed=None, diagnose=True)
            ours = run_checks(full, exercise_id, namespace, lang, include_hidden=False, seed=SEED, diagnose=True)
            assert [r.departure for r in theirs] == [r.departure for r in ours]
            assert any(r.departure for r in ours), (exercise_id, lang)
            assert [r.ladder(2) for r in theirs] == [r.ladder(2) for r in ours]


@pytest.mark.slow
def test_a_hostile_attempt_costs_the_trace_nothing_but_its_cap():
    """An attempt that makes thousands of tensors, a huge one, or raises only when run again is traced within its
    caps, and check(...) still answers: the trace never raises and never keeps more than it may."""
    from autograder.checking.tensor_trace import MAX_TRACED, MAX_TRACED_ELEMENTS, TensorTrace

    calls = []

    def many_tensors(x):
        big = torch.zeros(MAX_TRACED_ELEMENTS + 1)
        for _ in range(3 * MAX_TRACED):
            x = x + 0
        return torch.exp(x) / (x.sum() + big.sum())

    def raises_when_run_again(x):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("only once")
        return torch.exp(x) / x.sum()

    check = public_check("softmax_naive")
    case = cases_for(check, SEED)[0]
    probe = resolve(in_notebook._runnable(check, SEED).probe)
    with torch.no_grad(), TensorTrace() as trace:
        run_probe(probe, {"softmax_naive": many_tensors}, case)
    assert trace.truncated and len(trace.traced) == MAX_TRACED
    assert all(t.value.numel() <= MAX_TRACED_ELEMENTS for t in trace.traced)
    assert traced_probe(probe, {"softmax_naive": many_tensors}, case)[1] is None  # cut before its output: none
    source = in_notebook.ReferenceExpectations()
    for attempt in (many_tensors, raises_when_run_again):
        results = run_checks(source, "softmax_naive", {"softmax_naive": attempt}, "en", include_hidden=False,
                             seed=SEED, diagnose=True)
        assert results[0].status == "failed"


class CausalStopsAtTheWeights(solutions.CausalAttention):  # never projects the values: returns the weights
    def forward(self, x):
        num_tokens = x.shape[1]
        keys, queries = self.W_key(x), self.W_query(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))


def test_a_function_that_stops_early_is_told_which_step_it_returns():
    departure = departure_of("causal_attention", CausalStopsAtTheWeights)
    assert (departure.returned, departure.step) == ("weights", "context_vectors")
    assert "values" not in departure.matched and "weights" in departure.matched
    line = departure_line(departure, "en", catalog.MESSAGES)
    assert "your function returns the attention weights, a step before the context vectors" in line


# ------------------------------------------------------------------ the other exercises' steps (issue 58, item 1)


def departure_on(check_id, *objects):
    """The departure of `objects` on the first case of the public check `check_id`, traced as check(...) traces it."""
    exercise = next(e for e in in_notebook.EXERCISES if check_id.startswith(e.id + "."))
    check = next(check for check in catalog.checks_of(exercise.id, include_hidden=False) if check.id == check_id)
    case = cases_for(check, SEED)[0]
    record, traced = traced_probe(resolve(in_notebook._runnable(check, SEED).probe), exercise.namespace(objects), case)
    assert "error" not in record, record
    return find_departure(check.expect(record, case)[STEPS], traced, None)


def mask_with_the_diagonal(num_tokens):  # hides each token from itself too
    return torch.triu(torch.ones(num_tokens, num_tokens)).bool()


def mask_of_what_may_be_seen(num_tokens):  # the notes' mask_simple, returned as the mask
    return torch.tril(torch.ones(num_tokens, num_tokens)).bool()


def renormalise_forgotten(attn_weights):
    return attn_weights * torch.tril(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1]))


def renormalise_over_the_queries(attn_weights):
    masked = attn_weights * torch.tril(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1]))
    return masked / masked.sum(dim=-2, keepdim=True)


def renormalise_the_upper_triangle(attn_weights):
    masked = attn_weights * torch.triu(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1]))
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_filled_with_zero(attn_scores):
    future = torch.triu(torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]), diagonal=1).bool()
    return torch.softmax(attn_scores.masked_fill(future, 0.0), dim=-1)


def neg_inf_softmax_over_the_queries(attn_scores):
    future = torch.triu(torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]), diagonal=1).bool()
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf), dim=0)


def split_by_view_alone(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def merge_by_reshape_alone(x):
    return x.reshape(x.shape[0], x.shape[2], -1)


class WrapperStackingHeads(solutions.MultiHeadAttentionWrapper):  # each feature's heads interleaved
    def forward(self, x):
        return torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2)


class WrapperCatAlongTokens(solutions.MultiHeadAttentionWrapper):
    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=1)


class UnscaledHead(solutions.CausalAttention):  # a head that forgets the scaling
    def forward(self, x):
        num_tokens = x.shape[1]
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = (queries @ keys.transpose(1, 2)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return torch.softmax(scores, dim=-1) @ values


class WrapperOfUnscaledHeads(solutions.MultiHeadAttentionWrapper):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList([UnscaledHead(d_in, d_out, context_length, dropout, qkv_bias)
                                    for _ in range(num_heads)])


def torch_mha_like(mha):
    return nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True)


def to_torch_keys_first(mha):  # the three matrices stacked in another order
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_key.weight, mha.W_query.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def to_torch_without_out_proj(mha):  # nn.MultiheadAttention's own out_proj left as it was made
    torch_mha = torch_mha_like(mha)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.zero_()
    return torch_mha


# The notes' routes of the newly declared exercises, and other right ways a learner writes them: no departure.


def mask_complement_of_tril(num_tokens):
    return ~torch.tril(torch.ones(num_tokens, num_tokens)).bool()


def mask_tril_equals_zero(num_tokens):
    return torch.tril(torch.ones(num_tokens, num_tokens)) == 0


def mask_of_float_ones(num_tokens):  # the notes' float mask, never made bool: the judge names the dtype, not a step
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1)


def renormalise_by_masked_fill(attn_weights):
    future = torch.triu(torch.ones(attn_weights.shape[-1], attn_weights.shape[-1], dtype=torch.bool), diagonal=1)
    masked = attn_weights.masked_fill(future, 0.0)
    return masked / masked.sum(dim=-1, keepdim=True)


def neg_inf_by_a_large_negative_fill(attn_scores):
    keep = torch.tril(torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]))
    return torch.softmax(attn_scores.masked_fill(keep == 0, -1e9), dim=-1)


def split_by_reshape_and_permute(x, num_heads):
    return x.reshape(x.shape[0], x.shape[1], num_heads, -1).permute(0, 2, 1, 3)


def merge_by_unbinding_heads(x):
    return torch.cat(x.unbind(1), dim=-1)


def to_torch_slice_by_slice(mha):  # each matrix copied into its rows of in_proj_weight: no stacked tensor made
    torch_mha, d_out = torch_mha_like(mha), mha.d_out
    with torch.no_grad():
        for index, layer in enumerate((mha.W_query, mha.W_key, mha.W_value)):
            torch_mha.in_proj_weight[index * d_out:(index + 1) * d_out] = layer.weight
        torch_mha.in_proj_bias.zero_()
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


ROUTES = solutions.causal_weights_renormalised, solutions.causal_weights_neg_inf


def test_the_other_exercises_references_and_routes_depart_nowhere():
    renormalise, neg_inf = ROUTES
    routes = [
        ("causal_mask.notes", (solutions.causal_mask,)), ("causal_mask.notes", (mask_complement_of_tril,)),
        ("causal_mask.notes", (mask_tril_equals_zero,)), ("causal_mask.notes", (mask_of_float_ones,)),
        ("masking_routes.renormalise_notes", ROUTES), ("masking_routes.neg_inf_notes", ROUTES),
        ("masking_routes.renormalise_notes", (renormalise_by_masked_fill, neg_inf)),
        ("masking_routes.neg_inf_notes", (renormalise, neg_inf_by_a_large_negative_fill)),
        ("split_heads.notes", (solutions.split_heads,)), ("split_heads.notes", (split_by_reshape_and_permute,)),
        ("merge_heads.notes", (solutions.merge_heads,)), ("merge_heads.notes", (merge_by_unbinding_heads,)),
        ("mha_wrapper.notes", (solutions.MultiHeadAttentionWrapper,)),
        ("torch_equivalence.notes", (solutions.to_torch_multihead,)),
        ("torch_equivalence.notes", (to_torch_slice_by_slice,)),
    ]
    for check_id, objects in routes:
        departure = departure_on(check_id, *objects)
        assert departure.step is None, (check_id, objects, departure)


def test_the_other_exercises_attempts_depart_at_their_first_wrong_step_with_true_facts():
    renormalise, neg_inf = ROUTES
    kinds = lambda departure: [fact.kind for fact in departure.facts]  # noqa: E731
    # The diagonal hidden too: the mask differs on that one band, in every entry of it (step_relations.flipped_bands);
    # the complement differs everywhere, which no band describes.
    diagonal = departure_on("causal_mask.notes", mask_with_the_diagonal)
    assert (diagonal.matched, diagonal.step, [(fact.kind, dict(fact.fields)) for fact in diagonal.facts]) == (
        (), "causal_mask", [("bands", {"bands": (0,)})])
    complement = departure_on("causal_mask.notes", mask_of_what_may_be_seen)
    assert (complement.matched, complement.step, complement.facts) == ((), "causal_mask", ())
    forgotten = departure_on("masking_routes.renormalise_notes", renormalise_forgotten, neg_inf)
    assert (forgotten.matched, forgotten.step) == (("keep_triangle", "masked_weights"), "row_sums")
    assert forgotten.facts == ()  # no sum was made: nothing of the learner's stands in its place
    queries = departure_on("masking_routes.renormalise_notes", renormalise_over_the_queries, neg_inf)
    # The column sums in its place: another reduction of the learner's right step (step_relations, issue 58).
    assert (queries.step, kinds(queries)) == ("row_sums", ["alt_reduction"])
    assert queries.facts[0].fields == {"op": "sum", "operands": ("masked_weights",), "axis": 0}
    upper = departure_on("masking_routes.renormalise_notes", renormalise_the_upper_triangle, neg_inf)
    # A transposed triangle is no match; the learner's triangle, made from ones alone, is the notes' one transposed.
    assert (upper.matched, upper.step, kinds(upper)) == ((), "keep_triangle", ["transposed"])
    zero = departure_on("masking_routes.neg_inf_notes", renormalise, neg_inf_filled_with_zero)
    assert (zero.matched, zero.step, kinds(zero)) == (("causal_mask",), "masked_scores", ["shown"])
    assert zero.facts[0].fields["count"] == 15  # the future of the notes' 6 tokens
    over = departure_on("masking_routes.neg_inf_notes", renormalise, neg_inf_softmax_over_the_queries)
    assert (over.step, kinds(over)) == ("weights", ["sums_axis"])
    assert (over.facts[0].fields["axis"], over.facts[0].fields["expected_axis"]) == (0, 1)
    assert departure_on("split_heads.notes", split_by_view_alone).step == "heads_viewed"  # straight to (b, h, T, hd)
    assert departure_on("merge_heads.notes", merge_by_reshape_alone).step == "heads_merged"
    # Heads joined along the tokens: the notes' result cut into its two heads' halves, joined along another axis.
    for wrapper, kind in ((WrapperStackingHeads, "permuted"), (WrapperCatAlongTokens, "restacked")):
        departure = departure_on("mha_wrapper.notes", wrapper)
        assert (departure.matched, departure.step, kinds(departure)) == (
            ("head_0", "head_1"), "heads_concatenated", [kind])
    interleaved = departure_on("mha_wrapper.notes", WrapperStackingHeads).facts[0].fields
    assert (interleaved["axis"], interleaved["reversed"]) == (2, False)  # the features of the two heads interleaved
    along_tokens = departure_on("mha_wrapper.notes", WrapperCatAlongTokens).facts[0].fields
    assert (along_tokens["count"], along_tokens["axis"], along_tokens["other"]) == (2, 2, 1)
    unscaled = departure_on("mha_wrapper.notes", WrapperOfUnscaledHeads)
    assert (unscaled.matched, unscaled.step) == ((), "head_0")
    keys_first = departure_on("torch_equivalence.notes", to_torch_keys_first)
    assert (keys_first.matched, keys_first.step) == ((), "stacked_projections")
    no_out = departure_on("torch_equivalence.notes", to_torch_without_out_proj)
    assert (no_out.matched, no_out.step) == (("stacked_projections",), "out_proj")


def test_every_exercise_with_a_computation_declares_its_steps():
    """Each exercise's first public check holds the notes' steps, but for the three that compute no tensor (their
    declarations say why): a new exercise must declare them or join this list with its reason."""
    without = {"transfer_weights", "two_dimensional_wrapper", "parameter_counts"}
    for exercise in in_notebook.EXERCISES:
        check = next(iter(catalog.checks_of(exercise.id, include_hidden=False)))
        case = cases_for(check, SEED)[0]
        declared = check.expect is not None and STEPS in set(check.expect({}, case))
        assert declared == (exercise.id not in without), exercise.id


def test_the_new_steps_have_names_in_both_languages_and_leak_no_answer():
    pieces, calls = answer_pieces()
    renormalise, neg_inf = ROUTES
    attempts = [("causal_mask.notes", (mask_with_the_diagonal,)),
                ("masking_routes.renormalise_notes", (renormalise_over_the_queries, neg_inf)),
                ("masking_routes.neg_inf_notes", (renormalise, neg_inf_filled_with_zero)),
                ("split_heads.notes", (split_by_view_alone,)), ("merge_heads.notes", (merge_by_reshape_alone,)),
                ("mha_wrapper.notes", (WrapperCatAlongTokens,)),
                ("torch_equivalence.notes", (to_torch_without_out_proj,))]
    for check_id, objects in attempts:
        departure = departure_on(check_id, *objects)
        for lang in ("en", "zh"):
            line = departure_line(departure, lang, catalog.MESSAGES)
            assert line and "step." not in line and not leaks(line, pieces, calls), (check_id, lang, line)


def neg_inf_scaled_again(attn_scores):  # scales the scores this route is handed already scaled
    future = torch.triu(torch.ones(attn_scores.shape[-1], attn_scores.shape[-1]), diagonal=1).bool()
    return torch.softmax(attn_scores.masked_fill(future, -torch.inf) / 2 ** 0.5, dim=-1)


def test_a_hidden_entry_of_the_notes_is_never_called_kept():
    """The weights' future entries are 0, hidden as a score's -inf is: a learner's tensor with -inf there (their
    scaled masked scores, in the weights' place) hides nothing the notes keep."""
    departure = departure_on("masking_routes.neg_inf_notes", ROUTES[0], neg_inf_scaled_again)
    assert (departure.matched, departure.step) == (("causal_mask", "masked_scores"), "weights")
    # Nothing is hidden: what it says is how that tensor is made from the masked scores (divided once more).
    assert [(fact.kind, fact.about, fact.of) for fact in departure.facts] == [
        ("divided", "from_previous", "masked_scores")]
    assert departure.facts[0].fields["factor"] == "1.41"


# ------------------------------------------------------------------ code that raises (issue 58: the long tail)


def context_weights_times_inputs(inputs):  # an elementwise product where the notes multiply matrices
    scores = inputs @ inputs.T
    weights = torch.softmax(scores, dim=-1)
    return weights * inputs


def softmax_stable_python_max(x, dim=-1):  # Python's max walks a matrix's rows and compares them as booleans
    shifted = x - max(x)
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True)


class CausalKeysTransposedOverTheBatch(solutions.CausalAttention):
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.transpose(0, 1)  # swaps the batch with the tokens: the product cannot broadcast
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        return self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)) @ values


def context_with_an_extra_argument(inputs, temperature):  # the exercise's call gives no temperature
    return torch.softmax(inputs @ inputs.T / temperature, dim=-1) @ inputs


def raised_rows(exercise_id, namespace, lang="en"):
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                         seed=SEED, diagnose=True)
    return [result for result in results if result.status == "error"]


def test_code_that_raises_is_told_which_steps_it_reproduced_before_it_raised():
    shown = raised_rows("context_vectors", {"context_vectors": context_weights_times_inputs})[0]
    assert shown.misconception is None and shown.departure_step == "context_vectors"
    # What the operation that raised read: the learner's weights (a step of the notes) and the inputs (6, 3).
    assert shown.departure == ("where it departs — your code reproduces the notes' attention scores, attention "
                               "weights; then it raised before any of its tensors held the notes' context vectors; "
                               "it raised in an operation on your attention weights (shape (6, 6); their values "
                               "match the notes') and a tensor of shape (6, 3)")
    assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)
    zh = raised_rows("context_vectors", {"context_vectors": context_weights_times_inputs}, "zh")[0]
    assert zh.departure.startswith("从哪里开始不同：") and "抛出了异常" in zh.departure
    first = raised_rows("softmax_stable", {"softmax_stable": softmax_stable_python_max})[0]
    assert first.departure.endswith("your code raised before any of its tensors held the notes' first step, the "
                                    "maximum of each row")


def test_a_module_that_raises_keeps_its_weights_for_the_steps():
    """The module's starting weights are recorded before its forward raises, so the steps are computed on them."""
    shown = raised_rows("causal_attention", {"CausalAttention": CausalKeysTransposedOverTheBatch})[0]
    assert shown.departure_step == "scores", shown.departure
    assert "reproduces the notes' queries, keys, values; then it raised before any of its tensors held the notes' " \
           "attention scores" in shown.departure


def test_a_raise_says_no_step_where_no_step_of_the_learner_ran():
    stub = raised_rows("context_vectors", {"context_vectors": solutions_stub})
    extra = raised_rows("context_vectors", {"context_vectors": context_with_an_extra_argument})
    assert stub and extra and all(result.departure == "" for result in stub + extra)


def solutions_stub(inputs):
    raise NotImplementedError


def softmax_stable_max_without_keepdim(x, dim=-1):  # each row shifted by another row's maximum
    e = torch.exp(x - x.max(dim=dim).values)
    return e / e.sum(dim=dim, keepdim=True)


def test_a_maximum_subtracted_along_the_wrong_axis_departs_at_the_shifted_scores():
    """The notes' scores are symmetric: the wrong axis's shift is the transpose of the notes', never a layout of it
    (nor said to be their transpose: only the symmetric case makes it one)."""
    departure = departure_of("softmax_stable", softmax_stable_max_without_keepdim)
    assert (departure.matched, departure.step) == (("maximum",), "shifted")
    assert [fact.kind for fact in departure.facts] == ["rearranged"]


def merge_by_flattening_from_the_tokens(x):  # joins the tokens with the features too: (b, T * d_out)
    return x.transpose(1, 2).flatten(1)


def test_an_output_that_is_the_last_step_under_another_shape_is_told_so():
    """Every number right and in its order: "look at where your result first differs" would send the learner to
    values that do not differ."""
    source = in_notebook.ReferenceExpectations()
    for lang, words in (("en", "your function returns the notes' heads merged side by side number for number, in "
                                "their order, but in shape (1, 12) instead of (1, 3, 4)"), ("zh", "形状是 (1, 12)")):
        shown = run_checks(source, "merge_heads", {"merge_heads": merge_by_flattening_from_the_tokens}, lang,
                           include_hidden=False, seed=SEED, diagnose=True)[0]
        assert shown.departure_step == "heads_merged" and words in shown.departure, shown.departure
        # Every step matches: nothing departs, and the label does not say it does.
        label = {"en": "what your function returns — ", "zh": "你的函数返回了什么："}[lang]
        assert shown.departure.startswith(label) and "departs" not in shown.departure, shown.departure


def _probe_keeping(namespace, case):
    with kept_if_raised(state={"W_query.weight": torch.ones(2, 3)}):
        return {"output": namespace["forward"](torch.ones(6, 3))}


def test_a_probe_keeps_what_it_recorded_beside_the_students_error():
    def forward(x):
        return x @ torch.ones(2, 3)  # (6, 3) @ (2, 3): the inner sizes differ

    record = run_probe(_probe_keeping, {"forward": forward}, None)
    assert set(record) == {"state", "error"} and record["error"]["type"] == "RuntimeError"
    assert record["error"]["line"] == "return x @ torch.ones(2, 3)  # (6, 3) @ (2, 3): the inner sizes differ"


def test_a_student_cannot_hand_the_probe_records_of_their_own():
    """The class is importable: raised by the student's code (here before the probe's block), it is an exception like
    any other, and what it carries is never read as the probe's record."""
    forged = probing._RaisedAfterRecording(ValueError("hidden"), {"state": "not a state", "output": torch.zeros(1)})

    def forging_probe(namespace, case):
        raise forged

    record = run_probe(forging_probe, {}, None)
    assert set(record) == {"error"} and record["error"]["type"] == "_RaisedAfterRecording"
    inside = run_probe(_probe_keeping, {"forward": lambda x: (_ for _ in ()).throw(forged)}, None)
    assert inside["state"]["W_query.weight"].shape == (2, 3) and "output" not in inside


# ------------------------------------------------------------------ a layout proves nothing where the case is symmetric


def context_normalised_over_the_queries(inputs):  # each column of the weights sums to 1
    similarity = torch.matmul(inputs, inputs.transpose(0, 1))
    attention = similarity.softmax(dim=0)
    return torch.matmul(attention, inputs)


def test_weights_read_as_transposed_from_symmetric_scores_do_not_pass_over_the_departure():
    """The notes' scores x @ x.T are symmetric: weights normalised over the queries are then the notes' weights
    transposed, which a transpose layout would accept, putting the departure at the context vectors. The op read
    scores that a transpose leaves as they are: the layout proves nothing, and the departure is the weights."""
    departure = departure_of("context_vectors", context_normalised_over_the_queries)
    assert (departure.matched, departure.step) == (("scores",), "weights")
    for lang in ("en", "zh"):
        line = departure_line(departure, lang, catalog.MESSAGES)
        assert catalog.MESSAGES["step.weights"][lang] in line and "context" not in line


def test_a_transposed_step_made_from_what_is_not_symmetric_still_matches():
    """The rule is about the case, not the transpose: weights held transposed, made from scores that are not
    symmetric, are the notes' weights in another layout (no departure before the context vectors)."""
    torch.manual_seed(1)
    queries, keys = torch.randn(4, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)
    scores = queries @ keys.T
    weights = torch.softmax(scores, dim=-1)
    steps = [declared("scores", scores), declared("weights", weights), declared("context", weights @ keys)]
    transposed_scores = keys @ queries.T  # what the op reads: not symmetric
    traced = [TracedTensor(INPUT, queries, ()), TracedTensor(INPUT, keys, ()),
              TracedTensor("mm", transposed_scores, (1, 0)),
              TracedTensor("_softmax", torch.softmax(transposed_scores, dim=0), (2,))]
    departure = find_departure(steps, traced, None)
    assert (departure.matched, departure.step) == (("scores", "weights"), "context")
    symmetric = queries @ queries.T
    steps = [declared("scores", symmetric), declared("weights", torch.softmax(symmetric, dim=-1))]
    traced = [TracedTensor(INPUT, queries, ()), TracedTensor("mm", symmetric, (0,)),
              TracedTensor("_softmax", torch.softmax(symmetric, dim=0), (1,))]
    assert find_departure(steps, traced, None).step == "weights"


# ------------------------------------------------------------------ the right value computed, an earlier step returned


def context_kept_in_a_dict_and_the_wrong_entry_returned(inputs):
    found = {"weights": torch.softmax(inputs @ inputs.T, dim=-1)}
    found["context"] = found["weights"] @ inputs
    return found["weights"]


class ScaledScoresReturnedAfterTheContext(nn.Module):  # SelfAttention_v1 that returns what it printed last
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        scaled = (x @ self.W_query) @ (x @ self.W_key).T / self.W_key.shape[1] ** 0.5
        self.last_context = torch.softmax(scaled, dim=-1) @ (x @ self.W_value)
        return scaled


def test_an_earlier_step_returned_after_the_last_was_computed_is_told_so():
    """Every step appears among the learner's tensors, the last one too: no step departs, but the function returns an
    earlier one. Rung 2 says which, in both languages, and never that the last step is missing."""
    for exercise_id, attempt, returned in (
            ("context_vectors", context_kept_in_a_dict_and_the_wrong_entry_returned, "weights"),
            ("self_attention_v1", ScaledScoresReturnedAfterTheContext, "scaled_scores")):
        departure = departure_of(exercise_id, attempt)
        assert (departure.step, departure.returned) == (None, returned), departure
        en, zh = (departure_line(departure, lang, catalog.MESSAGES) for lang in ("en", "zh"))
        step, last = (catalog.MESSAGES[f"step.{name}"]["en"] for name in (returned, "context_vectors"))
        # Nothing departs: the label says what the line tells, not "where it departs".
        assert en == (f"what your function returns — your code computes the notes' {last} too, but your function "
                      f"returns the {step}, a step before the {last}")
        assert zh.startswith("你的函数返回了什么：") and catalog.MESSAGES[f"step.{returned}"]["zh"] in zh
        assert "从哪里开始不同" not in zh
    # The notes' route returns the last step: nothing to say.
    assert departure_line(departure_of("context_vectors", solutions.context_vectors), "en", catalog.MESSAGES) == ""


# ------------------------------------------------------------------ a raise where no step can be compared


def transfer_by_assigning_plain_tensors(sa_v1, sa_v2):  # a parameter's attribute refuses a plain tensor
    for name in ("W_query", "W_key", "W_value"):
        setattr(sa_v1, name, getattr(sa_v2, name).weight.t())
    return sa_v1


class PlainTensorAsLayerWeight(nn.Module):  # SelfAttention_v2 whose constructor raises
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query.weight = torch.rand(d_out, d_in)

    def forward(self, x):
        weights = torch.softmax(self.W_query(x) @ self.W_key(x).T / self.W_key.out_features ** 0.5, dim=-1)
        return weights @ self.W_value(x)


def test_code_that_raises_where_no_step_is_compared_is_told_its_own_line():
    """transfer_weights declares no steps: rung 2 quotes the learner's own line that raised (never the grader's), in
    both languages, and says no step shows where it departs, instead of "no known mistake" alone."""
    quoted = "`setattr(sa_v1, name, getattr(sa_v2, name).weight.t())`"
    for lang, words in (("en", "your code raised at its own line"), ("zh", "你的代码在它自己的这一行抛出了异常")):
        shown = raised_rows("transfer_weights", {"load_v2_weights_into_v1": transfer_by_assigning_plain_tensors},
                            lang)[0]
        assert shown.misconception is None and words in shown.departure and quoted in shown.departure
        assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)
        assert shown.departure_step == ""  # no step: nothing to fold by
        # No step departs there: the label says where it raised, not "where it departs".
        assert shown.departure.startswith({"en": "where it raised — ", "zh": "在哪里抛出了异常："}[lang])
        assert "departs" not in shown.departure and "从哪里开始不同" not in shown.departure
        init = raised_rows("self_attention_v2", {"SelfAttention_v2": PlainTensorAsLayerWeight}, lang)[0]
        assert words in init.departure and "`self.W_query.weight = torch.rand(d_out, d_in)`" in init.departure


class MultiHeadWeightsInFloat32(solutions.MultiHeadAttention):
    """The softmax asked for float32: on float64 input the product with the values split into heads raises."""

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        heads = [self.W_query(x), self.W_key(x), self.W_value(x)]
        queries, keys, values = (t.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2) for t in heads)
        scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1, dtype=torch.float32))
        context = (weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)
        return self.out_proj(context)


def test_an_operand_that_raised_is_said_by_the_step_it_holds_itself_not_the_one_it_views():
    """The values split into heads view the values' numbers: the product read the split ones, in their own shape
    (learners_2026_12m z-mh-07, after the measure: it was said as "your values", in the values' shape)."""
    shown = raised_rows("multi_head_attention", {"MultiHeadAttention": MultiHeadWeightsInFloat32})[0]
    # The weights were made float32 and the values are float64: each operand is said with its dtype.
    assert ("and your values split into heads (float64, shape (1, 4, 5, 4); their values match the notes')"
            in shown.departure), shown.departure
    assert "your values (shape" not in shown.departure and "your values (float64" not in shown.departure


def squeezed_scores(inputs):
    """A learner's context vectors that squeeze the scores: one token's become a number the product refuses."""
    scores = (inputs @ inputs.T).squeeze()
    return torch.softmax(scores, dim=-1) @ inputs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_run_that_raised_where_every_step_coincides_is_told_its_own_line(lang):
    """One token: its scores, weights and context vectors are one number, a one and its input, which tensors made
    before the raise hold by coincidence. "Every step computed" is not said of a run that returned nothing: its own
    line that raised is."""
    shown = raised_rows("context_vectors", {"context_vectors": squeezed_scores}, lang)[0]
    assert shown.misconception is None
    assert shown.departure.startswith({"en": "where it raised — ", "zh": "在哪里抛出了异常："}[lang]), shown.departure
    assert "`return torch.softmax(scores, dim=-1) @ inputs`" in shown.departure
    assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)


def test_a_last_step_held_only_by_what_came_before_the_returned_one_is_not_called_computed():
    """One token: its context vector is its own input, which the case built before the call. A function that returns
    the weights without going on has not "computed the context vectors too"."""
    x = torch.tensor([[0.3, -1.2, 0.8, 0.5, 2.0]], dtype=torch.float64)
    scores = x @ x.T
    weights = torch.softmax(scores, dim=-1)
    steps = [declared("scores", scores), declared("weights", weights), declared("context_vectors", weights @ x)]
    traced = [TracedTensor("randn", x, ()), TracedTensor("mm", scores, (0,)), TracedTensor("_softmax", weights, (1,))]
    departure = find_departure(steps, traced, weights)
    assert departure.returned is None and departure_line(departure, "en", catalog.MESSAGES) == ""
    went_on = find_departure(steps, [*traced, TracedTensor("mm", weights @ x, (2, 0))], weights)
    assert (went_on.step, went_on.returned) == (None, "weights")
    # In check(...): the probe's own tensors (its copy of the input, autograd's transposes of it in the gradient
    # check) hold one token's context vectors after the weights were made, but none was made from the weights.
    for lang in ("en", "zh"):
        results = run_checks(in_notebook.ReferenceExpectations(), "context_vectors",
                             {"context_vectors": context_returns_weights}, lang, include_hidden=False, seed=SEED,
                             diagnose=True)
        assert results and not any(catalog.MESSAGES["departure.returned_computed"][lang].split("{")[0]
                                   in result.departure for result in results if result.departure)


def test_the_quoted_line_of_a_hostile_cell_shows_its_controls_as_escapes():
    """The learner's own line is their text: a bidi override or a terminal escape in it is shown as an escape."""
    source = ("def load_v2_weights_into_v1(sa_v1, sa_v2):\n"
              "    sa_v1.W_query = sa_v2.W_query.weight.T  # \u202e\x1b[2J\n"
              "    return sa_v1\n")
    filename = "<hostile-cell-rung2>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own learner cell
    shown = raised_rows("transfer_weights", {"load_v2_weights_into_v1": namespace["load_v2_weights_into_v1"]})[0]
    assert "sa_v1.W_query = sa_v2.W_query.weight.T" in shown.departure
    assert "\u202e" not in shown.departure and "\x1b" not in shown.departure and "\\u202e" in shown.departure


def softmax_stable_summed_over_axis_one(x, dim=-1):
    """The sum's axis written as a number: on a 1-D input of one repeated number it raises after the shift, whose
    values there (all zero) are made many ways."""
    shifted = x - x.max(dim=dim, keepdim=True).values
    exps = shifted.exp()
    return exps / exps.sum(1, keepdim=True)


def test_a_raise_after_a_step_held_without_proof_never_says_no_tensor_held_it():
    """k-ss-04's kind (issue 58): the shifted inputs are held, all zeros on [1000., 1000.]; before, rung 2 said the
    code "raised before any of its tensors held the notes' inputs minus their maximum"."""
    shown = raised_rows("softmax_stable", {"softmax_stable": softmax_stable_summed_over_axis_one})[0]
    assert "before any of its tensors held" not in shown.departure
    assert shown.departure.startswith(
        "where it departs — your code reproduces the notes' maximum of each row; on this case a tensor of yours has "
        "the numbers of the notes' inputs minus their maximum too, though they prove nothing (many computations give "
        "them); then it raised"), shown.departure
    zh = raised_rows("softmax_stable", {"softmax_stable": softmax_stable_summed_over_axis_one}, "zh")[0]
    assert "你的某个张量的数值也与笔记中的减去最大值之后的输入相同，但这些数值说明不了什么" in zh.departure
    # Code that never computes the shift keeps the sentence that no tensor held it.
    first = raised_rows("softmax_stable", {"softmax_stable": softmax_stable_python_max})[0]
    assert "prove nothing" not in first.departure


def context_vectors_averaged_again(inputs):
    """The notes' context vectors, then divided by how many tokens there are (an average taken twice)."""
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    context = weights @ inputs
    return context / len(inputs)


def context_vectors_plus_one(inputs):
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights @ inputs + 1


def failing_rows(exercise_id, namespace, lang="en"):
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                         seed=SEED, diagnose=True)
    return [result for result in results if result.status != "passed"]


def test_a_result_that_is_the_last_step_times_a_constant_is_said_so():
    """k-cv-13's kind (issue 58): every step held, the result scaled after; before, rung 2 said nothing of it."""
    shown = failing_rows("context_vectors", {"context_vectors": context_vectors_averaged_again})[0]
    assert shown.departure == (
        "what your function returns — a tensor your code made holds the notes' context vectors, but your function "
        "does not return it as it is; the result your function returns is the notes' context vectors divided by 6, "
        "which is num_tokens, the number of tokens"), shown.departure
    assert shown.departure in shown.ladder(2) and shown.departure not in shown.ladder(1)
    zh = failing_rows("context_vectors", {"context_vectors": context_vectors_averaged_again}, "zh")[0]
    assert zh.departure == ("你的函数返回了什么：你的代码算出的某个张量与笔记中的上下文向量相同，"
                            "但你的函数返回的并不是它本身；"
                            "你的函数返回的结果是笔记中的上下文向量除以 6，也就是num_tokens（token 的个数）")


def test_a_result_that_is_no_constant_multiple_is_not_said_to_be_one():
    assert not failing_rows("context_vectors", {"context_vectors": solutions.context_vectors})
    for wrong in (context_vectors_plus_one, context_weights_times_inputs):
        for row in failing_rows("context_vectors", {"context_vectors": wrong}):
            assert "does not return it as it is" not in (row.departure or ""), row.departure


class MultiHeadValuesProjectedFirst(solutions.MultiHeadAttention):  # out_proj on the values, before the attention
    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.out_proj(self.W_value(x)).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        scores = queries @ keys.transpose(2, 3)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return (weights @ values).transpose(1, 2).reshape(b, num_tokens, self.d_out)


def test_a_right_step_the_code_went_on_from_to_other_numbers_is_not_said_in_the_departing_steps_place():
    """12o's oz-ma-02, a false sentence: the values (right) were projected by out_proj before the split, so the
    learner's split values hold other numbers. Neither the values themselves ("the same numbers in other places")
    nor the scores made next from the right splits ("not the notes' values split into heads") stand in its place."""
    departure = departure_of("multi_head_attention", MultiHeadValuesProjectedFirst)
    assert departure.step == "split_values", departure
    assert not any(fact.kind in ("rearranged", "reordered", "shape") or fact.kind.startswith("alt_")
                   for fact in departure.facts), departure
    line = departure_line(departure, "en", catalog.MESSAGES)
    assert "in other places" not in line and "dot products" not in line, line
