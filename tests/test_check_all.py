"""check_all: a notebook's last cell sums up every exercise (done, failing, not started) with public and total
points, the same in both kits."""

import contextlib
import io
import re

import nbformat
import pytest
import torch

from attnkit import solutions
from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from autograder.running.runner import run_exercise

NOTEBOOKS = sorted({exercise.notebook for exercise in EXERCISES})


def stub(*_args, **_kwargs):
    raise NotImplementedError()


def solved_namespace():
    return {name: getattr(solutions, name) for exercise in EXERCISES for name in exercise.names}


def printed(check_all, notebook, namespace):
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        check_all(notebook, namespace)
    return output.getvalue().splitlines()


@pytest.fixture(scope="module")
def kit_check_all():
    """The student kit's check_all, on the vectors built from this checkout."""
    vectors = vectors_from_document(vectors_document())
    return NotebookRuntime(StoredExpectations(lambda: vectors)).check_all


def states(lines):
    """Each exercise's state: "title — state" in English, "title（state）" in Chinese."""
    found = [re.fullmatch(r"  [✔✘·] .*(?: — (.+)|（(.+)）)", line) for line in lines]
    return [match.group(1) or match.group(2) for match in found if match]


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_solved_notebook_is_all_done_with_the_catalogues_counts(notebook, kit_check_all, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", "en")
    lines = printed(in_notebook.check_all, notebook, solved_namespace())
    exercises = [exercise for exercise in EXERCISES if exercise.notebook == notebook]
    assert lines[0] == f"{notebook}: {len(exercises)} of {len(exercises)} exercises done"
    assert states(lines) == ["done"] * len(exercises)
    public = [check for exercise in exercises for check in catalog.checks_of(exercise.id, include_hidden=False)]
    points = sum(exercise.points for exercise in exercises)
    later = points - sum(check.points for check in public)
    assert lines[-1] == (f"notebook: ✔ all {len(public)} public checks pass (previews included) · {points:g} points "
                         f"in all, {later:g} of them graded later on new values")
    assert printed(kit_check_all, notebook, solved_namespace()) == lines


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_stubs_missing_names_and_a_wrong_answer(lang, kit_check_all, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    namespace = {"softmax_naive": lambda x: torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True) * 2,
                 "softmax_stable": stub}  # context_vectors not defined yet
    lines = printed(in_notebook.check_all, "01_attention_without_weights", namespace)
    expected = {"en": ["failing", "not started", "not started"], "zh": ["未通过", "未开始", "未开始"]}
    assert states(lines) == expected[lang]
    assert re.match(r"  ✘ ", lines[1]) and lines[3].startswith("  · ") and lines[5].startswith("  · ")
    assert printed(kit_check_all, "01_attention_without_weights", namespace) == lines


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_exercise_with_a_failing_preview_is_not_done(lang, kit_check_all, monkeypatch):
    # count_parameters passes its graded public checks and fails its preview (worth 0 points): still failing. This
    # count is right on the small public modules and GPT-2's, one off on the larger ones the preview counts.
    def off_on_unseen_sizes(module):
        count = sum(p.numel() for p in module.parameters() if p.requires_grad)
        return count if count < 200 or count == 2_360_064 else count + 1

    monkeypatch.setenv("ATTNKIT_LANG", lang)
    namespace = {"count_parameters": off_on_unseen_sizes}
    public = run_exercise("parameter_counts", namespace, include_hidden=False, lang=lang)
    assert {r.status.value for r in public if not r.id.endswith(".preview")} == {"passed"}
    assert {r.status.value for r in public if r.id.endswith(".preview")} == {"failed"}
    lines = printed(in_notebook.check_all, "04_multi_head_attention", namespace)
    row = next(i for i, line in enumerate(lines) if "3.3" in line)
    assert lines[row].startswith("  ✘ ") and states([lines[row]]) == [{"en": "failing", "zh": "未通过"}[lang]]
    assert lines[row + 1].strip().startswith("✘") and "✔" not in lines[row + 1] and "✔" not in lines[-1]
    count = sum(exercise.notebook == "04_multi_head_attention" for exercise in EXERCISES)
    assert lines[0].endswith({"en": f"0 of {count} exercises done", "zh": "已完成 0 个"}[lang])
    assert printed(kit_check_all, "04_multi_head_attention", namespace) == lines


def test_an_unknown_notebook_is_named_with_the_known_ones(kit_check_all):
    for check_all in (in_notebook.check_all, kit_check_all):
        with pytest.raises(ValueError, match="03_causal_attention"):
            check_all("03_causal", {})


def test_every_release_notebook_ends_with_its_check_all(repo_root):
    for notebook in NOTEBOOKS:
        cells = nbformat.read(repo_root / "release" / "attention" / f"{notebook}.ipynb", as_version=4).cells
        assert f'check_all("{notebook}", globals())' in cells[-1].source, notebook
