"""Probes of count_parameters (book exercise 3.3): run the student's objects on a case and return plain data. Imports no
reference, judge or declaration: the grading child holds it."""

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypedDict

import torch
from torch import nn
from torch.nn import init

from autograder.checking.probing import as_count, lookup
from autograder.checking.shared_builds import ModuleSnapshot, built_once
from autograder.course.shared.records import Namespace

__all__ = [
    "CountCase", "CountRecord", "ModuleNode", "counted_module", "counted_modules", "handed_modules", "probe_count",
]

# A module to count, as plain data (a case is stored and shown, never a live object). Each node is a dict with a
# "kind":
#   "linear" (d_in, d_out, bias), "layer_norm" (size), "embedding" (num, dim), "dropout": torch's own layers;
#   "module": an nn.Module of a class named "class" (default "Model"), as a learner's own, with "parameters" [[name,
#       shape or "=path", frozen]] registered on itself (an nn.Parameter attribute; "=path" registers the parameter
#       at that path again: one tensor, two names), "buffers" [[name, shape, persistent]] and "children" [[name,
#       node]];
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


META = torch.device("meta")  # real shapes, no memory: the grader's own count needs no values
CPU = torch.device("cpu")
# The initialisers torch's layers call from reset_parameters (Linear, Embedding, LayerNorm). A meta tensor has no
# values for them to set, yet each runs through Python decompositions there: 0.1 ms for a Linear, 0.5 ms for an
# Embedding, most of a check that builds some 200 modules.
INITIALISERS = ("kaiming_uniform_", "uniform_", "normal_", "ones_", "zeros_")
# The CPU random stream the handed modules are initialised from, in a fork of the process's own (the notebook's
# stream is left as it was): the same values on every run, in every grader.
HANDED_SEED = 3


@functools.cache
def _learners_class(name: str) -> type[nn.Module]:
    """An nn.Module subclass named `name`, as a learner's class defined in a notebook is (`__main__`): a module the
    student's function is handed reads as one of a learner's own, not as a bare nn.Module or a class of the grader."""
    return type(name, (nn.Module,), {"__module__": "__main__", "__qualname__": name})


def _parameter(shape: list[int], device: torch.device) -> nn.Parameter:
    return nn.Parameter(torch.empty(*shape, device=META) if device == META else torch.randn(*shape))


def _buffer(shape: list[int], device: torch.device) -> torch.Tensor:
    return torch.empty(*shape, device=META) if device == META else torch.zeros(*shape)


def _layer(node: ModuleNode, path: str, made: dict[str, nn.Module], device: torch.device) -> nn.Module:
    kind = node["kind"]
    if kind == "linear":
        return nn.Linear(node["d_in"], node["d_out"], bias=node["bias"], device=device)
    if kind == "layer_norm":
        return nn.LayerNorm(node["size"], device=device)
    if kind == "embedding":
        return nn.Embedding(node["num"], node["dim"], device=device)
    if kind == "dropout":
        return nn.Dropout(0.1)
    if kind == "same":
        shared: nn.Module = made[node["path"]]
        return shared
    if kind == "module_list":
        return nn.ModuleList([_built(item, f"{path}{index}", made, device) for index, item in enumerate(node["items"])])
    if kind == "module_dict":
        return nn.ModuleDict({name: _built(item, f"{path}{name}", made, device) for name, item in node["items"]})
    if kind == "parameter_list":
        return nn.ParameterList([_parameter(shape, device) for shape in node["shapes"]])
    if kind != "module":
        raise ValueError(f"unknown kind of module: {kind!r}")
    module = _learners_class(node.get("class", "Model"))()
    for name, shape, frozen in node.get("parameters", ()):
        parameter = _registered(made, shape[1:]) if isinstance(shape, str) else _parameter(shape, device)
        if not isinstance(shape, str):
            parameter.requires_grad_(not frozen)
        module.register_parameter(name, parameter)
    for name, shape, persistent in node.get("buffers", ()):
        module.register_buffer(name, _buffer(shape, device), persistent=persistent)
    for name, child in node.get("children", ()):
        module.add_module(name, _built(child, f"{path}{name}", made, device))
    return module


def _registered(made: dict[str, nn.Module], path: str) -> nn.Parameter:
    """The parameter at a dotted path, read from the module built at the path's head ("=path")."""
    owner, _, name = path.rpartition(".")
    return made[owner].get_parameter(name)


def _built(node: ModuleNode, path: str, made: dict[str, nn.Module], device: torch.device) -> nn.Module:
    """The node's module; `made` gains it under its dotted path (for "same" and "=path")."""
    module = _layer(node, f"{path}." if path else "", made, device)
    if node.get("frozen"):
        module.requires_grad_(False)
    made[path] = module
    return module


def counted_modules(nodes: Sequence[ModuleNode]) -> list[nn.Module]:
    """The grader's own builds of the modules the nodes describe, for the reference's count and the wrong counters':
    on the meta device, without initialising values they do not have (so no meta kernel runs, and none imports
    torch._dynamo or sympy). Never handed to the student's code (handed_modules are), which never runs while the
    initialisers are patched."""
    with _meta_tensors_not_initialised():
        return [_built(node, "", {}, META) for node in nodes]


def counted_module(node: ModuleNode) -> nn.Module:
    """counted_modules of one node."""
    return counted_modules([node])[0]


def handed_modules(nodes: Sequence[ModuleNode]) -> list[nn.Module]:
    """The modules the student's function is handed: built as a learner builds them, on the CPU by torch's own
    constructors with torch's own initialisers, from a fork of the random stream; nothing of the grader's (meta,
    stand-in modules, patched initialisers) is in place, so a count that is right only under those is not."""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(HANDED_SEED)
        return [_built(node, "", {}, CPU) for node in nodes]


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


def _witness_count(count_parameters: Callable[[nn.Module], object], module: nn.Module) -> int | None:
    try:
        return as_count(count_parameters(module))
    except Exception:  # noqa: BLE001 - a witness only backs a diagnosis; the case's own module is what is graded
        return None


class _Witnesses:
    """A check's witness modules, built once for all its cases (the same witnesses in every case): each is handed
    to the student's function as it was built, rebuilt first when anything of it changed since (a count that
    freezes, adds or rewrites what it counts, a reference kept from an earlier call): no case sees what the
    student's code did to a witness in another."""

    def __init__(self, nodes: Sequence[ModuleNode]) -> None:
        self._nodes = list(nodes)
        self._built = [self._build(node) for node in self._nodes]

    @staticmethod
    def _build(node: ModuleNode) -> tuple[nn.Module, ModuleSnapshot]:
        (module,) = handed_modules([node])
        return module, ModuleSnapshot(module)

    def __len__(self) -> int:
        return len(self._nodes)

    def handed(self, index: int) -> nn.Module:
        """The witness as built: the same module while nothing of it changed, else a new build of its node."""
        module, snapshot = self._built[index]
        if not snapshot.unchanged(module):
            self._built[index] = module, snapshot = self._build(self._nodes[index])
        return module


def _witnesses(nodes: Sequence[ModuleNode]) -> _Witnesses:
    """The check's witnesses for these nodes (shared_builds.built_once: once per check; every case outside one)."""
    return built_once(("parameter_counts.witnesses", json.dumps(nodes, sort_keys=True)), lambda: _Witnesses(nodes))


def probe_count(namespace: Namespace, case: CountCase) -> CountRecord:
    """The student's count of the case's module, a module of its own built for that one call, and of each witness:
    the check's, built once and handed again only as it was built (_Witnesses: a count that changes its module
    changes nothing else)."""
    count_parameters = lookup(namespace, "count_parameters")
    (module,) = handed_modules([case["module"]])
    witnesses = _witnesses(case["witnesses"])
    count = as_count(count_parameters(module))
    return {"count": count, "witness_counts": [_witness_count(count_parameters, witnesses.handed(index))
                                               for index in range(len(witnesses))]}
