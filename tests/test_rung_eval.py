"""devtools/rung_eval.py (issue 58): an evaluation set's attempts run as their notebooks run them, read rung by rung
in both languages and graded; a set file out of shape is refused with the file and attempt named."""

import csv
import json

import pytest
import torch

from autograder.checking.probing import run_probe
from devtools import rung_eval
from devtools.rung_eval import AttemptReading, Graded, SetAttempt, SetError

SET = "tests/evalsets/learners_2026_11"
ROUTE_1 = '''
def causal_weights_renormalised(attn_weights):
    kept = torch.tril(attn_weights)
    return kept / kept.sum(dim=-1, keepdim=True)
'''
ROUTE_2_ZERO_FILL = '''
import math


def causal_weights_neg_inf(attn_scores):
    mask = causal_mask(attn_scores.shape[-1]).to(attn_scores.device)
    return torch.softmax(attn_scores.masked_fill(mask, 0.0), dim=-1)
'''
MASK_HIDING_THE_DIAGONAL = '''
def causal_mask(num_tokens):
    return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=0).bool()
'''
MASK_RIGHT = '''
def causal_mask(num_tokens):
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)
'''


def _attempt(code, exercise="masking_routes", notebook="03_causal_attention", correct=False, id="made-up"):
    return SetAttempt(id, notebook, exercise, code, "made up", "mask", correct)


def _write(folder, name, document):
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")


GOOD = {"id": "a-1", "exercise": "causal_mask", "code": "x = 1\n", "mistake": "m", "departing_step": "mask",
        "correct": False}


@pytest.mark.parametrize(("document", "said"), [
    ({"notebook": "01_attention_without_weights", "attempts": [GOOD]}, "must be '03_causal_attention'"),
    ({"notebook": "03_causal_attention", "attempts": {}}, "\"attempts\" must be a list"),
    ({"notebook": "03_causal_attention", "attempts": [{**GOOD, "correct": "no"}]}, "'correct' must be a bool"),
    ({"notebook": "03_causal_attention", "attempts": [{k: v for k, v in GOOD.items() if k != "code"}]},
     "'code' must be a str"),
    ({"notebook": "03_causal_attention", "attempts": [{**GOOD, "id": "../up"}]}, "an id is letters"),
    ({"notebook": "03_causal_attention", "attempts": [{**GOOD, "exercise": "softmax_naive"}]},
     "'softmax_naive' is no exercise of 03_causal_attention"),
    ({"notebook": "03_causal_attention", "attempts": [GOOD, GOOD]}, "'a-1' is used twice"),
])
def test_a_set_file_out_of_shape_is_refused_with_the_file_and_attempt(tmp_path, document, said):
    _write(tmp_path / "set", "03_causal_attention", document)
    with pytest.raises(SetError, match="03_causal_attention.json|used twice") as refused:
        rung_eval.load_set(tmp_path / "set")
    assert said in str(refused.value)


def test_an_empty_folder_or_broken_json_is_refused(tmp_path):
    with pytest.raises(SetError, match="no .json file"):
        rung_eval.load_set(tmp_path)
    (tmp_path / "03_causal_attention.json").write_text("{", encoding="utf-8")
    with pytest.raises(SetError, match="not readable JSON"):
        rung_eval.load_set(tmp_path)


def test_the_committed_set_loads(repo_root):
    attempts = rung_eval.load_set(repo_root / SET)
    assert len(attempts) >= 150
    assert {attempt.notebook for attempt in attempts} == {
        "01_attention_without_weights", "02_trainable_self_attention", "03_causal_attention",
        "04_multi_head_attention"}


def test_each_function_goes_to_the_cell_of_its_stub_and_the_reference_fills_the_others():
    notebook = rung_eval.placed_notebook(_attempt(ROUTE_2_ZERO_FILL + "\n\n" + ROUTE_1))
    cells = {rung_eval._grade_id(cell): cell.source for cell in notebook.cells if rung_eval._grade_id(cell)}
    assert rung_eval.answer_cells(notebook, "masking_routes") == [
        "solution_causal_weights_renormalised", "solution_causal_weights_neg_inf"]
    # the import, no definition of a stub's, goes to the first answer cell; each function to its own stub's cell
    assert cells["solution_causal_weights_renormalised"].startswith("import math")
    assert "torch.tril(attn_weights)" in cells["solution_causal_weights_renormalised"]
    assert "masked_fill(mask, 0.0)" in cells["solution_causal_weights_neg_inf"]
    assert "tril" not in cells["solution_causal_weights_neg_inf"]
    assert "BEGIN SOLUTION" in cells["solution_causal_mask"] and "BEGIN SOLUTION" in cells["solution_causal_attention"]
    assert cells["test_masking_routes"].startswith("# Graded")  # the graded cell as released


def test_the_namespace_is_the_notebooks_up_to_the_check_cell_and_raising_cells_are_noted():
    notebook = rung_eval.placed_notebook(_attempt("raise RuntimeError('boom')\n" + MASK_RIGHT, "causal_mask"))
    namespace, errors = rung_eval.notebook_namespace(notebook, "causal_attention")
    # the learner's cell raised, and the demo cell that uses its function after it (a learner runs on)
    assert errors[:2] == ("cell 11: RuntimeError: boom", "cell 14: NameError: name 'causal_mask' is not defined")
    assert "causal_mask" not in namespace  # the learner's cell raised before defining it
    assert "attn_weights" in namespace and "CausalAttention" in namespace  # cells before the check cell ran
    assert "context_vecs" not in namespace  # the demo after causal_attention's check cell did not


@pytest.mark.slow
def test_a_wrong_attempt_climbs_three_rungs_in_both_languages_and_a_control_passes():
    wrong = rung_eval.read_attempt(_attempt(MASK_HIDING_THE_DIAGONAL, "causal_mask"))
    assert not wrong.public_pass and wrong.public_names
    first, second, third = wrong.rungs["en"]
    assert len({first, second, third}) == 3 and first.startswith("Checks for")
    assert rung_eval.rung_two_adds(wrong) and all(line not in first for line in rung_eval.rung_two_adds(wrong))
    assert all("掩码" in text for text in wrong.rungs["zh"])
    control = rung_eval.read_attempt(_attempt(MASK_RIGHT, "causal_mask", correct=True))
    assert control.public_pass and control.public_names == () and not control.cell_errors


def _reading(mistake):
    attempt = SetAttempt("x-1", "03_causal_attention", "causal_mask", "pass\n", mistake, "mask", False)
    long = "Checks\n" + "  ✘ a row of a long table\n" * 300  # past spreadsheet_text's 4,000 characters
    rungs = {lang: ("Checks\n  ✘ a", "Checks\n  ✘ a\n      reproduced mistake — b", long) for lang in ("en", "zh")}
    return AttemptReading(attempt, False, ("mask_inverted",), rungs, (), Graded(1.0, 6.0, ("mask_inverted",)))


def test_the_csv_keeps_every_text_as_text_and_the_markdown_shows_what_rung_two_adds(tmp_path):
    reading = _reading('=HYPERLINK("http://x","y")')
    rung_eval.write_csv([reading], tmp_path / "rungs.csv")
    rows = list(csv.reader((tmp_path / "rungs.csv").open(encoding="utf-8")))
    assert rows[0] == list(rung_eval.COLUMNS) and len(rows) == 2
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["mistake"].startswith("'=")  # a spreadsheet shows it as text, never runs it
    assert (row["graded_score"], row["graded_max"], row["rung2_en"]) == ("1", "6", reading.rungs["en"][1])
    assert row["rung3_zh"] == reading.rungs["zh"][2]  # kept whole
    rung_eval.write_markdown([reading], tmp_path / "rungs.md", "python -m devtools.rung_eval SET --out DIR")
    table = (tmp_path / "rungs.md").read_text(encoding="utf-8")
    assert "| x-1 | causal_mask |  | ✘ | 1/6 | mask_inverted; mask_inverted | reproduced mistake — b |" in table


@pytest.mark.slow
def test_the_command_grades_and_writes_both_files(repo_root, tmp_path, capsys):
    assert rung_eval.main([str(repo_root / SET), "--out", str(tmp_path), "--attempt", "mask-control-arange",
                           "--attempt", "mask-hides-diagonal"]) == 0
    rows = {row["id"]: row for row in csv.DictReader((tmp_path / "rungs.csv").open(encoding="utf-8"))}
    assert (rows["mask-control-arange"]["graded_score"], rows["mask-control-arange"]["public_pass"]) == ("6", "True")
    assert float(rows["mask-hides-diagonal"]["graded_score"]) < 6
    assert rows["mask-hides-diagonal"]["public_pass"] == "False"
    assert "mask-hides-diagonal" in (tmp_path / "rungs.md").read_text(encoding="utf-8")
    progress = capsys.readouterr().err
    assert "[2/2] causal_mask / mask-hides-diagonal" in progress and "grading 2 notebooks" in progress


def test_an_unknown_attempt_is_refused(repo_root, tmp_path, capsys):
    with pytest.raises(SystemExit):
        rung_eval.main([str(repo_root / SET), "--out", str(tmp_path), "--attempt", "no-such-attempt"])
    assert "no attempt no-such-attempt" in capsys.readouterr().err


CONTEXT_BY_AN_ELEMENTWISE_PRODUCT = '''
def context_vectors(inputs):
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return weights * inputs
'''


def test_the_learners_failing_line_is_known_as_in_a_kernel():
    """A kernel keeps each cell's lines, so the grader quotes the learner's own failing line: the set reads the same."""
    notebook = rung_eval.placed_notebook(_attempt(CONTEXT_BY_AN_ELEMENTWISE_PRODUCT, "context_vectors",
                                                  "01_attention_without_weights"))
    namespace, _errors = rung_eval.notebook_namespace(notebook, "context_vectors")
    record = run_probe(lambda space, case: space["context_vectors"](torch.ones(6, 3)), namespace, None)
    assert record["error"]["line"] == "return weights * inputs"
