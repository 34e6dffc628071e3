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


# --- Instructions = grading (issue 34, item 5) ----------------------------------------------------------------------
# Every sentence of an exercise's text that states a requirement ("must", "必须") is graded by a public check (one
# check(...) runs: a public check or the preview of a hidden one) whose title states it too; any other sentence is
# advice. Each requirement sentence is listed here with the check that grades it and the words of that check's title
# that state it: a new "must" in a notebook fails until it is listed, or reworded as advice.
REQUIREMENT = re.compile(r"\bmust\b(?! \w+\?)|必须|务必")
GRADED_BY = {
    # (exercise, words of the sentence): (check, words of its title in the sentence's language)
    ("softmax_stable", "must work for tensors of any shape"): ("softmax_stable.random", "1-D to 3-D tensors"),
    ("softmax_stable", "必须适用于任意形状的张量"): ("softmax_stable.random", "1 到 3 维张量"),
    ("context_vectors", "they must be the ones this computation gives"): ("context_vectors.float64",
                                                                          "passes the right gradient back"),
    ("context_vectors", "而且必须是这个计算应有的梯度"): ("context_vectors.float64", "把正确的梯度传回输入"),
    ("transfer_weights", "training one must not change the other"): ("transfer_weights.copies", "shares no memory"),
    ("transfer_weights", "训练其中一个不能改变另一个"): ("transfer_weights.copies", "不与 v2 共享内存"),
    ("transfer_weights", "which must stay trainable afterwards"): ("transfer_weights.copies", "still trainable"),
    ("transfer_weights", "之后必须仍可训练"): ("transfer_weights.copies", "仍可训练"),
    ("causal_mask", "must **not** look at key"): ("causal_mask.notes", "blocks exactly the future tokens"),
    ("causal_mask", "**不能**看 key"): ("causal_mask.notes", "恰好遮住所有未来 token"),
    ("masking_routes", "must come back unchanged"): ("masking_routes.renormalise_notes", "the input left as it was"),
    ("masking_routes", "gradients must flow back"): ("masking_routes.renormalise_notes",
                                                     "the right gradient flowing back"),
    ("masking_routes", "必须原样保留"): ("masking_routes.renormalise_notes", "输入保持原样"),
    ("masking_routes", "梯度也必须"): ("masking_routes.renormalise_notes", "正确的梯度能传回输入"),
    ("masking_routes", "must also work on a tensor on another device"): ("masking_routes.renormalise_device",
                                                                         "on another device"),
    ("masking_routes", "还必须能处理位于其他设备"): ("masking_routes.renormalise_device", "其他设备上"),
    ("masking_routes", "must accept any leading batch dimensions"): ("masking_routes.renormalise_random", "batches"),
    ("masking_routes", "必须支持任意数量的前置 batch 维度"): ("masking_routes.renormalise_random", "带 batch 维度"),
    ("mha_wrapper", "必须是 `nn.ModuleList`"): ("mha_wrapper.structure", "注册为子模块"),
    ("parameter_counts", "must not be counted"): ("parameter_counts.notes", "never buffers"),
}


def instruction_sentences(repo_root):
    """(exercise, sentence) for every sentence of every exercise's own Markdown in the release, from its heading to
    its check(...) cell (the generated "What is graded" cells left out: they are the check titles themselves)."""
    for notebook in dict.fromkeys(exercise.notebook for exercise in EXERCISES):
        reading = []
        for cell in nbformat.read(repo_root / "release" / "attention" / f"{notebook}.ipynb", as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.startswith("### Exercise"):
                reading = [cell]
            elif reading and cell.cell_type == "markdown" and not cell.get("id", "").startswith("requirements-"):
                reading.append(cell)
            elif reading and cell.cell_type == "code" and (called := re.search(r'^check\("(\w+)"', cell.source, re.M)):
                for text in reading:
                    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z*`])|(?<=[。！？；])|\n", text.source):
                        yield called.group(1), sentence.strip()
                reading = []


def ungraded_requirements(sentences, graded_by=GRADED_BY):
    """The requirement sentences no listed check grades: (exercise, sentence)."""
    return [(exercise, sentence) for exercise, sentence in sentences
            if REQUIREMENT.search(sentence) and not sentence.endswith(("?", "？"))
            and not any(listed == exercise and words in sentence for listed, words in graded_by)]


def test_every_requirement_sentence_is_graded_by_a_public_check(repo_root):
    sentences = list(instruction_sentences(repo_root))
    assert len({exercise for exercise, _ in sentences}) == len(EXERCISES)
    ungraded = ungraded_requirements(sentences)
    assert not ungraded, "\n".join(f"{exercise}: {sentence}" for exercise, sentence in ungraded)
    public = {check.id.removesuffix(".preview") for check in catalog.CHECKS if not check.hidden}
    for (exercise, words), (check_id, title_words) in GRADED_BY.items():
        assert any(listed == exercise and words in sentence for listed, sentence in sentences), (exercise, words)
        assert check_id in public and check_id.startswith(f"{exercise}."), check_id
        title = catalog.MESSAGES[f"{check_id}.title"]
        assert title_words in title["en"] + title["zh"], (check_id, title_words)


def test_an_ungraded_requirement_is_found():
    """The scan can fail: a "must" no check grades is reported, advice and a question to think about are not."""
    sentences = [("causal_attention", "The padding fill must come before the causal fill."),
                 ("causal_attention", "掩码必须是浮点数。"),
                 ("causal_attention", "We fill the padding first, as the book does."),
                 ("causal_attention", "Which two of the keys must swap?")]
    assert ungraded_requirements(sentences) == sentences[:2]
