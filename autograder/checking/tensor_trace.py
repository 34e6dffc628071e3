"""The learner's side of a departure trace: every tensor the student's code computes on one case, in the order the
dispatcher made them, with which earlier tensors each op read (autograder.checking.departure compares them with the
notes' steps).

A probe is run again under `TensorTrace` only after its check failed on that case, so a passing check pays nothing.
A tensor made from Python or NumPy numbers (`torch.tensor([math.exp(v) for v in x.tolist()])`) is recorded as made
by the run from no traced tensor (LIFTED), as a factory's is: the numbers' route through Python is not seen.
What comes back is plain data: detached CPU copies of floating-point and bool tensors (a mask is one of the notes'
steps: True reads as 1) and lists of indices, capped in count
(MAX_TRACED) and size (MAX_TRACED_ELEMENTS). Nothing here imports `solutions`: it runs where probes run.

What a probe builds before it first calls one of the learner's functions (an input, a round trip's source tensor)
is no tensor of the learner's: it is not kept, and a tensor of it the learner's code reads is kept as read (INPUT).
A class is not marked so: its constructor's tensors (a mask buffer) are the learner's own steps.

What the probe computes between the learner's calls (its gradient check's sums, a finite check of the gradient) is
dropped when the trace ends unless a later call was handed it or read it: no tensor of the learner's computation.
`traced_probe` keeps the run up to the end of the call whose result the probe recorded
(`TensorTrace.keep_through_call_of`): what the probe runs after it is not the run diagnosed. The values
`torch.max` returned beside indices the code went on with alone (`torch.max(...)[1]`) are kept as UNUSED: made,
but no step of the computation.

The count's room is the learner's call's: what a probe builds before its first module call (the module's
construction, its weights, the inputs) is kept but not counted, up to MAX_TRACED of its own. A trace the cap cut
before it held the learner's output (`TensorTrace.cut_short`) is no trace of the call: a step missing from it is
not proven to depart, so `traced_probe` gives none (the grading child says "cap", the record `departure_lost`).

`graph_traced_probe` runs it again with gradients on, as a model's layers run it, and keeps with each tensor whether
autograd recorded it (`TracedTensor.connected`), read once the op has returned through autograd: the departure in
gradient (autograder.checking.gradient_departure) reads which of the learner's tensors carry a gradient back. What
backward computes in that run (the probe's own gradient check) is not traced: it is no step of the learner's.

In grading the trace is made in the grading child and judged in the grader: `trace_record` makes it plain data for
the wire (None past MAX_TRACE_ELEMENTS in all), and `traced_of_record` reads it back in the grader as hostile data,
refusing (ValueError) anything `trace_record` would not have written or that passes a cap.
"""

import functools
import types
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import torch
from torch._ops import OpOverload
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.utils.hooks import RemovableHandle

from autograder.checking.probing import run_probe
from autograder.checking.torch_recorders import LIFT_OPS, UncompiledDispatchMode, op_name

__all__ = [
    "INPUT", "LIFTED", "MAX_SENT", "MAX_TRACED", "MAX_TRACED_ELEMENTS", "MAX_TRACE_ELEMENTS", "OUTPUT_KEYS",
    "OPERANDS", "RaisedOp", "TensorTrace", "TracedTensor", "UNUSED", "UNWRITTEN", "WRITTEN", "graph_traced_probe",
    "probe_with_raised_operands", "recorded_output", "trace_record", "traced_of_record", "traced_probe",
    "traced_probe_with_raise", "with_raised_operands",
]

MAX_TRACED = 400  # tensors kept of one call: a forward of the course's sizes makes well under a hundred
MAX_SENT = 2 * MAX_TRACED  # tensors of one trace in all: the call's, and what the probe built before it
MAX_TRACED_ELEMENTS = 65_536  # elements of one kept tensor; a larger one is left out (the course's cases are small)
MAX_TRACE_ELEMENTS = 2**18  # elements of one trace sent by a grading child, all tensors together (2 MiB of float64)
MAX_OP_NAME = 100  # characters of an op's name (ATen's are under 40)
MAX_DIMS = 8
INPUT = "input"  # the op name of a tensor the call read without making it: an argument, a parameter, a buffer
# The op name of a tensor made from Python or NumPy numbers (torch.tensor, torch.as_tensor, torch.from_numpy): made
# by the run, from no traced tensor (the numbers may have been read out of one: `x.tolist()` is not seen).
LIFTED = "lift_fresh"
# The op name of a tensor's new entry after an op wrote into memory it shares (a view of it filled in place): its
# numbers then, read from the entry it had and the tensor written (issue 58).
WRITTEN = "written"
# Ops that only copy metadata (allocations: EMPTY_OPS below): what they return says nothing about the computation.
# (copy_ writes into a tensor the code holds, a slice of a buffer: it is traced as any write.)
SKIPPED_OPS = frozenset({"detach", "lift_fresh", "lift_fresh_copy", "_to_copy", "clone", "alias",
                         "_local_scalar_dense"})
# Allocations whose memory holds whatever was there before (torch.empty): in a traced run filled with NaN (one of
# the contents torch.empty may have) and traced as UNWRITTEN, so that a buffer read before the code wrote all of it
# holds NaN where it was never written, never the numbers of a tensor freed earlier.
EMPTY_OPS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
UNWRITTEN = "unwritten"
# The op name of the values an op returned beside integer indices (torch.max over a dim) when the code went on with
# the indices alone: made by the learner's code, but no step of its computation (departure says so).
UNUSED = "unused_values"


# Where a probe's record holds what the learner's function returned: most say "output", split, merge and
# MultiHeadAttention "out", the masking routes "weights", causal_mask "mask".
OUTPUT_KEYS = ("output", "out", "weights", "mask")


def recorded_output(record: Mapping[str, Any]) -> torch.Tensor | None:
    """What the learner's function returned on the case, from its probe's record; None when it is not a tensor."""
    output = next((record[key] for key in OUTPUT_KEYS if key in record), None)
    return output if isinstance(output, torch.Tensor) else None


@dataclass(frozen=True)
class TracedTensor:
    """One tensor of the learner's run: the op that made it (INPUT for one it only read), a float64 CPU copy of its
    value, and the indices of the traced tensors the op read."""

    op: str
    value: torch.Tensor
    inputs: tuple[int, ...]
    # Whether the tensor is part of autograd's graph (it requires grad: made from a tensor of a graph, or a leaf that
    # requires grad), and whether autograd recorded the op that made it (it has a grad_fn); None where the trace ran
    # with gradients off (`traced_probe`) or came from a grading child.
    connected: bool | None = None
    recorded: bool | None = None


MAX_RAISED_OPERANDS = 8  # tensors an op that raised read, kept (the course's ops read two or three)
MAX_RAISED_MESSAGE = 400  # characters of its exception's text (probing.MAX_MESSAGE_CHARS: the record's cap)


@dataclass(frozen=True)
class RaisedOp:
    """The last ATen op whose call raised under the trace: the traced tensors it read (-1 for one the trace did not
    keep: an integer tensor, one past a cap), the shape of each, how many tensors were traced before it (a raise
    that ended the run has none after it) and its exception's text, capped (to tell it is the raise the probe
    recorded, not one that code caught and went on from)."""

    reads: tuple[int, ...]
    shapes: tuple[tuple[int, ...], ...]
    after: int
    message: str
    # Of each tensor read, its magnitude to 3 significant digits (the sum of its finite entries' absolute values, a
    # bool's count of True), "" where none can be read (the meta device, an integer tensor): two ops that read
    # tensors of the same shapes may read other things (feature-by-feature scores against token-by-token ones).
    sizes: tuple[str, ...] = ()
    op: str = ""  # the op's readable name (torch_recorders.op_name): "" where not known
    dtypes: tuple[str, ...] = ()  # each tensor's dtype without "torch." (float32), as read


class TensorTrace(UncompiledDispatchMode):
    """Records, below autograd, each floating-point or bool tensor every ATen op returns and the tensors it read.

    MAX_TRACED tensors are kept from the first module call on (what was made before it, the probe's build, has a
    room of its own of MAX_TRACED); `max_elements`, where given, caps the elements kept in all (a grading child
    sends no more: MAX_TRACE_ELEMENTS), so that a run of many large tensors costs the child no memory. Past either,
    nothing more is kept and `truncated` is set."""

    def __init__(self, max_elements: int | None = None) -> None:
        super().__init__()
        self.traced: list[TracedTensor] = []
        self.truncated = False
        self.built: int | None = None  # how many tensors were kept before the first module call; None: none yet
        self._max_elements = max_elements
        self._elements = 0
        self._hooks: list[RemovableHandle] = []
        self._index: dict[int, int] = {}  # id(tensor) -> its latest entry in `traced`
        self._held: list[torch.Tensor] = []  # keeps every id above alive (never reused) until the trace ends
        self._sharing: dict[int, dict[int, torch.Tensor]] = {}  # storage -> the remembered tensors on it, by id
        self._made: list[torch.Tensor] = []  # the tensor of each entry of `traced`, for `connected_entries`
        self.raised: RaisedOp | None = None
        self._before_answer = False  # the probe is building, before its first call of one of the learner's functions
        self._depth = 0  # calls of the learner's under way: marked functions and module forwards
        self._called = False  # whether one has begun: what runs outside calls after that is the probe's
        self._between: set[int] = set()  # entries made outside every call after the first: the probe's, unless read
        self._handed: set[int] = set()  # entries a call was handed as an argument
        # Of an op that returns values and their integer indices (torch.max over a dim, sort, topk): each indices
        # tensor's id -> the entry of its values, and the values' entries whose indices an op read.
        self._indices_of: dict[int, int] = {}
        self._indices_read: set[int] = set()
        self._read: set[int] = set()  # entries an op read (a copy, `.item()` too) or a call returned
        # Where each of the probe's calls of the learner's code ended (how many entries were kept then) and the
        # tensor it returned (None for anything else): `keep_through_call_of` keeps the diagnosed call's run.
        self._call_ends: list[tuple[int, torch.Tensor | None]] = []

    def answer_marked(self, namespace: Mapping[str, Any]) -> Mapping[str, Any]:
        """`namespace` with each of the learner's functions marking, when first called, the end of the probe's build:
        what the probe made before it (the function's input) is not the learner's. Only plain functions: a wrapper
        with the function's signature and attributes, called as the function would be."""
        marked: dict[str, Any] = {}
        for name, value in namespace.items():
            if type(value) is types.FunctionType:
                marked[name] = self._marking(value)
                self._before_answer = True
            else:
                marked[name] = value
        return MappingProxyType(marked)

    def _marking(self, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def called(*args: Any, **kwargs: Any) -> Any:
            self._before_answer = False
            self._enter_call((args, kwargs))
            try:
                returned = function(*args, **kwargs)
            finally:
                self._depth -= 1
            self._note_read(returned)
            self._call_returned(returned)
            return returned
        return called

    def _enter_call(self, handed: object) -> None:
        self._depth += 1
        self._called = True
        # What the probe hands a call is the call's input, read or not (a function may read it through NumPy).
        self._handed.update(self._index[id(tensor)] for tensor in _tensors(handed) if id(tensor) in self._index)

    def __enter__(self) -> "TensorTrace":
        # A global hook, removed on the way out: a module's call (the learner's forward, or a layer it calls) ends
        # the probe's build; the hooks never run the student's code. The second one ends the call, raised or not.
        self._hooks = [register_module_forward_pre_hook(self._module_called),
                       register_module_forward_hook(self._module_returned, always_call=True)]
        try:
            super().__enter__()
        except BaseException:
            self._remove_hooks()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            super().__exit__(*exc_info)
        finally:
            self._remove_hooks()
        self._drop_the_probes_own()

    def _remove_hooks(self) -> None:
        for hook in self._hooks:
            hook.remove()
        self._hooks = []

    def _module_called(self, _module: object, args: object) -> None:
        if self.built is None:
            self.built = len(self.traced)
        self._enter_call(args)

    def _module_returned(self, _module: object, _args: object, output: object) -> None:
        self._depth = max(0, self._depth - 1)
        self._note_read(output)
        self._call_returned(output)

    def _call_returned(self, returned: object) -> None:
        if self._depth == 0:  # one of the probe's own calls, not a layer the learner's code called
            self._call_ends.append((len(self.traced), returned if isinstance(returned, torch.Tensor) else None))
            if isinstance(returned, torch.Tensor):
                self._held.append(returned)

    def keep_through_call_of(self, output: torch.Tensor | None) -> None:
        """Keeps the trace up to the end of the first call that returned `output` (the probe's record of it, by
        value): what the probe ran after it (each head of a wrapper called on its own, to compare; a gradient
        check's second call) is not the run diagnosed (12t's tz-mw-07 was told it reproduced head 1's context
        vectors, which only the probe's own call of head 1 computed). As it is where no call returned it."""
        if output is None or output.device.type == "meta" or output.is_complex():
            return
        wanted = output.detach().to("cpu", torch.float64)
        for end, returned in self._call_ends:
            if returned is None or tuple(returned.shape) != tuple(wanted.shape) or returned.device.type == "meta" \
                    or returned.is_complex():
                continue
            if _same_numbers(returned.detach().to("cpu", torch.float64), wanted):
                self.traced, self._made = self.traced[:end], self._made[:end]
                if self.raised is not None and self.raised.after > end:
                    self.raised = None  # an op of a later run raised, not one of the call diagnosed
                return

    def _note_read(self, value: object) -> None:
        for tensor in _tensors(value):
            if id(tensor) in self._index:
                self._read.add(self._index[id(tensor)])
            if id(tensor) in self._indices_of:
                self._indices_read.add(self._indices_of[id(tensor)])

    def _drop_the_probes_own(self) -> None:
        """Marks the values no op used beside indices that were (UNUSED), and drops from `traced` what the probe
        computed between the learner's calls (its gradient check's products and sums, a finite check of a gradient)
        that no later op of a call read: no tensor of the learner's, which a departure would otherwise read as one.
        What a call read of it (an input made for a second call, a module built then) stays: it is that call's
        input. Indices are renumbered to the entries kept."""
        # Values whose indices an op read while no op read them nor a call returned them: the code went on with
        # the indices alone (`torch.max(...)[1]`); the values were never a step of its computation (UNUSED).
        for index in self._indices_read - self._read - self._handed:
            entry = self.traced[index]
            self.traced[index] = TracedTensor(UNUSED, entry.value, entry.inputs, entry.connected, entry.recorded)
        needed = [index not in self._between or index in self._handed for index in range(len(self.traced))]
        for index in range(len(self.traced) - 1, -1, -1):
            if needed[index]:
                for read in self.traced[index].inputs:
                    needed[read] = True
        if all(needed):
            return
        renumbered = {old: new for new, old in enumerate(index for index, keep in enumerate(needed) if keep)}
        self.traced = [TracedTensor(entry.op, entry.value, tuple(renumbered[read] for read in entry.inputs),
                                    entry.connected, entry.recorded)
                       for index, entry in enumerate(self.traced) if needed[index]]
        self._made = [tensor for index, tensor in enumerate(self._made) if needed[index]]
        if self.built is not None:
            self.built = sum(needed[:self.built])
        self._call_ends = [(sum(needed[:end]), returned) for end, returned in self._call_ends]
        if self.raised is not None:
            self.raised = replace(self.raised, reads=tuple(renumbered.get(read, -1) for read in self.raised.reads),
                                  after=sum(needed[:self.raised.after]))

    def cut_short(self, output: torch.Tensor | None) -> bool:
        """Whether the cap cut the trace before it held `output` (the learner's call's result, from the probe's
        record; None: none recorded): whatever the call computed after the cut is unknown, so a step the trace
        lacks is not proven to depart. A trace the cap cut after the output is whole where it matters."""
        if not self.truncated:
            return False
        if output is None or output.is_complex() or output.device.type == "meta":
            return True
        wanted = output.detach().to("cpu", torch.float64)
        return not any(_same_numbers(entry.value, wanted) for entry in self.traced)

    def __torch_dispatch__(self, func: OpOverload, types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        try:
            result = func(*args, **(kwargs or {}))
        except Exception as exc:
            self._note_read((args, kwargs))
            operands = _tensors((args, kwargs))[:MAX_RAISED_OPERANDS]
            self.raised = RaisedOp(tuple(self._index.get(id(tensor), -1) for tensor in operands),
                                   tuple(tuple(int(size) for size in tensor.shape) for tensor in operands),
                                   len(self.traced), _message(exc), tuple(_magnitude(tensor) for tensor in operands),
                                   op_name(func),
                                   tuple(str(tensor.dtype).removeprefix("torch.") for tensor in operands))
            raise
        if torch._C._current_graph_task_id() != -1:
            return result  # an op of backward (a probe's gradient check): no tensor of the learner's forward
        if self._before_answer:
            return result  # the probe's build: read by the learner's code, a tensor of it is kept as INPUT then
        self._note_read((args, kwargs))
        if op_name(func) in EMPTY_OPS:
            for made in _tensors(result):
                # Below the mode (a handler runs outside it): not an op of the learner's. Only what the trace keeps
                # is filled: a huge buffer it would not keep is never touched (its pages are not made resident).
                if made.is_floating_point() and made.numel() <= MAX_TRACED_ELEMENTS:
                    made.fill_(torch.nan)
                self._add(made, UNWRITTEN, ())
            return result
        if op_name(func) in SKIPPED_OPS:
            for source, made in zip(_tensors(args), _tensors(result), strict=False):  # a copy stands for its source
                if id(source) in self._index:
                    self._remember(made, self._index[id(source)])
                elif op_name(func) in LIFT_OPS:  # numbers from Python enter here: torch.tensor's, made by the run
                    self._add(made, LIFTED, ())
            return result
        read = tuple(dict.fromkeys(self._entry_of(tensor) for tensor in _tensors((args, kwargs))))
        for tensor in _tensors(result):
            self._add(tensor, op_name(func), tuple(index for index in read if index >= 0))
        self._pair_indices(_tensors(result))
        self._refresh_aliases(func, args, kwargs, result)
        return result

    def _refresh_aliases(self, func: OpOverload, args: Sequence[Any], kwargs: Mapping[str, Any] | None,
                         result: Any) -> None:
        """After an op wrote into a tensor in place (`fill_` on a view of the scores, `out=`), every other traced
        tensor sharing its memory (the scores the view was cut from) holds new numbers: each gets a new entry,
        made (WRITTEN) from what it held and the tensor written, so that an op reading it later reads what it holds
        then, not the numbers it was recorded with (issue 58)."""
        written = _written(func, args, kwargs)
        if not written or self.truncated:
            return
        made = {id(tensor) for tensor in _tensors(result)} | {id(tensor) for tensor in written}
        sharing: dict[int, torch.Tensor] = {}
        for storage in {_storage(tensor) for tensor in written}:
            if storage is not None:
                sharing.update(self._sharing.get(storage, {}))
        if len(sharing) > MAX_TRACED:
            # More tensors on that memory than a call's trace keeps (a hostile loop of aliases): refreshing them
            # all on every write would cost the run time, and leaving them stale would let the next op read old
            # numbers, so the trace ends here (what the cap does, `cut_short`).
            self.truncated = True
            return
        for key, tensor in sharing.items():
            if key in made or self._index.get(key) is None:
                continue
            before = self._index[key]
            self._add(tensor, WRITTEN, (before, *(self._index[id(w)] for w in written if id(w) in self._index)))

    def _pair_indices(self, made: list[torch.Tensor]) -> None:
        """Pairs the integer indices an op returned beside its values (torch.max over a dim) with the values'
        entry: code that goes on with the indices alone has not used the values (`_drop_the_probes_own`)."""
        if len(made) != 2 or made[0].is_floating_point() == made[1].is_floating_point():
            return
        values, indices = made if made[0].is_floating_point() else made[::-1]
        if not indices.dtype.is_floating_point and indices.dtype != torch.bool and id(values) in self._index:
            self._indices_of[id(indices)] = self._index[id(values)]
            self._held.append(indices)

    def _entry_of(self, tensor: torch.Tensor) -> int:
        if id(tensor) not in self._index:
            self._add(tensor, INPUT, ())
        return self._index.get(id(tensor), -1)

    def _add(self, tensor: torch.Tensor, op: str, inputs: tuple[int, ...]) -> None:
        if self.truncated or len(self.traced) - (self.built or 0) >= MAX_TRACED:
            self.truncated = True
            return
        traceable = tensor.is_floating_point() or tensor.dtype == torch.bool
        if not traceable or tensor.device.type == "meta" or tensor.numel() > MAX_TRACED_ELEMENTS:
            return
        if self._max_elements is not None and self._elements + tensor.numel() > self._max_elements:
            self.truncated = True
            return
        self._elements += tensor.numel()
        value = tensor.detach().to("cpu", torch.float64, copy=True)
        if self._called and self._depth == 0:
            self._between.add(len(self.traced))
        self.traced.append(TracedTensor(op, value, inputs))
        self._made.append(tensor)
        self._remember(tensor, len(self.traced) - 1)

    def connected_entries(self) -> list[TracedTensor]:
        """`traced` with whether each tensor is part of autograd's graph, read now: below autograd an op's result
        has no history yet, autograd gives it one on the way back up (call it once the trace has ended)."""
        return [TracedTensor(entry.op, entry.value, entry.inputs, bool(tensor.requires_grad),
                             tensor.grad_fn is not None) for entry, tensor in zip(self.traced, self._made, strict=True)]

    def _remember(self, tensor: torch.Tensor, index: int) -> None:
        self._index[id(tensor)] = index
        self._held.append(tensor)
        storage = _storage(tensor)
        if storage is not None:
            self._sharing.setdefault(storage, {})[id(tensor)] = tensor


def _same_numbers(got: torch.Tensor, wanted: torch.Tensor) -> bool:
    """Whether two float64 CPU tensors hold the same numbers in the same shape, exactly (NaN equal to NaN)."""
    return got.shape == wanted.shape and bool(torch.isclose(got, wanted, rtol=0.0, atol=0.0, equal_nan=True).all())


def _written(func: OpOverload, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> list[torch.Tensor]:
    """The tensor arguments an op writes into (its schema marks them: `self` of `fill_`, an `out=`)."""
    written: list[torch.Tensor] = []
    try:
        arguments = func._schema.arguments
    except AttributeError:
        return written
    for position, argument in enumerate(arguments):
        if argument.alias_info is None or not argument.alias_info.is_write:
            continue
        value = args[position] if position < len(args) and not argument.kwarg_only else (kwargs or {}).get(
            argument.name)
        written += [tensor for tensor in _tensors(value)]
    return written


def _storage(tensor: torch.Tensor) -> int | None:
    """Where a tensor's numbers live (a view shares its base's); None where that cannot be read."""
    try:
        pointer = int(tensor.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):
        return None
    return pointer or None  # no memory (the meta device, no entries): shared with nothing


def _magnitude(tensor: torch.Tensor) -> str:
    """RaisedOp.sizes' entry for one tensor an op that raised read (read with no mode in the way: this runs inside
    the trace's own dispatch)."""
    if tensor.device.type == "meta" or tensor.is_complex() or tensor.numel() > MAX_TRACED_ELEMENTS:
        return ""
    with torch._C._DisableTorchDispatch():
        if tensor.dtype == torch.bool:
            return str(int(tensor.detach().sum()))
        if not tensor.is_floating_point():
            return ""
        total = float(tensor.detach().to("cpu", torch.float64).abs().nan_to_num(0.0, 0.0, 0.0).sum())
    return f"{total:.3g}"


def _tensors(value: object, depth: int = 0) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if depth < 3 and isinstance(value, list | tuple):
        return [tensor for item in value for tensor in _tensors(item, depth + 1)]
    if depth < 3 and isinstance(value, dict):
        return [tensor for item in value.values() for tensor in _tensors(item, depth + 1)]
    return []


# The exceptions torch's own ops raise; one of any other class (a student's tensor subclass may raise its own) is
# never read here: its __str__ would run the student's code inside the trace.
TORCH_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError)


_EXCEPTION_ARGS = vars(BaseException)["args"].__get__  # BaseException's own getter: no property in the way


def _message(exc: Exception) -> str:
    """The exception's text as probing.describe_exception reads it (str(exc), capped), for an exception of one of
    TORCH_ERRORS exactly whose arguments are plain str; "" for any other (it then matches no record's)."""
    if type(exc) not in TORCH_ERRORS or not all(type(arg) is str for arg in _EXCEPTION_ARGS(exc)):
        return ""
    return str.__getitem__(BaseException.__str__(exc), slice(0, MAX_RAISED_MESSAGE))


def traced_probe(probe: Callable[[Mapping[str, Any], Any], Any], namespace: Mapping[str, Any], case: Any,
                 max_elements: int | None = None) -> tuple[dict[str, Any], list[TracedTensor] | None]:
    """(the probe's record, the tensors the student's code computed) for one case, run again under the trace; None
    for the tensors when the cap cut the trace before the call's output (TensorTrace.cut_short): no departure is
    looked for then. `max_elements`: TensorTrace's."""
    record, traced, _raised = traced_probe_with_raise(probe, namespace, case, max_elements)
    return record, traced


def traced_probe_with_raise(probe: Callable[[Mapping[str, Any], Any], Any], namespace: Mapping[str, Any], case: Any,
                            max_elements: int | None = None
                            ) -> tuple[dict[str, Any], list[TracedTensor] | None, RaisedOp | None]:
    """traced_probe's, and the last op that raised under the trace (None when none did)."""
    with torch.no_grad(), TensorTrace(max_elements) as trace:
        record = run_probe(probe, trace.answer_marked(namespace), case)
    output = recorded_output(record)
    trace.keep_through_call_of(output)
    return record, None if trace.cut_short(output) else trace.traced, trace.raised


# The key of a probe's error record that holds the shapes of the tensors the op that raised read, as the run itself
# read them ([[sizes...], ...]): what an error's numbers are numbers of (autograder.checking.reproduction).
OPERANDS = "operands"


def probe_with_raised_operands(probe: Callable[[Mapping[str, Any], Any], Any], namespace: Mapping[str, Any],
                               case: Any) -> dict[str, Any]:
    """The probe's record on `case`, run under a trace that keeps no tensor (no copy, no memory): where it raised,
    its error holds OPERANDS, the shapes the op that raised read, when that op's exception is the one the record
    holds (not one the code caught and went on from). Gradients as the probe has them: an error of autograd's (an
    in-place op on a leaf) raises as in the probe's own run."""
    with TensorTrace(max_elements=0) as trace:
        record = run_probe(probe, namespace, case)
    return with_raised_operands(record, trace.raised)


def with_raised_operands(record: dict[str, Any], raised: RaisedOp | None) -> dict[str, Any]:
    """`record` with OPERANDS in its error where `raised` (the trace's last op that raised) is the error's own: its
    exception's text is the error's message. As it is where they differ or either is missing."""
    error = record.get("error")
    if raised is None or not isinstance(error, dict) or not raised.message or error.get("message") != raised.message:
        return record
    shapes = [[*shape, magnitude] if magnitude else list(shape)
              for shape, magnitude in zip(raised.shapes, raised.sizes, strict=False)]
    return {**record, "error": {**error, OPERANDS: shapes}}


def graph_traced_probe(probe: Callable[[Mapping[str, Any], Any], Any], namespace: Mapping[str, Any],
                       case: Any) -> tuple[dict[str, Any], list[TracedTensor] | None]:
    """`traced_probe` with gradients on, as the probe's gradient check runs the student's code in a model: each
    tensor with whether autograd recorded it (`TracedTensor.connected`). The probe's own no_grad blocks stay off.
    None for the tensors as traced_probe's."""
    with torch.enable_grad(), TensorTrace() as trace:
        record = run_probe(probe, trace.answer_marked(namespace), case)
    return record, None if trace.cut_short(recorded_output(record)) else trace.connected_entries()


def trace_record(traced: Sequence[TracedTensor]) -> list[list[Any]] | None:
    """The trace as plain data for the grading child's channel, [[op, float64 value, [input indices]], ...]; None
    when its tensors hold more than MAX_TRACE_ELEMENTS elements in all (no departure is then looked for)."""
    if sum(entry.value.numel() for entry in traced) > MAX_TRACE_ELEMENTS:
        return None
    return [[entry.op, entry.value.contiguous(), list(entry.inputs)] for entry in traced]


def traced_of_record(record: object) -> tuple[TracedTensor, ...]:
    """The trace a grading child sent (`trace_record`'s shape), read as hostile data: ValueError, saying what is
    wrong, for anything else: not a list, more than MAX_SENT entries, an op that is not a short str, a value that
    is not a plain float64 CPU tensor of at most MAX_TRACED_ELEMENTS elements (MAX_TRACE_ELEMENTS in all), inputs
    that are not indices of earlier entries."""
    if type(record) is not list:
        raise ValueError("not a list")
    if len(record) > MAX_SENT:
        raise ValueError(f"{len(record)} tensors, more than {MAX_SENT}")
    traced: list[TracedTensor] = []
    elements = 0
    for index, entry in enumerate(record):
        if type(entry) is not list or len(entry) != 3:
            raise ValueError(f"entry {index} is not [op, value, inputs]")
        op, value, inputs = entry
        if type(op) is not str or not 0 < len(op) <= MAX_OP_NAME:
            raise ValueError(f"entry {index}: its op is not a short str")
        if (type(value) is not torch.Tensor or value.dtype != torch.float64 or value.layout != torch.strided
                or value.device.type != "cpu" or value.dim() > MAX_DIMS or value.requires_grad):
            raise ValueError(f"entry {index}: its value is not a float64 CPU tensor")
        elements += value.numel()
        if value.numel() > MAX_TRACED_ELEMENTS or elements > MAX_TRACE_ELEMENTS:
            raise ValueError(f"more than {MAX_TRACE_ELEMENTS:,} elements")
        if type(inputs) is not list or len(inputs) > MAX_SENT or not all(
                type(read) is int and 0 <= read < index for read in inputs):
            raise ValueError(f"entry {index}: its inputs are not indices of earlier entries")
        traced.append(TracedTensor(op, value.contiguous(), tuple(inputs)))
    return tuple(traced)
