"""The device check of every module exercise (the module contract), and of the masking routes, on a device.

Without a GPU, PyTorch's `meta` device stands in: `.to("meta")` moves every parameter and buffer and forward
runs on shapes alone, while a plain-attribute mask stays behind on the CPU, just as it would for `.to("cuda")`,
and a tensor made inside forward without device= meets the others there. The test marked `gpu` runs the same
checks on CUDA (or MPS) when there is one.
"""

import functools
import random

import pytest
import torch
from mutants import causal as mutants

from attnkit import solutions
from autograder.checking.expectations import no_expectations
from autograder.checking.probing import run_probe
from autograder.course.module_contract import cases as contract_cases
from autograder.course.module_contract import judge as contract_judges
from autograder.course.module_contract import probe as contract_probes
from autograder.course.n03_causal_attention.ex2_masking_routes.declaration import weights_cases_device
from autograder.course.n03_causal_attention.ex2_masking_routes.judge import judge_on_device
from autograder.course.n03_causal_attention.ex2_masking_routes.probe import probe_on_device
from autograder.running.runner import run_exercise
from devtools import student_variants
from devtools.student_variants import Knobs

MASKED_SPECS = [spec for spec in contract_probes.SPECS if spec.causal]


def gpu_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return None


def reference_class(spec):
    return getattr(solutions, spec.class_name)


def device_check(spec, student, device, seed=0):
    """(probe data, verdict) of the contract's device check with the device forced."""
    case = {**contract_cases.device_cases(spec, random.Random(seed))[0], "device": device}
    data = run_probe(functools.partial(contract_probes.probe_device, spec), {spec.class_name: student}, case)
    return data, contract_judges.judge_device(spec, data, case, no_expectations(data, case))


def assert_references_pass_on(device):
    for spec in contract_probes.SPECS:
        for seed in range(3):
            data, verdict = device_check(spec, reference_class(spec), device, seed)
            assert verdict.passed, (spec.exercise, verdict.message_key, verdict.fields)
            assert data["device"] == device and data["output_device"] == device and not data["mixed"]
            assert set(data["mask_devices"].values()) <= {device}


def assert_plain_attribute_caught_on(device):
    specs = contract_probes.SPECS_BY_EXERCISE
    for spec, student in ((specs["causal_attention"], mutants.CausalAttentionWithoutBuffers),
                          (specs["multi_head_attention"],
                           student_variants.multi_head_attention(Knobs(buffer="plain")))):
        data, verdict = device_check(spec, student, device)
        assert data["mask_devices"]["mask"] == "cpu"  # .to(device) moved the weights, not the plain attribute
        assert not verdict.passed and verdict.misconception == "mask_plain_attribute", spec.exercise


def assert_mask_made_in_forward_caught_on(device):
    data, verdict = device_check(contract_probes.SPECS_BY_EXERCISE["causal_attention"],
                                 mutants.CausalAttention_fresh_mask_in_forward, device)
    assert not verdict.passed and verdict.misconception == "tensor_created_on_cpu", data


def assert_routes_checked_on(device):
    for name, input_kind in (("causal_weights_renormalised", "weights"), ("causal_weights_neg_inf", "scores")):
        case = {**weights_cases_device(random.Random(0))[0], "device": device}
        probe = functools.partial(probe_on_device, name, input_kind)
        data = run_probe(probe, {name: getattr(solutions, name)}, case)
        assert judge_on_device(data, case, no_expectations(data, case)).passed
        cpu_mask = getattr(mutants, f"{name}_book")  # the notes' code: its mask is made on the CPU
        data = run_probe(probe, {name: cpu_mask}, case)
        verdict = judge_on_device(data, case, no_expectations(data, case))
        assert not verdict.passed and verdict.misconception == "function_tensor_on_cpu"


def test_meta_stands_in_when_there_is_no_gpu():
    if gpu_device() is not None:
        pytest.skip("a GPU is present: the device checks use it instead of meta")
    assert contract_probes.probe_device_kind() == "meta"
    results = run_exercise("causal_attention", {"CausalAttention": mutants.CausalAttentionWithoutBuffers}, lang="en")
    device_result = next(r for r in results if r.id == "causal_attention.device")
    assert device_result.misconception == "mask_plain_attribute" and "moves to meta" in device_result.message


def test_references_pass_on_meta():
    assert_references_pass_on("meta")


def test_plain_attribute_masks_are_caught_on_meta():
    assert_plain_attribute_caught_on("meta")


def test_a_mask_made_inside_forward_is_caught_on_meta_even_in_place():
    """masked_fill_ with a CPU mask raises nothing on meta: the device-mix watch sees it all the same."""
    assert_mask_made_in_forward_caught_on("meta")


def test_masking_routes_are_checked_on_meta():
    assert_routes_checked_on("meta")


@pytest.mark.parametrize("spec", MASKED_SPECS, ids=lambda spec: spec.exercise)
def test_every_mask_of_a_module_is_checked(spec):
    """The wrapper's masks are its heads' (heads.<i>.mask): each one must be a buffer that follows the module."""
    case = contract_cases.device_cases(spec, random.Random(0))[0]
    names = contract_probes.mask_names(spec, case)
    assert names and all(name.split(".")[-1] == "mask" for name in names)
    data, _ = device_check(spec, reference_class(spec), "meta")
    assert set(data["mask_devices"]) == set(names)


@pytest.mark.gpu
def test_device_checks_on_the_gpu():
    device = gpu_device()
    if device is None:
        pytest.skip("no CUDA or MPS device on this machine")
    assert contract_probes.probe_device_kind() == device
    assert_references_pass_on(device)
    assert_plain_attribute_caught_on(device)
    assert_mask_made_in_forward_caught_on(device)
    assert_routes_checked_on(device)
    for spec in contract_probes.SPECS:
        results = run_exercise(spec.exercise, {spec.class_name: reference_class(spec)}, lang="en")
        assert all(result.status == "passed" for result in results), [r.message for r in results]


class _ForwardOnCpu(torch.nn.Module):
    """A learner's SelfAttention_v2 whose attention weights are copied to the CPU inside forward (issue 58)."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = torch.nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = torch.nn.Linear(d_in, d_out, bias=qkv_bias)

    def weights(self, x):
        scores = self.W_query(x) @ self.W_key(x).transpose(-2, -1)
        return torch.softmax(scores / self.W_key.out_features ** 0.5, dim=-1)

    def forward(self, x):
        return self.weights(x).cpu() @ self.W_value(x)


class _ForwardOnInputsDevice(_ForwardOnCpu):
    """The legitimate alternatives: a tensor made with device=x.device, another moved with .to(x.device)."""

    def forward(self, x):
        one = torch.ones((), device=x.device) + torch.zeros(1).to(x.device)
        return (self.weights(x) * one) @ self.W_value(x)


def _output_to_cpu(reference):
    """Any module of the course whose output forward copies to the CPU before it returns it."""
    return type(f"{reference.__name__}OnCpu", (reference,), {"forward": lambda self, *a, **k: (
        super(type(self), self).forward(*a, **k).cpu())})


def test_a_forward_that_copies_to_the_cpu_fails_the_device_check_on_meta():
    """On meta .cpu() raises as a read of values would: the copy itself is the fact (issue 58, k-v2-07)."""
    spec = contract_probes.SPECS_BY_EXERCISE["self_attention_v2"]
    data, verdict = device_check(spec, _ForwardOnCpu, "meta")
    assert data["to_cpu"] == ["_to_copy"] and not verdict.passed and verdict.message_key == "contract.moved_to_cpu"
    data, verdict = device_check(spec, _ForwardOnInputsDevice, "meta")
    assert verdict.passed and not data["to_cpu"], (verdict.message_key, data)
    results = run_exercise("self_attention_v2", {"SelfAttention_v2": _ForwardOnCpu}, lang="en")
    device_result = next(r for r in results if r.id == "self_attention_v2.device")
    assert device_result.status != "passed"
    assert device_result.message.endswith(
        "(module contract): after the module moved to meta forward copies one of its tensors back to the CPU, so its "
        "work no longer stays on the module's device: on which device should every tensor of forward stay?")
    zh = next(r for r in run_exercise("self_attention_v2", {"SelfAttention_v2": _ForwardOnCpu}, lang="zh")
              if r.id == "self_attention_v2.device")
    assert "（模块约定）：模块移到 meta 之后，forward 把它的某个张量复制回 CPU" in zh.message


@pytest.mark.parametrize("spec", contract_probes.SPECS, ids=lambda spec: spec.exercise)
def test_every_module_whose_output_goes_to_the_cpu_fails_the_device_check(spec):
    data, verdict = device_check(spec, _output_to_cpu(reference_class(spec)), "meta")
    assert not verdict.passed and verdict.message_key == "contract.moved_to_cpu", (spec.exercise, data)
