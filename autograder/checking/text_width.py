"""How wide text is in a fixed-width font (a terminal, a notebook's output): what lines up and wraps by it."""

import unicodedata

__all__ = ["columns"]


def columns(text: str) -> int:
    """Columns `text` takes: a wide (CJK, full-width) character takes two, any other one."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)
