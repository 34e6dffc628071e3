"""The class report's two plots as SVG text: a histogram of scores and a bar per misconception.

Drawn by hand like the checks' pictures (autograder.checking.pictures): no plotting library to import, which took
three quarters of a second of every `attnkit grade` at the end of the run, when nothing else is left to do.
Every text goes through pictures.text, which escapes it.
"""

import bisect
from collections.abc import Callable, Sequence

from autograder.checking.pictures import FONT_PX, TITLE_PX, svg_document, text, text_width, tick_step, ticks

__all__ = ["INTEGER_BINS_UP_TO", "LABEL_PX", "bars_svg", "histogram_bins", "histogram_svg", "wrap_label"]

INTEGER_BINS_UP_TO = 40  # up to this many points, one histogram bar per whole point (else 20 bars)
HISTOGRAM_SIZE = (468, 252)  # pixels: the PNG's 5.2 x 2.8 inches at 90 dpi, which the page was laid out for
BAR_COLOUR, MISCONCEPTION_COLOUR, AXIS_COLOUR, GRID_COLOUR = "#4c72b0", "#c44e52", "#333333", "#dddddd"
MAX_VALUE_TICKS = 6
LABEL_PX = 360  # the widest a bar's label column gets: a longer name goes on more lines
LABEL_LINE_PX = 13  # between two lines of a bar's label
BAR_ROW_PX, BAR_PX = 26, 18  # a bar's row at least, and the bar's thickness
NAME_COLOURS = (AXIS_COLOUR, "#666666")  # a bar's first name, and its translation
CLOSING_PUNCTUATION = "，。、；：！？）》」』,.;:!?)"  # never starts a line: stays with what it follows


def histogram_bins(max_score: float) -> list[float]:
    """The bins' edges: one bar per whole point up to INTEGER_BINS_UP_TO points (centred on it), else 20 bars."""
    if max_score <= INTEGER_BINS_UP_TO and float(max_score).is_integer():
        return [edge - 0.5 for edge in range(int(max_score) + 2)]
    return [max_score * step / 20 for step in range(21)]


def histogram_svg(scores: Sequence[float], max_score: float, title: str, x_label: str) -> str:
    """How many of `scores` fall in each bin of histogram_bins(max_score) (the last bin holds its right edge)."""
    edges = histogram_bins(max_score)
    counts = [0] * (len(edges) - 1)
    for score in scores:
        if edges[0] <= score <= edges[-1]:
            counts[min(bisect.bisect_right(edges, score) - 1, len(counts) - 1)] += 1
    width, height = HISTOGRAM_SIZE
    left, right, top, bottom = 48, width - 12, 24, height - 40
    tallest = _nice_top(max(counts, default=0))
    bar_width = (right - left) / len(counts)
    parts = [text((left + right) / 2, 16, title, size=TITLE_PX)]
    parts += _value_grid(tallest, lambda value: bottom - (bottom - top) * value / tallest, left, right)
    for index, count in enumerate(counts):
        if count:
            bar_top = bottom - (bottom - top) * count / tallest
            parts.append(f'<rect x="{left + index * bar_width:.1f}" y="{bar_top:.1f}" width="{bar_width:.1f}" '
                         f'height="{bottom - bar_top:.1f}" fill="{BAR_COLOUR}" stroke="#ffffff" stroke-width="1"/>')
    for value in _score_ticks(edges):
        x = left + (right - left) * (value - edges[0]) / (edges[-1] - edges[0])
        parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="{AXIS_COLOUR}"/>')
        parts.append(text(x, bottom + 16, f"{value:g}"))
    parts.append(_axes(left, top, right, bottom))
    parts.append(text((left + right) / 2, height - 8, x_label))
    parts.append(text(14, (top + bottom) / 2, "students", rotate=(14, (top + bottom) / 2)))
    return svg_document(width, height, parts, title)


def bars_svg(labels: Sequence[Sequence[str]], values: Sequence[int], x_label: str, title: str) -> str:
    """A horizontal bar per label, the first on top, its value written at its end. A bar's label is one or more
    names (a misconception's English name, then its Chinese one, in grey), each shown whole: wrapped onto as many
    lines as it needs in a column of at most LABEL_PX pixels, the bar's row as tall as its lines."""
    wrapped = [[(line, NAME_COLOURS[min(index, 1)]) for index, name in enumerate(label)
                for line in wrap_label(name, LABEL_PX - 8)] for label in labels]
    label_room = min(LABEL_PX, max((text_width(line) for lines in wrapped for line, _ in lines), default=0) + 8)
    width = 720
    left, right, top = label_room, width - 40, 10
    rows = [max(BAR_ROW_PX, LABEL_LINE_PX * len(lines) + 8) for lines in wrapped]
    bottom = top + sum(rows)
    height = bottom + 44
    largest = _nice_top(max(values, default=0))
    parts = _value_grid(largest, lambda value: left + (right - left) * value / largest, top, bottom, vertical=True)
    y = top
    for lines, row, value in zip(wrapped, rows, values, strict=True):
        middle = y + row / 2
        end = left + (right - left) * value / largest
        parts.append(f'<rect x="{left}" y="{middle - BAR_PX / 2:g}" width="{end - left:.1f}" height="{BAR_PX}" '
                     f'fill="{MISCONCEPTION_COLOUR}"/>')
        parts.append(text(end + 4, middle + FONT_PX / 3, f"{value}", anchor="start"))
        first_baseline = middle - LABEL_LINE_PX * (len(lines) - 1) / 2 + FONT_PX / 3
        for index, (line, colour) in enumerate(lines):
            parts.append(f'<g fill="{colour}">' + text(left - 6, first_baseline + LABEL_LINE_PX * index, line,
                                                         anchor="end", size=FONT_PX - 1) + "</g>")
        y += row
    parts.append(_axes(left, top, right, bottom))
    parts.append(text((left + right) / 2, height - 8, x_label))
    return svg_document(width, height, parts, title)


def wrap_label(label: str, width_px: int) -> list[str]:
    """`label` on lines no wider than width_px (pictures.text_width): broken at spaces and between Chinese characters
    (a Chinese punctuation mark stays with the character before it), a word wider than a line between its letters;
    every character kept, only the spaces where a line breaks left out."""
    lines: list[str] = []
    line = ""
    for unit, space_before in _units(label):
        joined = f"{line}{' ' if space_before and line else ''}{unit}"
        if not line or text_width(joined) <= width_px:
            line = joined
            continue
        lines.append(line)
        line = unit
    if line:
        lines.append(line)
    return [piece for line in lines for piece in _letters_to_fit(line, width_px)]


def _units(label: str) -> list[tuple[str, bool]]:
    """The label's unbreakable pieces, each with whether a space came before it: words, single Chinese characters
    (with the punctuation that follows them)."""
    units: list[tuple[str, bool]] = []
    space_before = False
    for character in label:
        if character.isspace():
            space_before = True
            continue
        wide, previous_wide = _is_wide(character), bool(units) and _is_wide(units[-1][0][-1])
        if units and not space_before and (character in CLOSING_PUNCTUATION or (not wide and not previous_wide)):
            units[-1] = (units[-1][0] + character, units[-1][1])
        else:
            units.append((character, space_before))
        space_before = False
    return units


def _letters_to_fit(line: str, width_px: int) -> list[str]:
    """A line that is one word wider than width_px, cut between its letters; any other line as it is."""
    pieces = [""]
    for character in line:
        if pieces[-1] and text_width(pieces[-1] + character) > width_px:
            pieces.append("")
        pieces[-1] += character
    return pieces


def _is_wide(character: str) -> bool:
    return ord(character) > 0x2E80  # as pictures.text_width counts it: a full em


def _nice_top(largest: int) -> int:
    """The axis's top: the largest count rounded up to a whole number of ticks (at least 1)."""
    step = _value_step(max(1, largest))
    return max(step, -(-max(1, largest) // step) * step)


def _value_step(largest: int) -> int:
    """The step between labelled counts on an axis from 0 to `largest` (its largest+1 whole values)."""
    return tick_step(largest + 1, MAX_VALUE_TICKS)


def _value_grid(top_value: int, place: Callable[[int], float], start: float, end: float, *,
                vertical: bool = False) -> list[str]:
    """Whole-number ticks and light grid lines from 0 to `top_value`; `place(value)` is the pixel on the axis."""
    parts = []
    for value in range(0, top_value + 1, _value_step(top_value)):
        at = place(value)
        if vertical:
            parts.append(f'<line x1="{at:.1f}" y1="{start}" x2="{at:.1f}" y2="{end}" stroke="{GRID_COLOUR}"/>')
            parts.append(text(at, end + 16, f"{value}"))
        else:
            parts.append(f'<line x1="{start}" y1="{at:.1f}" x2="{end}" y2="{at:.1f}" stroke="{GRID_COLOUR}"/>')
            parts.append(text(start - 6, at + FONT_PX / 3, f"{value}", anchor="end"))
    return parts


def _score_ticks(edges: Sequence[float]) -> list[float]:
    """The scores labelled under a histogram: whole points (thinned as a heatmap's axis is) or five even steps."""
    if edges[0] == -0.5:  # one bin per whole point
        return [float(value) for value in ticks(int(edges[-1] - 0.5) + 1)]
    return [edges[0] + (edges[-1] - edges[0]) * quarter / 4 for quarter in range(5)]


def _axes(left: float, top: float, right: float, bottom: float) -> str:
    return (f'<path d="M{left} {top} V{bottom} H{right}" fill="none" stroke="{AXIS_COLOUR}" '
            f'stroke-width="1"/>')
