"""Build time: the test vectors of each public case, computed as the live judge computes them.

For every public check a recorder turns the live case into what the student kit stores: the inputs the
probe hands the student's code, the weights to load into the student's module (the reference module's,
built under the case's seed as the live probe builds the student's), the expected output, and the output of
every wrong variant the live judge would try. Each recorder uses the live checks' own helpers and the
reference, so the stored numbers are the live judge's numbers for those weights.
"""

import torch

import solutions
from autograder.course.checks import variants
from autograder.course.checks.helpers import PROJECTIONS
from autograder.course.checks.n01_attention_without_weights import ex1_softmax, ex2_context_vectors
from autograder.course.checks.n02_trainable_self_attention import ex1_self_attention, ex2_transfer_weights
from autograder.course.checks.n03_causal_attention import ex1_causal_mask, ex2_masking_routes, ex3_causal_attention
from autograder.course.checks.n04_multi_head_attention import (
    ex1_wrapper,
    ex2_split_merge,
    ex3_multi_head_attention,
    ex4_torch_equivalence,
    ex5_parameter_counts,
    shared,
)
from autograder.course.probes import basics as basics_probes
from autograder.course.probes import causal as causal_probes
from autograder.course.probes import multihead as multihead_probes
from autograder.course.probes import self_attention as self_attention_probes

# The modules whose public checks are recorded here (RECORDERS says which checks).
RECORDED = (ex1_softmax, ex2_context_vectors, ex1_self_attention, ex2_transfer_weights, ex1_causal_mask,
            ex2_masking_routes, ex3_causal_attention, ex1_wrapper, ex2_split_merge, ex3_multi_head_attention,
            ex4_torch_equivalence, ex5_parameter_counts)

# The names each exercise's checks receive, from the declarations beside the checks (this module lives with
# them: it runs the reference, so it is as protected as they are, and the kit never carries it).
EXERCISE_NAMES = {exercise.id: exercise.names for module in RECORDED for exercise in module.EXERCISES}


def reference_namespace(exercise_id):
    return {name: getattr(solutions, name) for name in EXERCISE_NAMES[exercise_id]}


def reference_probe(check, case):
    """The live probe run on the reference: the weights the reference module gets under the case's seed."""
    data = check.probe(reference_namespace(check.exercise), case)
    if "error" in data:
        raise RuntimeError(f"{check.id}: the reference failed its own probe: {data['error']}")
    return data


def as_dtype(weights, dtype):
    return {name: value.to(dtype) for name, value in weights.items()}


def record_softmax(check, case):
    x, dim = basics_probes.case_tensor(case), case.get("dim", 0)
    if check.exercise == "softmax_naive":
        expected = solutions.softmax_naive(x)
    else:
        expected = solutions.softmax_stable(x, dim=case["dim"])
    return "softmax", {"name": check.exercise, "inputs": {"x": x},
                       "expect": {"output": expected, "mistakes": ex1_softmax.softmax_mistakes(x, dim)}}


def record_context_vectors(check, case):
    x = basics_probes.case_tensor(case)
    return "context_vectors", {"inputs": {"x": x}, "expect": {"output": solutions.context_vectors(x),
                                                              "mistakes": ex2_context_vectors.context_mistakes(x)}}


def record_self_attention(check, case):
    state = reference_probe(check, case)["state"]
    weights = ex1_self_attention.projection_weights(check.exercise, state, case)  # nn.Linear layout, float64
    x = self_attention_probes.attention_input(case)
    return "self_attention", {
        "name": EXERCISE_NAMES[check.exercise][0],
        "inputs": {"x": x},
        "weights": as_dtype(weights, x.dtype),
        "expect": {"output": variants.attention(x.double(), weights, causal=False),
                   "variants": variants.attention_variants(x.double(), weights, causal=False)},
    }


def record_transfer(check, case):
    v1_start, v2 = self_attention_probes.transfer_weights(case)
    square_start, square_v2 = self_attention_probes.transfer_weights(self_attention_probes.square_case(case))
    candidates = {
        name: [("weights_not_transposed", v2[name])]
        + [("weights_mixed_up", v2[other].T) for other in PROJECTIONS if other != name]
        for name in PROJECTIONS
    }
    return "transfer_weights", {
        "inputs": {"given": {"v1": v1_start, "v2": v2}, "square": {"v1": square_start, "v2": square_v2}},
        "expect": {"v1": {name: v2[name].T for name in PROJECTIONS},
                   "square_v1": {name: square_v2[name].T for name in PROJECTIONS},
                   "candidates": candidates},
    }


def record_causal_mask(check, case):
    num_tokens = case["num_tokens"]
    wrong = [(kind_id, variants.mask_for(kind, num_tokens))
             for kind_id, kind in (("mask_includes_diagonal", "with_diagonal"), ("mask_inverted", "inverted"))]
    return "causal_mask", {"expect": {"mask": solutions.causal_mask(num_tokens), "variants": wrong}}


def record_causal_weights(check, case):
    if "renormalise" in check.id:
        name, x = "causal_weights_renormalised", causal_probes.weights_input(case)
        expected, mistakes = solutions.causal_weights_renormalised(x), ex2_masking_routes.renormalise_mistakes(x)
    else:
        name, x = "causal_weights_neg_inf", causal_probes.scores_input(case)
        expected, mistakes = solutions.causal_weights_neg_inf(x), ex2_masking_routes.neg_inf_mistakes(x)
    return "causal_weights", {"name": name, "inputs": {"x": x},
                              "expect": {"output": expected, "mistakes": mistakes,
                                         "future": variants.mask_for("future", expected.shape[-1])}}


def record_causal_attention(check, case):
    weights = reference_probe(check, case)["state"]
    x = causal_probes.attention_input(case)
    return "causal_attention", {
        "init_seed": case.get("init_seed", causal_probes.NOTES_CAUSAL_SEED),
        "inputs": {"x": x},
        "weights": weights,
        "expect": {"output": variants.attention(x, weights), "variants": variants.attention_variants(x, weights)},
    }


def record_wrapper(check, case):
    state = reference_probe(check, case)["state"]
    x = multihead_probes.attention_input(case)
    per_head = [shared.projection_weights(state, f"heads.{i}.") for i in range(case["num_heads"])]
    heads = [variants.attention(x, weights) for weights in per_head]
    wrong_joins = [("heads_on_token_axis", torch.cat(heads, dim=dim)) for dim in (1, 0)]
    wrong_joins += [("heads_stacked", torch.stack(heads, dim=dim)) for dim in (-1, -2, 1, 0)]
    weights = {f"heads.{i}.{name}": value for i, head in enumerate(per_head) for name, value in head.items()}
    return "mha_wrapper", {"inputs": {"x": x}, "weights": weights,
                           "expect": {"output": torch.cat(heads, dim=-1), "heads": heads, "wrong_joins": wrong_joins}}


def record_split_heads(check, case):
    x = multihead_probes.split_input(case)
    wrong = [("split_without_transpose", variants.split(x, case["num_heads"], "view_only"))]
    return "split_heads", {"inputs": {"x": x},
                           "expect": {"output": solutions.split_heads(x, case["num_heads"]), "variants": wrong}}


def record_merge_heads(check, case):
    x = multihead_probes.merge_input(case)
    expected = multihead_probes.round_trip_source(case) if case["layout"] == "split" else solutions.merge_heads(x)
    wrong = [
        ("merge_without_transpose", variants.merge(x, "no_transpose")),
        ("heads_on_token_axis", variants.merge(x, "token_axis")),
        ("heads_on_token_axis", torch.cat(x.unbind(1), dim=0)),
    ]
    return "merge_heads", {"inputs": {"x": x}, "expect": {"output": expected, "variants": wrong}}


def record_multi_head_attention(check, case):
    weights = shared.projection_weights(reference_probe(check, case)["state"])
    x, mask = multihead_probes.attention_input(case), multihead_probes.padding_mask(case)
    knobs = {"num_heads": case["num_heads"], "attention_mask": mask}
    inputs = {"x": x} if mask is None else {"x": x, "attention_mask": mask}
    expect = {"output": variants.attention(x, weights, **knobs),
              "variants": variants.attention_variants(x, weights, **knobs)}
    if mask is not None:
        num_heads = case["num_heads"]
        expect["padding_ignored"] = variants.attention(x, weights, num_heads=num_heads)
        expect["padding_inverted"] = variants.attention(x, weights, num_heads=num_heads, attention_mask=1 - mask)
    return "multi_head_attention", {"inputs": inputs, "weights": weights, "expect": expect}


def record_torch_equivalence(check, case):
    weights, x = multihead_probes.equivalence_weights(case), multihead_probes.equivalence_input(case)
    num_tokens, context_length = case["num_tokens"], case["context_length"]
    inputs = {
        "x": x,
        # what the live probe passes as attn_mask, and the stand-in module's mask buffer
        "attn_mask": torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1),
        "mask": torch.triu(torch.ones(context_length, context_length), diagonal=1),
    }
    return "torch_equivalence", {"inputs": inputs, "weights": weights,
                                 "expect": {"output": variants.attention(x, weights, num_heads=case["num_heads"])}}


def record_parameter_counts(check, case):
    trainable, frozen, buffers = ex5_parameter_counts.parameter_totals(case)
    wrong_counts = [("counts_buffers", trainable + buffers), ("counts_frozen", trainable + frozen),
                    ("counts_buffers", trainable + frozen + buffers)]
    return "parameter_counts", {"expect": {"trainable": trainable, "wrong_counts": wrong_counts}}


RECORDERS = {
    "softmax_naive.notes": record_softmax,
    "softmax_stable.notes": record_softmax,
    "context_vectors.notes": record_context_vectors,
    "self_attention_v1.notes": record_self_attention,
    "self_attention_v2.notes": record_self_attention,
    "transfer_weights.notes": record_transfer,
    "causal_mask.notes": record_causal_mask,
    "masking_routes.renormalise_notes": record_causal_weights,
    "masking_routes.neg_inf_notes": record_causal_weights,
    "causal_attention.notes": record_causal_attention,
    "mha_wrapper.notes": record_wrapper,
    "split_heads.notes": record_split_heads,
    "merge_heads.notes": record_merge_heads,
    "multi_head_attention.notes": record_multi_head_attention,
    "padding_mask.example": record_multi_head_attention,
    "torch_equivalence.notes": record_torch_equivalence,
    "parameter_counts.notes": record_parameter_counts,
}


def record_case(check, case):
    """(kind, the case as the kit stores it: the live case's fields plus `stored`)."""
    try:
        recorder = RECORDERS[check.id]
    except KeyError:
        raise KeyError(f"public check {check.id!r} has no student-kit recorder: add one to "
                       "autograder/course/checks/student_kit_recording.py (and its probe and judge to the kit's "
                       "runtime)") from None
    kind, stored = recorder(check, case)
    return kind, {**case, "stored": {"exercise": check.exercise, **stored}}
