"""How a learner's tensor departs from the notes' step, read from the two tensors alone (no table of mistakes): a
constant factor (and the case's size it is the square root of, when only one size fits), the same slices along one
dimension in another order, entries that sum to 1 over the whole tensor, entries the notes keep that are 0 in
theirs (or the reverse), another of the notes' steps in its place. autograder.checking.departure turns each into a
Fact; each holds exactly, up to the comparison's tolerance, on the case the learner's code ran, and only where it
tells the two tensors apart (a reordering is never the identity on the values, nor one that another dimension gives
as well, a normalisation never one the notes' step has too).

Nothing here imports the reference: the student kit runs it on its stored steps.
"""

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch

__all__ = ["ELEMENTWISE", "PAIRED", "Alternative", "AxesReordered", "alternative_computation", "case_sizes",
           "flipped_bands", "named_size", "permuted_axis", "reordered_axes", "reproduces", "restacked_blocks",
           "sums_to_one_overall", "transposed_blocks", "zeroed_entries"]

# The sizes a case makes visible through the notes' steps: (step id, axis, the size's name). A name is said only when
# its value is unique among the case's sizes (autograder.checking.departure's factor facts).
SIZE_AXES = (("keys", -1, "d_k"), ("keys", -2, "num_tokens"), ("split_keys", 1, "num_heads"),
             ("split_keys", -1, "head_dim"), ("scores", -1, "num_tokens"))
TOLERANCE = 1e-3  # relative: a factor is a size's root when it is within this of it
MAX_PAIRED = 2**22  # entries times the longest dimension: the pairing of slices compares this many numbers at most


def case_sizes(shapes: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """{size name: its value} of a case, read from the shapes of its declared steps ({step id: shape}). With heads,
    the keys' last size is d_out (each head's is head_dim); without, it is d_k, the size the notes scale by."""
    sizes: dict[str, int] = {}
    for step_id, axis, name in SIZE_AXES:
        shape = shapes.get(step_id)
        if shape is not None and len(shape) >= -axis:
            sizes[name] = int(shape[axis])
    if "head_dim" in sizes and "d_k" in sizes:
        sizes["d_out"] = sizes.pop("d_k")
    exponentials, sums = shapes.get("exponentials"), shapes.get("sums")
    if exponentials is not None and sums is not None and len(exponentials) == len(sums):
        summed = [size for size, kept in zip(exponentials, sums, strict=True) if kept == 1 and size > 1]
        if len(summed) == 1:  # the softmax's axis: the count of entries each of the notes' sums adds up
            sizes["summed"] = int(summed[0])
    elif exponentials is not None and sums is not None and len(exponentials) == len(sums) + 1:
        # Sums that drop the summed axis (the notes' naive softmax): each adds up what the one axis gone held.
        count, kept = math.prod(exponentials), math.prod(sums)
        if kept and count % kept == 0 and count // kept > 1:
            sizes["summed"] = count // kept
    return sizes


def named_size(factor: float, sizes: Mapping[str, int]) -> tuple[str, str] | None:
    """(the size's name, "root" or "size") when `factor` (above 1) is the square root of one of the case's sizes, or
    that size itself, and of no other size in either way, and no other size has the same value: else None (the
    notes' 2 heads of size 1 do not tell head_dim from num_heads)."""
    fits = [(name, relation) for name, value in sizes.items() if value > 1
            for relation, target in (("root", math.sqrt(value)), ("size", float(value)))
            if abs(factor - target) <= TOLERANCE * target]
    if len(fits) != 1:
        return None
    name = fits[0][0]
    if sum(value == sizes[name] for value in sizes.values()) != 1:
        return None
    return fits[0]


def permuted_axis(got: torch.Tensor, expected: torch.Tensor,
                  close: Callable[[torch.Tensor, torch.Tensor], bool]) -> tuple[int, bool] | None:
    """(the dimension, whether it is reversed) when `got` is `expected` with its slices along one dimension in
    another order (the same heads, tokens or features, reordered); None when no single dimension explains it, or
    two do. Both have one shape and differ (`close` is the comparison's), so the order found is never the identity.
    Slices are paired at a tolerance a little wider than `close`'s, then the whole reordering is checked with
    `close`."""
    if got.shape != expected.shape or close(got, expected) or got.numel() * max(got.shape, default=1) > MAX_PAIRED:
        return None
    finite = expected[torch.isfinite(expected)]
    tolerance = 1e-3 * max(float(finite.abs().max()) if finite.numel() else 1.0, 1.0)
    fitting: list[tuple[int, bool]] = []
    for axis in range(expected.dim()):
        count = expected.shape[axis]
        if count < 2:
            continue
        mine = got.movedim(axis, 0).reshape(count, -1)
        notes = expected.movedim(axis, 0).reshape(count, -1)
        difference = (mine[:, None, :] - notes[None, :, :]).abs()
        same = ((difference <= tolerance) | (mine[:, None, :] == notes[None, :, :])).all(dim=-1)
        order: list[int] = []
        for row in same:
            found = next((int(index) for index in row.nonzero().reshape(-1) if int(index) not in order), None)
            if found is None:
                break
            order.append(found)
        if len(order) == count and close(got, expected.index_select(axis, torch.tensor(order))):
            fitting.append((axis, count > 2 and order == list(range(count - 1, -1, -1))))  # two swapped: no reversal
    # A tensor whose reordering along one dimension is also one along another (a circulant matrix: its rows shifted
    # are its columns shifted back) proves neither dimension.
    return fitting[0] if len(fitting) == 1 else None


def sums_to_one_overall(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether every entry of `got` together sums to 1 where the notes' step does not (it sums to 1 per row)."""
    def overall(tensor: torch.Tensor) -> bool:
        return bool(torch.isfinite(tensor).all()) and abs(float(tensor.sum()) - 1.0) <= 1e-4
    return got.numel() > 1 and overall(got) and not overall(expected)


def zeroed_entries(got: torch.Tensor, expected: torch.Tensor,
                   close: Callable[[torch.Tensor, torch.Tensor], bool]) -> tuple[int, int]:
    """(entries the notes keep that are 0 in `got`, entries the notes have at 0 that `got` keeps), when every other
    entry is the notes' own: (0, 0) when the two differ anywhere else, or nowhere."""
    finite = torch.isfinite(got) & torch.isfinite(expected)
    if got.shape != expected.shape or not bool(finite.all()):
        return 0, 0
    dropped = (got == 0) & (expected.abs() > 1e-9)
    extra = (expected == 0) & (got.abs() > 1e-9)
    rest = ~(dropped | extra)
    # The entries left must show the notes' own numbers (not all zeros): else "the notes' step but..." says nothing.
    if (not bool((dropped | extra).any()) or not bool((expected[rest].abs() > 1e-9).any())
            or not close(got[rest], expected[rest])):
        return 0, 0
    return int(dropped.sum()), int(extra.sum())



MAX_BANDS = 2  # diagonals a mask may differ on for the difference to be said as its bands


def flipped_bands(got: torch.Tensor, expected: torch.Tensor) -> tuple[int, ...]:
    """The diagonals (offsets j - i of column j and row i, the main one first, then the nearest to it) on which a
    0/1 tensor (a mask: False and True read as 0 and 1) holds the other value than the notes' 0/1 step in every
    entry, and which are the only entries where the two differ: () when either holds another number, the last two
    dimensions are not square, they differ nowhere, or on more than MAX_BANDS diagonals, or only on part of one
    (in some rows, not in all)."""
    if (got.shape != expected.shape or expected.dim() < 2 or expected.shape[-1] != expected.shape[-2]
            or expected.shape[-1] < 2):
        return ()
    if not all(bool(((tensor == 0) | (tensor == 1)).all()) for tensor in (got, expected)):
        return ()
    differ = (got != expected).reshape(-1, *expected.shape[-2:])
    if not bool(differ.any()):
        return ()
    size = expected.shape[-1]
    rows = torch.arange(size)
    offsets = (rows[None, :] - rows[:, None]).expand_as(differ)  # j - i of every entry
    bands = sorted({int(offset) for offset in offsets[differ]}, key=lambda band: (abs(band), -band))
    if len(bands) > MAX_BANDS or not all(bool(differ[offsets == band].all()) for band in bands):
        return ()
    return tuple(bands)


def transposed_blocks(got: torch.Tensor, expected: torch.Tensor,
                      close: Callable[[torch.Tensor, torch.Tensor], bool]) -> int:
    """The number of square blocks (2 or more) the notes' 2-D step stacks along dimension 0 that `got`, of the same
    shape, holds each transposed in its place (three (d, d) projection weights stacked as one (3d, d) matrix, each
    laid out the other way round); 0 when it does not, or when transposing them changes nothing (symmetric
    blocks)."""
    if got.shape != expected.shape or expected.dim() != 2:
        return 0
    rows, columns = expected.shape
    if columns < 2 or rows % columns or rows // columns < 2:
        return 0
    count = rows // columns
    blocks = expected.reshape(count, columns, columns)
    flipped = blocks.transpose(1, 2)
    if close(flipped.reshape(rows, columns), expected):
        return 0
    return count if close(got, flipped.reshape(rows, columns)) else 0


def restacked_blocks(got: torch.Tensor, expected: torch.Tensor,
                     close: Callable[[torch.Tensor, torch.Tensor], bool]) -> tuple[int, int, int] | None:
    """(the count of blocks, the dimension the notes' step stacks them along, the dimension `got` stacks them
    along) when `got` holds the notes' step's equal blocks, each as it is, joined along another dimension (three
    (d, d) weights side by side, (d, 3d), instead of one above the other, (3d, d)); None when no such split fits
    or `got` has the notes' own shape."""
    if got.dim() != expected.dim() or got.shape == expected.shape:
        return None
    for axis in range(expected.dim()):
        for other in range(expected.dim()):
            if other == axis or expected.shape[axis] < 2 or got.shape[other] <= expected.shape[other]:
                continue
            if got.shape[other] % expected.shape[other]:
                continue
            count = got.shape[other] // expected.shape[other]
            if count < 2 or expected.shape[axis] % count:
                continue
            joined = torch.cat(expected.chunk(count, dim=axis), dim=other)
            if joined.shape == got.shape and close(got, joined):
                return count, axis, other
    return None


# Another computation of a step's operands (alternative_computation): reductions of one operand, entry-by-entry
# transforms of the notes' step, products of two operands. Each is a small fixed set: a learner's tensor matching
# exactly one of them, and not the notes' step, is that computation on this case.
REDUCTIONS = ("max", "min", "mean", "sum", "logsumexp")
TRANSFORMS = ("abs", "square", "exp", "log")
PRODUCTS = ("product", "dot_products", "cosine")  # a @ b, a @ b^T (rows with rows), rows' cosine similarities
# Other operations in a step's place between two operands: an entry-by-entry operation (broadcast as torch does),
# the dot products of matching rows only (a @ b^T's diagonal), the pairs taken between columns (features) instead of
# rows (a^T @ b), and one term alone of the sum a matrix product adds up (the first or the last: a running total
# replaced instead of added to keeps only the last).
ELEMENTWISE = ("minus", "plus", "times", "divided")
PAIRED = ("row_dots", "feature_products", "first_term", "last_term")
MAX_OPERAND = 2**16  # entries of an operand (and of a product) the alternatives compute at most


@dataclass(frozen=True)
class Alternative:
    """Another computation that gives the learner's tensor: its kind (`reduction`, `transform`, `elementwise`, or
    one of PRODUCTS or PAIRED), the op (a reduction's, transform's or entry-by-entry operation's name), the
    operands' names (the notes' step ids, or "inputs": the input the learner's function was given) and a reduction's
    axis (None: over all entries)."""

    kind: str
    op: str = ""
    operands: tuple[str, ...] = ()
    axis: int | None = None


def _reduced(value: torch.Tensor, op: str, axis: int | None) -> torch.Tensor:
    if axis is None:
        value = value.reshape(-1)
    dim = 0 if axis is None else axis
    if op in ("max", "min"):
        return getattr(value, op)(dim=dim, keepdim=True).values
    if op == "logsumexp":
        return torch.logsumexp(value, dim=dim, keepdim=True)
    return getattr(value, op)(dim=dim, keepdim=True)


def _transformed(value: torch.Tensor, op: str) -> torch.Tensor | None:
    if op == "log":
        return value.log() if bool((value > 0).all()) else None
    return {"abs": value.abs, "square": value.square, "exp": value.exp}[op]()


def _product(first: torch.Tensor, second: torch.Tensor, kind: str) -> torch.Tensor | None:
    if first.dim() < 2 or second.dim() < 2:
        return None
    if kind == "product":
        if first.shape[-1] != second.shape[-2]:
            return None
    elif first.shape[-1] != second.shape[-1]:
        return None
    columns = second.shape[-1] if kind == "product" else second.shape[-2]
    if first.numel() // first.shape[-1] * columns * max(second.numel() // (second.shape[-1] * second.shape[-2]),
                                                        1) > MAX_OPERAND:
        return None  # too large a product to compute (its count of entries, read from the shapes, bounds the cost)
    try:
        if kind == "product":
            return first @ second
        if kind == "cosine":
            first = first / first.norm(dim=-1, keepdim=True)
            second = second / second.norm(dim=-1, keepdim=True)
        return first @ second.transpose(-2, -1)
    except RuntimeError:  # batch dimensions that do not broadcast
        return None


def _elementwise(first: torch.Tensor, second: torch.Tensor, op: str) -> torch.Tensor | None:
    try:
        shape = torch.broadcast_shapes(first.shape, second.shape)
    except RuntimeError:
        return None
    if math.prod(shape) > MAX_OPERAND:
        return None
    if op == "divided":
        return first / second if bool((second != 0).all()) else None
    if op == "minus":
        return first - second
    return first + second if op == "plus" else first * second


def _paired(first: torch.Tensor, second: torch.Tensor, kind: str) -> torch.Tensor | None:
    """A PAIRED computation of two operands of two dimensions or more (the same batch dimensions); None where their
    shapes do not allow it."""
    if first.dim() < 2 or first.dim() != second.dim() or first.shape[:-2] != second.shape[:-2]:
        return None
    if kind == "row_dots":
        return (first * second).sum(dim=-1) if first.shape == second.shape else None
    if kind == "feature_products":
        if first.shape[-2] != second.shape[-2] or first.shape[-1] * second.shape[-1] * max(
                first.numel() // (first.shape[-1] * first.shape[-2]), 1) > MAX_OPERAND:
            return None
        return first.transpose(-2, -1) @ second
    if first.shape[-1] != second.shape[-2] or first.shape[-1] < 2:
        return None  # one term alone is the product itself
    if first.numel() // first.shape[-1] * second.shape[-1] > MAX_OPERAND:
        return None  # a term has the product's count of entries: too many to compute
    index = 0 if kind == "first_term" else first.shape[-1] - 1
    return first[..., :, index:index + 1] * second[..., index:index + 1, :]


def _candidates(expected: torch.Tensor,
                operands: Mapping[str, torch.Tensor]) -> Iterator[tuple[Alternative, torch.Tensor | None]]:
    small = {name: value for name, value in operands.items()  # a tensor with no entries reduces to nothing
             if 0 < value.numel() <= MAX_OPERAND and bool(torch.isfinite(value).all())}
    for name, value in small.items():
        for op in REDUCTIONS:
            axes: list[int | None] = [axis for axis in range(value.dim()) if value.shape[axis] > 1]
            # Over all entries is another computation only where two axes or more have more than one entry.
            for axis in [*axes, None] if len(axes) > 1 else axes:
                yield Alternative("reduction", op, (name,), axis), _reduced(value, op, axis)
    if bool(torch.isfinite(expected).all()):
        for op in TRANSFORMS:
            yield Alternative("transform", op), _transformed(expected, op)
    for (first_name, first), (second_name, second) in itertools.product(small.items(), repeat=2):
        # Rows with rows, columns with columns: the pair in the other order is the same computation transposed,
        # which a learner's tensor holds in its order only one way (queries^T @ keys, not keys^T @ queries); both
        # are tried, and alternative_computation takes the two as one.
        for kind in PRODUCTS:
            yield Alternative(kind, "", (first_name, second_name)), _product(first, second, kind)
        for kind in PAIRED:
            if kind == "row_dots" and first_name > second_name:
                continue  # the same numbers in the same order
            yield Alternative(kind, "", (first_name, second_name)), _paired(first, second, kind)
        if first_name == second_name:
            continue  # a tensor with itself: 0, 1, twice it or its square, which prove no second operand
        for op in ELEMENTWISE:
            if op in ("plus", "times") and first_name > second_name:
                continue  # the same computation
            yield Alternative("elementwise", op, (first_name, second_name)), _elementwise(first, second, op)


def alternative_computation(got: torch.Tensor, expected: torch.Tensor, operands: Mapping[str, torch.Tensor],
                            close: Callable[[torch.Tensor, torch.Tensor], bool]) -> Alternative | None:
    """The one alternative computation (see Alternative) of `operands` that `got` holds (the same numbers in the
    same order, up to a reshape), where the notes' step does not hold it, and it is not the notes' step on this case
    (its value differs from `expected`, or has another count of entries). None when none fits, or two or more (with
    other numbers: two descriptions of one tensor prove neither), or `got` holds the notes' step itself."""
    if got.numel() == expected.numel() and close(got.reshape(expected.shape), expected):
        return None
    fitting: list[tuple[Alternative, bool]] = []
    for alternative, value in _candidates(expected, operands):
        if value is None or value.numel() != got.numel() or not bool(torch.isfinite(value).all()):
            continue
        if value.numel() == expected.numel() and close(value.reshape(expected.shape), expected):
            continue  # the case does not tell it from the notes' step
        if close(got.reshape(value.shape), value):
            fitting.append((alternative, value.shape == got.shape))
    # One pairing taken in both orders (a symmetric product: a tensor's rows with its own rows) is one computation.
    fitting = [(alternative, same) for position, (alternative, same) in enumerate(fitting)
               if not any(_swapped(earlier, alternative) for earlier, _same in fitting[:position])]
    # a @ b^T where b is symmetric is a @ b: the plain matrix product is said.
    fitting = [(alternative, same) for alternative, same in fitting if not (
        alternative.kind == "dot_products" and any(other.kind == "product" and other.operands == alternative.operands
                                                   for other, _same in fitting))]
    # Two that fit in value, one of them in shape as well (on symmetric scores the minimum of each row, kept as a
    # column, is the minimum of each column as a row): the tensor's own shape tells them apart.
    shaped = [alternative for alternative, same in fitting if same]
    if len(fitting) > 1 and len(shaped) == 1:
        return shaped[0]
    return fitting[0][0] if len(fitting) == 1 else None


def _swapped(one: Alternative, other: Alternative) -> bool:
    """Whether two alternatives are one pairing of two operands taken in the two orders."""
    return (one.kind == other.kind and one.kind in (*PRODUCTS[1:], "feature_products")
            and one.operands == other.operands[::-1])


def reproduces(expected: torch.Tensor, operands: Mapping[str, torch.Tensor],
               close: Callable[[torch.Tensor, torch.Tensor], bool]) -> bool:
    """Whether one of the alternative computations of `operands` gives `expected` (the notes' step), in its shape:
    a tensor whose maximum of each row is the notes' maximum of the input's rows stands where the input does."""
    # A transform is of the notes' step itself, not a computation of the operands: |exp(x)| is exp(x) whatever the
    # operands hold, and would make any tensor "the input" (a sum of exp(|x|) called the sum of the input).
    return any(value is not None and alternative.kind != "transform" and value.shape == expected.shape
               and close(value, expected) for alternative, value in _candidates(expected, operands))


MAX_REORDERED_AXES = 5  # named axes of more than one entry whose orders are tried (5! = 120 at most)


@dataclass(frozen=True)
class AxesReordered:
    """The notes' step read with its named axes in another order (`order`: the names, in the order `got` holds
    them), then cut into `got`'s shape when that is not the reordered step's own shape with neighbouring axes
    merged (`cut`); `mixed`: the named axis (heads, tokens) along which every slice of `got` holds numbers of
    several of the notes' slices, when `got` has the step's own shape (its axes stand where the notes' do)."""

    order: tuple[str, ...]
    notes: tuple[str, ...]
    cut: bool
    mixed: str = ""

    @property
    def swapped(self) -> tuple[str, str] | None:
        """The two axes exchanged, when the order is the notes' with exactly two of them exchanged."""
        moved = [index for index, (mine, notes) in enumerate(zip(self.order, self.notes, strict=True))
                 if mine != notes]
        return (self.notes[moved[0]], self.notes[moved[1]]) if len(moved) == 2 else None


MIXED_AXES = ("heads", "tokens")  # the axes whose mixing a learner reads as the mistake (heads first)


def reordered_axes(got: torch.Tensor, expected: torch.Tensor, axes: Sequence[tuple[str, int]],
                   close: Callable[[torch.Tensor, torch.Tensor], bool]) -> AxesReordered | None:
    """How `got` holds the notes' step's numbers, when it is the step (viewed with its declared named axes, `axes`:
    (name, size) pairs whose sizes multiply to its count of entries) with those axes in one other order, then laid
    out in `got`'s shape in that order. Only axes of more than one entry are ordered (an axis of one entry is
    anywhere). None when no order reproduces `got` (within `close`), or two orders do (the case does not tell them
    apart), or the only one is the notes' own."""
    sizes = [int(size) for _name, size in axes]
    if not axes or math.prod(sizes) != expected.numel() or got.numel() != expected.numel():
        return None
    kept = [(str(name), size) for name, size in axes if size > 1]
    if len(kept) < 2 or len(kept) > MAX_REORDERED_AXES or len({name for name, _size in kept}) != len(kept):
        return None
    source = expected.reshape([size for _name, size in kept])
    flat = got.reshape(-1)
    identity = tuple(range(len(kept)))
    fitting = [order for order in itertools.permutations(identity) if order != identity
               and close(flat, source.permute(order).reshape(-1))]
    if len(fitting) != 1 or close(flat, source.reshape(-1)):
        return None
    order = fitting[0]
    reordered_shape = [kept[axis][1] for axis in order]
    return AxesReordered(tuple(kept[axis][0] for axis in order), tuple(name for name, _size in kept),
                         not _merged_from(reordered_shape, [size for size in got.shape if size > 1]),
                         _mixed_axis(got, expected, kept, order))


def _merged_from(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether `target` is `shape` with runs of neighbouring axes merged (each of its sizes the product of one run)."""
    position = 0
    for size in target:
        product = 1
        while position < len(shape) and product < size:
            product *= shape[position]
            position += 1
        if product != size:
            return False
    return position == len(shape)


def _mixed_axis(got: torch.Tensor, expected: torch.Tensor, kept: Sequence[tuple[str, int]],
                order: Sequence[int]) -> str:
    """The first of MIXED_AXES that is one of `expected`'s own dimensions, along which every slice of `got` (of the
    same shape, so that its dimension stands where the notes' does) holds numbers of two or more of the notes'
    slices along it: read from where each entry of `got` comes from. "" when none."""
    if got.shape != expected.shape:
        return ""
    names = [name for name, _size in kept]
    sizes = [size for _name, size in kept]
    # Where each entry of `got` comes from: its coordinates along the notes' named axes.
    origin = torch.arange(math.prod(sizes)).reshape(sizes).permute(tuple(order)).reshape(-1)
    coordinates = {}
    remainder = origin
    for name, size in reversed(list(zip(names, sizes, strict=True))):
        coordinates[name] = (remainder % size).reshape(expected.shape)
        remainder = remainder // size
    for name in MIXED_AXES:
        if name not in coordinates:
            continue
        size = dict(kept)[name]
        dims = [dim for dim, length in enumerate(expected.shape) if length == size]
        # The dimension of `expected` that is this axis alone: where the coordinates of the notes' own layout vary.
        own = torch.arange(math.prod(sizes)).reshape(sizes)
        notes_coordinates = own
        for other_name, other_size in reversed(list(zip(names, sizes, strict=True))):
            if other_name == name:
                notes_coordinates = (notes_coordinates % other_size).reshape(expected.shape)
                break
            notes_coordinates = notes_coordinates // other_size
        dim = next((dim for dim in dims if bool((notes_coordinates.movedim(dim, 0).reshape(size, -1)
                                                 == torch.arange(size)[:, None]).all())), None)
        if dim is None:
            continue
        slices = coordinates[name].movedim(dim, 0).reshape(size, -1)
        if all(int(row.unique().numel()) > 1 for row in slices):
            return name
    return ""

