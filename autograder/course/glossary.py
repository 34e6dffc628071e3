"""The course's Chinese glossary: one translation per term, and the variants every zh text avoids.

One rule for the names PyTorch uses in code (query, key, value, buffer, padding, batch, dropout, token, eval):
they stay in English, as the students read them in the code beside the text; "查询" for a query is avoided like
"键" for a key. Every other term gets one Chinese word. tests/test_glossary.py checks every Chinese text a student
reads (titles, messages, the hint ladder's rungs, the notebooks' Markdown) against it: no avoided variant, and where
an English text uses a term, its Chinese text uses the term's one translation.

A variant is a plain string, or a regular expression where the right word contains the wrong one (维度 contains 维):
avoided_in(text) finds both.
"""

import re
from dataclasses import dataclass

__all__ = ["GLOSSARY", "avoided_in"]


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    avoid: tuple[str, ...] = ()  # drifting variants: never in a zh text
    # A drifting variant that is part of right words too, as a regex: 维 alone is avoided, 维度 and 三维 are not.
    avoid_pattern: str = ""
    note: str = ""
    # How the term shows in an English text (a regex, case-insensitive); "" for terms no English text pairs with one
    # Chinese word (the names kept in English, a word whose Chinese depends on the sentence).
    en_pattern: str = ""

    def used_in(self, english: str) -> bool:
        return bool(self.en_pattern) and re.search(rf"\b(?:{self.en_pattern})\b", english, re.I) is not None


GLOSSARY = (
    Term("attention weights", "注意力权重", en_pattern="attention weights?"),
    Term("attention scores", "注意力分数", en_pattern="attention scores?"),
    Term("context vector", "上下文向量", en_pattern="context vectors?"),
    Term("query / key / value", "query / key / value", avoid=("查询", "键", "值向量"),
         note="PyTorch's names, kept in English like buffer and padding: one rule for all three"),
    Term("mask", "掩码", avoid=("屏蔽",), en_pattern="masks?"),
    Term("causal", "因果", en_pattern="causal"),
    Term("padding", "padding", avoid=("填充",), en_pattern="padding",
         note="padding keeps its English name: 填充 was read as both padding and fill"),
    Term("fill (masked_fill)", "填入", avoid=("填充",)),
    Term("buffer", "buffer", avoid=("缓冲区",), note="register_buffer's word, as in the code", en_pattern="buffers?"),
    Term("stub", "占位代码", avoid=("代码桩",), en_pattern="stubs?"),
    Term("shape", "形状", en_pattern="shapes?"),
    Term("head", "头", en_pattern="heads?"),
    Term("batch", "batch", avoid=("批次",), en_pattern="batch(?:es)?"),
    Term("eval mode", "eval 模式", avoid=("评估模式",), en_pattern="eval mode"),
    Term("training mode", "训练模式", en_pattern="training mode"),
    Term("gradient", "梯度", en_pattern="gradients?"),
    Term("optimizer", "优化器", en_pattern="optimizers?"),
    Term("device", "设备", en_pattern="devices?"),
    Term("dimension / axis (dim=)", "维度", avoid=("轴",), en_pattern="dimensions?|ax[ie]s",
         avoid_pattern=(r"第 ?[\w{}]+ ?维(?!度)|最后一维(?!度)"
                        r"|(?<![\d一二三四五六七八九十百千万两多高低几}])(?<![\d}] )维(?![度持护])"),
         note="one word for a tensor's dim, whether English says dimension or axis: 轴 and a bare 维 (batch 维, "
              "最后一维, 第 2 维) drifted beside it; 维 after a number is the tensor's rank (3 维张量, "
              "二维的上下文向量) or a count (成百上千维)"),
    Term("divide (by)", "除以", avoid=("去除",), en_pattern="divided? by",
         note="去除 reads as remove; 去掉 says remove"),
    # The notes' steps (autograder.checking.departure names them: `step.<id>` in autograder/course/messages.py).
    Term("scaled attention scores", "缩放后的注意力分数", en_pattern="scaled attention scores?"),
    Term("masked attention scores", "填入掩码后的注意力分数", en_pattern="masked attention scores?"),
    Term("exponentials (a step of softmax)", "指数", en_pattern="exponentials"),
    Term("output projection (out_proj)", "输出投影", en_pattern="output projection"),
    Term("split into heads", "拆分成多个头", en_pattern="split into heads"),
    Term("viewed as (the same numbers in their order, another shape)", "排列", en_pattern="viewed as"),
    Term("renormalised (rows made to sum to 1 again)", "重新归一化", en_pattern="renormali[sz]ed"),
    Term("lower triangle", "下三角", en_pattern="lower triangle"),
    Term("side by side (heads along the features)", "并排", en_pattern="side by side"),
    Term("input projection (nn.MultiheadAttention's in_proj)", "输入投影", en_pattern="input projection"),
    Term("a large negative finite number (a fill in place of -inf)", "绝对值很大的有限负数",
         en_pattern="very negative but finite (?:number|value)", avoid=("很小但有限", "很小的有限"),
         note="很小 reads as near zero, the opposite of what is meant"),
)

AVOIDED = {variant: term for term in GLOSSARY for variant in term.avoid}


def avoided_in(text: str) -> list[tuple[str, Term]]:
    """(what was found, the term it drifts from) for every avoided variant in a Chinese text."""
    found = [(variant, term) for variant, term in AVOIDED.items() if variant in text]
    return found + [(match.group(0), term) for term in GLOSSARY if term.avoid_pattern
                    for match in re.finditer(term.avoid_pattern, text)]
