"""The bundled class of `make demo`: example submissions declared as data, built at run time.

Every submission starts from the solved source notebooks (`source/attention/`) or from the release as
handed out, and changes at most one cell: the code of one `### BEGIN SOLUTION` / `### END SOLUTION`
region (or, for the adversarial ones, the whole solution cell) is replaced by what the student wrote.
Building from the source notebooks at run time means the fixtures follow every change to them.

nbval style, the student id says the expected outcome:
  solved, untouched          100 and 0 points, from nbgrader and attnkit alike
  mistake-<what>             honest mistakes: points lost in `exercise`, `misconception` named by attnkit;
                             nbgrader and attnkit must give the same grade
  adversarial-<what>         attacks on the grader: attnkit gives the honest grade (points lost in
                             `exercise`), nbgrader may be fooled into a higher one
  edited-<what>              a given (locked) cell edited: both graders restore it and grade the given code
"""

import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS

SOLVED, RELEASE = "solved", "release"  # what a submission starts from
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
WHOLE_CELL = None  # `region` value: replace the solution cell's whole source
REPO_PLACEHOLDER = "{repo}"  # replaced by the attnkit checkout in a fixture's code


@dataclass(frozen=True)
class Submission:
    student_id: str
    description: str
    base: str = SOLVED  # SOLVED: source/attention/, solutions intact; RELEASE: release/attention/
    notebook: str | None = None  # the notebook the student changed (None: handed in as is)
    cell: str | None = None  # grade_id of the solution cell changed
    code: str = ""  # what the student wrote instead of the solution
    region: int | None = 0  # which BEGIN/END SOLUTION region of the cell (WHOLE_CELL: the whole cell)
    honest: bool = True  # False: an attack on the grader; nbgrader may be fooled
    total: float | None = None  # expected total (both graders) when it is fixed: solved 100, untouched 0
    exercise: str | None = None  # the exercise that must lose points (attnkit)
    misconception: str | None = None  # the misconception attnkit must name in that exercise
    needs_landlock: bool = False  # attnkit's expected outcome relies on Landlock (no reading outside)

    @property
    def kind(self):
        return self.student_id.split("-", 1)[0]


NB01, NB02, NB03, NB04 = NOTEBOOKS

CLASS = (
    Submission("solved", "the source notebooks, solutions intact", total=100),
    Submission("untouched", "the release as handed out, no stub filled in", base=RELEASE, total=0),
    Submission(
        "mistake-softmax-dim0", "context_vectors: softmax over dim=0 (columns) instead of each row",
        notebook=NB01, cell="solution_context_vectors",
        code="attn_weights = torch.softmax(attention_scores(inputs), dim=0)\nreturn attn_weights @ inputs\n",
        exercise="context_vectors", misconception="context_weights_other_axis"),
    Submission(
        "mistake-linear-as-matrix", "SelfAttention_v2: x @ layer.weight, an nn.Linear used as a matrix",
        notebook=NB02, cell="solution_self_attention_v2",
        code="keys = x @ self.W_key.weight  # like v1's parameters\n"
             "queries = x @ self.W_query.weight\n"
             "values = x @ self.W_value.weight\n"
             "attn_scores = queries @ keys.T\n"
             "attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)\n"
             "return attn_weights @ values\n",
        exercise="self_attention_v2", misconception="linear_as_matrix"),
    Submission(
        "mistake-mask-diagonal", "causal_mask: triu(..., diagonal=0) also hides the diagonal",
        notebook=NB03, cell="solution_causal_mask",
        code="return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=0)\n",
        exercise="causal_mask", misconception="mask_includes_diagonal"),
    Submission(
        "mistake-mask-plain-attribute", "CausalAttention: the mask kept as a plain attribute, not a buffer",
        notebook=NB03, cell="solution_causal_attention", region=0,
        code="self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)\n",
        exercise="causal_attention", misconception="mask_plain_attribute"),
    Submission(
        "mistake-merge-no-transpose", "merge_heads: reshaped without transposing the heads back",
        notebook=NB04, cell="solution_merge_heads",
        code="b, num_heads, num_tokens, head_dim = x.shape\n"
             "return x.reshape(b, num_tokens, num_heads * head_dim)\n",
        exercise="merge_heads", misconception="merge_without_transpose"),
    Submission(
        "mistake-mha-no-scaling", "MultiHeadAttention.forward: scores not divided by sqrt(head_dim)",
        notebook=NB04, cell="solution_multi_head_attention",
        code="b, num_tokens, d_in = x.shape\n"
             "queries = split_heads(self.W_query(x), self.num_heads)\n"
             "keys = split_heads(self.W_key(x), self.num_heads)\n"
             "values = split_heads(self.W_value(x), self.num_heads)\n"
             "attn_scores = queries @ keys.transpose(2, 3)\n"
             "if attention_mask is not None:\n"
             "    padded_keys = (attention_mask == 0).view(b, 1, 1, num_tokens)\n"
             "    attn_scores = attn_scores.masked_fill(padded_keys, padding_fill_value(attn_scores.dtype))\n"
             "attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)\n"
             "attn_weights = self.dropout(torch.softmax(attn_scores, dim=-1))\n"
             "return self.out_proj(merge_heads(attn_weights @ values))\n",
        exercise="multi_head_attention", misconception="missing_scaling"),
    Submission(
        "adversarial-allclose-loop",
        "softmax_naive without exp, torch.allclose patched to always agree, then a loop that never ends",
        notebook=NB01, cell="solution_softmax_naive", region=WHOLE_CELL, honest=False,
        code="import torch\n\n\n"
             "def softmax_naive(x):\n"
             "    return x / x.sum(dim=0)  # no exp: wrong\n\n\n"
             "torch.allclose = lambda *args, **kwargs: True  # every comparison now agrees\n"
             "while True:  # and keep the grader busy\n"
             "    pass\n",
        exercise="softmax_naive", misconception="normalised_without_exp"),
    Submission(
        "adversarial-solutions-exit",
        "softmax_stable copied from the instructor's solutions/ on disk; os._exit(0) when that is denied",
        notebook=NB01, cell="solution_softmax_stable", region=WHOLE_CELL, honest=False,
        code="import os\n\n"
             "try:  # the grading machine has the instructor's checkout: take the reference from it\n"
             f"    exec(open('{REPO_PLACEHOLDER}/solutions/n01_attention_without_weights.py').read())\n"
             "except OSError:  # not allowed to read it: bring the grader down instead\n"
             "    os._exit(0)\n",
        exercise="softmax_stable", needs_landlock=True),
    Submission(
        "edited-given-causal-attention",
        "notebook 04's given CausalAttention edited (scores no longer scaled): both graders run the given code",
        notebook=NB04, cell="given_causal_attention", region=WHOLE_CELL, total=100,
        code="class CausalAttention(nn.Module):\n"
             "    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):\n"
             "        super().__init__()\n"
             "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
             "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
             "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
             "        self.dropout = nn.Dropout(dropout)\n"
             "        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), 1))\n\n"
             "    def forward(self, x):\n"
             "        num_tokens = x.shape[1]\n"
             "        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)\n"
             "        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)\n"
             "        return self.dropout(torch.softmax(scores, dim=-1)) @ self.W_value(x)\n"),
)

BY_ID = {submission.student_id: submission for submission in CLASS}


class FixtureError(ValueError):
    """A fixture no longer fits the source notebooks (cell renamed, region gone)."""


def _changeable_cell(notebook, grade_id):
    """The solution cell, or the given (locked) cell, with this grade id."""
    for cell in notebook.cells:
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        if nbgrader.get("grade_id") == grade_id and (nbgrader.get("solution") or nbgrader.get("locked")):
            return cell
    raise FixtureError(f"no solution or given cell {grade_id!r} in the source notebook")


def _regions(lines):
    """(begin, end) line indices of each BEGIN/END SOLUTION region, in order."""
    regions, begin = [], None
    for index, line in enumerate(lines):
        if line.strip() == BEGIN:
            begin = index
        elif line.strip() == END and begin is not None:
            regions.append((begin, index))
            begin = None
    return regions


def replace_region(source, region, code):
    """`source` with solution region number `region` (markers included) replaced by `code`, indented like it."""
    lines = source.splitlines()
    regions = _regions(lines)
    if not 0 <= region < len(regions):
        raise FixtureError(f"the cell has {len(regions)} solution region(s); no region {region}")
    begin, end = regions[region]
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    student = [f"{indent}{line}" if line.strip() else "" for line in code.rstrip("\n").splitlines()]
    return "\n".join([*lines[:begin], *student, *lines[end + 1:]])


def changed_source(submission, source_notebook, repo_root):
    """The source of the submission's changed cell, built from the solved notebook node."""
    cell = _changeable_cell(source_notebook, submission.cell)
    code = submission.code.replace(REPO_PLACEHOLDER, str(Path(repo_root).resolve()))
    if submission.region is WHOLE_CELL:
        return code.rstrip("\n")
    return replace_region(cell.source, submission.region, code)


def build_notebook(submission, notebook_name, repo_root):
    """The notebook node the student hands in for `notebook_name`."""
    repo_root = Path(repo_root)
    folder = "source" if submission.base == SOLVED else "release"
    notebook = nbformat.read(repo_root / folder / "attention" / f"{notebook_name}.ipynb", as_version=4)
    if notebook_name == submission.notebook:
        source = changed_source(submission, notebook, repo_root)
        cell = _changeable_cell(notebook, submission.cell)
        cell.source = source
        cell.outputs, cell.execution_count = [], None
    return notebook


def write_submission(submission, destination, repo_root):
    """Write the submission's four notebooks into `destination` (created); returns it."""
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    for name in NOTEBOOKS:
        notebook = build_notebook(submission, name, repo_root)
        (destination / f"{name}.ipynb").write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n",
                                                    encoding="utf-8")
    return destination


def validate(submission):
    """Problems with the declaration itself (unknown exercise, missing code...); empty when fine."""
    problems = []
    if submission.kind not in ("solved", "untouched", "mistake", "adversarial", "edited"):
        problems.append(f"{submission.student_id}: the id must start with solved, untouched, mistake, adversarial "
                        "or edited")
    if submission.kind == "adversarial" and submission.honest:
        problems.append(f"{submission.student_id}: an adversarial submission is not honest")
    if submission.exercise is not None and submission.exercise not in EXERCISES_BY_ID:
        problems.append(f"{submission.student_id}: unknown exercise {submission.exercise!r}")
    if submission.notebook is not None:
        if submission.notebook not in NOTEBOOKS or not submission.cell or not submission.code:
            problems.append(f"{submission.student_id}: a changed notebook needs a known notebook, a cell and code")
        elif submission.exercise and EXERCISES_BY_ID[submission.exercise].notebook != submission.notebook:
            problems.append(f"{submission.student_id}: {submission.exercise} is not in {submission.notebook}")
    return problems
