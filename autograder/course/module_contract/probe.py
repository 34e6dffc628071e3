"""Probes of the module contract of every attention class (structure, modes, device, properties, state): run the
student's objects on a case and return plain data. Imports no reference, judge or declaration: the grading child
holds it."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NotRequired, TypedDict

import torch
from torch import Tensor, nn

from autograder.checking.probing import (
    ModuleGradients,
    ProbeError,
    describe_exception,
    dtype_name,
    lookup,
    module_gradients,
    plain,
    rand,
    seeded,
    state_of,
)
from autograder.checking.torch_recorders import DeviceMixWatch, parameter_read_in_graph
from autograder.course.shared.inputs import DTYPES, probe_device_kind
from autograder.course.shared.loading import load_case_weights
from autograder.course.shared.records import ExceptionRecord, Namespace, State

__all__ = [
    "ContractCase", "ContractDeviceRecord", "ContractRecord", "HeadLayout", "ModesRecord", "ModuleSpec",
    "PropertiesRecord", "SPECS", "SPECS_BY_EXERCISE", "StateRecord", "StructureRecord", "build",
    "constructor_arguments", "contract_mix", "contract_probe", "exposing_module", "exposing_weights", "head_count",
    "mask_names", "module_input", "one_hot_tokens", "probe_device", "probe_device_kind", "probe_modes",
    "promised_attributes",
]


class ContractCase(TypedDict):
    seed: int
    init_seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    num_heads: int
    qkv_bias: bool | None  # None: the constructor's default
    dtype: str
    p: NotRequired[float]  # modes: the dropout rate
    device: NotRequired[str]
    position: NotRequired[int]  # properties: the token whose future is changed
    loss_seed: NotRequired[int]
    lengths: NotRequired[list[int]]  # state: the num_tokens of successive calls on one module


class StructureRecord(TypedDict, total=False):
    parameters: dict[str, list[int]]
    output_type: str
    output_shape: list[int]
    output_dtype: str
    attributes: dict[str, dict[str, Any]]
    identical_heads: list[int]  # stacked heads: the heads (other modules than head 0) that start with its weights
    repeated_heads: list[list[int]]  # stacked heads: [head, the earlier head it is the very module of] (heads * n)
    heads_type: str  # stacked heads: the type of the module's `heads` ("ModuleList", "list", "NoneType", ...)
    heads_held: int  # stacked heads: how many `heads` holds, where it is a ModuleList, list or tuple


class ModesRecord(TypedDict):
    train: Tensor
    eval: Tensor
    eval_again: Tensor
    no_dropout: Tensor
    # The rate of every nn.Dropout the module built for the case's p holds: a module that passes its rate on to the
    # wrong argument drops at another rate, which is not "never applied" (the judge names nothing then).
    rates: NotRequired[list[float]]
    # Whether, in eval mode without dropout, sample 0's output changes when the other samples of the batch change:
    # the training-mode output of such a module mixes the samples' dropout draws, so where its dropout acts cannot
    # be read from it (the properties check names the mixing; issue 58).
    samples_mixed: NotRequired[bool]


class StateRecord(TypedDict, total=False):
    """Successive calls on one module against fresh modules, its state around them, and its state_dict reloaded."""

    outputs: list[Tensor | None]  # one per call; None where the call raised
    call_errors: list[ExceptionRecord | None]
    fresh_outputs: list[Tensor]  # each call's input on a freshly built module
    repeated: Tensor  # the first call's input once more, last
    before: State  # parameters and buffers before the first call
    after: State  # and after the calls
    parameter_names: list[str]  # which of its state are parameters (the rest are buffers)
    reload_error: ExceptionRecord
    reloaded: Tensor  # the first call's input on a fresh module that loaded state_dict() after the calls


class ContractDeviceRecord(TypedDict, total=False):
    masks: dict[str, bool]
    buffers: list[str]
    parameters: list[str]
    state_dict: list[str]
    mask_dtypes: dict[str, str]
    device: str
    mask_devices: dict[str, str]
    forward_error: ExceptionRecord
    mixed: list[str]  # the ops that mixed a CPU tensor into work on the device, before any failure too
    to_cpu: NotRequired[list[str]]  # the ops that copied a tensor of forward's off the device onto the CPU
    mixed_created: NotRequired[list[str]]  # those of `mixed` whose CPU tensor was created during the call
    mixed_kept: NotRequired[list[str]]  # those of `mixed` whose CPU tensor the module kept as a plain attribute
    output_shape: list[int]
    output_device: str
    output_type: str  # what forward returned on the device when it is not a tensor
    heads_type: str  # stacked heads: the type of the module's `heads`
    heads_held: int  # stacked heads: how many `heads` holds, where it is a ModuleList, list or tuple


class PropertiesRecord(TypedDict, total=False):
    output: Tensor
    input_after: Tensor
    future_changed: Tensor
    one_by_one: list[Tensor]
    # One backward pass through a fresh module (probe_gradients): what each parameter and the input got. The judge
    # compares them with the reference's for the same weights, read before the call.
    backward: ModuleGradients
    gradients: dict[str, float | None]  # each parameter's, summed in size (None: none reached it)
    # For each parameter no gradient reached (None or 0): whether the output changes when its values change. False:
    # the output does not use it; True: it is used, and the graph is cut (a detach, .data, no_grad, requires_grad off).
    output_depends: dict[str, bool]
    # For each parameter of output_depends that is True: whether forward reads it inside autograd's graph (an op that
    # read the parameter itself returned a tensor autograd recorded), so that the cut is further down, not at it.
    read_in_graph: dict[str, bool]
    rates: list[float]  # every nn.Dropout's rate in a module built with dropout 0 (see ModesRecord)


SELF_SCORE = 2.0  # a token's score with itself after the scaling, in the dropout probe; every other score is 0


# Sizes a constructor may store as ints: {attribute: (its value for a case, how the given __init__ computes it)}.
SIZE_ATTRIBUTES: dict[str, tuple[Callable[[ContractCase], int], str]] = {
    "d_out": (lambda case: case["d_out"], "d_out"),
    "num_heads": (lambda case: case["num_heads"], "num_heads"),
    "head_dim": (lambda case: case["d_out"] // case["num_heads"], "d_out // num_heads"),
}


@dataclass(frozen=True)
class HeadLayout:
    """How a module holds its heads; every question the contract asks about heads is answered here.

    `many`: the constructor takes num_heads. `stacked`: the heads are num_heads modules in `heads` (an
    nn.ModuleList), each with its own d_out, outputs side by side; otherwise one set of projections holds every
    head (d_out = num_heads * head_dim, split into heads by the forward pass).
    """

    many: bool
    stacked: bool

    def __post_init__(self) -> None:
        if self.stacked and not self.many:
            raise ValueError("stacked heads are num_heads modules: a stacked layout needs many=True")

    def count(self, case: ContractCase) -> int:
        return case["num_heads"] if self.many else 1

    def groups(self, case: ContractCase) -> tuple[tuple[str, int], ...]:
        """(attribute prefix, heads it holds) of each set of projections: ("heads.0.", 1)... or ("", count)."""
        if self.stacked:
            return tuple((f"heads.{index}.", 1) for index in range(case["num_heads"]))
        return (("", self.count(case)),)

    def d_out(self, head_dim: int, num_heads: int) -> int:
        """The constructor's d_out for heads of head_dim features: per head when stacked, all heads' otherwise."""
        return head_dim if self.stacked else head_dim * num_heads

    def output_features(self, case: ContractCase) -> int:
        return case["d_out"] * (case["num_heads"] if self.stacked else 1)


ONE_HEAD = HeadLayout(many=False, stacked=False)


STACKED_HEADS = HeadLayout(many=True, stacked=True)


SPLIT_HEADS = HeadLayout(many=True, stacked=False)


@dataclass(frozen=True)
class ModuleSpec:
    """What one module exercise's class promises: its constructor, layout and behaviour, as plain fields.

    `arguments` are the book's positional constructor arguments, named as case keys ("dropout": the rate a probe
    asks for); qkv_bias=False is a keyword where `has_qkv_bias`. `raw_projections`: W_query/W_key/W_value are
    (d_in, d_out) parameters used as x @ W, not nn.Linear layers. `out_proj`: an nn.Linear(d_out, d_out) that
    always has a bias. `attributes`: sizes the constructor stores (keys of SIZE_ATTRIBUTES). `batched`: input
    (b, num_tokens, d_in), else (num_tokens, d_in). `causal`: a `mask` buffer (in each head, when stacked) hides
    the future.
    """

    exercise: str
    class_name: str
    points: dict[str, float]  # check name (structure, modes, device, properties, state) -> points
    arguments: tuple[str, ...]
    heads: HeadLayout = ONE_HEAD
    has_qkv_bias: bool = True
    raw_projections: bool = False
    out_proj: bool = False
    attributes: tuple[str, ...] = ()
    batched: bool = False
    causal: bool = False

    @property
    def has_dropout(self) -> bool:
        return "dropout" in self.arguments


def head_count(spec: "ModuleSpec", case: ContractCase) -> int:
    return spec.heads.count(case)


def build(spec: "ModuleSpec", namespace: Namespace, case: ContractCase, dropout: float = 0.0) -> nn.Module:
    """The student's class, constructed as the book does under the case's seed, in the case's dtype."""
    cls = lookup(namespace, spec.class_name)
    with seeded(case["init_seed"]):
        module = cls(*constructor_arguments(spec, case, dropout), **constructor_keywords(spec, case))
    if not isinstance(module, torch.nn.Module):
        raise ProbeError("contract.not_a_module", name=spec.class_name)
    return module.to(DTYPES[case["dtype"]])


def constructor_arguments(spec: "ModuleSpec", case: ContractCase, dropout: float = 0.0) -> tuple[Any, ...]:
    """The positional arguments of the book's constructor call."""
    # The spec's argument names are case keys (ModuleSpec's docstring).
    return tuple(dropout if name == "dropout" else case[name]  # type: ignore[literal-required]
                 for name in spec.arguments)


def constructor_keywords(spec: "ModuleSpec", case: ContractCase) -> dict[str, bool | None]:
    """qkv_bias where the constructor takes it; a case whose qkv_bias is None leaves it at the default (False)."""
    if not spec.has_qkv_bias or case.get("qkv_bias") is None:
        return {}
    return {"qkv_bias": case["qkv_bias"]}


def promised_attributes(spec: "ModuleSpec", case: ContractCase) -> dict[str, tuple[int, str]]:
    """{attribute: (value, how the given __init__ computes it)} of the sizes the constructor stores."""
    return {name: (SIZE_ATTRIBUTES[name][0](case), SIZE_ATTRIBUTES[name][1]) for name in spec.attributes}


def mask_names(spec: "ModuleSpec", case: ContractCase) -> tuple[str, ...]:
    """The buffers that hold a causal mask."""
    if not spec.causal:
        return ()
    return tuple(f"{prefix}mask" for prefix, _ in spec.heads.groups(case))


def module_input(spec: "ModuleSpec", case: ContractCase, seed_offset: int = 0) -> Tensor:
    """(num_tokens, d_in) or (b, num_tokens, d_in) uniform values, rebuilt identically by probe and judge."""
    shape = ((case["batch"],) if spec.batched else ()) + (case["num_tokens"], case["d_in"])
    return rand(case["seed"] + seed_offset, *shape, dtype=DTYPES[case["dtype"]])


def probe_structure(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> StructureRecord:
    module = build(spec, namespace, case)
    attributes: dict[str, dict[str, Any]] = {}
    for name in promised_attributes(spec, case):
        value = getattr(module, name, None)
        attributes[name] = {"type": type(value).__name__, "value": value if isinstance(value, int | float) else None}
    # Duplicates kept: heads repeated in a ModuleList ([head] * n) still show every name (the wrapper check names that).
    data: StructureRecord = {
        "parameters": {name: list(p.shape) for name, p in module.named_parameters(remove_duplicate=False)}}
    output = module(module_input(spec, case))
    if not isinstance(output, torch.Tensor):
        data["output_type"] = type(output).__module__ + "." + type(output).__name__
    else:
        data["output_shape"], data["output_dtype"] = list(output.shape), dtype_name(output.dtype)
    data["attributes"] = attributes
    if spec.heads.stacked:
        data["heads_type"] = type(getattr(module, "heads", None)).__name__
        if (held := heads_held(module)) is not None:
            data["heads_held"] = held
    if spec.heads.stacked and isinstance(getattr(module, "heads", None), torch.nn.ModuleList) and module.heads:
        data["identical_heads"] = identical_heads(module.heads)  # type: ignore[arg-type]  # a ModuleList: just above
        data["repeated_heads"] = repeated_heads(module.heads)  # type: ignore[arg-type]  # the same ModuleList
    return data


def repeated_heads(heads: Sequence[nn.Module]) -> list[list[int]]:
    """[head, earlier head] for each head that is the very module an earlier one is (a list repeated: [head] * n)."""
    first: dict[int, int] = {}
    repeated = []
    for index, head in enumerate(heads):
        earlier = first.setdefault(id(head), index)
        if earlier != index:
            repeated.append([index, earlier])
    return repeated


def identical_heads(heads: Sequence[nn.Module]) -> list[int]:
    """The indices of the heads, other modules than head 0, whose parameters all equal head 0's."""
    first = dict(heads[0].named_parameters())
    identical = []
    for index, head in enumerate(heads):
        if index == 0 or head is heads[0]:
            continue  # one module repeated is another mistake (repeated_heads)
        own = dict(head.named_parameters())
        if own.keys() == first.keys() and all(torch.equal(own[name], first[name]) for name in own):
            identical.append(index)
    return identical


def exposing_weights(spec: "ModuleSpec", case: ContractCase) -> dict[str, Tensor]:
    """{parameter name: value} that make the output spell out each head's attention weights (see above).

    Each head gets its own self-score, so heads that a forward pass mixes up do not look alike.
    """
    tokens = case["num_tokens"]
    eye = torch.eye(tokens)
    zeros, ones = torch.zeros(1, tokens), torch.ones(1, tokens)

    def head(index: int) -> dict[str, Tensor]:
        # The scores are divided by sqrt(head_dim) = sqrt(tokens + 1).
        scale = SELF_SCORE * (1 + index / 2) * (tokens + 1) ** 0.5
        return {"W_query.weight": torch.cat([eye * scale, zeros]), "W_key.weight": torch.cat([eye, zeros]),
                "W_value.weight": torch.cat([eye, ones])}  # each (tokens + 1, tokens)

    weights: dict[str, Tensor] = {}
    first = 0
    for prefix, count in spec.heads.groups(case):
        heads = [head(index) for index in range(first, first + count)]
        first += count
        # One set of projections holds its heads' rows one after the other.
        weights.update({f"{prefix}{name}": torch.cat([one[name] for one in heads]) for name in heads[0]})
    if spec.out_proj:
        d_out = case["d_out"]
        weights.update({"out_proj.weight": torch.eye(d_out), "out_proj.bias": torch.zeros(d_out)})
    return weights


def exposing_module(spec: "ModuleSpec", namespace: Namespace, case: ContractCase, dropout: float) -> nn.Module:
    """The student's module with the exposing weights, and every other bias (one qkv_bias=False should not have)
    at zero: the structure check counts a stray bias, this check looks at dropout alone."""
    module = build(spec, namespace, case, dropout)
    parameters = dict(module.named_parameters(remove_duplicate=False))
    weights = exposing_weights(spec, case)
    with torch.no_grad():
        for name, value in weights.items():
            if name not in parameters and name.startswith("heads.") and getattr(module, "heads", None) is None \
                    and parameters:
                # No `heads` at all, yet parameters elsewhere: the structure check's own words (judge's heads_elsewhere)
                raise ProbeError("mha_wrapper.no_heads")
            if name not in parameters or tuple(parameters[name].shape) != tuple(value.shape):
                raise ProbeError("contract.missing_parameter", name=name)
            parameters[name].copy_(value)
        for name, parameter in parameters.items():
            if name.endswith(".bias") and name not in weights:
                parameter.zero_()
    return module


def one_hot_tokens(case: ContractCase) -> Tensor:
    return torch.eye(case["num_tokens"]).expand(case["batch"], -1, -1).clone()


def probe_modes(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> ModesRecord:
    def run(dropout: float, train: bool, seed_offset: int) -> Tensor:
        # A fresh module and input for every call: a forward that changes the module's state or its input is the
        # state and properties checks' to name, not a dropout fault. nn.Dropout draws from the global RNG: a
        # different seed for every call.
        module = exposing_module(spec, namespace, case, dropout).train(train)
        with seeded(case["seed"] + seed_offset), torch.no_grad():
            return plain(module(one_hot_tokens(case)))

    return {"train": run(case["p"], True, 1), "eval": run(case["p"], False, 2),
            "eval_again": run(case["p"], False, 3), "no_dropout": run(0.0, False, 4),
            "rates": dropout_rates(build(spec, namespace, case, case["p"])),
            "samples_mixed": samples_mixed(spec, namespace, case)}


def samples_mixed(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> bool:
    """Whether sample 0's eval-mode output (no dropout) differs between a batch whose other samples hold the tokens
    in reverse order and sample 0 run alone: True only where both calls return tensors and the two differ."""
    if case["batch"] < 2:
        return False
    module = exposing_module(spec, namespace, case, 0.0).eval()
    x = one_hot_tokens(case)
    x[1:] = x[1:].flip(-2)
    try:
        with seeded(case["seed"] + 5), torch.no_grad():
            together, alone = module(x), module(x[:1].clone())
    except Exception:  # noqa: BLE001 - a forward that raises here is the other checks' to name
        return False
    if not isinstance(together, Tensor) or not isinstance(alone, Tensor) or together.dim() == 0:
        return False
    return alone.shape != together[:1].shape or not torch.allclose(
        plain(alone), plain(together[:1]), rtol=1e-4, atol=1e-6, equal_nan=True)


def dropout_rates(module: nn.Module) -> list[float]:
    """The rate of every nn.Dropout in `module` (a rate that is no number reads as nan: it is no rate asked for)."""
    rates = []
    for layer in module.modules():
        if isinstance(layer, nn.Dropout):
            try:
                rates.append(float(layer.p))
            except (TypeError, ValueError):
                rates.append(float("nan"))
    return rates


def heads_held(module: nn.Module) -> int | None:
    """How many heads the module's `heads` holds, where it is a ModuleList, list or tuple (a count read from the
    module: one head too few is that, not heads left unregistered); None for anything else."""
    heads = getattr(module, "heads", None)
    return len(heads) if isinstance(heads, nn.ModuleList | list | tuple) else None


def tensor_at(module: nn.Module, name: str) -> Tensor | None:
    """The tensor a dotted attribute path names (heads.0.mask), or None (a head index past the end of a ModuleList,
    list or tuple too: the path the probe asks for is the probe's, the missing head the module's)."""
    value: Any = module
    for part in name.split("."):
        if part.isdigit() and isinstance(value, nn.ModuleList | list | tuple) and int(part) >= len(value):
            return None
        value = value[int(part)] if part.isdigit() and hasattr(value, "__getitem__") else getattr(value, part, None)
        if value is None:
            return None
    return value if isinstance(value, torch.Tensor) else None


def probe_device(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> ContractDeviceRecord:
    """Plain facts only: where each mask is and what it is, dtypes after .to(float64), forward on the device."""
    module = build(spec, namespace, case)
    masks = mask_names(spec, case)
    data: ContractDeviceRecord = {
        "masks": {name: tensor_at(module, name) is not None for name in masks},
        "buffers": [name for name, _ in module.named_buffers(remove_duplicate=False)],
        "parameters": [name for name, _ in module.named_parameters(remove_duplicate=False)],
        "state_dict": list(module.state_dict()),
    }
    if spec.heads.stacked:
        data["heads_type"] = type(getattr(module, "heads", None)).__name__
        if (held := heads_held(module)) is not None:
            data["heads_held"] = held
    # The dtype move happens on the CPU, then back (MPS has no float64).
    module.to(torch.float64)
    # A mask found (data["masks"]) is a tensor: tensor_at is None only for the others.
    data["mask_dtypes"] = {name: dtype_name(tensor_at(module, name).dtype)  # type: ignore[union-attr]
                           for name in masks if data["masks"][name]}
    module.to(torch.float32)
    x = module_input(spec, {**case, "dtype": "float32"})
    with torch.no_grad():  # forward must run on the CPU first: if it does not, its exception is the answer here too
        module(x)
    device = probe_device_kind(case["device"])
    module.to(device)
    data["device"] = torch.device(device).type
    data["mask_devices"] = {name: tensor_at(module, name).device.type  # type: ignore[union-attr]  # found: a tensor
                            for name in masks if data["masks"][name]}
    watch = DeviceMixWatch().kept_before(plain_tensor_attributes(module))
    try:
        with torch.no_grad(), watch:
            output = module(x.to(device))
    except Exception as exc:  # noqa: BLE001 - a failure after the move is the finding, not a crash
        data["forward_error"] = describe_exception(exc)
    else:
        if isinstance(output, torch.Tensor):
            data["output_shape"], data["output_device"] = list(output.shape), output.device.type
        else:  # said as the value checks say it: one cause with theirs (issue 58)
            data["output_type"] = type(output).__module__ + "." + type(output).__name__
    data["mixed"] = watch.mixed[:5]  # the op that failed is noted before it runs: a mix that raised is seen too
    data["to_cpu"] = watch.to_cpu[:5]
    data["mixed_created"] = watch.mixed_created[:5]
    data["mixed_kept"] = watch.mixed_kept[:5]
    return data


def plain_tensor_attributes(module: nn.Module) -> list[Tensor]:
    """The tensors the module and its submodules hold as plain attributes, neither parameters nor buffers: `.to()`
    leaves them where they are. Read with vars(), which runs none of the student's code."""
    return [value for sub in module.modules() for value in vars(sub).values()
            if isinstance(value, Tensor) and not isinstance(value, nn.Parameter)]


def future_changed(spec: "ModuleSpec", case: ContractCase, x: Tensor) -> Tensor:
    """x with every token after `position` replaced by other values."""
    changed = x.clone()
    start = case["position"] + 1
    changed[..., start:, :] = module_input(spec, case, seed_offset=7)[..., start:, :]
    return changed


def probe_properties(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> PropertiesRecord:
    module = build(spec, namespace, case)
    x = module_input(spec, case)
    kept = x.clone()
    output = module(x)
    data: PropertiesRecord = {"output": plain(output), "input_after": plain(x)}
    with torch.no_grad():
        # Each comparison on a fresh module: a forward that changes the module's state is the state check's to name.
        if spec.causal:
            data["future_changed"] = plain(build(spec, namespace, case)(future_changed(spec, case, kept)))
        if spec.batched:
            data["one_by_one"] = [plain(build(spec, namespace, case)(kept[i:i + 1].clone()))
                                  for i in range(case["batch"])]
    data.update(probe_gradients(spec, namespace, case))
    data["output_depends"] = {name: output_depends_on(spec, namespace, case, name, kept, output)
                              for name, size in data["gradients"].items() if not size}
    data["read_in_graph"] = {name: read_in_graph(spec, namespace, case, name, kept)
                             for name, depends in data["output_depends"].items() if depends}
    data["rates"] = dropout_rates(module)
    return data


def probe_gradients(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> PropertiesRecord:
    """One backward pass through a fresh module on the case's input (probing.module_gradients) for a random mix of
    the outputs (a plain sum could cancel by accident): its parameters before the call, and what reached each of
    them and the input. The student kit loads its stored weights first."""
    module = load_case_weights(build(spec, namespace, case), case)
    backward = module_gradients(module, module_input(spec, case), module, partial(contract_mix, case))
    sizes = {name: None if (gradient := backward["parameters"].get(name)) is None else float(gradient.abs().sum())
             for name in backward["state"]}
    return {"backward": backward, "gradients": sizes}


def contract_mix(case: ContractCase, output: Tensor) -> Tensor:
    """The random mix of a module's outputs whose gradients the properties check compares; the judge's side
    rebuilds it from the case."""
    return rand(case["loss_seed"], *output.shape, dtype=output.dtype)


def output_depends_on(spec: "ModuleSpec", namespace: Namespace, case: ContractCase, name: str, x: Tensor,
                      output: Any) -> bool:
    """Whether the output of a fresh module changes when parameter `name` is moved away from its values: read from
    what the output does, not from how the student wrote it, so an unused parameter is never called detached."""
    module = build(spec, namespace, case)
    parameter = dict(module.named_parameters(remove_duplicate=False))[name]
    with torch.no_grad():
        parameter.add_(rand(case["loss_seed"] + 1, *parameter.shape, dtype=parameter.dtype) + 1.0)
        moved = module(x.clone())
    return not isinstance(moved, Tensor) or not isinstance(output, Tensor) or moved.shape != output.shape or not \
        torch.allclose(moved.detach(), output.detach(), rtol=1e-4, atol=1e-6, equal_nan=True)


def read_in_graph(spec: "ModuleSpec", namespace: Namespace, case: ContractCase, name: str, x: Tensor) -> bool:
    """Whether a fresh module's forward, with gradients on, reads parameter `name` itself in an op that returns a
    tensor autograd recorded (parameter_reads): the parameter then enters the graph, and a gradient that never
    reaches it was cut from a tensor computed from it, not from the parameter (a detached copy, its .data, a block
    with gradients off read the parameter outside the graph)."""
    module = build(spec, namespace, case)
    parameter = dict(module.named_parameters(remove_duplicate=False))[name]
    with torch.enable_grad():
        return parameter_read_in_graph(module, x.clone(), parameter)


def probe_state(spec: "ModuleSpec", namespace: Namespace, case: ContractCase) -> StateRecord:
    """Calls of several lengths on one module in eval mode, each against a fresh module; its parameters and
    buffers before and after; its state_dict after the calls loaded into a fresh module built under another seed."""
    module = build(spec, namespace, case).eval()
    inputs = [module_input(spec, {**case, "num_tokens": tokens}, seed_offset=index)
              for index, tokens in enumerate(case["lengths"])]
    data: StateRecord = {"before": state_of(module), "outputs": [], "call_errors": [],
                         "parameter_names": [name for name, _ in module.named_parameters(remove_duplicate=False)]}
    with torch.no_grad():
        for index, x in enumerate(inputs):
            try:
                data["outputs"].append(plain(module(x.clone())))
                data["call_errors"].append(None)
            except Exception as exc:  # noqa: BLE001 - a later call failing is the finding
                if index == 0:
                    raise  # the first call of a fresh module: the value checks report it
                data["outputs"].append(None)
                data["call_errors"].append(describe_exception(exc))
        try:
            data["repeated"] = plain(module(inputs[0].clone()))
        except Exception:  # noqa: BLE001 - the later calls' errors already say what broke
            pass
        data["fresh_outputs"] = [plain(build(spec, namespace, case).eval()(x.clone())) for x in inputs]
    data["after"] = state_of(module)
    reloaded = build(spec, namespace, {**case, "init_seed": case["init_seed"] + 1}).eval()
    try:
        reloaded.load_state_dict(module.state_dict())
        with torch.no_grad():
            data["reloaded"] = plain(reloaded(inputs[0].clone()))
    except Exception as exc:  # noqa: BLE001 - a state_dict that no longer loads is the finding
        data["reload_error"] = describe_exception(exc)
    return data


# The constructors' positional arguments, as the book calls them.
SIZES = ("d_in", "d_out")


CAUSAL = (*SIZES, "context_length", "dropout")


MULTI_HEAD = (*CAUSAL, "num_heads")


SPECS = (
    ModuleSpec("self_attention_v1", "SelfAttention_v1",
               {"structure": 0.5, "device": 0.5, "properties": 0.5, "state": 0.5},
               SIZES, has_qkv_bias=False, raw_projections=True),
    ModuleSpec("self_attention_v2", "SelfAttention_v2",
               {"structure": 0.5, "device": 0.5, "properties": 0.5, "state": 0.5}, SIZES),
    ModuleSpec("causal_attention", "CausalAttention",
               {"structure": 1, "modes": 2, "device": 1.5, "properties": 1, "state": 0.5},
               CAUSAL, batched=True, causal=True),
    ModuleSpec("mha_wrapper", "MultiHeadAttentionWrapper",
               {"structure": 0.5, "modes": 0.5, "device": 0.5, "properties": 0.5, "state": 0.5},
               MULTI_HEAD, heads=STACKED_HEADS, batched=True, causal=True),
    ModuleSpec("multi_head_attention", "MultiHeadAttention",
               {"structure": 1, "modes": 1, "device": 1, "properties": 0.5, "state": 0.5},
               MULTI_HEAD, heads=SPLIT_HEADS, out_proj=True, attributes=("d_out", "num_heads", "head_dim"),
               batched=True, causal=True),
)


SPECS_BY_EXERCISE = {spec.exercise: spec for spec in SPECS}


ContractRecord = StructureRecord | ModesRecord | ContractDeviceRecord | PropertiesRecord | StateRecord


CONTRACT_PROBES: dict[str, Callable[[ModuleSpec, Namespace, ContractCase], ContractRecord]] = {
    "structure": probe_structure, "modes": probe_modes, "device": probe_device,
    "properties": probe_properties, "state": probe_state}


def contract_probe(property_name: str, exercise_id: str, namespace: Namespace, case: ContractCase) -> ContractRecord:
    """The contract's `property_name` probe of the module exercise `exercise_id`.

    Both are plain strings bound by the check (functools.partial), so the grading child is told which probe to
    run by name, never handed a function.
    """
    return CONTRACT_PROBES[property_name](SPECS_BY_EXERCISE[exercise_id], namespace, case)
