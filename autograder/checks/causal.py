"""Checks for notebook 03: the causal mask, the two masking routes, CausalAttention.

Public checks use the notes' numbers: the attention weights of SelfAttention_v2 built under seed 789
and CausalAttention(3, 2, 6, 0.0) under seed 123 on the two-sentence batch. Hidden checks use
random shapes, float64 and batches. Every CausalAttention output is compared with the reference
loaded with the student's OWN weights. Dropout is checked statistically, through weights chosen so
that the output spells out the attention weights; the buffer check moves the module to a GPU when
one is present and to PyTorch's `meta` device otherwise (a plain-attribute mask stays behind on both).
Probes seed the global RNG only inside `seeded`, which restores it: a notebook's own seeds stay valid.
"""

import contextlib
import math

import torch

import solutions
from autograder.checks.basics import DTYPES, diagnose_any, dtype_name, dtype_verdict, forbidden_calls, notes_inputs
from autograder.checks.self_attention import ATTENTION_FUNCTIONS, PROJECTIONS
from autograder.compare import compare, diagnose, largest_difference, same
from autograder.model import Check, Verdict
from autograder.probing import FunctionCalls, ProbeError, describe_exception, lookup, plain, rand, state_of
from autograder.variants import attention_variants, mask_for

NOTES_V2_SEED = 789  # the notes build SelfAttention_v2 under this seed, then mask its weights
NOTES_CAUSAL_SEED = 123  # ... and CausalAttention(3, 2, 6, 0.0) under this one
NOTES_D_OUT = 2
SCORE_SPREAD = 3.0  # hidden scores in [-3, 3): softmax weights far from uniform, so mistakes show


@contextlib.contextmanager
def seeded(seed):
    """The CPU generator seeded for student code that draws from it (layer init, dropout); restored afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(int(seed))
        yield


def first_index(flags):
    """The index (tuple) of the first True in a bool tensor."""
    return tuple(int(i) for i in flags.nonzero()[0])


# ---------------------------------------------------------------------------------------------
# causal_mask(num_tokens)


def mask_cases_notes(rng):
    return [{"num_tokens": 6}]


def mask_cases_sizes(rng):
    # 1 token is the edge case (nothing to hide); more than 16 catches masks built for the toy size.
    return [{"num_tokens": n} for n in (1, rng.randint(2, 5), rng.randint(17, 40))]


def probe_causal_mask(namespace, case):
    causal_mask = lookup(namespace, "causal_mask")
    return {"mask": plain(causal_mask(case["num_tokens"]))}


def judge_causal_mask(data, case):
    got, num_tokens = data["mask"], case["num_tokens"]
    expected = solutions.causal_mask(num_tokens)
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       expected=expected, got=got, input_shape=(num_tokens,))
    if got.dtype != torch.bool:
        return Verdict(False, "mask.dtype", {"dtype": str(got.dtype)}, expected=expected, got=got,
                       input_shape=(num_tokens,), heatmap=True)
    if torch.equal(got, expected):
        return Verdict(True)
    variants = {kind_id: mask_for(kind, num_tokens)
                for kind_id, kind in (("mask_includes_diagonal", "with_diagonal"), ("mask_inverted", "inverted"))}
    return Verdict(False, *first_mask_error(got, expected), misconception=diagnose(got, expected, variants),
                   expected=expected, got=got, input_shape=(num_tokens,), heatmap=True)


def first_mask_error(got, expected):
    """(message key, fields) naming the first query/key pair the mask gets wrong, 1-based like the notes' x^(i)."""
    query, key = (int(i) for i in (got != expected).nonzero()[0])
    if expected[query, key]:
        return "mask.lets_see", {"query": query + 1, "key": key + 1}
    return "mask.hides", {"query": query + 1, "key": key + 1}


# ---------------------------------------------------------------------------------------------
# masking_routes: causal_weights_renormalised(attn_weights) and causal_weights_neg_inf(attn_scores), one
# exercise. Both return weights of shape (..., num_tokens, num_tokens); one judge serves both, and each
# probe looks up its own function, so a mistake in one route costs only that route's checks.


def notes_attention_scores():
    """The notes' unscaled scores queries @ keys.T of SelfAttention_v2 under seed 789 (no reference involved)."""
    with seeded(NOTES_V2_SEED), torch.no_grad():
        d_in = len(notes_inputs()[0])
        # The notes' class creates W_query, W_key, W_value in this order; the seed fixes their values.
        w_query, w_key, _w_value = (torch.nn.Linear(d_in, NOTES_D_OUT, bias=False) for _ in range(3))
        inputs = notes_inputs()
        return w_query(inputs) @ w_key(inputs).T  # (6, 6)


def notes_attention_weights():
    return torch.softmax(notes_attention_scores() / NOTES_D_OUT**0.5, dim=-1)


def weights_cases_notes(rng):
    return [{"input": "notes"}]


def weights_cases_random(rng):
    # A small 2-D input, a float64 batch of long sequences, then the 1-token edge case (a row with one key).
    def seed():
        return rng.randrange(2**31)

    short, long = rng.randint(2, 8), rng.randint(17, 20)
    return [
        {"seed": seed(), "shape": [short, short], "dtype": "float32"},
        {"seed": seed(), "shape": [rng.randint(2, 4), long, long], "dtype": "float64"},
        {"seed": seed(), "shape": [rng.randint(1, 3), 1, 1], "dtype": "float32"},
    ]


def scores_input(case):
    if case.get("input") == "notes":
        return notes_attention_scores()
    return rand(case["seed"], *case["shape"], dtype=DTYPES[case["dtype"]]) * SCORE_SPREAD


def weights_input(case):
    if case.get("input") == "notes":
        return notes_attention_weights()
    return torch.softmax(scores_input(case), dim=-1)


def probe_renormalised(namespace, case):
    renormalise = lookup(namespace, "causal_weights_renormalised")
    return {"weights": plain(renormalise(weights_input(case)))}


def probe_neg_inf(namespace, case):
    neg_inf = lookup(namespace, "causal_weights_neg_inf")
    return {"weights": plain(neg_inf(scores_input(case)))}


def keep_for(kind, like):
    """1 where a way of writing the mask lets a query see a key (the tril matrix of the notes), as `like`'s dtype."""
    return (~mask_for(kind, like.shape[-1])).to(like.dtype)


def renormalise_mistakes(attn_weights):
    """(misconception, wrong weights) pairs for the multiply-and-renormalise route."""
    def renormalised(kind):
        masked = attn_weights * keep_for(kind, attn_weights)
        return masked / masked.sum(dim=-1, keepdim=True)

    masked = attn_weights * keep_for("future", attn_weights)
    mistakes = [
        ("mask_after_softmax_no_renorm", masked),
        ("mask_includes_diagonal", renormalised("with_diagonal")),
        ("mask_inverted", renormalised("inverted")),
    ]
    with contextlib.suppress(RuntimeError):  # (b, T, T) / (b, T) only broadcasts for some shapes
        mistakes.append(("missing_keepdim", masked / masked.sum(dim=-1)))
    return mistakes


def neg_inf_mistakes(attn_scores):
    """(misconception, wrong weights) pairs for the fill-with-minus-infinity route."""
    def filled(kind):
        return attn_scores.masked_fill(mask_for(kind, attn_scores.shape[-1]), -torch.inf)

    plain_softmax = torch.softmax(attn_scores, dim=-1)
    return [
        ("masked_fill_result_dropped", plain_softmax),
        ("softmax_wrong_dim", torch.softmax(filled("future"), dim=-2)),
        ("softmax_wrong_dim", torch.softmax(filled("future"), dim=0)),  # dim=0 written for a 2-D input
        ("mask_includes_diagonal", torch.softmax(filled("with_diagonal"), dim=-1)),
        ("mask_inverted", torch.softmax(filled("inverted"), dim=-1)),
        ("mask_after_softmax_no_renorm", plain_softmax.masked_fill(mask_for("future", attn_scores.shape[-1]), 0.0)),
    ]


def judge_renormalised(data, case):
    attn_weights = weights_input(case)
    expected = solutions.causal_weights_renormalised(attn_weights)
    return judge_causal_weights(data["weights"], expected, lambda: renormalise_mistakes(attn_weights))


def judge_neg_inf(data, case):
    attn_scores = scores_input(case)
    expected = solutions.causal_weights_neg_inf(attn_scores)
    return judge_causal_weights(data["weights"], expected, lambda: neg_inf_mistakes(attn_scores))


def judge_causal_weights(got, expected, mistakes_of):
    """Same weights as the reference, exact zeros above the diagonal, the same dtype; else the first broken property."""
    shown = {"expected": expected, "got": got, "input_shape": tuple(expected.shape)}
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       **shown)
    problem = weights_problem(got, expected)
    if problem is None:
        return dtype_verdict("causal_weights", got, expected.dtype)
    key, fields = problem
    return Verdict(False, key, fields, misconception=diagnose_any(got, expected, mistakes_of()), heatmap=True, **shown)


def weights_problem(got, expected):
    """(message key, 1-based fields) of the first property the weights break, or None when they are right."""
    future = mask_for("future", expected.shape[-1])
    nan_rows = torch.isnan(got).any(dim=-1)
    if nan_rows.any():
        return "causal_weights.nan", {"query": first_index(nan_rows)[-1] + 1}
    leaks = (got != 0) & future
    if leaks.any():
        *_, query, key = first_index(leaks)
        return "causal_weights.future", {"query": query + 1, "key": key + 1}
    off_rows = (got.to(torch.float64).sum(dim=-1) - 1).abs() > 1e-4
    if off_rows.any():
        return "causal_weights.row_sum", {"query": first_index(off_rows)[-1] + 1}
    if not same(got, expected):
        *_, query, key = largest_difference(got, expected)[1]
        return "causal_weights.values", {"query": query + 1, "key": key + 1}
    return None


# ---------------------------------------------------------------------------------------------
# CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False): shared helpers

FORWARD_MISTAKES = (
    "missing_scaling",
    "scale_by_d_in",
    "softmax_wrong_dim",
    "mask_includes_diagonal",
    "mask_inverted",
    "masked_fill_result_dropped",
    "mask_after_softmax_no_renorm",
    "query_key_swapped",
)


def attention_case(rng, *, num_tokens, batch, qkv_bias=False, dtype="float32"):
    """A hidden case: d_in != d_out, head_dim = d_out >= 2, num_tokens < context_length (the mask must be sliced).

    num_tokens and context_length are keys of their own: runner.explain_error reads them to name an unsliced mask.
    """
    d_in = rng.randint(2, 6)
    d_out = rng.choice([d for d in range(2, 8) if d != d_in])
    return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "batch": batch,
            "num_tokens": num_tokens, "context_length": num_tokens + rng.randint(1, 6),
            "d_in": d_in, "d_out": d_out, "qkv_bias": qkv_bias, "dtype": dtype}


def notes_case():
    return {"input": "notes", "batch": 2, "num_tokens": 6, "context_length": 6,
            "d_in": len(notes_inputs()[0]), "d_out": NOTES_D_OUT, "qkv_bias": False, "dtype": "float32"}


def attention_input(case):
    """(batch, num_tokens, d_in): the notes' sentence twice (torch.stack((inputs, inputs))), or random values."""
    if case.get("input") == "notes":
        return torch.stack((notes_inputs(), notes_inputs()))
    return rand(case["seed"], case["batch"], case["num_tokens"], case["d_in"], dtype=DTYPES[case["dtype"]])


def build_module(namespace, case, dropout=0.0):
    """The student's CausalAttention, built as the book does, under the case's seed, in the case's dtype."""
    causal_attention = lookup(namespace, "CausalAttention")
    with seeded(case.get("init_seed", NOTES_CAUSAL_SEED)):
        if case.get("input") == "notes":  # exactly the notes' call, so their printed numbers can be compared
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout)
        else:
            module = causal_attention(case["d_in"], case["d_out"], case["context_length"], dropout,
                                      qkv_bias=case["qkv_bias"])
    return module.to(DTYPES[case["dtype"]])


def projection_state(module):
    """W_query/W_key/W_value weights (and biases) as plain tensors; a clear error when a layer is missing."""
    state = state_of(module)
    for name in PROJECTIONS:
        if f"{name}.weight" not in state:
            raise ProbeError("causal_attention.missing_layer", name=name)
    return {key: value for key, value in state.items() if key.split(".")[0] in PROJECTIONS}


def reference_forward(weights, x, context_length):
    """solutions.CausalAttention (no dropout) loaded with the student's weights, on x."""
    d_out, d_in = weights["W_query.weight"].shape
    with torch.random.fork_rng(devices=[]):  # building layers draws from the global RNG: leave it untouched
        reference = solutions.CausalAttention(d_in, d_out, context_length, 0.0, qkv_bias="W_query.bias" in weights)
    reference.to(x.dtype).load_state_dict(weights, strict=False)  # the mask stays the reference's own
    with torch.no_grad():
        return reference(x)


class ForwardWatch(FunctionCalls):
    """FunctionCalls that also notices `.T` on a tensor with a batch dimension: it reverses EVERY axis."""

    def __init__(self):
        super().__init__()
        self.batched_transpose = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__self__", None) is torch.Tensor.T and args and getattr(args[0], "ndim", 2) > 2:
            self.batched_transpose = True
        return super().__torch_function__(func, types, args, kwargs)


class TransposeCrash(Exception):
    """The forward pass crashed after taking `.T` of a batched tensor: the crash has that cause."""


def call_watched(module, x):
    """(module(x), watch); a crash that follows `.T` on a batch is raised as TransposeCrash."""
    with ForwardWatch() as watch:
        try:
            output = module(x)
        except Exception as exc:
            if watch.batched_transpose:
                raise TransposeCrash from exc
            raise
    return output, watch


def naming_transpose_crash(probe):
    """The probe, with a crash caused by `.T` on a batch turned into probe data (runner would say "shapes")."""
    def probe_naming_transpose(namespace, case):
        try:
            return probe(namespace, case)
        except TransposeCrash:
            return {"transpose_crash": True}

    return probe_naming_transpose


def judging_transpose_crash(judge):
    def judge_after_transpose_crash(data, case):
        if data.get("transpose_crash"):
            return Verdict(False, "causal_attention.transpose_batched", misconception="transpose_batched")
        return judge(data, case)

    return judge_after_transpose_crash


def diagnose_forward(got, weights, x, case):
    """The forward mistake that reproduces the student's output with their own weights, or None."""
    expected = reference_forward(weights, x, case["context_length"])
    return diagnose(got, expected, attention_variants(x, weights, mistakes=FORWARD_MISTAKES))


# ---------------------------------------------------------------------------------------------
# CausalAttention: output on the notes' batch and on random shapes


def attention_cases_random(rng):
    # A mid-sized batch first: an unsliced mask crashes here with a message that names it. Then long
    # sequences in float64 with biases; then a single token (a crash for an unsliced mask, too).
    return [
        attention_case(rng, num_tokens=rng.randint(3, 8), batch=rng.randint(2, 3)),
        attention_case(rng, num_tokens=rng.randint(17, 22), batch=rng.randint(1, 2), qkv_bias=True, dtype="float64"),
        attention_case(rng, num_tokens=1, batch=rng.randint(1, 3), qkv_bias=rng.random() < 0.5),
    ]


def attention_cases_notes(rng):
    return [notes_case()]


@naming_transpose_crash
def probe_forward(namespace, case):
    module = build_module(namespace, case)
    state = projection_state(module)
    output, watch = call_watched(module, attention_input(case))
    return {"output": plain(output), "state": state, "transpose_batched": watch.batched_transpose,
            "forbidden": forbidden_calls(watch.names, ATTENTION_FUNCTIONS)}


@judging_transpose_crash
def judge_forward(data, case):
    if data["forbidden"]:
        return Verdict(False, "causal_attention.builtin", {"names": ", ".join(data["forbidden"])})
    x, got, weights = attention_input(case), data["output"], data["state"]
    expected = reference_forward(weights, x, case["context_length"])
    if same(got, expected):
        return dtype_verdict("causal_weights", got, expected.dtype)
    variants = attention_variants(x, weights, mistakes=FORWARD_MISTAKES)
    verdict = compare(got, expected, message_key="causal_attention.wrong_output", variants=variants,
                      input_shape=tuple(x.shape))
    if verdict.misconception is None and data["transpose_batched"]:
        verdict.misconception = "transpose_batched"
    return verdict


# ---------------------------------------------------------------------------------------------
# CausalAttention: causality, input left alone, gradients reach every projection


def attention_cases_properties(rng):
    case = attention_case(rng, num_tokens=rng.randint(3, 12), batch=rng.randint(1, 3), qkv_bias=rng.random() < 0.5)
    # Tokens after `position` are replaced; outputs up to `position` must not move.
    case.update(position=rng.randint(0, case["num_tokens"] - 2), future_seed=rng.randrange(2**31),
                loss_seed=rng.randrange(2**31))
    return [case]


def future_changed_input(case):
    """The case's input with every token after `position` replaced by other random values."""
    x = attention_input(case)
    start = case["position"] + 1
    x[:, start:] = rand(case["future_seed"], case["batch"], case["num_tokens"] - start, case["d_in"], dtype=x.dtype)
    return x


@naming_transpose_crash
def probe_properties(namespace, case):
    module = build_module(namespace, case)
    x = attention_input(case)
    output, _ = call_watched(module, x)
    data = {"output": plain(output), "input_after": plain(x), "state": projection_state(module)}
    with torch.no_grad():
        data["output_future_changed"] = plain(module(future_changed_input(case)))
    if output.requires_grad:
        # A random mix of the outputs: a plain sum could cancel by accident.
        (output * rand(case["loss_seed"], *output.shape, dtype=output.dtype)).sum().backward()
    parameters = dict(module.named_parameters())
    data["gradients"] = {name: gradient_size(parameters.get(f"{name}.weight")) for name in PROJECTIONS}
    return data


def gradient_size(parameter):
    """Sum of |grad|: None when no gradient arrived (detached, no_grad, or no such parameter)."""
    if parameter is None or parameter.grad is None:
        return None
    return float(parameter.grad.abs().sum())


@judging_transpose_crash
def judge_properties(data, case):
    x = attention_input(case)
    got, changed = data["output"], data["output_future_changed"]
    expected_shape = (case["batch"], case["num_tokens"], case["d_out"])
    if tuple(got.shape) != expected_shape or tuple(changed.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": expected_shape})
    nan_tokens = torch.isnan(got).any(dim=-1)
    if nan_tokens.any():
        return Verdict(False, "causal_attention.output_nan", {"query": first_index(nan_tokens)[-1] + 1},
                       misconception=diagnose_forward(got, data["state"], x, case))
    seen = case["position"] + 1
    if not same(changed[:, :seen], got[:, :seen], atol=1e-6, rtol=1e-5):
        return Verdict(False, "causal_attention.future_leaks", {"position": seen},
                       misconception=diagnose_forward(got, data["state"], x, case))
    if not torch.equal(data["input_after"], x):
        return Verdict(False, "causal_attention.input_modified")
    for name in PROJECTIONS:
        size = data["gradients"][name]
        if size is None or size == 0:
            return Verdict(False, "causal_attention.no_gradient", {"name": name})
        if not math.isfinite(size):
            return Verdict(False, "causal_attention.gradient_not_finite", {"name": name})
    return Verdict(True)


# ---------------------------------------------------------------------------------------------
# CausalAttention: dropout, statistically
#
# d_in = d_out = num_tokens, one-hot tokens, W_value = I: the output IS the (dropped) attention weights,
# output[b, i, j] = weight[i, j]. W_query = c·I and W_key = I give every token a higher score with itself,
# so the weights are not uniform and dropout applied to the scores (before the softmax) changes them.
# Training-mode weights are judged against the student's own eval-mode weights: a mistake elsewhere in
# forward costs the other checks, not this one.

DROPOUT_TOKENS = 32
DROPOUT_BATCH = 16  # 16 · 32·33/2 = 8448 visible weights: one standard deviation of the zero share is <= 0.0055
RATE_DEVIATIONS = 8  # the share of zeros may stray this many standard deviations from p: it never flakes
NEIGHBOUR_MARGIN = 0.1  # independent dropout: vertical neighbours agree with probability p² + (1 - p)²
SELF_SCORE = 2.0  # a token's score with itself, after the scaling; every other score is 0


def dropout_cases(rng):
    return [
        {"seed": rng.randrange(2**31), "p": 0.5, "num_tokens": DROPOUT_TOKENS, "batch": DROPOUT_BATCH,
         "context_length": DROPOUT_TOKENS + rng.randint(1, 8)},
        {"seed": rng.randrange(2**31), "p": rng.choice((0.2, 0.3, 0.4)), "num_tokens": DROPOUT_TOKENS,
         "batch": DROPOUT_BATCH, "context_length": DROPOUT_TOKENS + rng.randint(1, 8)},
    ]


def exposing_weights(num_tokens):
    eye = torch.eye(num_tokens)
    return {"W_query.weight": eye * SELF_SCORE * num_tokens**0.5, "W_key.weight": eye, "W_value.weight": eye}


def one_hot_tokens(case):
    return torch.eye(case["num_tokens"]).expand(case["batch"], -1, -1).clone()


@naming_transpose_crash
def probe_dropout(namespace, case):
    causal_attention = lookup(namespace, "CausalAttention")
    num_tokens = case["num_tokens"]
    with seeded(case["seed"]):
        module = causal_attention(num_tokens, num_tokens, case["context_length"], case["p"])
    parameters = dict(module.named_parameters())
    with torch.no_grad():
        for key, value in exposing_weights(num_tokens).items():
            if key not in parameters:
                raise ProbeError("causal_attention.missing_layer", name=key.split(".")[0])
            parameters[key].copy_(value)
    data = {}
    # nn.Dropout draws its masks from the global RNG: a different seed for every call. Eval mode twice:
    # any randomness left there shows as two different outputs. A fresh input every time, in case
    # forward changes it in place.
    for key, train, seed_offset in (("train", True, 1), ("eval", False, 2), ("eval_again", False, 3)):
        module.train(train)
        with seeded(case["seed"] + seed_offset), torch.no_grad():
            data[key] = plain(call_watched(module, one_hot_tokens(case))[0])
    return data


@judging_transpose_crash
def judge_dropout(data, case):
    train, evaluated = data["train"], data["eval"]
    expected_shape = (case["batch"], case["num_tokens"], case["num_tokens"])
    for got in (train, evaluated, data["eval_again"]):
        if tuple(got.shape) != expected_shape:
            return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": expected_shape})
    if not same(data["eval_again"], evaluated, atol=0, rtol=0):
        return Verdict(False, "causal_attention.dropout_in_eval", misconception="dropout_in_eval")
    return train_problem(train, evaluated, case["p"]) or Verdict(True)


def train_problem(train, evaluated, p):
    """What is wrong with training-mode weights, judged against the same module's eval-mode weights."""
    valid = ~torch.isnan(evaluated)
    if (torch.isnan(train) & valid).any():  # nn.Dropout on scores that already hold -inf: -inf · 0 is nan
        return Verdict(False, "causal_attention.dropout_nan", misconception="dropout_before_softmax")
    seen = valid & (evaluated != 0)  # the weights the mask lets through
    if ((train != 0) & valid & ~seen).any():
        return Verdict(False, "causal_attention.dropout_future")
    zeros = (train == 0) & seen
    if not zeros.any():
        if same(train, evaluated):
            return Verdict(False, "causal_attention.dropout_inactive")
        if same(train.nansum(dim=-1), evaluated.nansum(dim=-1)):
            # Rows sum as before and nothing was zeroed: the softmax came after the dropout.
            return Verdict(False, "causal_attention.dropout_before_softmax", misconception="dropout_before_softmax")
        return Verdict(False, "causal_attention.dropout_values")
    count = int(seen.sum())
    share = float(zeros.sum()) / count
    if abs(share - p) > RATE_DEVIATIONS * (p * (1 - p) / count) ** 0.5:
        return Verdict(False, "causal_attention.dropout_rate", {"share": share})
    kept = seen & ~zeros
    if not same(train[kept], evaluated[kept] / (1 - p)):
        scaled = same(train[kept], evaluated[kept])
        return Verdict(False, "causal_attention.dropout_not_scaled" if scaled else "causal_attention.dropout_values")
    # Dropout on the weights zeroes each (query, key) pair on its own; dropout on the values or the inputs
    # zeroes whole columns, so vertical neighbours (query i and i + 1, same key) agree far more often.
    pairs = seen[:, 1:, :] & seen[:, :-1, :]
    agree = float(((zeros[:, 1:, :] == zeros[:, :-1, :]) & pairs).sum()) / max(int(pairs.sum()), 1)
    if agree > p**2 + (1 - p) ** 2 + NEIGHBOUR_MARGIN:
        return Verdict(False, "causal_attention.dropout_not_on_weights")
    return None


# ---------------------------------------------------------------------------------------------
# CausalAttention: the mask is a buffer (state_dict, .to(dtype), .to(device))


def probe_device(requested="auto"):
    """Where the buffer check moves the module: a real GPU when there is one, else PyTorch's shape-only meta device."""
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "meta"


def buffer_cases(rng):
    return [{**attention_case(rng, num_tokens=rng.randint(2, 8), batch=2), "device": "auto"}]


def probe_buffer(namespace, case):
    """Plain facts only: buffer and parameter names, dtype and device names, the output's shape after the move."""
    module = build_module(namespace, case)
    mask = getattr(module, "mask", None)
    data = {
        "mask_is_tensor": isinstance(mask, torch.Tensor),
        "buffers": [name for name, _ in module.named_buffers()],
        "parameters": [name for name, _ in module.named_parameters()],
        "state_dict": list(module.state_dict()),
    }
    # The dtype move happens on the CPU, then back: MPS has no float64.
    module.to(torch.float64)
    data["mask_dtype_after_double"] = mask_dtype(module)
    module.to(torch.float32)
    x = attention_input({**case, "dtype": "float32"})
    try:  # a forward pass that fails on the CPU already is the other checks' business, not this one's
        with torch.no_grad():
            module(x)
        data["runs_on_cpu"] = True
    except Exception:  # noqa: BLE001
        data["runs_on_cpu"] = False
    device = probe_device(case["device"])
    module.to(device)
    data["device"] = torch.device(device).type
    data["buffer_devices"] = {name: buffer.device.type for name, buffer in module.named_buffers()}
    mask = getattr(module, "mask", None)
    data["mask_device"] = mask.device.type if isinstance(mask, torch.Tensor) else None
    if data["runs_on_cpu"]:
        try:
            with torch.no_grad():
                output = module(x.to(device))
        except Exception as exc:  # noqa: BLE001 - a failure after the move is the finding, not a crash
            data["forward_error"] = describe_exception(exc)
        else:
            if isinstance(output, torch.Tensor):
                data["output_shape"], data["output_device"] = list(output.shape), output.device.type
    return data


def mask_dtype(module):
    mask = getattr(module, "mask", None)
    return dtype_name(mask.dtype) if isinstance(mask, torch.Tensor) else None


def judge_buffer(data, case):
    if not data["mask_is_tensor"]:
        return Verdict(False, "causal_attention.buffer_missing")
    if "mask" in data["parameters"]:
        return Verdict(False, "causal_attention.buffer_is_parameter")
    device = data["device"]
    left_behind = {name: where for name, where in data["buffer_devices"].items() if where != device}
    if data["mask_device"] != device:
        left_behind.setdefault("mask", data["mask_device"])
    if left_behind:
        name, where = sorted(left_behind.items())[0]
        return Verdict(False, "causal_attention.buffer_left_behind", {"name": name, "where": where, "device": device},
                       misconception="mask_plain_attribute" if name == "mask" else None)
    if "mask" not in data["buffers"]:
        return Verdict(False, "causal_attention.buffer_not_registered", misconception="mask_plain_attribute")
    if "mask" not in data["state_dict"]:
        return Verdict(False, "causal_attention.buffer_not_saved")
    if data["mask_dtype_after_double"] in ("float16", "bfloat16", "float32"):
        return Verdict(False, "causal_attention.buffer_dtype", {"dtype": data["mask_dtype_after_double"]})
    if not data["runs_on_cpu"]:
        return Verdict(True)
    error = data.get("forward_error")
    # The meta device has no values: an op that needs them (.item(), printing numbers) fails there only.
    if error is not None and (device != "meta" or "device" in error["message"]):
        return Verdict(False, "causal_attention.buffer_forward_failed",
                       {"device": device, "type": error["type"], "detail": error["message"][:160]})
    expected_shape = [case["batch"], case["num_tokens"], case["d_out"]]
    if error is None and (data.get("output_shape") != expected_shape or data.get("output_device") != device):
        return Verdict(False, "causal_attention.buffer_output", {"device": device})
    return Verdict(True)



CHECKS = (
    Check("causal_mask.notes", "causal_mask", 2, False, mask_cases_notes, probe_causal_mask, judge_causal_mask),
    Check("causal_mask.sizes", "causal_mask", 4, True, mask_cases_sizes, probe_causal_mask, judge_causal_mask),
    Check("masking_routes.renormalise_notes", "masking_routes", 1, False, weights_cases_notes, probe_renormalised,
          judge_renormalised),
    Check("masking_routes.renormalise_random", "masking_routes", 3, True, weights_cases_random, probe_renormalised,
          judge_renormalised),
    Check("masking_routes.neg_inf_notes", "masking_routes", 1, False, weights_cases_notes, probe_neg_inf,
          judge_neg_inf),
    Check("masking_routes.neg_inf_random", "masking_routes", 3, True, weights_cases_random, probe_neg_inf,
          judge_neg_inf),
    Check("causal_attention.notes", "causal_attention", 2, False, attention_cases_notes, probe_forward,
          judge_forward),
    Check("causal_attention.random", "causal_attention", 4, True, attention_cases_random, probe_forward,
          judge_forward),
    Check("causal_attention.properties", "causal_attention", 2, True, attention_cases_properties,
          probe_properties, judge_properties),
    Check("causal_attention.dropout", "causal_attention", 1.5, True, dropout_cases, probe_dropout, judge_dropout),
    Check("causal_attention.buffer", "causal_attention", 1.5, True, buffer_cases, probe_buffer, judge_buffer),
)

MESSAGES = {
    "causal_mask.notes.title": {
        "en": "causal_mask(6) blocks exactly the future tokens",
        "zh": "causal_mask(6) 恰好遮住所有未来 token",
    },
    "causal_mask.sizes.title": {
        "en": "causal_mask is right for other sizes (1 token up to long sequences)",
        "zh": "causal_mask 在其他长度上也正确（从 1 个 token 到长序列）",
    },
    "mask.lets_see": {
        "en": "your mask lets token {query} see token {key}, which comes later",
        "zh": "你的掩码让 token {query} 看到了在它之后的 token {key}",
    },
    "mask.hides": {
        "en": "your mask hides token {key} from token {query}, although token {query} may see it",
        "zh": "你的掩码对 token {query} 遮住了 token {key}，但 token {query} 应当能看到它",
    },
    "mask.dtype": {
        "en": "the mask must be a bool tensor (True = hidden), got {dtype}; try .bool()",
        "zh": "掩码必须是 bool 张量（True 表示遮住），实际是 {dtype}；可以用 .bool()",
    },
    # The two masking routes
    "masking_routes.renormalise_notes.title": {
        "en": "causal_weights_renormalised: the notes' attention weights (SelfAttention_v2, seed 789), masked and "
        "renormalised",
        "zh": "causal_weights_renormalised：笔记中的注意力权重（SelfAttention_v2，种子 789）遮蔽后重新归一化",
    },
    "masking_routes.renormalise_random.title": {
        "en": "causal_weights_renormalised: masking and renormalising works for other sizes, batches and float64",
        "zh": "causal_weights_renormalised：遮蔽并重新归一化在其他长度、带 batch 维和 float64 输入上也正确",
    },
    "masking_routes.neg_inf_notes.title": {
        "en": "causal_weights_neg_inf: the notes' attention scores (SelfAttention_v2, seed 789), filled with -inf, "
        "then softmax",
        "zh": "causal_weights_neg_inf：笔记中的注意力分数（SelfAttention_v2，种子 789）填充 -inf 后做 softmax",
    },
    "masking_routes.neg_inf_random.title": {
        "en": "causal_weights_neg_inf: filling with -inf before the softmax works for other sizes, batches and float64",
        "zh": "causal_weights_neg_inf：softmax 之前填充 -inf 在其他长度、带 batch 维和 float64 输入上也正确",
    },
    "causal_weights.nan": {
        "en": "the weights of token {query} are nan: every key of that row was hidden "
        "(0/0, or a softmax over nothing but -inf)",
        "zh": "token {query} 的权重是 nan：这一行的所有 key 都被遮住了（0/0，或者对全是 -inf 的一行做 softmax）",
    },
    "causal_weights.future": {
        "en": "token {query} gives weight to token {key}, which comes later: weights above the diagonal must be "
        "exactly 0",
        "zh": "token {query} 给了在它之后的 token {key} 权重：对角线上方的权重必须恰好为 0",
    },
    "causal_weights.row_sum": {
        "en": "the weights of token {query} do not sum to 1: each query's weights over the keys (the last "
        "dimension) must sum to 1 after masking",
        "zh": "token {query} 的权重之和不是 1：遮蔽之后，每个查询对所有 key（最后一个维度）的权重之和必须为 1",
    },
    "causal_weights.values": {
        "en": "the weights are causal and each row sums to 1, but they differ from the expected ones "
        "(first at query {query}, key {key})",
        "zh": "权重满足因果性且每行之和为 1，但与期望值不同（最先出现在查询 {query}、key {key}）",
    },
    "causal_weights.dtype": {
        "en": "the result has dtype {got_dtype}, expected {expected_dtype}: keep the input's dtype",
        "zh": "结果的 dtype 是 {got_dtype}，期望 {expected_dtype}：请保持输入的 dtype",
    },
    # CausalAttention
    "causal_attention.notes.title": {
        "en": "CausalAttention(3, 2, 6, 0.0) on the notes' batch of two sentences (seed 123)",
        "zh": "CausalAttention(3, 2, 6, 0.0) 作用于笔记中由两句话组成的 batch（种子 123）",
    },
    "causal_attention.random.title": {
        "en": "CausalAttention matches the reference on other shapes (batches, 1 to 20+ tokens, biases, float64)",
        "zh": "CausalAttention 在其他形状上与参考实现一致（不同 batch、1 到 20 多个 token、偏置、float64）",
    },
    "causal_attention.properties.title": {
        "en": "CausalAttention is causal, leaves its input alone and passes gradients to W_query, W_key, W_value",
        "zh": "CausalAttention 满足因果性、不修改输入，并且梯度能传到 W_query、W_key、W_value",
    },
    "causal_attention.dropout.title": {
        "en": "dropout acts on the attention weights in training mode only",
        "zh": "dropout 只在训练模式下作用于注意力权重",
    },
    "causal_attention.buffer.title": {
        "en": "the mask is a registered buffer: saved in state_dict, moved by .to(dtype) and .to(device) "
        "(a GPU, or PyTorch's meta device when there is none)",
        "zh": "掩码是注册的 buffer：保存在 state_dict 中，随 .to(dtype) 和 .to(device) 移动"
        "（有 GPU 时用 GPU，没有时用 PyTorch 的 meta 设备）",
    },
    "causal_attention.missing_layer": {
        "en": "the module has no nn.Linear called {name}: keep the layers of the given __init__",
        "zh": "模块中没有名为 {name} 的 nn.Linear：请保留给定 __init__ 中的各层",
    },
    "causal_attention.builtin": {
        "en": "the forward pass calls {names}: write the attention yourself",
        "zh": "前向传播调用了 {names}：请自己实现注意力计算",
    },
    "causal_attention.transpose_batched": {
        "en": "`.T` on the batched keys reverses all three axes, so the shapes no longer fit",
        "zh": "对带 batch 维的 keys 使用 `.T` 会反转全部三个维度，形状因此对不上",
    },
    "causal_attention.wrong_output": {
        "en": "the context vectors differ from the reference run with your own weights",
        "zh": "上下文向量与使用你自己的权重运行的参考实现不一致",
    },
    "causal_attention.future_leaks": {
        "en": "changing tokens after position {position} changed the outputs up to position {position}: "
        "the future leaks in",
        "zh": "修改位置 {position} 之后的 token 改变了位置 {position} 及之前的输出：未来的信息泄漏进来了",
    },
    "causal_attention.output_nan": {
        "en": "the output of token {query} is nan: that token sees no key at all (is the diagonal masked?)",
        "zh": "token {query} 的输出是 nan：这个 token 看不到任何 key（是不是把对角线也遮住了？）",
    },
    "causal_attention.gradient_not_finite": {
        "en": "the gradient of {name}.weight is nan or inf",
        "zh": "{name}.weight 的梯度是 nan 或 inf",
    },
    "causal_attention.input_modified": {
        "en": "the forward pass modified its input x in place; leave x unchanged",
        "zh": "前向传播原地修改了输入 x；请不要改动 x",
    },
    "causal_attention.no_gradient": {
        "en": "no gradient reaches {name}.weight: do not detach, use .data or torch.no_grad() in forward",
        "zh": "梯度没有传到 {name}.weight：forward 中不要 detach、不要用 .data 或 torch.no_grad()",
    },
    "causal_attention.dropout_in_eval": {
        "en": "after model.eval() two calls on the same input give different outputs: dropout is still active",
        "zh": "调用 model.eval() 之后，同一输入的两次调用输出不同：dropout 仍然生效",
    },
    "causal_attention.dropout_nan": {
        "en": "in training mode the output holds nan: dropout multiplied the -inf scores by 0; apply it to the "
        "weights after the softmax",
        "zh": "训练模式下输出中出现 nan：dropout 把 -inf 分数乘以了 0；请在 softmax 之后对权重应用 dropout",
    },
    "causal_attention.dropout_future": {
        "en": "in training mode a token gives weight to a later token: dropout must not undo the mask",
        "zh": "训练模式下有 token 给了在它之后的 token 权重：dropout 不能破坏掩码",
    },
    "causal_attention.dropout_inactive": {
        "en": "in training mode no attention weight is ever dropped: apply self.dropout to the attention weights",
        "zh": "训练模式下没有任何注意力权重被丢弃：请对注意力权重应用 self.dropout",
    },
    "causal_attention.dropout_before_softmax": {
        "en": "in training mode the weights change but no weight is zero and every row still sums to 1",
        "zh": "训练模式下权重变了，但没有一个权重为 0，而且每一行之和仍是 1",
    },
    "causal_attention.dropout_values": {
        "en": "in training mode the kept attention weights are neither the eval-mode weights nor those scaled "
        "by 1/(1-p)",
        "zh": "训练模式下保留下来的注意力权重既不是 eval 模式的权重，也不是它们乘以 1/(1-p) 的结果",
    },
    "causal_attention.dropout_rate": {
        "en": "in training mode {share:.0%} of the visible attention weights are zero, far from the dropout rate p",
        "zh": "训练模式下 {share:.0%} 的可见注意力权重为 0，与 dropout 比例 p 相差太远",
    },
    "causal_attention.dropout_not_scaled": {
        "en": "the kept attention weights are not scaled by 1/(1-p): use nn.Dropout, which does it for you",
        "zh": "保留下来的注意力权重没有乘以 1/(1-p)：请使用 nn.Dropout，它会自动完成缩放",
    },
    "causal_attention.dropout_not_on_weights": {
        "en": "dropout zeroes whole columns of the weights: apply it to attn_weights, not to the values or the input",
        "zh": "dropout 把权重整列置零了：应对 attn_weights 应用 dropout，而不是对 values 或输入",
    },
    "causal_attention.buffer_missing": {
        "en": "the module has no tensor attribute `mask`: add self.register_buffer('mask', ...) to __init__",
        "zh": "模块没有张量属性 `mask`：请在 __init__ 中加上 self.register_buffer('mask', ...)",
    },
    "causal_attention.buffer_is_parameter": {
        "en": "`mask` is an nn.Parameter: the optimizer would train it; register it as a buffer instead",
        "zh": "`mask` 是 nn.Parameter：优化器会训练它；请把它注册为 buffer",
    },
    "causal_attention.buffer_left_behind": {
        "en": "after module.to('{device}') `{name}` is still on {where}: a plain attribute does not move "
        "with the module",
        "zh": "执行 module.to('{device}') 之后 `{name}` 仍在 {where} 上：普通属性不会随模块移动",
    },
    "causal_attention.buffer_not_registered": {
        "en": "`mask` is not among the module's buffers",
        "zh": "`mask` 不在模块的 buffer 之中",
    },
    "causal_attention.buffer_not_saved": {
        "en": "`mask` is missing from state_dict(): drop persistent=False from register_buffer",
        "zh": "state_dict() 中没有 `mask`：去掉 register_buffer 的 persistent=False",
    },
    "causal_attention.buffer_dtype": {
        "en": "after module.to(torch.float64) the mask is still {dtype}",
        "zh": "执行 module.to(torch.float64) 之后掩码仍是 {dtype}",
    },
    "causal_attention.buffer_forward_failed": {
        "en": "after module.to('{device}') the forward pass fails ({type}: {detail}); tensors made inside forward "
        "stay on the CPU: use self.mask",
        "zh": "执行 module.to('{device}') 之后前向传播失败（{type}：{detail}）；在 forward 中新建的张量留在 CPU 上："
        "请使用 self.mask",
    },
    "causal_attention.buffer_output": {
        "en": "after module.to('{device}') the output has the wrong shape or is not on {device}",
        "zh": "执行 module.to('{device}') 之后输出的形状不对，或者不在 {device} 上",
    },
}
