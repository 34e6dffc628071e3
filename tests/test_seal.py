"""The seal (autograder.isolation.guards.Seal) puts the grader's modules, classes, functions and records back as they
were, whatever student code did to them, and its check of an unchanged namespace runs none of the student's code."""

import builtins
import types

from autograder.isolation.guards import Seal


class Spec:
    def __init__(self, size):
        self.size = size


def _helper(x, scale=2, *, shift=1):
    return x * scale + shift


def _grader_module():
    """A module of the grader's (by name and __module__), holding a function, a class and a record in a tuple."""
    module = types.ModuleType("autograder.sealed_for_test")
    helper = types.FunctionType(_helper.__code__, vars(module), "helper", _helper.__defaults__)
    helper.__kwdefaults__ = dict(_helper.__kwdefaults__)
    helper.__module__ = module.__name__
    kind = type("Kind", (), {"__module__": module.__name__, "rate": 0.5, "describe": lambda self: "kind"})
    record = kind()
    record.size = 3
    vars(module).update(helper=helper, Kind=kind, RECORDS=(record,), LIMIT=10)
    return module


def _sealed(module):
    kind = vars(module)["Kind"]
    return Seal({module.__name__: (module, dict(vars(module)))}, {kind: dict(vars(kind))}, dict(vars(builtins)))


class BitingName(str):
    """A name equal to another and hashed alike, whose comparisons are the student's code."""

    compared = 0

    def __eq__(self, other):
        BitingName.compared += 1
        return str.__eq__(self, other)

    def __hash__(self):
        return str.__hash__(self)


def test_restore_puts_back_what_student_code_changed():
    module = _grader_module()
    seal = _sealed(module)
    helper, kind, (record,) = module.helper, module.Kind, module.RECORDS
    original = dict(vars(module))

    module.LIMIT = 10**9  # a value replaced
    del module.helper  # a name unbound and bound again to the very same function: the order changes
    module.helper = helper
    module.injected = print  # a name added
    kind.rate = 1.0  # a class attribute replaced, another added
    kind.extra = True
    helper.__code__ = (lambda x, scale=2, *, shift=1: 0).__code__  # a function's code, defaults replaced
    helper.__defaults__ = (0,)
    record.size = -1  # a record's attribute
    builtins.sum = lambda *args: 0

    seal.restore()

    assert vars(module) == original and all(vars(module)[name] is value for name, value in original.items())
    assert kind.rate == 0.5 and not hasattr(kind, "extra")
    assert helper(1) == 3 and helper.__defaults__ == (2,)
    assert record.size == 3
    assert builtins.sum([1, 2]) == 3


def test_an_unchanged_namespace_is_left_as_it_is():
    module = _grader_module()
    seal = _sealed(module)
    namespace = vars(module)
    seal.restore()
    assert vars(module) is namespace and list(namespace) == ["__name__", "__doc__", "__package__", "__loader__",
                                                             "__spec__", "helper", "Kind", "RECORDS", "LIMIT"]


def test_checking_a_module_compares_no_name_through_student_code():
    """A name that another name was swapped for, equal to it and hashed alike: the seal sees the module changed and
    puts it back without ever calling the name's __eq__ (a lookup by name would)."""
    module = _grader_module()
    seal = _sealed(module)
    namespace = vars(module)
    limit = namespace.pop("LIMIT")
    namespace[BitingName("LIMIT")] = limit  # same length, same value, a key of the student's making
    BitingName.compared = 0

    seal.restore()

    assert BitingName.compared == 0
    assert all(type(name) is str for name in vars(module)) and module.LIMIT == 10
