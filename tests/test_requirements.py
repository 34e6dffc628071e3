"""Every graded requirement is stated, and stated for the module it grades: no check's title names a feature its
module does not have."""

import dataclasses
import re

import nbformat
import pytest

from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.course.module_contract.probe import SPECS
from autograder.integrations import source_notebooks

# A word in a title, and the spec field without which the module has no such thing.
FEATURES = (
    ("qkv_bias", lambda spec: spec.has_qkv_bias),
    ("context_length", lambda spec: "context_length" in spec.arguments),
    ("mask", lambda spec: spec.causal),
    ("掩码", lambda spec: spec.causal),
    ("causal", lambda spec: spec.causal),
    ("因果", lambda spec: spec.causal),
    ("batch", lambda spec: spec.batched),
    ("out_proj", lambda spec: spec.out_proj),
    ("dropout", lambda spec: spec.has_dropout),
    ("num_heads", lambda spec: spec.attributes or "num_heads" in spec.arguments),
)


def contract_titles(spec):
    return {key: text for key, text in catalog.MESSAGES.items()
            if key.startswith(f"{spec.exercise}.") and key.endswith(".title")
            and key.split(".")[1] in ("structure", "modes", "device", "properties")}


def test_no_contract_title_names_a_feature_its_module_lacks():
    lacking = []
    for spec in SPECS:
        for key, text in contract_titles(spec).items():
            for lang, words in text.items():
                lacking += [f"{key} [{lang}] names {word}: {words}" for word, has in FEATURES
                            if word in words and not has(spec)]
    assert not lacking, "\n".join(lacking)


def test_the_feature_table_can_fail():
    """The scan sees what it is for: the causal modules' titles do name their masks, causality and batches."""
    causal = [spec for spec in SPECS if spec.causal]
    assert causal
    for spec in causal:
        words = " ".join(text["en"] + text["zh"] for text in contract_titles(spec).values())
        assert all(word in words for word in ("mask", "掩码", "causal", "因果", "batch", "context_length"))


def test_every_graded_check_has_a_title_in_both_languages():
    for check in catalog.CHECKS:
        title = catalog.MESSAGES[f"{check.id}.title"]
        assert title["en"].strip() and title["zh"].strip(), check.id


def test_every_graded_requirement_is_stated_in_the_release_before_its_check(repo_root):
    """Each exercise's text in the student's notebook holds every graded check's requirement, in both languages."""
    unstated = []
    for exercise in EXERCISES:
        path = repo_root / "release" / "attention" / f"{exercise.notebook}.ipynb"
        cells = nbformat.read(path, as_version=4).cells
        check_at = next(index for index, cell in enumerate(cells) if cell.cell_type == "code"
                        and re.search(rf'^check\("{exercise.id}"', cell.source, re.M))
        stated = " ".join(cell.source for cell in cells[:check_at] if cell.cell_type == "markdown"
                          and cell.get("id") == f"requirements-{exercise.id}")
        for check in catalog.checks_of(exercise.id):
            title = catalog.MESSAGES[f"{check.id}.title"]
            unstated += [f"{exercise.notebook} {check.id} [{lang}]" for lang in ("en", "zh")
                         if title[lang] not in stated]
    assert not unstated, "\n".join(unstated)


def test_the_source_notebooks_catalogue_cells_are_current(repo_root):
    """The overviews, "What is graded" cells and graded cells' points of source/ are the catalogue's."""
    stale = source_notebooks.refresh_source_notebooks(repo_root / "source" / "attention", write=False)
    assert not stale, "run `make release`"


def test_each_notebook_states_time_and_difficulty_of_every_exercise(repo_root):
    """The overview under a notebook's title names each exercise with its points, time and difficulty."""
    for notebook in dict.fromkeys(exercise.notebook for exercise in EXERCISES):
        cells = nbformat.read(repo_root / "release" / "attention" / f"{notebook}.ipynb", as_version=4).cells
        assert cells[1].get("id") == f"overview-{notebook[:2]}", notebook
        rows = {line.split(" | ")[0].lstrip("| "): line for line in cells[1].source.splitlines()}
        for exercise in (e for e in EXERCISES if e.notebook == notebook):
            row = rows[f"{exercise.title['en']} / {exercise.title['zh']}"]
            stars = source_notebooks.DIFFICULTY[exercise.difficulty]
            assert f"| {exercise.points:g} | ~{exercise.minutes} min | {stars} |" in row, row


def test_an_exercise_without_time_or_difficulty_cannot_be_released():
    unstated = dataclasses.replace(EXERCISES[0], minutes=0)
    with pytest.raises(ValueError, match="minutes"):
        source_notebooks.requirements_text(unstated)


def test_a_graded_cells_points_typed_by_hand_are_rewritten_from_the_catalogue(repo_root):
    """The graded cells' points are generated too: a hand-typed value is stale and the refresh restores it."""
    exercise = EXERCISES[0]
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{exercise.notebook}.ipynb", as_version=4)
    graded = next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade")
                  and f'grade("{exercise.id}"' in cell.source)
    graded.metadata.nbgrader.points = exercise.points + 1
    assert source_notebooks.refreshed(notebook, exercise.notebook)
    assert graded.metadata.nbgrader.points == exercise.points
    assert not source_notebooks.refreshed(notebook, exercise.notebook)
