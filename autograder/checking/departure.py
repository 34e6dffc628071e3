"""Where a learner's computation first departs from the notes: the diagnosis stage between judging and rendering.

The course declares each exercise's computation as named steps in the notes' words (queries, keys, scores, scaled
scores, masked scores, weights, context vectors...): the expectation STEPS of a failing check's case, computed by the
reference (the full kit) or read from the stored vectors (the student kit). The learner's side is every tensor their
code made on the same case (autograder.checking.tensor_trace). `find_departure` finds the first step whose value
appears nowhere among the learner's tensors, up to the layouts a right program may use (a transpose, a view, a
reshape, a dtype, a contiguous copy), and reads facts from the learner's tensor that stands in its place (the first
one made from the last step that matched): a shape, a constant factor, entries shown that the notes hide, an axis
that sums to 1, the right numbers in the wrong places. `departure_line` says it in the notes' words, never with
code or the expected values. Needs no catalogue and no reference: the student kit ships it.
"""

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder.checking.tensor_trace import INPUT, TracedTensor
from autograder.i18n import Messages, pick, render

__all__ = ["Departure", "Fact", "STEPS", "StepValues", "departure_line", "find_departure", "step"]

# The expectation that holds a case's steps: [[step id, [the value on each route the notes teach], optional], ...],
# plain lists so that the student kit stores them as they are.
STEPS = "steps"
StepValues = Sequence[Sequence[Any]]
HIDDEN_BELOW = -1e8  # a fill this negative hides an entry as -inf does (the notes' -inf, a learner's -1e9 or finfo.min)
RELATIVE, ABSOLUTE = 1e-4, 1e-6  # tolerances of a match, relative to the step's largest magnitude
LIST_SEPARATOR = {"en": ", ", "zh": "、"}


def step(step_id: str, *values: torch.Tensor, optional: bool = False, ordered: bool = False,
         shaped: bool = False) -> list[Any]:
    """One declared step: its id (its name is the message `step.<id>`), its value on each route the notes teach,
    whether some taught route skips it (a missing optional step is no departure while a later step matches), and
    whether it is a change of layout itself (heads split or merged): then only the same numbers in the same order
    match it, under any shape, never a transpose of another tensor (which would be the step before it); whether
    (`shaped`) only its own shape matches it: a view that keeps the input's order is the step in that shape only
    (the notes' (b, num_tokens, num_heads, head_dim) before the transpose), a view straight to another shape is
    not it."""
    return [step_id, [value.detach() for value in values], optional, ordered, shaped]


@dataclass(frozen=True)
class Fact:
    """One thing read from the learner's tensor against the notes' step: a message key `departure.fact.<kind>` and
    its fields (shapes, counts, a factor, axes: never values of the answer)."""

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Departure:
    """One attempt's diagnosis: the steps the learner's run reproduces (in the notes' order), the first it does not
    (None: every step appears), the step the learner's output is when that is an earlier step than the last (with
    no departing step: the code computed the last step too, and returned an earlier one), the
    facts read from the tensor that stands in the departing step's place, and how many tensors were compared."""

    matched: tuple[str, ...]
    step: str | None
    returned: str | None = None
    facts: tuple[Fact, ...] = ()
    compared: int = 0
    last: str = ""  # the notes' last step (what the function returns)
    raised: bool = False  # the learner's code raised on the case: the trace ends where it raised
    reshaped: tuple[tuple[int, ...], tuple[int, ...]] | None = None  # every step matched; the output is the last
    # step's numbers in their order under another shape: (its shape, the notes')


def _normalised(tensor: torch.Tensor) -> torch.Tensor:
    value = tensor.detach().to("cpu", torch.float64)
    return torch.where(value <= HIDDEN_BELOW, torch.full_like(value, -torch.inf), value)


def _close(got: torch.Tensor, expected: torch.Tensor) -> bool:
    if got.shape != expected.shape:
        return False
    finite = expected[torch.isfinite(expected)]
    scale = float(finite.abs().max()) if finite.numel() else 1.0
    return bool(torch.allclose(got, expected, rtol=RELATIVE, atol=ABSOLUTE * max(scale, 1.0) + RELATIVE * 1e-2))


def _layouts(got: torch.Tensor, expected: torch.Tensor, transposed: bool = True) -> list[torch.Tensor]:
    """`got` in each layout a right program may hold `expected` in: the same numbers in the same order under another
    shape (a view, a reshape, a batch of one), or (`transposed`) its axes permuted, with size-1 axes dropped."""
    found = []
    if got.numel() == expected.numel():
        found.append(got.reshape(expected.shape))
    if not transposed:
        return found
    squeezed, target = _squeezed(got), _squeezed(expected)
    if squeezed.dim() == target.dim() and squeezed.dim() <= 4 and squeezed.numel() == target.numel():
        for order in itertools.permutations(range(squeezed.dim())):
            permuted = squeezed.permute(order)
            if order != tuple(range(squeezed.dim())) and permuted.shape == target.shape:
                found.append(permuted.reshape(expected.shape))
    return found


def _squeezed(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape([size for size in tensor.shape if size != 1])


def _matches(got: torch.Tensor, expected: torch.Tensor, transposed: bool = True) -> bool:
    return any(_close(layout, expected) for layout in _layouts(got, expected, transposed))


def _sorted_values(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape(-1).sort().values


def find_departure(steps: StepValues, traced: Sequence[TracedTensor], output: torch.Tensor | None) -> Departure:
    """The first declared step no tensor of `traced` holds (see the module's docstring), and what stands in its
    place. A step some taught route skips (optional) departs only when no later step matches either."""
    declared = [(str(entry[0]), [_normalised(value) for value in entry[1]], bool(entry[2])) for entry in steps]
    ordered = {str(entry[0]) for entry in steps if len(entry) > 3 and entry[3]}
    shaped = {str(entry[0]) for entry in steps if len(entry) > 4 and entry[4]}

    def holds(got: torch.Tensor, step_id: str, expected: torch.Tensor) -> bool:
        if step_id in shaped:
            return _close(got, expected)
        return _matches(got, expected, transposed=step_id not in ordered)
    learner = [_normalised(entry.value) for entry in traced]
    fingerprints = [_sorted_values(value) for value in learner]
    where: dict[str, int | None] = {}
    proven_at: dict[str, list[int]] = {}  # every learner tensor that proves the step, in the order made
    unproven: set[str] = set()  # a learner tensor holds the step, but holds an earlier one too: no proof of it
    coinciding: set[str] = set()  # of those, the steps whose values on this case are an earlier step's (no constant)
    for position, (step_id, values, _optional) in enumerate(declared):
        holding = [index for index, value in enumerate(learner)
                   if traced[index].op != INPUT  # a step is computed: an argument as it came is none
                   and any(value.numel() == expected.numel()
                           and _close(fingerprints[index], _sorted_values(expected))
                           and holds(value, step_id, expected)
                           and _layout_proven(index, traced, learner, expected) for expected in values)]
        proving = [index for index in holding if not _uninformative(learner[index], declared[:position], holds)]
        where[step_id] = proving[0] if proving else None
        proven_at[step_id] = proving
        if holding and not proving:
            unproven.add(step_id)
            if not any(_constant(learner[index]) for index in holding):
                coinciding.add(step_id)
    order = [step_id for step_id, _values, _optional in declared]
    departing = None
    for position, (step_id, _values, optional) in enumerate(declared):
        if where[step_id] is not None:
            continue
        if (optional or step_id in unproven) and any(where[later] is not None for later in order[position + 1:]):
            continue  # a later step holds: a coincident step is no departure, nor claimed as reproduced
        if step_id in coinciding and output is not None:
            continue  # its values are there, coinciding with an earlier step's: on this case it does not depart
        departing = position
        break
    last = order[-1] if order else ""
    if departing is None:
        early = _returned_instead(declared, output, holds)
        # The code went on from the step it returns: a tensor made from it holds the last step (not one made
        # otherwise, such as the input it was given, which is the context vectors of a single token).
        returned_at = set(proven_at.get(early, ())) if early is not None else set()
        if returned_at and any(_made_from(traced, index, returned_at) for index in proven_at.get(last, ())):
            return Departure(tuple(order), None, early, compared=len(learner), last=last)
        reshaped = None
        if output is not None and declared:
            got, expected = _normalised(output), declared[-1][1][0]
            # Axes of size 1 aside: the steps may be declared with a batch of one the output does not have.
            if _squeezed(got).shape != _squeezed(expected).shape and got.numel() == expected.numel() and _close(
                    got.reshape(expected.shape), expected):
                reshaped = (tuple(got.shape), tuple(expected.shape))
        return Departure(tuple(order), None, compared=len(learner), last=last, reshaped=reshaped)
    returned = None
    if output is not None:  # the function stopped early: it returns a step before the last
        got = _normalised(output)
        # An output that holds the last step as well (one token: its context vector is its value vector), or one
        # number throughout, proves no early return.
        holds_last = any(holds(got, last, value) for value in declared[-1][1])
        returning = [] if holds_last or _constant(got) else [step_id for step_id, values, _optional in declared[:-1]
                                           if any(holds(got, step_id, value) for value in values)]
        # Steps that hold the same values on this case (scores and scaled scores for heads of size 1): the output
        # proves only the earliest of them.
        returned = returning[0] if returning else None
    if returned is not None and order.index(returned) >= departing:
        departing = order.index(returned) + 1  # a step it skipped on the way is not where it departs
    matched = tuple(step_id for step_id in order[:departing] if where[step_id] is not None)
    facts: tuple[Fact, ...] = ()
    expected_values = declared[departing][1]
    stand_in = _stand_in(traced, learner, [where[step_id] for step_id in matched], expected_values[0].numel(),
                         order[departing] in ordered)
    if stand_in is not None and returned is None:
        facts = _facts(learner[stand_in], expected_values)
    return Departure(matched, order[departing], returned, facts, len(learner), last)


# Ops that give the numbers of the one tensor they read in another layout, as tensor_trace names them.
LAYOUT_OPS = frozenset({"t", "transpose", "permute", "view", "_unsafe_view", "reshape", "squeeze", "unsqueeze",
                        "contiguous", "swapaxes", "swapdims", "movedim", "numpy_T", "mT", "adjoint", "flatten",
                        "unflatten", "view_as", "reshape_as"})


def _layout_proven(index: int, traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                   expected: torch.Tensor) -> bool:
    """Whether the learner's tensor at `index`, which holds `expected` up to a layout, proves it holds the step: it
    holds it in its own order (a view, a reshape, a dtype, a copy), or only with its axes permuted while no tensor
    the op read is unchanged by that permutation. A layout that leaves what the op read as it was proves nothing on
    this case: the notes' scores x @ x.T are symmetric, so weights normalised over the queries are the notes'
    weights transposed, though the code computes other weights (a case whose scores are not symmetric shows it).
    A tensor an op of layout made (a transpose, a view: the code's, or autograd's in a gradient check) is judged at
    the tensor that made its numbers."""
    while traced[index].op in LAYOUT_OPS and len(traced[index].inputs) == 1 and \
            learner[traced[index].inputs[0]].numel() == learner[index].numel():
        index = traced[index].inputs[0]
    got = learner[index]
    if got.numel() == expected.numel() and _close(got.reshape(expected.shape), expected):
        return True
    squeezed, target = _squeezed(got), _squeezed(expected)
    if squeezed.dim() != target.dim() or squeezed.dim() > 4:
        return True  # held some other way than a permutation: not this rule's matter
    orders = [order for order in itertools.permutations(range(squeezed.dim()))
              if squeezed.permute(order).shape == target.shape
              and _close(squeezed.permute(order).reshape(expected.shape), expected)]
    read = [_squeezed(learner[source]) for source in traced[index].inputs]
    return any(not any(_unchanged_by(value, order) for value in read) for order in orders) or not orders


def _unchanged_by(value: torch.Tensor, order: tuple[int, ...]) -> bool:
    """Whether permuting `value`'s axes by `order` (a non-trivial permutation) leaves it as it is: a symmetric
    matrix under a transpose."""
    if value.dim() != len(order) or value.numel() <= 1 or order == tuple(range(len(order))):
        return False
    permuted = value.permute(order)
    return permuted.shape == value.shape and _close(permuted, value)


def _made_from(traced: Sequence[TracedTensor], index: int, sources: set[int]) -> bool:
    """Whether the traced tensor at `index` was computed from one of `sources` (read by an op on its way)."""
    seen, todo = set(), list(traced[index].inputs)
    while todo:
        read = todo.pop()
        if read in sources:
            return True
        if read not in seen:
            seen.add(read)
            todo.extend(traced[read].inputs)
    return False


def _returned_instead(declared: Sequence[tuple[str, list[torch.Tensor], bool]], output: torch.Tensor | None,
                      holds: Callable[[torch.Tensor, str, torch.Tensor], bool]) -> str | None:
    """The step before the last that the function returns, when its code computed the notes' last step too: the one
    earlier step its output holds, where the output holds neither the last step nor one number throughout. None
    when the output holds two earlier steps (the case does not tell them apart: scores and scaled scores for heads
    of size 1), or none."""
    if output is None or not declared:
        return None
    got = _normalised(output)
    last, last_values, _optional = declared[-1]
    if _constant(got) or any(holds(got, last, value) for value in last_values):
        return None
    held = [step_id for step_id, values, _optional in declared[:-1] if any(holds(got, step_id, value)
                                                                          for value in values)]
    return held[0] if len(held) == 1 else None


def _uninformative(value: torch.Tensor, earlier: Sequence[tuple[str, list[torch.Tensor], bool]],
                   holds: Callable[[torch.Tensor, str, torch.Tensor], bool]) -> bool:
    """Whether a learner tensor that holds a step proves nothing of it on this case: its entries are all one number
    (a tensor of zeros is made many ways), or it holds an earlier step as well (on the notes' heads of size 1 the
    scores are the scaled scores: the tensor proves only the earlier step)."""
    if _constant(value):
        return True
    return any(value.numel() == expected.numel() and holds(value, step_id, expected)
               for step_id, values, _optional in earlier for expected in values)


def _constant(value: torch.Tensor) -> bool:
    """Whether every entry is one number (more than one entry): a tensor of zeros is made many ways."""
    return value.numel() > 1 and bool((value == value.reshape(-1)[0]).all())


def _stand_in(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], matched_at: Sequence[int | None],
              size: int, layout_step: bool = False) -> int | None:
    """The learner's tensor in the departing step's place, after the last matched step's tensor: the first op that
    read it (or a copy of it in another layout) and made new numbers of the step's size. For a step that is a
    change of layout (`layout_step`), a copy in another layout is what stands in its place. None when no step
    matched or no such op read it: the trace holds the probe's own tensors too (the case's input it builds, what it
    computes from the learner's output), and only a tensor made from the learner's last right step is surely
    theirs, so no fact is read from any other."""
    found = [index for index in matched_at if index is not None]
    if not found:
        return None
    source = found[-1]
    sources = {source}
    for index in range(source + 1, len(traced)):
        entry = traced[index]
        if entry.op == INPUT:
            continue
        reads = bool(sources & set(entry.inputs))
        copy = reads and learner[index].numel() == learner[source].numel() and _matches(learner[index], learner[source])
        if copy and not layout_step:
            sources.add(index)  # the same step in another layout: what reads it next is the stand-in
            continue
        if reads and learner[index].numel() == size:
            return index
        if copy:
            sources.add(index)  # a view of the last step (a layout step's stand-in may read that)
    return None


# The facts that say most, first: which route's comparison to tell (the one whose first fact is most precise).
FACT_ORDER = ("rearranged", "factor", "sums_axis", "shape", "shown", "hidden", "not_normalised", "differs")


def _facts(got: torch.Tensor, expected_values: Sequence[torch.Tensor]) -> tuple[Fact, ...]:
    """What differs between the learner's tensor and the notes' step, read from the two, against the route whose
    comparison says most (FACT_ORDER)."""
    found = [_facts_against(got, expected) for expected in expected_values]
    return min(found, key=lambda facts: FACT_ORDER.index(facts[0].kind), default=())


def _facts_against(got: torch.Tensor, expected: torch.Tensor) -> tuple[Fact, ...]:
    if got.numel() != expected.numel():
        return (Fact("shape", {"got": tuple(got.shape), "expected": tuple(expected.shape)}),)
    layouts = [layout for layout in _layouts(got, expected)] or [got.reshape(expected.shape)]
    same = layouts[0]
    facts: list[Fact] = []
    if _close(_sorted_values(same), _sorted_values(expected)):
        return (Fact("rearranged"),)
    shown = int((torch.isinf(expected) & ~torch.isinf(same)).sum())
    # An entry the notes keep is finite and not 0: a weight of 0 is hidden as a score of -inf is.
    hidden = int((torch.isinf(same) & torch.isfinite(expected) & (expected != 0)).sum())
    if shown:
        facts.append(Fact("shown", {"count": shown}))
    if hidden:
        facts.append(Fact("hidden", {"count": hidden}))
    both = torch.isfinite(same) & torch.isfinite(expected) & (expected.abs() > 1e-9)
    if not shown and not hidden and int(both.sum()) > 1:
        ratio = same[both] / expected[both]
        factor = float(ratio.mean())
        if abs(factor - 1) > 1e-3 and bool(torch.allclose(ratio, torch.full_like(ratio, factor), rtol=1e-3)):
            facts.append(Fact("factor", {"factor": f"{factor:.3g}"}))
    if not facts and expected.dim() >= 1 and torch.isfinite(expected).all() and torch.isfinite(same).all():
        axis = expected.dim() - 1
        if _sums_to_one(expected, axis):
            others = [other for other in range(expected.dim()) if other != axis and expected.shape[other] > 1
                      and _sums_to_one(same, other)]
            if others:
                facts.append(Fact("sums_axis", {"axis": others[0], "expected_axis": axis}))
            elif not _sums_to_one(same, axis):
                facts.append(Fact("not_normalised", {"axis": axis}))
    return tuple(facts) or (Fact("differs"),)


def _sums_to_one(tensor: torch.Tensor, axis: int) -> bool:
    sums = tensor.sum(dim=axis)
    return bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


def departure_line(departure: Departure, lang: str, messages: Messages) -> str:
    """The rung-2 line for a departure, in the notes' words; "" when every step matched (nothing to localise), unless
    the output is the last step's numbers in their order under another shape."""
    if departure.step is None:
        if departure.returned is not None:  # every step computed, an earlier one returned
            text = render(messages, "departure.returned_computed", lang, {
                "returned": render(messages, f"step.{departure.returned}", lang),
                "last": render(messages, f"step.{departure.last}", lang)})
            return render(messages, "label.departure", lang, {"text": text})
        if departure.reshaped is None:
            return ""
        got, expected = departure.reshaped
        return render(messages, "label.departure", lang, {"text": render(messages, "departure.reshaped", lang, {
            "last": render(messages, f"step.{departure.last}", lang), "got": got, "expected": expected})})

    def name(step_id: str) -> str:
        return render(messages, f"step.{step_id}", lang)

    fields = {"step": name(departure.step), "count": departure.compared}
    if departure.matched:
        fields["matched"] = pick(LIST_SEPARATOR, lang).join(name(step_id) for step_id in departure.matched)
        key = "departure.after"
    else:
        key = "departure.first" if departure.compared else "departure.nothing"
    if departure.raised and not departure.facts:
        # The trace ends where the learner's code raised: no tensor of theirs holds the step, none stands in its place.
        key = "departure.raised_after" if departure.matched else "departure.raised_first"
    parts = [render(messages, key, lang, fields)]
    parts += [render(messages, f"departure.fact.{fact.kind}", lang, {**fact.fields, "step": fields["step"]})
              for fact in departure.facts]
    if departure.raised and departure.facts:
        parts.append(render(messages, "departure.then_raised", lang))
    if departure.returned is not None:
        parts.append(render(messages, "departure.returned", lang, {
            "returned": name(departure.returned), "last": name(departure.last)}))
    return render(messages, "label.departure", lang, {"text": render(messages, "departure.join", lang).join(parts)})
