"""The probe half of the module contract (autograder.course.checks.contract has the judges): what each module
exercise's class promises (`ModuleSpec`, `SPECS`), built and called as the book does.
"""

from dataclasses import dataclass

import torch

from autograder.checking.probing import (
    DeviceMixWatch,
    ProbeError,
    describe_exception,
    dtype_name,
    lookup,
    plain,
    rand,
    seeded,
)
from autograder.course.probes.inputs import DTYPES

SELF_SCORE = 2.0  # a token's score with itself after the scaling, in the dropout probe; every other score is 0


@dataclass(frozen=True)
class ModuleSpec:
    """What one module exercise's class promises. `kind` names its constructor and layout:

    v1        Class(d_in, d_out): raw (d_in, d_out) parameters W_query/W_key/W_value; input (num_tokens, d_in)
    v2        Class(d_in, d_out, qkv_bias=False): nn.Linear layers; input (num_tokens, d_in)
    causal    Class(d_in, d_out, context_length, dropout, qkv_bias=False): nn.Linear layers and a `mask` buffer;
              input (b, num_tokens, d_in), output (b, num_tokens, d_out)
    wrapper   Class(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False): num_heads causal heads in
              `heads`; output (b, num_tokens, num_heads * d_out)
    multihead Class(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False): one set of projections
              split into heads, an `out_proj` (always with a bias) and a `mask` buffer
    """

    exercise: str
    class_name: str
    kind: str
    points: dict  # check name (structure, modes, device, properties) -> points

    @property
    def batched(self):
        return self.kind not in ("v1", "v2")

    @property
    def causal(self):
        return self.batched

    @property
    def has_dropout(self):
        return self.batched

    @property
    def has_qkv_bias(self):
        return self.kind != "v1"


def head_count(spec, case):
    return case["num_heads"] if spec.kind in ("wrapper", "multihead") else 1


def build(spec, namespace, case, dropout=0.0):
    """The student's class, constructed as the book does under the case's seed, in the case's dtype."""
    cls = lookup(namespace, spec.class_name)
    with seeded(case["init_seed"]):
        module = cls(*constructor_arguments(spec, case, dropout), **constructor_keywords(spec, case))
    if not isinstance(module, torch.nn.Module):
        raise ProbeError("contract.not_a_module", name=spec.class_name)
    return module.to(DTYPES[case["dtype"]])


def constructor_arguments(spec, case, dropout=0.0):
    """The positional arguments of the book's constructor call."""
    d_in, d_out = case["d_in"], case["d_out"]
    if spec.kind in ("v1", "v2"):
        return (d_in, d_out)
    if spec.kind == "causal":
        return (d_in, d_out, case["context_length"], dropout)
    return (d_in, d_out, case["context_length"], dropout, case["num_heads"])


def constructor_keywords(spec, case):
    """qkv_bias where the constructor takes it; a case whose qkv_bias is None leaves it at the default (False)."""
    if not spec.has_qkv_bias or case.get("qkv_bias") is None:
        return {}
    return {"qkv_bias": case["qkv_bias"]}


def promised_attributes(spec, case):
    """{attribute: (value, how the given __init__ computes it)} of the sizes the constructor stores."""
    if spec.kind != "multihead":
        return {}
    d_out, num_heads = case["d_out"], case["num_heads"]
    return {"d_out": (d_out, "d_out"), "num_heads": (num_heads, "num_heads"),
            "head_dim": (d_out // num_heads, "d_out // num_heads")}


def mask_names(spec, case):
    """The buffers that hold a causal mask."""
    if spec.kind == "wrapper":
        return tuple(f"heads.{i}.mask" for i in range(case["num_heads"]))
    return ("mask",) if spec.kind in ("causal", "multihead") else ()


def module_input(spec, case, seed_offset=0):
    """(num_tokens, d_in) or (b, num_tokens, d_in) uniform values, rebuilt identically by probe and judge."""
    shape = ((case["batch"],) if spec.batched else ()) + (case["num_tokens"], case["d_in"])
    return rand(case["seed"] + seed_offset, *shape, dtype=DTYPES[case["dtype"]])


def probe_structure(spec, namespace, case):
    module = build(spec, namespace, case)
    attributes = {}
    for name in promised_attributes(spec, case):
        value = getattr(module, name, None)
        attributes[name] = {"type": type(value).__name__, "value": value if isinstance(value, int | float) else None}
    # Duplicates kept: heads repeated in a ModuleList ([head] * n) still show every name (the wrapper check names that).
    data = {"parameters": {name: list(p.shape) for name, p in module.named_parameters(remove_duplicate=False)}}
    output = module(module_input(spec, case))
    if not isinstance(output, torch.Tensor):
        data["output_type"] = type(output).__module__ + "." + type(output).__name__
    else:
        data["output_shape"], data["output_dtype"] = list(output.shape), dtype_name(output.dtype)
    data["attributes"] = attributes
    return data


def exposing_weights(spec, case):
    """{parameter name: value} that make the output spell out each head's attention weights (see above).

    Each head gets its own self-score, so heads that a forward pass mixes up do not look alike.
    """
    tokens = case["num_tokens"]
    eye = torch.eye(tokens)
    zeros, ones = torch.zeros(1, tokens), torch.ones(1, tokens)

    def head(index):
        # The scores are divided by sqrt(head_dim) = sqrt(tokens + 1).
        scale = SELF_SCORE * (1 + index / 2) * (tokens + 1) ** 0.5
        return {"W_query.weight": torch.cat([eye * scale, zeros]), "W_key.weight": torch.cat([eye, zeros]),
                "W_value.weight": torch.cat([eye, ones])}  # each (tokens + 1, tokens)

    heads = [head(index) for index in range(head_count(spec, case))]
    if spec.kind == "wrapper":
        return {f"heads.{i}.{name}": value for i, weights in enumerate(heads) for name, value in weights.items()}
    if spec.kind == "multihead":
        stacked = {name: torch.cat([weights[name] for weights in heads]) for name in heads[0]}
        d_out = case["d_out"]
        return {**stacked, "out_proj.weight": torch.eye(d_out), "out_proj.bias": torch.zeros(d_out)}
    return heads[0]


def exposing_module(spec, namespace, case, dropout):
    """The student's module with the exposing weights, and every other bias (one qkv_bias=False should not have)
    at zero: the structure check counts a stray bias, this check looks at dropout alone."""
    module = build(spec, namespace, case, dropout)
    parameters = dict(module.named_parameters(remove_duplicate=False))
    weights = exposing_weights(spec, case)
    with torch.no_grad():
        for name, value in weights.items():
            if name not in parameters or tuple(parameters[name].shape) != tuple(value.shape):
                raise ProbeError("contract.missing_parameter", name=name)
            parameters[name].copy_(value)
        for name, parameter in parameters.items():
            if name.endswith(".bias") and name not in weights:
                parameter.zero_()
    return module


def one_hot_tokens(case):
    return torch.eye(case["num_tokens"]).expand(case["batch"], -1, -1).clone()


def probe_modes(spec, namespace, case):
    dropped = exposing_module(spec, namespace, case, case["p"])
    without = exposing_module(spec, namespace, case, 0.0)
    data = {}
    # nn.Dropout draws from the global RNG: a different seed for every call. A fresh input every time, in case
    # forward changes it in place.
    for key, module, train, seed_offset in (("train", dropped, True, 1), ("eval", dropped, False, 2),
                                            ("eval_again", dropped, False, 3), ("no_dropout", without, False, 4)):
        module.train(train)
        with seeded(case["seed"] + seed_offset), torch.no_grad():
            data[key] = plain(module(one_hot_tokens(case)))
    return data


def probe_device_kind(requested="auto"):
    """A real GPU when there is one, else PyTorch's shape-only meta device (a plain-attribute mask stays behind)."""
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "meta"


def tensor_at(module, name):
    """The tensor a dotted attribute path names (heads.0.mask), or None."""
    value = module
    for part in name.split("."):
        value = value[int(part)] if part.isdigit() and hasattr(value, "__getitem__") else getattr(value, part, None)
        if value is None:
            return None
    return value if isinstance(value, torch.Tensor) else None


def probe_device(spec, namespace, case):
    """Plain facts only: where each mask is and what it is, dtypes after .to(float64), forward on the device."""
    module = build(spec, namespace, case)
    masks = mask_names(spec, case)
    data = {
        "masks": {name: tensor_at(module, name) is not None for name in masks},
        "buffers": [name for name, _ in module.named_buffers(remove_duplicate=False)],
        "parameters": [name for name, _ in module.named_parameters(remove_duplicate=False)],
        "state_dict": list(module.state_dict()),
    }
    # The dtype move happens on the CPU, then back (MPS has no float64).
    module.to(torch.float64)
    data["mask_dtypes"] = {name: dtype_name(tensor_at(module, name).dtype) for name in masks if data["masks"][name]}
    module.to(torch.float32)
    x = module_input(spec, {**case, "dtype": "float32"})
    with torch.no_grad():  # forward must run on the CPU first: if it does not, its exception is the answer here too
        module(x)
    device = probe_device_kind(case["device"])
    module.to(device)
    data["device"] = torch.device(device).type
    data["mask_devices"] = {name: tensor_at(module, name).device.type for name in masks if data["masks"][name]}
    try:
        with torch.no_grad(), DeviceMixWatch() as watch:
            output = module(x.to(device))
    except Exception as exc:  # noqa: BLE001 - a failure after the move is the finding, not a crash
        data["forward_error"] = describe_exception(exc)
    else:
        data["mixed"] = watch.mixed[:5]
        if isinstance(output, torch.Tensor):
            data["output_shape"], data["output_device"] = list(output.shape), output.device.type
    return data


def future_changed(spec, case, x):
    """x with every token after `position` replaced by other values."""
    changed = x.clone()
    start = case["position"] + 1
    changed[..., start:, :] = module_input(spec, case, seed_offset=7)[..., start:, :]
    return changed


def probe_properties(spec, namespace, case):
    module = build(spec, namespace, case)
    x = module_input(spec, case)
    kept = x.clone()
    output = module(x)
    data = {"output": plain(output), "input_after": plain(x)}
    with torch.no_grad():
        if spec.causal:
            data["future_changed"] = plain(module(future_changed(spec, case, kept)))
        if spec.batched:
            data["one_by_one"] = [plain(module(kept[i:i + 1].clone())) for i in range(case["batch"])]
    if output.requires_grad:
        # A random mix of the outputs: a plain sum could cancel by accident.
        (output * rand(case["loss_seed"], *output.shape, dtype=output.dtype)).sum().backward()
    data["gradients"] = {name: None if p.grad is None else float(p.grad.abs().sum())
                         for name, p in module.named_parameters(remove_duplicate=False)}
    return data


SPECS = (
    ModuleSpec("self_attention_v1", "SelfAttention_v1", "v1", {"structure": 0.5, "device": 0.5, "properties": 1}),
    ModuleSpec("self_attention_v2", "SelfAttention_v2", "v2", {"structure": 0.5, "device": 0.5, "properties": 1}),
    ModuleSpec("causal_attention", "CausalAttention", "causal",
               {"structure": 1, "modes": 2, "device": 1.5, "properties": 1.5}),
    ModuleSpec("mha_wrapper", "MultiHeadAttentionWrapper", "wrapper",
               {"structure": 0.5, "modes": 1, "device": 0.5, "properties": 0.5}),
    ModuleSpec("multi_head_attention", "MultiHeadAttention", "multihead",
               {"structure": 1, "modes": 1, "device": 1, "properties": 1}),
)


SPECS_BY_EXERCISE = {spec.exercise: spec for spec in SPECS}



CONTRACT_PROBES = {"structure": probe_structure, "modes": probe_modes, "device": probe_device,
                   "properties": probe_properties}


def contract_probe(property_name, exercise_id, namespace, case):
    """The contract's `property_name` probe of the module exercise `exercise_id`.

    Both are plain strings bound by the check (functools.partial), so the grading child is told which probe to
    run by name, never handed a function.
    """
    return CONTRACT_PROBES[property_name](SPECS_BY_EXERCISE[exercise_id], namespace, case)
