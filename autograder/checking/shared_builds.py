"""What the cases of one check may share: objects a probe builds once per check instead of once per case.

`probe_checks` (autograder.course.shared.plan) runs each check's cases inside `one_check()`; there a probe's
`built_once(key, build)` returns what the first case built under `key`, and outside one (a test, the kit's build, a
diagnosis rerunning one probe) it builds afresh, as it always did. Only what a case does not decide may be shared
(parameter_counts' witness modules, the same for every case), and a shared object that student code was handed may
come back changed: `ModuleSnapshot` tells whether anything of a module changed since it was built (its modules,
their attributes, hooks and flags, its tensors' identity, metadata, version counter and values), so that a probe
rebuilds it before handing it again and no case sees what an earlier one did to it.
"""

import contextlib
import operator
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import torch
from torch import nn

__all__ = ["ModuleSnapshot", "built_once", "one_check"]

T = TypeVar("T")

# The objects the current check's cases share, by key; None outside a check (every call builds afresh).
_SHARED: ContextVar[dict[Hashable, Any] | None] = ContextVar("attnkit_check_shared", default=None)


@contextlib.contextmanager
def one_check() -> Iterator[None]:
    """While open, `built_once` shares what it builds between the calls made inside; closed, it is all dropped."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def built_once(key: Hashable, build: Callable[[], T]) -> T:
    """build(), once per `key` within one check (`one_check`); every time outside one."""
    shared = _SHARED.get()
    if shared is None:
        return build()
    if key not in shared:
        shared[key] = build()
    return shared[key]  # type: ignore[no-any-return]  # what build() returned for this key


# Read through object's own getter: a class that defines `__dict__` cannot hide an attribute from the snapshot.
_DICT_OF = object.__getattribute__
_CONTAINERS = (dict, set, frozenset, list, tuple)


def _namespace(obj: object) -> dict[str, Any]:
    try:
        namespace = _DICT_OF(obj, "__dict__")
    except AttributeError:
        return {}
    return namespace if isinstance(namespace, dict) else {}


class _Held:
    """What one object's __dict__ holds now, compared by identity: its names and values, and each container value's
    items (a hook added to a module's hook dict, a buffer made non-persistent). It keeps them alive."""

    def __init__(self, obj: object) -> None:
        namespace = _namespace(obj)
        self.names, self.values = tuple(namespace), tuple(namespace.values())
        self.containers = [(value, tuple(value), tuple(value.values()) if isinstance(value, dict) else ())
                           for value in self.values if isinstance(value, _CONTAINERS)]

    def same(self, obj: object) -> bool:
        namespace = _namespace(obj)
        if len(namespace) != len(self.names) or not all(map(operator.is_, namespace, self.names)):
            return False
        if not all(map(operator.is_, namespace.values(), self.values)):
            return False
        for container, items, values in self.containers:
            if len(container) != len(items):
                return False
            if items and not all(map(operator.is_, container, items)):
                return False
            if values and isinstance(container, dict) and not all(map(operator.is_, container.values(), values)):
                return False
        return True


def _modules_of(module: nn.Module) -> list[nn.Module]:
    """Every module under `module` (itself first; one registered under two names, twice), read from the modules'
    own dicts: no method student code could have replaced is called."""
    found, stack, seen = [], [module], set()
    while stack:
        current = stack.pop()
        found.append(current)
        if id(current) in seen:
            continue
        seen.add(id(current))
        children = _namespace(current).get("_modules")
        if isinstance(children, dict):
            stack.extend(child for child in reversed(children.values()) if isinstance(child, nn.Module))
    return found


def _tensors_of(modules: list[nn.Module]) -> list[torch.Tensor]:
    """Every tensor the modules hold (parameters, buffers, tensor attributes), each once, in a fixed order."""
    tensors: dict[int, torch.Tensor] = {}
    for module in modules:
        namespace = _namespace(module)
        for value in (*namespace.values(), *dict(namespace.get("_parameters") or {}).values(),
                      *dict(namespace.get("_buffers") or {}).values()):
            if isinstance(value, torch.Tensor):
                tensors.setdefault(id(value), value)
    return list(tensors.values())


def _tensor_facts(tensor: torch.Tensor) -> tuple[object, ...]:
    """What a tensor is besides its values, as plain values (its gradient by identity, in the held objects)."""
    grad = tensor.grad
    return (tuple(tensor.shape), tensor.stride(), tensor.storage_offset(), tensor.dtype, tensor.device,
            tensor.requires_grad, tensor._version, tensor.data_ptr(), None if grad is None else grad._version)


class ModuleSnapshot:
    """A module as it is now: `unchanged(module)` says whether it is still the very same, with nothing of it
    changed (a module or tensor replaced, added or removed, an attribute, hook or flag set, a tensor's metadata,
    version counter or values changed, a gradient set, an attribute set on a tensor). It keeps every object it saw
    alive, so one replaced and freed cannot come back under the same id."""

    def __init__(self, module: nn.Module) -> None:
        self._module = module
        modules = _modules_of(module)
        self._held = [(sub, type(sub), _Held(sub)) for sub in modules]
        with torch.no_grad():
            self._tensors = [(tensor, tensor.grad, _tensor_facts(tensor), _Held(tensor), tensor.detach().clone())
                             for tensor in _tensors_of(modules)]

    def unchanged(self, module: nn.Module) -> bool:
        """Every module seen is still there as it was (its dict's names and values, and its containers' items, by
        identity: a module, parameter or buffer replaced, added or removed shows in its parent's), and so is every
        tensor (its gradient, metadata, attributes and values)."""
        if module is not self._module:
            return False
        if not all(type(sub) is kind and held.same(sub) for sub, kind, held in self._held):
            return False
        with torch.no_grad():
            return all(tensor.grad is grad and _tensor_facts(tensor) == facts and held.same(tensor)
                       and torch.equal(tensor.detach(), values)
                       for tensor, grad, facts, held, values in self._tensors)
