"""attnkit similarity: fingerprints that survive renaming, rarity-weighted behaviour, and a planted class.

The class test writes a synthetic class (devtools.similarity_class), grades every student for real with
`attnkit grade`'s code, and checks that the planted pairs outrank every honest pair and that honest students who
copy the same book passage are not flagged. A class of near-identical honest submissions (the book's code plus one
different small change each) flags no pair, and generic idioms never count (tests/test_similarity_bench.py runs the
3,000-student class).
"""

import csv
import html
import json
import random
import re
import textwrap
import zipfile

import pytest
import torch

from autograder import cli
from autograder.grading.wrong_outputs import output_fingerprint
from autograder.review.code_fingerprints import WINDOW, K, default_vocabulary, fingerprints, normalised_tokens
from autograder.review.inputs import read_base, read_behaviours
from autograder.review.page import COLUMNS, DISCLAIMER_EN, evidence_text
from autograder.review.run import run_similarity
from autograder.review.similarity import FLAG_THRESHOLD, Behaviour, StudentCode, analyse, near_duplicate_pairs, rarity
from devtools.similarity_class import build_class, write_book, write_class

VOCABULARY = default_vocabulary({"split_heads", "merge_heads"})
ORIGINAL = """def forward(self, x):
    keys = self.W_key(x)
    queries = self.W_query(x)
    values = self.W_value(x)
    attn_scores = queries @ keys.transpose(1, 2)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
    return attn_weights @ values
"""
RENAMED_REORDERED = """def forward(self, inp):
    q = self.W_query(inp)  # queries first
    v = self.W_value(inp)
    k = self.W_key(inp)
    s = q @ k.transpose(1, 2)
    w = torch.softmax(s / k.shape[-1] ** 0.5, dim=-1)
    return w @ v
"""
OTHER = """def forward(self, x):
    return torch.nn.functional.scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))
"""


def _hashes(source):
    return {fingerprint.hash for fingerprint in fingerprints(source, VOCABULARY)}


def test_renaming_changes_no_fingerprint_and_reordering_few():
    renamed = ORIGINAL.replace("keys", "k").replace("queries", "q").replace("attn_", "a_")
    assert _hashes(renamed) == _hashes(ORIGINAL)
    shared = _hashes(RENAMED_REORDERED) & _hashes(ORIGINAL)
    assert len(shared) >= len(_hashes(ORIGINAL)) / 2
    assert len(_hashes(OTHER) & _hashes(ORIGINAL)) <= 2  # the `def forward(self, x):` line at most


def test_winnowing_guarantee_any_long_shared_passage_gives_a_common_fingerprint():
    rng = random.Random(3)
    passage = "attn_scores = attn_scores.masked_fill(mask.bool()[:n, :n], -torch.inf)\n"
    assert len(normalised_tokens(passage, VOCABULARY)) >= K + WINDOW - 1
    for _ in range(20):
        before = "\n".join(f"x{rng.randrange(9)} = torch.{rng.choice(['exp', 'tanh', 'cos'])}(y)" for _ in range(4))
        after = "\n".join(f"z = z.{rng.choice(['view', 'sum', 'mean'])}({rng.randrange(3)})" for _ in range(4))
        assert _hashes(f"{before}\n{passage}{after}\n") & _hashes(passage)


def test_output_fingerprint_ignores_float_noise_only():
    output = torch.rand(2, 5, 8, generator=torch.Generator().manual_seed(0))
    noisy = output * (1 + 1e-7 * torch.randn(output.shape, generator=torch.Generator().manual_seed(1)))
    assert output_fingerprint({"out": output}) == output_fingerprint({"out": noisy})
    assert output_fingerprint({"out": output}) != output_fingerprint({"out": output / 2})
    assert output_fingerprint({"out": output}) != output_fingerprint({"out": output.transpose(1, 2).reshape(2, 5, 8)})
    assert output_fingerprint({"error": {"type": "NotImplementedError", "message": ""}}) is None


def _student(student_id, code):
    student = StudentCode(student_id, [("cell", code)])
    student.fingerprints = [(0, fingerprint) for fingerprint in fingerprints(code, VOCABULARY)]
    return student


def test_rare_unexplained_wrong_output_is_flagged_common_or_known_ones_are_not():
    count = 60
    students = [_student(f"s{i:02d}", f"y = x + {i}\n") for i in range(count)]  # code: nothing in common
    behaviours = {student.id: Behaviour({}, frozenset()) for student in students}
    rare = frozenset({"multi_head_attention.reference#0:aa", "multi_head_attention.reference#1:ab",
                      "multi_head_attention.reference#2:ac"})
    behaviours["s00"] = behaviours["s01"] = Behaviour({"multi_head_attention": rare}, frozenset())
    common = frozenset({"merge_heads.round_trip#0:bb"})
    for index in range(10, 40):  # half the class: evidence of nothing
        behaviours[f"s{index:02d}"] = Behaviour({"merge_heads": common}, frozenset())
    known = frozenset({"causal_mask.hidden#0:cc"})  # a named misconception's output, two students
    for student_id in ("s50", "s51"):
        behaviours[student_id] = Behaviour({"causal_mask": known}, frozenset({"mask_includes_diagonal"}), known)
    pairs = {(pair.student_a, pair.student_b): pair for pair in analyse(students, behaviours, threshold=0.0).pairs}
    assert pairs[("s00", "s01")].score >= FLAG_THRESHOLD
    assert pairs[("s00", "s01")].shared_wrong_outputs == 3
    assert pairs.get(("s50", "s51")) is not None and pairs[("s50", "s51")].score < FLAG_THRESHOLD
    assert all(pair.score < FLAG_THRESHOLD for key, pair in pairs.items() if key[0] >= "s10" and key[1] < "s40")
    assert rarity(2, count) == 1.0 and rarity(count, count) == 0.0


def test_candidate_pairs_come_from_an_index_not_from_all_pairs():
    rng = random.Random(0)

    def code():  # attribute names are kept as they are: each student calls methods of their own
        return "\n".join(f"v = torch.exp(v).m{rng.randrange(10**6)}(dim=-1)" for _ in range(8))

    students = [_student(f"s{i:03d}", code()) for i in range(300)]
    students.append(_student("copy", students[7].cells[0][1].replace("v", "renamed")))
    analysis = analyse(students, {}, threshold=0.0)
    assert analysis.candidates < len(students) * (len(students) - 1) // 2 // 10
    assert (analysis.pairs[0].student_a, analysis.pairs[0].student_b) == ("copy", "s007")
    assert analysis.pairs[0].code_overlap == 1.0


def test_older_records_without_fingerprints_still_read(tmp_path):
    (tmp_path / "students").mkdir()
    record = {"student_id": "ann", "notebooks": [{"checks": [
        {"id": "causal_mask.hidden", "exercise": "causal_mask", "misconception": "mask_includes_diagonal"}]}]}
    (tmp_path / "students" / "ann.json").write_text(json.dumps(record))
    (tmp_path / "students" / "broken.json").write_text("{")
    behaviours, notes = read_behaviours(tmp_path)
    assert behaviours["ann"].misconceptions == {"mask_includes_diagonal"}
    assert any("broken.json" in note for note in notes) and any("older attnkit" in note for note in notes)


def test_student_text_is_escaped_in_the_page(tmp_path, repo_root):
    plan = build_class(4, seed=5, planted_per_kind=0, book_pairs=0)
    submitted = write_class(plan, tmp_path / "submitted", repo_root)
    hostile = '<img src=x onerror=alert(1)>'
    victim = submitted / plan.students[0].id
    copy = submitted / hostile.replace("/", "_")
    copy.mkdir()
    (copy / "attention").mkdir()
    for notebook in (victim / "attention").iterdir():
        text = notebook.read_text().replace("keys", "keys  # </pre><script>alert(2)</script>")
        (copy / "attention" / notebook.name).write_text(text)
        notebook.write_text(text)
    run = run_similarity(submitted, tmp_path / "out")
    page = run.html.read_text()
    assert "<script>" not in page and "<img" not in page
    assert html.escape(hostile.replace("/", "_")) in page
    assert DISCLAIMER_EN in page


@pytest.mark.slow
def test_planted_pairs_outrank_every_honest_pair(tmp_path, repo_root):
    plan = build_class(28, seed=11, planted_per_kind=1, book_pairs=1)
    submitted = write_class(plan, tmp_path / "submitted", repo_root)
    book = write_book(tmp_path / "book.py")
    assert cli.main(["grade", str(submitted), "--out", str(tmp_path / "grades")]) == 0
    for student in plan.students:  # wrong outputs are recorded for wrong code only, and for all wrong code
        record = json.loads((tmp_path / "grades" / "students" / f"{student.id}.json").read_text())
        fingerprinted = [check for notebook in record["notebooks"] for check in notebook["checks"]
                         if "wrong_outputs" in check]
        assert bool(fingerprinted) == bool(student.mistake), student
        assert all(check["hidden"] and check["status"] != "passed" for check in fingerprinted)
    run = run_similarity(submitted, tmp_path / "out", base=[book], grades_dir=tmp_path / "grades", threshold=0.0)
    planted = plan.planted_pairs
    scores = {(pair.student_a, pair.student_b): pair.score for pair in run.analysis.pairs}
    planted_scores = [scores.get(pair, 0.0) for pair in planted]
    honest_scores = [score for pair, score in scores.items() if pair not in planted]
    assert min(planted_scores) > max(honest_scores, default=0.0)
    assert min(planted_scores) >= FLAG_THRESHOLD > max(honest_scores, default=0.0)
    book_pairs = [tuple(sorted(pair)) for pair in plan.book_pairs]
    assert all(scores.get(pair, 0.0) < FLAG_THRESHOLD for pair in book_pairs)
    # The base exclusion is what keeps them apart: without the book, their shared passages count.
    unbased = run_similarity(submitted, tmp_path / "unbased", grades_dir=tmp_path / "grades", threshold=0.0)
    unbased_scores = {(pair.student_a, pair.student_b): pair.code_overlap for pair in unbased.analysis.pairs}
    assert all(unbased_scores[pair] > scores.get(pair, 0.0) for pair in book_pairs)
    wrong_output_pairs = [tuple(sorted((a, b))) for kind, a, b in plan.planted if kind == "wrong_output"]
    for pair in run.analysis.pairs:
        if (pair.student_a, pair.student_b) in wrong_output_pairs:
            assert pair.shared_wrong_outputs >= 1 and pair.code_overlap < FLAG_THRESHOLD

    # The default threshold's outputs: exactly the planted pairs, highest score first, in the documented columns.
    flagged = run_similarity(submitted, tmp_path / "flagged", base=[book], grades_dir=tmp_path / "grades")
    with flagged.csv.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == COLUMNS
    assert {tuple(row[:2]) for row in rows[1:]} == planted
    listed = [float(row[2]) for row in rows[1:]]
    assert listed == sorted(listed, reverse=True) and all(0.0 <= score <= 1.0 for score in listed)
    evidence = " ".join(row[6] for row in rows[1:])
    assert "same wrong output on" in evidence and f"of {len(plan.students)} students produce it" in evidence
    page = flagged.html.read_text()
    assert page.count('<tr class="pair"') == len(planted) and "<mark>" in page
    assert 'href="../flagged/similarity.html"' in (tmp_path / "grades" / "class_report.html").read_text()


def test_a_copy_of_typical_code_is_found_by_minhash_lsh():
    """Every fingerprint of this class is common (3 ways to write each of 10 lines), so the copy shares no rare
    one: the inverted index alone does not see it, the near-duplicate index does."""
    rng = random.Random(4)
    ways = [[f"v = v.step{position}_{way}(dim={position})" for way in range(3)] for position in range(10)]
    students = [_student(f"s{i:03d}", "\n".join(rng.choice(options) for options in ways)) for i in range(300)]
    students.append(_student("copy", students[42].cells[0][1]))
    alone = analyse(students, {}, threshold=0.0)
    assert ("copy", "s042") not in {(pair.student_a, pair.student_b) for pair in alone.pairs}
    helped = analyse(students, {}, threshold=0.0, near_duplicates=near_duplicate_pairs)
    assert (helped.pairs[0].student_a, helped.pairs[0].student_b) == ("copy", "s042")
    assert helped.candidates < len(students) * (len(students) - 1) // 2 // 10


def test_bad_arguments_exit_with_status_2(tmp_path, capsys):
    submitted = tmp_path / "submitted"
    (submitted / "ann" / "attention").mkdir(parents=True)
    out = str(tmp_path / "out")
    assert cli.main(["similarity", str(tmp_path / "nowhere"), "--out", out]) == 2
    assert cli.main(["similarity", str(submitted), "--out", out, "--base", str(tmp_path / "no-book.py")]) == 2
    assert "no-book.py" in capsys.readouterr().err
    assert cli.main(["similarity", str(submitted), "--out", out, "--threshold", "1.5"]) == 2
    assert cli.main(["similarity", str(submitted), "--out", out, "--grades", str(tmp_path)]) == 2
    assert cli.main(["similarity", str(submitted), "--out", str(submitted / "inside")]) == 2
    assert not (tmp_path / "out").exists()


def test_similarity_reads_what_attnkit_grade_grades_and_never_follows_a_link(tmp_path, repo_root):
    """The shared resolver (autograder.grading.intake): a zipped notebook is read; a link to a classmate's is not,
    else the link would make a copy look like two students' work, or hide one."""
    from autograder.course.exercises import NOTEBOOKS
    from autograder.review.inputs import read_base, read_student

    solved = repo_root / "source" / "attention" / f"{NOTEBOOKS[0]}.ipynb"
    alice = tmp_path / "submitted" / "alice" / "attention"
    alice.mkdir(parents=True)
    (alice / f"{NOTEBOOKS[0]}.ipynb").write_bytes(solved.read_bytes())
    mallory = tmp_path / "submitted" / "mallory" / "attention"
    mallory.mkdir(parents=True)
    (mallory / f"{NOTEBOOKS[0]}.ipynb").symlink_to(alice / f"{NOTEBOOKS[0]}.ipynb")
    zipped = tmp_path / "submitted" / "zoe"
    zipped.mkdir()
    with zipfile.ZipFile(zipped / "attention.zip", "w") as archive:
        archive.writestr(f"attention/{NOTEBOOKS[0]}.ipynb", solved.read_bytes())
    base = read_base()
    read = {name: read_student(tmp_path / "submitted" / name, base.vocabulary, base.excluded)
            for name in ("alice", "mallory", "zoe")}
    assert read["alice"].cells and read["zoe"].cells == read["alice"].cells
    assert read["mallory"].cells == []
    assert any("is a symbolic link: not followed" in problem for problem in read["mallory"].problems)


# ---- a class of near-identical honest submissions -------------------------------------------------------------
# Every student pastes the book's code (passed as base) and changes one small part, each a different one; two of
# them write only the course's generic idioms (a shape unpacked, one reshape); two planted students hand in the same
# einsum solution, one renamed and reordered.
SMALL_CHANGES = (
    "weights = (scores / math.sqrt(keys.size(-1))).softmax(dim=-1)",
    "hidden = torch.tril(torch.ones(n, n)) == 0",
    "context = torch.matmul(weights, values)",
    "scores = torch.bmm(queries, keys.mT)",
    "keys = x @ self.W_key.weight.T",
    "scores = torch.where(hidden, float('-inf'), scores)",
    "context = context.flatten(2)",
    "top = scores.amax(-1, keepdim=True)\ne = torch.exp(scores - top)\nweights = e / e.sum(-1, keepdim=True)",
    "n = x.size(1)",
    "hidden = self.mask[:n, :n] != 0",
    "scores = scores * (1.0 / math.sqrt(self.head_dim))",
    "weights = self.dropout(weights) if self.training else weights",
)
GENERIC_SPLIT = ("def split_heads(x, num_heads):\n    b, n, d = x.shape\n"
                 "    return x.reshape(b, n, num_heads, d // num_heads)\n")
GENERIC_MERGE = "def merge_heads(x):\n    b, h, n, d = x.shape\n    return x.transpose(1, 2).reshape(b, n, h * d)\n"
EINSUM_SOLUTION = '''def forward(self, x):
    batch, tokens, _ = x.shape
    heads, width = self.num_heads, self.head_dim
    q = torch.einsum("btd,ed->bte", x, self.W_query.weight)
    k = torch.einsum("btd,ed->bte", x, self.W_key.weight)
    v = torch.einsum("btd,ed->bte", x, self.W_value.weight)
    q = q.view(batch, tokens, heads, width)
    k = k.view(batch, tokens, heads, width)
    v = v.view(batch, tokens, heads, width)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k)
    scores = scores * width ** -0.5
    future = torch.ones(tokens, tokens, dtype=torch.bool, device=x.device).triu(1)
    scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    weights = self.dropout(weights)
    mixed = torch.einsum("bhqk,bkhd->bqhd", weights, v)
    mixed = mixed.reshape(batch, tokens, heads * width)
    return self.out_proj(mixed)


def causal_future(tokens, device):
    upper = torch.ones(tokens, tokens, dtype=torch.bool, device=device)
    return torch.triu(upper, diagonal=1)


def attention_entropy(weights):
    safe = weights.clamp_min(1e-12)
    return -(weights * safe.log()).sum(dim=-1).mean()
'''
RENAMES = {"batch": "nb", "tokens": "seq", "heads": "nh", "width": "hd", "scores": "logits", "weights": "probs",
           "mixed": "ctx", "future": "blocked", "upper": "tri", "safe": "clipped"}


def _renamed_and_reordered(source):
    for old, new in RENAMES.items():
        source = re.sub(rf"\b{old}\b", new, source)
    lines = source.splitlines()
    lines[3], lines[5] = lines[5], lines[3]  # the value projection before the query projection
    return "\n".join(lines) + "\n"


def test_a_class_of_near_identical_honest_submissions_flags_no_pair(tmp_path):
    book_path = write_book(tmp_path / "book.py")
    base = read_base([book_path])
    book = book_path.read_text(encoding="utf-8")
    own = {f"honest{i:02d}": f"def helper(self, x):\n{textwrap.indent(change, '    ')}\n"
           for i, change in enumerate(SMALL_CHANGES)}
    own |= {"generic_a": GENERIC_SPLIT, "generic_b": GENERIC_MERGE,
            "planted_a": EINSUM_SOLUTION, "planted_b": _renamed_and_reordered(EINSUM_SOLUTION)}
    students = []
    for student_id, code in own.items():  # one solution cell of pasted book code, one of their own
        student = StudentCode(student_id, [("04 / book", book), ("04 / own", code)])
        student.fingerprints = [(index, fingerprint) for index, (_, source) in enumerate(student.cells)
                                for fingerprint in fingerprints(source, base.vocabulary)
                                if fingerprint.hash not in base.excluded]
        students.append(student)
    assert not [f for student in students if student.id.startswith("generic") for f in student.fingerprints]
    pairs = {(pair.student_a, pair.student_b): pair
             for pair in analyse(students, {}, threshold=0.0, near_duplicates=near_duplicate_pairs).pairs}
    planted = pairs[("planted_a", "planted_b")]
    honest = {key: pair for key, pair in pairs.items() if key != ("planted_a", "planted_b")}
    assert planted.score >= FLAG_THRESHOLD, planted
    assert planted.score > max((pair.score for pair in honest.values()), default=0.0)
    assert [key for key, pair in honest.items() if pair.score >= FLAG_THRESHOLD] == []
    # The pair: two different two-line functions of generic tokens, nothing in common that counts.
    generic = pairs.get(("generic_a", "generic_b"))
    assert generic is None or generic.score == 0.0
    # Calibrated on the class: the planted pair has more shared rare code than every other pair, and the page
    # says so in words.
    all_pairs = len(students) * (len(students) - 1) // 2
    assert planted.code_percentile == pytest.approx(1 - 1 / all_pairs)
    assert planted.code_evidence > max((pair.code_evidence for pair in honest.values()), default=0.0)
    words = evidence_text(planted, len(students))
    assert f"more shared rare code than 99.1 % of the {all_pairs} pairs in this class" in words, words
