"""The class report's two plots as SVG text: a histogram of scores and a bar per misconception.

Drawn by hand like the checks' pictures (autograder.checking.pictures): no plotting library to import, which took
three quarters of a second of every `attnkit grade` at the end of the run, when nothing else is left to do.
Every text goes through pictures.text, which escapes it.
"""

import bisect
from collections.abc import Callable, Sequence

from autograder.checking.pictures import FONT_PX, TITLE_PX, svg_document, text, text_width, tick_step, ticks

__all__ = ["INTEGER_BINS_UP_TO", "bars_svg", "histogram_bins", "histogram_svg"]

INTEGER_BINS_UP_TO = 40  # up to this many points, one histogram bar per whole point (else 20 bars)
HISTOGRAM_SIZE = (468, 252)  # pixels: the PNG's 5.2 x 2.8 inches at 90 dpi, which the page was laid out for
BAR_COLOUR, MISCONCEPTION_COLOUR, AXIS_COLOUR, GRID_COLOUR = "#4c72b0", "#c44e52", "#333333", "#dddddd"
MAX_VALUE_TICKS = 6


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


def bars_svg(labels: Sequence[str], values: Sequence[int], x_label: str, title: str) -> str:
    """A horizontal bar per label, the first on top, its value written at its end."""
    label_room = min(360, max((text_width(label) for label in labels), default=0) + 8)
    width = 720
    left, right, top = label_room, width - 40, 10
    row = 26
    bottom = top + row * len(labels)
    height = bottom + 44
    largest = _nice_top(max(values, default=0))
    parts = _value_grid(largest, lambda value: left + (right - left) * value / largest, top, bottom, vertical=True)
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + row * index + 4
        end = left + (right - left) * value / largest
        parts.append(f'<rect x="{left}" y="{y}" width="{end - left:.1f}" height="{row - 8}" '
                     f'fill="{MISCONCEPTION_COLOUR}"/>')
        parts.append(text(end + 4, y + row / 2, f"{value}", anchor="start"))
        parts.append(text(left - 6, y + row / 2, label, anchor="end", size=FONT_PX - 1))
    parts.append(_axes(left, top, right, bottom))
    parts.append(text((left + right) / 2, height - 8, x_label))
    return svg_document(width, height, parts, title)


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
