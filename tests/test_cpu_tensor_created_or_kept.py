"""A tensor on the CPU while forward runs on another device is named "a tensor made inside forward stays on the CPU"
only where forward CREATED it in that call without naming a device (issue 58, m-v1-08). State kept on the module
from an earlier call (keys computed on the first call and reused) is on the CPU because it was made from an earlier
CPU input: the name's sentence ("a tensor created inside forward without naming a device ... is made on the CPU
wherever the input is") is false of that code, and is not said."""

import contextlib

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.torch_recorders import DeviceMixWatch
from autograder.running.runner import run_exercise

LANGS = ("en", "zh")
NAME = {"en": "a tensor made inside forward stays on the CPU", "zh": "forward 中新建的张量留在了 CPU 上"}
HINT = {"en": "a tensor created inside forward without naming a device",
        "zh": "在 forward 中新建张量时不指定设备"}


class KeysKeptFromTheFirstCall(nn.Module):
    """A learner's SelfAttention_v1 that computes its keys once and keeps them as an attribute for later calls."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.saved_keys = None

    def forward(self, x):
        if self.saved_keys is None:
            self.saved_keys = (x @ self.W_key).detach()
        keys = self.saved_keys
        scores = torch.matmul(x @ self.W_query, keys.transpose(0, 1))
        return torch.softmax(scores / keys.shape[1] ** 0.5, dim=1) @ (x @ self.W_value)


class ScoresIntoAFreshBuffer(nn.Module):
    """A learner's SelfAttention_v1 that fills a new tensor, made without a device, with its scores."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys = x @ self.W_query, x @ self.W_key
        scale = torch.full((keys.shape[1],), 1.0).sum().sqrt()  # a tensor built here, on the CPU
        scores = torch.zeros(x.shape[0], x.shape[0]) + queries @ keys.transpose(0, 1)
        return torch.softmax(scores / scale, dim=1) @ (x @ self.W_value)


def device_result(student, lang):
    got = {r.id: r for r in run_exercise("self_attention_v1", {"SelfAttention_v1": student}, lang=lang)}
    return got["self_attention_v1.device"]


@pytest.mark.parametrize("lang", LANGS)
def test_keys_kept_from_an_earlier_call_are_not_said_to_be_made_in_forward(lang):
    device = device_result(KeysKeptFromTheFirstCall, lang)
    assert device.score < device.max_score, device
    assert device.misconception is None, device
    ladder = " ".join(device.ladder(3))
    assert NAME[lang] not in ladder and HINT[lang] not in ladder, ladder


@pytest.mark.parametrize("lang", LANGS)
def test_a_tensor_created_in_forward_without_a_device_is_still_named(lang):
    device = device_result(ScoresIntoAFreshBuffer, lang)
    assert device.misconception == "forward_tensor_on_cpu", device
    ladder = " ".join(device.ladder(3))
    assert NAME[lang] in ladder and HINT[lang] in ladder, ladder


@pytest.mark.parametrize("lang", LANGS)
def test_the_notes_code_gets_no_device_sentence(lang):
    device = device_result(solutions.SelfAttention_v1, lang)
    assert device.score == device.max_score and device.misconception is None, device


def test_the_watch_tells_a_created_tensor_from_one_kept_from_before():
    kept = torch.ones(2, 2)
    x = torch.ones(2, 2, device="meta")
    watches = [DeviceMixWatch() for _ in range(3)]
    calls = [lambda: x @ kept, lambda: x @ torch.tril(torch.ones(2, 2)).T,
             lambda: nn.Linear(2, 2)(x)]  # a new layer's weights are created in the call too
    for watch, call in zip(watches, calls, strict=True):
        with contextlib.suppress(RuntimeError), watch:  # the mix raises on meta after the watch has seen it
            call()
    assert all(watch.mixed for watch in watches)
    assert [bool(watch.mixed_created) for watch in watches] == [False, True, True]


KEPT = {"en": "a tensor the module keeps as a plain attribute, from before this call",
        "zh": "这是模块在这次调用之前就以普通属性保存的张量"}


@pytest.mark.parametrize("lang", LANGS)
def test_keys_kept_from_an_earlier_call_are_said_to_be_kept(lang):
    device = device_result(KeysKeptFromTheFirstCall, lang)
    assert KEPT[lang] in device.message, device.message


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("student", [ScoresIntoAFreshBuffer, solutions.SelfAttention_v1])
def test_a_created_tensor_and_the_notes_code_are_not_said_to_be_kept(student, lang):
    device = device_result(student, lang)
    assert KEPT[lang] not in " ".join([device.message, *device.ladder(3)])


def test_the_watch_tells_a_kept_tensor_from_a_created_one():
    kept, x = torch.ones(2, 2), torch.ones(2, 2, device="meta")
    watches = [DeviceMixWatch().kept_before([kept]) for _ in range(2)]
    for watch, call in zip(watches, [lambda: x @ kept, lambda: x @ torch.ones(2, 2)], strict=True):
        with contextlib.suppress(RuntimeError), watch:
            call()
    assert [bool(watch.mixed_kept) for watch in watches] == [True, False]
