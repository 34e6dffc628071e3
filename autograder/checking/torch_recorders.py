"""The torch recorders a probe watches the student's code with: which torch functions and ATen ops a call ran
(FunctionCalls, DispatchedOps, under their public names: op_name), which tensors it used that no recorder saw made
(Origins), how many matrix multiplies (MatmulCount), which ops mixed devices (DeviceMixWatch), `.T` on a batch
(ForwardWatch), which in-place edits autograd did not record (UntrackedEdits).

Nothing here imports `solutions`: recorders run in a process that must not see the reference (as probing.py).
"""

import contextlib
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import Any, Self

import torch
from torch import nn
from torch._ops import OpOverload, OpOverloadPacket
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.checking.deferred_imports import torch_imports_deferred

__all__ = [
    "CUSTOM_OP", "DeviceMixWatch", "FunctionCalls", "LIFT_OPS", "MODES_OFF", "MatmulCount", "OP_FAMILIES", "Origins",
    "UncompiledDispatchMode", "UntrackedEdits", "call_watched", "called_functions", "called_functions_until_raise",
    "forbidden_calls", "op_name", "parameter_read_in_graph",
]

# What a rule names, for the aliases torch reaches a library function through: torch.ops.aten, torch._C, private
# functions and the ATen kernels the dispatcher runs. Each is recorded as the public function it implements, so a rule
# forbids one name per function and the student reads "softmax", not "aten::_softmax".
OP_FAMILIES: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(
            (
                "_softmax",
                "_safe_softmax",  # what the math attention kernel normalises with
                "_masked_softmax",
                "_sparse_softmax",
                "_nested_tensor_softmax_with_shape",
                "special_softmax",
            ),
            "softmax",
        ),
        **dict.fromkeys(("_log_softmax", "_sparse_log_softmax", "special_log_softmax"), "log_softmax"),
        **dict.fromkeys(
            (
                "_fused_sdp_choice",
                "_scaled_dot_product_attention_math",
                "_scaled_dot_product_attention_math_for_mps",
                "_scaled_dot_product_flash_attention",
                "_scaled_dot_product_flash_attention_for_cpu",
                "_scaled_dot_product_efficient_attention",
                "_scaled_dot_product_cudnn_attention",
                "_scaled_dot_product_fused_attention_overrideable",
                "_flash_attention_forward",
                "_efficient_attention_forward",
                "_cudnn_attention_forward",
                "_triton_scaled_dot_attention",
            ),
            "scaled_dot_product_attention",
        ),
        **dict.fromkeys(
            ("_native_multi_head_attention", "_triton_multi_head_attention", "_transformer_encoder_layer_fwd"),
            "multi_head_attention_forward",
        ),
    }
)

# Operator libraries that ship with torch. An op from any other namespace was registered with torch.library, most
# likely by the student: its kernel runs with the recorders switched off, so what it calls cannot be seen.
TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "quantized", "_quantized", "profiler", "mkldnn", "onednn"})
CUSTOM_OP = "custom_op"  # the name every such op is recorded under: a from-scratch rule can forbid them all at once
# Recorded when the student's code switched one of the two recorders off (torch._C.DisableTorchFunction,
# _disable_current_modes, popping a mode): what it called then may be seen by neither.
MODES_OFF = "disabled_torch_modes"


def op_name(func: object) -> str:
    """The readable name of a torch function or ATen op, aliases folded: torch.ops.aten._softmax.default,
    torch._softmax and Tensor.softmax are all "softmax"."""
    if isinstance(func, OpOverload | OpOverloadPacket):
        qualified = func.name() if isinstance(func, OpOverload) else func._qualified_op_name
        namespace, _, name = qualified.partition("::")
        if namespace not in TORCH_NAMESPACES:
            return CUSTOM_OP
        name = name.split(".", 1)[0]  # the overload ("softmax.int") is the same function
    else:
        name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
        name = name.rsplit(".", 1)[-1]  # "_VariableFunctionsClass.softmax", "TensorBase.softmax": the function
    return OP_FAMILIES.get(name, name)


# Bound once: student code that replaces these in torch._C cannot blind the recorders (the seal restores this
# module's namespace before every probe, not torch's).
_function_enabled = torch._C._is_torch_function_enabled
_function_mode_enabled = torch._C._is_torch_function_mode_enabled
_push_function_mode, _pop_function_mode = torch._C._push_on_torch_function_stack, torch._C._pop_torch_function_stack
_PLACEHOLDER_MODE = object()  # never called: on the stack only while the state is read


def _function_modes_all_disabled_before_2_5() -> bool:
    """torch._C._is_torch_function_all_disabled (new in torch 2.5) from what torch 2.0 to 2.4 expose: the state is
    ENABLED when torch functions are enabled; otherwise it is ALL_DISABLED (torch._C.DisableTorchFunction) exactly when
    a mode on the stack would not run, asked with a placeholder on the stack when it is empty (the student kit runs
    under the learner's torch)."""
    if _function_enabled():
        return False
    if _function_stack_length():
        return not _function_mode_enabled()
    _push_function_mode(_PLACEHOLDER_MODE)
    try:
        return not _function_mode_enabled()
    finally:
        _pop_function_mode()


_function_modes_all_disabled: Callable[[], bool] = getattr(
    torch._C, "_is_torch_function_all_disabled", _function_modes_all_disabled_before_2_5)
_function_stack_length, _function_stack_at = torch._C._len_torch_function_stack, torch._C._get_function_stack_at
_dispatch_stack_length, _dispatch_stack_at = torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at
_dispatch_key_excluded, _PYTHON_KEY = torch._C._dispatch_tls_is_dispatch_key_excluded, torch._C.DispatchKey.Python


def _on_stack(mode: object, length: Callable[[], int], stack_at: Callable[[int], object]) -> bool:
    return any(stack_at(index) is mode for index in range(length()))


class UncompiledDispatchMode(TorchDispatchMode):
    """A dispatch mode nothing compiles. Otherwise torch wraps each subclass's __torch_dispatch__ so that its first
    call imports torch._dynamo: more than a second of a fresh kernel's first check() and of a grading child's first
    probe (tests/test_first_check.py)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False


MAX_ORIGIN_ITEMS = 10_000  # of one container scanned for tensors that existed before a call


class Origins:
    """Which tensors a recorded call may use without the recorders having seen them made: the call's arguments and
    the state it reads (a module's parameters, buffers and tensor attributes, its forward's and the function's
    globals and closure, one container deep).

    Both recorders run in the calling thread only, and neither sees an op run in another thread, through
    `OpOverload.redispatch` to a backend key, or with both switched off. What such an op makes is a tensor no
    recorder saw made: every tensor an op of the call takes (and the call's result) must be one of the call's
    own outputs or one of the tensors above, else `unseen` is set and the rules fail closed (MODES_OFF). Tensors
    of one element are let through: the dispatcher wraps Python numbers as such. The storages seen are held until
    the call ends, so that memory freed by one op and reused by a hidden one is not taken for a tensor seen made."""

    def __init__(self, *sources: object) -> None:
        self._known: dict[int, object] = {}  # storage address -> the storage, held
        self._scanned: set[int] = set()  # ids of modules and functions already looked through
        self.unseen = False
        with torch._C.DisableTorchFunction():
            for source in sources:
                self._add_state(source)

    def add(self, value: object) -> None:
        """Tensors in `value` (an op's output) were seen made."""
        with torch._C.DisableTorchFunction():
            for tensor in _tensors_in(value):
                self._hold(tensor)

    def check(self, value: object) -> None:
        """Tensors in `value` (an op's inputs, the call's result) must have been seen or known."""
        with torch._C.DisableTorchFunction():
            for tensor in _tensors_in(value):
                key = _storage_key(tensor)
                if key and key not in self._known and _numel(tensor) > 1:
                    self.unseen = True

    def _hold(self, tensor: torch.Tensor) -> None:
        try:
            storage = torch.Tensor.untyped_storage(tensor)
        except (RuntimeError, TypeError, NotImplementedError):
            return
        self._known[storage.data_ptr()] = storage

    def _add_state(self, source: Any) -> None:
        if id(source) in self._scanned:
            return
        self._scanned.add(id(source))
        if isinstance(source, nn.Module):
            for module in source.modules():
                self._add_values(vars(module).values())
                self._add_values(vars(type(module)).values())
                for name in ("_parameters", "_buffers"):
                    self._add_values(vars(module).get(name, {}).values())
                self._add_state(getattr(type(module), "forward", None))
            return
        function = getattr(source, "__func__", source)
        if isinstance(getattr(source, "__self__", None), nn.Module):
            self._add_state(source.__self__)
        if isinstance(function, types.FunctionType):
            if id(function.__globals__) not in self._scanned:
                self._scanned.add(id(function.__globals__))
                self._add_values(function.__globals__.values())
            self._add_values((cell.cell_contents for cell in function.__closure__ or () if _filled(cell)),
                             functions=True)
        else:
            self._add_values([source])  # an argument: a tensor, or a container of them

    def _add_values(self, values: Iterable[object], functions: bool = False) -> None:
        """Tensors among `values` and in the containers among them; with `functions`, the state of the functions
        among them too (a closure's helper and its cache). Other modules of the notebook are not looked through:
        a forward that reads another model's tensors is taken for a hidden route (fail closed)."""
        for count, value in enumerate(values):
            if count > MAX_ORIGIN_ITEMS:
                return
            if isinstance(value, torch.Tensor):
                self._hold(value)
            elif functions and isinstance(value, types.FunctionType | types.MethodType):
                self._add_state(value)
            elif isinstance(value, list | tuple | dict):
                items = value.values() if isinstance(value, dict) else value
                for item in list(items)[:MAX_ORIGIN_ITEMS]:
                    if isinstance(item, torch.Tensor):
                        self._hold(item)


# Ops that only allocate: what a kernel writes into their output is not seen by this (a kernel reached by a
# redispatch allocates its result through the dispatcher, then fills it out of sight).
BLANK_OPS = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"})


# torch.tensor(...), torch.as_tensor, torch.from_numpy: a constant made from Python or NumPy data enters here. Such
# numbers are no hidden route to a library softmax by themselves: the gradient check sees a faked gradient on them.
LIFT_OPS = frozenset({"lift_fresh", "lift_fresh_copy", "lift"})


def _read_arguments(func: Any, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> list[Any]:
    """The op's arguments it reads only: one it writes (an in-place op's self, an out=) may be blank memory."""
    try:
        schema = func._schema.arguments
    except AttributeError:
        return [args, kwargs]
    written = {argument.name for argument in schema if argument.alias_info is not None and argument.alias_info.is_write}
    read = [value for argument, value in zip(schema, args, strict=False) if argument.name not in written]
    read += [value for name, value in (kwargs or {}).items() if name not in written]
    return read


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _tensors_in(value: object, depth: int = 0) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 3 and isinstance(value, list | tuple):
        for item in value:
            yield from _tensors_in(item, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item, depth + 1)


def _storage_key(tensor: torch.Tensor) -> int:
    """Where the tensor's data lives (0: nowhere to compare, a meta tensor, or no plain storage)."""
    try:
        return torch.Tensor.untyped_storage(tensor).data_ptr()
    except (RuntimeError, TypeError, NotImplementedError):
        return 0


def _numel(tensor: torch.Tensor) -> int:
    try:
        return torch.Tensor.numel(tensor)
    except (RuntimeError, TypeError):
        return 2


class DispatchedOps(UncompiledDispatchMode):
    """Records the ATen ops the dispatcher runs, into `names`: sees what no Python-level alias can hide, because
    every path to a kernel (torch.ops, torch._C, a function kept in a dict, autograd) ends at the dispatcher.
    Composite ops (softmin, the math attention kernel) are seen as the ops they are made of."""

    def __init__(self, names: list[str], functions: "FunctionCalls", origins: Origins | None = None) -> None:
        super().__init__()
        self.names = names
        self.functions = functions  # the function-level recorder, which must stay on while ops run
        self.handling = 0  # > 0 while an op runs on behalf of this mode: the mode is off the stack then
        self.origins = origins

    def __torch_dispatch__(self, func: OpOverload, types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        functions_off = _function_modes_all_disabled() or not (
            self.functions.handling or _on_stack(self.functions, _function_stack_length, _function_stack_at)
        )
        if self.origins is None:
            return _recorded_call(self, func, args, kwargs, other_recorder_off=functions_off)
        if func.overloadpacket.__name__ not in LIFT_OPS:
            self.origins.check(_read_arguments(func, args, kwargs))
        result = _recorded_call(self, func, args, kwargs, other_recorder_off=functions_off)
        if func.overloadpacket.__name__ not in BLANK_OPS:  # memory to be written, by a seen op or not
            self.origins.add(result)
        return result

    def is_off(self) -> bool:
        """Whether the dispatcher would skip this mode now (popped, or Python dispatch excluded)."""
        if self.handling:
            return False
        return _dispatch_key_excluded(_PYTHON_KEY) or not _on_stack(self, _dispatch_stack_length, _dispatch_stack_at)


class FunctionCalls(TorchFunctionMode):
    """Records the torch functions the student's code calls (F.softmax, F.scaled_dot_product_attention...) and the
    ATen ops they run, as readable names in `names` (see `op_name`): an alias of a forbidden function is recorded
    under that function's name. Each recorder notes when the other was switched off (`MODES_OFF`)."""

    def __init__(self, origins: Origins | None = None) -> None:
        super().__init__()
        self.names: list[str] = []
        self.handling = 0  # > 0 while a call runs on behalf of this mode: the mode is off the stack then
        self.origins = origins  # given: tensors no recorder saw made are noted too (see Origins)
        self._ops = DispatchedOps(self.names, self, origins)

    def __enter__(self) -> Self:
        super().__enter__()
        try:
            self._ops.__enter__()
        except BaseException:
            super().__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            self._ops.__exit__(exc_type, exc_value, traceback)
        finally:
            super().__exit__(exc_type, exc_value, traceback)

    def __torch_function__(self, func: Callable[..., Any], types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        result = _recorded_call(self, func, args, kwargs, other_recorder_off=self._ops.is_off())
        if self.origins is not None and not isinstance(func, OpOverload):  # ATen ops: the dispatch level's to judge
            self.origins.add(result)
        return result

    def result_checked(self, result: Any) -> Any:
        """The call's result, after noting (MODES_OFF) a tensor in it, or used by its ops, that no recorder saw
        made; the result as it was."""
        if self.origins is not None:
            self.origins.check(result)
            if self.origins.unseen:
                self.names.append(MODES_OFF)
        return result


def _recorded_call(recorder: "DispatchedOps | FunctionCalls", func: Callable[..., Any], args: Sequence[Any],
                   kwargs: Mapping[str, Any] | None, *, other_recorder_off: bool) -> Any:
    """Record `func` under its public name (and MODES_OFF when the other recorder was switched off), then run it
    with `recorder.handling` raised: while it runs, the recorder is off the mode stack on purpose."""
    recorder.names.append(op_name(func))
    if other_recorder_off:
        recorder.names.append(MODES_OFF)
    recorder.handling += 1
    try:
        return func(*args, **(kwargs or {}))
    finally:
        recorder.handling -= 1


MATMUL_OPS = frozenset(
    {
        "mm",
        "bmm",
        "addmm",
        "matmul",
        "baddbmm",
        "addbmm",
        "mv",
        "dot",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_attention_math",
    }
)


class MatmulCount(UncompiledDispatchMode):
    """Counts matrix-multiply ops dispatched to ATen: a loop over heads makes the count grow with num_heads."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func: OpOverload, types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        if func.overloadpacket.__name__ in MATMUL_OPS:
            self.count += 1
        return func(*args, **(kwargs or {}))


# Ops that may take CPU index tensors for tensors on any device: not a device mix.
INDEXING_OPS = frozenset({"index", "index_put", "index_put_", "_index_put_impl_"})


class DeviceMixWatch(UncompiledDispatchMode):
    """Notes every op that mixes a non-scalar CPU tensor into work on another device.

    Run with the module and its input on `meta` (or a GPU): a tensor the student's code created without
    `device=` stays on the CPU, and an op that combines it with the others fails on a GPU. On `meta`, an
    in-place op such as masked_fill_ raises nothing, so the mix is looked for here instead.
    """

    def __init__(self) -> None:
        super().__init__()
        self.mixed: list[str] = []  # names of the ops that mixed devices
        self.to_cpu: list[str] = []  # names of the ops that copied a tensor off the device onto the CPU
        # The mixing ops whose CPU tensor was created during this watch (a factory call, or work on such tensors
        # only): state kept from an earlier call is on the CPU for another reason (issue 58).
        self.mixed_created: list[str] = []
        self._created: set[int] = set()  # storages of the CPU tensors created during this watch
        self._kept: list[torch.Tensor] = []  # those tensors, kept alive so that no other tensor reuses their storage
        self.mixed_kept: list[str] = []  # the mixing ops whose CPU tensor is one of `kept_before`'s
        self._kept_before: set[int] = set()
        self._deferred = contextlib.ExitStack()

    def __enter__(self) -> Self:
        # Most ops on meta run Python kernels whose first call would import torch._dynamo (deferred_imports.py).
        self._deferred.enter_context(torch_imports_deferred())
        return super().__enter__()

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        try:
            super().__exit__(exc_type, exc_value, traceback)
        finally:
            self._deferred.close()

    def __torch_dispatch__(self, func: OpOverload, types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        if func.overloadpacket.__name__ not in INDEXING_OPS:
            tensors = [value for value in _flat(args) + _flat(kwargs) if isinstance(value, torch.Tensor)]
            on_cpu = any(t.device.type == "cpu" and t.dim() > 0 for t in tensors)
            elsewhere = any(t.device.type != "cpu" for t in tensors)
            if on_cpu and elsewhere:
                self.mixed.append(func.overloadpacket.__name__)
                if any(_storage(t) in self._created for t in tensors if t.device.type == "cpu" and t.dim() > 0):
                    self.mixed_created.append(func.overloadpacket.__name__)
                if any(_storage(t) in self._kept_before for t in tensors if t.device.type == "cpu" and t.dim() > 0):
                    self.mixed_kept.append(func.overloadpacket.__name__)
            if _copies_to_cpu(func, tensors, kwargs):
                self.to_cpu.append(func.overloadpacket.__name__)
        result = func(*args, **(kwargs or {}))
        self._note_created(func, [v for v in _flat(args) + _flat(kwargs) if isinstance(v, torch.Tensor)], result)
        return result

    def kept_before(self, tensors: Sequence[torch.Tensor]) -> Self:
        """Tensors that exist before the watched call (a module's plain attributes): a mix with one of them is noted
        in `mixed_kept`, a tensor kept from an earlier call rather than one created in this one."""
        self._kept_before.update(_storage(t) for t in tensors if t.device.type == "cpu" and _storage(t))
        return self

    def _note_created(self, func: OpOverload, tensors: Sequence[torch.Tensor], result: object) -> None:
        """Notes the CPU outputs of a factory call (no tensor in, or torch.tensor's lift_fresh) and of work done on
        created CPU tensors only (torch.tril(torch.ones(...)), a new layer's uniform_ initialisation)."""
        cpu_inputs = [t for t in tensors if t.device.type == "cpu"]
        factory = not tensors or func.overloadpacket.__name__ in ("lift_fresh", "lift_fresh_copy")
        if not factory and not (cpu_inputs and all(_storage(t) in self._created for t in cpu_inputs)):
            return
        for value in _flat(result):
            if isinstance(value, torch.Tensor) and value.device.type == "cpu" and _storage(value):
                self._created.add(_storage(value))
                self._kept.append(value)


def _storage(tensor: torch.Tensor) -> int:
    """Where a CPU tensor's values live: the same for a tensor, its views and a Parameter made from it."""
    return int(tensor.untyped_storage().data_ptr())


def _copies_to_cpu(func: OpOverload, tensors: Sequence[torch.Tensor], kwargs: Mapping[str, Any] | None) -> bool:
    """True for a copy (.cpu(), .to("cpu")) of a tensor on another device onto the CPU: on `meta` it raises as a
    read of values would, but on a GPU it is a tensor that has left the module's device (issue 58)."""
    if func.overloadpacket.__name__ != "_to_copy" or not tensors or tensors[0].device.type == "cpu":
        return False
    target = (kwargs or {}).get("device")
    return target is not None and torch.device(target).type == "cpu"


def _flat(value: object) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for element in value for item in _flat(element)]
    if isinstance(value, dict):
        return [item for element in value.values() for item in _flat(element)]
    return [value]


def called_functions(function: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    """(result, sorted readable names of the torch functions and ATen ops the call went through); MODES_OFF among
    them when the call used a tensor no recorder saw made (another thread, a redispatch: see Origins)."""
    with FunctionCalls(Origins(function, *args)) as calls:
        result = function(*args)
    calls.result_checked(result)
    return result, sorted(set(calls.names))


def called_functions_until_raise(function: Callable[..., Any], *args: Any) -> list[str]:
    """called_functions' names for a call whose result is not wanted, recorded up to its exception when it raises:
    what the call went through before raising is still a fact of it (a rule on the functions used), and the
    exception itself is the value checks' matter, which make the same call."""
    with FunctionCalls(Origins(function, *args)) as calls:
        try:
            result = function(*args)
        except Exception:  # noqa: BLE001 - the student's error: another check reports it
            return sorted(set(calls.names))
    calls.result_checked(result)
    return sorted(set(calls.names))


def forbidden_calls(names: Iterable[str], forbidden: Collection[str]) -> list[str]:
    """The recorded names (see `op_name`) that are in `forbidden`, sorted, as the student should read them."""
    families = {OP_FAMILIES.get(short, short) for short in (name.rsplit(".", 1)[-1] for name in names)}
    return sorted(family for family in families if family in forbidden)


class ForwardWatch(FunctionCalls):
    """FunctionCalls that also notices `.T` on a tensor with a batch dimension: it reverses EVERY axis."""

    def __init__(self, origins: Origins | None = None) -> None:
        super().__init__(origins)
        self.batched_transpose = False

    def __torch_function__(self, func: Callable[..., Any], types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        if getattr(func, "__self__", None) is torch.Tensor.T and args and getattr(args[0], "ndim", 2) > 2:
            self.batched_transpose = True
        return super().__torch_function__(func, types, args, kwargs)


_VERSION_PROPERTY = vars(torch._C.TensorBase)["_version"]  # torch's own descriptor: no subclass's property


def _version(tensor: torch.Tensor) -> int:
    """The tensor's version counter (read from torch's own property, whatever a subclass says); -1 when it has none
    (an inference tensor)."""
    try:
        return int(_VERSION_PROPERTY.__get__(tensor))
    except (RuntimeError, TypeError, AttributeError):
        return -1


def _written(func: OpOverload, args: Sequence[Any], kwargs: Mapping[str, Any] | None) -> list[torch.Tensor]:
    """The tensors an op writes into: an in-place op's self, an out= (its schema marks them as written)."""
    try:
        schema = func._schema.arguments
    except AttributeError:
        return []
    written = [value for argument, value in zip(schema, args, strict=False)
               if argument.alias_info is not None and argument.alias_info.is_write]
    written += [value for name, value in (kwargs or {}).items() if any(
        argument.name == name and argument.alias_info is not None and argument.alias_info.is_write
        for argument in schema)]
    return [tensor for value in written for tensor in _tensors_in(value)]


class UntrackedEdits(UncompiledDispatchMode):
    """Notes, in `ops`, each in-place op (or out=) of the watched call that wrote into a tensor of autograd's graph
    without autograd recording the edit: with gradients switched off (`torch.no_grad()`), or through an alias that
    is out of the graph (`.data`, `.detach()`) of a tensor in it. The graph then holds the values before the edit:
    backward computes the gradient of another computation than forward's. A tensor out of every graph (a mask built
    under no_grad, a constant) may be edited freely, and so may any tensor with gradients on (autograd records it).

    Every tensor an op makes is held until the call ends: its storage then stands for it (a `.data` alias shares
    it), and whether it is in the graph is read at the edit, once autograd has given it its history.

    An edit made with this mode switched off (popped, `_disable_current_modes`) is not seen as an op, but it moves
    the edited tensor's version counter: each held tensor's version may grow only by the edits seen on its storage
    since it was last looked at (when an op takes it, and when the call ends), else MODES_OFF is noted and the
    checks fail closed. Not seen: such an edit through an alias with a counter of its own (`.data`) on a storage
    whose other tensors an edit was seen on in the meantime."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []
        self._made: dict[int, list[torch.Tensor]] = {}  # storage address -> the tensors made on it, held
        self._seen_writes: dict[int, int] = {}  # storage address -> the edits seen on it
        # id of a held tensor -> (it, its version and its storage's seen edits when last looked at)
        self._versions: dict[int, tuple[torch.Tensor, int, int]] = {}

    def __enter__(self) -> Self:
        self._look([entry[0] for entry in self._versions.values()], baseline=True)  # between calls: not ours
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        self._look([entry[0] for entry in self._versions.values()])
        super().__exit__(*exc)

    def __torch_dispatch__(self, func: OpOverload, types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        inputs = list(_tensors_in((args, kwargs)))
        self._look(inputs)
        written = _written(func, args, kwargs)
        if torch._C._current_graph_task_id() == -1:  # backward's own ops (a gradient accumulated) are no edit
            for target in written:
                if not self._recorded(target):
                    self.ops.append(op_name(func))
        result = func(*args, **(kwargs or {}))
        for tensor in _tensors_in((args, result)):
            key = _storage_key(tensor)
            self._made.setdefault(key, []).append(tensor)
            if id(tensor) not in self._versions:
                # A view made here gets its base's counter once this returns: its version is its base's.
                version = max((_version(base) for base in inputs if key and _storage_key(base) == key),
                              default=_version(tensor))
                self._versions[id(tensor)] = (tensor, version, self._seen_writes.get(key, 0))
        for target in written:  # its version moves once this returns (autograd's ADInplaceOrView), counted after
            key = _storage_key(target)
            self._seen_writes[key] = self._seen_writes.get(key, 0) + 1
        return result

    def _look(self, tensors: Iterable[torch.Tensor], baseline: bool = False) -> None:
        """Note MODES_OFF if a held tensor among `tensors` was edited more often than this mode saw; then take its
        version as it is now. `baseline`: take them only (what ran between two watched calls is not the call's)."""
        for tensor in tensors:
            entry = self._versions.get(id(tensor))
            if entry is None or entry[0] is not tensor:
                continue
            key = _storage_key(tensor)
            version, writes = _version(tensor), self._seen_writes.get(key, 0)
            if not baseline and version > entry[1] + writes - entry[2] and MODES_OFF not in self.ops:
                self.ops.append(MODES_OFF)
            self._versions[id(tensor)] = (tensor, version, writes)

    def watching(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function`, each of its calls run with this recorder on."""

        def watched(*args: Any) -> Any:
            with self:
                return function(*args)

        return watched

    def _recorded(self, target: torch.Tensor) -> bool:
        """Whether autograd records an edit of `target` now, or `target` is out of every graph."""
        key = _storage_key(target)  # 0: no storage to share (a meta tensor)
        in_graph = _REQUIRES_GRAD(target) or bool(key) and any(
            _REQUIRES_GRAD(tensor) for tensor in self._made.get(key, ()) if tensor is not target)
        return not in_graph or (torch.is_grad_enabled() and _REQUIRES_GRAD(target))


class ParameterReads(TorchFunctionMode):
    """Whether each torch call that read `parameter` itself (the object, as an argument) returned a tensor autograd
    recorded, in `in_graph`, in call order."""

    def __init__(self, parameter: torch.Tensor) -> None:
        super().__init__()
        self.parameter = parameter
        self.in_graph: list[bool] = []

    def __torch_function__(self, func: Callable[..., Any], types: Collection[type], args: Sequence[Any] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        result = func(*args, **(kwargs or {}))
        if any(value is self.parameter for value in _flat((args, kwargs))):
            made = list(_tensors_in(result))
            self.in_graph.append(bool(made) and all(_REQUIRES_GRAD(tensor) for tensor in made))
        return result


_REQUIRES_GRAD = vars(torch._C.TensorBase)["requires_grad"].__get__  # the base getter: no property of a subclass


def parameter_read_in_graph(module: Callable[[torch.Tensor], Any], x: torch.Tensor, parameter: torch.Tensor) -> bool:
    """Whether module(x) reads `parameter` and every call that reads it returns tensors autograd recorded: the
    parameter enters the graph wherever it is read (call it with gradients on). A crash reads as False, and so does a
    parameter whose gradients are off after the call (its reads are then recorded only through the input's)."""
    try:
        with ParameterReads(parameter) as reads:
            module(x)
    except Exception:  # noqa: BLE001 - a forward that fails here proves nothing of where it leaves the graph
        return False
    return parameter.requires_grad and bool(reads.in_graph) and all(reads.in_graph)


def call_watched(module: Callable[[torch.Tensor], Any], x: torch.Tensor) -> tuple[Any, ForwardWatch]:
    """(module(x), watch). A crash is raised as it is: what caused it is told by reproducing it
    (autograder.checking.reproduction), not by what the watch saw before it."""
    with ForwardWatch(Origins(module, x)) as watch:
        output = module(x)
    watch.result_checked(output)
    return output, watch
