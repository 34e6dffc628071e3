"""A synthetic class for `attnkit similarity`: honest students written independently, and planted copies.

`build_class(n, seed)` declares the class (who writes what, which pairs are planted), `write_class(plan, dest)`
writes it in nbgrader's layout (`dest/<id>/attention/<notebook>.ipynb`, from the source notebooks with the
solution regions replaced) and `write_book(dest)` the "book chapter" that some students follow (the instructor
passes it as `--base`).

Honest students write each varied solution region in one of several equivalent formulations, with their own
variable names and their own order of independent statements (the three projections), each drawn on its own;
some make a common mistake (the softmax over the wrong axis, the mask hiding the diagonal, heads merged without
the transpose, unscaled scores) and some follow the book for the attention forward passes. Regions not varied keep
the reference code, which `attnkit similarity` excludes like any base code.

Planted, by kind (`Plan.planted`):
  verbatim      B hands in A's notebooks unchanged
  renamed       B keeps A's formulations but renames every variable and reorders the projections
  wrong_output  A and B write their code independently but share one rare bug: MultiHeadAttention divides the
                scores by a constant of their own instead of sqrt(head_dim) (the same wrong output, rare)
and `book_pairs`: two honest students who both copy the book's passages; they must not be flagged.
"""

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat

from autograder.course.exercises import NOTEBOOKS
from autograder.integrations.nbgrader_course import ASSIGNMENT
from devtools.class_fixtures import replace_region

REPO = Path(__file__).resolve().parents[1]
NB01, NB02, NB03, NB04 = NOTEBOOKS

# Name pools: each student picks one spelling per role.
NAMES = {
    "keys": ["keys", "k", "K", "key", "k_proj", "key_vecs", "kk", "keys_"],
    "queries": ["queries", "q", "Q", "query", "q_proj", "query_vecs", "qq", "queries_"],
    "values": ["values", "v", "V", "value", "v_proj", "value_vecs", "vv", "values_"],
    "scores": ["attn_scores", "scores", "s", "logits", "att", "omega", "sc", "raw"],
    "weights": ["attn_weights", "weights", "w", "probs", "alpha", "att_w", "p", "a"],
    "context": ["context_vec", "ctx", "out", "result", "context", "z", "output", "res"],
    "exp": ["exp", "e", "ex", "exps", "numerator", "expx", "num", "ez"],
    "total": ["total", "denom", "s_", "norm", "summed", "z_", "den", "tot"],
    "shift": ["shifted", "centred", "xs", "x_shift", "stable", "y", "diff", "x0"],
    "mask": ["mask", "m", "future", "blocked", "causal", "upper", "hide", "mk"],
    "padded": ["padded_keys", "pad", "padding", "is_pad", "pad_mask", "pmask", "ignore", "pk"],
    "head_dim": ["head_dim", "hd", "d_head", "dh", "per_head", "hdim", "d_k", "size"],
}
COMMON_MISTAKES = {  # honest mistakes and the share of honest students making each
    "softmax_dim0": 0.06, "mask_diagonal": 0.06, "merge_no_transpose": 0.05, "mha_no_scaling": 0.06,
}
INPUT_OF = {"solution_context_vectors": "inputs", "solution_causal_mask": "num_tokens"}  # else x
BOOK_SHARE = 0.15  # honest students who follow the book for the attention forward passes


@dataclass(frozen=True)
class Student:
    id: str
    form_seed: int  # draws the formulation of each region
    names: dict  # role -> spelling
    order: tuple  # the order of the query/key/value projections
    mistake: str = ""  # one of COMMON_MISTAKES, "" or "scale_constant"
    scale_constant: float = 0.0  # the planted wrong_output bug's constant
    book: bool = False  # follows the book's passages for CausalAttention and MultiHeadAttention
    verbatim_of: str = ""  # hands in this student's notebooks unchanged


@dataclass
class Plan:
    students: list
    planted: list = field(default_factory=list)  # (kind, a, b)
    book_pairs: list = field(default_factory=list)  # (a, b): honest, both copy the book

    @property
    def planted_pairs(self):
        return {tuple(sorted((a, b))) for _, a, b in self.planted}


def build_class(n, seed=0, planted_per_kind=1, book_pairs=1):
    """A class of `n` students: planted pairs (`planted_per_kind` of each kind), `book_pairs`, the rest honest."""
    rng = random.Random(seed)
    students, plan = [], Plan([])

    def new_id():
        return f"s{len(students):05d}"

    def honest(**changes):
        student = Student(new_id(), rng.randrange(2**31), _names(rng), tuple(rng.sample(range(3), 3)))
        return replace(student, **changes)

    for number in range(planted_per_kind):
        a = honest()
        students.append(a)
        b = replace(a, id=new_id(), verbatim_of=a.id)
        students.append(b)
        plan.planted.append(("verbatim", a.id, b.id))

        a = honest()
        students.append(a)
        b = replace(a, id=new_id(), names=_names(rng, avoid=a.names), order=_other_order(rng, a.order))
        students.append(b)
        plan.planted.append(("renamed", a.id, b.id))

        constant = 2.0 + number * 0.5  # one rare wrong output per pair
        a = honest(mistake="scale_constant", scale_constant=constant)
        students.append(a)
        b = honest(mistake="scale_constant", scale_constant=constant)
        students.append(b)
        plan.planted.append(("wrong_output", a.id, b.id))
    for _ in range(book_pairs):
        a, b = honest(book=True), None
        students.append(a)
        b = honest(book=True)
        students.append(b)
        plan.book_pairs.append((a.id, b.id))
    while len(students) < n:
        draw = rng.random()
        mistake, cumulative = "", 0.0
        for name, share in COMMON_MISTAKES.items():
            cumulative += share
            if draw < cumulative:
                mistake = name
                break
        students.append(honest(mistake=mistake, book=rng.random() < BOOK_SHARE))
    # Ids say nothing about the plan: shuffle which id each student gets.
    ids = [student.id for student in students]
    rng.shuffle(ids)
    renamed = dict(zip([student.id for student in students], ids, strict=True))
    plan.students = [replace(student, id=renamed[student.id], verbatim_of=renamed.get(student.verbatim_of, ""))
                     for student in students]
    plan.planted = [(kind, renamed[a], renamed[b]) for kind, a, b in plan.planted]
    plan.book_pairs = [(renamed[a], renamed[b]) for a, b in plan.book_pairs]
    plan.students.sort(key=lambda student: student.id)
    return plan


def write_class(plan, destination, repo=REPO, progress=None):
    """Write every student's four notebooks under `destination` (nbgrader's submitted/ layout)."""
    destination = Path(destination)
    # Plain JSON text of each source notebook (nbformat's reading, cell sources joined): parsed anew per student,
    # and written without indentation, which keeps json on its C encoder (thousands of notebooks).
    sources = {name: json.dumps(nbformat.read(repo / "source" / "attention" / f"{name}.ipynb", as_version=4))
               for name in NOTEBOOKS}
    by_id = {student.id: student for student in plan.students}
    for student in plan.students:
        author = by_id[student.verbatim_of] if student.verbatim_of else student
        folder = destination / student.id / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        for name in NOTEBOOKS:
            notebook = _notebook(sources[name], name, author)
            (folder / f"{name}.ipynb").write_text(json.dumps(notebook, ensure_ascii=False) + "\n", encoding="utf-8")
        if progress:
            progress(student.id)
    return destination


def write_book(destination):
    """The book chapter's code, as the instructor would pass it with --base."""
    path = Path(destination)
    path.write_text("# Book chapter: attention from scratch (the passages students may follow)\n\n"
                    "class CausalAttention(nn.Module):\n    def forward(self, x):\n"
                    + _indent(BOOK_CAUSAL, 8) + "\n\nclass MultiHeadAttention(nn.Module):\n"
                    "    def forward(self, x, attention_mask=None):\n" + _indent(BOOK_MHA, 8) + "\n",
                    encoding="utf-8")
    return path


def mistakes_of(plan):
    """{student id: mistake} for students with one (for the benchmark's exemplar records)."""
    return {student.id: (student.mistake, student.scale_constant) for student in plan.students}


# ---- the notebooks ----------------------------------------------------------------------------------------------

def _notebook(source_json, name, student):
    """The source notebook (its JSON text) as this student's: a dict ready for json.dumps."""
    notebook = json.loads(source_json)
    regions = _regions_of(name, student)
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        for (cell_id, region), code in regions.items():
            if cell_id == grade_id:
                cell["source"] = replace_region(cell["source"], region, code)
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notebook


def _regions_of(name, student):
    """{(grade id, region): code} for the regions this notebook varies, each with the student's habits."""
    form = _Form(student)
    if name == NB01:
        regions = {("solution_softmax_naive", 0): form.softmax_naive(),
                   ("solution_softmax_stable", 0): form.softmax_stable(),
                   ("solution_context_vectors", 0): form.context_vectors()}
    elif name == NB02:
        regions = {("solution_self_attention_v2", 0): form.self_attention_v2()}
    elif name == NB03:
        regions = {("solution_causal_mask", 0): form.causal_mask(),
                   ("solution_causal_attention", 1): form.causal_forward()}
    else:
        regions = {("solution_split_heads", 0): form.split_heads(),
                   ("solution_merge_heads", 0): form.merge_heads(),
                   ("solution_multi_head_attention", 0): form.mha_forward()}
    if student.book:  # the book's passages are handed in as printed
        return regions
    return {key: form.habits(key[0], code) for key, code in regions.items()}


class _Form:
    """The student's code for each varied region: `pick` draws among equivalent formulations, per region."""

    def __init__(self, student):
        self.student, self.n = student, student.names

    def habits(self, region, code):
        """The student's own habits, kept by whoever copies the code: a debugging print or a shape check left in
        some regions, a result named before it is returned."""
        rng = self.rng(f"{region}/habits")
        debugs = rng.random() < 0.4  # this student leaves debugging lines in, here
        lines = code.splitlines()
        if debugs:
            variable = INPUT_OF.get(region, "x")
            lines.insert(0, rng.choice([f"print({variable})", f"print('{region}', {variable})", f"# print({variable})",
                                        f"assert {variable} is not None", f"print(type({variable}))"]))
        last = lines[-1]
        if last.startswith("return ") and "(" in last and rng.random() < 0.3:
            result = self.n["context"]
            lines[-1:] = [f"{result} = {last[len('return '):]}", f"return {result}"]
        return "\n".join(lines)

    def pick(self, region, *options):
        return random.Random(f"{self.student.form_seed}/{region}").choice(options)

    def rng(self, region):
        return random.Random(f"{self.student.form_seed}/{region}/more")

    def projections(self, template):
        lines = [template.format(role=self.n[role], layer=layer)
                 for role, layer in (("queries", "W_query"), ("keys", "W_key"), ("values", "W_value"))]
        return "\n".join(lines[i] for i in self.student.order)

    def softmax(self, region, scores, dim="-1"):
        return self.pick(f"{region}/softmax", f"torch.softmax({scores}, dim={dim})", f"({scores}).softmax(dim={dim})",
                         f"torch.nn.functional.softmax({scores}, dim={dim})")

    def softmax_naive(self):
        e, t = self.n["exp"], self.n["total"]
        return self.pick("softmax_naive",
                         f"{e} = torch.exp(x)\nreturn {e} / {e}.sum(dim=0)",
                         f"{e} = x.exp()\n{t} = {e}.sum(0)\nreturn {e} / {t}",
                         "return torch.exp(x) / torch.sum(torch.exp(x), dim=0)",
                         f"{e} = torch.exp(x)\n{t} = torch.sum({e}, dim=0)\nreturn {e} / {t}")

    def softmax_stable(self):
        e, t, s = self.n["exp"], self.n["total"], self.n["shift"]
        return self.pick("softmax_stable",
                         f"{s} = x - x.max(dim=dim, keepdim=True).values\n{e} = torch.exp({s})\n"
                         f"return {e} / {e}.sum(dim=dim, keepdim=True)",
                         f"top, _ = torch.max(x, dim=dim, keepdim=True)\n{e} = (x - top).exp()\n"
                         f"{t} = {e}.sum(dim, keepdim=True)\nreturn {e} / {t}",
                         f"{s} = x - x.amax(dim=dim, keepdim=True)\n"
                         f"return torch.exp({s}) / torch.exp({s}).sum(dim=dim, keepdim=True)",
                         f"{e} = torch.exp(x - torch.amax(x, dim=dim, keepdim=True))\n"
                         f"{t} = torch.sum({e}, dim=dim, keepdim=True)\nreturn {e} / {t}")

    def context_vectors(self):
        w, s, c = self.n["weights"], self.n["scores"], self.n["context"]
        dim = "0" if self.student.mistake == "softmax_dim0" else "-1"
        return self.pick("context_vectors",
                         f"{w} = {self.softmax('cv', 'attention_scores(inputs)', dim)}\nreturn {w} @ inputs",
                         f"{s} = attention_scores(inputs)\n{w} = {self.softmax('cv', s, dim)}\n"
                         f"{c} = {w} @ inputs\nreturn {c}",
                         f"{s} = inputs @ inputs.T\n{w} = {self.softmax('cv', s, dim)}\n"
                         f"return torch.matmul({w}, inputs)")

    def scaled(self, region, scores, keys, head_dim=None):
        if self.student.mistake == "scale_constant" and head_dim:
            return f"{scores} / {self.student.scale_constant}"
        if self.student.mistake == "mha_no_scaling" and head_dim:
            return scores
        size = head_dim or self.pick(f"{region}/size", f"{keys}.shape[-1]", f"{keys}.size(-1)", f"{keys}.size()[-1]")
        return self.pick(f"{region}/scale", f"{scores} / {size} ** 0.5", f"{scores} * {size} ** -0.5",
                         f"{scores} / ({size} ** 0.5)")

    def neg_inf(self, region):
        return self.pick(f"{region}/inf", "-torch.inf", "float('-inf')", "-float('inf')", "torch.finfo(x.dtype).min")

    def opening(self, region, rank):
        """An optional first line some students write: a check of the input's shape."""
        return self.pick(f"{region}/assert", "", "", f"assert x.dim() == {rank}", f"assert x.ndim == {rank}")

    def dropped(self, region, weights, expression):
        return self.pick(f"{region}/dropout", f"{weights} = self.dropout({expression})",
                         f"{weights} = {expression}\n{weights} = self.dropout({weights})")

    def transposed(self, region, keys, first, second):
        return self.pick(f"{region}/transpose", f"{keys}.transpose({first}, {second})",
                         f"{keys}.transpose(-2, -1)", f"{keys}.mT")

    def self_attention_v2(self):
        k, q, v, s, w = (self.n[r] for r in ("keys", "queries", "values", "scores", "weights"))
        body = [self.projections("{role} = self.{layer}(x)")]
        scores = self.pick("sa2/scores", f"{q} @ {k}.T", f"{q} @ {k}.transpose(0, 1)", f"torch.matmul({q}, {k}.T)")
        if self.pick("sa2/inline", True, False):
            body.append(f"{s} = {scores}\n{w} = {self.softmax('sa2', self.scaled('sa2', s, k))}\nreturn {w} @ {v}")
        else:
            body.append(f"{w} = {self.softmax('sa2', self.scaled('sa2', scores, k))}\n"
                        f"{self.n['context']} = {w} @ {v}\nreturn {self.n['context']}")
        return "\n".join(body)

    def causal_mask(self):
        diagonal = "0" if self.student.mistake == "mask_diagonal" else "1"
        m = self.n["mask"]
        return self.pick("causal_mask",
                         "return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), "
                         f"diagonal={diagonal})",
                         f"return torch.ones(num_tokens, num_tokens).triu({diagonal}).bool()",
                         f"{m} = torch.triu(torch.ones(num_tokens, num_tokens), diagonal={diagonal})\nreturn {m} == 1",
                         f"{m} = torch.ones(num_tokens, num_tokens, dtype=torch.bool)\n"
                         f"return torch.triu({m}, diagonal={diagonal})")

    def causal_forward(self):
        if self.student.book:
            return BOOK_CAUSAL
        k, q, v, s, w, m = (self.n[r] for r in ("keys", "queries", "values", "scores", "weights", "mask"))
        inf = self.neg_inf("ca")
        masked = self.pick("ca/mask",
                           f"{s} = {s}.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], {inf})",
                           f"{m} = self.mask[:num_tokens, :num_tokens] == 1\n{s} = {s}.masked_fill({m}, {inf})",
                           f"{m} = self.mask.bool()[:num_tokens, :num_tokens]\n{s}.masked_fill_({m}, {inf})")
        return "\n".join(filter(None, [
            self.opening("ca", 3),
            self.pick("ca/shape", "b, num_tokens, d_in = x.shape", "num_tokens = x.shape[1]",
                      "_, num_tokens, _ = x.shape"),
            self.projections("{role} = self.{layer}(x)"),
            f"{s} = {q} @ {self.transposed('ca', k, 1, 2)}",
            masked,
            self.dropped("ca", w, self.softmax("ca", self.scaled("ca", s, k), self.pick("ca/dim", "-1", "2"))),
            f"return {w} @ {v}"]))

    def split_heads(self):
        hd = self.n["head_dim"]
        return self.pick("split",
                         f"b, num_tokens, d_out = x.shape\n{hd} = d_out // num_heads\n"
                         f"return x.view(b, num_tokens, num_heads, {hd}).transpose(1, 2)",
                         "b, t, d = x.shape\nreturn x.reshape(b, t, num_heads, d // num_heads).permute(0, 2, 1, 3)",
                         f"{hd} = x.shape[-1] // num_heads\n"
                         f"x = x.view(x.shape[0], x.shape[1], num_heads, {hd})\nreturn x.transpose(1, 2)")

    def merge_heads(self):
        if self.student.mistake == "merge_no_transpose":
            return self.pick("merge", "b, num_heads, num_tokens, head_dim = x.shape\n"
                             "return x.reshape(b, num_tokens, num_heads * head_dim)",
                             "b, h, t, d = x.shape\nreturn x.contiguous().view(b, t, h * d)")
        return self.pick("merge",
                         "b, num_heads, num_tokens, head_dim = x.shape\n"
                         "return x.transpose(1, 2).reshape(b, num_tokens, num_heads * head_dim)",
                         "b, h, t, d = x.shape\nx = x.permute(0, 2, 1, 3).contiguous()\nreturn x.view(b, t, h * d)",
                         "x = x.transpose(1, 2)\nreturn x.flatten(2)")

    def mha_forward(self):
        if self.student.book and not self.student.mistake:
            return BOOK_MHA
        k, q, v, s, w, c, m, pad = (self.n[r] for r in ("keys", "queries", "values", "scores", "weights", "context",
                                                          "mask", "padded"))
        padding = self.pick(
            "mha/pad",
            f"if attention_mask is not None:\n    {pad} = (attention_mask == 0)[:, None, None, :]\n"
            f"    {s} = {s}.masked_fill({pad}, padding_fill_value({s}.dtype))",
            f"if attention_mask is not None:\n    {pad} = attention_mask.eq(0).view(b, 1, 1, num_tokens)\n"
            f"    {s} = {s}.masked_fill({pad}, torch.finfo({s}.dtype).min)",
            f"if attention_mask is not None:\n    {s} = {s}.masked_fill(\n"
            f"        attention_mask.unsqueeze(1).unsqueeze(2) == 0, padding_fill_value({s}.dtype))")
        inf = self.neg_inf("mha")
        future = self.pick("mha/future", f"{m} = self.mask.bool()[:num_tokens, :num_tokens]\n"
                           f"{s} = {s}.masked_fill({m}, {inf})",
                           f"{s} = {s}.masked_fill(self.mask[:num_tokens, :num_tokens].bool(), {inf})")
        return "\n".join(filter(None, [
            self.opening("mha", 3),
            self.pick("mha/shape", "b, num_tokens, d_in = x.shape", "b, num_tokens, _ = x.shape",
                      "b = x.shape[0]\nnum_tokens = x.shape[1]"),
            self.projections("{role} = split_heads(self.{layer}(x), self.num_heads)"),
            f"{s} = {q} @ {self.transposed('mha', k, 2, 3)}",
            padding,
            future,
            self.dropped("mha", w, self.softmax("mha", self.scaled("mha", s, k, "self.head_dim"),
                                                self.pick("mha/dim", "-1", "3"))),
            self.pick("mha/out", f"{c} = merge_heads({w} @ {v})\nreturn self.out_proj({c})",
                      f"return self.out_proj(merge_heads({w} @ {v}))",
                      f"{c} = {w} @ {v}\n{c} = merge_heads({c})\nreturn self.out_proj({c})")]))


BOOK_CAUSAL = """b, num_tokens, d_in = x.shape
keys = self.W_key(x)
queries = self.W_query(x)
values = self.W_value(x)
attn_scores = queries @ keys.transpose(1, 2)
attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
attn_weights = self.dropout(attn_weights)
context_vec = attn_weights @ values
return context_vec"""

BOOK_MHA = """b, num_tokens, d_in = x.shape
keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
attn_scores = queries @ keys.transpose(2, 3)
if attention_mask is not None:
    attn_scores = attn_scores.masked_fill((attention_mask == 0).view(b, 1, 1, num_tokens),
                                          padding_fill_value(attn_scores.dtype))
mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
attn_scores.masked_fill_(mask_bool, -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
attn_weights = self.dropout(attn_weights)
context_vec = (attn_weights @ values).transpose(1, 2)
context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
context_vec = self.out_proj(context_vec)
return context_vec"""


def _names(rng, avoid=None):
    return {role: rng.choice([name for name in pool if not avoid or name != avoid[role]])
            for role, pool in NAMES.items()}


def _other_order(rng, order):
    choices = [p for p in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)) if p != order]
    return rng.choice(choices)


def _indent(code, spaces):
    return "\n".join((" " * spaces + line) if line.strip() else "" for line in code.splitlines())
