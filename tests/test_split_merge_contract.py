"""split_heads and merge_heads on every kind of input the notebook allows (issue 41): non-contiguous views, leaves that
require grad, float64/float16/bfloat16, one batch row, one head, head_dim 1, one token, and the input never changed.

The attempts below are written from the release notebook's text of exercises 04-2 and 04-3 (view the last axis as
(num_heads, head_dim), bring the heads before the tokens; transpose back, then flatten), as a learner would.
"""

import pytest
import torch
from check_helpers import results_by_id

from autograder.checking.check_types import PASSED, Evidence
from autograder.checking.probing import input_changes
from autograder.course import catalog
from autograder.running.runner import DEFAULT_SEED, cases_for

# ---------------------------------------------------------------------------------------------
# split_heads


def split_book(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_chunks(x, num_heads):
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def split_reshape_swapaxes(x, num_heads):
    b, num_tokens, _ = x.shape
    return x.reshape(b, num_tokens, num_heads, -1).swapaxes(1, 2)


def split_flattening_batch(x, num_heads):
    """Views batch and tokens as one axis first: a view that joins axes."""
    b, num_tokens, d_out = x.shape
    rows = x.view(b * num_tokens, num_heads, d_out // num_heads)
    return rows.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_as_strided(x, num_heads):
    """Reads the memory as if the input were contiguous."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    return x.as_strided((b, num_heads, num_tokens, head_dim), (num_tokens * d_out, head_dim, d_out, 1))


def split_into_float32(x, num_heads):
    """Fills a new tensor head by head: torch.zeros is float32 whatever the input is."""
    b, num_tokens, d_out = x.shape
    head_dim = d_out // num_heads
    out = torch.zeros(b, num_heads, num_tokens, head_dim)
    for head in range(num_heads):
        out[:, head] = x[..., head * head_dim:(head + 1) * head_dim]
    return out


def split_unsqueezed_in_place(x, num_heads):
    """Adds the heads axis to the input itself."""
    b, num_tokens, d_out = x.shape
    x.unsqueeze_(2)
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_transposed_view_in_place(x, num_heads):
    """transpose_ on the view: the input keeps its numbers, but autograd refuses it on a leaf that requires grad."""
    b, num_tokens, d_out = x.shape
    heads = x.view(b, num_tokens, num_heads, d_out // num_heads)
    heads.transpose_(1, 2)
    return heads


def split_without_grad(x, num_heads):
    b, num_tokens, d_out = x.shape
    with torch.no_grad():
        return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_drops_requires_grad(x, num_heads):
    """Switches the caller's tensor out of autograd: the call itself raises (a tensor of a graph is no leaf)."""
    b, num_tokens, d_out = x.shape
    x.requires_grad_(False)
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def split_squeezed(x, num_heads):
    """squeeze() to tidy up: drops every axis of size 1, the batch, the head or head_dim one among them."""
    b, num_tokens, d_out = x.shape
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2).squeeze()


# ---------------------------------------------------------------------------------------------
# merge_heads


def merge_book(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim)


def merge_cat(x):
    return torch.cat(x.unbind(1), dim=-1)


def merge_view_without_contiguous(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).view(b, num_tokens, num_heads * head_dim)


def merge_transpose_in_place(x):
    b, num_heads, num_tokens, head_dim = x.shape
    x.transpose_(1, 2)
    return x.reshape(b, num_tokens, num_heads * head_dim)


def merge_via_numpy(x):
    b, num_heads, num_tokens, head_dim = x.shape
    merged = x.detach().numpy().transpose(0, 2, 1, 3).reshape(b, num_tokens, num_heads * head_dim)
    return torch.from_numpy(merged.copy())


def merge_into_float32(x):
    b, num_heads, num_tokens, head_dim = x.shape
    out = torch.empty(b, num_tokens, num_heads * head_dim)
    for head in range(num_heads):
        out[..., head * head_dim:(head + 1) * head_dim] = x[:, head]
    return out


def run(exercise, student, **kwargs):
    return results_by_id(exercise, {exercise: student}, **kwargs)


CORRECT = [("split_heads", split_book), ("split_heads", split_chunks), ("split_heads", split_reshape_swapaxes),
           ("merge_heads", merge_book), ("merge_heads", merge_cat)]

# (exercise, attempt, the mistake named, or None when the table knows none, and what the public check says)
WRONG = [
    ("split_heads", split_flattening_batch, None, "not contiguous"),
    ("split_heads", split_as_strided, None, "wrong features"),
    ("split_heads", split_into_float32, None, "keep the input's dtype"),
    ("split_heads", split_unsqueezed_in_place, "heads_input_edited_in_place", "changed its input in place"),
    ("split_heads", split_transposed_view_in_place, None, "wrote into its input, or into a view of it"),
    ("split_heads", split_without_grad, "gradient_cut", ""),
    ("split_heads", split_drops_requires_grad, None, "the function itself raises RuntimeError"),
    ("split_heads", split_squeezed, None, ""),
    ("merge_heads", merge_view_without_contiguous, "view_after_transpose", ""),
    ("merge_heads", merge_transpose_in_place, "heads_input_edited_in_place", "changed its input in place"),
    ("merge_heads", merge_via_numpy, "gradient_cut", ""),
    ("merge_heads", merge_into_float32, None, "keep the input's dtype"),
]


@pytest.mark.parametrize(("exercise", "student"), CORRECT, ids=lambda v: getattr(v, "__name__", v))
def test_right_splits_and_merges_earn_every_point(exercise, student):
    results = run(exercise, student)
    assert all(r.status == PASSED and r.misconception is None for r in results.values()), \
        [r.message for r in results.values() if r.status != PASSED]


@pytest.mark.parametrize(("exercise", "student", "mistake", "symptom"), WRONG,
                         ids=lambda v: getattr(v, "__name__", None))
def test_each_wrong_attempt_loses_points_on_the_public_inputs_check(exercise, student, mistake, symptom):
    inputs = run(exercise, student, include_hidden=False)[f"{exercise}.inputs"]
    assert inputs.status != PASSED and inputs.max_score > 0
    assert symptom in inputs.message, inputs.message
    names = {r.misconception for r in run(exercise, student).values()} - {None}
    assert names <= ({mistake} if mistake else set()), names
    if mistake:
        assert inputs.misconception == mistake


def test_the_checks_before_the_contract_let_these_through():
    """The notes' examples (the only public check before) are contiguous float32 tensors of no graph: these attempts
    pass them, and only the inputs check tells."""
    for exercise, student in (("split_heads", split_flattening_batch), ("split_heads", split_as_strided),
                              ("split_heads", split_into_float32), ("merge_heads", merge_into_float32)):
        results = run(exercise, student, include_hidden=False)
        assert results[f"{exercise}.notes"].status == PASSED, student.__name__
        assert results[f"{exercise}.inputs"].status != PASSED, student.__name__


@pytest.mark.parametrize("exercise", ["split_heads", "merge_heads"])
def test_the_public_inputs_cover_every_kind_and_hidden_checks_only_vary_them(exercise):
    public = cases_for(catalog.CHECKS_BY_ID[f"{exercise}.inputs"], DEFAULT_SEED)
    assert not catalog.CHECKS_BY_ID[f"{exercise}.inputs"].hidden
    assert {case["dtype"] for case in public} == {"float32", "float64", "float16", "bfloat16"}
    assert any(case.get("leaf") for case in public)
    assert any(case["head_dim"] == 1 for case in public) and any(case["num_tokens"] == 1 for case in public)
    assert any(case["batch"] == 1 and case["num_heads"] == 1 for case in public)
    hidden = [case for check in catalog.checks_of(exercise) if check.hidden
              for case in cases_for(check, DEFAULT_SEED)]
    assert {case["layout"] for case in hidden} <= {case["layout"] for case in public} | {"random", "attention"}
    # A leaf that requires grad comes after a plain input in every check: an input edited in place is seen as such.
    for check in catalog.checks_of(exercise):
        leaves = [index for index, case in enumerate(cases_for(check, DEFAULT_SEED)) if case.get("leaf")]
        assert not leaves or leaves[0] > 0, check.id


def test_what_a_call_changes_of_its_input_is_read_from_the_tensor():
    x = torch.arange(12.0).view(2, 3, 2)
    assert input_changes(x, lambda t: t.transpose(1, 2))[1] == ""
    assert input_changes(x.clone(), lambda t: t.transpose_(1, 2))[1] == "layout"
    assert input_changes(x.clone(), lambda t: t.mul_(2))[1] == "values"
    assert input_changes(x.clone(), lambda t: t.mul_(1))[1] == "written"
    assert input_changes(x.clone().requires_grad_(True), lambda t: t.requires_grad_(False))[1] == "metadata"


def test_an_edited_input_is_named_from_the_fact_with_its_evidence():
    from autograder.course.n04_multi_head_attention.ex2_split_merge.judge import input_and_graph

    edited = input_and_graph("split_heads", {"out": torch.zeros(1), "input_change": "values", "gradient": "ok"})
    assert edited.misconception == "heads_input_edited_in_place" and edited.evidence is Evidence.FACT
    written = input_and_graph("split_heads", {"out": torch.zeros(1), "input_change": "written", "gradient": "ok"})
    assert written.misconception is None and written.message_key == "split_heads.input_written"
    cut = input_and_graph("merge_heads", {"out": torch.zeros(1), "input_change": "", "gradient": "no_gradient"})
    assert cut.misconception == "gradient_cut" and cut.evidence is Evidence.FACT
    raised = input_and_graph("merge_heads", {"out": torch.zeros(1), "input_change": "", "gradient": "raised"})
    assert raised.message_key == "function.backward_raised" and raised.misconception is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_the_student_kit_stores_half_precision_expectations_exactly(dtype):
    """The inputs checks' float16 and bfloat16 outputs are stored in the kit as JSON and read back bit for bit."""
    import json

    from autograder.integrations.student_kit.runtime.tensors import decode, encode

    x = (torch.rand(64, dtype=torch.float64) * 2 - 1).to(dtype)
    x[0], x[1] = float("inf"), float("nan")
    back = decode(json.loads(json.dumps(encode(x))))
    assert back.dtype == dtype and torch.equal(back[2:], x[2:]) and back[0] == x[0] and back[1].isnan()
