"""No hidden surprise, case by case: every kind of input a hidden check draws is shown by a public check (or a
preview) of the same exercise first.

A kind is, for a tensor input, its sign pattern (all negative, mixed, all positive), its magnitude class (tiny,
ordinary, near overflow) and its size class (one entry, one row, a matrix, a batch), and its dtype; for a module's
case, the edges of its sizes (a batch of one, one token, num_tokens at context_length) and its dtype. A softmax
whose sum is clamped at 1 passed every public check of softmax_naive (the notes' exponentials sum far above 1) and
lost points at grading on random all-negative vectors: the comparison below found that gap and the others listed.
"""

import random
from collections.abc import Iterable

import pytest
import torch
from check_helpers import results_by_id, score

from attnkit import solutions
from autograder.checking.check_types import PASSED
from autograder.course.catalog import CHECKS
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.n01_attention_without_weights.ex1_softmax.probe import case_tensor

SEEDS = range(20)  # hidden cases are drawn per grading seed: enough draws to meet each kind a generator makes

# Gaps the comparison finds today, each left for its own change (kinds that no public case shows yet). The test
# below fails on any other gap and on a listed one once it is closed (then strike it from here). None is left:
# context_vectors' all-negative matrix, mha_wrapper's batch of one and torch_equivalence's one token are each a case
# drawn last on every draw of the hidden check's own generator, so that its preview shows them first (issue 58).
KNOWN_GAPS: dict[str, set[tuple[str, ...]]] = {}


def tensor_kinds(tensor: torch.Tensor) -> set[tuple[str, ...]]:
    sign = "neg" if bool((tensor < 0).all()) else "pos" if bool((tensor > 0).all()) else "mixed"
    largest = float(tensor.abs().max())
    magnitude = "tiny" if largest < 1e-3 else "near overflow" if largest > 80 else "ordinary"
    size = "one" if tensor.numel() == 1 else ("row", "matrix")[tensor.dim() - 1] if tensor.dim() <= 2 else "batch"
    return {("values", sign, magnitude, size), ("dtype", str(tensor.dtype).removeprefix("torch."))}


def case_kinds(case: object) -> set[tuple[str, ...]]:
    """The kinds of one case: a tensor's when the case describes one (notebook 01's), else its sizes' edges."""
    if not isinstance(case, dict):
        return set()
    try:
        return tensor_kinds(case_tensor(case))  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        pass
    kinds = {("dtype", str(case.get("dtype", "float32")))}
    if case.get("batch") == 1:
        kinds.add(("size", "batch of one"))
    if case.get("num_tokens") == 1:
        kinds.add(("size", "one token"))
    if "context_length" in case and case.get("num_tokens") == case["context_length"]:
        kinds.add(("size", "num_tokens at context_length"))
    return kinds


def kinds_of(cases: Iterable[object]) -> set[tuple[str, ...]]:
    return {kind for case in cases for kind in case_kinds(case)}


def unshown_kinds() -> dict[str, set[tuple[str, ...]]]:
    gaps = {}
    for hidden in (check for check in CHECKS if check.hidden):
        drawn = kinds_of(case for seed in SEEDS for case in hidden.cases(random.Random(seed)))
        shown = kinds_of(case for check in CHECKS if check.exercise == hidden.exercise and not check.hidden
                         for case in check.cases(random.Random(0)))
        if drawn - shown:
            gaps[hidden.id] = drawn - shown
    return gaps


def test_every_hidden_kind_is_shown_publicly_but_the_known_gaps():
    assert unshown_kinds() == KNOWN_GAPS


def test_the_kinds_tell_a_clamped_sums_inputs_apart():
    assert tensor_kinds(torch.tensor([-2.0])) == {("values", "neg", "ordinary", "one"), ("dtype", "float32")}
    assert ("values", "mixed", "near overflow", "row") in tensor_kinds(torch.tensor([-1000.0, 0.0, 1000.0]))
    assert case_kinds({"batch": 1, "num_tokens": 1, "context_length": 1, "dtype": "float64"}) == {
        ("dtype", "float64"), ("size", "batch of one"), ("size", "one token"), ("size", "num_tokens at context_length")}


# Learner attempts written for this test: a sum bounded below, in the forms a learner writes it.
def sum_clamped(x):
    exponentials = torch.exp(x)
    return exponentials / exponentials.sum(dim=0).clamp(min=1.0)


def sum_at_least_one(x):
    exponentials = x.exp()
    return exponentials / torch.maximum(exponentials.sum(0, keepdim=True), torch.ones(1, dtype=x.dtype))


# What the notes teach, written other ways: none of them may lose a point.
def divided_by_sum(x):
    return torch.exp(x) / torch.sum(torch.exp(x), dim=0)


def shifted_by_max(x):
    exponentials = torch.exp(x - x.max(dim=0, keepdim=True).values)
    return exponentials / exponentials.sum(dim=0, keepdim=True)


def divided_by_sum_loop(x):
    exponentials = torch.exp(x)
    total = torch.zeros_like(exponentials[0])
    for entry in exponentials:
        total = total + entry
    return exponentials / total


NOTES_CHECK = "softmax_naive.notes"


@pytest.mark.parametrize("student", [sum_clamped, sum_at_least_one])
@pytest.mark.parametrize(("lang", "said"), [("en", "the weights do not sum to 1 along the axis the softmax normalises"),
                                           ("zh", "沿 softmax 归一化的那个维度，权重之和不为 1")])
def test_a_sum_bounded_below_fails_the_public_check(student, lang, said):
    public = results_by_id("softmax_naive", {"softmax_naive": student}, lang=lang, include_hidden=False)
    assert public[NOTES_CHECK].status != PASSED
    assert public[NOTES_CHECK].message.endswith(said)
    assert public[NOTES_CHECK].misconception is None  # no known mistake is named that the code does not make


@pytest.mark.parametrize("student", [solutions.softmax_naive, divided_by_sum, shifted_by_max, divided_by_sum_loop])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_the_notes_teach_keeps_full_marks(student, lang):
    results = results_by_id("softmax_naive", {"softmax_naive": student}, lang=lang)
    assert all(result.status == PASSED for result in results.values()), [r.message for r in results.values()]
    assert score(results) == pytest.approx(EXERCISES_BY_ID["softmax_naive"].points)


def sum_padded_by_a_small_term(x):
    """A term added to the sum "so it is never zero": no error while the exponentials sum far above it."""
    exponentials = torch.exp(x)
    return exponentials / (exponentials.sum(dim=0) + 1e-8)


def test_a_term_added_to_the_sum_fails_the_public_check_on_scores_far_below_zero():
    """Exponentials summing to a few billionths (four scores near -21) make the term no small error: the public
    check shows it, so it is not a ✔ that loses nothing at grading (12x's xy-sn-11 kept every point)."""
    public = results_by_id("softmax_naive", {"softmax_naive": sum_padded_by_a_small_term}, include_hidden=False)
    assert public[NOTES_CHECK].status != PASSED
    assert public[NOTES_CHECK].misconception is None
