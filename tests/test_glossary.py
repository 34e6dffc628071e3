"""Every Chinese text a student reads follows the one glossary (autograder/course/glossary.py)."""

import re

import nbformat

from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.course.glossary import AVOIDED, GLOSSARY

CJK = "\u4e00-\u9fff"
SPACE_BETWEEN_CHINESE = re.compile(rf"[{CJK}][ \t]+[{CJK}]")


def chinese_texts(repo_root):
    """(where, text) for every zh title, message, misconception and exercise title, and every notebook Markdown."""
    for key, text in catalog.MESSAGES.items():
        yield key, text["zh"]
    for misconception in catalog.MISCONCEPTIONS:
        yield f"misconception {misconception.id} name", misconception.name["zh"]
        yield f"misconception {misconception.id} hint", misconception.hint["zh"]
    for exercise in EXERCISES:
        yield f"exercise {exercise.id}", exercise.title["zh"]
    for path in sorted((repo_root / "release" / "attention").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                yield f"{path.name} {cell.get('id')}", cell.source


def test_no_chinese_text_uses_a_variant_the_glossary_avoids(repo_root):
    found = [f"{where}: {variant!r} (say {AVOIDED[variant].zh!r} for {AVOIDED[variant].en!r})"
             for where, text in chinese_texts(repo_root) for variant in AVOIDED if variant in text]
    assert not found, "\n".join(found)


def test_no_stray_space_between_chinese_characters(repo_root):
    found = [f"{where}: {match.group(0)!r}" for where, text in chinese_texts(repo_root)
             for match in SPACE_BETWEEN_CHINESE.finditer(text)]
    assert not found, "\n".join(found)


def test_the_glossary_is_one_translation_per_term_and_the_scan_can_fail(repo_root):
    assert len({term.en for term in GLOSSARY}) == len(GLOSSARY)
    for term in GLOSSARY:
        assert term.zh not in term.avoid, term
    texts = list(chinese_texts(repo_root))
    assert len(texts) > 300 and any("注意力权重" in text for _where, text in texts)
    assert [variant for variant in AVOIDED if variant in "请把权重填充到缓冲区"]
