"""ModuleSpec describes each module exercise's class in plain fields, and the contract asks it instead of naming a
kind of module: every answer is checked here against the reference classes themselves.
"""

import dataclasses
import pickle
import random

import pytest
import torch

from attnkit import solutions
from autograder.course.module_contract import probe as probes
from autograder.course.module_contract.cases import modes_cases, properties_cases, structure_cases
from autograder.course.module_contract.declaration import exposed_reference
from autograder.course.module_contract.judge import output_shape, parameter_shapes

SPECS = probes.SPECS
PLAIN = (str, bool, int, float, tuple, dict, probes.HeadLayout)


def reference_namespace(spec):
    return {spec.class_name: getattr(solutions, spec.class_name)}


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.exercise)
def test_a_spec_is_plain_picklable_data_without_a_kind(spec):
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert "kind" not in {field.name for field in dataclasses.fields(spec)}
    for field in dataclasses.fields(spec):
        assert isinstance(getattr(spec, field.name), PLAIN), field.name


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.exercise)
def test_the_spec_describes_the_reference_class(spec):
    """Parameters, mask buffers, output shape and stored sizes, for qkv_bias False, True and left out."""
    for seed in range(4):
        rng = random.Random(seed)
        for case in structure_cases(spec, rng) + properties_cases(spec, rng):
            module = probes.build(spec, reference_namespace(spec), case)
            assert {name: tuple(p.shape) for name, p in module.named_parameters()} == parameter_shapes(spec, case)
            masks = {name for name, _ in module.named_buffers() if name.split(".")[-1] == "mask"}
            assert masks == set(probes.mask_names(spec, case))
            with torch.no_grad():
                assert tuple(module(probes.module_input(spec, case)).shape) == output_shape(spec, case)
            for name, (value, _) in probes.promised_attributes(spec, case).items():
                assert getattr(module, name) == value


def test_the_fields_tell_the_modules_apart():
    by_exercise = probes.SPECS_BY_EXERCISE
    assert [spec.exercise for spec in SPECS if spec.causal] == ["causal_attention", "mha_wrapper",
                                                                "multi_head_attention"]
    assert by_exercise["mha_wrapper"].heads.stacked and not by_exercise["multi_head_attention"].heads.stacked
    assert by_exercise["self_attention_v1"].raw_projections and not by_exercise["self_attention_v1"].has_qkv_bias
    assert probes.constructor_arguments(by_exercise["mha_wrapper"], {"d_in": 3, "d_out": 2, "context_length": 6,
                                                                     "num_heads": 2}, 0.1) == (3, 2, 6, 0.1, 2)


@pytest.mark.parametrize("spec", [spec for spec in SPECS if spec.has_dropout], ids=lambda spec: spec.exercise)
def test_the_exposing_weights_make_every_head_spell_out_its_causal_weights(spec):
    """The dropout check reads each head's weights from the output: stacked and split heads alike."""
    case = modes_cases(spec, random.Random(0))[0]
    module = probes.exposing_module(spec, reference_namespace(spec), case, 0.0).eval()
    with torch.no_grad():
        output = module(probes.one_hot_tokens(case))
    assert torch.allclose(output, exposed_reference(spec, case), atol=1e-5)
    tokens, heads = case["num_tokens"], probes.head_count(spec, case)
    assert heads == (case["num_heads"] if spec.heads.many else 1)
    blocks = output.reshape(case["batch"], tokens, heads, tokens + 1)
    weights = blocks[..., :-1]
    assert torch.allclose(blocks[..., -1], torch.ones(()), atol=1e-5)  # the last feature: the weights' sum
    assert torch.allclose(weights.sum(dim=-1), torch.ones(()), atol=1e-5)
    future = torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), diagonal=1)
    assert (weights.transpose(1, 2)[..., future] == 0).all()
    # Each head its own self-score: heads that a forward pass mixed up would not look alike.
    diagonals = weights.diagonal(dim1=1, dim2=3)
    for head in range(heads - 1):
        assert not torch.allclose(diagonals[:, head], diagonals[:, head + 1])


def test_a_layout_of_stacked_heads_without_num_heads_is_refused():
    with pytest.raises(ValueError, match="stacked"):
        probes.HeadLayout(many=False, stacked=True)
