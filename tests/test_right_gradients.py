"""Issue 58, item 5: what a learner's read of the feedback found, written as the learner's own notebook cells.

- A hole: code that computes part of its result where autograd does not record (torch.no_grad(), .detach(), .data)
  gave the right values and passed every check, public and hidden, where the checks only asked that *some* gradient
  reach the input. Now the gradient that reaches the input (and, for a module, every parameter) must be the
  reference's, for an upstream mix the judge rebuilds from the case; the public check (or a hidden check's preview)
  shows it first, and the hidden check takes the points.
- A passing row whose words the code contradicts: the wrapper's structure check says "registered heads that start
  from weights of their own" and passed `nn.ModuleList([head] * num_heads)`.
- False sentences: "a squeeze, view or reshape at the end" for code that has none, the grader's own line quoted as
  the learner's, the internal tag "(raised)", "the values above" where no values are shown (tests/test_hint_ladder.py).

Each learner attempt is graded in-process here and, for one attempt per notebook, through `attnkit grade`.
"""

import json
import re
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest
import torch
import torch.nn.functional as F
from check_helpers import assert_full_marks, score
from shell_helpers import notebook_shell, run
from torch import nn

from attnkit import solutions
from attnkit.solutions.n04_multi_head_attention import padding_fill_value
from autograder import cli
from autograder.checking.check_types import PASSED
from autograder.checking.probing import describe_exception
from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.running.runner import DEFAULT_SEED, run_exercise

# What the notebooks give (or an earlier exercise defined) before the learner's cell runs.
GIVEN = {"torch": torch, "nn": nn, "F": F, "attention_scores": solutions.attention_scores,
         "causal_mask": solutions.causal_mask, "CausalAttention": solutions.CausalAttention,
         "split_heads": solutions.split_heads, "merge_heads": solutions.merge_heads,
         "padding_fill_value": padding_fill_value,
         "causal_weights_renormalised": solutions.causal_weights_renormalised,
         "causal_weights_neg_inf": solutions.causal_weights_neg_inf}


def cell(code):
    """The notebook's names after the learner's cell ran, as the grading child runs a cell: through its IPython shell
    (its lines readable, as a kernel's are)."""
    with notebook_shell(Path(tempfile.gettempdir())) as (shell, namespace):
        namespace.update(GIVEN)
        error, _printed = run(shell, textwrap.dedent(code))
    if error is not None:
        raise error
    return namespace


def graded(exercise_id, namespace, include_hidden=True, seed=DEFAULT_SEED):
    names = EXERCISES_BY_ID[exercise_id].names
    results = run_exercise(exercise_id, {name: namespace[name] for name in names}, seed=seed,
                           include_hidden=include_hidden)
    return {result.id: result for result in results}


CONTEXT_WEIGHTS_NO_GRAD = """
def context_vectors(inputs):
    with torch.no_grad():  # the weights are only coefficients
        attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return attn_weights @ inputs
"""
CONTEXT_WEIGHTS_DETACHED = """
def context_vectors(inputs):
    attn_weights = torch.softmax(attention_scores(inputs), dim=-1).detach()
    return attn_weights @ inputs
"""
CONTEXT_SCORES_FROM_DATA = """
def context_vectors(inputs):
    attn_weights = torch.softmax(inputs.data @ inputs.data.T, dim=-1)
    return attn_weights @ inputs
"""
ROUTE_SUMS_NO_GRAD = """
def causal_weights_renormalised(attn_weights):
    num_tokens = attn_weights.shape[-1]
    keep = torch.tril(torch.ones(num_tokens, num_tokens, dtype=attn_weights.dtype, device=attn_weights.device))
    masked = attn_weights * keep
    with torch.no_grad():  # the row sums only rescale
        row_sums = masked.sum(dim=-1, keepdim=True)
    return masked / row_sums
"""
ROUTE_SOFTMAX_WRITTEN_OUT = """
def causal_weights_neg_inf(attn_scores):
    num_tokens = attn_scores.shape[-1]
    masked = attn_scores.masked_fill(causal_mask(num_tokens).to(attn_scores.device), -torch.inf)
    exps = torch.exp(masked - masked.max(dim=-1, keepdim=True).values)
    return exps / exps.sum(dim=-1, keepdim=True).detach()
"""
SELF_ATTENTION_V1_DETACHED_SUMS = """
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        exps = torch.exp(queries @ keys.T / keys.shape[-1] ** 0.5)
        return exps / exps.sum(dim=-1, keepdim=True).detach() @ values
"""
SELF_ATTENTION_V2_SUMS_NO_GRAD = """
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        scores = queries @ keys.T / keys.shape[-1] ** 0.5
        exps = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        return exps / row_sums @ values
"""
CAUSAL_INIT = """
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
"""
CAUSAL_SUMS_NO_GRAD = CAUSAL_INIT + """
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        scaled = attn_scores / keys.shape[-1] ** 0.5
        exps = torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        return self.dropout(exps / row_sums) @ values
"""
CAUSAL_VALUES_DETACHED = CAUSAL_INIT + """
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries = self.W_key(x), self.W_query(x)
        values = self.W_value(x.detach())  # "the values are only looked up"
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return attn_weights @ values
"""
MHA_INIT = """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))
"""
MHA_PADDING_NO_GRAD = MHA_INIT + """
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            with torch.no_grad():  # masking is not learned
                padded_keys = (attention_mask == 0).view(b, 1, 1, num_tokens)
                attn_scores = attn_scores.masked_fill(padded_keys, padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))
"""
MHA_SUMS_NO_GRAD = MHA_INIT + """
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        if attention_mask is not None:
            padded_keys = (attention_mask == 0).view(b, 1, 1, num_tokens)
            attn_scores = attn_scores.masked_fill(padded_keys, padding_fill_value(attn_scores.dtype))
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        scaled = attn_scores / keys.shape[-1] ** 0.5
        exps = torch.exp(scaled - scaled.max(dim=-1, keepdim=True).values)
        with torch.no_grad():
            row_sums = exps.sum(dim=-1, keepdim=True)
        return self.out_proj(merge_heads(self.dropout(exps / row_sums) @ values))
"""

# (exercise, the learner's cell, the public check that shows it first, the hidden check that takes its points, the
# mistake named). The hidden check's preview is the public check where the requirement is a hidden check's.
HOLES = [
    ("context_vectors", CONTEXT_WEIGHTS_NO_GRAD, "context_vectors.float64.preview", "context_vectors.float64",
     "gradient_cut"),
    ("context_vectors", CONTEXT_WEIGHTS_DETACHED, "context_vectors.float64.preview", "context_vectors.float64",
     "gradient_cut"),
    ("context_vectors", CONTEXT_SCORES_FROM_DATA, "context_vectors.float64.preview", "context_vectors.float64",
     "gradient_cut"),
    ("masking_routes", ROUTE_SUMS_NO_GRAD, "masking_routes.renormalise_notes", "masking_routes.renormalise_random",
     "gradient_cut"),
    ("masking_routes", ROUTE_SOFTMAX_WRITTEN_OUT, "masking_routes.neg_inf_notes", "masking_routes.neg_inf_random",
     "gradient_cut"),
    ("self_attention_v1", SELF_ATTENTION_V1_DETACHED_SUMS, "self_attention_v1.properties.preview",
     "self_attention_v1.properties", "forward_step_detached"),
    ("self_attention_v2", SELF_ATTENTION_V2_SUMS_NO_GRAD, "self_attention_v2.properties.preview",
     "self_attention_v2.properties", "forward_step_detached"),
    ("causal_attention", CAUSAL_SUMS_NO_GRAD, "causal_attention.properties.preview", "causal_attention.properties",
     "forward_step_detached"),
    ("causal_attention", CAUSAL_VALUES_DETACHED, "causal_attention.properties.preview",
     "causal_attention.properties", "forward_step_detached"),
    ("multi_head_attention", MHA_SUMS_NO_GRAD, "multi_head_attention.properties.preview",
     "multi_head_attention.properties", "forward_step_detached"),
    ("padding_mask", MHA_PADDING_NO_GRAD, "padding_mask.example", "padding_mask.hidden", "forward_step_detached"),
]


@pytest.mark.parametrize(("exercise_id", "code", "public_id", "hidden_id", "mistake"), HOLES,
                         ids=[f"{row[0]}-{index}" for index, row in enumerate(HOLES)])
def test_a_step_outside_autograd_loses_the_public_check_first_and_the_hidden_points(exercise_id, code, public_id,
                                                                                     hidden_id, mistake):
    namespace = cell(code)
    shown = graded(exercise_id, namespace, include_hidden=False)  # what check(...) runs
    assert shown[public_id].status != PASSED and shown[public_id].misconception == mistake, shown[public_id].message
    results = graded(exercise_id, namespace)  # what grade(...) runs
    assert results[hidden_id].status != PASSED and results[hidden_id].score == 0
    assert results[hidden_id].misconception == mistake, results[hidden_id].message
    assert score(results) < EXERCISES_BY_ID[exercise_id].points
    # Only the gradient is wrong: every value check passes.
    assert all(result.status == PASSED for result in results.values()
               if result.id not in (public_id, hidden_id) and "gradient" not in result.title), \
        [result.message for result in results.values() if result.status != PASSED]


HONEST = [
    # The shift is a constant for the softmax: the maximum may be taken with gradients off.
    ("softmax_stable", """
def softmax_stable(x, dim=-1):
    with torch.no_grad():
        largest = x.max(dim=dim, keepdim=True).values
    exps = torch.exp(x - largest)
    return exps / exps.sum(dim=dim, keepdim=True)
"""),
    # A fill made with gradients off and added: a constant, the softmax's gradient is the same.
    ("masking_routes", """
def causal_weights_neg_inf(attn_scores):
    with torch.no_grad():
        fill = torch.zeros_like(attn_scores).masked_fill(
            causal_mask(attn_scores.shape[-1]).to(attn_scores.device), -torch.inf)
    return torch.softmax(attn_scores + fill, dim=-1)
"""),
    # The notes' other route inside the module, the mask read with gradients off, masked_fill_ in place.
    ("causal_attention", CAUSAL_INIT + """
    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        with torch.no_grad():
            visible = ~self.mask.bool()[:num_tokens, :num_tokens]
        attn_weights = torch.softmax(queries @ keys.transpose(1, 2) / keys.shape[-1] ** 0.5, dim=-1)
        masked = attn_weights * visible
        attn_weights = masked / masked.sum(dim=-1, keepdim=True)
        return self.dropout(attn_weights) @ values
"""),
    # The padding selection made with gradients off (booleans need none), filled after the causal mask, with -1e9.
    ("padding_mask", MHA_INIT + """
    def forward(self, x, attention_mask=None):
        b, num_tokens, d_in = x.shape
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        if attention_mask is not None:
            with torch.no_grad():
                padded_keys = (attention_mask == 0).view(b, 1, 1, num_tokens)
            attn_scores = attn_scores.masked_fill(padded_keys, -1e9)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(merge_heads(attn_weights @ values))
"""),
]


@pytest.mark.parametrize(("exercise_id", "code"), HONEST, ids=[row[0] for row in HONEST])
def test_gradients_off_where_nothing_needs_them_keep_full_marks(exercise_id, code):
    for seed in (DEFAULT_SEED, 1, 2):
        assert_full_marks(exercise_id, graded(exercise_id, cell(code), seed=seed), seed)
    if exercise_id == "padding_mask":  # the same forward is the multi-head exercise's too
        assert_full_marks("multi_head_attention", graded("multi_head_attention", cell(code)), DEFAULT_SEED)


@pytest.mark.parametrize("exercise_id", sorted(EXERCISES_BY_ID))
def test_the_reference_keeps_full_marks(exercise_id):
    names = EXERCISES_BY_ID[exercise_id].names
    assert_full_marks(exercise_id, graded(exercise_id, {name: getattr(solutions, name) for name in names}),
                      DEFAULT_SEED)


SHARED_HEADS = """
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        head = CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
        self.heads = nn.ModuleList([head] * num_heads)

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
"""


def test_shared_heads_fail_the_row_that_promises_heads_of_their_own():
    """The exercise's text says each head is a module of its own with its own weights, and the notes build
    num_heads separate CausalAttention modules: the structure check's row, which says so, fails, named; every row
    that passes says nothing the code contradicts."""
    shown = graded("mha_wrapper", cell(SHARED_HEADS), include_hidden=False)
    structure = shown["mha_wrapper.structure.preview"]
    assert structure.status != PASSED and structure.misconception == "heads_shared", structure.message
    assert "self.heads[1] is the very module self.heads[0] is" in structure.message
    passing = [result.title for result in shown.values() if result.status == PASSED]
    assert passing and not [title for title in passing if "of their own" in title or "separate" in title]
    results = graded("mha_wrapper", cell(SHARED_HEADS))
    assert results["mha_wrapper.structure"].score == 0


def test_a_shape_message_names_a_regrouping_call_only_where_the_code_makes_one():
    """The right numbers in another shape said "a squeeze, view or reshape at the end changed its axes" of any code;
    now it names one only where the call ran it (the probe records the torch functions and ops it ran)."""
    broadcast = cell("""
def context_vectors(inputs):
    attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return attn_weights @ inputs + torch.zeros(1, 1, 1)  # a bias of zeros, broadcast
""")
    for include_hidden in (False, True):
        for result in graded("context_vectors", broadcast, include_hidden=include_hidden).values():
            assert not re.search(r"\b(squeeze|view|reshape)\b", result.message), result.message
    message = graded("context_vectors", broadcast, include_hidden=False)["context_vectors.notes"].message
    assert "the numbers are right, but the output has shape (1, 6, 3), not (6, 3)" in message, message
    unsqueezed = cell("""
def context_vectors(inputs):
    attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return (attn_weights @ inputs).unsqueeze(0)
""")
    message = graded("context_vectors", unsqueezed, include_hidden=False)["context_vectors.notes"].message
    assert "The operations your code ran include unsqueeze:" in message and not re.search(r"\bview\b", message)


DROPOUT_MODULE = """
def to_torch_multihead(mha):
    d_out = mha.d_out
    if mha.W_query.in_features != d_out:
        raise ValueError("nn.MultiheadAttention needs d_in == d_out")
    torch_mha = nn.MultiheadAttention(embed_dim=d_out, num_heads=mha.num_heads, dropout=mha.dropout, bias=True,
                                      batch_first=True)
    torch_mha = torch_mha.to(dtype=mha.W_query.weight.dtype)
    layers = (mha.W_query, mha.W_key, mha.W_value)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.cat([layer.weight for layer in layers]))
        torch_mha.in_proj_bias.copy_(torch.cat([layer.bias if layer.bias is not None
                                                else torch.zeros_like(layer.weight[:, 0]) for layer in layers]))
        torch_mha.out_proj.weight.copy_(mha.out_proj.weight)
        torch_mha.out_proj.bias.copy_(mha.out_proj.bias)
    return torch_mha
"""


def test_the_graders_own_line_is_never_quoted_as_the_learners():
    """nn.MultiheadAttention keeps whatever dropout it is given, an nn.Dropout too, and the probe read it with
    float(): the check quoted the grader's `"dropout": float(theirs.dropout),` as the learner's failing line."""
    results = graded("torch_equivalence", cell(DROPOUT_MODULE))
    for result in results.values():
        assert "theirs" not in result.message and "refused one of its arguments" not in result.message, result.message
    notes = results["torch_equivalence.notes"]
    assert notes.status != PASSED and "dropout is a Dropout, not a probability" in notes.message, notes.message


def test_an_error_raised_in_code_that_is_not_the_learners_names_no_line(tmp_path):
    """describe_exception quotes the last frame of the student's own code, and no other: an error raised inside the
    grader's files (or torch's) with no frame of the student's has no line to quote."""
    grader = tmp_path / "site-packages" / "autograder" / "course" / "probe.py"
    grader.parent.mkdir(parents=True)
    # As a probe does: it calls, reads the result with float() and catches what is raised (run_probe).
    grader.write_text("def probe(function, value):\n    try:\n        return float(function(value))\n"
                      "    except TypeError as error:\n        return error\n", encoding="utf-8")
    namespace = {}
    exec(compile(grader.read_text(encoding="utf-8"), str(grader), "exec"), namespace)  # noqa: S102 - test code
    described = describe_exception(namespace["probe"](lambda value: value, nn.Dropout(0.1)))
    assert described["type"] == "TypeError" and described["line"] == "" and described["code"] == "", described
    learner = cell("def rate(value):\n    return float(value)\n")  # the same call, in the learner's own cell
    assert describe_exception(namespace["probe"](learner["rate"], nn.Dropout(0.1)))["line"] == "return float(value)"


def test_no_internal_tag_reaches_the_learner():
    """A call that raises said "gradients do not flow back ... (raised)": it now says what raised, and where."""
    inference = cell("""
def context_vectors(inputs):
    with torch.inference_mode():
        attn_weights = torch.softmax(attention_scores(inputs), dim=-1)
    return attn_weights @ inputs.clone()
""")
    for include_hidden in (False, True):
        results = graded("context_vectors", inference, include_hidden=include_hidden)
        failing = [result for result in results.values() if result.status != PASSED]
        assert failing
        for result in failing:
            assert not any(tag in result.message for tag in ("(raised)", "(no_gradient)", "(not_finite)")), \
                result.message
            # The matmul outside inference mode saves an inference tensor for backward: the call itself raises,
            # before any backward, and the message says so (issue 58: the phase from where it was raised).
            assert "raises RuntimeError" in result.message and "backward() raised" not in result.message, \
                result.message


# ---------------------------------------------------------------------------------------------
# The same attempts handed in and graded by `attnkit grade`


FAST = ["--timeout", "20", "--memory", "1024"]


def handed_in(repo_root, notebook, cells):
    """The solved notebook with the learner's code in the given solution cells ({grade_id: code})."""
    document = nbformat.read(repo_root / "source" / "attention" / f"{notebook}.ipynb", as_version=4)
    for notebook_cell in document.cells:
        grade_id = notebook_cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            notebook_cell.source = textwrap.dedent(cells.pop(grade_id)).strip() + "\n"
    assert not cells, f"no such cells: {sorted(cells)}"
    return nbformat.writes(document).encode()


@pytest.fixture(scope="module")
def graded_class(repo_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("gradients")
    submitted, out = root / "submitted", root / "out"
    students = {
        "nb01": {NOTEBOOKS[0]: {"solution_context_vectors": CONTEXT_WEIGHTS_NO_GRAD}},
        "nb02": {NOTEBOOKS[1]: {"solution_self_attention_v2": SELF_ATTENTION_V2_SUMS_NO_GRAD}},
        "nb03": {NOTEBOOKS[2]: {"solution_causal_weights_renormalised": ROUTE_SUMS_NO_GRAD,
                                "solution_causal_attention": CAUSAL_SUMS_NO_GRAD}},
        "nb04": {NOTEBOOKS[3]: {"solution_multi_head_attention": MHA_PADDING_NO_GRAD,
                                "solution_mha_wrapper": SHARED_HEADS,
                                "solution_torch_equivalence": DROPOUT_MODULE}},
    }
    for student, notebooks in students.items():
        folder = submitted / student / "attention"
        folder.mkdir(parents=True)
        for notebook, cells in notebooks.items():
            (folder / f"{notebook}.ipynb").write_bytes(handed_in(repo_root, notebook, dict(cells)))
    assert cli.main(["grade", str(submitted), "--out", str(out), *FAST]) == 0
    records = {student: json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
               for student in students}
    # The checks of the notebook each handed in (the others are missing: 0 points, not the point here).
    return {student: {check["id"]: check for notebook in record["notebooks"] if notebook["status"] == "graded"
                      for check in notebook["checks"]} for student, record in records.items()}


GRADED_HOLES = {
    "nb01": {"context_vectors.float64": "gradient_cut"},
    "nb02": {"self_attention_v2.properties": "forward_step_detached"},
    "nb03": {"masking_routes.renormalise_notes": "gradient_cut", "masking_routes.renormalise_random": "gradient_cut",
             "causal_attention.properties": "forward_step_detached"},
    "nb04": {"padding_mask.example": "forward_step_detached", "padding_mask.hidden": "forward_step_detached",
             "mha_wrapper.notes": "heads_shared", "mha_wrapper.shapes": "heads_shared",
             "mha_wrapper.structure": "heads_shared", "torch_equivalence.notes": None,
             "torch_equivalence.shapes": None},
}


@pytest.mark.slow
@pytest.mark.parametrize("student", sorted(GRADED_HOLES))
def test_attnkit_grade_takes_the_points_of_the_checks_the_attempt_fails_and_no_others(graded_class, student):
    checks = graded_class[student]
    failing = {check_id: check["misconception"] for check_id, check in checks.items() if check["status"] != "passed"}
    assert failing == GRADED_HOLES[student], failing
    assert all(checks[check_id]["score"] == 0 for check_id in failing)
    for check in checks.values():
        assert "(raised)" not in check["message"] and "theirs" not in check["message"], check["message"]
