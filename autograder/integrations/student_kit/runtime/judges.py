"""The deciding half of each stored public check: the live judge's logic, with the reference's numbers read
from the stored case.

Each judge takes the decisions of the live judge of its kind (autograder.course.checks.*) in the same order, with
the same message keys, fields and misconceptions, and the same helpers where a decision needs no reference
(autograder.checking.judging); where the live judge runs the reference (or one of its known-wrong variants) on the
student's weights, this one reads the output stored for the weights the probe loaded.
tests/test_student_kit.py runs both on the same code and asserts the same verdicts and messages.
"""

import torch

from autograder.checking.check_types import Verdict
from autograder.checking.compare import compare, compare_named, diagnose, dtype_verdict, same
from autograder.checking.diagnosis import explain_error
from autograder.checking.judging import (
    PADDING_MISCONCEPTIONS,
    PROJECTIONS,
    causal_mask_verdict,
    causal_weights_problem,
    copied_weights_problem,
    first_wrong_head,
    informative_queries,
    wrapper_structure_problem,
)

MHA_LAYERS = (*PROJECTIONS, "out_proj")


def stored(case, part, name):
    return case["stored"][part][name]


def judge_softmax(data, case):
    """Shape, values (naming a mistake when one reproduces them), then dtype."""
    exercise_id = case["stored"]["exercise"]
    x, expected, dim = stored(case, "inputs", "x"), stored(case, "expect", "output"), case.get("dim", 0)
    got = data["output"]
    if not same(got, expected):
        key = f"{exercise_id}.wrong_values"
        if got.shape == expected.shape and not torch.isfinite(got).all():
            key = f"{exercise_id}.not_finite"
        elif got.shape == expected.shape and not same(got.sum(dim=dim), torch.ones_like(expected.sum(dim=dim))):
            key = f"{exercise_id}.not_normalised"
        return compare_named(got, expected, stored(case, "expect", "mistakes"), message_key=key,
                             input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)


def judge_context_vectors(data, case):
    inputs = stored(case, "inputs", "x")
    return compare_named(data["output"], stored(case, "expect", "output"), stored(case, "expect", "mistakes"),
                         message_key="context_vectors.wrong_values", input_shape=tuple(inputs.shape))


def projection_problem(exercise_id, shapes, case):
    """A failing Verdict when a projection is missing or misshapen (raw (d_in, d_out) or nn.Linear); else None."""
    d_in, d_out = case["d_in"], case["d_out"]
    for name in PROJECTIONS:
        if name in shapes:
            got_shape, expected_shape = shapes[name], (d_in, d_out)
        elif f"{name}.weight" in shapes:
            got_shape, expected_shape = shapes[f"{name}.weight"], (d_out, d_in)
        else:
            return Verdict(False, f"{exercise_id}.missing_weight", {"name": name})
        if tuple(got_shape) != expected_shape:
            return Verdict(False, f"{exercise_id}.weight_shape",
                           {"name": name, "got_shape": tuple(got_shape), "expected_shape": expected_shape})
    return None


def judge_self_attention(data, case):
    exercise_id = case["stored"]["exercise"]
    problem = projection_problem(exercise_id, data["shapes"], case)
    if problem is not None:
        return problem
    x, expected, got = stored(case, "inputs", "x"), stored(case, "expect", "output"), data["output"]
    if not same(got, expected):
        return compare(got, expected, message_key=f"{exercise_id}.wrong_output",
                       variants=stored(case, "expect", "variants"), input_shape=tuple(x.shape))
    return dtype_verdict(exercise_id, got, x.dtype)


def judge_transfer(data, case):
    # The live check then compares v1's and v2's attention with the copied weights; with every weight equal to
    # v2's transpose (the loop below), that comparison cannot fail, and computing it would need the reference.
    if "raised" in data:
        return judge_transfer_raised(data, case)
    given, expected_v1 = stored(case, "inputs", "given"), stored(case, "expect", "v1")
    v1, v2 = data["v1"], data["v2"]
    for name in PROJECTIONS:
        if not same(v2.get(f"{name}.weight"), given["v2"][name]):
            return Verdict(False, "transfer_weights.v2_changed", {"name": name})
    if all(same(v1.get(name), given["v1"][name]) for name in PROJECTIONS):
        return Verdict(False, "transfer_weights.unchanged", {"returned": data["returned"]})
    for name in PROJECTIONS:
        got, expected = v1.get(name), expected_v1[name]
        if got is None:
            return Verdict(False, "transfer_weights.missing_parameter", {"name": name})
        if not same(got, expected):
            return Verdict(False, "transfer_weights.wrong_weight", {"name": name},
                           misconception=diagnose(got, expected, stored(case, "expect", "candidates")[name]),
                           expected=expected, got=got)
    return Verdict(True)


def judge_transfer_raised(data, case):
    """The function raised for d_in != d_out; name the missing .T when the square run copied weight as it is."""
    square, expected_square = stored(case, "inputs", "square"), stored(case, "expect", "square_v1")
    copied = [data["square"]["v1"].get(name) for name in PROJECTIONS]
    as_is = [same(got, square["v2"][name]) for got, name in zip(copied, PROJECTIONS, strict=True)]
    transposed = [same(got, expected_square[name]) for got, name in zip(copied, PROJECTIONS, strict=True)]
    if any(as_is) and all(a or t for a, t in zip(as_is, transposed, strict=True)):
        raised = data["raised"]
        detail = " ".join(str(raised.get("message", "")).split())[:160]
        fields = {"type": raised.get("type", ""), "detail": detail}
        return Verdict(False, "transfer_weights.raised_untransposed", fields, misconception="weights_not_transposed")
    return explain_error(data["raised"], case)


def judge_causal_mask(data, case):
    return causal_mask_verdict(data["mask"], stored(case, "expect", "mask"), stored(case, "expect", "variants"),
                               case["num_tokens"])


def judge_causal_weights(data, case):
    """Same weights as expected, exact zeros above the diagonal, the same dtype; else the first broken property."""
    got, expected = data["weights"], stored(case, "expect", "output")
    shown = {"expected": expected, "got": got, "input_shape": tuple(expected.shape)}
    if got.shape != expected.shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": tuple(expected.shape)},
                       **shown)
    problem = causal_weights_problem(got, expected, stored(case, "expect", "future"))
    if problem is None:
        return dtype_verdict("causal_weights", got, expected.dtype)
    key, fields = problem
    return Verdict(False, key, fields, misconception=diagnose(got, expected, stored(case, "expect", "mistakes")),
                   heatmap=True, **shown)


def judge_causal_attention(data, case):
    if data.get("transpose_crash"):
        return Verdict(False, "causal_attention.transpose_batched", misconception="transpose_batched")
    if data["forbidden"]:
        return Verdict(False, "causal_attention.builtin", {"names": ", ".join(data["forbidden"])})
    x, got, expected = stored(case, "inputs", "x"), data["output"], stored(case, "expect", "output")
    if same(got, expected):
        return dtype_verdict("causal_weights", got, expected.dtype)
    verdict = compare(got, expected, message_key="causal_attention.wrong_output",
                      variants=stored(case, "expect", "variants"), input_shape=tuple(x.shape))
    if verdict.misconception is None and data["transpose_batched"]:
        verdict.misconception = "transpose_batched"
    return verdict


def judge_wrapper(data, case):
    problem = wrapper_structure_problem(data, case, data.get("shapes", {}))
    if problem is not None:
        return problem
    x, got, expected = stored(case, "inputs", "x"), data["out"], stored(case, "expect", "output")
    if same(got, expected):
        return dtype_verdict("mha_wrapper", got, x.dtype)
    misconception = diagnose(got, expected, stored(case, "expect", "wrong_joins"))
    if misconception is None:
        broken_head = first_wrong_head(data.get("head_outputs"), stored(case, "expect", "heads"))
        if broken_head is not None:
            return Verdict(False, "mha_wrapper.head_wrong", {"head": broken_head + 1})
    verdict = compare(got, expected, message_key="mha_wrapper.values", input_shape=tuple(x.shape))
    verdict.misconception = misconception
    return verdict


def judge_split_heads(data, case):
    if not data["input_kept"]:
        return Verdict(False, "split_heads.input_modified")
    x, got, expected = stored(case, "inputs", "x"), data["out"], stored(case, "expect", "output")
    if same(got, expected):
        return dtype_verdict("split_heads", got, x.dtype)
    return compare(got, expected, message_key="split_heads.values", variants=stored(case, "expect", "variants"),
                   input_shape=tuple(x.shape))


def judge_merge_heads(data, case):
    if not data["input_kept"]:
        return Verdict(False, "merge_heads.input_modified")
    x, got, expected = stored(case, "inputs", "x"), data["out"], stored(case, "expect", "output")
    if same(got, expected):
        return dtype_verdict("merge_heads", got, x.dtype)
    key = "merge_heads.round_trip" if case["layout"] == "split" else "merge_heads.values"
    verdict = compare(got, expected, message_key=key, input_shape=tuple(x.shape))
    verdict.misconception = diagnose(got, expected, stored(case, "expect", "variants"))
    return verdict


def judge_multi_head_attention(data, case):
    missing = [layer for layer in MHA_LAYERS if f"{layer}.weight" not in data["shapes"]]
    if missing:
        return Verdict(False, "multi_head_attention.missing_layers", {"names": ", ".join(missing)})
    if not data["input_kept"]:
        return Verdict(False, "multi_head_attention.input_modified")
    x, got, expected = stored(case, "inputs", "x"), data["out"], stored(case, "expect", "output")
    mask = case["stored"]["inputs"].get("attention_mask")
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return compare(got, expected, message_key="multi_head_attention.values", input_shape=tuple(x.shape))
    # A query whose visible keys are all padding carries no information: any finite output is right for it.
    shown = informative_queries(mask, got)
    if same(got[shown], expected[shown]):
        if torch.isfinite(got[~shown]).all():
            return dtype_verdict("multi_head_attention", got, x.dtype)
        return Verdict(False, "padding_mask.nan_blind_rows", misconception="padding_neg_inf")
    wrong = [(misconception, output[shown]) for misconception, output in stored(case, "expect", "variants")
             if output.shape == got.shape]
    verdict = compare(got[shown], expected[shown], message_key="multi_head_attention.values",
                      input_shape=tuple(x.shape), variants=wrong)
    if verdict.misconception is None and mask is not None:
        verdict.message_key = padding_diagnosis(got, shown, case)
        verdict.misconception = PADDING_MISCONCEPTIONS.get(verdict.message_key)
    return verdict


def padding_diagnosis(got, shown, case):
    """The message for a wrong output under a padding mask, judged on the queries that see a real token."""
    if torch.isnan(got[shown]).any():
        return "padding_mask.nan"
    if same(got[shown], stored(case, "expect", "padding_ignored")[shown]):
        return "padding_mask.ignored"
    if same(got[shown], stored(case, "expect", "padding_inverted")[shown]):
        return "padding_mask.inverted"
    return "multi_head_attention.values"


def judge_torch_equivalence(data, case):
    if not data["batch_first"]:
        return Verdict(False, "torch_equivalence.batch_first")
    if (data["embed_dim"], data["num_heads"]) != (case["d_model"], case["num_heads"]):
        sizes = {"embed_dim": data["embed_dim"], "num_heads": data["num_heads"], "d_out": case["d_model"],
                 "heads": case["num_heads"]}
        return Verdict(False, "torch_equivalence.sizes", sizes)
    expected_dtype = f"torch.{case['dtype']}"
    if data["dtype"] != expected_dtype:
        return Verdict(False, "torch_equivalence.dtype", {"got": data["dtype"], "expected": expected_dtype})
    problem = copied_weights_problem(data["state"], case["stored"]["weights"])
    if problem is not None:
        return problem
    if abs(data["dropout"] - case["dropout"]) > 1e-9:
        return Verdict(False, "torch_equivalence.dropout")
    x = stored(case, "inputs", "x")
    return compare(data.get("out"), stored(case, "expect", "output"), message_key="torch_equivalence.values",
                   input_shape=tuple(x.shape))


def judge_parameter_counts(data, case):
    got, trainable = data["count"], stored(case, "expect", "trainable")
    if got == trainable:
        return Verdict(True)
    wrong_counts = stored(case, "expect", "wrong_counts")
    misconception = next((m for m, count in wrong_counts if count != trainable and count == got), None)
    return Verdict(False, "parameter_counts.wrong", {"got": got, "expected": trainable}, misconception=misconception)


JUDGES = {
    "softmax": judge_softmax,
    "context_vectors": judge_context_vectors,
    "self_attention": judge_self_attention,
    "transfer_weights": judge_transfer,
    "causal_mask": judge_causal_mask,
    "causal_weights": judge_causal_weights,
    "causal_attention": judge_causal_attention,
    "mha_wrapper": judge_wrapper,
    "split_heads": judge_split_heads,
    "merge_heads": judge_merge_heads,
    "multi_head_attention": judge_multi_head_attention,
    "torch_equivalence": judge_torch_equivalence,
    "parameter_counts": judge_parameter_counts,
}
