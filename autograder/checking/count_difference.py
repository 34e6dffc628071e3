"""How a learner's parameter count differs from the module's, read from their number and the module's own parts: rung
2 of a count, which has no steps to trace (autograder.checking.departure).

The reference side stores, per case, the module's parts as plain data (COUNT_PARTS): each trainable parameter by its
name and size; what a right count leaves out (buffers, frozen parameters, a parameter registered again under a second
name); and the counts of the same module built with other constructor arguments. `count_line` says the learner's
count against the module's, then the one set of named parts whose sizes make up the difference exactly, or the one
other build whose count is theirs, or else that their count is how many trainable parameter tensors the module has:
only what is exact and unique on the case, never how to count.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autograder.checking.departure import listed
from autograder.i18n import Messages, render

__all__ = ["COUNT_PARTS", "CountParts", "SeenCount", "count_fact", "count_fits", "count_line", "explaining_parts",
           "refuted_count_facts"]

# The expectation that holds a case's parts: {"trainable": [[name, size]], "uncounted": [[name, size, kind]],
# "rebuilt": [[change, count]], "shapes": [[name, [dims]]], "entry_bytes": [[dtype, bytes]] or []}; kind is "buffer",
# "frozen" or "repeated"; change a key of `count.rebuilt.<change>`; shapes and entry_bytes of trainable parameters.
COUNT_PARTS = "count_parts"
MAX_PARTS = 16  # at most 2**16 subsets searched (pruned by the difference); past this many parts none is named


@dataclass(frozen=True)
class CountParts:
    """A case's parts, read from COUNT_PARTS' plain data (see the module's docstring)."""

    trainable: tuple[tuple[str, int], ...]
    uncounted: tuple[tuple[str, int, str], ...]
    rebuilt: tuple[tuple[str, int], ...]
    shapes: tuple[tuple[int, ...], ...] = ()
    entry_bytes: tuple[str, int] | None = None  # (dtype, bytes per entry) where the trainable share one dtype

    @classmethod
    def from_plain(cls, plain: Mapping[str, Any]) -> "CountParts":
        entry_bytes = [(str(dtype), int(size)) for dtype, size in plain.get("entry_bytes", ())]
        return cls(tuple((str(name), int(size)) for name, size in plain.get("trainable", ())),
                   tuple((str(name), int(size), str(kind)) for name, size, kind in plain.get("uncounted", ())),
                   tuple((str(change), int(count)) for change, count in plain.get("rebuilt", ())),
                   tuple(tuple(int(dim) for dim in shape) for _name, shape in plain.get("shapes", ())),
                   entry_bytes[0] if len(entry_bytes) == 1 else None)

    def once_per_shape(self) -> int | None:
        """The trainable entries counted with one parameter of each shape; None where no two parameters share a shape
        (or the shapes are not known)."""
        if len(self.shapes) != len(self.trainable) or len(set(self.shapes)) == len(self.shapes):
            return None
        sizes = {shape: size for shape, (_name, size) in zip(self.shapes, self.trainable, strict=True)}
        return sum(sizes.values())


def explaining_parts(difference: int, sizes: Sequence[int]) -> tuple[int, ...] | None:
    """The indices of the one subset of `sizes` that sums to `difference` (> 0); None when no subset does, or more
    than one (two parts of one size: which one is left out is not known), or there are too many parts to tell."""
    if difference <= 0 or len(sizes) > MAX_PARTS:
        return None
    # Reachable sums (at most `difference`), each with its subset while only one subset reaches it (None: several).
    reached: dict[int, tuple[int, ...] | None] = {0: ()}
    for index, size in enumerate(sizes):
        if size <= 0:
            continue  # a part of no entries makes up no difference
        grown = dict(reached)
        for total, subset in reached.items():
            new = total + size
            if new > difference:
                continue
            if new in grown:
                grown[new] = None  # a second way to this sum
            else:
                grown[new] = None if subset is None else (*subset, index)
        reached = grown
    return reached.get(difference)


def _some_parts_sum_to(difference: int, sizes: Sequence[int]) -> bool:
    """Whether some subset of `sizes` sums to `difference` exactly, unique or not (False past MAX_PARTS parts)."""
    if len(sizes) > MAX_PARTS:
        return False
    reached = {0}
    for size in sizes:
        reached |= {total + size for total in reached if 0 < size and total + size <= difference}
    return difference in reached


def _one_kind_making_up(difference: int, uncounted: Sequence[tuple[str, int, str]]) -> str | None:
    """The kind (buffer, frozen, repeated) of every set of parts a right count leaves out whose sizes make up
    `difference`, where there is at least one such set and each is all of that one kind; None otherwise."""
    if difference <= 0 or len(uncounted) > MAX_PARTS:
        return None
    kinds: set[str] = set()
    for chosen in range(1, 2 ** len(uncounted)):
        members = [part for bit, part in enumerate(uncounted) if chosen >> bit & 1]
        if sum(size for _name, size, _kind in members) == difference:
            kinds |= {kind for _name, _size, kind in members}
            if len(kinds) > 1:
                return None
    return next(iter(kinds), None)


def _all_buffers_taken(got: int, right: int, parts: CountParts) -> bool:
    """Whether the count is the module's trainable entries less the entries of all its buffers (it has some), and
    no set of trainable parameters makes up that shortfall (parameters left out would give the same count)."""
    buffers = sum(size for _name, size, kind in parts.uncounted if kind == "buffer")
    return 0 < buffers and got == right - buffers and not _some_parts_sum_to(
        buffers, [size for _name, size in parts.trainable])


def count_line(got: int, right: int, plain: Mapping[str, Any], lang: str, messages: Messages,
               refuted: Collection[str] = ()) -> str:
    """Rung 2 for a wrong count: the learner's count against the module's trainable count, and what makes up the
    difference when exactly one thing does (see the module's docstring); "" for a right count. `refuted`: facts
    (count_fact's) the learner's counts on other modules contradict (refuted_count_facts), left unsaid."""
    if got == right:
        return ""
    parts = CountParts.from_plain(plain)
    fields: dict[str, Any] = {"got": got, "right": right, "difference": abs(got - right)}
    sentences = [render(messages, "count.fewer" if got < right else "count.more", lang, fields)]
    named, chosen = _explaining(got, right, parts)
    if chosen is not None:
        parts_said = [render(messages, f"count.part.{named[index][2]}", lang,
                             {"name": named[index][0], "size": named[index][1]}) for index in chosen]
        key = "count.parts_more" if got > right else (
            "count.parts_taken" if named[chosen[0]][2] != "trainable" else "count.parts_fewer")
        sentences.append(render(messages, key, lang, {**fields, "parts": listed(parts_said, lang)}))
    elif got < right and _all_buffers_taken(got, right, parts):
        # Other sets may make up the shortfall as well; this one is every buffer, what a count that subtracts the
        # buffers gives on any module (12r's rz-pc-11: said on one check, unsaid on the next).
        buffers = [render(messages, "count.part.buffer", lang, {"name": name, "size": size})
                   for name, size, kind in parts.uncounted if kind == "buffer"]
        sentences.append(render(messages, "count.buffers_taken", lang, {**fields, "parts": listed(buffers, lang)}))
    elif got > right and (kind := _one_kind_making_up(got - right, parts.uncounted)) is not None:
        # Two sets or more make up the extra, all of one kind: which ones were counted is not known, their kind is.
        of_kind = [render(messages, f"count.part.{kind}", lang, {"name": name, "size": size})
                   for name, size, part_kind in parts.uncounted if part_kind == kind]
        sentences.append(render(messages, "count.kind_more", lang, {
            **fields, "kind": render(messages, f"count.kind.{kind}", lang), "parts": listed(of_kind, lang)}))
    builds = [change for change, count in parts.rebuilt if count == got]
    if len(builds) == 1:
        sentences.append(render(messages, "count.rebuilt", lang, {
            **fields, "change": render(messages, f"count.rebuilt.{builds[0]}", lang)}))
    shape_fact = _shape_or_times(got, right, parts)
    if shape_fact and shape_fact not in refuted:
        sentences.append(render(messages, f"count.{shape_fact.split(':')[0]}", lang, {
            **fields, "times": got // right if right else 0,
            "dtype": parts.entry_bytes[0] if parts.entry_bytes else "",
            "shared": sum(parts.shapes.count(shape) > 1 for shape in parts.shapes), "all": len(parts.shapes)}))
    if len(sentences) == 1 and got == len(parts.trainable) and got > 1 and any(size > 1 for _name, size in
                                                                             parts.trainable):
        # Nothing else explains it and it is how many trainable parameters there are, each counted once: one number
        # per tensor (of more than one tensor, where some tensor holds more than one entry).
        if "tensors" not in refuted:
            sentences.append(render(messages, "count.tensors", lang, fields))
    return render(messages, "label.count", lang, {"text": render(messages, "departure.join", lang).join(sentences)})


def _explaining(got: int, right: int, parts: CountParts) -> tuple[list[tuple[str, int, str]], tuple[int, ...] | None]:
    """The parts a wrong count may be told by, (name, size, kind), and the indices of the one subset of them whose
    sizes make up the difference, when exactly one does and it is all of one kind (None otherwise). A count above
    the module's: parts a right count leaves out (buffers, frozen or repeated parameters), counted in. A count below
    it: trainable parameters left out, or the parts a right count leaves out taken away from the total (a buffer
    subtracted though parameters() never held it): both kinds are searched together, so that a shortfall both
    could make up names neither."""
    if got > right:
        named = list(parts.uncounted)
    else:
        named = [(name, size, "trainable") for name, size in parts.trainable] + list(parts.uncounted)
    chosen = explaining_parts(abs(got - right), [size for _name, size, _kind in named])
    if chosen is None or len({named[index][2] == "trainable" for index in chosen}) != 1:
        return named, None
    # Every trainable parameter missing is a count of 0: naming them all says nothing the two counts do not.
    if got < right and sum(kind == "trainable" for _name, _size, kind in named) == len(chosen) and all(
            named[index][2] == "trainable" for index in chosen):
        return named, None
    return named, chosen


def _shape_or_times(got: int, right: int, parts: CountParts) -> str:
    """A wrong count that is exactly the module's trainable entries with one parameter counted per shape
    ("once_per_shape"), or a whole multiple of them: "times_bytes" where the multiple is the bytes one entry of their
    one dtype takes, else "times" (a multiple of 2 or more), where no parts a right count leaves out make up the
    extra; "" otherwise. count_line says it beside any parts that explain the count (both are true of it);
    count_fact folds checks by it only where no parts do."""
    if got == parts.once_per_shape() and got != right:
        return "once_per_shape"
    if right <= 0 or got <= right or got % right:
        return ""
    if _some_parts_sum_to(got - right, [size for _name, size, _kind in parts.uncounted]):
        return ""  # parts a right count leaves out may make up the extra (even two ways): a multiple may be chance
    times = got // right
    if parts.entry_bytes is not None and parts.entry_bytes[1] == times:
        return f"times_bytes:{times}"
    return f"times:{times}"


def count_fact(got: int, right: int, plain: Mapping[str, Any], refuted: Collection[str] = ()) -> str:
    """What a wrong count is, read from the case's module alone, as one fact a learner's code gives on every module:
    "tensors" (the number of trainable parameter tensors, each counted once, and nothing else explains it: the
    sentence count_line says), "none" (0 where the module has trainable parameters), "taken" (the total less parts
    a right count leaves out: count_line's parts_taken), "more:KIND" (parts of one kind a right count leaves out,
    counted in: count_line's parts_more, or kind_more where two sets make it up), "once_per_shape", "times:K" or
    "times_bytes:K" (where no set of parts explains it: _shape_or_times); "" for a right count or any other. Two
    checks whose counts are the same fact on their own modules fail for one cause. A fact in `refuted` is ""."""
    fact = _count_fact(got, right, plain)
    return "" if fact in refuted else fact


def _count_fact(got: int, right: int, plain: Mapping[str, Any]) -> str:
    if got == right:
        return ""
    if got == 0 < right:
        return "none"
    parts = CountParts.from_plain(plain)
    named, chosen = _explaining(got, right, parts)
    if got < right and (chosen is not None and named[chosen[0]][2] != "trainable"
                        or chosen is None and _all_buffers_taken(got, right, parts)):
        return "taken"  # parts a right count leaves out, taken away from the total (parts_taken, buffers_taken)
    if got > right and (kind := _one_kind_making_up(got - right, parts.uncounted)) is not None:
        return f"more:{kind}"  # parts of one kind a right count leaves out, counted in (count_line's parts_more)
    shape_fact = _shape_or_times(got, right, parts)
    if shape_fact and chosen is None:
        return shape_fact
    if not (got < right and got == len(parts.trainable) and got > 1
            and any(size > 1 for _name, size in parts.trainable)):
        return ""
    # As count_line: said only where no set of parts and no other build explains the count.
    rebuilt = len([change for change, count in parts.rebuilt if count == got]) == 1
    return "" if chosen is not None or rebuilt else "tensors"


@dataclass(frozen=True)
class SeenCount:
    """One count the learner's code gave on a module, beside the module's right count and parts (COUNT_PARTS)."""

    got: int
    right: int
    plain: Mapping[str, Any]


def _predicted(fact: str, right: int, plain: Mapping[str, Any]) -> int | None:
    """What a count that is `fact` (count_fact's) gives on a module, where one number follows from its parts alone:
    "none", "tensors", "once_per_shape" and the multiples; None for the others (which parts are taken or added)."""
    parts = CountParts.from_plain(plain)
    if fact == "none":
        return 0
    if fact == "tensors":
        return len(parts.trainable)
    if fact == "once_per_shape":
        once = parts.once_per_shape()
        return right if once is None else once
    if fact.startswith(("times:", "times_bytes:")):
        return right * int(fact.split(":")[1])
    return None


def refuted_count_facts(seen: Sequence[SeenCount]) -> frozenset[str]:
    """The facts of count_fact that some count the learner's code gave contradicts: a module where what the fact
    gives is not what their code counted (a count of the non-zero entries is one parameter per shape on a module
    with a zero LayerNorm bias, and right on the notes' module, where one per shape is far less: 12v's vz-pc-07)."""
    facts = {fact for count in seen if (fact := _count_fact(count.got, count.right, count.plain))}
    return frozenset(fact for fact in facts if any(
        (predicted := _predicted(fact, count.right, count.plain)) is not None and predicted != count.got
        for count in seen))


def count_fits(got: int, right: int, plain: Mapping[str, Any]) -> tuple[str, ...]:
    """The facts of count_fact a wrong count is consistent with on this module without proving them: "taken" where
    parts a right count leaves out make up the shortfall, though trainable parameters left out could as well (a
    16-entry mask beside a 16-entry weight). A check whose own module proves the fact explains this one too
    (autograder.running.diagnosing._fitting_folded)."""
    if got >= right:
        return ()
    parts = CountParts.from_plain(plain)
    return ("taken",) if _some_parts_sum_to(right - got, [size for _name, size, _kind in parts.uncounted]) else ()
