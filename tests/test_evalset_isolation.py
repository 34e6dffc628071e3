"""The evaluation set of tests/evalsets/learners_2026_11 (issue 58) stays a measuring instrument: nothing under
autograder/ names it (so no check can read it or be keyed to it), and the set keeps its stated shape: every exercise,
at least five wrong attempts and one or two controls each, every attempt labelled."""

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID

SET_NAME = "learners_2026_11"
FIELDS = {"id": str, "exercise": str, "code": str, "mistake": str, "departing_step": str, "correct": bool}


def files_naming(folder: Path, name: str) -> list[str]:
    """The files under `folder` whose bytes hold `name` (any encoding of ASCII text: the name is ASCII)."""
    needle = name.encode("ascii")
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")
                  if path.is_file() and needle in path.read_bytes())


@pytest.fixture(scope="module")
def attempts(repo_root):
    found = []
    for path in sorted((repo_root / "tests" / "evalsets" / SET_NAME).glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["notebook"] == path.stem
        found.extend({**attempt, "notebook": path.stem} for attempt in document["attempts"])
    return found


def test_nothing_under_autograder_names_the_set(repo_root):
    assert files_naming(repo_root / "autograder", SET_NAME) == []


def test_a_mention_anywhere_under_the_folder_is_found(tmp_path):
    """The scan above can fail: a mention in a nested module, or in a data file, is found."""
    (tmp_path / "checking").mkdir()
    (tmp_path / "checking" / "judge.py").write_text(f'SET = "tests/evalsets/{SET_NAME}"\n', encoding="utf-8")
    (tmp_path / "data.json").write_text('{"other": 1}', encoding="utf-8")
    assert files_naming(tmp_path, SET_NAME) == ["checking/judge.py"]


def test_every_attempt_is_labelled_and_its_code_parses(attempts):
    for attempt in attempts:
        for field, kind in FIELDS.items():
            assert isinstance(attempt.get(field), kind), f"{attempt.get('id')}: {field}"
        assert attempt["mistake"].strip() and attempt["departing_step"].strip(), attempt["id"]
        assert EXERCISES_BY_ID[attempt["exercise"]].notebook == attempt["notebook"], attempt["id"]
        ast.parse(attempt["code"])
    assert len({attempt["id"] for attempt in attempts}) == len(attempts)


def test_every_exercise_has_five_wrong_attempts_and_one_or_two_controls(attempts):
    wrong = Counter(attempt["exercise"] for attempt in attempts if not attempt["correct"])
    controls = Counter(attempt["exercise"] for attempt in attempts if attempt["correct"])
    assert sum(wrong.values()) >= 120
    for exercise in EXERCISES:
        assert wrong[exercise.id] >= 5, exercise.id
        assert 1 <= controls[exercise.id] <= 2, exercise.id
