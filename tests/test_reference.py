"""The reference in solutions/ reproduces every output the notes print, and keeps its promises."""

import json
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit import solutions
from autograder.course.variants import attention

SEEDED = json.loads((Path(__file__).parent / "seeded_outputs.json").read_text(encoding="utf-8"))
JOURNEY = torch.tensor(SEEDED["inputs"]["journey"])
INPUTS = {"journey": JOURNEY, "journey_batch": torch.stack((JOURNEY, JOURNEY), dim=0)}


def parse_expected(values):
    """Printed numbers, with the notes' -inf restored."""
    if isinstance(values, list):
        return [parse_expected(v) for v in values]
    return float("-inf") if values == "-inf" else float(values)


def seeded_module(setup, index=0):
    torch.manual_seed(setup["seed"])
    cls = getattr(solutions, setup["class"])
    modules = [cls(*setup["args"]) for _ in range(index + 1)]
    return modules[index]


def v2_scores_and_dk(setup):
    sa_v2 = seeded_module(setup)
    x = INPUTS[setup["input"]]
    keys = sa_v2.W_key(x)
    return sa_v2.W_query(x) @ keys.T, keys.shape[-1]


def buffer_roundtrip(setup, tmp_path):
    """The notes' experiment: edit the mask, save the state_dict, load it into a fresh module."""

    class CausalAttentionWithoutBuffers(solutions.CausalAttention):
        def __init__(self, *args):
            super().__init__(*args)
            mask = self.mask
            del self._buffers["mask"]
            self.mask = mask  # a plain attribute: not in state_dict

    cls = solutions.CausalAttention if setup["registered"] else CausalAttentionWithoutBuffers
    module = cls(*setup["args"])
    module.mask[module.mask == 1.0] = 2.0
    torch.save(module.state_dict(), tmp_path / "model.pth")
    reloaded = cls(*setup["args"])
    reloaded.load_state_dict(torch.load(tmp_path / "model.pth", weights_only=True))
    return reloaded.mask


def reproduce(setup, tmp_path):
    kind = setup["kind"]
    x = INPUTS.get(setup.get("input"))
    if kind in {"scores_for_query", "sum_normalised_for_query", "softmax_naive_for_query", "torch_softmax_for_query"}:
        scores = solutions.attention_scores_for_query(x, x[setup["query_index"]])
        return {
            "scores_for_query": scores,
            "sum_normalised_for_query": scores / scores.sum(),
            "softmax_naive_for_query": solutions.softmax_naive(scores),
            "torch_softmax_for_query": torch.softmax(scores, dim=0),
        }[kind]
    if kind == "context_vector_for_query":
        return solutions.context_vector_for_query(x, x[setup["query_index"]])
    if kind == "attention_scores":
        return solutions.attention_scores(x)
    if kind == "attention_weights":
        return torch.softmax(solutions.attention_scores(x), dim=-1)
    if kind == "context_vectors":
        return solutions.context_vectors(x)
    if kind == "trainable_step":
        torch.manual_seed(setup["seed"])
        d_in = x.shape[1]
        w_query, w_key, w_value = (torch.nn.Parameter(torch.rand(d_in, setup["d_out"])) for _ in range(3))
        query_2 = x[setup["query_index"]] @ w_query
        keys, values = x @ w_key, x @ w_value
        attn_scores_2 = query_2 @ keys.T
        attn_weights_2 = torch.softmax(attn_scores_2 / keys.shape[1] ** 0.5, dim=-1)
        return {
            "attn_scores_2": attn_scores_2,
            "attn_weights_2": attn_weights_2,
            "context_vec_2": attn_weights_2 @ values,
        }[setup["output"]]
    if kind == "module":
        return seeded_module(setup)(x)
    if kind == "module_weight":
        return seeded_module(setup, setup["module_index"]).state_dict()[setup["weight"]]
    if kind == "exercise_3_1":
        torch.manual_seed(setup["seed_v1"])
        sa_v1 = solutions.SelfAttention_v1(*setup["args"])
        torch.manual_seed(setup["seed_v2"])
        sa_v2 = solutions.SelfAttention_v2(*setup["args"])
        return solutions.load_v2_weights_into_v1(sa_v1, sa_v2)(x)
    if kind == "tril_ones":
        return torch.tril(torch.ones(setup["num_tokens"], setup["num_tokens"]))
    if kind == "triu_ones":
        return torch.triu(torch.ones(setup["num_tokens"], setup["num_tokens"]), diagonal=1)
    if kind.startswith("v2_"):
        scores, d_k = v2_scores_and_dk(setup)
        weights = torch.softmax(scores / d_k**0.5, dim=-1)
        return {
            "v2_weights": lambda: weights,
            "v2_weights_times_tril": lambda: weights * torch.tril(torch.ones_like(weights)),
            "v2_weights_renormalised": lambda: solutions.causal_weights_renormalised(weights),
            "v2_scores_neg_inf": lambda: scores.masked_fill(solutions.causal_mask(scores.shape[0]), -torch.inf),
            "v2_weights_neg_inf": lambda: solutions.causal_weights_neg_inf(scores / d_k**0.5),
        }[kind]()
    if kind == "buffer_roundtrip":
        return buffer_roundtrip(setup, tmp_path)
    raise AssertionError(f"no reproduction for setup kind {kind!r}")


@pytest.mark.parametrize("entry", SEEDED["printed"], ids=[e["id"] for e in SEEDED["printed"]])
def test_reference_reproduces_printed_output(entry, tmp_path):
    with torch.no_grad():
        got = reproduce(entry["setup"], tmp_path)
    expected = torch.tensor(parse_expected(entry["expected"]))
    assert got.shape == expected.shape, f"{entry['id']}: shape {tuple(got.shape)} != {tuple(expected.shape)}"
    # "to 4 decimals": the printed value is the computed one rounded to 4 places.
    assert torch.equal(torch.isinf(got), torch.isinf(expected)), entry["id"]
    finite = ~torch.isinf(expected)
    assert torch.allclose(got[finite], expected[finite], atol=5.1e-5, rtol=0), entry["id"]


def test_exercise_3_2_regression_record():
    entry = SEEDED["computed_by_the_reference"][0]
    with torch.no_grad():
        got = reproduce(entry["setup"], None)
    assert got.shape == (2, 6, 2)  # 2 heads x d_out=1: a 2-dimensional embedding
    assert torch.allclose(got, torch.tensor(entry["expected"]), atol=5.1e-5, rtol=0)


def test_parameter_counts_exercise_3_3():
    fact = next(f for f in SEEDED["facts"] if f["id"] == "mha_768_parameter_count")
    mha = solutions.MultiHeadAttention(*fact["setup"]["args"])
    assert solutions.count_parameters(mha) == fact["expected"]
    assert "mask" in dict(mha.named_buffers())  # the mask is a buffer, not a parameter
    # 12 wrapped heads of 64 each have no out_proj; PyTorch's module adds in-projection biases.
    wrapper = solutions.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, 12)
    assert solutions.count_parameters(wrapper) == 12 * 3 * 768 * 64
    assert solutions.count_parameters(torch.nn.MultiheadAttention(768, 12)) == fact["expected"] + 3 * 768


def test_padding_mask_weights_of_seed_001():
    fact = next(f for f in SEEDED["facts"] if f["id"] == "padding_mask_weights")
    attention_mask = torch.tensor(fact["setup"]["attention_mask"])
    b, num_tokens = attention_mask.shape
    scores = torch.randn(
        b, fact["setup"]["num_heads"], num_tokens, num_tokens, generator=torch.Generator().manual_seed(0)
    )
    padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
    fill = solutions.n04_multi_head_attention.padding_fill_value(scores.dtype)
    weights = torch.softmax(scores.masked_fill(padded, fill), dim=-1)
    expected = torch.tensor(fact["expected"]).unsqueeze(1).expand_as(weights)
    assert torch.allclose(weights, expected, atol=1e-6)


def test_naive_softmax_overflows_and_stable_one_does_not():
    large = torch.tensor([1000.0, 1000.0, 999.0])
    assert torch.isnan(solutions.softmax_naive(large)).any()
    assert torch.allclose(solutions.softmax_stable(large), torch.softmax(large, dim=-1))


shapes = st.tuples(st.integers(1, 3), st.integers(1, 20), st.integers(1, 4), st.integers(2, 5), st.integers(1, 6))


@settings(max_examples=25, deadline=None)
@given(shapes, st.integers(0, 2**31 - 1))
def test_multi_head_attention_matches_pytorch(shape, seed):
    b, num_tokens, num_heads, head_dim, extra_context = shape
    torch.manual_seed(seed)
    d = num_heads * head_dim
    mha = solutions.MultiHeadAttention(d, d, num_tokens + extra_context, 0.0, num_heads, qkv_bias=seed % 2 == 0).eval()
    x = torch.rand(b, num_tokens, d)
    with torch.no_grad():
        ours = mha(x)
        torch_mha = solutions.to_torch_multihead(mha).eval()
        theirs, _ = torch_mha(x, x, x, attn_mask=solutions.causal_mask(num_tokens), need_weights=False)
        assert torch.allclose(ours, theirs, atol=1e-5)
        assert torch.allclose(ours, solutions.sdpa_causal(mha, x), atol=1e-5)
        weights = {k: v for k, v in mha.state_dict().items() if k != "mask"}
        assert torch.allclose(ours, attention(x, weights, num_heads=num_heads), atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 20), st.integers(0, 2**31 - 1))
def test_two_masking_routes_agree(b, num_tokens, seed):
    scores = torch.randn(b, num_tokens, num_tokens, generator=torch.Generator().manual_seed(seed))
    by_renormalising = solutions.causal_weights_renormalised(torch.softmax(scores, dim=-1))
    by_neg_inf = solutions.causal_weights_neg_inf(scores)
    assert torch.allclose(by_renormalising, by_neg_inf, atol=1e-6)
    assert torch.allclose(by_neg_inf.sum(dim=-1), torch.ones(b, num_tokens))


@settings(max_examples=25, deadline=None)
@given(shapes)
def test_merge_heads_inverts_split_heads(shape):
    b, num_tokens, num_heads, head_dim, _ = shape
    x = torch.rand(b, num_tokens, num_heads * head_dim)
    split = solutions.split_heads(x, num_heads)
    assert split.shape == (b, num_heads, num_tokens, head_dim)
    assert torch.equal(split[:, 0], x[..., :head_dim])  # head 0 owns the first head_dim features
    assert torch.equal(solutions.merge_heads(split), x)


def test_v1_with_v2_weights_matches_v2_exercise_3_1():
    torch.manual_seed(1)
    sa_v1, sa_v2 = solutions.SelfAttention_v1(5, 3), solutions.SelfAttention_v2(5, 3)
    x = torch.rand(7, 5)
    assert torch.allclose(solutions.load_v2_weights_into_v1(sa_v1, sa_v2)(x), sa_v2(x), atol=1e-6)


def test_causal_attention_truncates_mask_and_takes_any_batch():
    ca = solutions.CausalAttention(4, 3, context_length=10, dropout=0.0)
    for b, num_tokens in ((1, 1), (3, 4), (2, 10)):
        assert ca(torch.rand(b, num_tokens, 4)).shape == (b, num_tokens, 3)


def test_dropout_scales_kept_weights_and_is_identity_in_eval():
    dropout = torch.nn.Dropout(0.5)
    weights = torch.full((200, 200), 0.25)
    kept = dropout(weights)
    assert set(kept.unique().tolist()) <= {0.0, 0.5}  # kept values scaled by 1 / (1 - p)
    assert 0.45 < (kept == 0).float().mean() < 0.55
    assert torch.equal(dropout.eval()(weights), weights)


def test_padding_row_with_no_visible_key_is_uniform_not_nan():
    torch.manual_seed(0)
    mha = solutions.MultiHeadAttention(4, 4, 6, 0.0, num_heads=2).eval()
    x = torch.rand(2, 5, 4)
    attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])  # sequence 0 is left-padded
    out = mha(x, attention_mask)
    assert not torch.isnan(out).any()
    weights = {k: v for k, v in mha.state_dict().items() if k != "mask"}
    assert torch.allclose(out, attention(x, weights, num_heads=2, attention_mask=attention_mask), atol=1e-6)
    # Changing a padded token changes no output of a query that can see a real token.
    x_changed = x.clone()
    x_changed[0, 1] += 1.0
    assert torch.allclose(mha(x_changed, attention_mask)[0, 2:], out[0, 2:], atol=1e-6)


def test_single_sequence_form_of_seed_004():
    torch.manual_seed(0)
    single = solutions.MultiHeadAttentionSingle(embed_dim=3, head_dim=2, num_heads=2)
    x = torch.rand(4, 3)
    weights = {
        f"{ours}.{part}": getattr(getattr(single, theirs), part)
        for ours, theirs in (
            ("W_query", "q_proj"),
            ("W_key", "k_proj"),
            ("W_value", "v_proj"),
            ("out_proj", "out_proj"),
        )
        for part in ("weight", "bias")
    }
    assert single(x).shape == (4, 3)
    assert torch.allclose(single(x), attention(x, weights, num_heads=2, causal=False), atol=1e-6)
