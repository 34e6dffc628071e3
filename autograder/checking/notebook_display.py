"""check(...)'s output in a notebook: the ✔/✘ table as HTML that wraps at words, with a plain-text form wrapped at
words too, and the pictures with words for where they cannot show.

JupyterLab shows a cell's printed text with `word-break: break-all`, so a long line breaks in the middle of a word;
the HTML form keeps each line of the table as one block that wraps at spaces, its continuation lines indented under
the text after the mark. A front end that shows no HTML (a terminal, a plain-text export) shows the plain form, its
lines wrapped at words to WIDTH columns. The table is the student's text in part (exception messages, names): each
line is cleaned (autograder.safe_text) and escaped before it becomes HTML. The student kit ships this module.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape

from autograder.checking.text_width import columns
from autograder.safe_text import clean

__all__ = ["WIDTH", "html_text", "in_kernel", "plain_text", "show_table"]

WIDTH = 100  # columns of the plain-text form
MAX_LINE = 100_000  # characters of one line kept (clean's default would cut a long table line at 4000)
# A run of spaces, a run of other characters that are not wide, or one wide (CJK, full-width) character: the units
# a line breaks between. Chinese text breaks between any two characters, as it does in print.
PIECES = re.compile(r"\s+|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60"
                    r"\uffe0-\uffe6]+|.")


@dataclass(frozen=True)
class TableLine:
    """One line of the table: its indentation (spaces), and how far its continuation lines are indented."""

    indent: int
    hang: int  # the continuation lines' indentation
    text: str  # without the indentation

    @classmethod
    def of(cls, line: str) -> "TableLine":
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        return cls(indent, indent + 2, text)


def _wrapped_line(line: TableLine, width: int = WIDTH) -> Iterator[str]:
    """The line cut at spaces (or between two Chinese characters) so that each part fits in `width` columns where
    it can; a word wider than that stays whole, never broken in the middle."""
    current, used, space = " " * line.indent, line.indent, ""
    started = False
    for piece in PIECES.findall(line.text):
        if piece.isspace():
            space = piece if started else ""
            continue
        if started and used + columns(space) + columns(piece) > width:
            yield current.rstrip()
            current, used, space = " " * line.hang, line.hang, ""
        current += space + piece
        used += columns(space) + columns(piece)
        space, started = "", True
    yield current.rstrip()


def plain_text(table: str, width: int = WIDTH) -> str:
    """The table's plain form: each line cleaned and wrapped at words to `width` columns."""
    return "\n".join(part for line in table.split("\n")
                     for part in _wrapped_line(TableLine.of(clean(line, MAX_LINE)), width))


def html_text(table: str) -> str:
    """The table's HTML form: a block per line that keeps its spaces (the values' columns stay aligned), wraps at
    words, and indents its continuation lines; every line cleaned and escaped."""
    blocks = []
    for raw in table.split("\n"):
        line = TableLine.of(raw)
        style = (f"padding-left:{line.hang}ch;text-indent:{line.indent - line.hang}ch;white-space:pre-wrap;"
                 "word-break:normal;overflow-wrap:anywhere;margin:0")
        blocks.append(f'<div style="{style}">{escape(clean(line.text, MAX_LINE)) or "&nbsp;"}</div>')
    return ('<div class="attnkit-check" style="font-family:var(--jp-code-font-family,monospace);'
            'font-size:var(--jp-code-font-size,13px);line-height:1.4">' + "".join(blocks) + "</div>")


def show_table(table: str) -> None:
    """Show check(...)'s table: in a running IPython kernel as HTML with its plain form beside it (the front end
    picks); elsewhere printed as it is, for a reader or a program that takes the lines as they come."""
    if not in_kernel():
        print(table)
        return
    from IPython.display import display

    display({"text/html": html_text(table), "text/plain": plain_text(table)}, raw=True)


def in_kernel() -> bool:
    """Whether this process runs a Jupyter kernel, whose front end shows displays. A bare IPython shell (a terminal
    IPython, or the grading shell a test made in this process) has no `kernel`: there the table prints."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None
