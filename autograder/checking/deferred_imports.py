"""Probes on the meta device without torch's heavy lazy imports: a fresh kernel's first device check in 0.1 s, not 1.5.

On `meta`, torch runs most ops through Python kernels, and three things on that path import a large module on first
use only to answer a question whose answer is plain as long as nothing is being compiled or traced:
- torch._compile._disable_dynamo wraps most elementwise kernels (add, div, exp, triu, dropout, normal_...); its first
  call imports torch._dynamo (about 1.2 s on the 2-core machine) to build `torch._dynamo.disable(kernel)`, which
  outside torch.compile calls the kernel and nothing else, and caches that on the kernel (its `__dynamo_disable`);
- the type promotion of those kernels imports sympy (about 0.45 s) to ask whether an argument is a `sympy.Basic`: no
  object is one while sympy is not imported;
- their shape checks (torch._check and friends) import torch.fx.experimental.symbolic_shapes to read a condition or a
  size that may be symbolic: one that is a plain bool or int is returned as it is.

`torch_imports_deferred()` is for a process that has not imported them: while it is open, `sys.modules` holds a
stand-in for each missing one that answers exactly those questions, for plain values only. Anything else asked of a
stand-in (another name, a submodule, a symbolic value) imports the real module there and then and is answered by it,
so nothing can get another answer than torch's own. When it closes, the stand-ins and every cache entry they caused
are removed: torch is left as it was, and the student's own code later imports the real modules as it would have.
"""

import contextlib
import functools
import importlib
import operator
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

__all__ = ["torch_imports_deferred"]

DYNAMO = "torch._dynamo"
SYMPY = "sympy"
SYMBOLIC_SHAPES = "torch.fx.experimental.symbolic_shapes"
CACHE_ATTRIBUTE = "__dynamo_disable"  # where torch._compile caches the disabled kernel
SYMBOLIC_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)


class _StandIn(types.ModuleType):
    """What an import of the module `name` finds while `torch_imports_deferred` is open."""

    def __init__(self, name: str, *, package: bool) -> None:
        super().__init__(name, f"stands in for {name} while a probe runs on the meta device")
        if package:  # importlib only iterates a package's __path__ (typed as a list of str)
            setattr(self, "__path__", _RealPackagePath(self))  # noqa: B010

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "__path__":  # a plain module: `from ... import name` asks for the name alone
            raise AttributeError(attribute)
        return getattr(_real(self), attribute)  # anything the stand-in does not answer: the real module's


class _RealPackagePath:
    """A package stand-in's `__path__`: read only to import a submodule, which imports the real package first."""

    def __init__(self, stand_in: _StandIn) -> None:
        self._stand_in = stand_in

    def __iter__(self) -> Iterator[str]:
        return iter(_real(self._stand_in).__path__)


class _DynamoStandIn(_StandIn):
    def __init__(self) -> None:
        super().__init__(DYNAMO, package=True)
        self.handed_out: list[Callable[..., Any]] = []

    def disable(self, fn: Callable[..., Any] | None = None, recursive: bool = True, **_options: object) -> Any:
        """The kernel itself: what torch._dynamo.disable's wrapper runs when nothing is being compiled."""
        if fn is None:  # the decorator form, @disable(recursive=False)
            return lambda function: self.disable(function, recursive)
        self.handed_out.append(fn)
        return fn


class _NoSympyObject:
    """`sympy.Basic` while sympy is not imported: nothing is an instance of it, as nothing can be one of sympy's."""


class _SympyStandIn(_StandIn):
    def __init__(self) -> None:
        super().__init__(SYMPY, package=True)
        self.Basic = _NoSympyObject


# symbolic_shapes' functions that the meta kernels call, and what each returns for a value that is not symbolic (the
# first branch of torch's own code): the value itself, if of these types, or a constant for any value.
PLAIN_AS_IS: dict[str, tuple[type, ...]] = {
    "expect_true": (bool,), "guard_or_false": (bool,), "guard_or_true": (bool,), "guarding_hint_or_throw": (bool, int),
    "statically_known_true": (bool,),
    "guard_size_oblivious": (bool,),  # torch 2.13's own also warns that it is deprecated: torch's note to itself
}
PLAIN_CONSTANT: dict[str, bool] = {"is_nested_int": False, "has_guarding_hint": True}
# and/or "without bool casting": for plain bools, the operator applied in turn.
PLAIN_FOLDED: dict[str, Callable[[Any, Any], Any]] = {"sym_and": operator.and_, "sym_or": operator.or_}


class _SymbolicShapesStandIn(_StandIn):
    def __init__(self) -> None:
        super().__init__(SYMBOLIC_SHAPES, package=False)
        for name in (*PLAIN_AS_IS, *PLAIN_CONSTANT, *PLAIN_FOLDED, "sym_eq"):
            setattr(self, name, self._answer(name))

    def _answer(self, name: str) -> Callable[..., Any]:
        def answer(value: Any, *args: Any, **kwargs: Any) -> Any:
            if name in PLAIN_CONSTANT and not isinstance(value, SYMBOLIC_TYPES):
                return PLAIN_CONSTANT[name]
            if name in PLAIN_AS_IS and type(value) in PLAIN_AS_IS[name]:
                return value
            if name in PLAIN_FOLDED and not kwargs and all(type(item) is bool for item in (value, *args)):
                return functools.reduce(PLAIN_FOLDED[name], args, value)
            if name == "sym_eq" and not kwargs and len(args) == 1 and _plain_sizes(value) and _plain_sizes(args[0]):
                return _sizes_equal(value, args[0])
            return getattr(_real(self), name)(value, *args, **kwargs)

        answer.__name__ = name
        return answer


def _plain_sizes(value: Any) -> bool:
    """An int, or a list or tuple of them at any depth (what sym_eq compares), none of them symbolic."""
    if isinstance(value, list | tuple):
        return all(_plain_sizes(item) for item in value)
    return isinstance(value, int)


def _sizes_equal(x: Any, y: Any) -> bool:
    """sym_eq on plain sizes: sequences element by element (False on other lengths), ints by value."""
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_sizes_equal(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, list | tuple) or isinstance(y, list | tuple):
        raise AssertionError(f"unexpected sym_eq between {type(x)} {type(y)}")  # as torch's own
    return bool(x == y)


def _real(stand_in: _StandIn) -> types.ModuleType:
    if sys.modules.get(stand_in.__name__) is stand_in:
        del sys.modules[stand_in.__name__]
    return importlib.import_module(stand_in.__name__)


STAND_INS: tuple[tuple[str, Callable[[], _StandIn]], ...] = (
    (DYNAMO, _DynamoStandIn), (SYMPY, _SympyStandIn), (SYMBOLIC_SHAPES, _SymbolicShapesStandIn),
)


@contextlib.contextmanager
def torch_imports_deferred() -> Iterator[None]:
    """Run the block with torch._dynamo, sympy and symbolic_shapes not imported (see the module docstring)."""
    stand_ins = [make() for name, make in STAND_INS if name not in sys.modules]
    for stand_in in stand_ins:
        sys.modules[stand_in.__name__] = stand_in
    try:
        yield
    finally:
        for stand_in in stand_ins:
            if sys.modules.get(stand_in.__name__) is stand_in:
                del sys.modules[stand_in.__name__]
            if isinstance(stand_in, _DynamoStandIn):
                for kernel in stand_in.handed_out:
                    if kernel.__dict__.get(CACHE_ATTRIBUTE) is kernel:
                        del kernel.__dict__[CACHE_ATTRIBUTE]
