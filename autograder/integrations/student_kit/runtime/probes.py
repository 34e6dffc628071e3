"""The student-side half of each stored public check: call the student's code on stored inputs.

One probe per kind of check, each doing what the live probe of that check does (autograder.course.checks.*), with
inputs and weights read from the stored case instead of built from a seed. Inputs are cloned before every
call: student code that changes its input in place must not change the stored case. Probes return plain
data only, like the live ones, so the same judges' logic applies.
"""

import torch
from torch import nn

from autograder.checking.judging import PROJECTIONS
from autograder.checking.probing import (
    LinearProjections,
    ParameterProjections,
    ProbeError,
    TransposeCrash,
    as_count,
    call_watched,
    called_functions,
    counted_module,
    describe_exception,
    forbidden_calls,
    head_outputs,
    input_unchanged,
    lookup,
    plain,
    seeded,
    state_of,
    takes_attention_mask,
)
from autograder.integrations.student_kit.runtime.loading import load_stored_weights, parameter_shapes
from autograder.integrations.student_kit.runtime.tensors import DTYPES

ATTENTION_FUNCTIONS = frozenset(
    {"scaled_dot_product_attention", "multi_head_attention_forward", "custom_op", "disabled_torch_modes"}
)


def stored_input(case, name="x"):
    return case["stored"]["inputs"][name].clone()


def dtype_of(case):
    return DTYPES[case.get("dtype", "float32")]


def probe_softmax(namespace, case):
    softmax = lookup(namespace, case["stored"]["name"])
    x = stored_input(case)
    original = x.clone()
    args = (x,) if "dim" not in case else (x, case["dim"])
    output, calls = called_functions(softmax, *args)
    return {"output": plain(output), "calls": calls, "input_changed": not torch.equal(x, original)}


def probe_context_vectors(namespace, case):
    context_vectors = lookup(namespace, "context_vectors")
    inputs = stored_input(case)
    original = inputs.clone()
    output = plain(context_vectors(inputs))
    return {"output": output, "input_changed": not torch.equal(inputs, original)}


def probe_self_attention(namespace, case):
    attention_class = lookup(namespace, case["stored"]["name"])
    args = (case["d_in"], case["d_out"]) + ((case["qkv_bias"],) if "qkv_bias" in case else ())
    with seeded(case["init_seed"]):
        module = attention_class(*args)
    module = module.double() if dtype_of(case) == torch.float64 else module
    shapes = parameter_shapes(module)
    load_stored_weights(module, case["stored"]["weights"])
    return {"output": plain(module(stored_input(case))), "shapes": shapes}


def run_transfer(load, weights):
    sa_v1, sa_v2 = ParameterProjections(weights["v1"]), LinearProjections(weights["v2"])
    returned = load(sa_v1, sa_v2)
    kind = "sa_v1" if returned is sa_v1 else "None" if returned is None else type(returned).__name__
    return {"v1": state_of(sa_v1), "v2": state_of(sa_v2), "returned": kind}


def probe_transfer(namespace, case):
    load = lookup(namespace, "load_v2_weights_into_v1")
    inputs = case["stored"]["inputs"]
    try:
        return run_transfer(load, inputs["given"])
    except RuntimeError as exc:
        # Copying weight without .T only fails for d_in != d_out; on a square pair it runs, and shows.
        if case["d_in"] == case["d_out"]:
            raise
        try:
            square = run_transfer(load, inputs["square"])
        except Exception:  # the first exception is the one to report
            raise exc from None
        return {"raised": describe_exception(exc), "square": square}


def probe_causal_mask(namespace, case):
    causal_mask = lookup(namespace, "causal_mask")
    return {"mask": plain(causal_mask(case["num_tokens"]))}


def probe_causal_weights(namespace, case):
    route = lookup(namespace, case["stored"]["name"])
    return {"weights": plain(route(stored_input(case)))}


def probe_causal_attention(namespace, case):
    try:
        causal_attention = lookup(namespace, "CausalAttention")
        with seeded(case["stored"]["init_seed"]):
            if case.get("input") == "notes":  # exactly the notes' call, as the live check makes it
                module = causal_attention(case["d_in"], case["d_out"], case["context_length"], 0.0)
            else:
                module = causal_attention(case["d_in"], case["d_out"], case["context_length"], 0.0,
                                          qkv_bias=case["qkv_bias"])
        module = module.to(dtype_of(case))
        shapes = parameter_shapes(module)
        for name in PROJECTIONS:
            if f"{name}.weight" not in shapes:
                raise ProbeError("causal_attention.missing_layer", name=name)
        load_stored_weights(module, case["stored"]["weights"])
        output, watch = call_watched(module, stored_input(case))
    except TransposeCrash:
        return {"transpose_crash": True}
    return {"output": plain(output), "transpose_batched": watch.batched_transpose,
            "forbidden": forbidden_calls(watch.names, ATTENTION_FUNCTIONS)}


def probe_wrapper(namespace, case):
    wrapper_class = lookup(namespace, "MultiHeadAttentionWrapper")
    with seeded(case["seed"]):
        wrapper = wrapper_class(case["d_in"], case["d_out"], case["context_length"], 0.0,
                                num_heads=case["num_heads"], qkv_bias=case["qkv_bias"])
    heads = getattr(wrapper, "heads", None)
    structure = {"heads_type": type(heads).__name__}
    if not isinstance(heads, nn.ModuleList):
        return structure  # unregistered heads miss .to(dtype) and crash later: the structure alone decides
    structure.update(head_count=len(heads), distinct_heads=len({id(head) for head in heads}))
    wrapper = wrapper.to(dtype_of(case))
    shapes = parameter_shapes(wrapper)
    load_stored_weights(wrapper, case["stored"]["weights"])
    x = stored_input(case)
    return {**structure, "out": plain(wrapper(x)), "shapes": shapes, "head_outputs": head_outputs(heads, x)}


def probe_split_heads(namespace, case):
    split_heads = lookup(namespace, "split_heads")
    out, kept = input_unchanged(stored_input(case), lambda x: split_heads(x, case["num_heads"]))
    return {"out": plain(out), "input_kept": kept}


def probe_merge_heads(namespace, case):
    merge_heads = lookup(namespace, "merge_heads")
    out, kept = input_unchanged(stored_input(case), merge_heads)
    return {"out": plain(out), "input_kept": kept}


def probe_multi_head_attention(namespace, case):
    mha_class = lookup(namespace, "MultiHeadAttention")
    with seeded(case["seed"]):
        module = mha_class(case["d_in"], case["d_out"], case["context_length"], 0.0, case["num_heads"],
                           qkv_bias=case["qkv_bias"])
    module = module.to(dtype_of(case))
    shapes = parameter_shapes(module)
    load_stored_weights(module, case["stored"]["weights"])
    mask = case["stored"]["inputs"].get("attention_mask")

    def call(x):
        if mask is None:
            return module(x)
        if not takes_attention_mask(module.forward):
            raise ProbeError("padding_mask.no_argument")
        return module(x, attention_mask=mask.clone())

    out, kept = input_unchanged(stored_input(case), call)
    return {"out": plain(out), "shapes": shapes, "input_kept": kept}


class StandInMultiHeadAttention(nn.Module):
    """What to_torch_multihead reads from a MultiHeadAttention, holding the stored case's weights."""

    def __init__(self, case):
        super().__init__()
        d_model, dtype, weights = case["d_model"], dtype_of(case), case["stored"]["weights"]
        d_in = case.get("d_in", d_model)
        self.d_out = d_model
        self.num_heads = case["num_heads"]
        self.head_dim = d_model // case["num_heads"]
        for name in PROJECTIONS:
            setattr(self, name, nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype))
        self.out_proj = nn.Linear(d_model, d_model, dtype=dtype)
        self.dropout = nn.Dropout(case["dropout"])
        self.register_buffer("mask", case["stored"]["inputs"]["mask"].to(dtype))
        with torch.no_grad():
            for name, value in weights.items():
                self.get_parameter(name).copy_(value)


def probe_torch_equivalence(namespace, case):
    to_torch_multihead = lookup(namespace, "to_torch_multihead")
    with seeded(case["seed"]):  # nn.MultiheadAttention's own initialisation draws from the RNG too
        ours = StandInMultiHeadAttention(case)
        theirs = to_torch_multihead(ours)
    if not isinstance(theirs, nn.MultiheadAttention):
        raise ProbeError("torch_equivalence.not_multihead", got=type(theirs).__module__ + "." + type(theirs).__name__)
    data = {
        "batch_first": bool(theirs.batch_first),
        "embed_dim": int(theirs.embed_dim),
        "num_heads": int(theirs.num_heads),
        "dropout": float(theirs.dropout),
        "dtype": str(theirs.out_proj.weight.dtype),
        "state": state_of(theirs),
    }
    runnable = data["batch_first"] and data["dtype"] == str(dtype_of(case))
    if runnable and (data["embed_dim"], data["num_heads"]) == (case["d_model"], case["num_heads"]):
        theirs.eval()  # dropout is compared as a setting; the output is compared without it
        x = stored_input(case)
        with torch.no_grad():
            data["out"] = plain(theirs(x, x, x, attn_mask=stored_input(case, "attn_mask"), need_weights=False)[0])
    return data


def probe_parameter_counts(namespace, case):
    count_parameters = lookup(namespace, "count_parameters")
    return {"count": as_count(count_parameters(counted_module(case)))}


PROBES = {
    "softmax": probe_softmax,
    "context_vectors": probe_context_vectors,
    "self_attention": probe_self_attention,
    "transfer_weights": probe_transfer,
    "causal_mask": probe_causal_mask,
    "causal_weights": probe_causal_weights,
    "causal_attention": probe_causal_attention,
    "mha_wrapper": probe_wrapper,
    "split_heads": probe_split_heads,
    "merge_heads": probe_merge_heads,
    "multi_head_attention": probe_multi_head_attention,
    "torch_equivalence": probe_torch_equivalence,
    "parameter_counts": probe_parameter_counts,
}
