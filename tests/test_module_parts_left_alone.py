"""to_torch_multihead leaves the set of parameters of the module it is handed as it was (issue 58: a copy that gave our
bias-free query/key/value layers new zero bias parameters, to have something to stack into in_proj_bias, kept full
marks: the checks read the existing weights again after the call, never which parameters the module holds).

The notebook says `mha` is only read. The probe lists the module's parameters and buffers before and after the call;
the judge says which one was added or taken away, in English and Chinese, on the public and the hidden checks.
"""

import torch
from check_helpers import results_by_id, score
from mutants import multihead as mutants
from torch import nn

from autograder.checking.check_types import PASSED
from autograder.course import catalog
from autograder.course.n04_multi_head_attention.ex4_torch_equivalence.judge import module_parts_changed
from autograder.running.runner import DEFAULT_SEED, cases_for
from tests.test_departure_first_step import departures


def copy_giving_our_layers_biases(mha):
    """A learner's copy: our layers without a bias get a zero one registered on them, then all three are stacked."""
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("sizes differ")
    weight = mha.W_query.weight
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True,
                                      dtype=weight.dtype)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            layer = getattr(mha, name)
            if layer.bias is None:
                layer.register_parameter("bias", nn.Parameter(weight.new_zeros(mha.d_out)))
        torch_mha.in_proj_weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
        torch_mha.in_proj_bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def copy_with_local_zeros(mha):
    """The same copy with the zeros made apart: `mha` is only read."""
    if mha.W_query.in_features != mha.d_out:
        raise ValueError("sizes differ")
    weight = mha.W_query.weight
    torch_mha = nn.MultiheadAttention(mha.d_out, mha.num_heads, dropout=mha.dropout.p, batch_first=True,
                                      dtype=weight.dtype)
    layers = (mha.W_query, mha.W_key, mha.W_value)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([layer.weight for layer in layers]))
        torch_mha.in_proj_bias.copy_(torch.cat([weight.new_zeros(mha.d_out) if layer.bias is None else layer.bias
                                                for layer in layers]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha


def copy_taking_out_proj_bias(mha):
    """A copy that moves out_proj's bias over and takes it from our module."""
    torch_mha = copy_with_local_zeros(mha)
    mha.out_proj.bias = None
    return torch_mha


def bias_free_check_ids():
    """The checks with a case whose query/key/value layers have no bias (the notes' case among them)."""
    return [check_id for check_id, check in catalog.CHECKS_BY_ID.items()
            if check_id.startswith("torch_equivalence.")
            and any(not case["qkv_bias"] and case.get("d_in", case["d_model"]) == case["d_model"]
                    for case in cases_for(check, DEFAULT_SEED))]


def test_zero_biases_added_to_our_layers_fail_with_the_part_named():
    results = results_by_id("torch_equivalence", {"to_torch_multihead": copy_giving_our_layers_biases})
    checks = [check_id for check_id in bias_free_check_ids() if check_id in results]
    assert "torch_equivalence.notes" in checks and any(catalog.CHECKS_BY_ID[c].hidden for c in checks)
    for check_id in checks:
        assert results[check_id].status != PASSED, check_id
        said = results[check_id].message
        assert ("your to_torch_multihead changed the mha it was given: it now holds a new parameter W_key.bias that "
                "it did not have before the call (new parameters or buffers in all: 3)") in said, check_id
    zh = results_by_id("torch_equivalence", {"to_torch_multihead": copy_giving_our_layers_biases}, lang="zh")
    said = zh["torch_equivalence.notes"].message
    assert "调用之后它多了一个调用之前没有的参数 W_key.bias（一共多了 3 个参数或 buffer）" in said


def test_a_parameter_taken_from_our_module_is_said():
    results = results_by_id("torch_equivalence", {"to_torch_multihead": copy_taking_out_proj_bias})
    assert ("your to_torch_multihead changed the mha it was given: its parameter out_proj.bias is gone after the "
            "call (parameters or buffers gone in all: 1)") in results["torch_equivalence.notes"].message


def test_copies_that_only_read_our_module_keep_full_marks():
    for copy in (copy_with_local_zeros, mutants.to_torch_multihead_book):
        results = results_by_id("torch_equivalence", {"to_torch_multihead": copy})
        assert all(r.status == PASSED for r in results.values()), copy.__name__
        assert score(results) > 0


def test_a_name_the_probe_does_not_write_is_counted_never_quoted():
    """The record is the child's: a parameter name outside our layers' weights and biases is never said."""
    handed = ["mha.W_query.weight", "mha.out_proj.bias"]
    verdict = module_parts_changed({"parts_added": ["mha.<img src=x>", 7], "parts_removed": []}, handed)
    assert verdict is not None and verdict.message_key == "argument.part_added_unnamed"
    assert verdict.fields["count"] == 2 and "<img" not in str(verdict.fields)
    named = module_parts_changed({"parts_added": ["mha.W_key.bias"]}, handed)
    assert named is not None and named.fields["part"] == "W_key.bias"
    assert module_parts_changed({"parts_added": ["mha.W_query.weight"]}, handed).message_key.endswith("_unnamed")
    assert module_parts_changed({}, handed) is None


def test_no_step_is_said_to_depart_for_a_parameter_added():
    """The message states the cause; the copy's values are right, so no step departs (a departure line there would
    be false)."""
    found = departures("torch_equivalence", {"to_torch_multihead": copy_giving_our_layers_biases})
    assert found == {"en": [], "zh": []}
