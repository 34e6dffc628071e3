"""The pictures a failed public check shows: a heatmap of the expected and the student's weights or mask, and a block
diagram of where the heads' features landed after a split or a merge.

Both are SVG written as text: no plotting library is imported on the check's path (matplotlib's import alone takes
about two seconds, longer than every check of an exercise), and the browser draws the labels with its own fonts, so
the Chinese labels show as the English ones do. Each picture is built from its arguments alone (no global state).
The student kit ships this module as it is.
"""

import base64
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import torch

from autograder.checking.check_types import CheckResult, HeadLayout, TokenHead
from autograder.checking.compare import unravel
from autograder.checking.notebook_display import in_kernel
from autograder.i18n import Messages, pick, render

__all__ = [
    "Heatmap", "MAX_TICKS", "Picture", "describe_heatmap", "draw_heatmap", "head_layout_alt", "head_layout_svg",
    "heatmap_alt", "heatmap_svg", "merge_layout", "merged_block_layout", "pictures_of", "show_svg", "split_layout",
    "FONT_PX", "TITLE_PX", "svg_data_url", "svg_document", "text", "text_width", "tick_step", "ticks", "value_sources",
]

FONT_PX = 11
TITLE_PX = 13
# viridis at nine evenly spaced points: dark for small values, light for large ones, readable in grey print too
VIRIDIS = ((68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141), (39, 173, 129),
           (92, 200, 99), (170, 220, 50), (253, 231, 37))
MASK_COLOURS = {True: "#3b3b3b", False: "#f2f2f2"}  # hidden (True) dark, visible (False) light
NOT_FINITE = "#e0301e"  # -inf, inf or nan: no place on a colour scale, so a colour of its own
# one colour per head (Okabe-Ito: told apart by colour-blind readers too), and the cell for a value from nowhere
HEAD_COLOURS = ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#999999")
UNKNOWN = "#ffffff"
MISPLACED = "#d00000"
MAX_TICKS = 12  # tick labels per axis before they are thinned out
SEPARATOR = {"en": "; ", "zh": "；"}  # between the parts of a picture's words
TITLE_COLON = {"en": ": ", "zh": "："}  # between a check's title and its picture's words


# ---------------------------------------------------------------------------------------------
# Heatmap: expected and the student's matrix side by side, on one colour scale


@dataclass(frozen=True)
class Scale:
    """One colour scale for both panels: finite values from `low` (darkest) to `high` (lightest)."""

    low: float
    high: float

    def colour(self, value: float) -> str:
        if not math.isfinite(value):
            return NOT_FINITE
        position = min(max((value - self.low) / (self.high - self.low), 0.0), 1.0) * (len(VIRIDIS) - 1)
        below = min(int(position), len(VIRIDIS) - 2)
        weight = position - below
        red, green, blue = (round(a + (b - a) * weight) for a, b in zip(VIRIDIS[below], VIRIDIS[below + 1],
                                                                          strict=True))
        return f"#{red:02x}{green:02x}{blue:02x}"


def _shared_scale(*matrices: torch.Tensor) -> Scale:
    """From 0 (or below, for negative values) to 1 (or above): attention weights keep their natural 0..1 scale,
    whatever the student's values."""
    finite = [matrix[torch.isfinite(matrix)] for matrix in matrices]
    values = torch.cat([values.flatten() for values in finite]) if finite else torch.zeros(0)
    low = min(0.0, float(values.min())) if values.numel() else 0.0
    high = max(1.0, float(values.max())) if values.numel() else 1.0
    return Scale(low, high if high > low else low + 1.0)


def ticks(count: int) -> list[int]:
    """Indices to label on an axis of `count` cells: every one up to MAX_TICKS, else every 2nd, 5th, 10th, 20th..."""
    return list(range(0, count, tick_step(count, MAX_TICKS)))


def tick_step(count: int, most: int) -> int:
    """The first of 1, 2, 5, 10, 20, 50... with which labelling every step-th of `count` cells from the first labels
    at most `most` of them."""
    steps = (factor * 10**power for power in range(9) for factor in (1, 2, 5))
    return next(step for step in steps if -(-count // step) <= most)


@dataclass(frozen=True)
class Heatmap:
    """What a heatmap draws: the first matrix of each tensor (float64 on the CPU, a bool mask as 0 and 1), the
    tensors' whole shapes, and whether both are bool masks. A record keeps it (autograder.outputs.picture_documents)
    so that the feedback page draws it too."""

    expected: torch.Tensor
    got: torch.Tensor
    expected_shape: tuple[int, ...]
    got_shape: tuple[int, ...]
    as_mask: bool

    @classmethod
    def of(cls, expected: torch.Tensor, got: torch.Tensor) -> "Heatmap":
        return cls(_first_matrix(expected), _first_matrix(got), tuple(expected.shape), tuple(got.shape),
                   expected.dtype == torch.bool and got.dtype == torch.bool)

    def slice_index(self) -> str | None:
        """"0, :, :" when a tensor has more than two axes (the matrix shown is its first), else None."""
        if len(self.expected_shape) <= 2 and len(self.got_shape) <= 2:
            return None
        return ", ".join(["0"] * (len(self.expected_shape) - 2) + [":", ":"])


def heatmap_svg(expected: torch.Tensor, got: torch.Tensor, messages: Messages, lang: str) -> str:
    """SVG of the expected and the student's matrix side by side: see draw_heatmap."""
    return draw_heatmap(Heatmap.of(expected, got), messages, lang)


def heatmap_alt(expected: torch.Tensor, got: torch.Tensor, messages: Messages, lang: str) -> str:
    """The heatmap of `expected` and `got` in words: see describe_heatmap."""
    return describe_heatmap(Heatmap.of(expected, got), messages, lang)


def draw_heatmap(heatmap: Heatmap, messages: Messages, lang: str) -> str:
    """SVG of the expected and the student's matrix side by side ("expected", "yours"): queries as rows, keys as
    columns, one tick per token (thinned out past MAX_TICKS), one colour scale and one legend for both. A bool mask
    is drawn as hidden (True) and visible (False) when both are bool; other values as numbers (bool as 0 and 1).
    Tensors of more than two axes show their first matrix, and say so. Its title is describe_heatmap's words."""
    matrices = [heatmap.expected, heatmap.got]
    as_mask = heatmap.as_mask
    scale = _shared_scale(*matrices)
    cell = _cell_size(max(max(matrix.shape) for matrix in matrices), largest=40, smallest=4, room=200)
    left, top = 58, 40
    gap = left  # the second panel's row ticks and axis title need the room the first one's have
    widths = [matrix.shape[1] * cell for matrix in matrices]
    height = max(matrix.shape[0] for matrix in matrices) * cell
    legend_x = left + widths[0] + gap + widths[1] + 24
    parts: list[str] = []
    x = left
    for matrix, key in zip(matrices, ("label.heatmap_expected", "label.heatmap_got"), strict=True):
        parts.append(panel(matrix, x, top, cell, scale, as_mask, render(messages, key, lang), messages, lang))
        x += matrix.shape[1] * cell + gap
    legend, legend_width = (_mask_legend if as_mask else _colour_legend)(legend_x, top, height, scale, matrices,
                                                                       messages, lang)
    parts.append(legend)
    bottom = top + height + 40
    if (index := heatmap.slice_index()) is not None:
        parts.append(text(left, bottom, render(messages, "label.heatmap_slice", lang,
                                               {"index": index, "shape": heatmap.expected_shape}), anchor="start"))
        bottom += 16
    width = legend_x + legend_width
    return svg_document(width, bottom + 4, parts, describe_heatmap(heatmap, messages, lang))


def describe_heatmap(heatmap: Heatmap, messages: Messages, lang: str) -> str:
    """The heatmap in words, for a reader who cannot see it: which matrices, their size (the slice, for more than two
    axes), and where they differ: how many cells, and the cell that differs most with both values."""
    ours, theirs = heatmap.expected, heatmap.got
    size = render(messages, "label.heatmap_alt_shape", lang, {"rows": ours.shape[0], "columns": ours.shape[1]})
    if (index := heatmap.slice_index()) is not None:
        size = render(messages, "label.heatmap_slice", lang, {"index": index, "shape": heatmap.expected_shape})
    separator = pick(SEPARATOR, lang)
    parts = [render(messages, "label.heatmap_alt", lang, {"shape": size})]
    if ours.shape != theirs.shape:
        parts.append(render(messages, "label.heatmap_alt_shapes", lang, {
            "got": heatmap.got_shape, "expected": heatmap.expected_shape}))
        return separator.join(parts)
    differ = ~((ours == theirs) | (torch.isnan(ours) & torch.isnan(theirs)))
    if not bool(differ.any()):
        parts.append(render(messages, "label.heatmap_alt_same", lang))
        return separator.join(parts)
    gap = torch.where(differ, (ours - theirs).abs().nan_to_num(nan=math.inf, posinf=math.inf), torch.zeros_like(ours))
    row, column = divmod(int(gap.reshape(-1).argmax()), ours.shape[1])
    parts.append(render(messages, "label.heatmap_alt_differ", lang, {
        "count": int(differ.sum()), "total": differ.numel(), "row": row, "column": column,
        "expected": _cell_words(float(ours[row, column]), heatmap.as_mask, messages, lang),
        "got": _cell_words(float(theirs[row, column]), heatmap.as_mask, messages, lang)}))
    return separator.join(parts)


def _cell_words(value: float, as_mask: bool, messages: Messages, lang: str) -> str:
    """One cell's value as the picture's legend names it: hidden or visible for a mask, else the number."""
    if as_mask:
        return render(messages, "label.heatmap_hidden" if value else "label.heatmap_visible", lang)
    return f"{value:.4f}" if math.isfinite(value) else str(value)


def _first_matrix(tensor: torch.Tensor) -> torch.Tensor:
    """The first 2-D slice, as float64 on the CPU (a bool mask as 0 and 1, a vector as one row)."""
    matrix = tensor.detach().cpu()
    while matrix.dim() > 2:
        matrix = matrix[0]
    if matrix.dim() < 2:
        matrix = matrix.reshape(1, -1)
    return matrix.to(torch.float64)


def _cell_size(cells: int, *, largest: int, smallest: int, room: int) -> int:
    """Pixels per cell: a panel about `room` wide, cells between `smallest` and `largest`."""
    return max(smallest, min(largest, room // max(cells, 1)))


def panel(matrix: torch.Tensor, x0: int, y0: int, cell: int, scale: Scale, as_mask: bool, title: str,
          messages: Messages, lang: str) -> str:
    rows, columns = matrix.shape
    parts = [f'<g class="panel" data-title="{escape(title)}">',
             text(x0 + columns * cell / 2, y0 - 24, title, size=TITLE_PX, weight="bold")]
    values = matrix.tolist()
    for row in range(rows):
        start = 0
        # One rectangle per run of equal colours along a row: a mask is a handful of them, not rows × columns.
        while start < columns:
            fill = _colour_of(values[row][start], scale, as_mask)
            end = start + 1
            while end < columns and _colour_of(values[row][end], scale, as_mask) == fill:
                end += 1
            parts.append(f'<rect class="cell" x="{x0 + start * cell}" y="{y0 + row * cell}" '
                         f'width="{(end - start) * cell}" height="{cell}" fill="{fill}"/>')
            start = end
    parts.append(f'<rect x="{x0}" y="{y0}" width="{columns * cell}" height="{rows * cell}" fill="none" '
                 f'stroke="#888" stroke-width="1"/>')
    for row in ticks(rows):
        parts.append(text(x0 - 5, y0 + row * cell + cell / 2 + FONT_PX / 3, str(row), anchor="end", css="tick-row"))
    for column in ticks(columns):
        parts.append(text(x0 + column * cell + cell / 2, y0 - 6, str(column), css="tick-column"))
    parts.append(text(x0 + columns * cell / 2, y0 + rows * cell + 16, render(messages, "label.heatmap_key", lang)))
    middle = y0 + rows * cell / 2
    parts.append(text(x0 - 30, middle, render(messages, "label.heatmap_query", lang),
                      rotate=(x0 - 30, middle)))
    parts.append("</g>")
    return "".join(parts)


def _colour_of(value: float, scale: Scale, as_mask: bool) -> str:
    return MASK_COLOURS[bool(value)] if as_mask else scale.colour(value)


def _colour_legend(x0: int, y0: int, height: int, scale: Scale, matrices: Sequence[torch.Tensor],
                  messages: Messages, lang: str) -> tuple[str, int]:
    """A vertical colour bar with the scale's ends and middle, and a _swatch for non-finite values if any."""
    bar_height = max(height, 60)
    steps = 24
    parts = ['<g class="legend">']
    for step in range(steps):
        value = scale.high - (scale.high - scale.low) * (step + 0.5) / steps
        parts.append(f'<rect x="{x0}" y="{y0 + bar_height * step / steps:.1f}" width="12" '
                     f'height="{bar_height / steps + 0.5:.1f}" fill="{scale.colour(value)}"/>')
    for fraction in (0.0, 0.5, 1.0):
        value = scale.high - (scale.high - scale.low) * fraction
        parts.append(text(x0 + 16, y0 + bar_height * fraction + FONT_PX / 3, f"{value:.3g}", anchor="start"))
    width = 48
    if any(not bool(torch.isfinite(matrix).all()) for matrix in matrices):
        label = render(messages, "label.heatmap_not_finite", lang)
        parts.append(_swatch(x0, y0 + bar_height + 10, NOT_FINITE, label))
        width = max(width, 20 + text_width(label))
    parts.append("</g>")
    return "".join(parts), width


def _mask_legend(x0: int, y0: int, height: int, scale: Scale, matrices: Sequence[torch.Tensor],
                messages: Messages, lang: str) -> tuple[str, int]:
    labels = [(MASK_COLOURS[True], render(messages, "label.heatmap_hidden", lang)),
              (MASK_COLOURS[False], render(messages, "label.heatmap_visible", lang))]
    parts = ['<g class="legend">']
    parts += [_swatch(x0, y0 + 18 * index, fill, label) for index, (fill, label) in enumerate(labels)]
    parts.append("</g>")
    return "".join(parts), 20 + max(text_width(label) for _, label in labels)


# ---------------------------------------------------------------------------------------------
# Head layout: which (token, head) each feature of a split or merged output holds, read from the outputs


def value_sources(values: torch.Tensor, source: torch.Tensor) -> torch.Tensor | None:
    """For each element of `values`, the flat index of the element of `source` with exactly its value, -1 where
    none has it; None when two elements of `source` share a value (a value could not say where it came from).
    Splitting and merging move values without computing on them, so equality is exact."""
    flat = source.detach().cpu().reshape(-1).to(torch.float64)
    ordered, order = torch.sort(flat)
    if ordered.numel() == 0 or bool((ordered[1:] == ordered[:-1]).any()) or bool(torch.isnan(ordered).any()):
        return None
    wanted = values.detach().cpu().reshape(-1).to(torch.float64)
    position = torch.searchsorted(ordered, wanted).clamp(max=ordered.numel() - 1)
    found = ordered[position] == wanted
    return torch.where(found, order[position], torch.full_like(position, -1)).reshape(values.shape)


def _layout_grid(indices: torch.Tensor, where: Callable[[tuple[int, ...]], TokenHead | None],
                source_shape: Sequence[int]) -> tuple[tuple[TokenHead | None, ...], ...]:
    """(tokens, features) flat source indices -> the (token, head) of each, None for -1 or a value of another
    example of the batch (`where` returns None for it)."""
    rows = []
    for row in indices.tolist():
        cells: list[TokenHead | None] = []
        for flat in row:
            cells.append(None if flat < 0 else where(unravel(flat, source_shape)))
        rows.append(tuple(cells))
    return tuple(rows)


def split_layout(x: torch.Tensor, expected: torch.Tensor, got: object, num_heads: int) -> HeadLayout | None:
    """split_heads(x, num_heads), x (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim): the (token,
    head) of x each feature of the first example's output holds, in the reference's and in the student's output.
    None unless `got` has the expected shape and x's values are all different (then each value names its place)."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or expected.dim() != 4:
        return None
    head_dim = expected.shape[-1]

    def where(index: tuple[int, ...]) -> TokenHead | None:
        example, token, feature = index
        return (token, feature // head_dim) if example == 0 else None

    grids = []
    for output in (expected, got):
        sources = value_sources(output[0], x)  # (num_heads, num_tokens, head_dim)
        if sources is None:
            return None
        grids.append(_layout_grid(sources.transpose(0, 1).reshape(output.shape[2], -1), where, tuple(x.shape)))
    return HeadLayout(head_dim, grids[0], grids[1])


def merge_layout(x: torch.Tensor, expected: torch.Tensor, got: object) -> HeadLayout | None:
    """merge_heads(x), x (b, num_heads, num_tokens, head_dim) -> (b, num_tokens, d_out): as split_layout."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or expected.dim() != 3 or x.dim() != 4:
        return None

    def where(index: tuple[int, ...]) -> TokenHead | None:
        example, head, token, _ = index
        return (token, head) if example == 0 else None

    grids = []
    for output in (expected, got):
        sources = value_sources(output[0], x)  # (num_tokens, d_out)
        if sources is None:
            return None
        grids.append(_layout_grid(sources, where, tuple(x.shape)))
    return HeadLayout(x.shape[-1], grids[0], grids[1])


def merged_block_layout(expected: torch.Tensor, got: object, num_heads: int) -> HeadLayout | None:
    """What out_proj received, (b, num_tokens, d_out) merged heads, against the reference's: the (token, head)
    block of the reference each head_dim-wide block of the student's first example equals. These are computed
    values, so blocks are matched within the checks' tolerance. None unless every block equals one of the
    reference's and some block is out of place: otherwise the fault is not where the heads were put."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or expected.dim() != 3:
        return None
    num_tokens, d_out = expected.shape[1:]
    head_dim = d_out // num_heads
    reference = expected[0].detach().to(torch.float64).reshape(num_tokens * num_heads, head_dim)
    theirs = got[0].detach().to(torch.float64).reshape(num_tokens * num_heads, head_dim)
    if not bool(torch.isfinite(theirs).all()):
        return None
    distances = (theirs[:, None, :] - reference[None, :, :]).abs().amax(dim=-1)
    tolerance = 1e-5 + 1e-4 * reference.abs().amax(dim=-1)[None, :]
    close = distances <= tolerance
    if not bool(close.any(dim=1).all()):
        return None
    nearest = torch.where(close, distances, torch.full_like(distances, math.inf)).argmin(dim=1).tolist()
    blocks = [divmod(block, num_heads) for block in nearest]  # (token, head) of each block
    received = tuple(tuple(blocks[token * num_heads + feature // head_dim] for feature in range(d_out))
                     for token in range(num_tokens))
    in_place = tuple(tuple((token, feature // head_dim) for feature in range(d_out)) for token in range(num_tokens))
    if received == in_place:
        return None
    return HeadLayout(head_dim, in_place, received)


def head_layout_alt(layout: HeadLayout, messages: Messages, lang: str) -> str:
    """The head layout in words, for a reader who cannot see it: its size and how many features are out of place."""
    rows = len(layout.expected)
    columns = len(layout.expected[0]) if rows else 0
    misplaced = sum(theirs != ours for got, want in zip(layout.received, layout.expected, strict=False)
                    for theirs, ours in zip(got, want, strict=False))
    return render(messages, "label.head_layout_alt", lang, {
        "rows": rows, "columns": columns, "head_dim": layout.head_dim, "misplaced": misplaced,
        "total": rows * columns})


def head_layout_svg(layout: HeadLayout, messages: Messages, lang: str) -> str:
    """SVG of the expected and the received head layout side by side: a cell per feature, coloured by the head it
    came from and numbered with its token; the output's heads as column groups; a cell out of place outlined."""
    rows = len(layout.expected)
    columns = len(layout.expected[0]) if rows else 0
    groups = max(1, columns // max(layout.head_dim, 1))
    widest_label = max(text_width(render(messages, "label.picture_head", lang, {"head": head}))
                       for head in range(groups))
    # A head's group of cells at least as wide as its label ("head 0" over a head of one feature).
    cell = max(_cell_size(max(rows, columns), largest=24, smallest=10, room=260),
               min(40, -(-(widest_label + 4) // max(layout.head_dim, 1))))
    group_gap = 6
    left, top, gap = 48, 48, 60
    panel_width = columns * cell + (groups - 1) * group_gap
    parts: list[str] = []
    x = left
    for grid, key in ((layout.expected, "label.heatmap_expected"), (layout.received, "label.heatmap_got")):
        title = render(messages, key, lang)
        parts.append(f'<g class="panel" data-title="{escape(title)}">')
        parts.append(text(x + panel_width / 2, 16, title, size=TITLE_PX, weight="bold"))
        for group in range(groups):
            parts.append(text(x + group * (layout.head_dim * cell + group_gap) + layout.head_dim * cell / 2, top - 8,
                              render(messages, "label.picture_head", lang, {"head": group})))
        parts.append(text(x - 8, top - 8, render(messages, "label.picture_token", lang), anchor="end"))
        for row in range(rows):
            parts.append(text(x - 8, top + row * cell + cell / 2 + FONT_PX / 3, str(row), anchor="end"))
            for column in range(columns):
                cell_x = x + column * cell + (column // max(layout.head_dim, 1)) * group_gap
                parts.append(block(cell_x, top + row * cell, cell, grid[row][column]))
        # Outlined after every cell is filled, so no neighbour paints over an outline.
        for row in range(rows):
            for column in range(columns):
                if grid[row][column] != layout.expected[row][column]:
                    cell_x = x + column * cell + (column // max(layout.head_dim, 1)) * group_gap
                    parts.append(f'<rect class="misplaced" x="{cell_x + 1}" y="{top + row * cell + 1}" '
                                 f'width="{cell - 2}" height="{cell - 2}" fill="none" stroke="{MISPLACED}" '
                                 f'stroke-width="2"/>')
        parts.append("</g>")
        x += panel_width + gap
    legend_y = top + rows * cell + 16
    heads_seen = sorted({source[1] for grid in (layout.expected, layout.received) for line in grid
                         for source in line if source is not None})
    legend_x = left
    for head in heads_seen:
        label = render(messages, "label.picture_head", lang, {"head": head})
        parts.append(_swatch(legend_x, legend_y, HEAD_COLOURS[head % len(HEAD_COLOURS)], label))
        legend_x += 24 + text_width(label)
    lines = [render(messages, "label.picture_head_legend", lang)]
    if any(source is None for line in layout.received for source in line):
        lines.append(render(messages, "label.picture_unknown", lang))
    if layout.received != layout.expected:
        lines.append(render(messages, "label.picture_misplaced", lang))
    for index, line in enumerate(lines):
        parts.append(text(left, legend_y + 30 + 16 * index, line, anchor="start"))
    width = max(x - gap + 8, legend_x, left + max(text_width(line) for line in lines) + 8)
    height = legend_y + 30 + 16 * len(lines)
    return svg_document(int(width), int(height), parts, head_layout_alt(layout, messages, lang))


def block(x: float, y: float, cell: int, source: TokenHead | None) -> str:
    """One feature's cell: its head's colour and its token's number ("?" for a value from nowhere)."""
    fill = UNKNOWN if source is None else HEAD_COLOURS[source[1] % len(HEAD_COLOURS)]
    stroke = 'stroke="#bbbbbb" stroke-width="1"' if source is None else 'stroke="#ffffff" stroke-width="1"'
    label = "?" if source is None else str(source[0])
    data = "" if source is None else f' data-token="{source[0]}" data-head="{source[1]}"'
    size = max(8, min(FONT_PX, cell - 6))
    return (f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" {stroke}{data}/>'
            + text(x + cell / 2, y + cell / 2 + size / 3, label, size=size))


# ---------------------------------------------------------------------------------------------
# A failed check's pictures, each with its words


@dataclass(frozen=True)
class Picture:
    """One picture as SVG text, and `alt`: what it shows in words (the check's title first), for a screen reader
    and for where the picture cannot show (an untrusted notebook, a terminal, a plain-text export)."""

    svg: str
    alt: str


def pictures_of(result: CheckResult, messages: Messages, lang: str) -> list[Picture]:
    """The pictures of a public check's failure: its heatmap and its head layout, where it has them."""
    title = result.title or result.id
    pictures = []
    if result.heatmap is not None:
        expected, got = result.heatmap
        pictures.append(Picture(heatmap_svg(expected, got, messages, lang),
                                f"{title}{pick(TITLE_COLON, lang)}{heatmap_alt(expected, got, messages, lang)}"))
    if result.head_layout is not None:
        pictures.append(Picture(head_layout_svg(result.head_layout, messages, lang),
                                f"{title}{pick(TITLE_COLON, lang)}"
                                f"{head_layout_alt(result.head_layout, messages, lang)}"))
    return pictures


# ---------------------------------------------------------------------------------------------
# SVG text


def svg_document(width: int, height: int, parts: Sequence[str], title: str) -> str:
    """The SVG element; `title` is its text alternative (its <title> and aria-label: what a screen reader says)."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{FONT_PX}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
            + "".join(parts) + "</svg>")


def svg_data_url(svg: str) -> str:
    """An SVG as an img src: base64 has no character HTML would read as markup, and an SVG shown by an img runs
    nothing."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def text(x: float, y: float, content: str, *, anchor: str = "middle", size: int = FONT_PX, weight: str = "normal",
         css: str = "", rotate: tuple[float, float] | None = None) -> str:
    attributes = f'x="{x:g}" y="{y:g}" text-anchor="{anchor}"'
    if size != FONT_PX:
        attributes += f' font-size="{size}"'
    if weight != "normal":
        attributes += f' font-weight="{weight}"'
    if css:
        attributes += f' class="{css}"'
    if rotate is not None:
        attributes += f' transform="rotate(-90 {rotate[0]:g} {rotate[1]:g})"'
    return f"<text {attributes}>{escape(content)}</text>"


def _swatch(x: float, y: float, fill: str, label: str) -> str:
    return (f'<rect x="{x}" y="{y}" width="12" height="12" fill="{fill}" stroke="#888" stroke-width="1"/>'
            + text(x + 18, y + 10, label, anchor="start"))


def text_width(content: str) -> int:
    """A generous width in pixels: a CJK character is about a full em, a Latin one about 0.6 of it."""
    return int(sum(FONT_PX if ord(character) > 0x2E80 else FONT_PX * 0.62 for character in content)) + 2


def show_svg(svg: str, alt: str) -> None:
    """Display SVG text in a running IPython kernel, `alt` (what it shows in words) as its text/plain form for where
    it cannot show; nothing elsewhere."""
    if not in_kernel():
        return
    from IPython.display import display

    display({"image/svg+xml": svg, "text/plain": alt}, raw=True)
