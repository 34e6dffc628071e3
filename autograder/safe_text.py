"""Text that came from student code, made safe to show anywhere: `clean(text)` and `clean_data(value)`.

Exception messages, cell notes and file names are the student's: they may hold lone surrogates (bytes
decoded with surrogateescape), NUL, ESC sequences that drive a terminal, bidi overrides that reorder what
a reader sees, or a megabyte on one line. `clean` makes such a string safe once, where it enters the
grader: invalid code points become U+FFFD, control characters (C0, DEL, C1), bidi controls and line
separators become visible escapes (`\\x1b`, `\\u202e`), and the length is capped. What comes out encodes as
UTF-8 and holds no character that acts on a terminal or a page; each output still escapes it for its own
syntax (HTML, CSV, JSON).
"""

import re
import unicodedata
from typing import Any

__all__ = ["BIDI_CONTROLS", "clean", "clean_data", "one_line"]

MAX_CHARS = 4000
REPLACEMENT = "\ufffd"
KEPT_CONTROLS = frozenset("\n\t")
# Explicit directional formatting characters (Unicode bidi algorithm): they reorder the text around them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Line and paragraph separators: line breaks to many viewers (and to str.splitlines) that no "\n" check sees.
LINE_SEPARATORS = frozenset("\u2028\u2029")
MAX_DEPTH = 32
# Every character _visible changes: the C0 and C1 controls and DEL (Unicode's "Cc", a fixed range, less newline and
# tab), surrogates and the two noncharacters, and the two sets above. Only these are looked at one by one.
_CHANGED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                      + "".join(sorted(BIDI_CONTROLS | LINE_SEPARATORS)) + "]")


def clean(text: object, limit: int = MAX_CHARS) -> str:
    """`text` (any object: non-strings are shown by str) as safe, UTF-8-encodable text of at most `limit` chars."""
    if not isinstance(text, str):
        text = _str_of(text)
    # Characters past the limit are never shown: only the first limit + 1 are looked at (one to know it was cut).
    cleaned = _CHANGED.sub(lambda found: _visible(found.group()), text[: limit + 1])
    if len(cleaned) > limit:
        cleaned = cleaned[: max(limit - 1, 0)] + "…"
    return cleaned


def clean_data(value: object, depth: int = 0) -> Any:
    """Every string in a structure of dicts, lists and tuples cleaned (keys too); other values as they are."""
    if depth > MAX_DEPTH:
        return "<nested too deeply>"
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean_data(key, depth + 1): clean_data(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_data(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return tuple(clean_data(item, depth + 1) for item in value)
    return value


def one_line(text: object, limit: int = MAX_CHARS) -> str:
    """`clean(text)` with every run of whitespace (newlines included) made one space: for notes and table cells."""
    return clean(" ".join(str(text).split()) if isinstance(text, str) else text, limit)


def _visible(char: str) -> str:
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):  # lone surrogate, noncharacter
        return REPLACEMENT
    if char in KEPT_CONTROLS:
        return char
    if char in BIDI_CONTROLS or char in LINE_SEPARATORS or unicodedata.category(char) == "Cc":
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def _str_of(value: object) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a student's __str__ may raise anything
        return f"<{type(value).__name__} object>"
