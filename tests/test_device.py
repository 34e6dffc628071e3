"""The buffer check of CausalAttention on a device.

Without a GPU, PyTorch's `meta` device stands in: `.to("meta")` moves every parameter and buffer
and forward runs on shapes alone, while a plain-attribute mask stays behind on the CPU, just as it
would for `.to("cuda")`. The test marked `gpu` runs the same check on CUDA (or MPS) when there is one.
"""

import random

import pytest
import torch
from mutants import causal as mutants

import solutions
from autograder.checks.causal import buffer_cases, judge_buffer, probe_buffer, probe_device
from autograder.probing import run_probe
from autograder.runner import run_exercise


def gpu_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return None


def buffer_check(student, device, seed=0):
    """(probe data, verdict) of the buffer check with the device forced."""
    case = {**buffer_cases(random.Random(seed))[0], "device": device}
    data = run_probe(probe_buffer, {"CausalAttention": student}, case)
    return data, judge_buffer(data, case)


def assert_passes_on(device):
    for seed in range(5):
        data, verdict = buffer_check(solutions.CausalAttention, device, seed)
        assert verdict.passed, (verdict.message_key, verdict.fields)
        assert data["device"] == device
        assert data["mask_device"] == device and set(data["buffer_devices"].values()) == {device}
        assert data["output_device"] == device


def assert_plain_attribute_caught_on(device):
    data, verdict = buffer_check(mutants.CausalAttentionWithoutBuffers, device)
    assert data["mask_device"] == "cpu"  # .to(device) moved the weights, not the plain attribute
    assert not verdict.passed
    assert verdict.message_key == "causal_attention.buffer_left_behind"
    assert verdict.misconception == "mask_plain_attribute"


def test_meta_stands_in_when_there_is_no_gpu():
    if gpu_device() is not None:
        pytest.skip("a GPU is present: the buffer check uses it instead of meta")
    assert probe_device() == "meta"
    results = run_exercise("causal_attention", {"CausalAttention": mutants.CausalAttentionWithoutBuffers}, lang="en")
    buffer_result = next(r for r in results if r.id == "causal_attention.buffer")
    assert buffer_result.misconception == "mask_plain_attribute" and "'meta'" in buffer_result.message


def test_reference_passes_on_meta():
    assert_passes_on("meta")


def test_plain_attribute_mask_is_caught_on_meta():
    assert_plain_attribute_caught_on("meta")


def test_mask_made_inside_forward_fails_on_meta():
    data, verdict = buffer_check(mutants.CausalAttention_fresh_mask_in_forward, "meta")
    assert "device" in data["forward_error"]["message"]
    assert verdict.message_key == "causal_attention.buffer_forward_failed"


@pytest.mark.gpu
def test_buffer_check_on_the_gpu():
    device = gpu_device()
    if device is None:
        pytest.skip("no CUDA or MPS device on this machine")
    assert probe_device() == device
    assert_passes_on(device)
    assert_plain_attribute_caught_on(device)
    data, verdict = buffer_check(mutants.CausalAttention_fresh_mask_in_forward, device)
    assert verdict.message_key == "causal_attention.buffer_forward_failed", data
    results = run_exercise("causal_attention", {"CausalAttention": solutions.CausalAttention}, lang="en")
    assert all(result.status == "passed" for result in results), [r.message for r in results]
