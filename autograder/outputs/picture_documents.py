"""A failed public check's heatmap as its record keeps it, and back: numbers only, so the feedback page draws the
picture itself (in the page's language) and never embeds markup read from a file.

JSON has no infinities or nan (a masked score is -inf), so a value that is not finite is kept as the string
"inf", "-inf" or "nan". Reading back is strict: anything but a rectangular matrix of such values, of at most
MAX_CELLS cells, with whole shapes that hold it, gives no picture (an old record has none either).
"""

import math

import torch

from autograder.checking.pictures import Heatmap
from autograder.outputs.documents import Cell, HeatmapDocument

__all__ = ["heatmap_document", "heatmap_of"]

MAX_CELLS = 64 * 64  # per matrix: larger ones are left out of the record (the page draws no picture for them)
NOT_FINITE = frozenset({"inf", "-inf", "nan"})


def heatmap_document(heatmap: Heatmap) -> HeatmapDocument | None:
    """The heatmap as numbers for the record; None when a matrix has more than MAX_CELLS cells."""
    if heatmap.expected.numel() > MAX_CELLS or heatmap.got.numel() > MAX_CELLS:
        return None
    return {"expected": _cells(heatmap.expected), "got": _cells(heatmap.got),
            "expected_shape": list(heatmap.expected_shape), "got_shape": list(heatmap.got_shape),
            "mask": heatmap.as_mask}


def heatmap_of(document: object) -> Heatmap | None:
    """The heatmap a record's `heatmap` entry holds; None for anything but a well-formed one."""
    if not isinstance(document, dict) or not isinstance(document.get("mask"), bool):
        return None
    matrices = [_matrix(document.get(key)) for key in ("expected", "got")]
    shapes = [_shape(document.get(key)) for key in ("expected_shape", "got_shape")]
    if any(matrix is None for matrix in matrices) or any(shape is None for shape in shapes):
        return None
    expected, got = (matrix for matrix in matrices if matrix is not None)
    expected_shape, got_shape = (shape for shape in shapes if shape is not None)
    if not (_holds(expected_shape, expected) and _holds(got_shape, got)):
        return None
    return Heatmap(expected, got, expected_shape, got_shape, document["mask"])


def _cells(matrix: torch.Tensor) -> list[list[Cell]]:
    # Seven significant digits: what a float32 holds, and all the picture and its words need.
    return [[float(f"{value:.7g}") if math.isfinite(value) else str(value) for value in row]
            for row in matrix.tolist()]


def _matrix(rows: object) -> torch.Tensor | None:
    if not isinstance(rows, list) or not rows or not all(isinstance(row, list) for row in rows):
        return None
    width = len(rows[0])
    if width == 0 or any(len(row) != width for row in rows) or len(rows) * width > MAX_CELLS:
        return None
    values = [[_value(cell) for cell in row] for row in rows]
    if any(value is None for row in values for value in row):
        return None
    return torch.tensor(values, dtype=torch.float64)


def _value(cell: object) -> float | None:
    if isinstance(cell, bool):  # a bool is an int to Python, but no value the grader writes
        return None
    if isinstance(cell, int | float):
        try:
            return float(cell)
        except OverflowError:  # an int past float's range
            return None
    return float(cell) if isinstance(cell, str) and cell in NOT_FINITE else None


def _shape(sizes: object) -> tuple[int, ...] | None:
    if not isinstance(sizes, list) or len(sizes) > 8:
        return None
    if not all(isinstance(size, int) and not isinstance(size, bool) and 0 <= size for size in sizes):
        return None
    return tuple(sizes)


def _holds(shape: tuple[int, ...], matrix: torch.Tensor) -> bool:
    """Whether a tensor of `shape` has `matrix` as its first matrix (a vector is one row, a scalar one cell)."""
    rows, columns = matrix.shape
    if len(shape) >= 2:
        return (shape[-2], shape[-1]) == (rows, columns)
    return rows == 1 and columns == (shape[0] if shape else 1)
