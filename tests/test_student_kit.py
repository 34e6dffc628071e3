"""The student kit: its stored public checks agree with the live ones, its build is deterministic, and it
says which parameter names it expected. The no-answers proof in a fresh venv is tests/test_student_kit_venv.py.
"""

import copy
import filecmp
import json
import math
import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder import cli
from autograder.checking.check_types import PASSED
from autograder.checking.pictures import head_layout_svg, heatmap_svg
from autograder.course import catalog
from autograder.integrations.student_kit.build import KitBuildError, build, vectors_document
from autograder.integrations.student_kit.runtime import tensors
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import read_vectors, split_document, vectors_from_document
from autograder.running.runner import run_exercise
from devtools import student_kit_agreement as agreement


@pytest.fixture(scope="module")
def document():
    return vectors_document()


@pytest.fixture(scope="module")
def vectors(document):
    return vectors_from_document(document)


@pytest.mark.slow
def test_every_public_check_and_only_public_checks_are_stored(document):
    public = [check.id for check in catalog.CHECKS if not check.hidden]
    assert sorted(check["id"] for check in document["checks"]) == sorted(public)
    hidden = {check.id for check in catalog.CHECKS if check.hidden}
    assert not {key.removesuffix(".title") for key in document["messages"] if key.endswith(".title")} & hidden
    assert not [key for key in document["messages"] if key.endswith(".hidden")]
    for key in document["messages"]:
        assert set(document["messages"][key]) == {"en", "zh"}, key


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_kit_checks_agree_with_live_public_checks(vectors, lang):
    students = agreement.students()
    labels = [student.label for student in students]
    # The population the figure is measured on: references, release stubs, mutants and grid variants.
    assert sum(label.startswith("mutant/") for label in labels) > 100
    assert sum(label.startswith("variant/") for label in labels) > 50
    assert sum(label.startswith("release/") for label in labels) >= 10
    total, disagreements = agreement.measure(vectors, (lang,))
    assert total > 300
    assert not disagreements, "\n".join(f"{d.student} [{d.check}]: live {d.live} kit {d.kit}" for d in disagreements)


def test_agreement_notices_a_stale_vector(document):
    """The measure can fail: a stored expectation off by 1 % makes the reference disagree."""
    stale = copy.deepcopy(document)
    entry = next(check for check in stale["checks"] if check["id"] == "causal_attention.notes")
    expected = entry["expected"][0]
    expected["output"] = tensors.encode(tensors.decode(expected["output"]) * 1.01)
    student = agreement.Student("reference", "causal_attention", {"CausalAttention": solutions.CausalAttention})
    _, disagreements = agreement.compare_student(student, vectors_from_document(stale), "en")
    assert [d.check for d in disagreements] == ["causal_attention.notes"]


@pytest.mark.slow
def test_build_is_deterministic_and_readable(tmp_path):
    """Same sources, same bytes: a build here and one by the CLI in a fresh process (its own thread count, hash
    seed and import order) write identical files. Nothing built is committed, so this is the staleness check."""
    first, second = tmp_path / "first", tmp_path / "second"
    sizes = build(first)
    subprocess.run([sys.executable, "-m", "autograder.cli", "student-kit", "build", str(second)], check=True,
                   cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": "12345", "OMP_NUM_THREADS": "2"})
    names = sorted(sizes)
    assert sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file()) == names
    match, mismatch, errors = filecmp.cmpfiles(first, second, names, shallow=False)
    assert (mismatch, errors) == ([], [])
    stored = read_vectors(first / "autograder" / "integrations" / "student_kit" / "data" / "vectors.json")
    assert {check.id for check in stored.checks} == {check.id for check in catalog.CHECKS if not check.hidden}
    # Strict JSON (no NaN/Infinity tokens): any JSON reader can audit what the kit stores.
    data = first / "autograder/integrations/student_kit/data"
    assert len(list(data.rglob("*.json"))) == 1 + len({check.exercise for check in stored.checks})
    for path in data.rglob("*.json"):
        json.loads(path.read_text(), parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))


@pytest.mark.slow
def test_rebuild_replaces_an_earlier_kit_and_refuses_other_folders(tmp_path):
    kit = tmp_path / "kit"
    build(kit)
    (kit / "stale.txt").write_text("from an earlier build")
    build(kit)
    assert not (kit / "stale.txt").exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    with pytest.raises(KitBuildError, match="not empty"):
        build(other)
    assert (other / "mine.txt").read_text() == "keep me"
    assert cli.main(["student-kit", "build", str(other)]) == cli.USAGE_ERROR
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kit", "notes"]  # no staging folder left behind


@pytest.mark.slow
def test_cli_builds_the_kit(tmp_path, capsys):
    assert cli.main(["student-kit", "build", str(tmp_path / "kit")]) == 0
    assert "bytes" in capsys.readouterr().err
    assert (tmp_path / "kit" / "pyproject.toml").is_file()


class RenamedCausalAttention(nn.Module):
    """CausalAttention with its projections named query/key/value instead of the given W_query/W_key/W_value."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        return self.value(x)


class RenamedMultiHeadAttention(solutions.MultiHeadAttention):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.proj = self.out_proj
        del self.out_proj

    def forward(self, x):
        return x


@pytest.mark.parametrize(("exercise_id", "namespace", "expected_name"), [
    ("causal_attention", {"CausalAttention": RenamedCausalAttention}, "W_query"),
    ("multi_head_attention", {"MultiHeadAttention": RenamedMultiHeadAttention}, "out_proj"),
])
def test_renamed_parameters_are_named(vectors, exercise_id, namespace, expected_name):
    kit = run_public(exercise_id, namespace, vectors, "en")
    assert kit[0].status != PASSED and expected_name in kit[0].message
    live = run_exercise(exercise_id, namespace, include_hidden=False, lang="en")
    assert [r.message for r in kit] == [r.message for r in live]


def test_a_failed_mask_check_draws_its_heatmap(vectors):
    def with_diagonal(num_tokens):
        return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))

    result = run_public("causal_mask", {"causal_mask": with_diagonal}, vectors, "en")[0]  # causal_mask.notes
    assert result.misconception == "mask_includes_diagonal" and result.heatmap is not None
    svg = heatmap_svg(*result.heatmap, vectors.messages, "zh")
    assert ElementTree.fromstring(svg).tag.endswith("svg") and "你的结果" in svg


def test_a_wrong_split_draws_the_same_head_layout_as_the_full_kit(vectors):
    def view_only(x, num_heads):
        b, num_tokens, d_out = x.shape
        return x.reshape(b, num_heads, num_tokens, d_out // num_heads)

    kit = run_public("split_heads", {"split_heads": view_only}, vectors, "en")[0]  # split_heads.notes
    live = run_exercise("split_heads", {"split_heads": view_only}, include_hidden=False, lang="en")[0]
    assert kit.head_layout is not None and kit.head_layout == live.head_layout
    assert ElementTree.fromstring(head_layout_svg(kit.head_layout, vectors.messages, "en")).tag.endswith("svg")


def test_stored_weights_load_by_name_in_either_layout_with_biases_made_to_match():
    from autograder.course.shared.loading import load_stored_weights

    generator = torch.Generator().manual_seed(0)
    weight, bias = torch.randn(2, 3, generator=generator), torch.randn(2, generator=generator)
    x = torch.randn(4, 3, generator=generator)

    class Student(nn.Module):
        def __init__(self):
            super().__init__()
            self.W_query = nn.Parameter(torch.zeros(3, 2))  # raw (d_in, d_out), used as x @ W
            self.W_key = nn.Linear(3, 2, bias=True)  # a bias the stored case does not have
            self.out_proj = nn.Linear(3, 2, bias=False)  # no bias, but the stored case has one
            self.unknown = nn.Linear(3, 2)  # nothing stored under this name: left alone

    student = Student()
    unknown = student.unknown.weight.detach().clone()
    load_stored_weights(student, {"W_query.weight": weight, "W_key.weight": weight, "out_proj.weight": weight,
                                  "out_proj.bias": bias, "missing.weight": weight})
    assert torch.equal(student.W_query, weight.T)
    assert torch.equal(student.W_key.weight, weight) and not student.W_key.bias.any()
    assert torch.allclose(student.out_proj(x), x @ weight.T + bias)
    assert torch.equal(student.unknown.weight, unknown)


@pytest.mark.slow
def test_an_exercise_reads_and_decodes_its_own_checks_only(document, tmp_path):
    # A fresh kernel's first check parses the index and its own exercise's file, not every exercise's tensors
    # (issue 59): with every other exercise's file gone, it still gets its checks; asking for another fails.
    for relative, content in split_document(document).items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(json.dumps(content), encoding="utf-8")
    index = json.loads((tmp_path / "vectors.json").read_text(encoding="utf-8"))
    assert set(index["checks"]) == {check["exercise"] for check in document["checks"]}
    for exercise_id, relative in index["checks"].items():
        if exercise_id != "causal_mask":
            (tmp_path / relative).unlink()
    stored = read_vectors(tmp_path / "vectors.json")
    whole = vectors_from_document(document)
    assert [check.id for check in stored.checks_of("causal_mask")] == \
        [check.id for check in whole.checks_of("causal_mask")] != []
    assert list(stored.decoded) == ["causal_mask"]
    with pytest.raises(FileNotFoundError):
        stored.checks_of("softmax_naive")
    # The exercise id a notebook cell passes is a key of the index, never a path: no file outside it is read.
    (tmp_path / "checks" / "elsewhere.json").write_text(json.dumps(document["checks"][:1]), encoding="utf-8")
    for exercise_id in ("no such exercise", "elsewhere", "../checks/elsewhere", "checks/elsewhere.json"):
        assert stored.checks_of(exercise_id) == ()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_float_tensors_read_back_bit_for_bit(dtype):
    values = torch.tensor([[0.1, -0.0, 1e-30, 65504.0], [math.inf, -math.inf, math.nan, 1 / 3]], dtype=torch.float64)
    for tensor in (values.to(dtype), values.to(dtype).t(), values.to(dtype)[:0], values.to(dtype)[0, 0]):
        stored = json.loads(json.dumps(tensors.encode(tensor), allow_nan=False))
        assert set(stored) == {"__tensor__", "shape", "bytes"}  # no float literals to parse
        back = tensors.decode(stored)
        assert back.dtype == dtype and back.shape == tensor.shape
        assert back.reshape(-1).view(torch.uint8).tolist() == tensor.reshape(-1).view(torch.uint8).tolist()


def test_stored_bytes_refuse_what_is_not_base64():
    stored = tensors.encode(torch.ones(2))
    with pytest.raises(ValueError):
        tensors.decode({**stored, "bytes": stored["bytes"] + "*"})
    with pytest.raises(RuntimeError):  # bytes for 1.5 values of float32
        tensors.decode({**stored, "bytes": "AAAAAAAAAA=="})


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.slow
def test_kit_agrees_on_padding_fills_autograd_does_not_record(vectors, lang):
    """Issue 58: the kit runs the same probe, so an in-place fill with gradients off fails there too, as live."""
    students = [student for student in agreement.students() if student.exercise == "padding_mask"]
    labels = {student.label for student in students}
    assert {"mutant/MHAPaddingFilledInPlaceNoGrad", "mutant/MHAPaddingFilledThroughData",
            "mutant/MHAPaddingMaskBuiltNoGrad"} <= labels
    for student in students:
        _, disagreements = agreement.compare_student(student, vectors, lang)
        assert not disagreements, disagreements
    unrecorded = next(student for student in students if student.label == "mutant/MHAPaddingFilledInPlaceNoGrad")
    example = {result.id: result for result in run_public("padding_mask", unrecorded.namespace, vectors, lang)}[
        "padding_mask.example"]
    assert example.status != PASSED and example.misconception == "forward_step_detached"
    assert "autograd" in example.message
