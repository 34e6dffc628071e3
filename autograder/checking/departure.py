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

import dataclasses
import itertools
import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder.checking.step_relations import (
    alternative_computation,
    case_sizes,
    flipped_bands,
    named_size,
    permuted_axis,
    reordered_axes,
    reproduces,
    restacked_blocks,
    sums_to_one_overall,
    transposed_blocks,
    zeroed_entries,
)
from autograder.checking.tensor_trace import (
    INPUT,
    LIFTED,
    UNUSED,
    UNWRITTEN,
    WRITTEN,
    RaisedOp,
    TracedTensor,
    recorded_output,
)
from autograder.i18n import Messages, pick, render

__all__ = ["LIST_SEPARATOR", "STEPS", "Departure", "Fact", "StepValues", "departure_line", "find_departure",
           "listed", "made_many_ways", "matches_up_to_layout", "normalised_value", "one_number",
           "recorded_output", "relation_reproduced", "sorted_values", "step", "values_close"]

# The expectation that holds a case's steps: [[step id, [the value on each route the notes teach], optional], ...],
# plain lists so that the student kit stores them as they are.
STEPS = "steps"
StepValues = Sequence[Sequence[Any]]
HIDDEN_BELOW = -1e8  # a fill this negative hides an entry as -inf does (the notes' -inf, a learner's -1e9 or finfo.min)
RELATIVE, ABSOLUTE = 1e-4, 1e-6  # tolerances of a match, relative to the step's largest magnitude
LIST_SEPARATOR = {"en": ", ", "zh": "、"}
LAST_SEPARATOR = {"en": " and ", "zh": "和"}  # before the last of a list of sources


def listed(items: Sequence[str], lang: str) -> str:
    """`items` as one list in `lang`: "a, b and c" ("a、b和c")."""
    return pick(LAST_SEPARATOR, lang).join(
        [pick(LIST_SEPARATOR, lang).join(items[:-1]), items[-1]] if len(items) > 1 else items)


def step(step_id: str, *values: torch.Tensor, optional: bool = False, ordered: bool = False,
         shaped: bool = False, from_inputs: bool = True, axes: Sequence[tuple[str, int]] = ()) -> list[Any]:
    """One declared step: its id (its name is the message `step.<id>`), its value on each route the notes teach,
    whether some taught route skips it (a missing optional step is no departure while a later step matches), and
    whether it is a change of layout itself (heads split or merged): then only the same numbers in the same order
    match it, under any shape, never a transpose of another tensor (which would be the step before it); whether
    (`shaped`) only its own shape matches it: a view that keeps the input's order is the step in that shape only
    (the notes' (b, num_tokens, num_heads, head_dim) before the transpose), a view straight to another shape is
    not it; whether (`from_inputs`) it is computed from the case's inputs, so that autograd carries a gradient back
    through it (a causal mask is made from the sizes alone: autograder.checking.gradient_departure reads no
    gradient of it); and (`axes`) the named axes of the notes' words (batch, heads, tokens, features) the step's
    value holds in its order, each with its size, as (name, size) pairs whose sizes multiply to its count of entries
    (a merged step names the heads and features its last dimension holds): a learner's tensor holding its numbers
    with those axes in another order is said so (step_relations.reordered_axes)."""
    return [step_id, [value.detach() for value in values], optional, ordered, shaped, from_inputs,
            [[str(name), int(size)] for name, size in axes]]


@dataclass(frozen=True)
class Fact:
    """One thing read from the learner's tensor against the notes' step: a message key `departure.fact.<kind>` and
    its fields (shapes, counts, a factor, axes: never values of the answer)."""

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    # What it speaks of: the learner's tensor in the departing step's place (STAND_IN), the result their function
    # returns against the notes' last step (OUTPUT), the first tensor made from the last matched step against
    # that step (FROM_PREVIOUS), or, for code that raised, the next tensor it made from its matched steps (NEXT);
    # `of` names the step compared with when it is not the departing one.
    about: str = "stand_in"
    of: str = ""


STAND_IN, OUTPUT, FROM_PREVIOUS = "stand_in", "output", "from_previous"
NAMED_REORDERINGS = ("heads", "tokens", "features")  # a dimension whose slices reordered are said by its name
NEXT, NEXT_AGAIN = "next", "next_again"  # code that raised: the next tensor it made from its matched steps
LATER = "later"  # a tensor made from that next one (its sum): not the next, but still made from the matched steps
# Facts that say how a tensor departs; "differs" and a shape (rung 1 shows the shapes) say no more than the step.
UNTOLD = ("differs", "shape")
FACTOR_KINDS = ("factor", "divided", "factor_root", "divided_root", "factor_size", "divided_size")
RELATIONS = (*FACTOR_KINDS, "permuted", "reordered", "transposed", "blocks_transposed", "restacked", "rearranged",
             "plus", "minus", "power", "sums_axis", "sums_all", "bands", "recoded")


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
    output_facts: tuple[Fact, ...] = ()  # every step held; the result is the last step times a constant (issue 58)
    held_unproven: bool = False  # a tensor of the code holds the departing step's numbers, which prove nothing on
    # this case (one number throughout): never said to be held by no tensor (issue 58)
    # every step matched; the output is the last step with, on every row, a vector added again that the computation
    # of the last step had already added (a bias added twice): departure._added_again
    added_again: bool = False
    # The optional step declared right after the departing one, which no tensor of the code holds either (the masked
    # scores, which the route that scales after masking makes before the scaled scores): code that raised before
    # both is told so of both, not only of the one the declaration lists first.
    or_next: str | None = None
    # A tensor the code made holds the departing step, but as values an op returned beside indices the code went on
    # with alone (torch.max(...)[1]): made, never used; "none of your tensors holds it" would be false.
    held_unused: bool = False
    # A tensor the code made holds the departing step, but the code went on with it only merged entry by entry with
    # other numbers (torch.where): made, then replaced in part; "none of your tensors holds it" would be false.
    held_merged: bool = False
    # Every step this case leaves open as where the code first departs: those after the last step it proves the
    # code reproduces, up to the first no tensor of the code holds at all (a step held only by numbers that prove
    # nothing, or coinciding with an earlier step's, may be where it departs too). () where the case proves a step
    # after the departing one, or the code returns an earlier step. A departure another check of the exercise
    # proves at one of them is this check's cause as well (autograder.running.diagnosing._fitting_folded).
    fits: tuple[str, ...] = ()

    @property
    def located_step(self) -> str:
        """The step the run is shown to depart at, as records and the class report keep it: "" where every step
        appears, or where the departing step's numbers are held by a tensor of the code and prove nothing (the
        feedback then says the case does not show where the code departs)."""
        return "" if self.held_unproven and self.compared else self.step or ""


def normalised_value(tensor: torch.Tensor) -> torch.Tensor:
    value = tensor.detach().to("cpu", torch.float64)
    return torch.where(value <= HIDDEN_BELOW, torch.full_like(value, -torch.inf), value)


def values_close(got: torch.Tensor, expected: torch.Tensor) -> bool:
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


def matches_up_to_layout(got: torch.Tensor, expected: torch.Tensor, transposed: bool = True) -> bool:
    return any(values_close(layout, expected) for layout in _layouts(got, expected, transposed))


def held_joined(got: torch.Tensor, expected: torch.Tensor, traced: Sequence[TracedTensor]) -> bool:
    """Whether `got` holds a step that only its own shape holds (`step(shaped=True)`: a view) in a layout a right
    program may use for it: the same numbers in the same order, the two axes the view made (its last two) as they
    are, and adjacent axes before them joined or split (the view (b, tokens, heads, head size) as (b * tokens,
    heads, head size)). Not a layout that joins those two again: that is the input, or the probe's own making of it
    (a flat arange), before any step split it. Nor a copy of a tensor the call read as it came."""
    if (got.shape == expected.shape or got.numel() != expected.numel() or got.dim() < 2 or expected.dim() < 2
            or got.shape[-2:] != expected.shape[-2:] or not _axes_joined(got.shape[:-2], expected.shape[:-2])):
        return False
    if not values_close(got.reshape(expected.shape), expected):
        return False
    return not any(entry.op == INPUT and values_close(normalised_value(entry.value), got) for entry in traced)


def adjacent_regrouping(one: Sequence[int], other: Sequence[int]) -> bool:
    """Whether one shape is the other with runs of adjacent axes joined into one (sizes 1 aside), either way. An
    empty axis joins nothing."""
    first, second = [size for size in one if size != 1], [size for size in other if size != 1]
    return 0 not in first and 0 not in second and _axes_joined(first, second)


def _axes_joined(one: Sequence[int], other: Sequence[int]) -> bool:
    """Whether one shape is the other with runs of adjacent axes joined into one, either way, each axis of the
    coarser taking at least one of the finer's in order (an axis of size 1 too): (b * tokens,) for (b, tokens), but
    not (tokens, 1) for (1, tokens), which holds the same numbers with the batch and tokens named the other way."""
    def joins(coarse: Sequence[int], fine: Sequence[int]) -> bool:
        position = 0
        for size in coarse:
            if position == len(fine):
                return False
            product = fine[position]
            position += 1
            while product < size and position < len(fine):
                product *= fine[position]
                position += 1
            if product != size:
                return False
            while position < len(fine) and fine[position] == 1:
                position += 1  # a trailing axis of size 1 joined in: (b,) for (b, 1)
        return position == len(fine)
    return joins(one, other) or joins(other, one)


def entries_correspond(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether each entry of `got` has a known place in the notes' step, so that entries can be counted against it
    (shown, hidden, zeroed, NaN): its shape is the step's, up to axes of size 1 and adjacent axes joined or split
    (the same order). In another arrangement of axes (tokens before the batch) whose values differ from the step's,
    no layout is proven: a count read through a reshape would count entries of other places."""
    return got.shape == expected.shape or adjacent_regrouping(got.shape, expected.shape)


def sorted_values(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape(-1).sort().values


def _uncomputed(entry: TracedTensor) -> bool:
    """Whether the traced tensor holds numbers no op computed: one the call read without making it (an argument, a
    parameter), or one made from Python numbers (torch.tensor: the notes' inputs a probe passes are made so). As a
    step's holder a tensor made from Python numbers counts as computed, as a factory's (rand) does: the learner's
    exponentials may be made so (torch.tensor of math.exp's)."""
    return entry.op in (INPUT, LIFTED, UNWRITTEN)


def find_departure(steps: StepValues, traced: Sequence[TracedTensor], output: torch.Tensor | None,
                   raised: bool = False, raised_at: RaisedOp | None = None) -> Departure:
    """The first declared step no tensor of `traced` holds (see the module's docstring), and what stands in its
    place. A step some taught route skips (optional) departs only when no later step matches either. `raised`: the
    learner's code raised on the case (the trace ends there), so the next tensor it made from its right steps is
    said even when its size is not the step's; `raised_at`: the op whose raise ended the run (the operands it read
    are said when nothing else is). Values the code made and never used (UNUSED), or went on with only merged with
    other numbers (_merged_away), hold no step; where they hold the departing one, `held_unused` or `held_merged`
    says so."""
    declared = [(str(entry[0]), [normalised_value(value) for value in entry[1]], bool(entry[2])) for entry in steps]
    learner = [normalised_value(entry.value) for entry in traced]
    merged = _merged_away(traced, learner, declared)
    departure = _first_departing(steps, declared, traced, learner, merged, output, raised, raised_at)
    if departure.step is None:
        return departure
    expected = [value for step_id, values, _optional in declared if step_id == departure.step for value in values]

    def holds_step(index: int) -> bool:
        return any(matches_up_to_layout(learner[index], value) for value in expected)
    if any(entry.op == UNUSED and holds_step(index) for index, entry in enumerate(traced)):
        return dataclasses.replace(departure, held_unused=True)
    return dataclasses.replace(departure, held_merged=True) if any(holds_step(index) for index in merged) else departure


def _first_departing(steps: StepValues, declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                     traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], merged_away: Collection[int],
                     output: torch.Tensor | None, raised: bool, raised_at: RaisedOp | None) -> Departure:
    """find_departure's search, before it reads whether unused or merged-away values hold the departing step:
    `declared` the steps' normalised values, `learner` the traced tensors', `merged_away` _merged_away's."""
    ordered = {str(entry[0]) for entry in steps if len(entry) > 3 and entry[3]}
    shaped = {str(entry[0]) for entry in steps if len(entry) > 4 and entry[4]}
    named_axes = {str(entry[0]): tuple((str(name), int(size)) for name, size in entry[6])
                  for entry in steps if len(entry) > 6 and entry[6]}
    step_dtypes = {str(entry[0]): str(entry[1][0].dtype).removeprefix("torch.") for entry in steps if entry[1]}

    def holds(got: torch.Tensor, step_id: str, expected: torch.Tensor) -> bool:
        if step_id in shaped:
            return values_close(got, expected) or held_joined(got, expected, traced)
        return matches_up_to_layout(got, expected, transposed=step_id not in ordered)
    fingerprints = [sorted_values(value) for value in learner]
    where: dict[str, int | None] = {}
    proven_at: dict[str, list[int]] = {}  # every learner tensor that proves the step, in the order made
    unproven: set[str] = set()  # a learner tensor holds the step, but holds an earlier one too: no proof of it
    coinciding: set[str] = set()  # of those, the steps whose values on this case are an earlier step's (no constant)
    in_pieces: set[str] = set()  # no tensor holds the step whole, but tensors of the code hold each of its slices
    held_by: dict[str, list[int]] = {}  # every learner tensor that holds the step, proving it or not
    for position, (step_id, values, _optional) in enumerate(declared):
        holding = [index for index, value in enumerate(learner)
                   # a step is computed: an argument as it came is none, nor values the code never used, nor
                   # values it went on with only as merged with others entry by entry (_merged_away)
                   if traced[index].op not in (INPUT, UNUSED) and index not in merged_away
                   and any(value.numel() == expected.numel()
                           and values_close(fingerprints[index], sorted_values(expected))
                           and holds(value, step_id, expected)
                           and _layout_proven(index, traced, learner, expected) for expected in values)]
        proving = [index for index in holding if not _uninformative(learner[index], declared[:position], holds)]
        held_by[step_id] = holding
        where[step_id] = proving[0] if proving else None
        proven_at[step_id] = proving
        if not holding and _held_in_pieces(values, learner, traced):
            in_pieces.add(step_id)
        if holding and not proving:
            unproven.add(step_id)
            if not any(one_number(learner[index]) for index in holding):
                coinciding.add(step_id)
    order = [step_id for step_id, _values, _optional in declared]
    departing = None
    for position, (step_id, _values, optional) in enumerate(declared):
        if where[step_id] is not None:
            continue
        if (optional or step_id in unproven or step_id in in_pieces) and any(
                where[later] is not None for later in order[position + 1:]):
            continue  # a later step holds: a coincident step is no departure, nor claimed as reproduced
        if step_id in coinciding and (output is not None or (raised and optional)):
            # Its values are there, coinciding with an earlier step's: on this case it does not depart. (Code that
            # raised after them raised before a later step; a step every route takes, held only where its values are
            # an earlier one's, is the one it raised before: scores the code never scaled.)
            continue
        departing = position
        break
    last = order[-1] if order else ""
    if departing is not None and raised and raised_at is not None:
        past = _raised_out_of_order(declared, where, proven_at, traced, raised_at, departing)
        if past != departing:  # it raised where it made a later step: what that op read is all that is said
            reached = tuple(step_id for step_id in order[:past] if where[step_id] is not None)
            operands = _raised_operands(traced, raised_at, {step_id: proven_at[step_id] for step_id in reached},
                                        declared, step_dtypes)
            return Departure(reached, order[past], None, operands, len(learner), order[-1], raised)
    if departing is None:
        early = _returned_instead(declared, output, holds)
        # The code went on from the step it returns: a tensor made from it holds the last step (not one made
        # otherwise, such as the input it was given, which is the context vectors of a single token).
        returned_at = set(proven_at.get(early, ())) if early is not None else set()
        if returned_at and any(_made_from(traced, index, returned_at) for index in proven_at.get(last, ())):
            return Departure(tuple(order), None, early, compared=len(learner), last=last)
        reshaped = None
        if output is not None and declared:
            got, expected = normalised_value(output), declared[-1][1][0]
            # Axes of size 1 aside: the steps may be declared with a batch of one the output does not have.
            if _squeezed(got).shape != _squeezed(expected).shape and got.numel() == expected.numel() and values_close(
                    got.reshape(expected.shape), expected):
                reshaped = (tuple(got.shape), tuple(expected.shape))
        doubled = reshaped is None and _added_again(traced, learner, output, declared, proven_at.get(last, ()))
        scaled = () if reshaped is not None or doubled or where.get(last) is None else _output_scaled(declared, output)
        return Departure(tuple(order), None, compared=len(learner), last=last, reshaped=reshaped,
                         output_facts=scaled, added_again=doubled)
    returned = None
    if output is not None:  # the function stopped early: it returns a step before the last
        got = normalised_value(output)
        # An output that holds the last step as well (one token: its context vector is its value vector), or one
        # number throughout, proves no early return.
        holds_last = any(holds(got, last, value) for value in declared[-1][1])
        returning = [] if holds_last or one_number(got) else [step_id for step_id, values, _optional in declared[:-1]
                                           if any(holds(got, step_id, value) for value in values)]
        # Steps that hold the same values on this case (scores and scaled scores for heads of size 1): the output
        # proves only the earliest of them.
        returned = returning[0] if returning else None
    if returned is not None and order.index(returned) >= departing:
        departing = order.index(returned) + 1  # a step it skipped on the way is not where it departs
    matched = tuple(step_id for step_id in order[:departing] if where[step_id] is not None)
    facts: tuple[Fact, ...] = ()
    expected_values = declared[departing][1]
    # Made from the first tensor of the last matched step: a second computation of it is not read from (the keys
    # computed again where the values go are the values' place, not a step after the keys).
    stand_in = _stand_in(traced, learner, proven_at[matched[-1]][:1] if matched else [], expected_values[0].numel(),
                         order[departing] in ordered)
    case = _Case(case_sizes({step_id: tuple(values[0].shape) for step_id, values, _optional in declared}),
                 [(step_id, values) for step_id, values, _optional in declared if step_id != order[departing]],
                 axes=named_axes.get(order[departing], ()))
    # A tensor made from the learner's right steps that holds the step's numbers in other places (heads cut as
    # (head_dim, num_heads)) is what stands in its place, wherever it is made.
    moved = None if returned is not None else _holding_rearranged(
        traced, learner, [index for step_id in matched for index in proven_at[step_id]], expected_values,
        lambda got, expected: holds(got, order[departing], expected) or (order[departing] not in ordered and any(
            got.numel() == other.numel() and holds(got, step_id, other)
            for step_id, values in case.others for other in values)))  # a change of layout holds its source's
    if moved is not None and any(moved in proven_at[step_id] for step_id in matched) and _computed_on(
            traced, learner, moved, {tuple(expected.shape) for expected in expected_values}):
        # A matched step's own tensor (the values) the code made other numbers of its size from (out_proj applied to
        # them before the split): those stand in the step's place, not it (issue 58, 12o's oz-ma-02).
        moved = None
    if moved is not None:
        facts = _facts(learner[moved], expected_values, case)
        if any(moved in proven_at[step_id] for step_id in matched) and not any(
                learner[moved].shape == expected.shape for expected in expected_values):
            # A matched step's own tensor (the queries, before any split) holds the numbers, not the learner's
            # tensor in the step's place: how its axes are ordered says nothing of the code that makes the step.
            facts = tuple(Fact("rearranged") if fact.kind == "reordered" else fact for fact in facts)
    elif stand_in is not None and returned is None:
        chosen: int | None = None
        # A stand-in that is another of the notes' steps (the masked scores of the route that scales after masking)
        # is the learner's right step of that route: what their code makes from it next says how it departs, and
        # the step itself only when that says nothing.
        sources = proven_at[matched[-1]][:1]
        candidates: list[int | None] = [stand_in]
        latest: int | None = stand_in
        while latest is not None and len(candidates) <= len(declared) and any(
                holds(learner[latest], step_id, value) for step_id, values in case.others for value in values):
            sources.append(latest)
            latest = _stand_in(traced, learner, sources, expected_values[0].numel(), order[departing] in ordered)
            candidates.append(latest)
        steps_values = dict(declared_values(declared))
        for candidate in [*candidates[1:], candidates[0]]:
            chosen = candidate
            if candidate is None or any(
                    holds(learner[candidate], step_id, value)
                    and all(read in proven_at[step_id] or matches_up_to_layout(learner[read], value)
                            for read in traced[candidate].inputs)
                    for step_id in matched for value in steps_values[step_id]):
                continue  # a step it reproduced, made from that step alone (a layout the copy test missed): no stand-in
            facts = _candidate_facts(learner[candidate], expected_values, declared, matched[-1], case)
            if facts and facts[0].kind in MASK_COUNTS:
                # Entries the notes hide, shown by a tensor the learner's code hides them in next (their scores
                # before their mask): that masked tensor is the one in the step's place, and what it shows is said.
                masked = _masked_later(traced, learner, candidate, expected_values) or _masked_further(
                    traced, learner, candidate)
                if masked is not None:
                    chosen = masked
                    facts = _candidate_facts(learner[masked], expected_values, declared, matched[-1], case)
            # Past another step, only a relation that ties the tensor to the step says it stands in its place.
            if facts and (facts[0].kind in RELATIONS or candidate == candidates[0]):
                break
            facts = ()
        if chosen is not None and facts and facts[0].kind in (*UNTOLD, "not_normalised") and facts[0].about == STAND_IN:
            # Another computation of the step's own operands says how, where "not normalised" or nothing did.
            first_at = proven_at[order[0]][0] if order[0] in matched and proven_at[order[0]] else None
            facts = _alternative_facts(traced, learner, chosen, expected_values, declared, matched,
                                       first_at) or facts
        if chosen is not None and facts and facts[0].kind in UNTOLD and facts[0].about == STAND_IN:
            # Other numbers: which of the learner's steps that match the notes' the op that made it read.
            read_steps = _made_from_steps(traced, chosen, {index: step_id for step_id in matched
                                                           for index in proven_at[step_id]})
            if read_steps:
                facts = (*facts, Fact("made_from", {"sources": read_steps}))
        if (chosen is not None and facts and facts[0].kind == "not_normalised" and facts[0].about == STAND_IN
                and _normalised_later(traced, learner, chosen, int(facts[0].fields["axis"]))):
            # A tensor the code makes from it next, of its shape, sums to 1 along that axis (a softmax of the
            # absolute scores): that one is in the step's place as much, and "does not sum to 1" is false of it.
            facts = ()
    elif not matched and returned is None:
        # Nothing matched before the notes' first step: a tensor made from the case's inputs alone, of the step's
        # size, that a relation ties to the step stands in its place (the three weights each transposed, then
        # stacked).
        facts = _first_step_facts(traced, learner, expected_values, case) or _first_step_alternative(
            traced, learner, expected_values, _output_index(traced, learner, output))
    if (returned is None and output is not None and (not facts or facts[0].kind in UNTOLD)
            and not any(holds(normalised_value(output), last, value) for value in declared[-1][1])):
        # Nothing said of the tensor in the step's place (or none of the learner's stands there): the result the
        # function returns, against the notes' last step, may say how it ends up wrong.
        told = _facts(normalised_value(output), declared[-1][1], _Case(case.sizes, [
            (step_id, values) for step_id, values, _optional in declared[:-1]], axes=named_axes.get(last, ())))
        if told and told[0].kind not in UNTOLD and told[0].kind != "other_step":
            facts = tuple(dataclasses.replace(fact, about=OUTPUT, of=last) for fact in told)
    if returned is None and (not facts or facts[0].kind in UNTOLD):
        again = _computed_again(traced, learner, [(step_id, proven_at[step_id]) for step_id in matched], output)
        if again is not None:
            facts = (Fact("repeated", {"other": again}),)
    if returned is None and matched and (not facts or facts[0].kind in UNTOLD):
        again_added = _added_again_to(traced, learner, [(step_id, proven_at[step_id]) for step_id in matched])
        if again_added:
            # A term the layer had added (its bias), added again to a right step: where the code went on from.
            facts = (Fact(ADDED_AGAIN_TO, {"sources": again_added}),)
    if returned is None and not facts and matched:
        # No tensor of the step's size made from the last matched step: the result, when the op that made it read
        # only the learner's tensors that match the notes' steps (their weights times their scores), and the input
        # their function was given (their weights times the input, where the values go). Past the departing step,
        # only what it is made from is said of it: it is not in that step's place.
        steps_at = {index: step_id for step_id, proving in proven_at.items() for index in proving}
        entry = _case_input(traced, [proven_at[step_id][0] for step_id in matched if proven_at[step_id]])
        if entry is not None:
            steps_at[entry] = INPUTS
        facts = _result_made_from(traced, learner, output, declared[-1][1], steps_at, case)
        if order[departing] != last:
            # (Another computation of the result's operands is said of the result, against the notes' last step.)
            facts = tuple(dataclasses.replace(fact, of=last) if fact.kind.startswith("alt_")
                          else Fact("result_made_from", fact.fields, OUTPUT)
                          for fact in facts if fact.kind == "made_from" or fact.kind.startswith("alt_"))
    if returned is None and not facts and matched and (raised or stand_in is None):
        # The code raised before any tensor of the step's size stood in its place: the first it made from its
        # right steps after the last of them, when its shape is not the step's, is what the raise met. Code that
        # went on without one is told it only as another computation of those steps (the next tensor it made).
        facts = _raised_stand_in_facts(traced, learner, [index for step_id in matched for index in proven_at[step_id]],
                                       proven_at[matched[-1]][:1], expected_values, declared, matched, raised)
    if (returned is None and not raised and output is not None and matched and order[departing] == last
            and all(fact.kind in UNTOLD for fact in facts)):
        # The result, in the last step's place, as another computation of the matched steps and the input (one
        # term alone of the product the notes' last step adds up).
        first_at = proven_at[order[0]][0] if order[0] in matched and proven_at[order[0]] else None
        facts = _output_alternative(traced, learner, output, declared, matched, first_at) or facts
    if returned is None and not raised and matched and (not facts or facts[0].kind in UNTOLD):
        dropped = _dropped_copy(traced, learner, proven_at[matched[-1]][:1], matched[-1])
        if dropped is not None:
            facts = (*facts, dropped)
    if raised and not facts and raised_at is not None and raised_at.after == len(traced):
        facts = _raised_operands(traced, raised_at, {step_id: proven_at[step_id] for step_id in matched}, declared,
                                 step_dtypes)
    if raised and matched and (held := _first_held_in_other_shape(learner, declared, matched, held_by,
                                                                   proven_at)) is not None:
        # (A tensor of theirs that holds the step in the notes' shape, proving it or not, is theirs: the other shape
        # is then a view torch made inside an op, matmul's (12t's tz-ma-01), not their code's.)
        # Its numbers are the notes' (a reproduced step) but not its shape (squeezed to a 0-d tensor): the raise
        # may well meet that shape, so "reproduces" is not said without it.
        facts = (*facts, held)
    if order[departing] == EXPONENTIALS:
        # The notes' exponentials are powers of e: a power of them is the powers of another base (2**x).
        facts = tuple(dataclasses.replace(fact, kind="power_base") if fact.kind == "power" and not fact.of else fact
                      for fact in facts)
    following = declared[departing + 1] if departing + 1 < len(declared) else None
    or_next = following[0] if following is not None and following[2] and where[following[0]] is None else None
    return Departure(matched, order[departing], returned, facts, len(learner), last, raised,
                     held_unproven=order[departing] in unproven, or_next=or_next,
                     fits=() if returned is not None else _steps_left_open(declared, where, held_by, in_pieces,
                                                                           departing))


# Ops that make each entry from one of two tensors, chosen entry by entry (torch.where).
MERGING_OPS = frozenset({"where"})


def _merged_away(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                 declared: Sequence[tuple[str, list[torch.Tensor], bool]]) -> set[int]:
    """The tensors the code went on with only through ops that merge them entry by entry with other numbers
    (MERGING_OPS), each making a tensor that holds other numbers and none of the notes' steps, directly or through
    tensors that are themselves merged away so (their reciprocal, merged): the code computed their numbers but
    carried others in their place (`torch.where(x >= 0, exp(x), exp(-x))` on negative scores makes the notes'
    exponentials and goes on with exp(-x): 12v's vy-sn-10). The notes' masking (a where that makes the masked
    scores) holds a step, and keeps its operands."""
    readers: dict[int, list[int]] = {}
    for index, entry in enumerate(traced):
        for read in entry.inputs:
            if 0 <= read < index:
                readers.setdefault(read, []).append(index)
    values = [value for _step_id, step_values, _optional in declared for value in step_values]

    def merges_it_away(reader: int, index: int) -> bool:
        return (traced[reader].op in MERGING_OPS and not matches_up_to_layout(learner[reader], learner[index])
                and not any(learner[reader].numel() == value.numel() and matches_up_to_layout(learner[reader], value)
                            for value in values))
    merged: set[int] = set()
    for index in sorted(readers, reverse=True):  # each reader comes later in the trace: decided before it is read
        if all(merges_it_away(reader, index) or reader in merged for reader in readers[index]):
            merged.add(index)
    return merged


def _steps_left_open(declared: Sequence[tuple[str, list[torch.Tensor], bool]], where: Mapping[str, int | None],
                     held_by: Mapping[str, Sequence[int]], in_pieces: Collection[str],
                     departing: int) -> tuple[str, ...]:
    """Departure.fits: the steps after the last one the case proves, up to the first that no tensor holds (a step
    some route skips, or one held in pieces, does not end them); () where a step after `departing` is proven."""
    proven = [position for position, (step_id, _values, _optional) in enumerate(declared) if where[step_id] is not None]
    start = proven[-1] + 1 if proven else 0
    if start > departing:
        return ()
    fits: list[str] = []
    for step_id, _values, optional in declared[start:]:
        fits.append(step_id)
        if not held_by[step_id] and not optional and step_id not in in_pieces:
            break
    return tuple(fits)


RAISED_OPERANDS = "raised_operands"
EXPONENTIALS = "exponentials"  # the softmax's step e**x, whose powers are another base's (see find_departure)
# Right steps with a vector added to every row a second time (a layer's bias added again after the layer).
ADDED_AGAIN_TO = "added_again_to"
# A reproduced step whose tensors all hold the notes' numbers under another shape, said where the code then raised.
HELD_SHAPE = "held_shape"
# What a raise's line says beside the steps (not a stand-in's facts: no tensor of theirs stands in the step's place).
RAISE_CONTEXT = frozenset({RAISED_OPERANDS, HELD_SHAPE})


# Layout ops that put axes in another order (what a view of a product's operand may have gone through).
TURNING_OPS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "movedim", "numpy_T", "mT", "adjoint"})


def _turned_on_the_way(traced: Sequence[TracedTensor], read: int, holders: Collection[int]) -> bool:
    """Whether the tensor at `read` is a view of one of `holders` through an op that puts axes in another order
    (12t's tz-ma-01: matmul flattened `keys.transpose(1, 3)`, so the product read the keys with axes turned)."""
    index = read
    while index not in holders and (traced[index].op in LAYOUT_OPS or traced[index].op in PASSING_OPS) and len(
            traced[index].inputs) == 1:
        if traced[index].op in TURNING_OPS:
            return True
        index = traced[index].inputs[0]
    return False


def _in_notes_shape(tensor: torch.Tensor, declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                    step_id: str) -> bool:
    """Whether `tensor` has one of the shapes the notes give `step_id`."""
    return any(tuple(tensor.shape) == tuple(value.shape) for declared_id, values, _optional in declared
               if declared_id == step_id for value in values)


def _first_held_in_other_shape(learner: Sequence[torch.Tensor],
                               declared: Sequence[tuple[str, list[torch.Tensor], bool]], matched: Sequence[str],
                               held_by: Mapping[str, Sequence[int]],
                               proven_at: Mapping[str, Sequence[int]]) -> Fact | None:
    """The HELD_SHAPE fact of the earliest of the last matched steps that no tensor of the code holds in a shape the
    notes give it, where each step after it is held so too (scores squeezed to a 0-d tensor: the scaled scores and
    the weights made from them are 0-d as well, and the earliest of those is said, 12v's vy-v2-12); None where the
    last matched step has a tensor in the notes' shape."""
    held = None
    for step_id in reversed(matched):
        if any(_in_notes_shape(learner[index], declared, step_id) for index in held_by[step_id]):
            break
        earlier = _held_in_other_shape(learner, declared, proven_at[step_id], step_id)
        if earlier is None:
            break
        held = earlier
    return held


def _held_in_other_shape(learner: Sequence[torch.Tensor], declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                         proving: Sequence[int], step_id: str) -> Fact | None:
    """The HELD_SHAPE fact of a matched step when none of the learner's tensors proving it has a shape the notes'
    step has, and one of those has as many numbers; None otherwise."""
    values = next((values for declared_id, values, _optional in declared if declared_id == step_id), [])
    shapes = {tuple(value.shape) for value in values}
    got = [learner[index] for index in proving]
    if not got or any(tuple(tensor.shape) in shapes for tensor in got):
        return None
    same_size = [value for value in values if value.numel() == got[0].numel()]
    if not same_size:
        return None
    return Fact(HELD_SHAPE, {"held": step_id, "got_shape": tuple(got[0].shape),
                             "expected_shape": tuple(same_size[0].shape)})


# The ATen products that torch's matmul, einsum and linear call on views they make of the learner's tensors.
PRODUCT_OPS = frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot"})


def _raised_operands(traced: Sequence[TracedTensor], raised_at: RaisedOp, proven_at: Mapping[str, Sequence[int]],
                     declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                     step_dtypes: Mapping[str, str]) -> tuple[Fact, ...]:
    """The tensors the op that raised read, each as (the matched step it holds, or "", its shape as read, its dtype
    or "", whether it read the step's axes in another order, the notes' dtype of that step or ""): the learner's
    tensor proven to hold a step of the notes (through its layouts) is said by the step's name, any other only by its
    shape; each dtype only where the op read two or more (a float32 weight met a float64 input), or where a step's
    numbers are held in another kind than the notes' (a float triangle where the notes' mask is boolean: its values
    match, its dtype does not, 12u's uz-mr-11); () when the op read no tensor. `step_dtypes`: each step's dtype in
    the notes."""
    operands: list[tuple[str, tuple[int, ...], str, bool, str]] = []
    # Only floating-point dtypes that differ (float32 met float64): a bool mask beside float scores is no mismatch.
    floating = all(dtype.startswith(("float", "bfloat")) for dtype in raised_at.dtypes)
    read_dtypes = raised_at.dtypes if len(raised_at.dtypes) == len(raised_at.reads) else ("",) * len(raised_at.reads)
    dtypes = raised_at.dtypes if floating and len(set(raised_at.dtypes)) > 1 else ("",) * len(raised_at.reads)
    for read, shape, dtype, read_dtype in zip(raised_at.reads, raised_at.shapes, dtypes, read_dtypes, strict=True):
        # The step the operand itself holds first (the values split into heads), else one the tensor it views holds
        # (the values before the split share their numbers: not what the op read).
        holding = "" if read < 0 or read >= len(traced) else next(
            (step_id for step_id, proving in proven_at.items() if read in proving), "") or next(
            (step_id for step_id, proving in proven_at.items() if _numbers_of(traced, read) in proving), "")
        turned = False
        if holding:
            if raised_at.op in PRODUCT_OPS:
                # A product's operands may be views torch made inside the learner's call (matmul flattens a batch):
                # said of their tensor, not the view the op was handed: the first of theirs holding the step in one
                # of the notes' shapes for it, else the first holding it. Any other op read what their code handed
                # it (an `unsqueeze` of theirs included), said as read.
                notes_shapes = {tuple(value.shape) for declared_id, values, _optional in declared
                                if declared_id == holding for value in values}
                holder = next((index for index in proven_at[holding]
                               if tuple(traced[index].value.shape) in notes_shapes), proven_at[holding][0])
            else:
                holder = read if read in proven_at[holding] else _numbers_of(traced, read)
            held = tuple(int(size) for size in traced[holder].value.shape)
            # Their axes in another order (a transpose, theirs or einsum's) is what the op read: said so, with the
            # shape as read (12r's ry-v2-06: `bmm(queries, keys.transpose(-2, -1))` read (2, 6) keys, not (6, 2)).
            turned = (len(held) == len(shape) and held != tuple(shape) and sorted(held) == sorted(shape)) or (
                raised_at.op in PRODUCT_OPS and _turned_on_the_way(traced, read, set(proven_at[holding])))
            if raised_at.op in PRODUCT_OPS and not turned:
                shape = held
        notes_dtype = step_dtypes.get(holding, "") if holding else ""
        if not read_dtype or (read_dtype == "bool") == (notes_dtype == "bool"):
            notes_dtype = ""
        operand = (holding, tuple(shape), read_dtype if notes_dtype else dtype, turned, notes_dtype)
        if operand not in operands or not holding:
            operands.append(operand)
    return (Fact(RAISED_OPERANDS, {"operands": tuple(operands)}),) if operands else ()


def _added_again(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], output: torch.Tensor | None,
                 declared: Sequence[tuple[str, list[torch.Tensor], bool]], last_at: Sequence[int]) -> bool:
    """Whether the result, every step matched (the last held at `last_at`), is the notes' last step plus one vector
    on every row (two rows at least, the vector not zero), that vector being a tensor the learner's code read to make
    its last step and read again to make the result from it: a term of the last step (out_proj's bias) added twice."""
    if output is None or not last_at or not declared:
        return False
    got, expected = normalised_value(output), declared[-1][1][0]
    if got.shape != expected.shape or expected.dim() < 2 or not bool(torch.isfinite(got).all()):
        return False
    rows = (got - expected).reshape(-1, expected.shape[-1])
    vector = rows[0]
    if rows.shape[0] < 2 or values_close(vector, torch.zeros_like(vector)) or not values_close(
            rows, vector.expand_as(rows)):
        return False
    result = _output_index(traced, learner, output)
    if result is None or not _made_from(traced, result, {last_at[0]}):
        return False
    made_last = _ancestors(traced, last_at[0])
    added_twice = _added_by(traced, made_last) & _added_by(traced, _ancestors(traced, result) - made_last)
    return any(values_close(learner[index], vector) for index in added_twice if learner[index].shape == vector.shape)


def _added_by(traced: Sequence[TracedTensor], ops: Collection[int]) -> set[int]:
    """The traced tensors an op among `ops` adds to the rest (through views of them: a bias broadcast by a view)."""
    return {_numbers_of(traced, read) for op in ops if traced[op].op in ADDING_OPS for read in traced[op].inputs}


def _added_again_to(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                    matched: Sequence[tuple[str, Sequence[int]]]) -> tuple[str, ...]:
    """The matched steps (in the notes' order) whose first tensor the learner's code adds a vector to, on every row,
    that an op had already added in making that tensor (a layer's bias, added again after calling the layer), and
    whose sum an op then reads: the code went on from a right step plus a term a second time. () when none."""
    found: list[str] = []
    for step_id, proving in matched:
        if not proving or learner[proving[0]].dim() < 2:
            continue
        step_at = proving[0]
        added_before = _added_by(traced, _ancestors(traced, step_at))
        for index in range(step_at + 1, len(traced)):
            entry = traced[index]
            if entry.op not in ("add", "add_") or len(entry.inputs) != 2:
                continue
            reads = [_numbers_of(traced, read) for read in entry.inputs]
            if step_at not in reads:
                continue
            vector_at = next(read for read in reads if read != step_at) if reads.count(step_at) == 1 else None
            if vector_at is None or vector_at not in added_before:
                continue
            vector, step_value = learner[vector_at], learner[step_at]
            if (vector.dim() != 1 or vector.shape[-1] != step_value.shape[-1] or one_number(vector)
                    or not values_close(learner[index], step_value + vector)):
                continue
            if any(index in traced[later].inputs for later in range(index + 1, len(traced))):
                found.append(step_id)
                break
    return tuple(found)


# The ATen ops that add one of their operands to the rest (a linear layer's bias goes in by addmm).
ADDING_OPS = frozenset({"add", "add_", "addmm", "addmv", "baddbmm", "linear"})


def _raised_out_of_order(declared: Sequence[tuple[str, list[torch.Tensor], bool]], where: Mapping[str, int | None],
                         proven_at: Mapping[str, Sequence[int]], traced: Sequence[TracedTensor], raised_at: RaisedOp,
                         departing: int) -> int:
    """For code that raised: the position of the step it raised at, where the op that raised read a tensor proven to
    hold a step declared after `departing` (the keys, made before the queries and split at once). The code made its
    steps in another order than the notes declare them and never reached `departing`: it raised past the last step
    it read, at the first later step no tensor holds whose numbers are that step's rearranged (the keys split into
    heads), else the first later step no tensor holds. `departing` where the raise read no later step."""
    if raised_at.after != len(traced):
        return departing  # the run went on after that raise (caught): another raise ended it
    order = [step_id for step_id, _values, _optional in declared]

    def read_step(position: int) -> bool:
        proving = proven_at.get(order[position], ())
        return any(0 <= read < len(traced) and (read in proving or _numbers_of(traced, read) in proving)
                   for read in raised_at.reads)
    read = [position for position in range(departing + 1, len(order)) if read_step(position)]
    if not read:
        return departing
    source = read[-1]
    later = [position for position in range(source + 1, len(order)) if where.get(order[position]) is None]
    if not later:
        return departing
    numbers = [sorted_values(value) for value in declared[source][1]]
    for position in later:
        if any(value.numel() == held.numel() and values_close(sorted_values(value), held)
               for value in declared[position][1] for held in numbers):
            return position
    return later[0]


def _raised_stand_in_facts(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], matched_at: Sequence[int],
                           last_at: Sequence[int], expected_values: Sequence[torch.Tensor],
                           declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                           matched: Sequence[str], raised: bool = True) -> tuple[Fact, ...]:
    """For code that raised (`raised`; else only when another computation says what it is): the shape of the first
    tensor an op made (not a layout of what it read) from the learner's tensors of the matched steps, after the
    first tensor of the last of them, against the departing step's shape on every route, and the other computation
    of the matched steps it is, when exactly one fits (`_alternative_facts`); () when there is none, or its count of
    entries is the step's (a tensor of the step's size is `_stand_in`'s, and said nothing of there)."""
    if not last_at:
        return ()
    made = set(matched_at)
    for index in range(last_at[0] + 1, len(traced)):
        entry = traced[index]
        if entry.op.endswith("_backward"):
            return ()  # autograd's (a gradient check's backward): no longer the learner's forward
        if entry.op == INPUT or index in made or not made & set(entry.inputs):
            continue
        if entry.op in LAYOUT_OPS or entry.op in PASSING_OPS or any(
                learner[index].numel() == learner[read].numel() and matches_up_to_layout(learner[index], learner[read])
                for read in entry.inputs if read in made):
            made.add(index)  # a matched step in another layout: what reads it next is what stands in
            continue
        got = learner[index]
        if any(got.numel() == expected.numel() for expected in expected_values):
            return ()
        if any(got.numel() == value.numel() and matches_up_to_layout(got, value)
               for _step_id, values, _optional in declared for value in values):
            # Another of the notes' steps, right (the scores made from right splits, where the values' split
            # departs): it stands in no step's place, and "not the notes' values split into heads" would point at it.
            return ()
        shapes = [tuple(expected.shape) for expected in expected_values]
        expected = shapes[0] if len(set(shapes)) == 1 else None
        if expected is None:
            return ()  # routes of other shapes: no one shape to say
        alternatives = _alternative_facts(traced, learner, index, expected_values, declared, matched)
        subject = NEXT
        while alternatives:
            # An op that reads it alone and is another computation of the steps too (products of matching entries,
            # then summed along the rows: each row's dot product with itself alone) says more of the same tensor.
            after = next((later for later in range(index + 1, len(traced))
                          if index in traced[later].inputs and traced[later].op not in LAYOUT_OPS), None)
            if after is None or traced[after].inputs != (index,) or any(
                    learner[after].numel() == value.numel() for value in expected_values):
                break
            further = _alternative_facts(traced, learner, after, expected_values, declared, matched)
            if not further:
                break
            index, got, alternatives, subject = after, learner[after], further, LATER
        if not raised and not alternatives:
            return ()  # code that did not raise: its tensor's shape alone is rung 1's matter
        # (The computation it is speaks of the same tensor: "it".)
        return (Fact("shape", {"got": tuple(got.shape), "expected": expected}, subject),
                *(dataclasses.replace(fact, about=NEXT_AGAIN) for fact in alternatives))
    return ()


def _alternative_facts(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], chosen: int,
                       expected_values: Sequence[torch.Tensor],
                       declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                       matched: Sequence[str], first_at: int | None = None) -> tuple[Fact, ...]:
    """The stand-in as another simple computation of the step's operands (step_relations.alternative_computation):
    the notes' matched steps, and the input the learner's function was given when the op that made the stand-in read
    it (`first_at`: the learner's tensor of the notes' first step, when it matched, made from that input). Said only
    when exactly one computation fits against every route of the step; () otherwise."""
    values = dict(declared_values(declared))
    operands = {step_id: values[step_id][0] for step_id in matched}
    read_inputs = {root for root in (_numbers_of(traced, read) for read in traced[chosen].inputs)
                   if _uncomputed(traced[root])}
    if len(read_inputs) == 1:
        operands[INPUTS] = learner[read_inputs.pop()]
    elif not read_inputs and first_at is not None:
        # A probe may compute the input it passes (the notes' scores for a softmax): the tensor the notes' first
        # step was made from is the input the function was given, when the op making the stand-in read it too.
        entry = _first_step_input(traced, learner, first_at, declared[0][1])
        if entry is not None and entry in {_numbers_of(traced, read) for read in traced[chosen].inputs}:
            operands[INPUTS] = learner[entry]
    found = {alternative_computation(learner[chosen], expected, operands, values_close) for expected in expected_values}
    if len(found) != 1 or None in found:
        return ()
    alternative = found.pop()
    assert alternative is not None
    if alternative.kind == "reduction" and alternative.op in ("max", "min") and traced[chosen].op not in PICKING_OPS:
        # A maximum (or minimum) along an axis is one of its slices wherever that slice is the largest: said only of
        # a tensor an op that picks among entries made (12t's tz-pm-09: head 0's scores, a `select`, were "the
        # maximum of the notes' attention scores along dimension 1" on that input).
        return ()
    return (Fact(f"alt_{alternative.kind}", {"op": alternative.op, "operands": alternative.operands,
                                             "axis": alternative.axis}),)


# Ops that pick, among entries, the largest or smallest (or one by a condition): what a maximum can be made by.
PICKING_OPS = frozenset({"max", "amax", "min", "amin", "maximum", "minimum", "fmax", "fmin", "where", "clamp",
                         "clamp_min", "clamp_max", "sort", "topk", "kthvalue", "cummax", "cummin", "median",
                         "nanmedian", "aminmax", "index_put", "masked_fill", "masked_scatter", "gather",
                         "take_along_dim"})


def _first_step_input(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], first_at: int,
                      first_values: Sequence[torch.Tensor]) -> int | None:
    """The one tensor (through layouts, and changes in place: the input still) the op that made the learner's
    tensor of the notes' first step read, when one computation of the family gives that step from it
    (step_relations.reproduces: its maximum of each row, its rows' dot products with each other): the input their
    function was given. None when the op read two tensors or more (an input and a weight), or none fits."""
    read = set()
    for index in traced[_numbers_of(traced, first_at)].inputs:
        index = _numbers_of(traced, index)
        while traced[index].op.endswith("_") and traced[index].inputs:
            index = _numbers_of(traced, traced[index].inputs[0])
        read.add(index)
    if len(read) != 1:
        return None
    entry = read.pop()
    return entry if any(reproduces(value, {INPUTS: learner[entry]}, values_close) for value in first_values) else None


def _output_alternative(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], output: torch.Tensor,
                        declared: Sequence[tuple[str, list[torch.Tensor], bool]], matched: Sequence[str],
                        first_at: int | None) -> tuple[Fact, ...]:
    """The function's result as another computation (step_relations.alternative_computation) of the notes' matched
    steps and, when the learner's tensor of the notes' first step (`first_at`) was made from one tensor alone, of
    that tensor (the input the function was given); () when none fits or two do."""
    values = dict(declared_values(declared))
    operands = {step_id: values[step_id][0] for step_id in matched}
    entry = None if first_at is None else _first_step_input(traced, learner, first_at, declared[0][1])
    if entry is not None:
        operands[INPUTS] = learner[entry]
    got = normalised_value(output)
    found = {alternative_computation(got, expected, operands, values_close) for expected in declared[-1][1]}
    if len(found) != 1 or None in found:
        return ()
    alternative = found.pop()
    assert alternative is not None
    made = _output_index(traced, learner, output)
    if alternative.kind == "reduction" and alternative.op in ("max", "min") and (
            made is None or traced[made].op not in PICKING_OPS):
        return ()  # as _alternative_facts: a maximum is said only of what an op that picks among entries made
    return (Fact(f"alt_{alternative.kind}", {"op": alternative.op, "operands": alternative.operands,
                                             "axis": alternative.axis}, OUTPUT, declared[-1][0]),)


INPUTS = "inputs"  # the input the learner's function was given, as a source of a tensor (`_case_input`)


def _case_input(traced: Sequence[TracedTensor], proving: Sequence[int]) -> int | None:
    """The one tensor the learner's code read without making it (an argument, through its layouts) that the ops
    making two or more of their matched steps all read directly: the input the queries and keys are projected from
    (each projection also reads its own weight); None when no such tensor is common to them, or more than one is."""
    shared: set[int] | None = None
    counted = 0
    for index in proving:
        index = _numbers_of(traced, index)
        roots = {root for root in (_numbers_of(traced, read) for read in traced[index].inputs)
                 if _uncomputed(traced[root])}
        if roots:
            shared = roots if shared is None else shared & roots
            counted += 1
    return next(iter(shared)) if shared is not None and counted >= 2 and len(shared) == 1 else None


def _numbers_of(traced: Sequence[TracedTensor], index: int) -> int:
    """The traced tensor whose numbers the one at `index` holds: back through ops of layout and broadcasts."""
    while (traced[index].op in LAYOUT_OPS or traced[index].op in PASSING_OPS) and len(traced[index].inputs) == 1:
        index = traced[index].inputs[0]
    return index


def _result_made_from(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], output: torch.Tensor | None,
                      expected_values: Sequence[torch.Tensor], steps_at: Mapping[int, str],
                      case: "_Case") -> tuple[Fact, ...]:
    """The facts of the function's result against the notes' last step, and the matching steps the op that made it
    read, when that op read only those (`_made_from_steps`); () when the result is not among the traced tensors or
    the op read anything else."""
    if output is None:
        return ()
    got = normalised_value(output)
    made = next((index for index in range(len(traced) - 1, -1, -1) if traced[index].op != INPUT
                 and learner[index].shape == got.shape and values_close(learner[index], got)), None)
    if made is None:
        return ()
    sources = _made_from_steps(traced, made, steps_at)
    if not sources:
        return ()
    told = _facts(got, expected_values, case) or (Fact("differs"),)
    if told[0].kind in (*UNTOLD, "not_normalised"):
        # Another computation of the very operands the result was made from says how it differs.
        values = dict(case.others)
        operands = {source: values[source][0] for source in sources if source in values}
        entry = next((index for index, source in steps_at.items() if source == INPUTS), None)
        if INPUTS in sources and entry is not None:
            operands[INPUTS] = learner[entry]
        alternatives = {alternative_computation(got, expected, operands, values_close) for expected in expected_values}
        alternative = alternatives.pop() if len(alternatives) == 1 else None
        if alternative is not None and len(operands) == len(sources):
            # (Its shape, when it has another, is said first: the product explains it.)
            shape = tuple(dataclasses.replace(fact, about=OUTPUT) for fact in told if fact.kind == "shape")
            return (*shape, Fact(f"alt_{alternative.kind}", {"op": alternative.op, "operands": alternative.operands,
                                                             "axis": alternative.axis}, OUTPUT))
    return (*(dataclasses.replace(fact, about=OUTPUT) for fact in told), Fact("made_from", {"sources": sources}))


# Ops that repeat or rearrange the one tensor they read (broadcasting for a batched product): what an op read through
# them is that tensor.
PASSING_OPS = frozenset({"expand", "expand_as", "broadcast_to"})


def _made_from_steps(traced: Sequence[TracedTensor], index: int, steps_at: Mapping[int, str]) -> tuple[str, ...]:
    """The notes' steps (in the order read) the op that made the tensor at `index` read, each through its layouts
    and broadcasts, when every tensor the op read is one of them (`steps_at`: the learner's tensors proven to hold
    each matched step); () when any is not, or the op read nothing traced. Only operands the trace kept count: an
    op of the course's attention reads floating-point tensors, which it keeps."""
    found: list[str] = []
    for read in traced[index].inputs:
        while read not in steps_at and (traced[read].op in LAYOUT_OPS or traced[read].op in PASSING_OPS) and len(
                traced[read].inputs) == 1:
            read = traced[read].inputs[0]
        if read not in steps_at:
            return ()
        if steps_at[read] not in found:
            found.append(steps_at[read])
    # The input alone is no provenance of the learner's steps: a tensor made from it only is said nothing of.
    return tuple(found) if set(found) - {INPUTS} else ()


def _masked_later(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], source: int,
                  expected_values: Sequence[torch.Tensor]) -> int | None:
    """The first tensor the learner's code makes from `source` (through any ops) of the step's size that hides
    exactly the entries the notes' step hides, in one of a right program's layouts; None when there is none."""
    for index in _made_from_source(traced, source):
        got = learner[index]
        if any(got.numel() == expected.numel() and bool(torch.isinf(expected).any()) and any(
                torch.equal(torch.isinf(layout), torch.isinf(expected)) for layout in _layouts(got, expected))
               for expected in expected_values):
            return index
    return None


def _made_from_source(traced: Sequence[TracedTensor], source: int) -> Iterator[int]:
    """Each traced tensor after `source` that the learner's code made from it (through any ops), in order."""
    made = {source}
    for index in range(source + 1, len(traced)):
        if traced[index].op == INPUT or not made & set(traced[index].inputs):
            continue
        made.add(index)
        yield index


def _normalised_later(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], source: int,
                      axis: int) -> bool:
    """Whether a tensor the learner's code makes from `source` (through any ops), of its shape, sums to 1 along
    `axis`."""
    shape = learner[source].shape
    for index in _made_from_source(traced, source):
        got = learner[index]
        if got.shape == shape and bool(torch.isfinite(got).all()) and _sums_to_one(got, axis):
            return True
    return False


def _masked_further(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], source: int) -> int | None:
    """The last tensor of the chain of masks the learner's code applies to `source` (each next one made from the
    previous, of its size, hiding every entry it hides and more, its other entries as they were: a padding fill
    then the causal one); None when the code masks `source` no further. Its masked scores are that last tensor,
    not the first of the chain: what they show and hide is said of it."""
    current, found = source, None
    for index in range(source + 1, len(traced)):
        if traced[index].op == INPUT or current not in traced[index].inputs:
            continue
        before, after = learner[current], learner[index]
        if after.shape != before.shape:
            continue
        hidden_before, hidden_after = torch.isneginf(before), torch.isneginf(after)
        kept = ~hidden_after
        if (bool((hidden_after & ~hidden_before).any()) and bool(hidden_after[hidden_before].all())
                and torch.equal(after[kept], before[kept])):
            current = found = index
    return found


def _computed_again(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                    matched: Sequence[tuple[str, list[int]]], output: torch.Tensor | None) -> str | None:
    """The last matched step the learner's code computes twice on its way to its result, the second time from none
    of its first tensors (keys projected again where the values go); None when there is none. Only computations the
    result is made from count: a probe that calls the function twice, or builds a step of its own (a mask), makes
    others. Views and copies of a step read it, so they are no second computation."""
    if output is None:
        return None
    got = normalised_value(output)
    made = next((index for index in range(len(traced) - 1, -1, -1) if traced[index].op != INPUT
                 and learner[index].shape == got.shape and values_close(learner[index], got)), None)
    if made is None:
        return None
    ancestors = _ancestors(traced, made)
    for step_id, proving in reversed(matched):
        computed = [index for index in proving if index in ancestors and not set(traced[index].inputs) & set(proving)]
        if len(computed) > 1:
            return step_id
    return None


def _holding_rearranged(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], matched_at: Sequence[int],
                        expected_values: Sequence[torch.Tensor],
                        holds: Callable[[torch.Tensor, torch.Tensor], bool]) -> int | None:
    """The first tensor made (through any ops) from the learner's tensors of the matched steps that holds the
    departing step's numbers, in places no right layout gives (`holds`: whether a tensor holds the step's value, or
    another step's, in a right layout: a tensor that does is that step, and a case where the two steps share their
    numbers proves nothing of it); None
    when there is none. Only a tensor made from the learner's right steps is surely theirs (`_stand_in`)."""
    made = set(matched_at)
    own: int | None = None  # the first matched step's own tensor that holds them (see below)
    shapes = [expected.shape for expected in expected_values]
    for index in range(min(matched_at, default=len(traced)), len(traced)):
        entry = traced[index]
        if entry.op == INPUT or (index not in made and not made & set(entry.inputs)):
            continue
        made.add(index)
        if any(learner[index].numel() == expected.numel() and not one_number(expected)
               and values_close(sorted_values(learner[index]), sorted_values(expected)) for expected in expected_values
               ) and not any(holds(learner[index], expected) for expected in expected_values):
            if index not in matched_at:
                return index
            # A matched step's own tensor may hold them too (for a change of layout they are its numbers): it stands
            # in the step's place only when the code makes no other tensor that does, the first of them in the
            # step's own shape first (the learner's split of their queries, which holds the queries in their order).
            if own is None or (learner[own].shape not in shapes and learner[index].shape in shapes):
                own = index
    return own


def _candidate_facts(got: torch.Tensor, expected_values: Sequence[torch.Tensor],
                     declared: Sequence[tuple[str, list[torch.Tensor], bool]], previous_step: str,
                     case: "_Case") -> tuple[Fact, ...]:
    """The facts of a stand-in against the step; when they say nothing, against the last matched step it is made
    from, if that says it is the step times a number (masked scores halved before the softmax)."""
    facts = _facts(got, expected_values, case)
    if facts and facts[0].kind in UNTOLD:
        scaled = _facts(got, dict(declared_values(declared))[previous_step], case)
        if scaled and scaled[0].kind in FACTOR_KINDS:
            return tuple(dataclasses.replace(fact, about=FROM_PREVIOUS, of=previous_step) for fact in scaled)
    return facts


def declared_values(declared: Sequence[tuple[str, list[torch.Tensor], bool]]) -> list[tuple[str, list[torch.Tensor]]]:
    return [(step_id, values) for step_id, values, _optional in declared]


# Ops that give the numbers of the one tensor they read in another layout, as tensor_trace names them.
LAYOUT_OPS = frozenset({"t", "transpose", "permute", "view", "_unsafe_view", "reshape", "squeeze", "unsqueeze",
                        "contiguous", "swapaxes", "swapdims", "movedim", "numpy_T", "mT", "adjoint", "flatten",
                        "unflatten", "view_as", "reshape_as"})


def _computed_on(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], index: int,
                 shapes: Collection[tuple[int, ...]]) -> bool:
    """Whether an op after the tensor `index` read it (or a layout of it) and made new numbers of its count (not a
    layout of it, not a change in place) before any layout of it took one of the step's `shapes`: the code went on
    from it to other numbers of that size, which stand in the step's place (a tensor laid out in the step's shape
    first is in its place itself: the heads merged without their transpose, then out_proj)."""
    if tuple(learner[index].shape) in shapes:
        return False
    sources = {index}
    for later in range(index + 1, len(traced)):
        entry = traced[later]
        if entry.op == INPUT or not sources & set(entry.inputs) or entry.op.endswith("_"):
            continue
        if learner[later].numel() != learner[index].numel():
            continue
        if entry.op in LAYOUT_OPS or entry.op in PASSING_OPS or matches_up_to_layout(learner[later], learner[index]):
            if tuple(learner[later].shape) in shapes:
                return False
            sources.add(later)
            continue
        return True
    return False


def _held_in_pieces(values: Sequence[torch.Tensor], learner: Sequence[torch.Tensor],
                    traced: Sequence[TracedTensor]) -> bool:
    """Whether the learner's code computes the step slice by slice (a loop over the tokens or the columns, each
    slice its own tensor, joined later or never): along one axis, every slice of the step (of two numbers or more,
    not one number throughout) is held by a tensor the code computed, in its own order; or, for a vector, every entry
    by a one-number tensor, in order (_held_entry_by_entry). No tensor holds the step whole, yet the code does not
    depart there: it is neither said reproduced nor departed at while a later step holds (issue 58: a row-by-row
    loop was told it departs at its first step)."""
    computed = [value for value, entry in zip(learner, traced, strict=True) if entry.op != INPUT]
    for expected in values:
        if expected.dim() == 1 and _held_entry_by_entry(expected, computed):
            return True
        for axis in range(expected.dim() if expected.dim() >= 2 else 0):
            slices = expected.unbind(axis)
            if len(slices) >= 2 and all(piece.numel() >= 2 and not one_number(piece) for piece in slices) and all(
                    any(got.numel() == piece.numel() and values_close(got.reshape(piece.shape), piece)
                        for got in computed) for piece in slices):
                return True
    return False


def _held_entry_by_entry(expected: torch.Tensor, computed: Sequence[torch.Tensor]) -> bool:
    """Whether a vector step of two entries or more, not one number throughout, is computed one entry at a time (a
    Python loop of `torch.exp(x[i])`): its entries, in their order, are held by tensors of one number each that the
    code computed one after the other (each a later tensor than the one before)."""
    if expected.numel() < 2 or one_number(expected):
        return False
    position = 0
    for entry in expected:
        position = next((index + 1 for index in range(position, len(computed))
                         if computed[index].numel() == 1 and values_close(computed[index].reshape(()), entry)), -1)
        if position < 0:
            return False
    return True


def _dropped_copy(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], source_at: Sequence[int],
                  source_step: str) -> Fact | None:
    """The first tensor the learner's code made from its tensor of the last matched step (`source_at`), in that
    tensor's shape, that holds it with some entries set to 0 and every other one multiplied by one number above 1:
    dropout while training, proven from the values (issue 58: dropout left on was told only "none of the tensors
    holds the context vectors"). None when no tensor is so; never said of entries 0 in the step itself."""
    if not source_at:
        return None
    source = learner[source_at[0]]
    nonzero = source.abs() > 1e-12
    for index in range(source_at[0] + 1, len(traced)):
        got = learner[index]
        if traced[index].op == INPUT or got.shape != source.shape or not _made_from(traced, index, {source_at[0]}):
            continue
        if not bool(torch.isfinite(got).all()):
            continue
        zeroed = (got == 0) & nonzero
        kept = (got != 0) & nonzero
        if not bool(zeroed.any()) or int(kept.sum()) < 2 or bool(((got != 0) & ~nonzero).any()):
            continue
        ratios = got[kept] / source[kept]
        factor = float(ratios.mean())
        if factor > 1 + 1e-3 and bool(torch.allclose(ratios, torch.full_like(ratios, factor), rtol=RELATIVE)):
            return Fact("dropped", {"source": source_step, "count": int(zeroed.sum()), "factor": f"{factor:.3g}"},
                        FROM_PREVIOUS)
    return None


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
    if got.numel() == expected.numel() and values_close(got.reshape(expected.shape), expected):
        return True
    squeezed, target = _squeezed(got), _squeezed(expected)
    if squeezed.dim() != target.dim() or squeezed.dim() > 4:
        return True  # held some other way than a permutation: not this rule's matter
    orders = [order for order in itertools.permutations(range(squeezed.dim()))
              if squeezed.permute(order).shape == target.shape
              and values_close(squeezed.permute(order).reshape(expected.shape), expected)]
    read = [_squeezed(learner[source]) for source in traced[index].inputs]
    return any(not any(_unchanged_by(value, order) for value in read) for order in orders) or not orders


def _unchanged_by(value: torch.Tensor, order: tuple[int, ...]) -> bool:
    """Whether permuting `value`'s axes by `order` (a non-trivial permutation) leaves it as it is: a symmetric
    matrix under a transpose."""
    if value.dim() != len(order) or value.numel() <= 1 or order == tuple(range(len(order))):
        return False
    permuted = value.permute(order)
    return permuted.shape == value.shape and values_close(permuted, value)


def _made_from(traced: Sequence[TracedTensor], index: int, sources: set[int]) -> bool:
    """Whether the traced tensor at `index` was computed from one of `sources` (read by an op on its way)."""
    return bool((_ancestors(traced, index) - {index}) & sources)


def _ancestors(traced: Sequence[TracedTensor], index: int) -> set[int]:
    """The traced tensor at `index` and every one an op on its way read (a trace's inputs are earlier entries)."""
    ancestors: set[int] = set()
    pending = [index]
    while pending:
        read = pending.pop()
        if read not in ancestors:
            ancestors.add(read)
            pending.extend(traced[read].inputs)
    return ancestors


def _returned_instead(declared: Sequence[tuple[str, list[torch.Tensor], bool]], output: torch.Tensor | None,
                      holds: Callable[[torch.Tensor, str, torch.Tensor], bool]) -> str | None:
    """The step before the last that the function returns, when its code computed the notes' last step too: the one
    earlier step its output holds, where the output holds neither the last step nor one number throughout. None
    when the output holds two earlier steps (the case does not tell them apart: scores and scaled scores for heads
    of size 1), or none."""
    if output is None or not declared:
        return None
    got = normalised_value(output)
    last, last_values, _optional = declared[-1]
    if one_number(got) or any(holds(got, last, value) for value in last_values):
        return None
    held = [step_id for step_id, values, _optional in declared[:-1] if any(holds(got, step_id, value)
                                                                          for value in values)]
    return held[0] if len(held) == 1 else None


def _uninformative(value: torch.Tensor, earlier: Sequence[tuple[str, list[torch.Tensor], bool]],
                   holds: Callable[[torch.Tensor, str, torch.Tensor], bool]) -> bool:
    """Whether a learner tensor that holds a step proves nothing of it on this case: its entries are all one number
    (a tensor of zeros is made many ways), or it holds an earlier step as well (on the notes' heads of size 1 the
    scores are the scaled scores: the tensor proves only the earlier step)."""
    if one_number(value):
        return True
    return any(value.numel() == expected.numel() and holds(value, step_id, expected)
               for step_id, values, _optional in earlier for expected in values)


def made_many_ways(value: torch.Tensor) -> bool:
    """Whether a tensor's numbers prove nothing of the computation that made it: one number throughout
    (`one_number`), or a single entry that is 0 or 1, which a factory (a probe's `ones_like` seed of backward), a
    comparison (a bool) and a softmax over one entry all give, whatever the input: what the run with gradients on
    reads as holding a step (gradient_departure) is never one (issue 58)."""
    return one_number(value) or (value.numel() == 1 and float(value.reshape(-1)[0]) in (0.0, 1.0))


def one_number(value: torch.Tensor) -> bool:
    """Whether every entry is one number (more than one entry): a tensor of zeros is made many ways."""
    return value.numel() > 1 and bool((value == value.reshape(-1)[0]).all())


def _first_step_facts(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                      expected_values: Sequence[torch.Tensor], case: "_Case") -> tuple[Fact, ...]:
    """What the learner's tensor in the place of the notes' first step proves of it: the facts of the first tensor
    an op made of the step's size from the tensors the call read without making them (its arguments, parameters
    and buffers, through their layouts) or made from nothing, and nothing else, whose facts tie it to the step by
    a relation (RELATIONS: the same numbers rearranged, a factor, a mask's bands...); () when no such tensor is
    traced. A tensor of one number throughout is made many ways and proves nothing; a tensor that holds the step
    in a right layout is no departure."""
    size = expected_values[0].numel()
    # What the call read without making it, what an op made from nothing (a factory: ones, arange), parameters
    # filled in place (a module built in the call: uniform_), and their layouts.
    inputs: set[int] = set()
    for index, entry in enumerate(traced):
        if entry.op == INPUT or not entry.inputs:
            inputs.add(index)
            continue
        if (entry.op.endswith("_") or entry.op == WRITTEN) and entry.inputs[0] in inputs:
            # A tensor the call read, written in place (a parameter the probe loaded its weights into by copy_, a
            # buffer filled): still what the call read, whatever the numbers written were made from.
            inputs.add(index)
            continue
        if not set(entry.inputs) <= inputs:
            continue
        if (entry.op in LAYOUT_OPS or entry.op in PASSING_OPS) and len(entry.inputs) == 1:
            inputs.add(index)
            continue
        got = learner[index]
        if got.numel() != size or one_number(got):
            continue
        facts = _facts(got, expected_values, dataclasses.replace(case, transposes=True))
        if facts and facts[0].kind == "reordered":
            # A tensor made from the inputs alone may be the probe's own (its input times a gradient's mix): the
            # order of a change of layout's axes is said of the result the function returns, never of it.
            continue
        if facts and facts[0].kind in RELATIONS:
            return facts
    return ()


def _output_index(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                  output: torch.Tensor | None) -> int | None:
    """The first traced tensor an op made that holds the function's result (a probe may call it again after, on
    other inputs); None when there is none."""
    if output is None:
        return None
    got = normalised_value(output)
    nan = torch.isnan(got)  # a result with NaN in it (a shift that overflowed) is found by its other entries

    def holds(value: torch.Tensor) -> bool:
        return value.shape == got.shape and torch.equal(torch.isnan(value), nan) and values_close(
            value.nan_to_num(0.0), got.nan_to_num(0.0))
    return next((index for index in range(len(traced)) if traced[index].op != INPUT and holds(learner[index])),
                None)


def _first_step_alternative(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor],
                            expected_values: Sequence[torch.Tensor], output_at: int | None) -> tuple[Fact, ...]:
    """At the notes' first step, where no relation tied a tensor to it: the first tensor the result is made from
    (of the step's size, else of any) that is another computation (step_relations.alternative_computation) of the
    input the function was given: the one tensor of the call's data (an argument, a parameter, the probe's numbers)
    the result is made from, when no computed tensor before the candidate stands between it and the result (a
    probe that computes the input it passes, or code that computes something from it first: the data is then no
    operand of the candidate's op, so nothing is said). A change in place (`x /= ...`) is the input still. () when
    none fits, or two."""
    if output_at is None:
        return ()
    ancestors = _ancestors(traced, output_at)
    roots = [index for index in ancestors if _uncomputed(traced[index])]
    if len(roots) != 1:
        return ()
    root = roots[0]

    def dominates(index: int) -> bool:  # every way from the call's data to the result passes through `index`
        reached: set[int] = set()
        pending = [output_at]
        while pending:
            read = pending.pop()
            if read == index or read in reached:
                continue
            if read == root:
                return False
            reached.add(read)
            pending.extend(traced[read].inputs)
        return True

    def computed(index: int) -> bool:  # new numbers: not the data, one of its layouts or a change of it in place
        entry = traced[index]
        return bool(entry.inputs) and not _uncomputed(entry) and entry.op not in LAYOUT_OPS and (
            entry.op not in PASSING_OPS) and not entry.op.endswith("_")

    candidates = [index for index in sorted(ancestors) if computed(index) and not one_number(learner[index])
                  and not dominates(index)]
    sized = [index for index in candidates if learner[index].numel() == expected_values[0].numel()]
    if not candidates:
        return ()
    chosen = (sized or candidates)[0]
    between = sorted(index for index in _ancestors(traced, chosen) - {chosen} if computed(index) and dominates(index))
    operand = root
    if between:
        # A tensor computed before (a probe's scores, passed to a softmax; a learner's scaled copy): the input the
        # function was given only when, as the notes' input, it gives the notes' first step by one computation of
        # the family (its maximum of each row is the notes').
        operand = between[-1]
        if not any(reproduces(expected, {INPUTS: learner[operand]}, values_close) for expected in expected_values):
            return ()
    found = {alternative_computation(learner[chosen], expected, {INPUTS: learner[operand]}, values_close)
             for expected in expected_values}
    if len(found) != 1 or None in found:
        return ()
    alternative = found.pop()
    assert alternative is not None
    shapes = {tuple(expected.shape) for expected in expected_values}
    shape = (Fact("shape", {"got": tuple(learner[chosen].shape), "expected": shapes.pop()}),) if (
        not sized and len(shapes) == 1 and not _viewed_at_once(traced, learner, chosen)) else ()
    return (*shape, Fact(f"alt_{alternative.kind}", {"op": alternative.op, "operands": alternative.operands,
                                                     "axis": alternative.axis}))


def _viewed_at_once(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], made: int) -> bool:
    """Whether the next op that read the tensor `made` and nothing else gave its numbers, in their order, another
    shape: an op's inner step (an einsum's batched product of shape (6, 1, 1), viewed at once as the (6,) it
    returns), whose shape the learner's code may never hold, so its shape is not said as theirs (issue 58)."""
    for index in range(made + 1, len(traced)):
        if traced[index].inputs == (made,):
            got, source = learner[index], learner[made]
            return (got.shape != source.shape and got.numel() == source.numel()
                    and bool(torch.equal(got.reshape(-1), source.reshape(-1))))
    return False


def _two_valued(value: torch.Tensor) -> bool:
    """Whether a tensor holds two numbers at most (a mask): any tensor with as many of each as such a step holds
    "the same numbers in other places", which proves nothing of where they come from."""
    return int(value.unique().numel()) <= 2


def _stand_in(traced: Sequence[TracedTensor], learner: Sequence[torch.Tensor], matched_at: Sequence[int],
              size: int, layout_step: bool = False) -> int | None:
    """The learner's tensor in the departing step's place, after the last matched step's tensor: the first op that
    read it (or a copy of it in another layout) and made new numbers of the step's size. For a step that is a
    change of layout (`layout_step`), a copy in another layout is what stands in its place. None when no step
    matched or no such op read it (`matched_at`: the tensors holding the last matched step): the trace holds the
    probe's own tensors too (the case's input it builds, what it computes from the learner's output), and only a
    tensor made from the learner's last right step is surely theirs, so no fact is read from any other."""
    if not matched_at:
        return None
    source = matched_at[0]
    sources = set(matched_at)  # the step's tensor, and the other steps' ones it stood in place of (see the caller)
    for index in range(source + 1, len(traced)):
        entry = traced[index]
        if entry.op == INPUT or index in matched_at:
            continue  # an argument, or the matched step itself (another copy of it): no new numbers
        reads = bool(sources & set(entry.inputs))
        if reads and entry.op == WRITTEN:
            return None  # the last right step's tensor was written into in place: what reads it later reads other
            # numbers than the step's, and no tensor stands in the departing step's place as made from it (issue 58)
        copy = (reads and learner[index].numel() == learner[source].numel()
                and matches_up_to_layout(learner[index], learner[source]))
        if copy and not layout_step:
            sources.add(index)  # the same step in another layout: what reads it next is the stand-in
            continue
        if reads and learner[index].numel() == size:
            return index
        if copy:
            sources.add(index)  # a view of the last step (a layout step's stand-in may read that)
    return None


# The facts that say most, first: which route's comparison to tell (the one whose first fact is most precise).
FACT_ORDER = ("permuted", "reordered", "transposed", "blocks_transposed", "restacked", "rearranged", "bands",
              "factor_root", "divided_root", "factor_size", "divided_size", "factor", "divided", "all_zero", "zeroed",
              "extra", "recoded", "nan", "sums_axis", "sums_all", "plus", "minus", "power", "other_step",
              "heads_left_out", "shape", "shown", "hidden", "not_normalised", "differs")


@dataclass(frozen=True)
class _Case:
    """What the facts may compare a learner's tensor with beyond the departing step: the case's sizes by name
    (autograder.checking.step_relations.case_sizes) and the notes' other steps, (id, its value on each route)."""

    sizes: Mapping[str, int]
    others: Sequence[tuple[str, Sequence[torch.Tensor]]]
    # Whether a transpose of the step may be said: of a tensor made from the call's inputs alone (the first step's
    # stand-in). One made from a learner's step may be the notes' transposed only because the case's scores are
    # symmetric (a maximum broadcast along the other axis): that proves nothing of the code (_layout_proven).
    transposes: bool = False
    # The compared step's named axes with their sizes (departure.step's `axes`): () when it declares none.
    axes: Sequence[tuple[str, int]] = ()


def _facts(got: torch.Tensor, expected_values: Sequence[torch.Tensor], case: _Case) -> tuple[Fact, ...]:
    """What differs between the learner's tensor and the notes' step, read from the two, against the route whose
    comparison says most (FACT_ORDER)."""
    if any(got.numel() == expected.numel() and matches_up_to_layout(got, expected, transposed=False)
           for expected in expected_values):
        return ()  # it holds the step's numbers in their order on some route: nothing differs
    found = [_facts_against(got, expected, case) for expected in expected_values]
    if not _hidden_alike(expected_values):
        # The routes hide different entries (the scores scaled before the mask, or after: the notes' masked scores
        # stand in for the scaled scores on that route): a count of entries shown or hidden against one route is
        # that route's mask, true of the learner's tensor only where it masked them itself, with a fill of its own
        # (one number in all of them: 0 for -inf); a tensor never masked shows them as the other route does.
        found = [facts for facts, expected in zip(found, expected_values, strict=True)
                 if not any(fact.kind == "hidden" or (fact.kind == "shown" and not _filled(got, expected))
                            for fact in facts)] or [(Fact("differs"),)]
    return min(found, key=lambda facts: FACT_ORDER.index(facts[0].kind), default=())


MASK_COUNTS = ("shown", "hidden")


def _filled(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether the entries the notes' step hides and `got` shows hold one number in `got` (a fill of its own)."""
    same = next(iter(_layouts(got, expected)), None) if got.numel() == expected.numel() else None
    if same is None:
        return False
    shown = same[torch.isinf(expected) & ~torch.isinf(same)]
    return shown.numel() > 0 and bool((shown == shown[0]).all())


def _hidden_alike(expected_values: Sequence[torch.Tensor]) -> bool:
    """Whether every route of a step hides the same entries (those of one shape: another shape is another layout
    of the step, compared on its own)."""
    first = expected_values[0]
    return all(value.shape != first.shape or torch.equal(torch.isinf(value), torch.isinf(first))
               for value in expected_values[1:])


def _other_step(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The one other step of the notes the learner's tensor holds (up to a right program's layouts), where that
    step's values are not the departing step's own; None when it holds none, or more than one (which proves none)."""
    holding = {step_id for step_id, values in case.others for value in values
               if value.numel() == got.numel() and values_close(sorted_values(got), sorted_values(value))
               and matches_up_to_layout(got, value)
               and not (value.numel() == expected.numel() and matches_up_to_layout(value, expected))}
    return holding.pop() if len(holding) == 1 else None


def _output_scaled(declared: Sequence[tuple[str, list[torch.Tensor], bool]],
                   output: torch.Tensor | None) -> tuple[Fact, ...]:
    """Where a tensor of the code holds the notes' last step but the result returned is not it: the result as the
    last step times a constant factor, proven entry by entry on the case (_relation_facts), said of the result; ()
    otherwise (issue 58: context vectors divided by the number of tokens after they were computed)."""
    if output is None or not declared:
        return ()
    got, (last, values, _optional) = normalised_value(output), declared[-1]
    if any(got.shape == value.shape and values_close(got, value) for value in values):
        return ()
    expected = next((value for value in values if value.shape == got.shape), None)
    if expected is None or one_number(expected):
        return ()
    case = _Case(case_sizes({step_id: tuple(step_values[0].shape) for step_id, step_values, _ in declared}),
                 [(step_id, step_values) for step_id, step_values, _ in declared if step_id != last])
    facts = _relation_facts(got, expected, case)
    if len(facts) != 1 or facts[0].kind not in FACTOR_KINDS:
        return ()
    return (Fact(facts[0].kind, facts[0].fields, about=OUTPUT),)


def _factor_fact(factor: float, sizes: Mapping[str, int]) -> Fact:
    """`factor` said as "times c" or, below 1, "divided by 1/c", with the case's size whose root (or itself) it is
    when only one size fits (step_relations.named_size)."""
    if factor == 0:
        return Fact("all_zero")
    divided = abs(factor) < 1
    shown = 1 / factor if divided else factor
    kind = "divided" if divided else "factor"
    named = named_size(abs(shown), sizes) if shown > 0 else None
    if named is None:
        return Fact(kind, {"factor": f"{shown:.3g}"})
    name, relation = named
    return Fact(f"{kind}_{relation}", {"factor": f"{shown:.3g}", "size": name, "value": sizes[name]})


def _facts_against(got: torch.Tensor, expected: torch.Tensor, case: _Case | None = None) -> tuple[Fact, ...]:
    facts = _relation_facts(got, expected, case or _Case({}, ()))
    if facts[0].kind in ("shape", "differs", "not_normalised"):
        # Nothing closer to the step itself: another of the notes' steps in its place says more. (A factor says more
        # than the unscaled scores another route masks: both are true then.)
        other = _other_step(got, expected, case or _Case({}, ()))
        if other is not None:
            return (Fact("other_step", {"other": other}),)
    return facts


def relation_reproduced(departure: Departure, steps: StepValues, output: torch.Tensor | None) -> bool:
    """Whether the relation `departure` proved on one case reproduces `output`, the learner's result on another case
    whose declared steps are `steps` (and differs from the notes' last step there: the relation explains that case's
    failure). Two relations are tried: an earlier step returned in place of the last (`departure.returned`): the
    output holds the notes' returned step on that case in its order (_returned_reproduced); and the last step held
    with its named axes in another order (a "reordered" fact): the notes' step on that case, its named axes (of more
    than one entry) put in the proven order, then laid out in the output's shape, equals the output within the
    comparison's tolerance. False where the steps are not declared on that case, or an axis of the step is not one
    the proven order names."""
    if output is None:
        return False
    if departure.returned is not None:
        return _returned_reproduced(departure, steps, output)
    orders = [fact.fields.get("order") for fact in departure.facts if fact.kind == "reordered"]
    if departure.step is None or departure.step != departure.last or len(orders) != 1:
        return False
    entry = next((entry for entry in steps if str(entry[0]) == departure.step and len(entry) > 6 and entry[6]), None)
    proven = orders[0]
    if entry is None or not entry[1] or not isinstance(proven, tuple | list):
        return False
    kept = [(str(name), int(size)) for name, size in entry[6] if int(size) > 1]
    names = [name for name, _size in kept]
    order = [str(name) for name in proven if name in names]
    expected = normalised_value(entry[1][0])
    got = normalised_value(output)
    if (len(kept) < 2 or sorted(order) != sorted(names) or len(set(names)) != len(names) or order == names
            or math.prod(size for _name, size in kept) != expected.numel() or got.numel() != expected.numel()):
        return False
    source = expected.reshape([size for _name, size in kept])
    reproduced = source.permute([names.index(name) for name in order]).reshape(-1)
    flat = got.reshape(-1)
    return values_close(flat, reproduced) and not values_close(flat, expected.reshape(-1))


def _returned_reproduced(departure: Departure, steps: StepValues, output: torch.Tensor) -> bool:
    """Whether `output` is the step `departure` proved returned (an earlier step than the notes' last) on another
    case: as many numbers as one of that step's routes there, equal to it in its order within the comparison's
    tolerance, and not equal to any route of the last step (one token: its context vector is its value vector,
    which proves no early return). One number throughout (of more than one entry) proves nothing; one token's
    single weight is the returned step there, in place of the last step's row of features."""
    returned = next((entry for entry in steps if str(entry[0]) == departure.returned and entry[1]), None)
    last = next((entry for entry in steps if str(entry[0]) == departure.last and entry[1]), None)
    if returned is None or last is None or departure.returned == departure.last:
        return False
    got = normalised_value(output).reshape(-1)
    if one_number(got):
        return False

    def equal(values: Sequence[torch.Tensor]) -> bool:
        return any(value.numel() == got.numel() and values_close(got, normalised_value(value).reshape(-1))
                   for value in values)

    return equal(returned[1]) and not equal(last[1])


def _heads_left_out(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> tuple[Fact, ...]:
    """For a step of heads side by side (named axes: heads, then each head's features, last): the fact that `got`
    holds the notes' step with its last heads (or its first ones) left out, every other entry in its place; () when
    it does not, or when the case cannot tell which heads are missing (the kept heads hold the same numbers either
    way)."""
    sizes = dict(case.axes)
    heads, features = sizes.get("heads", 0), sizes.get("features", 0)
    if (heads < 2 or features < 1 or expected.shape[-1] != heads * features or got.dim() != expected.dim()
            or got.shape[:-1] != expected.shape[:-1] or got.shape[-1] % features or not 0 < got.shape[-1]
            or got.shape[-1] >= expected.shape[-1]):
        return ()
    kept = got.shape[-1]
    first, last = values_close(got, expected[..., :kept]), values_close(got, expected[..., -kept:])
    if first == last:
        return ()  # neither, or both: the case does not tell which heads are missing
    return (Fact("heads_left_out", {"missing": heads - kept // features, "heads": heads,
                                    "which": "last" if first else "first"}),)


def _relation_facts(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> tuple[Fact, ...]:
    if got.numel() != expected.numel():
        return _heads_left_out(got, expected, case) or (
            Fact("shape", {"got": tuple(got.shape), "expected": tuple(expected.shape)}),)
    layouts = [layout for layout in _layouts(got, expected)] or [got.reshape(expected.shape)]
    same = layouts[0]
    facts: list[Fact] = []
    if values_close(sorted_values(same), sorted_values(expected)):
        restacked = restacked_blocks(got, expected, values_close)
        if restacked is not None:
            count, axis, other = restacked
            return (Fact("restacked", {"count": count, "axis": axis, "other": other, "got": tuple(got.shape),
                                       "expected": tuple(expected.shape)}),)
        if (case.transposes and expected.dim() >= 2 and same.shape[-1] == same.shape[-2]
                and values_close(same, expected.transpose(-2, -1).contiguous())):
            return (Fact("transposed"),)  # (`same` differs from `expected`: the step is not symmetric)
        blocks = transposed_blocks(got, expected, values_close) if got.shape == expected.shape else 0
        if blocks:
            return (Fact("blocks_transposed", {"count": blocks, "block": tuple(expected.shape[1:]) * 2}),)
        for layout in layouts:
            permuted = permuted_axis(layout, expected, values_close)
            if permuted is not None:
                axis, reverse = permuted
                fields = {"axis": axis, "size": expected.shape[axis], "shape": tuple(expected.shape),
                          "reversed": reverse, "name": "",
                          "first": 0 if reverse else _rolled_start(layout, expected, axis)}
                # The notes' name of the axis reordered (heads, tokens), when the step declares its axes.
                return (Fact("permuted", {**fields, **_named_reordering(layout, expected, case.axes)}),)
        reordered = reordered_axes(got, expected, case.axes, values_close) if not _two_valued(expected) else None
        if reordered is not None:
            return (Fact("reordered", {"order": reordered.order, "notes": reordered.notes, "cut": reordered.cut,
                                       "shape": tuple(got.shape), "mixed": reordered.mixed,
                                       "swapped": reordered.swapped}),)
        # A mask's two numbers in other places (as many of each as the notes' hold) prove nothing of it.
        return (Fact("differs" if _two_valued(expected) else "rearranged"),)
    if not entries_correspond(got, expected):
        return (Fact("shape", {"got": tuple(got.shape), "expected": tuple(expected.shape)}),)
    recoded = _recoded(same, expected)
    if recoded:
        # The same entries set apart, each tensor in its own encoding (a float -inf/0 mask for a boolean one): no
        # entry is hidden or shown that the notes' keep or hide.
        return (Fact("recoded", {"pairs": recoded}),)
    nan = torch.isnan(same) & ~torch.isnan(expected)
    if bool(nan.any()):
        # NaN is no hidden entry, nor is +inf (a shift by -inf makes both): said as what it is, and where.
        rows = tuple(sorted({int(row) for row in nan.nonzero()[:, 0]})) if same.dim() == 2 else ()
        return (Fact("nan", {"count": int(nan.sum()), "rows": rows}),)
    fill = _finite_fill(same, expected)
    if fill:
        return (Fact("recoded", {"pairs": fill}),)
    shown = int((torch.isneginf(expected) & torch.isfinite(same)).sum())
    # An entry the notes keep is finite and not 0: a weight of 0 is hidden as a score of -inf is.
    hidden = int((torch.isneginf(same) & torch.isfinite(expected) & (expected != 0)).sum())
    if shown:
        facts.append(Fact("shown", {"count": shown}))
    if hidden:
        facts.append(Fact("hidden", {"count": hidden}))
    bands = flipped_bands(same, expected) if not shown and not hidden else ()
    if bands:
        facts.append(Fact("bands", {"bands": bands}))
    if not shown and not hidden and not bands:
        dropped, extra = zeroed_entries(same, expected, values_close)
        if dropped:
            facts.append(Fact("zeroed", {"count": dropped}))
        if extra:
            facts.append(Fact("extra", {"count": extra}))
    normal = _normal_axis(expected)
    if not facts and normal is not None and sums_to_one_overall(same, expected):
        # Said before a factor: weights normalised over the whole tensor are also the notes' divided by the rows.
        facts.append(Fact("sums_all", {"expected_axis": normal}))
    both = torch.isfinite(same) & torch.isfinite(expected) & (expected.abs() > 1e-9)
    if not facts and int(both.sum()) >= 1:
        ratio = same[both] / expected[both]
        factor = float(ratio.mean())
        # Every entry the notes have at 0 is 0 in theirs too: "times c" is then true of the whole tensor.
        zeros_kept = bool((same[~both & torch.isfinite(expected)].abs() <= 1e-9).all())
        if (abs(factor - 1) > 1e-3 and zeros_kept
                and bool(torch.allclose(ratio, torch.full_like(ratio, factor), rtol=1e-3))):
            fact = _factor_fact(factor, case.sizes)
            # One number is a multiple of any other: said only when the multiple is one of the case's sizes.
            if ((int(both.sum()) > 1 or fact.kind not in ("factor", "divided"))
                    and (fact.kind != "all_zero" or bool((same == 0).all()))):
                facts.append(fact)
    if not facts:
        offset = _offset(same, expected)
        if offset is not None:
            facts.append(Fact("plus" if offset > 0 else "minus", {"offset": f"{abs(offset):.4g}"}))
    if not facts:
        power = _power(same, expected)
        if power is not None:
            facts.append(Fact("power", {"power": f"{power:.3g}", "base": f"{math.exp(power):.3g}"}))
    if not facts and normal is not None and torch.isfinite(same).all() and not _sums_to_one(same, normal):
        # Only an axis along which the notes' step does not sum to 1 tells the two apart, and only where theirs does
        # not sum to 1 along the notes' axis as well: a tensor of one number throughout (1/6 everywhere) sums to 1
        # along both axes of a square, which proves nothing of the axis their code normalises (nor do two others).
        others = [other for other in range(expected.dim()) if other != normal and expected.shape[other] > 1
                  and _sums_to_one(same, other) and not _sums_to_one(expected, other)]
        if len(others) == 1:
            facts.append(Fact("sums_axis", {"axis": others[0], "expected_axis": normal}))
        else:
            facts.append(Fact("not_normalised", {"axis": normal}))
    return tuple(facts) or (Fact("differs"),)


def _named_reordering(got: torch.Tensor, expected: torch.Tensor, axes: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """The named axis (of NAMED_REORDERINGS) whose slices `got` holds in another order, read on both tensors viewed
    with the step's named axes (the heads inside merged features), with whether they are reversed and where a
    rolled order starts: {} when the step declares no axes, or no one named axis gives the reordering."""
    kept = [(str(name), int(size)) for name, size in axes if int(size) > 1]
    sizes = [size for _name, size in kept]
    if not kept or math.prod(sizes) != expected.numel() or got.numel() != expected.numel():
        return {}
    mine, notes = got.reshape(sizes), expected.reshape(sizes)
    found = permuted_axis(mine, notes, values_close)
    if found is None or kept[found[0]][0] not in NAMED_REORDERINGS:
        return {}
    axis, reverse = found
    return {"name": kept[axis][0], "reversed": reverse, "first": 0 if reverse else _rolled_start(mine, notes, axis)}


def _rolled_start(got: torch.Tensor, expected: torch.Tensor, axis: int) -> int:
    """The notes' slice (counted from 1) `got` begins with along `axis`, when it holds the notes' slices along it in
    their order from there, wrapping round (the notes' rolled), and no other start does so; 0 otherwise, and for two
    slices (a swap, said as another order)."""
    count = expected.shape[axis]
    if count < 3:
        return 0
    starts = [start for start in range(1, count) if values_close(got, expected.roll(-start, dims=axis))]
    return starts[0] + 1 if len(starts) == 1 else 0


def _recoded(got: torch.Tensor, expected: torch.Tensor) -> tuple[tuple[str, str], ...]:
    """Each of `got`'s two values with the notes' value at its entries, when `got` sets apart the same entries as
    the notes' mask in the other encoding (True/False or 1/0, against -inf/0); () otherwise."""
    values, notes = got.unique(), expected.unique()
    encodings = ([0.0, 1.0], [-torch.inf, 0.0])  # True/False (or 1/0) and an additive mask's -inf/0
    if values.tolist() not in encodings or notes.tolist() not in encodings or torch.equal(values, notes):
        return ()
    pairs = []
    for value in values:
        at = expected[got == value]
        if not bool((at == at[0]).all()):
            return ()
        pairs.append((_number(float(value)), _number(float(at[0]))))
    return tuple(pairs) if pairs[0][1] != pairs[1][1] else ()


def _finite_fill(got: torch.Tensor, expected: torch.Tensor) -> tuple[tuple[str, str], ...]:
    """((fill, "-inf"),) when `got` holds the notes' numbers where the notes keep an entry and one finite number,
    below every entry kept, where they hold -inf, and a softmax over the last axis gives the notes' weights from it:
    the same entries hidden with another fill (-10000, say), which is no entry shown (issue 58); () otherwise."""
    hidden = torch.isneginf(expected)
    if got.dim() == 0 or not bool(hidden.any()) or bool(hidden.all()) or got.shape != expected.shape:
        return ()
    filled, kept = got[hidden], got[~hidden]
    if not bool(torch.isfinite(filled).all()) or not bool((filled == filled[0]).all()):
        return ()
    if not values_close(kept, expected[~hidden]) or float(filled[0]) >= float(kept.min()):
        return ()
    rows = ~hidden.all(dim=-1)  # a row the notes hide whole has no weights to compare
    if not values_close(torch.softmax(got, dim=-1)[rows], torch.softmax(expected, dim=-1)[rows]):
        return ()
    return ((_number(float(filled[0])), "-inf"),)


def _number(value: float) -> str:
    return "-inf" if value == -torch.inf else "inf" if value == torch.inf else f"{value:g}"


def _normal_axis(expected: torch.Tensor) -> int | None:
    """The dimension along which the notes' step sums to 1 (weights: the last; the notes' naive softmax: 0), the
    last such when several do; None when none does or an entry is not finite."""
    if expected.dim() < 1 or not bool(torch.isfinite(expected).all()):
        return None
    return next((axis for axis in range(expected.dim() - 1, -1, -1)
                 if expected.shape[axis] > 1 and _sums_to_one(expected, axis)), None)


def _offset(got: torch.Tensor, expected: torch.Tensor) -> float | None:
    """The one number (not 0) every entry of `got` is the notes' plus, -inf where the notes' are; None otherwise
    or for fewer than two finite entries (one number is another plus something)."""
    finite = torch.isfinite(expected)
    if not bool((torch.isfinite(got) == finite).all()) or int(finite.sum()) < 2:
        return None
    difference = got[finite] - expected[finite]
    offset = float(difference.mean())
    scale = max(float(expected[finite].abs().max()), float(got[finite].abs().max()), 1.0)
    if abs(offset) <= 1e-3 * scale or not bool(((difference - offset).abs() <= RELATIVE * scale).all()):
        return None
    return offset


def _power(got: torch.Tensor, expected: torch.Tensor) -> float | None:
    """The one number p (not 0 or 1) such that every entry of `got` is the notes' entry raised to the power p (2**x
    for the exponentials e**x); None otherwise, or where an entry of either is not a positive number, or fewer
    than two of the notes' entries are far enough from 1 to read p from. Proven on every entry at the comparison's
    tolerance."""
    if got.shape != expected.shape or not bool(((got > 0) & (expected > 0)).all()) or not bool(
            (torch.isfinite(got) & torch.isfinite(expected)).all()):
        return None
    logs = expected.log()
    readable = logs.abs() > 0.1
    if int(readable.sum()) < 2:
        return None
    power = float((got.log()[readable] / logs[readable]).median())
    if abs(power - 1) < 1e-2 or abs(power) < 1e-2 or not values_close(expected.pow(power), got):
        return None
    return power


def _sums_to_one(tensor: torch.Tensor, axis: int) -> bool:
    sums = tensor.sum(dim=axis)
    return bool(torch.allclose(sums, torch.ones_like(sums), atol=1e-4))


def departure_line(departure: Departure, lang: str, messages: Messages, lead: str = "") -> str:
    """The rung-2 line for a departure, in the notes' words; "" when every step matched (nothing to localise), unless
    the output is the last step's numbers in their order under another shape. `lead`: a sentence said first where a
    step departs (on which input the steps were read, when not the check's own)."""
    if departure.step is None:
        if departure.output_facts:
            text = render(messages, "departure.output_scaled", lang, {
                "last": render(messages, f"step.{departure.last}", lang)})
            facts = [_fact_text(fact, render(messages, f"step.{departure.last}", lang), lang, messages,
                                departure.last)
                     for fact in departure.output_facts]
            return render(messages, "label.returned", lang, {
                "text": render(messages, "departure.join", lang).join([text, *facts])})
        if departure.returned is not None:  # every step computed, an earlier one returned
            text = render(messages, "departure.returned_computed", lang, {
                "returned": render(messages, f"step.{departure.returned}", lang),
                "last": render(messages, f"step.{departure.last}", lang)})
            return render(messages, "label.returned", lang, {"text": text})
        if departure.added_again:
            return render(messages, "label.departure", lang, {"text": render(messages, "departure.added_again", lang, {
                "last": render(messages, f"step.{departure.last}", lang)})})
        if departure.reshaped is None:
            return ""
        got, expected = departure.reshaped
        return render(messages, "label.returned", lang, {"text": render(messages, "departure.reshaped", lang, {
            "last": render(messages, f"step.{departure.last}", lang), "got": got, "expected": expected})})

    def name(step_id: str) -> str:
        return render(messages, f"step.{step_id}", lang)

    fields = {"step": name(departure.step), "count": departure.compared}
    if departure.matched:
        fields["matched"] = pick(LIST_SEPARATOR, lang).join(name(step_id) for step_id in departure.matched)
        key = "departure.after"
    else:
        key = "departure.first" if departure.compared else "departure.nothing"
    if departure.held_unproven and departure.compared:
        # A tensor of theirs has the step's numbers, one number throughout (the shifted scores of [1000., 1000.]):
        # "none of your tensors holds it" would be false, and where the code departs is not known from this case.
        key += "_unproven"
    elif departure.held_unused and departure.compared:
        key += "_unused"  # made beside indices the code went on with: made, not used (never "none holds it")
    elif departure.held_merged and departure.compared:
        key += "_merged"  # made, then merged entry by entry with other numbers, which the code went on with
    stand_in_facts = [fact for fact in departure.facts if fact.kind not in RAISE_CONTEXT]
    if departure.raised and not stand_in_facts:
        # The trace ends where the learner's code raised: no tensor of theirs holds the step, none stands in its place.
        key = "departure.raised_after" if departure.matched else "departure.raised_first"
        key += "_unproven" if departure.held_unproven else ""
        if key == "departure.raised_after" and departure.or_next is not None:
            fields["step"] = render(messages, "departure.step_or", lang, {
                "step": fields["step"], "other": name(departure.or_next)})
    parts = [*([lead] if lead else []), render(messages, key, lang, fields)]
    parts += [_fact_text(fact, str(fields["step"]), lang, messages, departure.last) for fact in departure.facts]
    if departure.raised and stand_in_facts:
        parts.append(render(messages, "departure.then_raised", lang))
    if departure.returned is not None:
        parts.append(render(messages, "departure.returned", lang, {
            "returned": name(departure.returned), "last": name(departure.last)}))
    return render(messages, "label.departure", lang, {"text": render(messages, "departure.join", lang).join(parts)})


def _fact_text(fact: Fact, step_name: str, lang: str, messages: Messages, last: str) -> str:
    """One fact in the notes' words: a step id said by its name, a size by its name in the notes, a reversal as
    its own sentence. `last`: the notes' last step of the exercise (what its function returns)."""
    if fact.kind.startswith("alt_"):
        return _alternative_text(fact, step_name, lang, messages, last)
    if fact.kind == HELD_SHAPE:
        return render(messages, "departure.fact.held_shape", lang, {
            "held": render(messages, f"step.{fact.fields['held']}", lang),
            "got_shape": fact.fields["got_shape"], "expected_shape": fact.fields["expected_shape"]})
    if fact.kind == RAISED_OPERANDS:
        names = [render(messages, "departure.operand.raised_step" + ("_turned" if turned else "")
                        + ("_kind" if notes_dtype else "_dtype" if dtype else ""), lang, {
                     "name": render(messages, f"step.{holding}", lang), "shape": shape, "dtype": dtype,
                     "notes_dtype": notes_dtype}) if holding else
                 render(messages, "departure.operand.raised_tensor" + ("_dtype" if dtype else ""), lang,
                        {"shape": shape, "dtype": dtype})
                 for holding, shape, dtype, turned, notes_dtype in fact.fields["operands"]]
        return render(messages, "departure.fact.raised_operands", lang, {"operands": listed(names, lang)})
    if fact.of:
        step_name = render(messages, f"step.{fact.of}", lang)
    fields = {**fact.fields, "step": step_name}
    fields["subject"] = render(messages, f"departure.subject.{fact.about}", lang, fields)
    key = f"departure.fact.{fact.kind}"
    if fact.kind == "dropped":
        fields["source"] = render(messages, f"step.{fact.fields['source']}", lang)
    if fact.kind in ("other_step", "repeated"):
        fields["other"] = render(messages, f"step.{fact.fields['other']}", lang)
    if fact.kind in ("made_from", "result_made_from", ADDED_AGAIN_TO):
        names = [render(messages, f"step.{source}", lang) for source in fact.fields["sources"] if source != INPUTS]
        fields["sources"] = listed(names, lang)
        if INPUTS in fact.fields["sources"]:
            key = f"departure.fact.{fact.kind}_input"
    if "size" in fact.fields and fact.kind.startswith(("factor_", "divided_")):
        fields["size"] = render(messages, f"departure.size.{fact.fields['size']}", lang)
    if fact.kind == "heads_left_out":
        one = "_one" if fact.fields["missing"] == 1 else ""
        fields["which"] = render(messages, f"departure.heads_which.{fact.fields['which']}{one}", lang, fields)
    if fact.kind == "bands":
        fields["bands"] = pick(LAST_SEPARATOR, lang).join(_band_text(band, lang, messages)
                                                         for band in fact.fields["bands"])
    if fact.kind == "nan":
        rows = fact.fields["rows"]
        fields["rows"] = "" if not rows else render(messages, "departure.nan_rows", lang, {
            "rows": f"{rows[0]}–{rows[-1]}" if rows == tuple(range(rows[0], rows[-1] + 1)) and len(rows) > 1
            else pick(LIST_SEPARATOR, lang).join(str(row) for row in rows)})
    if fact.kind == "recoded":
        fields["pairs"] = pick(LIST_SEPARATOR, lang).join(
            render(messages, "departure.recoded_pair", lang, {"got": got, "expected": notes})
            for got, notes in fact.fields["pairs"])
    if fact.kind == "permuted" and fact.fields.get("reversed"):
        key = "departure.fact.reversed"
    if fact.kind == "permuted" and fact.fields.get("first"):
        key = "departure.fact.rolled"
    if fact.kind == "permuted" and fact.fields.get("name"):
        key += "_named"
        fields["name"] = render(messages, f"departure.axis.{fact.fields['name']}", lang)
    if fact.kind == "reordered":
        key, fields = _reordered_fields(fact, fields, lang, messages)
    return render(messages, key, lang, fields)


def _reordered_fields(fact: Fact, fields: dict[str, Any], lang: str,
                      messages: Messages) -> tuple[str, dict[str, Any]]:
    """A reordering of the step's named axes (step_relations.reordered_axes) in the notes' words: the two axes
    exchanged, or the whole order against the notes'; then the shape it is cut into, and the axis whose every slice
    mixes several of the notes' ones."""
    def axis(name: str) -> str:
        return render(messages, f"departure.axis.{name}", lang)

    fields = dict(fields)
    fields["cut"] = render(messages, "departure.axes_cut", lang, {"shape": fact.fields["shape"]}) \
        if fact.fields["cut"] else ""
    fields["mixed"] = render(messages, f"departure.axes_mixed.{fact.fields['mixed']}", lang) \
        if fact.fields["mixed"] else ""
    swapped = fact.fields["swapped"]
    if swapped is not None:
        fields.update(first=axis(swapped[0]), second=axis(swapped[1]))
        return "departure.fact.axes_swapped", fields
    fields.update(order=pick(LIST_SEPARATOR, lang).join(axis(name) for name in fact.fields["order"]),
                  notes=pick(LIST_SEPARATOR, lang).join(axis(name) for name in fact.fields["notes"]))
    return "departure.fact.axes_order", fields


def _band_text(band: int, lang: str, messages: Messages) -> str:
    """One diagonal (offset j - i) in words: the main one, or how far above or below it."""
    if band == 0:
        return render(messages, "departure.band.main", lang)
    return render(messages, "departure.band.above" if band > 0 else "departure.band.below", lang, {"k": abs(band)})


# The notes' steps whose columns are features (a token's row of numbers), where pairing columns pairs features; the
# scores' and weights' columns are keys, and the input a function is given may be either (see _alternative_text).
FEATURE_COLUMNS = frozenset({"queries", "keys", "values", "split_queries", "split_keys", "split_values",
                             "context_vectors", "merged", "out_proj", "heads_viewed", "heads_split", "heads_merged",
                             "heads_concatenated"})


def _alternative_text(fact: Fact, step_name: str, lang: str, messages: Messages, last: str) -> str:
    """An alternative computation (`_alternative_facts`) in the notes' words: its op and operands by their names.
    `last`: the exercise's last step; where its columns are features, so are those of the input it is computed
    from (token embeddings, or a projection's output), where the scores' or weights' are keys."""
    def operand(name: str) -> str:
        if name == INPUTS:
            return render(messages, "departure.operand.inputs", lang)
        return render(messages, "departure.operand.step", lang, {"name": render(messages, f"step.{name}", lang)})

    if fact.of:
        step_name = render(messages, f"step.{fact.of}", lang)
    names = [operand(name) for name in fact.fields["operands"]]
    fields: dict[str, Any] = {"step": step_name, "axis": fact.fields["axis"]}
    fields["subject"] = render(messages, f"departure.subject.{fact.about}", lang, fields)
    if fact.fields["op"] and fact.kind != "alt_elementwise":
        fields["op"] = render(messages, f"departure.op.{fact.fields['op']}", lang)
    if names:
        fields.update(operand=names[0], first=names[0], second=names[-1])
    key = f"departure.fact.{fact.kind}"
    features = FEATURE_COLUMNS | ({INPUTS} if last in FEATURE_COLUMNS else set())
    if fact.kind == "alt_feature_products" and not set(fact.fields["operands"]) <= features:
        key = "departure.fact.alt_column_products"  # "pairs of features" is said only where columns are features
    if len(names) == 2 and names[0] == names[1] and f"{key}_self" in messages:
        key = f"{key}_self"  # one tensor's rows (or columns) with each other
    if fact.kind == "alt_reduction" and fact.fields["axis"] is None:
        key = "departure.fact.alt_reduction_all"
    if fact.kind == "alt_elementwise":
        key = f"departure.fact.alt_elementwise_{fact.fields['op']}"
    return render(messages, key, lang, fields)
