"""The course's Chinese glossary: one translation per term, and the variants every zh text avoids.

Terms PyTorch names in code (key, query, value, buffer, padding, batch, dropout, token) stay in English, as the
students read them in the code beside the text; the rest get one Chinese word. tests/test_glossary.py checks every
Chinese text a student reads (titles, messages, misconception names and hints, the notebooks' Markdown) against it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    avoid: tuple[str, ...] = ()  # drifting variants: never in a zh text
    note: str = ""


GLOSSARY = (
    Term("attention weights", "注意力权重"),
    Term("attention scores", "注意力分数"),
    Term("context vector", "上下文向量"),
    Term("query / key / value", "query / key / value（查询 / key / value）", avoid=("键", "值向量"),
         note="'查询' is used for a query token; keys and values keep their English names"),
    Term("mask", "掩码", avoid=("屏蔽",)),
    Term("causal", "因果"),
    Term("padding", "padding", avoid=("填充",),
         note="padding keeps its English name: 填充 was read as both padding and fill"),
    Term("fill (masked_fill)", "填入", avoid=("填充",)),
    Term("buffer", "buffer", avoid=("缓冲区",), note="register_buffer's word, as in the code"),
    Term("stub", "占位代码", avoid=("代码桩",)),
    Term("shape", "形状"),
    Term("head", "头"),
    Term("batch", "batch", avoid=("批次",)),
)

AVOIDED = {variant: term for term in GLOSSARY for variant in term.avoid}
