"""Fingerprints of code that survive renaming and reordering: `fingerprints(source, vocabulary)`.

The classic winnowing scheme (Schleimer, Wilkerson and Aiken, SIGMOD 2003), on Python tokens:

1. Python's own tokenizer splits the code; comments and blank lines go. Names the student chose become `V`,
   numbers `N`, strings `S`; attribute names after a dot (`.transpose`, `.masked_fill`) and the names in the
   course's `vocabulary` (builtins, `torch`, `nn`, `self`, the functions and classes the notebooks define) stay
   what they are, since they say what the code does. Renaming every variable changes nothing.
2. Every run of K consecutive tokens (a k-gram) is hashed (blake2b: the same value in every process and run).
3. Of each window of W consecutive k-gram hashes the smallest is kept (the rightmost on a tie), so any
   passage of at least K + W - 1 tokens that two files share yields at least one common fingerprint.

Statements moved around keep their own k-grams; only the few that span a moved boundary change.
Each fingerprint remembers the characters it covers in the cell, for highlighting.

A k-gram that lies entirely within generic statements is left out before winnowing: statement shapes that
students write the same way without copying anything, once names are normalised (GENERIC_STATEMENTS: unpacking a
shape, one chain of reshape-like calls, a def or class header, a bare return). Two students whose own code is
`b, n, d = x.shape` and one `reshape` share those tokens by the course's idiom, not by copying.
"""

import builtins
import hashlib
import io
import keyword
import re
import tokenize
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Fingerprint", "K", "WINDOW", "default_vocabulary", "fingerprints", "kgram_fingerprints", "normalised_tokens",
]

K = 6  # tokens per k-gram
WINDOW = 4  # k-grams per winnowing window
ALWAYS_KEPT = frozenset({"self", "super", "torch", "nn", "F", "math", "np", "numpy", "functional"})
# Normalised statements (tokens joined by spaces, without the closing ";") that carry no evidence of copying.
GENERIC_STATEMENTS = re.compile("|".join(f"(?:{shape})" for shape in (
    r"(?:V , )+V(?: ,)? = V \. (?:shape|size \( \))",  # b, n, d = x.shape
    # x.view(b, n, h, d).transpose(1, 2), possibly returned or assigned: arguments without calls of their own
    r"(?:return |(?:V , )*V = )?V(?: \. (?:reshape|view|transpose|permute|contiguous|flatten|unflatten) \( [^()]*\))+",
    r"(?:def|class) .*",  # headers: the release's stubs give them
    r"return V",
)))
DROPPED = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
                     tokenize.ENCODING, tokenize.TYPE_COMMENT})


@dataclass(frozen=True)
class Token:
    text: str  # normalised
    start: int  # character offsets in the source
    end: int


@dataclass(frozen=True)
class Fingerprint:
    hash: int
    start: int  # the characters of the source its k-gram covers
    end: int


def default_vocabulary(extra_names: Iterable[str] = ()) -> frozenset[str]:
    """Names kept as they are: Python's keywords and builtins, the usual modules, and `extra_names`."""
    return frozenset(keyword.kwlist) | frozenset(dir(builtins)) | ALWAYS_KEPT | frozenset(extra_names)


def normalised_tokens(source: str, vocabulary: Collection[str]) -> list[Token]:
    """The tokens of `source`, normalised (see the module's docstring). Code that does not tokenize to the end
    (a magic line, an unterminated string) keeps the tokens read so far."""
    line_starts = _line_starts(source)
    tokens: list[Token] = []
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in DROPPED:
                continue
            start = line_starts[token.start[0] - 1] + token.start[1]
            end = line_starts[token.end[0] - 1] + token.end[1]
            tokens.append(Token(_normalised(token, previous, vocabulary), start, end))
            previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError, IndexError):
        pass
    return tokens


def fingerprints(source: str, vocabulary: Collection[str], k: int = K, window: int = WINDOW) -> list[Fingerprint]:
    """The winnowed fingerprints of `source`, in order (a fingerprint may repeat at different places), without the
    k-grams that lie entirely within generic statements."""
    tokens = normalised_tokens(source, vocabulary)
    generic = _generic_tokens(tokens)
    kgrams = kgram_fingerprints(tokens, k)
    if len(tokens) < k:  # one short k-gram of all the tokens
        return [] if all(generic) else _winnow(kgrams, window)
    return _winnow([kgram for start, kgram in enumerate(kgrams) if not all(generic[start:start + k])], window)


def _generic_tokens(tokens: Sequence[Token]) -> list[bool]:
    """For each token, whether its statement (up to and including its ";") is one of GENERIC_STATEMENTS."""
    flags: list[bool] = []
    statement: list[str] = []
    for index, token in enumerate(tokens):
        statement.append(token.text)
        if token.text == ";" or index == len(tokens) - 1:
            shape = " ".join(text for text in statement if text != ";")
            flags += [GENERIC_STATEMENTS.fullmatch(shape) is not None] * len(statement)
            statement = []
    return flags


def kgram_fingerprints(tokens: Sequence[Token], k: int = K) -> list[Fingerprint]:
    """One fingerprint per k-gram (every one: what the base code is compared with)."""
    if len(tokens) < k:
        return [Fingerprint(_hash(" ".join(t.text for t in tokens)), tokens[0].start, tokens[-1].end)] \
            if len(tokens) >= max(2, k // 2) else []
    return [Fingerprint(_hash("\x1f".join(t.text for t in tokens[i:i + k])), tokens[i].start, tokens[i + k - 1].end)
            for i in range(len(tokens) - k + 1)]


def _winnow(kgrams: Sequence[Fingerprint], window: int = WINDOW) -> list[Fingerprint]:
    """The smallest hash of each window of `window` k-grams (rightmost on a tie), each position taken once."""
    if len(kgrams) <= window:
        return [min(reversed(kgrams), key=lambda fingerprint: fingerprint.hash)] if kgrams else []
    chosen: list[Fingerprint] = []
    last = -1
    for first in range(len(kgrams) - window + 1):
        position = min(range(first + window - 1, first - 1, -1), key=lambda i: kgrams[i].hash)
        if position != last:
            chosen.append(kgrams[position])
            last = position
    return chosen


def _normalised(token: tokenize.TokenInfo, previous: str, vocabulary: Collection[str]) -> str:
    if token.type == tokenize.NAME:
        if previous == "." or token.string in vocabulary:
            return token.string
        return "V"
    if token.type == tokenize.NUMBER:
        return "N"
    if token.type == tokenize.STRING or token.type in _F_STRING_TYPES:
        return "S"
    if token.type == tokenize.NEWLINE:
        return ";"
    return token.string


_F_STRING_TYPES = frozenset(getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
                            if hasattr(tokenize, name))


def _line_starts(source: str) -> list[int]:
    starts, offset = [0], 0
    for line in source.splitlines(keepends=True):
        offset += len(line)
        starts.append(offset)
    starts.append(offset)  # the ENDMARKER's line
    return starts


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest(), "big")
