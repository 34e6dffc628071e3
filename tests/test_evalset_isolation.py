"""The evaluation sets of tests/evalsets (issue 58) stay measuring instruments: nothing under autograder/ names
learners_2026_11, learners_2026_12 or learners_2026_12b to learners_2026_12x (so no check can read them or be keyed
to them), and each keeps its stated shape: at least five wrong attempts and one or two controls for every exercise,
every attempt labelled. learners_2026_12b to learners_2026_12x are each written in halves by two authors (notebooks 01
and 02, then 03 and 04): their shape is held for the notebooks they have, and their size of 120 wrong attempts once
they have them all; learners_2026_12e to learners_2026_12x leave no exercise out."""

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID

SET_NAME = "learners_2026_11"
NEWER_SETS = ("learners_2026_12", "learners_2026_12b", "learners_2026_12c", "learners_2026_12d", "learners_2026_12e",
              "learners_2026_12f", "learners_2026_12g", "learners_2026_12h", "learners_2026_12i", "learners_2026_12j",
              "learners_2026_12k", "learners_2026_12l", "learners_2026_12m", "learners_2026_12n", "learners_2026_12o",
              "learners_2026_12p", "learners_2026_12q", "learners_2026_12r",
              "learners_2026_12s", "learners_2026_12t", "learners_2026_12u",
              "learners_2026_12v", "learners_2026_12w", "learners_2026_12x")
KEPT_APART = (SET_NAME, *NEWER_SETS)
WRITTEN_IN_HALVES = ("learners_2026_12b", "learners_2026_12c", "learners_2026_12d", "learners_2026_12e",
                     "learners_2026_12f", "learners_2026_12g", "learners_2026_12h", "learners_2026_12i",
                     "learners_2026_12j", "learners_2026_12k", "learners_2026_12l", "learners_2026_12m",
                     "learners_2026_12n", "learners_2026_12o", "learners_2026_12p", "learners_2026_12q",
                     "learners_2026_12r", "learners_2026_12s", "learners_2026_12t", "learners_2026_12u",
                     "learners_2026_12v", "learners_2026_12w", "learners_2026_12x")
# Sets that leave no exercise out: every exercise of every notebook they have holds attempts and controls.
COVERS_EVERY_EXERCISE = ("learners_2026_12e", "learners_2026_12f", "learners_2026_12g", "learners_2026_12h",
                         "learners_2026_12i", "learners_2026_12j", "learners_2026_12k", "learners_2026_12l",
                         "learners_2026_12m", "learners_2026_12n", "learners_2026_12o", "learners_2026_12p",
                         "learners_2026_12q", "learners_2026_12r", "learners_2026_12s",
                         "learners_2026_12t", "learners_2026_12u",
                         "learners_2026_12v", "learners_2026_12w", "learners_2026_12x")
# Exercises a set's authors left out, said in its README; a measure on that set says nothing of them. The set cannot
# be completed afterwards by anyone who has read the judging code.
NOT_COVERED = {"learners_2026_12d": frozenset({"two_dimensional_wrapper"})}
FIELDS = {"id": str, "exercise": str, "code": str, "mistake": str, "departing_step": str, "correct": bool}


def files_naming(folder: Path, name: str) -> list[str]:
    """The files under `folder` whose bytes hold `name` (any encoding of ASCII text: the name is ASCII)."""
    needle = name.encode("ascii")
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")
                  if path.is_file() and needle in path.read_bytes())


def read_attempts(folder: Path) -> list[dict]:
    """Every attempt of the set in `folder`, each with the notebook its file is named after."""
    found: list[dict] = []
    for path in sorted(folder.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["notebook"] == path.stem
        found.extend({**attempt, "notebook": path.stem} for attempt in document["attempts"])
    return found


@pytest.fixture(scope="module")
def attempts(repo_root):
    return read_attempts(repo_root / "tests" / "evalsets" / SET_NAME)


@pytest.mark.parametrize("set_name", KEPT_APART)
def test_nothing_under_autograder_names_the_set(repo_root, set_name):
    assert files_naming(repo_root / "autograder", set_name) == []


@pytest.mark.parametrize("set_name", KEPT_APART)
def test_a_mention_anywhere_under_the_folder_is_found(tmp_path, set_name):
    """The scan above can fail: a mention in a nested module, or in a data file, is found."""
    (tmp_path / "checking").mkdir()
    (tmp_path / "checking" / "judge.py").write_text(f'SET = "tests/evalsets/{set_name}"\n', encoding="utf-8")
    (tmp_path / "data.json").write_text('{"other": 1}', encoding="utf-8")
    assert files_naming(tmp_path, set_name) == ["checking/judge.py"]


def assert_labelled_and_parsing(attempts: list[dict]) -> None:
    for attempt in attempts:
        for field, kind in FIELDS.items():
            assert isinstance(attempt.get(field), kind), f"{attempt.get('id')}: {field}"
        assert attempt["mistake"].strip() and attempt["departing_step"].strip(), attempt["id"]
        assert EXERCISES_BY_ID[attempt["exercise"]].notebook == attempt["notebook"], attempt["id"]
        ast.parse(attempt["code"])
    assert len({attempt["id"] for attempt in attempts}) == len(attempts)


def test_every_attempt_is_labelled_and_its_code_parses(attempts):
    assert_labelled_and_parsing(attempts)


@pytest.mark.parametrize("set_name", NEWER_SETS)
def test_every_attempt_of_the_newer_sets_is_labelled_and_its_code_parses(repo_root, set_name):
    newer = read_attempts(repo_root / "tests" / "evalsets" / set_name)
    assert newer
    assert_labelled_and_parsing(newer)


@pytest.mark.parametrize("set_name", KEPT_APART)
def test_every_exercise_has_five_wrong_attempts_and_one_or_two_controls(repo_root, set_name):
    attempts = read_attempts(repo_root / "tests" / "evalsets" / set_name)
    wrong = Counter(attempt["exercise"] for attempt in attempts if not attempt["correct"])
    controls = Counter(attempt["exercise"] for attempt in attempts if attempt["correct"])
    notebooks = {attempt["notebook"] for attempt in attempts}
    every_notebook = {exercise.notebook for exercise in EXERCISES}
    if set_name in WRITTEN_IN_HALVES:  # its shape holds for the notebooks it has; its size once it has them all
        assert notebooks and notebooks <= every_notebook
    else:
        assert notebooks == every_notebook
    if notebooks == every_notebook:
        assert sum(wrong.values()) >= 120
    left_out = NOT_COVERED.get(set_name, frozenset())
    assert not left_out & set(wrong), "an exercise said to be left out has attempts"
    for exercise in (exercise for exercise in EXERCISES if exercise.notebook in notebooks):
        if exercise.id in left_out:
            continue
        assert wrong[exercise.id] >= 5, exercise.id
        assert 1 <= controls[exercise.id] <= 2, exercise.id


@pytest.mark.parametrize("set_name", COVERS_EVERY_EXERCISE)
def test_a_set_covering_every_exercise_leaves_none_out(repo_root, set_name):
    """learners_2026_12e, learners_2026_12f, learners_2026_12g and learners_2026_12h are written with every exercise
    in them, two_dimensional_wrapper included: none may be excused from any exercise of the notebooks it has."""
    assert set_name not in NOT_COVERED
    attempts = read_attempts(repo_root / "tests" / "evalsets" / set_name)
    notebooks = {attempt["notebook"] for attempt in attempts}
    covered = {attempt["exercise"] for attempt in attempts if not attempt["correct"]}
    controlled = {attempt["exercise"] for attempt in attempts if attempt["correct"]}
    expected = {exercise.id for exercise in EXERCISES if exercise.notebook in notebooks}
    assert covered == expected and controlled == expected
