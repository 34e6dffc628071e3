"""The feedback page and the per-student Gradescope results speak the student's language, as the messages do."""

import json
import re

import pytest

from autograder.course.exercises import EXERCISES, NOTEBOOKS, of_notebook
from autograder.grading.notebooks import MISSING, unanswered_result
from autograder.i18n import LANGUAGES, pick
from autograder.outputs import feedback_page, records


def document_in(lang):
    results = [unanswered_result(("s", name), name, f"{name}.ipynb", MISSING, "no such file", lang)
               for name in NOTEBOOKS]
    return records.student_document("s", "attention", "hash", 1, results)


def test_every_feedback_text_exists_in_every_language():
    for key, texts in feedback_page.MESSAGES.items():
        for lang in LANGUAGES:
            assert texts.get(lang, "").strip(), f"feedback message {key!r} has no {lang} text"
    for exercise in EXERCISES:
        for lang in LANGUAGES:
            assert exercise.title.get(lang, "").strip(), f"exercise {exercise.id} has no {lang} title"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_is_in_the_students_language(lang):
    page = feedback_page.feedback_html(document_in(lang), lang)
    other = next(language for language in LANGUAGES if language != lang)
    assert f'<html lang="{lang}">' in page
    for key in ("total", "exercise", "check", "points", "hidden_check"):
        assert feedback_page.MESSAGES[key][lang] in page
    for exercise in of_notebook(NOTEBOOKS[0]):
        assert pick(exercise.title, lang) in page
    if feedback_page.MESSAGES["exercise"][other] != feedback_page.MESSAGES["exercise"][lang]:
        assert f"<th>{feedback_page.MESSAGES['exercise'][other]}</th>" not in page


def test_chinese_pages_carry_chinese_text_and_english_ones_none(tmp_path):
    for lang in LANGUAGES:
        records.write_student(tmp_path / lang, document_in(lang), lang)
        page = (tmp_path / lang / "feedback" / "s.html").read_text(encoding="utf-8")
        results = json.loads((tmp_path / lang / "gradescope" / "s" / "results.json").read_text(encoding="utf-8"))
        han = re.compile(r"[\u4e00-\u9fff]")
        assert bool(han.search(page)) == (lang == "zh")
        assert bool(han.search(results["output"] + results["tests"][0]["name"])) == (lang == "zh")


def test_the_pictures_words_are_in_the_students_language():
    import torch

    from autograder.checking.check_types import HeadLayout
    from autograder.checking.pictures import head_layout_alt, heatmap_alt
    from autograder.course.catalog import MESSAGES

    mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
    layout = HeadLayout(1, (((0, 0), (0, 1)),), (((0, 1), (0, 0)),))
    han = re.compile(r"[\u4e00-\u9fff]")
    for lang in LANGUAGES:
        for words in (heatmap_alt(mask, mask.T.contiguous(), MESSAGES, lang), head_layout_alt(layout, MESSAGES, lang)):
            assert bool(han.search(words)) == (lang == "zh"), words
            english = re.sub(r"\b(True|False|query|key|token|head_dim|x)\b", "", words)
            assert (re.search(r"[A-Za-z]{3,}", english) is None) == (lang == "zh"), words
