"""Judges of notebook 04: the wrapper, split_heads/merge_heads, MultiHeadAttention.forward (with and without a
padding mask), to_torch_multihead and count_parameters."""

import torch

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare, diagnose, dtype_verdict, same
from autograder.checking.expectations import Expectations
from autograder.checking.judging import (
    PADDING_MISCONCEPTIONS,
    copied_weights_problem,
    first_wrong_head,
    fitted_fill,
    informative_queries,
    located_fault,
    returned_weights,
    wrapper_structure_problem,
)
from autograder.course.probes.cases import CountCase, EquivalenceCase, HeadsCase, MultiHeadCase, TwoDimensionalCase
from autograder.course.probes.inputs import DTYPES
from autograder.course.probes.multihead import (
    MHA_LAYERS,
    attention_input,
    equivalence_weights,
    merge_input,
    padding_mask,
    split_input,
)
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


def judge_wrapper(data: WrapperRecord, case: MultiHeadCase, expected: Expectations) -> Verdict:
    """Structure, then the heads' outputs side by side; a wrong join or the first wrong head named.
    Expectations: heads (each head's output with its own weights)."""
    problem = wrapper_structure_problem(data, case, data.get("state", {}))
    if problem is not None:
        return problem
    x, got, heads = attention_input(case), data["out"], expected["heads"]
    want = torch.cat(heads, dim=-1)
    if same(got, want):
        return dtype_verdict("mha_wrapper", got, x.dtype)
    wrong_joins = [("heads_on_token_axis", torch.cat(heads, dim=dim)) for dim in (1, 0)]
    wrong_joins += [("heads_stacked", torch.stack(heads, dim=dim)) for dim in (-1, -2, 1, 0)]
    misconception = diagnose(got, want, wrong_joins)
    if misconception is None:
        broken_head = first_wrong_head(data.get("head_outputs"), heads)
        if broken_head is not None:
            return Verdict(False, "mha_wrapper.head_wrong", {"head": broken_head})
    verdict = compare(got, want, message_key="mha_wrapper.values", input_shape=tuple(x.shape))
    verdict.misconception = misconception
    return verdict


def judge_split(data: HeadsRecord, case: HeadsCase, expected: Expectations) -> Verdict:
    """Input left alone, then the values. Expectations: output, variants."""
    if not data["input_kept"]:
        return Verdict(False, "split_heads.input_modified")
    if data.get("gradient", "ok") != "ok":
        return Verdict(False, "function.no_gradient", {"how": data["gradient"]}, misconception="gradient_cut")
    x, got, want = split_input(case), data["out"], expected["output"]
    if same(got, want):
        return dtype_verdict("split_heads", got, x.dtype)
    return compare(got, want, message_key="split_heads.values", variants=expected["variants"],
                   input_shape=tuple(x.shape))


def judge_merge(data: HeadsRecord, case: HeadsCase, expected: Expectations) -> Verdict:
    """Input left alone, then the values (the split tensor itself for a round trip). Expectations: output,
    variants."""
    if not data["input_kept"]:
        return Verdict(False, "merge_heads.input_modified")
    if data.get("gradient", "ok") != "ok":
        return Verdict(False, "function.no_gradient", {"how": data["gradient"]}, misconception="gradient_cut")
    x, got, want = merge_input(case), data["out"], expected["output"]
    if same(got, want):
        return dtype_verdict("merge_heads", got, x.dtype)
    key = "merge_heads.round_trip" if case["layout"] == "split" else "merge_heads.values"
    verdict = compare(got, want, message_key=key, input_shape=tuple(x.shape))
    verdict.misconception = diagnose(got, want, expected["variants"])
    return verdict


def judge_mha(data: MultiHeadRecord, case: MultiHeadCase, expected: Expectations) -> Verdict:
    """Layers, input left alone, then the output on every query that sees a real token. Expectations: output,
    variants; with a padding mask also padding_ignored and padding_inverted (the mask left out, the mask flipped)."""
    missing = [layer for layer in MHA_LAYERS if f"{layer}.weight" not in data["state"]]
    if missing:
        return Verdict(False, "multi_head_attention.missing_layers", {"names": ", ".join(missing)})
    if not data["input_kept"]:
        return Verdict(False, "multi_head_attention.input_modified")
    x, mask, got, want = attention_input(case), padding_mask(case), data["out"], expected["output"]
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        if mask is None and (stopped_early := returned_weights(got, expected)) is not None:
            return stopped_early
        return compare(got, want, message_key="multi_head_attention.values", input_shape=tuple(x.shape))
    # A query whose visible keys are all padding carries no information: any finite output is right for it (the
    # fill value and the order of the fills decide what it gets). Every other query is compared.
    shown = informative_queries(mask, got)
    if same(got[shown], want[shown]):
        if torch.isfinite(got[~shown]).all():
            return dtype_verdict("multi_head_attention", got, x.dtype)
        return Verdict(False, "padding_mask.nan_blind_rows", misconception="padding_neg_inf")
    wrong = [(misconception, output[shown]) for misconception, output in expected["variants"]
             if output.shape == got.shape]
    verdict = compare(got[shown], want[shown], message_key="multi_head_attention.values",
                      input_shape=tuple(x.shape), variants=wrong)
    if verdict.misconception is None and mask is not None:
        verdict.message_key = padding_diagnosis(got, shown, expected)
        verdict.misconception = PADDING_MISCONCEPTIONS.get(verdict.message_key)
        seen = data.get("weights_seen")
        if verdict.message_key == "multi_head_attention.values" and seen is not None:
            padded = (mask == 0).view(mask.shape[0], 1, 1, -1)
            fill = fitted_fill(seen, expected["raw_scores"], (case["d_out"] // case["num_heads"]) ** 0.5, padded)
            if fill is not None:
                verdict.message_key, verdict.fields = "padding_mask.fill_too_high", {"fill": fill}
                verdict.misconception = "padding_fill_too_high"
    elif verdict.misconception is None:
        # No catalogued mistake: say which stage first differs, and the scale used if that is what differs.
        sizes = {"head_dim": case["d_out"] // case["num_heads"], "d_out": case["d_out"], "d_in": case["d_in"]}
        located = located_fault(data.get("weights_seen"), expected, scaled_by="head_dim", sizes=sizes,
                                after_key="attention.after_weights_heads", seen_merged=data.get("merged_seen"))
        if located is not None:
            verdict.message_key, verdict.fields = located.message_key, located.fields
            verdict.misconception = located.misconception
    return verdict


def padding_diagnosis(got, shown, expected: Expectations) -> str:
    """The message for a wrong output under a padding mask, judged on the queries that see a real token."""
    if torch.isnan(got[shown]).any():
        return "padding_mask.nan"
    if same(got[shown], expected["padding_ignored"][shown]):
        return "padding_mask.ignored"
    if same(got[shown], expected["padding_inverted"][shown]):
        return "padding_mask.inverted"
    return "multi_head_attention.values"


def judge_head_independence(data: HeadIndependenceRecord, case: MultiHeadCase, expected: Expectations) -> Verdict:
    """With out_proj the identity, changing one head's W_query changes that head's columns only."""
    before, after = data["before"], data["after"]
    expected_shape = (case["batch"], case["num_tokens"], case["d_out"])
    if tuple(after.shape) != expected_shape or tuple(before.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(after.shape), "expected_shape": expected_shape})
    head_dim = case["d_out"] // case["num_heads"]
    for head in range(case["num_heads"]):
        columns = slice(head * head_dim, (head + 1) * head_dim)
        unchanged = same(after[..., columns], before[..., columns])
        if head == case["head"] and unchanged:
            return Verdict(False, "multi_head_attention.head_unchanged")
        if head != case["head"] and not unchanged:
            return Verdict(False, "multi_head_attention.heads_mixed")
    return Verdict(True)


def judge_vectorised(data: VectorisedRecord, case: MultiHeadCase, expected: Expectations) -> Verdict:
    """No built-in attention, and as many matmuls for many heads as for few: one batched computation."""
    if data["builtins"]:
        return Verdict(False, "multi_head_attention.builtin", {"names": ", ".join(data["builtins"])})
    few_heads, many_heads = data["matmuls"]
    if many_heads > few_heads:
        return Verdict(False, "multi_head_attention.loop", {"few": case["num_heads"], "many": case["more_heads"]},
                       misconception="loop_over_heads")
    return Verdict(True)


HEADS_JUDGES = {"heads": judge_head_independence, "vectorised": judge_vectorised}


def judge_mha_heads(data, case: MultiHeadCase, expected: Expectations) -> Verdict:
    return HEADS_JUDGES[case["kind"]](data, case, expected)


def judge_equivalence(data: EquivalenceRecord, case: EquivalenceCase, expected: Expectations) -> Verdict:
    """A ValueError where d_in != d_out; else batch_first, sizes, dtype, every copied tensor, dropout, then the
    output. Expectations: output (our module's, with the case's weights)."""
    if "raised" in data:
        if data["raised"] == "ValueError":
            return Verdict(True)
        return Verdict(False, "torch_equivalence.no_value_error", {"got": data["raised"] or "nothing"})
    if not data["batch_first"]:
        return Verdict(False, "torch_equivalence.batch_first")
    if (data["embed_dim"], data["num_heads"]) != (case["d_model"], case["num_heads"]):
        sizes = {"embed_dim": data["embed_dim"], "num_heads": data["num_heads"], "d_out": case["d_model"],
                 "heads": case["num_heads"]}
        return Verdict(False, "torch_equivalence.sizes", sizes)
    if data["dtype"] != str(DTYPES[case["dtype"]]):
        return Verdict(False, "torch_equivalence.dtype", {"got": data["dtype"], "expected": str(DTYPES[case["dtype"]])})
    problem = copied_weights_problem(data["state"], equivalence_weights(case))
    if problem is not None:
        return problem
    if abs(data["dropout"] - case["dropout"]) > 1e-9:
        return Verdict(False, "torch_equivalence.dropout")
    want = expected["output"]
    verdict = compare(data.get("out"), want, message_key="torch_equivalence.values",
                      input_shape=(case["batch"], case["num_tokens"], case["d_model"]))
    if verdict.passed and data.get("shared"):
        return Verdict(False, "torch_equivalence.shares_memory", {"name": data["shared"][0]},
                       misconception="aliased_not_copied")
    return verdict


def parameter_totals(case: CountCase) -> tuple[int, int, int]:
    """(trainable, frozen, buffer) element counts of the case's module, from its spec alone."""
    trainable = frozen = buffers = 0
    for spec in case["blocks"]:
        for _, d_in, d_out, bias, is_trainable in spec["linears"]:
            size = d_in * d_out + (d_out if bias else 0)
            trainable, frozen = (trainable + size, frozen) if is_trainable else (trainable, frozen + size)
        buffers += spec["mask"] ** 2
    return trainable, frozen, buffers


def judge_two_dimensional(data: TwoDimensionalRecord, case: TwoDimensionalCase, expected: Expectations) -> Verdict:
    """Book exercise 3.2: a MultiHeadAttentionWrapper of two heads one feature wide, built for the sizes asked.
    Needs no reference. The output itself is exercise 04-1's: a wrapper still wrong there costs nothing here."""
    if "head_count" not in data:
        return Verdict(False, "two_dimensional_wrapper.not_a_wrapper", {"got": data.get("type", "?")})
    if data["head_count"] != 2:
        return Verdict(False, "two_dimensional_wrapper.head_count", {"got": data["head_count"]},
                       misconception="heads_traded_for_width")
    out_features = data.get("head_out_features")
    if out_features is None:
        return Verdict(False, "two_dimensional_wrapper.not_causal_heads")
    if sum(out_features) != 2:
        misconception = "d_out_is_total" if set(out_features) == {2} else None
        return Verdict(False, "two_dimensional_wrapper.features",
                       {"got": sum(out_features), "per_head": ", ".join(map(str, out_features))},
                       misconception=misconception)
    asked = (case["d_in"], case["context_length"], float(case["dropout"]))
    for built in zip(data.get("head_in_features", []), data.get("head_context_length", [None] * 2),
                     data.get("head_dropout", [None] * 2), strict=True):
        if built != asked:
            got_d_in, got_context_length, got_dropout = built
            return Verdict(False, "two_dimensional_wrapper.sizes",
                           {"d_in": case["d_in"], "context_length": case["context_length"],
                            "dropout": case["dropout"], "got_d_in": got_d_in,
                            "got_context_length": got_context_length, "got_dropout": got_dropout})
    return Verdict(True)


def judge_count(data: CountRecord, case: CountCase, expected: Expectations) -> Verdict:
    """The trainable count; a wrong one named when it counts buffers or frozen parameters. Needs no reference."""
    got = data["count"]
    trainable, frozen, buffers = parameter_totals(case)
    if got == trainable:
        return Verdict(True)
    wrong_counts = (
        ("counts_buffers", trainable + buffers),
        ("counts_frozen", trainable + frozen),
        ("counts_buffers", trainable + frozen + buffers),  # everything in state_dict()
    )
    misconception = next((m for m, count in wrong_counts if count != trainable and count == got), None)
    return Verdict(False, "parameter_counts.wrong", {"got": got, "expected": trainable}, misconception=misconception)
