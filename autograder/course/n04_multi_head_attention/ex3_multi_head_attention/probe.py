"""Probes of MultiHeadAttention and its padding mask: run the student's objects on a case and return plain data. Imports
no reference, judge or declaration: the grading child holds it."""

from collections.abc import Callable
from functools import partial
from typing import Any, TypedDict

import torch
from torch import Tensor, nn

from autograder.checking.probing import (
    InputChange,
    ModuleGradients,
    ProbeError,
    arguments_changes,
    gradient_weights,
    informative_queries,
    kept_if_raised,
    layer_inputs,
    lookup,
    module_gradients,
    plain,
    rand,
    renamed_mask_argument,
    seeded,
    state_of,
    takes_attention_mask,
)
from autograder.checking.torch_recorders import FunctionCalls, MatmulCount, Origins, UntrackedEdits
from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import (
    MultiHeadCase,
    attention_input,
)
from autograder.course.shared.inputs import DTYPES
from autograder.course.shared.loading import load_case_weights
from autograder.course.shared.records import Namespace, State

__all__ = [
    "BUILTIN_ATTENTION", "HeadIndependenceRecord", "MultiHeadRecord", "VectorisedRecord", "padding_mask",
    "padding_mix", "probe_mha", "probe_mha_heads", "unmasked_mix",
]


class MultiHeadRecord(TypedDict, total=False):
    out: Tensor
    state: State
    inputs_changed: list[InputChange]  # what forward changed of x and of the attention_mask it was handed
    weights_seen: Tensor  # what self.dropout received: the heads' attention weights, when forward applies it there
    merged_seen: Tensor  # what self.out_proj received: the merged heads
    # With a padding mask: one backward pass through a fresh module with the mask (padding_mix), and one without it,
    # so that the padding step's own gradients are told from the rest of forward's.
    backward: ModuleGradients
    backward_unmasked: ModuleGradients
    # The in-place ops of that forward with the mask that wrote into a tensor of autograd's graph unrecorded
    # (gradients switched off, or through `.data`): torch_recorders.UntrackedEdits.
    untracked_edits: list[str]


class HeadIndependenceRecord(TypedDict, total=False):
    before: Tensor
    after: Tensor
    # Before any change of W_query: the module's state before and after the first call, and a second call's output.
    # A forward that edits its own state (or gives another output call to call) changes every head's output with
    # no head's weights changed: that is not heads mixed, and the judge must not read it so.
    state_before: State
    state_after: State
    parameter_names: list[str]
    repeated: Tensor
    # What forward passed to out_proj on the calls before and after the change, where it called out_proj once per
    # call with one tensor: heads mixed only after out_proj are not mixed "before out_proj" (issue 58).
    out_proj_before: Tensor
    out_proj_after: Tensor


class VectorisedRecord(TypedDict):
    matmuls: list[int]
    builtins: list[str]


def padding_mask(case: MultiHeadCase) -> Tensor | None:
    """attention_mask (batch, num_tokens): 1 for a real token, 0 for padding; None when the case has none."""
    rows = case.get("attention_mask")
    return None if rows is None else torch.tensor(rows, dtype=torch.long)


# Any: the student's object, read by the attributes the exercise names (out_proj, W_query), which no type promises.
def build_student_mha(namespace: Namespace, case: MultiHeadCase, **overrides: Any) -> Any:
    mha_class = lookup(namespace, "MultiHeadAttention")
    spec: dict[str, Any] = {**case, **overrides}
    with seeded(spec["seed"]):
        module = mha_class(spec["d_in"], spec["d_out"], spec["context_length"], 0.0, spec["num_heads"],
                           qkv_bias=spec["qkv_bias"])
    return load_case_weights(module.to(DTYPES[spec["dtype"]]), spec)


def call_mha(module: nn.Module, x: Tensor, case: MultiHeadCase, mask: Tensor | None = None) -> Any:
    """module(x), with the case's padding mask as attention_mask when it has one (`mask`: that very tensor, made by
    padding_mask, when the caller reads it again after the call)."""
    mask = padding_mask(case) if mask is None else mask
    if mask is None:
        return module(x)
    if not takes_attention_mask(module.forward):
        renamed = renamed_mask_argument(module.forward)
        if renamed:  # the padding step may be there, under a keyword the call does not use
            raise ProbeError("padding_mask.renamed_argument", name=renamed)
        raise ProbeError("padding_mask.no_argument")
    return module(x, attention_mask=mask)


def probe_mha(namespace: Namespace, case: MultiHeadCase) -> MultiHeadRecord:
    module = build_student_mha(namespace, case)
    state = state_of(module)  # before the call: expected values come from the weights it started with
    with kept_if_raised(state=state), layer_inputs(module, "dropout", "out_proj") as seen:
        x, mask = attention_input(case), padding_mask(case)
        handed = {"x": x} if mask is None else {"x": x, "attention_mask": mask}
        out, changed = arguments_changes(handed, lambda: call_mha(module, x, case, mask))
    data: MultiHeadRecord = {"out": plain(out), "state": state, "inputs_changed": changed}
    if "dropout" in seen:
        data["weights_seen"] = seen["dropout"]
    if "out_proj" in seen:
        data["merged_seen"] = seen["out_proj"]
    if padding_mask(case) is not None:
        # The padding step is part of forward too: the gradients through it, and without it, on fresh modules.
        fresh, edits = build_student_mha(namespace, case), UntrackedEdits()
        forward = edits.watching(lambda x: call_mha(fresh, x, case))
        data["backward"] = module_gradients(fresh, attention_input(case), forward, partial(padding_mix, case),
                                            call_on=lambda twin: lambda x: call_mha(twin, x, case))
        data["untracked_edits"] = sorted(set(edits.ops))
        unmasked = build_student_mha(namespace, case)
        data["backward_unmasked"] = module_gradients(unmasked, attention_input(case), unmasked, unmasked_mix)
    return data


def unmasked_mix(output: Tensor) -> Tensor:
    """The mix of the outputs whose gradients a padding case compares without the mask: every query."""
    return gradient_weights(output.shape)


def padding_mix(case: MultiHeadCase, output: Tensor) -> Tensor:
    """The mix of the outputs whose gradients a padding case compares: the queries that see a real token only (a
    query that sees nothing but padding may output anything finite, so its gradient may be anything too); the judge's
    side rebuilds it from the case."""
    shown, mix = informative_queries(padding_mask(case), output), gradient_weights(output.shape)
    if tuple(output.shape[:shown.dim()]) != tuple(shown.shape):
        return mix  # an output of another shape: its values already fail, its gradients are not compared
    return mix * shown.reshape(*shown.shape, *([1] * (output.dim() - shown.dim())))


def probe_head_independence(namespace: Namespace, case: MultiHeadCase) -> HeadIndependenceRecord:
    """With out_proj set to the identity, the output is the merged heads: perturb one head's W_query rows."""
    module = build_student_mha(namespace, case)
    x = attention_input(case)
    head, head_dim = case["head"], case["d_out"] // case["num_heads"]
    rows = slice(head * head_dim, (head + 1) * head_dim)
    with torch.no_grad():
        module.out_proj.weight.copy_(torch.eye(case["d_out"], dtype=x.dtype))
        if module.out_proj.bias is not None:
            module.out_proj.bias.zero_()
        # Each call gets its own copy of x: a forward that edits its input is the value checks' to name, and must
        # not read here as one head's change reaching another.
        state_before = state_of(module)
        before, into_before = _with_out_proj_input(module, x.clone())
        state_after = state_of(module)
        repeated = plain(module(x.clone()))
        module.W_query.weight[rows] += rand(case["seed"] + 3, head_dim, case["d_in"], dtype=x.dtype)
        after, into_after = _with_out_proj_input(module, x.clone())
    record: HeadIndependenceRecord = {
        "before": before, "after": after, "state_before": state_before, "state_after": state_after,
        "parameter_names": [name for name, _ in module.named_parameters()], "repeated": repeated}
    if into_before is not None and into_after is not None:
        record["out_proj_before"], record["out_proj_after"] = into_before, into_after
    return record


def _with_out_proj_input(module: nn.Module, x: Tensor) -> tuple[Tensor, Tensor | None]:
    """The module's output on x, and the one tensor forward passed to out_proj (None unless out_proj is a module
    called exactly once, on one tensor)."""
    seen: list[Tensor | None] = []
    out_proj = getattr(module, "out_proj", None)

    def record_input(_layer: nn.Module, args: tuple[object, ...]) -> None:
        seen.append(args[0].detach().clone() if len(args) == 1 and isinstance(args[0], Tensor) else None)

    handle = out_proj.register_forward_pre_hook(record_input) if isinstance(out_proj, nn.Module) else None
    try:
        output = plain(module(x))
    finally:
        if handle is not None:
            handle.remove()
    return output, seen[0] if len(seen) == 1 else None


# As FunctionCalls records them (aliases folded in, torch_recorders.OP_FAMILIES); torch_recorders.CUSTOM_OP and
# torch_recorders.MODES_OFF.
BUILTIN_ATTENTION = frozenset(
    {"scaled_dot_product_attention", "multi_head_attention_forward", "custom_op", "disabled_torch_modes"}
)


def probe_vectorised(namespace: Namespace, case: MultiHeadCase) -> VectorisedRecord:
    matmuls, builtins = [], set()
    for num_heads in (case["num_heads"], case["more_heads"]):
        module = build_student_mha(namespace, case, num_heads=num_heads)
        if any(isinstance(child, nn.MultiheadAttention) for child in module.modules()):
            builtins.add("nn.MultiheadAttention")
        x = attention_input(case)
        with FunctionCalls(Origins(module, x)) as calls, MatmulCount() as counter:
            output = module(x)
        calls.result_checked(output)  # a tensor no recorder saw made (a thread, a redispatch): MODES_OFF
        matmuls.append(counter.count)
        builtins.update(name for name in calls.names if name.rsplit(".", 1)[-1] in BUILTIN_ATTENTION)
    return {"matmuls": matmuls, "builtins": sorted(builtins)}


MultiHeadHeadsRecord = HeadIndependenceRecord | VectorisedRecord
HEADS_PROBES: dict[str, Callable[[Namespace, MultiHeadCase], MultiHeadHeadsRecord]] = {
    "heads": probe_head_independence, "vectorised": probe_vectorised}


def probe_mha_heads(namespace: Namespace, case: MultiHeadCase) -> MultiHeadHeadsRecord:
    return HEADS_PROBES[case["kind"]](namespace, case)
