"""Every Chinese text a student reads follows one style (issue 34, item 7): the one glossary
(autograder/course/glossary.py), full-width punctuation inside Chinese sentences, no space between two Chinese words
(a format field next to Chinese included), and one wording of the preview sentence."""

import re

import nbformat

from autograder.course import catalog
from autograder.course.exercises import EXERCISES
from autograder.course.glossary import GLOSSARY, avoided_in
from autograder.integrations import source_notebooks

CJK = "\u4e00-\u9fff"
SPACE_BETWEEN_CHINESE = re.compile(rf"[{CJK}][ \t]+[{CJK}]")
# A format field that holds Chinese text is Chinese: "{title} 的检查" becomes "因果掩码 的检查". Fields that hold a
# number, a shape or a name from the code keep their space, as any Latin word beside Chinese does ("token 3 看到").
CHINESE_FIELDS = ("title",)
_CHINESE_FIELD = rf"\{{(?:{'|'.join(CHINESE_FIELDS)})\}}"
SPACE_BESIDE_A_FIELD = re.compile(rf"{_CHINESE_FIELD}[ \t]+[{CJK}]|[{CJK}][ \t]+{_CHINESE_FIELD}")
FIELD = re.compile(r"\{[^{}]*\}")
CODE_NAMES = re.compile(r"`[^`]*`|[\w.]*\.\w+")
# Code, math and fields keep their ASCII: `x[:, 0]`, {name}, $x$, a Markdown link, a call as the titles name it
# (causal_mask(6), state_dict()), a subscript (x[0]), a list of numbers ([1000., 1000.]) and a shape ((b, 6, 4)).
KEPT_ASCII = re.compile(r"```.*?```|`[^`]*`|\{[^{}]*\}|\$[^$]*\$|\]\([^)]*\)|https?://\S+"
                        r"|[\w.]+\((?:[^()]|\([^()]*\))*\)|\w\[[^\]]*\]|\[[\d.,\s-]+\]"
                        r"|\((?:\s*[\w.*+-]+\s*,)+\s*[\w.*+-]+\s*\)", re.S)
ASCII_PUNCTUATION_IN_CHINESE = re.compile(rf"[{CJK}][ \t]*[,;:?!()\[\]]|[,;:?!()\[\]][ \t]*[{CJK}]")


def bilingual_texts(repo_root):
    """(where, {"en": ..., "zh": ...}) for every title, message and misconception rung a student can be shown."""
    for key, text in catalog.MESSAGES.items():
        yield key, text
    for misconception in catalog.MISCONCEPTIONS:
        for field in ("question", "name", "hint", "change"):
            if text := getattr(misconception, field):
                yield f"misconception {misconception.id}.{field}", text
    for exercise in EXERCISES:
        yield f"exercise {exercise.id}", exercise.title


def chinese_texts(repo_root):
    """(where, text) for every zh title, message, misconception rung and exercise title, and every notebook
    Markdown cell of the release (the generated "What is graded" cells included)."""
    for where, text in bilingual_texts(repo_root):
        yield where, text["zh"]
    for path in sorted((repo_root / "release" / "attention").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                yield f"{path.name} {cell.get('id')}", cell.source


def variants_in(text):
    return [variant for variant, _term in avoided_in(text)]


def stray_spaces_in(text):
    return [match.group(0) for pattern in (SPACE_BETWEEN_CHINESE, SPACE_BESIDE_A_FIELD)
            for match in pattern.finditer(text)]


def ascii_punctuation_in(text):
    """ASCII punctuation touching a Chinese character, outside code spans, fields and links."""
    prose = KEPT_ASCII.sub("x", FIELD.sub("x", text))
    return [match.group(0) for match in ASCII_PUNCTUATION_IN_CHINESE.finditer(prose)]


def untranslated_terms_in(text):
    """The glossary terms the English text uses in its prose (not in a field, a code span or a dotted name such as
    self.heads) whose one Chinese translation the Chinese text lacks."""
    prose = CODE_NAMES.sub(" ", FIELD.sub(" ", text["en"]))
    return [f"{term.en!r} -> {term.zh!r}" for term in GLOSSARY if term.used_in(prose) and term.zh not in text["zh"]]


def test_no_chinese_text_uses_a_variant_the_glossary_avoids(repo_root):
    found = [f"{where}: {variant!r} (say {term.zh!r} for {term.en!r})"
             for where, text in chinese_texts(repo_root) for variant, term in avoided_in(text)]
    assert not found, "\n".join(found)


def test_every_glossary_term_of_an_english_text_has_its_one_translation_in_the_chinese(repo_root):
    found = [f"{where}: {missing}" for where, text in bilingual_texts(repo_root)
             for missing in untranslated_terms_in(text)]
    assert not found, "\n".join(found)


def test_no_stray_space_between_chinese_words(repo_root):
    found = [f"{where}: {space!r}" for where, text in chinese_texts(repo_root) for space in stray_spaces_in(text)]
    assert not found, "\n".join(found)


def test_chinese_sentences_use_full_width_punctuation(repo_root):
    found = [f"{where}: {mark!r}" for where, text in chinese_texts(repo_root) for mark in ascii_punctuation_in(text)]
    assert not found, "\n".join(found)


def test_the_preview_is_worded_one_way():
    """The preview's title (check(...)'s list) and the "What is graded" cells say the same words in each language."""
    hidden = next(exercise for exercise in EXERCISES if any(c.hidden for c in catalog.checks_of(exercise.id)))
    graded = source_notebooks.requirements_text(hidden)
    for lang, marker in (("en", "preview: "), ("zh", "预览：")):
        template = catalog.PREVIEW_TITLE[lang]
        words = template[template.index(marker) + len(marker):].rstrip(")）")
        assert words in graded, (lang, words)


def test_each_style_rule_can_fail(repo_root):
    """Each scan finds what it is for, and the glossary is one translation per term."""
    assert len({term.en for term in GLOSSARY}) == len(GLOSSARY)
    for term in GLOSSARY:
        assert term.zh not in term.avoid, term
    texts = list(chinese_texts(repo_root))
    assert len(texts) > 300 and any("注意力权重" in text for _where, text in texts)
    assert variants_in("请把权重填充到缓冲区") and variants_in("每个查询的权重")
    # dim / axis is 维度 (issue 41): 轴 and a bare 维 drift, 维 after a number is a rank or a count
    for drifting in ("query 所在的轴", "沿最后一维求和", "带 batch 维的张量", "第 {axis} 维上", "第 2 维", "头维"):
        assert variants_in(drifting), drifting
    assert not variants_in("一个 {rank} 维张量的第 {axis} 个维度，3 维向量、二维的上下文向量、成百上千维、"
                           "batch 维度、维持")
    assert variants_in("每一列被某一行的和去除") and variants_in("填入一个很小但有限的数")
    assert untranslated_terms_in({"en": "along the wrong axis", "zh": "沿错误的方向"})
    assert untranslated_terms_in({"en": "each row divided by its sum", "zh": "每一行被它的和去除"})
    assert untranslated_terms_in({"en": "a very negative but finite number", "zh": "一个很小的数"})
    assert not untranslated_terms_in({"en": "divided by the sum along the last dimension",
                                      "zh": "沿最后一个维度除以总和"})
    assert stray_spaces_in("因果掩码 的检查") and stray_spaces_in("{title} 的检查") and stray_spaces_in("的 {title}")
    assert not stray_spaces_in("{title}的检查：token {query} 看到，softmax 之前")
    assert ascii_punctuation_in("[重现出的错误: 掩码; 提示: 对角线]") == ["[重", "误:", "码;", "示:", "线]"]
    assert ascii_punctuation_in("形状 (见上) 之后") and ascii_punctuation_in("这样对吗?")
    assert not ascii_punctuation_in("请看 `x[:, 0]`（第 {index} 个）：check(..., hint=True) 显示 (b, 6, 4) 和 [1., 2.]")
    assert untranslated_terms_in({"en": "the mask hides token 3", "zh": "token 3 被遮住了"})
    assert not untranslated_terms_in({"en": "the mask hides token 3", "zh": "掩码遮住了 token 3"})
    assert not untranslated_terms_in({"en": "self.heads[{head}] on {device}", "zh": "self.heads[{head}] 在 {device}"})
