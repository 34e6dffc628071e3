"""Probes of notebook 04 (the wrapper, split_heads/merge_heads, MultiHeadAttention and its padding mask, the
nn.MultiheadAttention conversion, counting parameters). The judges are in
autograder.course.checks.n04_multi_head_attention.
"""


import torch
from torch import nn

from autograder.checking.probing import (
    PROJECTIONS,
    FunctionCalls,
    MatmulCount,
    Origins,
    ProbeError,
    as_count,
    counted_module,
    gradient_flow,
    head_outputs,
    input_unchanged,
    layer_inputs,
    lookup,
    plain,
    rand,
    renamed_mask_argument,
    seeded,
    state_of,
    takes_attention_mask,
)
from autograder.course.probes.cases import (
    CountCase,
    EquivalenceCase,
    HeadsCase,
    MultiHeadCase,
    Namespace,
    TwoDimensionalCase,
)
from autograder.course.probes.inputs import DTYPES, notes_batch
from autograder.course.probes.loading import load_case_weights
from autograder.course.probes.records import (
    CountRecord,
    EquivalenceRecord,
    HeadIndependenceRecord,
    HeadsRecord,
    MultiHeadRecord,
    TwoDimensionalRecord,
    VectorisedRecord,
    WrapperRecord,
)

MHA_LAYERS = (*PROJECTIONS, "out_proj")


def attention_input(case: MultiHeadCase) -> torch.Tensor:
    """The (batch, num_tokens, d_in) input of an attention case: the notes' batch or a seeded random one."""
    if case.get("input") == "notes":
        return notes_batch()
    # seed + 1: the module's weights come from torch.manual_seed(seed), the same stream as rand(seed).
    return rand(case["seed"] + 1, case["batch"], case["num_tokens"], case["d_in"], dtype=DTYPES[case["dtype"]])


def padding_mask(case):
    """attention_mask (batch, num_tokens): 1 for a real token, 0 for padding; None when the case has none."""
    rows = case.get("attention_mask")
    return None if rows is None else torch.tensor(rows, dtype=torch.long)


def probe_wrapper(namespace: Namespace, case: MultiHeadCase) -> WrapperRecord:
    wrapper_class = lookup(namespace, "MultiHeadAttentionWrapper")
    with seeded(case["seed"]):
        wrapper = wrapper_class(case["d_in"], case["d_out"], case["context_length"], 0.0,
                                num_heads=case["num_heads"], qkv_bias=case["qkv_bias"])
    heads = getattr(wrapper, "heads", None)
    if not isinstance(heads, nn.ModuleList):
        # Unregistered heads miss .to(dtype) and crash later: the structure alone decides.
        return {"heads_type": type(heads).__name__}
    wrapper = load_case_weights(wrapper.to(DTYPES[case["dtype"]]), case)
    x = attention_input(case)
    state = state_of(wrapper)  # before the call: expected values come from the weights it started with
    return {"heads_type": type(heads).__name__, "head_count": len(heads),
            "distinct_heads": len({id(head) for head in heads}), "out": plain(wrapper(x)), "state": state,
            "head_outputs": head_outputs(heads, x)}


def split_input(case: HeadsCase) -> torch.Tensor:
    b, num_tokens, dtype = case["batch"], case["num_tokens"], DTYPES[case["dtype"]]
    d_out = case["num_heads"] * case["head_dim"]
    seed, layout = case["seed"], case["layout"]
    if layout == "arange":
        return torch.arange(b * num_tokens * d_out, dtype=dtype).view(b, num_tokens, d_out)
    if layout == "transposed":
        return rand(seed, b, d_out, num_tokens, dtype=dtype).transpose(1, 2)
    if layout == "sliced":
        return rand(seed, b, num_tokens, 2 * d_out, dtype=dtype)[..., ::2]
    if layout == "expanded":
        return rand(seed, 1, num_tokens, d_out, dtype=dtype).expand(b, num_tokens, d_out)
    return rand(seed, b, num_tokens, d_out, dtype=dtype)


def probe_split(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    split_heads = lookup(namespace, "split_heads")
    out, kept = input_unchanged(split_input(case), lambda x: split_heads(x, case["num_heads"]))
    return {"out": plain(out), "input_kept": kept,
            "gradient": gradient_flow(lambda x: split_heads(x, case["num_heads"]), split_input(case))[0]}


def merge_input(case: HeadsCase) -> torch.Tensor:
    """(b, num_heads, num_tokens, head_dim) input of merge_heads, laid out in memory as the case says.

    "attention": attn_weights @ values, contiguous as a forward pass produces it, so transposing it
    makes it non-contiguous; "split": a split of a (b, num_tokens, d_out) tensor, the round trip;
    "strided": a slice whose transpose is non-contiguous too.
    """
    b, num_heads, num_tokens, head_dim = (case[k] for k in ("batch", "num_heads", "num_tokens", "head_dim"))
    dtype, seed, layout = DTYPES[case["dtype"]], case["seed"], case["layout"]
    if layout == "arange":
        return torch.arange(b * num_heads * num_tokens * head_dim, dtype=dtype).view(b, num_heads, num_tokens, head_dim)
    if layout == "split":
        return round_trip_source(case).view(b, num_tokens, num_heads, head_dim).transpose(1, 2)
    if layout == "strided":
        return rand(seed, b, num_heads, num_tokens, 2 * head_dim, dtype=dtype)[..., ::2]
    queries, keys, values = (
        rand(seed + i, b, num_tokens, num_heads * head_dim, dtype=dtype).view(b, num_tokens, num_heads, head_dim)
        .transpose(1, 2)
        for i in range(3)
    )
    attn_weights = torch.softmax(queries @ keys.transpose(2, 3) / head_dim**0.5, dim=-1)
    return attn_weights @ values


def round_trip_source(case):
    d_out = case["num_heads"] * case["head_dim"]
    return rand(case["seed"], case["batch"], case["num_tokens"], d_out, dtype=DTYPES[case["dtype"]])


def probe_merge(namespace: Namespace, case: HeadsCase) -> HeadsRecord:
    merge_heads = lookup(namespace, "merge_heads")
    out, kept = input_unchanged(merge_input(case), merge_heads)
    return {"out": plain(out), "input_kept": kept, "gradient": gradient_flow(merge_heads, merge_input(case))[0]}


def build_student_mha(namespace, case, **overrides):
    mha_class = lookup(namespace, "MultiHeadAttention")
    spec = {**case, **overrides}
    with seeded(spec["seed"]):
        module = mha_class(spec["d_in"], spec["d_out"], spec["context_length"], 0.0, spec["num_heads"],
                           qkv_bias=spec["qkv_bias"])
    return load_case_weights(module.to(DTYPES[spec["dtype"]]), spec)


def call_mha(module, x, case):
    mask = padding_mask(case)
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
    with layer_inputs(module, "dropout", "out_proj") as seen:
        out, kept = input_unchanged(attention_input(case), lambda x: call_mha(module, x, case))
    data: MultiHeadRecord = {"out": plain(out), "state": state, "input_kept": kept}
    if "dropout" in seen:
        data["weights_seen"] = seen["dropout"]
    if "out_proj" in seen:
        data["merged_seen"] = seen["out_proj"]
    return data


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
        before = plain(module(x))
        module.W_query.weight[rows] += rand(case["seed"] + 3, head_dim, case["d_in"], dtype=x.dtype)
        after = plain(module(x))
    return {"before": before, "after": after}


# As FunctionCalls records them (aliases folded in, probing.OP_FAMILIES); probing.CUSTOM_OP and probing.MODES_OFF.
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


HEADS_PROBES = {"heads": probe_head_independence, "vectorised": probe_vectorised}


def probe_mha_heads(namespace, case):
    return HEADS_PROBES[case["kind"]](namespace, case)


def equivalence_weights(case: EquivalenceCase) -> dict[str, torch.Tensor]:
    """Seeded weights of the module handed to to_torch_multihead; the judge rebuilds them from the case."""
    d_model, dtype, seed = case["d_model"], DTYPES[case["dtype"]], case["seed"]
    d_in = case.get("d_in", d_model)
    weights = {}
    for index, layer in enumerate(MHA_LAYERS):
        fan_in = d_model if layer == "out_proj" else d_in
        weights[f"{layer}.weight"] = rand(seed + 10 + index, d_model, fan_in, dtype=dtype) * fan_in**-0.5
        if layer == "out_proj" or case["qkv_bias"]:
            weights[f"{layer}.bias"] = rand(seed + 20 + index, d_model, dtype=dtype) * 0.5
    return weights


def equivalence_input(case):
    return rand(case["seed"] + 1, case["batch"], case["num_tokens"], case["d_model"], dtype=DTYPES[case["dtype"]])


class StandInMultiHeadAttention(nn.Module):
    """What to_torch_multihead reads from a MultiHeadAttention, built from plain torch with the case's weights."""

    def __init__(self, case):
        super().__init__()
        d_model, dtype = case["d_model"], DTYPES[case["dtype"]]
        d_in = case.get("d_in", d_model)
        self.d_out = d_model
        self.num_heads = case["num_heads"]
        self.head_dim = d_model // case["num_heads"]
        self.W_query = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.W_key = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.W_value = nn.Linear(d_in, d_model, bias=case["qkv_bias"], dtype=dtype)
        self.out_proj = nn.Linear(d_model, d_model, dtype=dtype)
        self.dropout = nn.Dropout(case["dropout"])
        context_length = case["context_length"]
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=dtype), diagonal=1))
        with torch.no_grad():
            for name, value in equivalence_weights(case).items():
                self.get_parameter(name).copy_(value)


def probe_equivalence(namespace: Namespace, case: EquivalenceCase) -> EquivalenceRecord:
    to_torch_multihead = lookup(namespace, "to_torch_multihead")
    with seeded(case["seed"]):  # nn.MultiheadAttention's own initialisation draws from the RNG too
        ours = StandInMultiHeadAttention(case)
        if case.get("d_in", case["d_model"]) != case["d_model"]:
            return {"raised": raised_by(to_torch_multihead, ours)}
        theirs = to_torch_multihead(ours)
    if not isinstance(theirs, nn.MultiheadAttention):
        raise ProbeError("torch_equivalence.not_multihead", got=type(theirs).__module__ + "." + type(theirs).__name__)
    state = state_of(theirs)
    ours_memory = {parameter.untyped_storage().data_ptr() for parameter in ours.parameters()}
    data: EquivalenceRecord = {
        "shared": [name for name, parameter in theirs.named_parameters()
                   if parameter.untyped_storage().data_ptr() in ours_memory],
        "batch_first": bool(theirs.batch_first),
        "embed_dim": int(theirs.embed_dim),
        "num_heads": int(theirs.num_heads),
        "dropout": float(theirs.dropout),
        "dtype": str(theirs.out_proj.weight.dtype),
        "state": state,
    }
    runnable = data["batch_first"] and data["dtype"] == str(DTYPES[case["dtype"]])
    if runnable and (data["embed_dim"], data["num_heads"]) == (case["d_model"], case["num_heads"]):
        theirs.eval()  # dropout is compared as a setting; the output is compared without it
        x = equivalence_input(case)
        future = torch.triu(torch.ones(case["num_tokens"], case["num_tokens"], dtype=torch.bool), diagonal=1)
        with torch.no_grad():
            data["out"] = plain(theirs(x, x, x, attn_mask=future, need_weights=False)[0])
    return data


def raised_by(function, argument):
    """The name of the exception function(argument) raised, or None: here raising is the right answer."""
    try:
        function(argument)
    except Exception as exc:  # noqa: BLE001 - which exception it was is the answer being checked
        return type(exc).__name__
    return None


def probe_two_dimensional(namespace: Namespace, case: TwoDimensionalCase) -> TwoDimensionalRecord:
    """Build the student's exercise-3.2 wrapper and read its heads' sizes (its output is exercise 04-1's to get
    right)."""
    build = lookup(namespace, "two_dimensional_wrapper")
    with seeded(case["seed"]):
        wrapper = build(case["d_in"], case["context_length"], case["dropout"])
    record: TwoDimensionalRecord = {"type": type(wrapper).__name__}
    heads = getattr(wrapper, "heads", None)
    if not isinstance(wrapper, nn.Module) or not isinstance(heads, nn.ModuleList):
        return record
    record["head_count"] = len(heads)
    # Each size is read only when every head has the layer: a head of another kind leaves it out of the record.
    queries = [layer for head in heads if isinstance(layer := getattr(head, "W_query", None), nn.Linear)]
    if len(queries) == len(heads):
        record["head_in_features"] = [layer.in_features for layer in queries]
        record["head_out_features"] = [layer.out_features for layer in queries]
    dropouts = [layer for head in heads if isinstance(layer := getattr(head, "dropout", None), nn.Dropout)]
    if len(dropouts) == len(heads):
        record["head_dropout"] = [float(layer.p) for layer in dropouts]
    masks = [mask for head in heads
             if isinstance(mask := getattr(head, "mask", None), torch.Tensor) and mask.dim() == 2]
    if len(masks) == len(heads):
        record["head_context_length"] = [mask.shape[-1] for mask in masks]
    return record


def probe_count(namespace: Namespace, case: CountCase) -> CountRecord:
    count_parameters = lookup(namespace, "count_parameters")
    return {"count": as_count(count_parameters(counted_module(case)))}

