"""Judges of the module contract of every attention class (structure, modes, device, properties, state): decide from the
probe's data, the case and the reference's expectations. Imports no reference or declaration: the student kit ships
it as it is."""

import math
from collections.abc import Callable, Collection
from typing import Any

import torch
from torch import Tensor

from autograder.checking.check_types import Evidence, Verdict
from autograder.checking.compare import same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import module_gradient_problem
from autograder.checking.probing import PROJECTIONS
from autograder.course.module_contract.probe import (
    SPECS_BY_EXERCISE,
    ContractCase,
    ContractDeviceRecord,
    ContractRecord,
    ModesRecord,
    ModuleSpec,
    PropertiesRecord,
    StateRecord,
    StructureRecord,
    head_count,
    module_input,
    promised_attributes,
)
from autograder.course.shared.records import State

__all__ = ["RATE_DEVIATIONS", "contract_judge", "judge_device", "judge_modes", "output_shape", "parameter_shapes",
           "state_change"]


def projection_shapes(spec: ModuleSpec, d_in: int, d_out: int, bias: bool | None) -> dict[str, tuple[int, ...]]:
    """{name: shape} of one set of W_query/W_key/W_value: raw (d_in, d_out) matrices, or nn.Linear layers."""
    if spec.raw_projections:
        return {name: (d_in, d_out) for name in PROJECTIONS}
    shapes: dict[str, tuple[int, ...]] = {}
    for name in PROJECTIONS:
        shapes[f"{name}.weight"] = (d_out, d_in)
        if bias:
            shapes[f"{name}.bias"] = (d_out,)
    return shapes


def parameter_shapes(spec: ModuleSpec, case: ContractCase) -> dict[str, tuple[int, ...]]:
    """{name: shape} of every parameter the constructor promises."""
    d_in, d_out, bias = case["d_in"], case["d_out"], case.get("qkv_bias", False)
    projections = projection_shapes(spec, d_in, d_out, bias)
    shapes = {f"{prefix}{name}": shape for prefix, _ in spec.heads.groups(case) for name, shape in projections.items()}
    if spec.out_proj:
        shapes.update({"out_proj.weight": (d_out, d_out), "out_proj.bias": (d_out,)})
    return shapes


def output_shape(spec: ModuleSpec, case: ContractCase) -> tuple[int, ...]:
    features = spec.heads.output_features(case)
    if not spec.batched:
        return (case["num_tokens"], features)
    return (case["batch"], case["num_tokens"], features)


# The biases qkv_bias switches, under any prefix (a wrapper's heads.0.W_query.bias).
QKV_BIASES = ("W_query.bias", "W_key.bias", "W_value.bias")
RATE_DEVIATIONS = 8  # the share of zeros may stray this many standard deviations from p: it never flakes


NEIGHBOUR_MARGIN = 0.1  # independent dropout: vertical neighbours agree with probability p² + (1 - p)²


def judge_structure(spec: ModuleSpec, record: StructureRecord, case: ContractCase,
                    expectations: Expectations) -> Verdict:
    shapes = parameter_shapes(spec, case)  # the spec, not the reference, gives these
    got = {name: tuple(shape) for name, shape in record["parameters"].items()}
    extra = sorted(set(got) - set(shapes))
    missing = sorted(set(shapes) - set(got))
    if (too_few := fewer_heads(spec, record, case)) is not None:
        return too_few
    if missing and all(unregistered_head(name, got) for name in missing):
        return heads_not_registered(record, got)
    masks = [name for name in extra if name.split(".")[-1] == "mask"]
    if masks:
        return Verdict(False, "contract.mask_parameter", {"name": masks[0]}, misconception="mask_as_parameter",
                       evidence=Evidence.FACT)
    # Only the query, key and value layers follow qkv_bias, and only their biases one way: extra where it is off (or
    # not given), missing where it is on. Any other bias that differs (out_proj's, which is always on) is a missing
    # or extra parameter, not qkv_bias ignored (an out_proj made to follow qkv_bias too).
    wrong_way = missing if case["qkv_bias"] else extra
    biases = [name for name in wrong_way if name.endswith(QKV_BIASES)]
    if biases and len(biases) == len(extra) + len(missing):
        if case["qkv_bias"] is None:
            return Verdict(False, "contract.stray_bias_default", {"name": biases[0]})
        key = "contract.stray_bias" if case["qkv_bias"] is False else "contract.missing_bias"
        return Verdict(False, key, {"name": biases[0]}, misconception="qkv_bias_ignored", evidence=Evidence.FACT)
    if missing == ["out_proj.bias"]:  # read from their module: everything else is there
        return Verdict(False, "contract.out_proj_without_bias", misconception="out_proj_without_bias",
                       evidence=Evidence.FACT)
    if missing:
        return Verdict(False, "contract.missing_parameter", {"name": missing[0]})
    if extra:
        return Verdict(False, "contract.extra_parameter", {"name": extra[0]})
    for name, shape in shapes.items():
        if got[name] != shape:
            return Verdict(False, "contract.parameter_shape", {"name": name, "got": got[name], "expected": shape})
    if record.get("repeated_heads"):  # the probe compared the heads' objects
        head, earlier = record["repeated_heads"][0]
        return Verdict(False, "contract.heads_repeated", {"head": head, "earlier": earlier},
                       misconception="heads_shared", evidence=Evidence.FACT)
    if record.get("identical_heads"):
        return Verdict(False, "contract.heads_identical", {"head": record["identical_heads"][0]},
                       misconception="heads_identical_init", evidence=Evidence.FACT)
    attributes = record.get("attributes", {})
    for name, (value, formula) in promised_attributes(spec, case).items():
        stored = attributes.get(name, {})
        if stored.get("type") != "int" or stored.get("value") != value:
            return Verdict(False, "contract.attribute", {"name": name, "formula": formula})
    if "output_type" in record:
        return Verdict(False, "error.wrong_type", {"got": record["output_type"]})
    expected_shape = output_shape(spec, case)
    if tuple(record["output_shape"]) != expected_shape:
        return Verdict(False, "shape.wrong",
                       {"got_shape": tuple(record["output_shape"]), "expected_shape": expected_shape})
    if record["output_dtype"] != case["dtype"]:
        return Verdict(False, "contract.dtype", {"got_dtype": record["output_dtype"], "expected_dtype": case["dtype"]})
    return Verdict(True)


def judge_modes(spec: ModuleSpec, record: ModesRecord, case: ContractCase, expectations: Expectations) -> Verdict:
    tokens, heads = case["num_tokens"], head_count(spec, case)
    expected_shape = (case["batch"], tokens, heads * (tokens + 1))
    for key in ("train", "eval", "eval_again", "no_dropout"):
        if tuple(record[key].shape) != expected_shape:
            return Verdict(False, "shape.wrong",
                           {"got_shape": tuple(record[key].shape), "expected_shape": expected_shape})
    verdict = dropout_effects(record, case, expectations, heads)
    if not verdict.passed:  # what dropout did is a wrong rate's doing, when a layer holds one: named no mistake
        return other_rate(record.get("rates", []), case["p"]) or verdict
    return verdict


def dropout_effects(record: ModesRecord, case: ContractCase, expectations: Expectations, heads: int) -> Verdict:
    """What the module's dropout does in training and eval mode, against the case's rate."""
    tokens = case["num_tokens"]
    if not same(record["eval_again"], record["eval"], atol=0, rtol=0):
        return Verdict(False, "contract.dropout_in_eval", misconception="dropout_in_eval", evidence=Evidence.FACT)
    if not same(record["eval"], record["no_dropout"]):
        # The same output on two eval calls drawing other random numbers: no dropout acts in eval mode, yet the rate
        # changes the output (12t's tz-ma-08 scaled its weights by 1 - p in both modes). What does it is not known:
        # the fact alone, no mistake named.
        return Verdict(False, "contract.eval_differs", {"p": case["p"]})
    if not bool((torch.isfinite(record["eval"]) & (record["eval"] != 0)).any()):
        # No weight is a number dropout could drop (NaN or inf throughout, or zeros): dropout's effect cannot be
        # read, and NaN times a dropout mask is NaN again, so "nothing dropped" would not be proven. The value
        # checks say what is wrong; this property takes no point for what its output cannot show.
        return Verdict(True)
    if record.get("samples_mixed"):
        # Each sample's training output then holds the other samples' dropout draws too: which tensor dropout acts
        # on cannot be read from it, and the properties check says that the samples mix.
        return Verdict(True)
    if not same(record["eval"], expectations["exposed"]):
        # The forward pass itself is wrong on these weights (the value checks say how): where dropout acts cannot be
        # read from its output, only that it acts in training mode.
        if same(record["train"], record["eval"]):
            return Verdict(False, "contract.dropout_inactive", misconception="dropout_missing", evidence=Evidence.FACT)
        return Verdict(True)
    for head in range(heads):
        block = slice(head * (tokens + 1), (head + 1) * (tokens + 1))
        problem = train_problem(record["train"][..., block], record["eval"][..., block], case["p"])
        if problem is not None:
            return problem
    return Verdict(True)


def train_problem(train: Tensor, evaluated: Tensor, p: float) -> Verdict | None:
    """What is wrong with one head's training-mode output, judged against the same head in eval mode.

    Both are (b, tokens, tokens + 1): the weights over the keys, then their sum (see exposing_weights).
    """
    if same(train, evaluated):
        return Verdict(False, "contract.dropout_inactive", misconception="dropout_missing", evidence=Evidence.FACT)
    weights, total = train[..., :-1], train[..., -1]
    evaluated = evaluated[..., :-1]
    valid = ~torch.isnan(evaluated)
    if (torch.isnan(weights) & valid).any():  # nn.Dropout on scores that already hold -inf: -inf · 0 is nan
        return Verdict(False, "contract.dropout_nan", misconception="dropout_before_softmax", evidence=Evidence.FACT)
    seen = valid & (evaluated != 0)  # the weights the mask lets through
    if ((weights != 0) & valid & ~seen).any():
        return Verdict(False, "contract.dropout_future")
    zeros = (weights == 0) & seen
    if not zeros.any():
        if same(weights.nansum(dim=-1), evaluated.nansum(dim=-1)):
            # Rows sum as before and nothing was zeroed: the softmax came after the dropout.
            return Verdict(False, "contract.dropout_before_softmax", misconception="dropout_before_softmax",
                           evidence=Evidence.FACT)
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights",
                       evidence=Evidence.FACT)
    if not same(total, weights.sum(dim=-1), atol=1e-4):
        # The last feature is the sum of the values' ones: it matches the weights only when the weights were dropped.
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights",
                       evidence=Evidence.FACT)
    # Dropout on the weights zeroes each (query, key) pair on its own; dropout on the inputs zeroes whole columns,
    # so vertical neighbours (query i and i + 1, same key) agree far more often than independent zeros would, at
    # whatever rate they occur.
    count = int(seen.sum())
    share = float(zeros.sum()) / count
    pairs = seen[:, 1:, :] & seen[:, :-1, :]
    agree = float(((zeros[:, 1:, :] == zeros[:, :-1, :]) & pairs).sum()) / max(int(pairs.sum()), 1)
    if agree > share**2 + (1 - share) ** 2 + NEIGHBOUR_MARGIN:
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights",
                       evidence=Evidence.FACT)
    if abs(share - p) > RATE_DEVIATIONS * (p * (1 - p) / count) ** 0.5:
        return Verdict(False, "contract.dropout_rate", {"share": share})
    kept = seen & ~zeros
    if not same(weights[kept], evaluated[kept] / (1 - p)):
        key = "contract.dropout_not_scaled" if same(weights[kept], evaluated[kept]) else "contract.dropout_values"
        return Verdict(False, key)
    return None


def fewer_heads(spec: ModuleSpec, data: StructureRecord | ContractDeviceRecord, case: ContractCase) -> Verdict | None:
    """Stacked heads of which the module holds fewer than num_heads, as a count read from it (what a probe asking for
    the missing ones meets is the probe's path, not the learner's fault); None otherwise."""
    held, expected = data.get("heads_held"), head_count(spec, case)
    if held is None or held >= expected:
        return None
    return Verdict(False, "contract.heads_count", {"got": held, "expected": expected}, evidence=Evidence.FACT)


def heads_not_registered(data: StructureRecord | ContractDeviceRecord, registered: Collection[str]) -> Verdict:
    """Heads whose parameters the module does not list under heads.<i>.: named heads_plain_list only where the probe
    read a plain list or tuple in `heads` (heads missing from the parameters may also never have been built, or sit
    in a dict); where the module has no `heads` but registers something, told to keep them there; said to be
    registered under other names where `registered` (its parameters' and buffers' names) holds some under heads.
    (an nn.ModuleDict keyed "head0", ...)."""
    if data.get("heads_type") in ("list", "tuple"):
        return Verdict(False, "contract.heads_not_registered", misconception="heads_plain_list",
                       evidence=Evidence.FACT)
    if (elsewhere := heads_elsewhere(data, registered)) is not None:
        return elsewhere
    named = sorted(name for name in registered if name.startswith("heads."))
    if named:
        return Verdict(False, "contract.heads_named_otherwise", {"name": named[0]})
    return Verdict(False, "contract.heads_not_registered")


def heads_elsewhere(data: StructureRecord | ContractDeviceRecord, registered: Collection[str]) -> Verdict | None:
    """Stacked heads the module keeps under no `heads` at all while it registers parameters or buffers: they may
    well be registered, under another name (12r's rz-mw-11: an nn.ModuleList in self.attn_heads), so never "not
    registered"; told in the wrapper's own words, one message on every check that reads them. None otherwise."""
    if data.get("heads_type") == "NoneType" and registered:
        return Verdict(False, "mha_wrapper.no_heads")
    return None


def unregistered_head(name: str, registered: Collection[str]) -> bool:
    """Whether `name` belongs to a head (heads.<i>.) of which nothing is registered: heads kept in a plain list."""
    parts = name.split(".")
    if parts[0] != "heads" or len(parts) < 3:
        return False
    return not any(other.startswith(f"heads.{parts[1]}.") for other in registered)


def judge_device(spec: ModuleSpec, record: ContractDeviceRecord, case: ContractCase,
                 expectations: Expectations) -> Verdict:
    device = record["device"]
    if (too_few := fewer_heads(spec, record, case)) is not None:
        return too_few
    registered = record["parameters"] + record["buffers"]
    if any(name.startswith("heads.") for name in record["masks"]) and (
            elsewhere := heads_elsewhere(record, registered)) is not None:
        return elsewhere
    for name, present in record["masks"].items():
        if not present:
            return Verdict(False, "contract.mask_missing", {"name": name})
    registered = record["parameters"] + record["buffers"]
    for name in record["masks"]:
        if name in record["parameters"]:
            continue  # a mask registered as a parameter moves with the module: the structure check names it
        if unregistered_head(name, registered):
            return heads_not_registered(record, registered)
        left_behind = record["mask_devices"][name] != device
        still_float32 = record["mask_dtypes"][name] in ("float16", "bfloat16", "float32")
        if name not in record["buffers"] or left_behind or still_float32:
            return Verdict(False, "contract.mask_plain_attribute", {"name": name, "device": device},
                           misconception="mask_plain_attribute", evidence=Evidence.FACT)
        if name not in record["state_dict"]:
            return Verdict(False, "contract.mask_not_saved", {"name": name}, misconception="mask_not_persistent",
                           evidence=Evidence.FACT)
    error = record.get("forward_error")
    # The meta device has no values: an op that needs them (.item(), printing numbers) fails there only.
    # A CPU tensor mixed into the work on the device is a fact the probe saw (DeviceMixWatch), raised or not.
    # Said per module: the buffer the advice points to exists only where the module has a mask (issue 58).
    on_cpu = "tensor_created_on_cpu" if record["masks"] else "forward_tensor_on_cpu"
    # Named only where the CPU tensor was created during this call: a tensor kept on the module from an earlier
    # call is on the CPU for another reason, which the name's sentence would misstate (issue 58).
    named, evidence = (on_cpu, Evidence.FACT) if record.get("mixed_created") else (None, None)
    if record.get("to_cpu"):  # on meta the copy raises as a read of values would: it is a fact all the same
        return Verdict(False, "contract.moved_to_cpu", {"device": device})
    if record.get("mixed") and named is None and record.get("mixed_kept"):  # state kept from an earlier call
        return Verdict(False, "contract.tensor_kept_on_cpu", {"device": device, "op": record["mixed_kept"][0]})
    if error is not None and (device != "meta" or "device" in error["message"]):
        # "Tensors made inside forward stay on the CPU" is said only where the probe saw one made during this call:
        # a tensor kept from an earlier call (in a list, say) fails here too, for another reason (issue 58).
        key = "contract.forward_failed_on_device" if named else "contract.forward_failed_on_device_unplaced"
        return Verdict(False, key,
                       {"device": device, "type": error["type"], "detail": error["message"][:160]},
                       misconception=named, evidence=evidence)
    if record.get("mixed"):
        return Verdict(False, "contract.tensor_on_cpu", {"device": device, "op": record["mixed"][0]},
                       misconception=named, evidence=evidence)
    if error is None and "output_type" in record:
        return Verdict(False, "error.wrong_type", {"got": record["output_type"]})
    got_shape, expected_shape = tuple(record.get("output_shape", ())), output_shape(spec, case)
    if error is None and got_shape != expected_shape:
        # The shapes are fields, as a value check's "shape.wrong" has them: an output wrong in the same axes there
        # is one cause, told under that row (autograder.checking.feedback.rows).
        return Verdict(False, "contract.output_shape_on_device",
                       {"device": device, "got_shape": got_shape, "expected_shape": expected_shape})
    if error is None and record.get("output_device") != device:
        return Verdict(False, "contract.output_on_device", {"device": device})
    return Verdict(True)


def judge_properties(spec: ModuleSpec, record: PropertiesRecord, case: ContractCase,
                     expectations: Expectations) -> Verdict:
    got = record["output"]
    expected_shape = output_shape(spec, case)
    if tuple(got.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": expected_shape})
    if not torch.equal(record["input_after"], module_input(spec, case)):
        return Verdict(False, "contract.input_modified")
    if spec.batched:
        for index, alone in enumerate(record["one_by_one"]):
            if tuple(alone.shape) != (1, *expected_shape[1:]) or not same(alone[0], got[index]):
                return _sample_alone_verdict(alone, got[index], index, expected_shape)
    if spec.causal:
        seen = case["position"] + 1
        if tuple(record["future_changed"].shape) != expected_shape or not same(
                record["future_changed"][:, :seen], got[:, :seen], atol=1e-6, rtol=1e-5):
            return Verdict(False, "contract.future_leaks", {"position": case["position"]})
    gradients = record["gradients"]
    for name in parameter_shapes(spec, case):
        if name.endswith("W_key.bias") or name not in gradients:
            # W_key.bias adds q·b to a whole row of scores: the softmax cancels it, its gradient is 0 by right. A
            # parameter that is not there at all is the structure check's to count.
            continue
        size = gradients.get(name)
        if size is None or size == 0:
            # Built with dropout 0, a module whose layers drop at another rate may zero its whole output while
            # training: no gradient then proves neither an unused parameter nor a cut graph.
            return other_rate(record.get("rates", []), 0.0) or gradient_missing(
                name, record.get("output_depends", {}).get(name),
                record.get("read_in_graph", {}).get(name) is True and output_right(record, expectations["gradients"]))
        if not math.isfinite(size):
            return Verdict(False, "contract.gradient_not_finite", {"name": name})
    return gradients_verdict(record, expectations["gradients"])


def gradients_verdict(record: PropertiesRecord, reference: dict[str, Any] | None) -> Verdict:
    """The gradients one backward pass gave the input and every parameter against the reference's for the same
    weights and mix (`reference`: variants.reference_gradients; None where the module's parameters are not the
    promised ones, which the structure check counts). Judged only where the output is the reference's: a wrong
    output is the value checks' to explain."""
    backward = record.get("backward")
    if reference is None or backward is None or not same(backward["output"], reference["output"]):
        return Verdict(True)
    return module_gradient_problem(backward, reference) or Verdict(True)


def other_rate(rates: Collection[float], asked: float) -> Verdict | None:
    """A failure naming nothing when a dropout layer of the module drops at another rate than the one it was built
    with (an argument passed on in another's place): what dropout or the gradients then do is that rate's doing."""
    wrong = [rate for rate in rates if not math.isclose(rate, asked, abs_tol=1e-9)]
    if not wrong:
        return None
    fields = {"got": f"{wrong[0]:g}", "expected": f"{asked:g}"}
    if all(rate == 0 for rate in wrong):  # the layers kept at 0: the rate never passed on: it drops nothing
        return Verdict(False, "contract.dropout_layer_rate", fields, misconception="dropout_missing",
                       evidence=Evidence.FACT)
    return Verdict(False, "contract.dropout_layer_rate", fields)


def output_right(record: PropertiesRecord, reference: dict[str, Any] | None) -> bool:
    """Whether the backward pass's output is the reference's for the same weights (gradients_verdict's premise)."""
    backward = record.get("backward")
    return reference is not None and backward is not None and same(backward["output"], reference["output"])


def gradient_missing(name: str, output_depends: bool | None, step_cut: bool = False) -> Verdict:
    """No gradient reaches parameter `name`: unused when the output does not change with it (a forgotten out_proj is
    its own mistake), cut from the graph when it does; None: not measured, nothing named. `step_cut`: forward reads
    the parameter itself inside the graph and its output is right, so the cut is on a step computed from it, not on
    the parameter: that step's mistake is named, not the parameter's (the learner's run proves which one)."""
    if output_depends is False:
        mistake = "missing_out_proj" if name.startswith("out_proj.") else "parameter_unused"
        return Verdict(False, "contract.parameter_unused", {"name": name}, misconception=mistake,
                       evidence=Evidence.FACT)
    if output_depends and step_cut:
        return Verdict(False, "contract.no_gradient_downstream", {"name": name},
                       misconception="forward_step_detached", evidence=Evidence.FACT)
    if output_depends:
        return Verdict(False, "contract.no_gradient", {"name": name}, misconception="parameter_detached",
                       evidence=Evidence.FACT)
    return Verdict(False, "contract.no_gradient", {"name": name})


def state_change(before: State, after: State,
                 parameters: Collection[str] = ()) -> tuple[str, dict[str, Any]] | None:
    """(message key, fields) for the first parameter or buffer a forward pass changed, or None; a parameter of
    `parameters` whose values changed is named as a parameter (a forward that trains or zeroes its own weights)."""
    for name in sorted(set(before) | set(after)):
        if name not in after:
            return "contract.state_removed", {"name": name}
        if name not in before:
            return "contract.state_added", {"name": name}
        old, new = before[name], after[name]
        if tuple(old.shape) != tuple(new.shape):
            return "contract.state_reshaped", {"name": name, "before": tuple(old.shape), "after": tuple(new.shape)}
        if old.dtype != new.dtype:
            # The observed fact only: how forward came to change it (rebinding, .to(), an edit) is not read (issue 58).
            return "contract.state_retyped", {"name": name, "before": str(old.dtype).removeprefix("torch."),
                                              "after": str(new.dtype).removeprefix("torch.")}
        if not torch.equal(old, new) and not (
                old.is_floating_point() and torch.allclose(old, new, rtol=0, atol=0, equal_nan=True)):
            key = "contract.parameter_rewritten" if name in parameters else "contract.state_rewritten"
            return key, {"name": name}
    return None


def judge_state(spec: ModuleSpec, record: StateRecord, case: ContractCase, expectations: Expectations) -> Verdict:
    changed = state_change(record["before"], record["after"], record.get("parameter_names", ()))
    if changed is not None:
        key, fields = changed
        # Said per module: only those with a mask hold buffers the advice may speak of (issue 58).
        named = "state_changed_by_forward" if spec.causal else "parameters_changed_by_forward"
        return Verdict(False, key, fields, misconception=named, evidence=Evidence.FACT)
    lengths = case["lengths"]
    calls = zip(lengths, record["outputs"], record["call_errors"], record["fresh_outputs"], strict=True)
    for tokens, got, error, fresh in calls:
        if error is not None:
            return Verdict(False, "contract.later_call_failed",
                           {"tokens": tokens, "first_tokens": lengths[0], "type": error["type"]})
        # A call without an error has an output.
        if tuple(got.shape) != tuple(fresh.shape) or not same(got, fresh):  # type: ignore[union-attr]
            return Verdict(False, "contract.later_call_differs", {"tokens": tokens, "first_tokens": lengths[0]})
    repeated = record.get("repeated")
    if repeated is None or not same(repeated, record["outputs"][0]):
        return Verdict(False, "contract.repeat_differs", {"tokens": lengths[0]})
    if "reload_error" in record:
        error = record["reload_error"]
        return Verdict(False, "contract.state_dict_reload",
                       {"type": error["type"], "detail": " ".join(str(error["message"]).split())[:160]})
    if not same(record["reloaded"], record["outputs"][0]):
        return Verdict(False, "contract.state_dict_differs")
    return Verdict(True)


ContractJudge = Callable[[ModuleSpec, Any, ContractCase, Expectations], Verdict]  # each takes its own record


CONTRACT_JUDGES: dict[str, ContractJudge] = {"structure": judge_structure, "modes": judge_modes, "device": judge_device,
                   "properties": judge_properties, "state": judge_state}


def contract_judge(property_name: str, exercise_id: str, record: ContractRecord, case: ContractCase,
                   expectations: Expectations) -> Verdict:
    """The judge of one contract property for one module exercise."""
    return CONTRACT_JUDGES[property_name](SPECS_BY_EXERCISE[exercise_id], record, case, expectations)


def _sample_alone_verdict(alone: Tensor, in_batch: Tensor, index: int, expected_shape: tuple[int, ...]) -> Verdict:
    """A sample run alone that differs from its row of the batch's output: "samples see each other" only where the
    numbers differ; the same numbers under another shape (a batch axis squeezed away, say) are said as such, since
    the samples did not mix (issue 58)."""
    if alone.numel() == in_batch.numel() and same(alone.reshape(in_batch.shape), in_batch):
        return Verdict(False, "contract.sample_reshaped_alone", {
            "sample": index, "got_shape": tuple(alone.shape), "expected_shape": (1, *expected_shape[1:])})
    return Verdict(False, "contract.batch_mixed", {"sample": index})
