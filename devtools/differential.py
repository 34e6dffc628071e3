"""Differential runs: does a mutant of the reference behave like `solutions` wherever a user can look?

For each exercise name the mutated line reaches, an observer calls the object on random inputs (several seeds,
shapes, dtypes and, for modules, both modes, gradients, a float64 copy and the meta device) and records what a
user could see: returned tensors, exceptions, parameters, buffers, state_dict keys, the sizes a constructor
stores. `difference(mutant)` runs the same observers on the mutant and on `solutions` and names the first
observation that differs (tensors compared with allclose, NaN equal to NaN), or returns None.

What counts as observable follows the exercises' promises: inputs of the documented ranks only (2-D for the
self-attention classes and context_vectors, square scores for the masking routes), attention masks of 0s and 1s,
and for a query whose visible keys are all padding only that its output is finite (it carries no information).
"""

import random

import torch
from torch import nn

from attnkit import solutions
from autograder.course.exercises import EXERCISES_BY_ID
from devtools import mutants as mutant_source

SEEDS = (0, 1, 2)
RTOL, ATOL = 1e-5, 1e-6


class Raised:
    """An exception as an observation: its type is what a caller sees."""

    def __init__(self, exc):
        self.type = type(exc).__name__

    def __eq__(self, other):
        return isinstance(other, Raised) and other.type == self.type

    def __hash__(self):
        return hash(self.type)

    def __repr__(self):
        return f"raised {self.type}"


def attempt(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - raising is an observation like any other
        return Raised(exc)


def seeded_call(seed, function, *args, **kwargs):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return attempt(function, *args, **kwargs)


def uniform(rng, *shape, scale=1.0, dtype=torch.float32):
    generator = torch.Generator().manual_seed(rng.randrange(2**31))
    return ((torch.rand(*shape, generator=generator, dtype=torch.float64) * 2 - 1) * scale).to(dtype)


# ---------------------------------------------------------------------------------------------
# Observers: name -> function(object, rng) -> list of observations


def observe_softmax_naive(softmax, rng):
    shapes = [(rng.randint(1, 9),), (rng.randint(2, 5), rng.randint(2, 5))]
    return [attempt(softmax, uniform(rng, *shape, scale=scale, dtype=dtype))
            for shape in shapes for scale in (1.0, 8.0) for dtype in (torch.float32, torch.float64)]


def observe_softmax_stable(softmax, rng):
    seen = []
    for rank in (1, 2, 3):
        shape = [rng.randint(2, 5) for _ in range(rank)]
        for scale in (1.0, 30.0, 1000.0):
            x = uniform(rng, *shape, scale=scale, dtype=rng.choice((torch.float32, torch.float64)))
            seen.append(attempt(softmax, x.clone()))
            seen += [attempt(softmax, x.clone(), dim) for dim in range(-rank, rank)]
            seen.append(attempt(softmax, x.clone(), dim=-1))
    return seen


def observe_context_vectors(context_vectors, rng):
    return [attempt(context_vectors, uniform(rng, rng.randint(1, 7), rng.randint(1, 5), scale=scale, dtype=dtype))
            for scale in (1.0, 3.0) for dtype in (torch.float32, torch.float64)]


def observe_causal_mask(causal_mask, rng):
    return [attempt(causal_mask, n) for n in range(1, 7)]


def square_inputs(rng, make_weights):
    """(..., T, T) inputs of rank 2 to 4, float32 and float64, as scores or as softmax weights."""
    inputs = []
    for leading in ((), (rng.randint(1, 3),), (rng.randint(1, 3), rng.randint(1, 3))):
        tokens = rng.randint(1, 6)
        for dtype in (torch.float32, torch.float64):
            scores = uniform(rng, *leading, tokens, tokens, scale=3.0, dtype=dtype)
            inputs.append(torch.softmax(scores, dim=-1) if make_weights else scores)
    return inputs


def observe_masking_route(route, rng, make_weights):
    seen = [attempt(route, x.clone()) for x in square_inputs(rng, make_weights)]
    # "on any device": the result keeps the input's device (meta stands in for a GPU).
    meta = attempt(route, torch.empty(2, 4, 4, device="meta"))
    seen.append(meta if isinstance(meta, Raised) else (tuple(meta.shape), meta.dtype, meta.device.type))
    return seen


def module_sizes(rng, kind):
    heads = rng.randint(2, 3)
    head_dim = rng.randint(2, 4)
    d_out = heads * head_dim if kind == "multihead" else head_dim
    tokens = rng.randint(2, 6)
    return {"d_in": rng.randint(2, 6), "d_out": d_out, "heads": heads, "tokens": tokens,
            "context_length": tokens + rng.randint(0, 3), "batch": rng.randint(1, 3)}


def module_state(module):
    """Parameters (duplicates kept), buffers, state_dict keys and the plain-number attributes."""
    return {
        "parameters": {name: p.detach().clone() for name, p in module.named_parameters(remove_duplicate=False)},
        "buffers": {name: b.detach().clone() for name, b in module.named_buffers()},
        "state_dict": sorted(module.state_dict()),
        "attributes": {name: (type(value).__name__, value) for name, value in vars(module).items()
                       if isinstance(value, int | float | bool | str)},
    }


def observe_module(make, x, seed, forward_kwargs=None, view=None):
    """What a user sees of the module `make()` builds: state, eval and train outputs, gradients, float64, meta."""
    forward_kwargs = forward_kwargs or {}
    view = view or (lambda output: output)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = attempt(make)
    if isinstance(module, Raised):
        return [module]
    seen = [module_state(module)]
    module.eval()
    output = attempt(module, x.clone(), **forward_kwargs)
    seen.append(output if isinstance(output, Raised) else view(output.detach()))
    module.train()
    seen.append(seeded_call(seed + 1, lambda: view(module(x.clone(), **forward_kwargs).detach())))
    module.eval()
    if not isinstance(output, Raised):
        weights = uniform(random.Random(seed), *output.shape, dtype=output.dtype)

        def gradients():
            module.zero_grad()
            if output.requires_grad:
                total(view(output * weights)).backward()
            return {name: None if p.grad is None else p.grad.clone()
                    for name, p in module.named_parameters(remove_duplicate=False)}

        seen.append(attempt(gradients))
    wide = attempt(module.to, torch.float64)
    if isinstance(wide, Raised):
        return [*seen, wide]
    seen.append(attempt(lambda: view(wide(x.to(torch.float64), **forward_kwargs).detach())))
    seen.append(module_state(wide))
    meta = attempt(lambda: module.to("meta")(x.to("meta"), **{k: v.to("meta") if isinstance(v, torch.Tensor) else v
                                                              for k, v in forward_kwargs.items()}))
    seen.append(meta if isinstance(meta, Raised) else (tuple(meta.shape), meta.dtype, meta.device.type))
    return seen


def total(viewed):
    """The sum of every tensor in a view of the output: a loss to take gradients of."""
    if isinstance(viewed, dict):
        return sum(total(value) for value in viewed.values() if isinstance(value, torch.Tensor | dict))
    return viewed.sum()


def observe_class(kind):
    def observe(cls, rng):
        seen = []
        sizes = module_sizes(rng, kind)
        d_in, d_out, heads, ctx = sizes["d_in"], sizes["d_out"], sizes["heads"], sizes["context_length"]
        batched = kind not in ("v1", "v2")
        x = uniform(rng, *((sizes["batch"],) if batched else ()), sizes["tokens"], d_in)
        seed = rng.randrange(2**31)
        for bias in ((None,) if kind == "v1" else (None, False, True)):
            keywords = {} if bias is None else {"qkv_bias": bias}
            for dropout in ((0.0,) if not batched else (0.0, 0.5)):
                arguments = {"v1": (d_in, d_out), "v2": (d_in, d_out), "causal": (d_in, d_out, ctx, dropout)}.get(
                    kind, (d_in, d_out, ctx, dropout, heads))
                seen += observe_module(lambda a=arguments, k=keywords: cls(*a, **k), x, seed)
        if kind == "multihead":
            seen += observe_padding(cls, rng, sizes, x, seed)
            # A d_out that num_heads does not divide must be refused, at construction or at the first forward (the
            # course accepts an __init__ without the book's assert): only whether it raises is compared.
            refused = attempt(lambda: cls(d_in, d_out + 1, ctx, 0.0, heads)(x))
            seen.append(isinstance(refused, Raised))
        return seen

    return observe


def observe_padding(cls, rng, sizes, x, seed):
    """Outputs with an attention mask of 0s and 1s: queries that see a real token compared, the others finite."""
    batch, tokens = x.shape[0], x.shape[1]
    attention_mask = (torch.rand(batch, tokens, generator=torch.Generator().manual_seed(seed)) < 0.6).long()
    attention_mask[0] = 1
    visible = torch.tril(torch.ones(tokens, tokens, dtype=torch.bool)) & attention_mask.bool()[:, None, :]
    informative = visible.any(dim=-1)  # (batch, tokens): the query sees at least one real token

    def view(output):
        return {"informative": output[informative], "others_finite": bool(torch.isfinite(output[~informative]).all())}

    arguments = (sizes["d_in"], sizes["d_out"], sizes["context_length"], 0.0, sizes["heads"])
    return observe_module(lambda: cls(*arguments), x, seed, {"attention_mask": attention_mask}, view)


def observe_split_heads(split_heads, rng):
    heads, head_dim = rng.randint(1, 3), rng.randint(1, 4)
    x = uniform(rng, rng.randint(1, 3), rng.randint(1, 5), heads * head_dim)
    return [attempt(split_heads, x.clone(), heads), attempt(split_heads, x.double(), heads)]


def observe_merge_heads(merge_heads, rng):
    x = uniform(rng, rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 5), rng.randint(1, 4))
    # A transposed view, as attention's output usually is: merge_heads must cope with non-contiguous input.
    return [attempt(merge_heads, x.clone()), attempt(merge_heads, x.transpose(2, 3).contiguous().transpose(2, 3))]


def observe_load_weights(load, rng):
    d_in, d_out = rng.randint(2, 5), rng.randint(2, 5)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(rng.randrange(2**31))
        v1, v2 = solutions.SelfAttention_v1(d_in, d_out), solutions.SelfAttention_v2(d_in, d_out)
    returned = attempt(load, v1, v2)
    x = uniform(rng, rng.randint(1, 5), d_in)
    return [returned is v1 if not isinstance(returned, Raised) else returned, module_state(v1), module_state(v2),
            attempt(lambda: v1(x).detach())]


def observe_to_torch(to_torch, rng):
    seen = []
    # The last: sizes above CPython's small-int cache (256), d_in and d_out computed apart as a model's config gives
    # them: sizes compared by identity (`is not`) fail there only.
    for heads, head_dim, bias, dropout in ((rng.randint(1, 3), rng.randint(1, 4), False, 0.0),
                                           (rng.randint(1, 3), rng.randint(1, 4), True, 0.2), (1, 1, False, 0.0),
                                           (4, 72, False, 0.0)):
        d_model = heads * head_dim
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(rng.randrange(2**31))
            mha = solutions.MultiHeadAttention(head_dim * heads, d_model, 8, dropout, heads, qkv_bias=bias)
            theirs = attempt(to_torch, mha)
        if isinstance(theirs, Raised):
            seen.append(theirs)
            continue
        theirs.eval()
        x = uniform(rng, 2, 5, d_model)
        future = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
        seen += [type(theirs).__name__, module_state(theirs),
                 attempt(lambda t=theirs, x=x, f=future: t(x, x, x, attn_mask=f, need_weights=False)[0].detach())]
    for d_in in (3, 5):  # d_in != d_out = 4: refused
        mha = solutions.MultiHeadAttention(d_in, 4, 8, 0.0, 2)
        seen.append(attempt(to_torch, mha))
    return seen


def observe_count_parameters(count, rng):
    frozen = nn.Linear(rng.randint(1, 4), rng.randint(1, 4))
    frozen.bias.requires_grad_(False)
    modules = [solutions.MultiHeadAttention(4, 4, 6, 0.0, 2), solutions.CausalAttention(3, 2, 5, 0.0, qkv_bias=True),
               frozen, nn.Sequential()]
    return [attempt(count, module) for module in modules]


OBSERVERS = {
    "softmax_naive": observe_softmax_naive,
    "softmax_stable": observe_softmax_stable,
    "context_vectors": observe_context_vectors,
    "SelfAttention_v1": observe_class("v1"),
    "SelfAttention_v2": observe_class("v2"),
    "load_v2_weights_into_v1": observe_load_weights,
    "causal_mask": observe_causal_mask,
    "causal_weights_renormalised": lambda route, rng: observe_masking_route(route, rng, make_weights=True),
    "causal_weights_neg_inf": lambda route, rng: observe_masking_route(route, rng, make_weights=False),
    "CausalAttention": observe_class("causal"),
    "MultiHeadAttentionWrapper": observe_class("wrapper"),
    "split_heads": observe_split_heads,
    "merge_heads": observe_merge_heads,
    "MultiHeadAttention": observe_class("multihead"),
    "to_torch_multihead": observe_to_torch,
    "count_parameters": observe_count_parameters,
}


# ---------------------------------------------------------------------------------------------
# Comparing


def first_difference(ours, theirs, where="output"):
    """A short description of the first place two observations differ, or None."""
    if isinstance(ours, torch.Tensor) or isinstance(theirs, torch.Tensor):
        if not (isinstance(ours, torch.Tensor) and isinstance(theirs, torch.Tensor)):
            return f"{where}: {describe(ours)} against {describe(theirs)}"
        if ours.shape != theirs.shape or ours.dtype != theirs.dtype or ours.device.type != theirs.device.type:
            return f"{where}: {describe(ours)} against {describe(theirs)}"
        if ours.device.type == "meta":
            return None
        if not (ours.is_floating_point() or ours.is_complex()):
            return None if torch.equal(ours, theirs) else f"{where}: values differ"
        if not torch.allclose(ours, theirs, rtol=RTOL, atol=ATOL, equal_nan=True):
            return f"{where}: values differ (largest difference {float((ours - theirs).abs().nan_to_num().max()):.3g})"
        return None
    if isinstance(ours, dict) and isinstance(theirs, dict):
        if list(ours) != list(theirs):
            return f"{where}: keys {list(ours)} against {list(theirs)}"
        for key in ours:
            found = first_difference(ours[key], theirs[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(ours, list | tuple) and isinstance(theirs, list | tuple):
        if len(ours) != len(theirs):
            return f"{where}: {len(ours)} observations against {len(theirs)} (one of them raised early)"
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            found = first_difference(mine, other, f"{where}[{index}]")
            if found:
                return found
        return None
    if type(ours) is type(theirs) and not isinstance(ours, dict | list | tuple) and ours == theirs:
        return None
    return f"{where}: {describe(ours)} against {describe(theirs)}"


def describe(value, limit=120):
    if isinstance(value, torch.Tensor):
        return f"tensor {tuple(value.shape)} {value.dtype} on {value.device.type}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def observed_names(mutant):
    """The exercise names whose behaviour the mutated line can change."""
    exercises = mutant_source.usage().get((mutant.file, mutant.line), ())
    return sorted({name for exercise in exercises for name in EXERCISES_BY_ID[exercise].names})


def difference(mutant, seeds=SEEDS):
    """The first observable difference between the mutant and `solutions`, or None when there is none."""
    try:
        loaded = mutant_source.load(mutant)
    except mutant_source.MutantImportError as error:
        return f"raises at import: {error}"
    mutated = {name: value for module in loaded.values() for name, value in module.items()}
    for name in observed_names(mutant):
        observe = OBSERVERS[name]
        for seed in seeds:
            ours = observe(mutated[name], random.Random(f"{name}/{seed}"))
            theirs = observe(getattr(solutions, name), random.Random(f"{name}/{seed}"))
            found = first_difference(ours, theirs, f"{name} (seed {seed})")
            if found:
                return found
    return None


def differs(mutant):
    return difference(mutant) is not None
