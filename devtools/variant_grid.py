"""The variant grid: every single-knob mistake of every module exercise, graded by the checks.

    python -m devtools.variant_grid [--seed N]        (make grid)

For each module exercise and each family of mistakes (softmax axis, scale, mask, heads, dropout, buffer,
projections, padding), every value of the family's knob is written as a student would
(devtools.student_variants) and graded with all the exercise's checks. A mistake must lose points and be named
with its own misconception, and no check may name another one; a legitimate alternative (a different fill value,
a scale that is the same number) must keep full marks. The table gives, per exercise and family: variants,
mistakes that lose points, mistakes named with their own misconception, variants named with a wrong one, and
alternatives that keep full marks. tests/test_variant_grid.py asserts the whole grid.
"""

import argparse
import sys
from dataclasses import dataclass, field

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.running.runner import DEFAULT_SEED, run_exercise
from devtools import student_variants as students
from devtools.student_variants import Knobs, WrapperKnobs

EQUIVALENT = None  # the expected misconception of a legitimate alternative: it must keep full marks


@dataclass(frozen=True)
class Variant:
    exercise: str
    family: str
    name: str  # the knob's value
    misconception: str | None  # EQUIVALENT for a legitimate alternative
    student: object  # the class the student wrote


@dataclass
class Outcome:
    variant: Variant
    score: float
    max_score: float
    named: set = field(default_factory=set)  # misconceptions the failed checks named

    @property
    def loses_points(self):
        return self.score < self.max_score

    @property
    def named_own(self):
        return self.variant.misconception in self.named

    @property
    def named_wrong(self):
        return sorted(self.named - {self.variant.misconception})

    @property
    def right(self):
        if self.variant.misconception is EQUIVALENT:
            return not self.loses_points and not self.named
        return self.loses_points and self.named_own and not self.named_wrong


ROLES = ("queries", "keys", "values")  # the projections a mistake may touch alone
# The root of the key size dividing one projection instead of the scores: the same scores for the queries or the
# keys; for the values, the same output as the root dividing the weights after the softmax.
SCALE_ON_ONE_PROJECTION = (
    ("scale", "the queries divided by the root", Knobs(scale="on_queries"), EQUIVALENT),
    ("scale", "the keys divided by the root", Knobs(scale="on_keys"), EQUIVALENT),
    ("scale", "the values divided by the root", Knobs(scale="on_values"), "scale_after_softmax"),
)


# Scale constants the judges fit (autograder.course.variants: d_k, num_tokens): the root twice divides by d_k too.
FITTED_SCALES = (
    ("scale", "d_k (not its root)", Knobs(scale="d_k"), "scale_by_d_k"),
    ("scale", "the root twice (queries and scores)", Knobs(scale="twice"), "scale_by_d_k"),
    ("scale", "num_tokens", Knobs(scale="num_tokens"), "scale_by_num_tokens"),
)


def split_of_one_projection():
    """A split mistake in one of the three lines: queries, keys or values alone split wrong."""
    return [("heads", f"{role} split {name}", Knobs(split=split, only=role), misconception)
            for role in ROLES
            for split, name, misconception in (("view_only", "by view, no transpose", "split_without_transpose"),
                                               ("head_dim_first", "head_dim first", "split_wrong_axes"))]


# Families of the attention forward pass, shared by CausalAttention and MultiHeadAttention: (family, knob value
# name, Knobs, misconception).
def forward_families(multi_head):
    wrong_axes = (0, 1, 2) if multi_head else (0, 1)
    rows = [("softmax axis", f"dim={dim}", Knobs(softmax_dim=dim), "softmax_wrong_dim") for dim in wrong_axes]
    rows += [
        ("softmax axis", "dim=last (positive index)", Knobs(softmax_dim=3 if multi_head else 2), EQUIVALENT),
        ("scale", "none", Knobs(scale="none"), "missing_scaling"),
        ("scale", "sqrt(d_in)", Knobs(scale="d_in"), "scale_by_d_in"),
        ("scale", "sqrt(d_out)", Knobs(scale="d_out"), "scale_by_d_out" if multi_head else EQUIVALENT),
        ("scale", "after the softmax", Knobs(scale="after_softmax"), "scale_after_softmax"),
        *SCALE_ON_ONE_PROJECTION,
        *FITTED_SCALES,
        ("mask", "diagonal hidden", Knobs(mask="with_diagonal"), "mask_includes_diagonal"),
        ("mask", "inverted", Knobs(mask="inverted"), "mask_inverted"),
        ("mask", "inverted with tril (hides itself too)", Knobs(mask="inverted_tril"), "mask_inverted"),
        ("mask", "not truncated to num_tokens", Knobs(mask="not_truncated"), "mask_not_truncated"),
        ("mask", "after the softmax, not renormalised", Knobs(mask="after_softmax"), "mask_after_softmax_no_renorm"),
        ("mask", "masked_fill result dropped", Knobs(mask="dropped"), "masked_fill_result_dropped"),
        ("mask", "filled with -1e9", Knobs(fill=-1e9), EQUIVALENT),
        ("mask", "zeroed after the softmax, renormalised (the notes' route)", Knobs(mask="renormalised"),
         EQUIVALENT),
        ("mask", "filled with finfo.min", Knobs(fill=-3.4e38), EQUIVALENT),
        ("mask", "filled with 0", Knobs(fill=0.0), "mask_fill_zero"),
        ("mask", "filled with -10", Knobs(fill=-10.0), "mask_fill_not_low_enough"),
        ("dropout", "missing", Knobs(dropout="missing"), "dropout_missing"),
        ("dropout", "on the scores", Knobs(dropout="scores"), "dropout_before_softmax"),
        ("dropout", "on the masked scores", Knobs(dropout="masked_scores"), "dropout_before_softmax"),
        ("dropout", "on the values", Knobs(dropout="values"), "dropout_not_on_weights"),
        ("dropout", "on the output", Knobs(dropout="output"), "dropout_not_on_weights"),
        ("dropout", "on the input", Knobs(dropout="input"), "dropout_not_on_weights"),
        ("dropout", "always on (F.dropout, training=True)", Knobs(dropout="always"), "dropout_in_eval"),
        ("buffer", "plain attribute", Knobs(buffer="plain"), "mask_plain_attribute"),
        ("buffer", "parameter", Knobs(buffer="parameter"), "mask_as_parameter"),
        ("buffer", "persistent=False", Knobs(buffer="not_persistent"), "mask_not_persistent"),
        ("buffer", "made again in forward", Knobs(buffer="fresh_in_forward"), "tensor_created_on_cpu"),
        ("projections", "query and key swapped", Knobs(swap_qk=True), "query_key_swapped"),
        ("projections", "bias always", Knobs(bias="always"), "qkv_bias_ignored"),
        ("projections", "bias never", Knobs(bias="never"), "qkv_bias_ignored"),
    ]
    if multi_head:
        rows += [
            ("heads", "split by view, no transpose", Knobs(split="view_only"), "split_without_transpose"),
            ("heads", "split head_dim first", Knobs(split="head_dim_first"), "split_wrong_axes"),
            ("heads", "interleaved (split and merged head_dim first)", Knobs(split="head_dim_first",
                                                                             merge="head_dim_first"),
             "split_wrong_axes"),
            *split_of_one_projection(),
            ("heads", "merged without transpose", Knobs(merge="no_transpose"), "merge_without_transpose"),
            ("heads", "merged head_dim first", Knobs(merge="head_dim_first"), "merge_wrong_axes"),
            ("projections", "no out_proj", Knobs(out_proj=False), "missing_out_proj"),
            ("projections", "out_proj bias follows qkv_bias", Knobs(bias="out_proj_follows"),
             "out_proj_without_bias"),
        ]
    return rows


def padding_families():
    return [
        ("padding", "finfo.min after the causal -inf", Knobs(padding_fill="finfo_after"), EQUIVALENT),
        ("padding", "-1e20 after the causal -inf (the notes')", Knobs(padding_fill="minus_1e20_after"), EQUIVALENT),
        ("padding", "-1e9 before the causal -inf", Knobs(padding_fill="minus_1e9_before"), EQUIVALENT),
        ("padding", "-inf", Knobs(padding_fill="neg_inf"), "padding_neg_inf"),
        ("padding", "attention_mask ignored", Knobs(padding_fill="ignored"), "padding_ignored"),
        ("padding", "attention_mask inverted", Knobs(padding_fill="inverted"), "padding_inverted"),
        ("padding", "broadcast over the query axis", Knobs(padding_fill="query_axis"), "padding_query_axis"),
        ("padding", "viewed with the notebook's batch size", Knobs(padding_fill="global_batch"),
         "size_from_notebook"),
    ]


def self_attention_families(v2):
    rows = [
        ("softmax axis", "dim=0", Knobs(softmax_dim=0), "softmax_wrong_dim"),
        ("softmax axis", "dim=1", Knobs(softmax_dim=1), EQUIVALENT),
        ("scale", "none", Knobs(scale="none"), "missing_scaling"),
        ("scale", "sqrt(d_in)", Knobs(scale="d_in"), "scale_by_d_in"),
        ("scale", "sqrt(d_out)", Knobs(scale="d_out"), EQUIVALENT),
        ("scale", "after the softmax", Knobs(scale="after_softmax"), "scale_after_softmax"),
        *SCALE_ON_ONE_PROJECTION,
        *FITTED_SCALES,
        ("projections", "query and key swapped", Knobs(swap_qk=True), "query_key_swapped"),
    ]
    if v2:
        rows += [
            ("projections", "x @ layer.weight", Knobs(linear="matrix"), "linear_as_matrix"),
            *((("projections", f"x @ layer.weight for the {role} only", Knobs(linear="matrix", only=role),
                "linear_as_matrix")) for role in ROLES),
            ("projections", "bias always", Knobs(bias="always"), "qkv_bias_ignored"),
            ("projections", "bias never", Knobs(bias="never"), "qkv_bias_ignored"),
        ]
    return rows


def wrapper_families():
    return [
        ("heads", "cat on the token axis", WrapperKnobs(join="cat_tokens"), "heads_on_token_axis"),
        # The heads joined on the batch axis (the notes' cat(dim=0) on a batch) have no name of their own: "along the
        # token axis" was false of them (issue 58). tests/mutants' WrapperFirstAxis keeps them, failing unnamed.
        ("heads", "stacked last", WrapperKnobs(join="stack_last"), "heads_stacked"),
        ("heads", "stacked first", WrapperKnobs(join="stack_first"), "heads_stacked"),
        ("heads", "plain list", WrapperKnobs(heads="plain_list"), "heads_plain_list"),
        ("heads", "one head repeated", WrapperKnobs(heads="shared"), "heads_shared"),
        ("dropout", "not passed to the heads", WrapperKnobs(dropout="zero"), "dropout_missing"),
        ("projections", "qkv_bias not passed to the heads", WrapperKnobs(bias="never"), "qkv_bias_ignored"),
    ]


def grid():
    """Every variant of every module exercise."""
    variants = []
    for v2, exercise, make in ((False, "self_attention_v1", students.self_attention_v1),
                               (True, "self_attention_v2", students.self_attention_v2)):
        variants += [Variant(exercise, family, name, expected, make(knobs))
                     for family, name, knobs, expected in self_attention_families(v2)
                     if not (not v2 and knobs.bias != "qkv_bias")]
    variants += [Variant("causal_attention", family, name, expected, students.causal_attention(knobs))
                 for family, name, knobs, expected in forward_families(multi_head=False)]
    variants += [Variant("multi_head_attention", family, name, expected, students.multi_head_attention(knobs))
                 for family, name, knobs, expected in forward_families(multi_head=True)]
    variants += [Variant("padding_mask", family, name, expected, students.multi_head_attention(knobs))
                 for family, name, knobs, expected in padding_families()]
    variants += [Variant("mha_wrapper", family, name, expected, students.wrapper(knobs, solutions.CausalAttention))
                 for family, name, knobs, expected in wrapper_families()]
    return variants


def grade(variant, seed=DEFAULT_SEED):
    exercise = EXERCISES_BY_ID[variant.exercise]
    results = run_exercise(exercise.id, {exercise.names[0]: variant.student}, seed=seed, lang="en")
    named = {result.misconception for result in results if result.status != PASSED and result.misconception}
    return Outcome(variant, sum(r.score for r in results), float(exercise.points), named)


def table(outcomes):
    """Per exercise and family: variants, losing, named own, named wrong, alternatives kept; then the totals."""
    rows, totals = {}, [0, 0, 0, 0, 0, 0]
    for outcome in outcomes:
        key = (outcome.variant.exercise, outcome.variant.family)
        row = rows.setdefault(key, [0, 0, 0, 0, 0, 0])
        mistake = outcome.variant.misconception is not EQUIVALENT
        counts = (1, mistake, mistake and outcome.loses_points, mistake and outcome.loses_points and outcome.named_own,
                  bool(outcome.named_wrong), not mistake and not outcome.loses_points and not outcome.named)
        for index, count in enumerate(counts):
            row[index] += int(count)
            totals[index] += int(count)
    header = f"{'exercise':<22}{'family':<14}{'variants':>9}{'mistakes':>9}{'lose':>6}{'named':>7}{'wrong':>7}" \
             f"{'kept':>6}"
    lines = [header, "-" * len(header)]
    for (exercise, family), row in rows.items():
        lines.append(f"{exercise:<22}{family:<14}" + "".join(f"{v:>{w}}" for v, w in zip(row, (9, 9, 6, 7, 7, 6),
                                                                                         strict=True)))
    lines.append("-" * len(header))
    lines.append(f"{'all':<36}" + "".join(f"{v:>{w}}" for v, w in zip(totals, (9, 9, 6, 7, 7, 6), strict=True)))
    _, mistakes, losing, named, wrong, kept = totals
    alternatives = totals[0] - mistakes
    lines.append(f"mistakes that lose points and are named with their own misconception: {named}/{mistakes} "
                 f"({100.0 * named / max(mistakes, 1):.1f} %); named with a wrong one: {wrong}; legitimate "
                 f"alternatives that keep full marks: {kept}/{alternatives}")
    return "\n".join(lines)


def problems(outcomes):
    """One line per variant the checks get wrong."""
    lines = []
    for outcome in outcomes:
        if outcome.right:
            continue
        variant = outcome.variant
        expected = variant.misconception
        what = "must keep full marks" if expected is EQUIVALENT else f"must be named {expected}"
        lines.append(f"{variant.exercise} / {variant.family} / {variant.name}: {what}; score {outcome.score:g}/"
                     f"{outcome.max_score:g}, named {sorted(outcome.named) or 'nothing'}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m devtools.variant_grid", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"check seed (default {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    outcomes = [grade(variant, args.seed) for variant in grid()]
    print(table(outcomes))
    wrong = problems(outcomes)
    for line in wrong:
        print(f"  ✘ {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
