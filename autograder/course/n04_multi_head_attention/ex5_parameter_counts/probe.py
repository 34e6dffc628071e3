"""Probes of count_parameters (book exercise 3.3): run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

import torch
from torch import nn
from torch.nn import init

from autograder.checking.deferred_imports import torch_imports_deferred
from autograder.checking.probing import as_count, lookup
from autograder.course.shared.records import Namespace

__all__ = ["CountCase", "CountRecord", "ModuleNode", "counted_module", "probe_count"]

# A module to count, as plain data (a case is stored and shown, never a live object). Each node is a dict with a
# "kind":
#   "linear" (d_in, d_out, bias), "layer_norm" (size), "embedding" (num, dim), "dropout": torch's own layers;
#   "module": a bare nn.Module with "parameters" [[name, shape or "=path", frozen]] registered on itself (an
#       nn.Parameter attribute; "=path" registers the parameter at that path again: one tensor, two names),
#       "buffers" [[name, shape, persistent]] and "children" [[name, node]];
#   "module_list" ("items" [node]), "module_dict" ("items" [[name, node]]), "parameter_list" ("shapes" [shape]);
#   "same" ("path"): the module already built at that path, registered again (one layer shared by two places).
# Any node may say "frozen": true: its parameters do not require grad.
ModuleNode = dict[str, Any]


class CountCase(TypedDict):
    """What the module is (a key of the exercise's module descriptions), the module itself, and witnesses: small
    modules of every kind, whose counts tell one wrong way of counting from another."""

    about: str
    module: ModuleNode
    witnesses: list[ModuleNode]


class CountRecord(TypedDict):
    """The count of the case's module, and of each witness (None where the student's function failed on it)."""

    count: int
    witness_counts: list[int | None]


META = torch.device("meta")  # real shapes, no memory: a count needs no values
# The initialisers torch's layers call from reset_parameters (Linear, Embedding, LayerNorm). A meta tensor has no
# values for them to set, yet each runs through Python decompositions there: 0.1 ms for a Linear, 0.5 ms for an
# Embedding, most of a check that builds some 200 modules.
INITIALISERS = ("kaiming_uniform_", "uniform_", "normal_", "ones_", "zeros_")


def _parameter(shape: list[int]) -> nn.Parameter:
    return nn.Parameter(torch.empty(*shape, device=META))


def _layer(node: ModuleNode, path: str, made: dict[str, Any]) -> nn.Module:
    kind = node["kind"]
    if kind == "linear":
        return nn.Linear(node["d_in"], node["d_out"], bias=node["bias"], device=META)
    if kind == "layer_norm":
        return nn.LayerNorm(node["size"], device=META)
    if kind == "embedding":
        return nn.Embedding(node["num"], node["dim"], device=META)
    if kind == "dropout":
        return nn.Dropout(0.1)
    if kind == "same":
        shared: nn.Module = made[node["path"]]
        return shared
    if kind == "module_list":
        return nn.ModuleList([_built(item, f"{path}{index}", made) for index, item in enumerate(node["items"])])
    if kind == "module_dict":
        return nn.ModuleDict({name: _built(item, f"{path}{name}", made) for name, item in node["items"]})
    if kind == "parameter_list":
        return nn.ParameterList([_parameter(shape) for shape in node["shapes"]])
    if kind != "module":
        raise ValueError(f"unknown kind of module: {kind!r}")
    module = nn.Module()
    for name, shape, frozen in node.get("parameters", ()):
        parameter: nn.Parameter = made[shape[1:]] if isinstance(shape, str) else _parameter(shape)
        if not isinstance(shape, str):
            parameter.requires_grad_(not frozen)
        module.register_parameter(name, parameter)
    for name, shape, persistent in node.get("buffers", ()):
        module.register_buffer(name, torch.empty(*shape, device=META), persistent=persistent)
    for name, child in node.get("children", ()):
        module.add_module(name, _built(child, f"{path}{name}", made))
    return module


def _built(node: ModuleNode, path: str, made: dict[str, Any]) -> nn.Module:
    """The node's module; `made` gains it and its parameters under their dotted paths (for "same" and "=path")."""
    module = _layer(node, f"{path}." if path else "", made)
    if node.get("frozen"):
        module.requires_grad_(False)
    made[path] = module
    for name, parameter in module.named_parameters():
        made.setdefault(f"{path}.{name}" if path else name, parameter)
    return module


def counted_module(node: ModuleNode) -> nn.Module:
    """The module a case describes, on the meta device (built there without torch._dynamo's or sympy's import:
    autograder.checking.deferred_imports, and without initialising values it does not have)."""
    with torch_imports_deferred(), _meta_tensors_not_initialised():
        return _built(node, "", {})


@contextlib.contextmanager
def _meta_tensors_not_initialised() -> Iterator[None]:
    """While open, torch.nn.init's initialisers return a meta tensor as it is (it has nothing to fill); any other
    tensor (a thread of the student's, say) is initialised by the function that was there before."""
    saved = {name: getattr(init, name) for name in INITIALISERS}
    for name, initialiser in saved.items():
        setattr(init, name, _skipping_meta(initialiser))
    try:
        yield
    finally:
        for name, initialiser in saved.items():
            setattr(init, name, initialiser)


def _skipping_meta(initialiser: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    def initialise(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return tensor if tensor.is_meta else initialiser(tensor, *args, **kwargs)

    return initialise


def _witness_count(count_parameters: Callable[[nn.Module], object], node: ModuleNode) -> int | None:
    try:
        return as_count(count_parameters(counted_module(node)))
    except Exception:  # noqa: BLE001 - a witness only backs a diagnosis; the case's own module is what is graded
        return None


def probe_count(namespace: Namespace, case: CountCase) -> CountRecord:
    count_parameters = lookup(namespace, "count_parameters")
    count = as_count(count_parameters(counted_module(case["module"])))
    return {"count": count, "witness_counts": [_witness_count(count_parameters, node) for node in case["witnesses"]]}
