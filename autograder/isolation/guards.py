"""In-process protections of a grading child: the zygote takes `prepare_seal()` once, each child `apply()`s it.

The zygote never imported the reference or the checks (autograder.isolation.zygote): there is nothing of them
to remove. The seal refuses their import while student code runs, and is a snapshot of the grader's own modules,
classes, functions' code and probe-side objects, and of `builtins`.
`Seal.restore()` puts that snapshot back before every probe, so a student who replaced
`autograder.checking.probing.plain` (or its `__code__`), a method of a probe helper, a check's probe,
`sys.modules["autograder.running.runner"]` or `builtins.isinstance` probes with the grader's own code anyway.

This is defence in depth, not the boundary: student code runs in the same process as the probes and
could forge their data. The boundary is that judges run in the grader process, rebuild every input
from the case seed and compare with the reference there.
"""

import builtins
import operator
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from autograder.isolation.protected import REFERENCE_PACKAGE, protected_modules

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["BLOCKED_PREFIXES", "ReferenceImportBlocker", "Seal"]

BLOCKED_PREFIXES = protected_modules()
GRADER_PREFIX = "autograder"


class ReferenceImportBlocker:
    """A meta path finder that refuses the reference and the hidden checks while student code runs."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> "ModuleSpec | None":
        if any(name == prefix or name.startswith(prefix + ".") for prefix in BLOCKED_PREFIXES):
            raise ImportError(f"{name} cannot be imported while grading")
        return None


class Seal:
    def __init__(self, modules: dict[str, tuple[types.ModuleType, dict[str, Any]]], classes: dict[type, dict[str, Any]],
                 builtin_names: dict[str, Any]) -> None:
        self._modules = [(name, module, _Namespace(namespace)) for name, (module, namespace) in modules.items()]
        self._classes = [(cls, _Namespace(attributes)) for cls, attributes in classes.items()]
        self._builtins = _Namespace(builtin_names)
        self._functions = [(function, *_function_parts(function)) for function in _grader_functions(modules, classes)]
        self._objects = [(obj, _Namespace(vars(obj))) for obj in _grader_records(modules)]
        self._blocker = ReferenceImportBlocker()

    def apply(self) -> Self:
        """In the child, before any student code: put the snapshot (and the import blocker) in place."""
        self.restore()
        return self

    def restore(self) -> None:
        sys.settrace(None)
        sys.setprofile(None)
        for name, module, namespace in self._modules:
            sys.modules[name] = module
            if not namespace.same(module.__dict__):
                module.__dict__.clear()
                module.__dict__.update(namespace.items)
        for cls, attributes in self._classes:
            if attributes.same(vars(cls)):
                continue
            for name in set(vars(cls)) - set(attributes.items):
                _quietly(delattr, cls, name)
            for name, value in attributes.items.items():
                if vars(cls).get(name) is not value:
                    _quietly(setattr, cls, name, value)
        for function, code, defaults, kwdefaults in self._functions:
            if function.__code__ is not code or function.__defaults__ is not defaults \
                    or function.__kwdefaults__ is not kwdefaults:
                function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, kwdefaults
        for obj, attributes in self._objects:
            if not attributes.same(vars(obj)):
                vars(obj).clear()
                vars(obj).update(attributes.items)
        builtin_namespace = vars(builtins)
        if not self._builtins.same(builtin_namespace):
            for name in set(builtin_namespace) - set(self._builtins.items):
                del builtin_namespace[name]
            builtin_namespace.update(self._builtins.items)
        for prefix in (REFERENCE_PACKAGE,):
            for name in [name for name in sys.modules if name == prefix or name.startswith(prefix + ".")]:
                del sys.modules[name]
            parent, _, child = prefix.rpartition(".")
            if parent in sys.modules:  # attnkit.solutions: its parent package holds it as an attribute too
                vars(sys.modules[parent]).pop(child, None)
        if not sys.meta_path or sys.meta_path[0] is not self._blocker:
            sys.meta_path.insert(0, self._blocker)


def prepare_seal() -> Seal:
    """The Seal of this process (the zygote's), taken once before it forks any child."""
    modules = {
        name: (module, dict(module.__dict__))
        for name, module in list(sys.modules.items())
        if isinstance(module, types.ModuleType) and (name == GRADER_PREFIX or name.startswith(GRADER_PREFIX + "."))
    }
    classes = {
        value: dict(vars(value))
        for _module, namespace in modules.values()
        for value in namespace.values()
        if isinstance(value, type) and getattr(value, "__module__", "").startswith(GRADER_PREFIX)
    }
    return Seal(modules, classes, dict(vars(builtins)))


def _grader_functions(modules: Mapping[str, tuple[types.ModuleType, dict[str, Any]]],
                      classes: Mapping[type, dict[str, Any]]) -> list[types.FunctionType]:
    namespaces = [namespace for _module, namespace in modules.values()] + list(classes.values())
    functions = [value for namespace in namespaces for value in namespace.values()
                 if isinstance(value, types.FunctionType) and (value.__module__ or "").startswith(GRADER_PREFIX)]
    return list({id(function): function for function in functions}.values())


def _grader_records(modules: Mapping[str, tuple[types.ModuleType, dict[str, Any]]]) -> Iterable[Any]:
    """Instances the grader keeps in module-level tuples and mappings (the probes' ModuleSpec objects)."""
    records: list[object] = []
    for _module, namespace in modules.values():
        for value in namespace.values():
            items = value.values() if isinstance(value, types.MappingProxyType | dict) else value
            if not isinstance(value, tuple | types.MappingProxyType | dict):
                continue
            records.extend(item for item in items
                           if type(item).__module__.startswith(GRADER_PREFIX) and hasattr(item, "__dict__"))
    return {id(record): record for record in records}.values()


def _function_parts(function: types.FunctionType) -> tuple[types.CodeType, Any, Any]:
    return function.__code__, function.__defaults__, function.__kwdefaults__


class _Namespace:
    """A namespace as it was: its names and values, in order, compared by identity alone, in one pass each (no
    lookup by name: a class's or module's dict checked unchanged touches its entries once, in order); a name unbound
    and bound again to the same value reads as changed, and the namespace is put back all the same."""

    __slots__ = ("items", "names", "values")

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.items = dict(namespace)
        self.names = tuple(self.items)
        self.values = tuple(self.items.values())

    def same(self, namespace: Mapping[str, object]) -> bool:
        return (len(namespace) == len(self.names) and all(map(operator.is_, namespace, self.names))
                and all(map(operator.is_, namespace.values(), self.values)))


def _quietly(function: Callable[..., object], *args: object) -> None:
    try:
        function(*args)
    except (AttributeError, TypeError):
        pass
