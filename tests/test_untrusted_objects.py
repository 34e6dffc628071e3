"""The grader's code reads objects student code made without running the student's methods.

Describing an exception (probing.describe_exception) and encoding probe data (wire.plain_data, probing.plain) get
objects whose every method bites: exceptions whose __str__, class name or traceback raise or never end, a message of
100 MB, str/int/dict/list subclasses with hostile methods, tensor subclasses whose __torch_function__ raises, a
dispatch mode the student left on. Each is read below those methods, or under a guard with a fallback naming the type.
"""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.checking.probing import MAX_MESSAGE_CHARS, describe_exception, exception_type_name, plain
from autograder.isolation import wire


class Bitten(Exception):  # noqa: N818 - what the student calls it
    pass


class Meta(type):
    @property
    def __name__(cls):
        raise Bitten("the class name")

    def __getattribute__(cls, name):
        if name == "__qualname__":
            raise Bitten(name)
        return super().__getattribute__(name)


class BitingException(Exception, metaclass=Meta):  # noqa: N818
    def __str__(self):
        raise SystemExit("the message")

    @property
    def __traceback__(self):
        raise Bitten("the traceback")


class EvilText(str):
    def __getitem__(self, index):
        raise Bitten("slicing")

    def __str__(self):
        raise Bitten("str")

    def strip(self, *args):
        raise Bitten("strip")


class EvilTextException(Exception):  # noqa: N818
    def __str__(self):
        return EvilText("looks like a message")


def raised(exception):
    try:
        raise exception
    except BaseException as caught:  # noqa: BLE001 - the test's own
        return caught


def test_an_exception_whose_name_message_and_traceback_bite_is_described_by_its_type():
    described = describe_exception(raised(BitingException()))
    assert described["type"] == "BitingException"  # type's own getter: the metaclass property never ran
    assert described["message"] == "<BitingException: its message could not be read>"
    assert described["line"] == "raise exception"  # BaseException's own getter: the property never ran


def test_a_message_that_is_a_hostile_str_subclass_becomes_plain_text():
    described = describe_exception(raised(EvilTextException()))
    assert described["message"] == "looks like a message" and type(described["message"]) is str


def test_a_huge_message_is_capped():
    described = describe_exception(raised(ValueError("x" * 10**8)))
    assert described["type"] == "ValueError" and len(described["message"]) == MAX_MESSAGE_CHARS


def test_the_student_s_line_is_found_without_asking_the_frame_s_globals_for_a_loader():
    class Loader:
        def get_source(self, name):
            raise Bitten("the loader")

    namespace = {"__loader__": Loader(), "__name__": "student"}
    exec(compile("def f():\n    raise KeyError('k')\n", "<cell 3>", "exec"), namespace)  # noqa: S102 - the test's
    described = describe_exception(raised_by(namespace["f"]))
    assert described["type"] == "KeyError" and described["message"] == "'k'"


def raised_by(function):
    try:
        function()
    except BaseException as caught:  # noqa: BLE001 - the test's own
        return caught
    raise AssertionError("it did not raise")


def test_a_nested_class_is_named_by_its_qualified_name():
    class Inner(Exception):  # noqa: N818
        pass

    assert exception_type_name(Inner()).endswith(".Inner")


class BitingTensor(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise Bitten(f"{func} on a tensor subclass")


class BitingMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise Bitten(f"{func} under the student's mode")


def test_a_tensor_subclass_whose_methods_bite_is_copied_plain():
    tensor = torch.arange(6.0).reshape(2, 3).as_subclass(BitingTensor)
    for copy in (plain(tensor), wire.plain_data(tensor)):
        assert type(copy) is torch.Tensor and torch.equal(copy, torch.arange(6.0).reshape(2, 3))


def test_a_dispatch_mode_the_student_left_on_is_set_aside_while_the_grader_copies():
    tensor = torch.arange(4.0)
    with BitingMode():
        copies = (plain(tensor), wire.plain_data({"x": tensor}))
    assert torch.equal(copies[0], tensor) and torch.equal(copies[1]["x"], tensor)


class EvilDict(dict):
    def items(self):
        raise Bitten("items")

    def __iter__(self):
        raise Bitten("iter")


class EvilList(list):
    def __iter__(self):
        raise Bitten("iter")


class EvilInt(int):
    def __int__(self):
        raise Bitten("int")

    def __index__(self):
        raise Bitten("index")


class Unknown:
    def __repr__(self):
        raise Bitten("repr")


def test_containers_and_numbers_are_read_through_the_built_in_types():
    data = EvilDict(a=EvilList([EvilInt(3), EvilText("text"), 2.5]), b=(Unknown(),))
    encoded = wire.plain_data(data)
    assert encoded == {"a": [3, "text", 2.5], "b": ("<test_untrusted_objects.Unknown object>",)}
    assert [type(value) for value in encoded["a"]] == [int, str, float]
    frame = wire.encode({"event": "exercise", "records": data})
    [event] = list(wire.FrameReader().feed(frame))
    assert event["records"] == {"a": [3, "text", 2.5], "b": ["<test_untrusted_objects.Unknown object>"]} or \
        event["records"] == encoded


@pytest.mark.parametrize("value", [BitingException(), Unknown(), EvilDict()])
def test_anything_else_is_named_by_its_type_never_its_repr(value):
    encoded = wire.plain_data([value])
    assert isinstance(encoded, list) and len(encoded) == 1
