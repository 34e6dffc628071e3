"""Helpers for probes: the half of a check that runs the student's code.

Nothing here imports `solutions`: probes may run in a process that must not see the reference.
Everything a probe returns is plain data (tensors detached to CPU, numbers, strings).
"""

import contextlib
import copy
import inspect
import io
import linecache
import math
import numbers
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeGuard

import torch
from torch import nn
from torch.utils._python_dispatch import _disable_current_modes

if TYPE_CHECKING:
    from torch.utils.hooks import RemovableHandle

__all__ = [
    "EDITS", "InputChange", "LinearProjections", "MAX_MESSAGE_CHARS", "PROJECTIONS", "ModuleGradients",
    "ParameterProjections", "ProbeError", "PROBE_SEED", "arguments_changes", "as_count", "below_student_code",
    "describe_exception", "dtype_name", "exception_type_name", "grader_torch_state", "gradient_flow",
    "gradient_is_own_slope", "gradient_of", "gradient_weights", "head_outputs", "informative_queries", "input_changes",
    "OWN_SLOPE_FIELDS", "kept_if_raised", "layer_inputs", "lookup", "module_gradients", "module_own_slopes",
    "own_slopes_later", "own_slopes_only", "plain", "rand", "with_own_slopes_of",
    "renamed_mask_argument", "run_probe", "seeded", "state_of", "takes_attention_mask",
]

PROJECTIONS = ("W_query", "W_key", "W_value")  # the query/key/value layers every attention module of the book has


def dtype_name(dtype: torch.dtype) -> str:
    """"float32" for torch.float32."""
    return str(dtype).removeprefix("torch.")


class ProbeError(Exception):
    """A problem the probe found before or after calling the student (missing name, wrong type)."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


def lookup(namespace: Mapping[str, Any], name: str) -> Any:
    if name not in namespace:
        raise ProbeError("error.missing_name", name=name)
    return namespace[name]


def plain(value: object) -> torch.Tensor:
    """A detached CPU copy of a returned tensor; anything else is a wrong-type error."""
    if not isinstance(value, torch.Tensor):
        raise ProbeError("error.wrong_type", got=type(value).__module__ + "." + type(value).__name__)
    # Below __torch_function__ and the student's dispatch modes: a subclass's methods are never called here.
    with below_student_code(value):
        tensor = value if type(value) is torch.Tensor else torch.Tensor.as_subclass(value, torch.Tensor)
        tensor = tensor.detach()
        return tensor.to("cpu", copy=True) if tensor.device.type != "meta" else tensor


def below_student_code(value: object) -> contextlib.AbstractContextManager[Any]:
    """Where a tensor is copied without running student code: __torch_function__ off (subclasses and modes) and
    the dispatch modes set aside. A plain tensor with no mode on needs neither (and the copy is then 2x cheaper)."""
    if type(value) is torch.Tensor and not torch._C._len_torch_function_stack() \
            and not torch._C._len_torch_dispatch_stack():
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(torch._C.DisableTorchFunction())
    stack.enter_context(_without_dispatch_modes())
    return stack


def _without_dispatch_modes() -> contextlib.AbstractContextManager[Any]:
    """The dispatch modes set aside while the grader copies a tensor; nothing to do (and nothing paid: setting them
    aside costs more than the copy) when none is on."""
    return _disable_current_modes() if torch._C._len_torch_dispatch_stack() else contextlib.nullcontext()


_CPU_GENERATOR = torch.default_generator  # the CPU generator torch.rand and layer initialisation draw from


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """The CPU generator seeded for student code that draws from it (layer init, dropout); restored afterwards.

    torch.manual_seed would also poke every accelerator backend (a millisecond per call), and the notebook's own
    random state must be as it was after a check. What torch.random.fork_rng(devices=[]) does, without its checks of
    the devices (half its cost: every probe call runs inside one, run_probe), on the generator as it was when the
    grader was imported (a cell rebinding `torch.default_generator` changes nothing here).
    """
    state = _CPU_GENERATOR.get_state()
    _CPU_GENERATOR.manual_seed(int(seed))
    try:
        yield
    finally:
        _CPU_GENERATOR.set_state(state)


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def rand(seed: int, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Inputs are uniform in [-1, 1): deterministic from the case seed, so the judge can rebuild them."""
    return (torch.rand(*shape, generator=generator(seed), dtype=torch.float64) * 2 - 1).to(dtype)


def state_of(module: nn.Module) -> dict[str, torch.Tensor]:
    """The module's parameters and buffers as plain tensors, by qualified name."""
    state = {name: plain(value) for name, value in module.named_parameters()}
    state.update({name: plain(value) for name, value in module.named_buffers()})
    return state


MAX_MESSAGE_CHARS = 400  # of an exception's text: a huge message costs the grader nothing past this
MAX_CODE_CHARS = 2000  # of the student's function before the failing line (read for what it did, never shown)
# Read through the C getters of `type` and BaseException: a student's metaclass or exception class cannot put a
# property in their way.
_TYPE_QUALNAME = vars(type)["__qualname__"].__get__
_TRACEBACK_OF = vars(BaseException)["__traceback__"].__get__


def describe_exception(exc: BaseException) -> dict[str, Any]:
    """{"type", "message", "line"} of an exception raised by student code, without trusting it.

    The exception is the student's object: its class name, text and traceback are read under a guard, its text
    capped; what cannot be read falls back to a text that names the type (or "an exception"). The caller may
    bound the time (the grading child arms its alarm around this: a __str__ that never returns is interrupted).
    """
    kind = exception_type_name(exc)
    line, code = _student_code(exc)
    return {"type": kind, "message": _exception_message(exc, kind), "line": line, "code": code,
            "frames": _student_frames(exc)}


def exception_type_name(exc: BaseException) -> str:
    """The exception class's __qualname__, read below any property a student's class could define."""
    try:
        name = _TYPE_QUALNAME(type(exc))
    except BaseException:  # noqa: BLE001 - whatever the student's class does, there is a name to give
        return "exception"
    return _exact_text(name, 120) or "exception"


def _exception_message(exc: BaseException, kind: str = "exception") -> str:
    """str(exc), capped; the student's __str__ runs under a guard (it may raise, or return a str subclass)."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a __str__ that raises (anything, even SystemExit) has no message
        return f"<{kind}: its message could not be read>"
    return _exact_text(text, MAX_MESSAGE_CHARS)


def _is_text(value: object) -> TypeGuard[str]:
    return str in type(value).__mro__


def _exact_text(value: object, limit: int) -> str:
    """A plain str of at most `limit` characters; a str subclass is copied by str's own slicing, never its methods."""
    if not _is_text(value):
        return ""
    return str.__getitem__(value, slice(0, limit))


def _student_code(exc: BaseException) -> tuple[str, str]:
    """(the last line of the traceback that is the student's own, not torch's or the grader's; the text of that
    line's function up to it), "" where unknown or where no frame is the student's (an error the grader's own line
    raised is never quoted as theirs): a judge reads what the code did before it failed (a transpose before a
    view?) as plain text.

    Walks the traceback by hand: traceback.extract_tb would ask each frame's globals for a loader (lazycache),
    which is the student's to define."""
    try:
        tb = _TRACEBACK_OF(exc)
        frames: list[tuple[str, int, int]] = []
        while tb is not None and len(frames) < 200:
            code = tb.tb_frame.f_code
            frames.append((code.co_filename, tb.tb_lineno, code.co_firstlineno))
            tb = tb.tb_next
        student_frames = [frame for frame in frames if not _is_library(frame[0])]
        if not student_frames:  # raised in the grader's or torch's own code: no line of the student's to quote
            return "", ""
        where = student_frames[-1]
        cached = linecache.cache.get(where[0])
        lines = cached[2] if isinstance(cached, tuple) and len(cached) > 2 else linecache.getlines(where[0])
        if not isinstance(lines, list) or not 0 < where[1] <= len(lines):
            return "", ""
        line = lines[where[1] - 1]
        before = "".join(text for text in lines[max(where[2], 1) - 1:where[1]] if _is_text(text))
        return (_exact_text(line, MAX_MESSAGE_CHARS).strip() if _is_text(line) else "",
                _exact_text(before[-MAX_CODE_CHARS:], MAX_CODE_CHARS))
    except BaseException:  # noqa: BLE001 - the line is a hint: without it the message still names the type
        return "", ""


MAX_FRAMES = 20  # the innermost student frames kept of a traceback: enough to reach the learner's own call


def _student_frames(exc: BaseException) -> list[list[str]]:
    """[file, function, line] of each frame of the traceback that is not torch's or the grader's, outermost first
    (the innermost MAX_FRAMES): whose cell a line is in, so that the diagnosis quotes a line as the learner's only
    when it is in their answer (a line of the code the notebook gives, called from theirs, is not theirs). [] where
    the traceback cannot be read."""
    try:
        tb = _TRACEBACK_OF(exc)
        frames: list[list[str]] = []
        walked = 0
        while tb is not None and walked < 200:
            walked += 1
            code, number = tb.tb_frame.f_code, tb.tb_lineno
            tb = tb.tb_next
            if _is_library(code.co_filename):
                continue
            line = linecache.getline(code.co_filename, number) if number else ""
            frames.append([_exact_text(code.co_filename, MAX_MESSAGE_CHARS), _exact_text(code.co_qualname, 200),
                           _exact_text(line, MAX_MESSAGE_CHARS).strip() if _is_text(line) else ""])
        return frames[-MAX_FRAMES:]
    except BaseException:  # noqa: BLE001 - the frames are a hint: without them no line is quoted as the learner's
        return []


def _is_library(filename: str) -> bool:
    path = filename.replace("\\", "/")
    return "/autograder/" in path or "/site-packages/" in path or "/lib/python3" in path


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Student code's prints and warnings go nowhere: a test cell that writes to stderr scores 0 in nbgrader."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            yield


@contextlib.contextmanager
def layer_inputs(module: nn.Module, *names: str) -> Iterator[dict[str, torch.Tensor]]:
    """{name: what the submodule `name` last received}, for the named submodules forward calls: `dropout` receives
    the attention weights, `out_proj` the merged heads, in a forward pass that applies them where attention does."""
    seen: dict[str, torch.Tensor] = {}
    handles: list[RemovableHandle] = []
    for name in names:
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Module):
            continue

        def keep(_layer: nn.Module, args: tuple[Any, ...], name: str = name) -> None:
            if args and isinstance(args[0], torch.Tensor):
                seen[name] = args[0].detach().to("cpu", copy=True)

        handles.append(layer.register_forward_pre_hook(keep))
    try:
        yield seen
    finally:
        for handle in handles:
            handle.remove()


# torch.get_default_device is new in torch 2.3 (the student kit runs under the learner's torch). Bound at import, as
# the recorders' functions are: a cell that deletes it from torch does not change what the grader reads.
_get_default_device: Callable[[], torch.device] | None = getattr(torch, "get_default_device", None)


def _default_device() -> torch.device:
    """torch.get_default_device(); before torch 2.3, the device of the context torch.set_default_device entered,
    which torch 2.0 to 2.2 keep in torch._GLOBAL_DEVICE_CONTEXT (None while the default is the CPU)."""
    if _get_default_device is not None:
        return _get_default_device()
    return torch.device(getattr(getattr(torch, "_GLOBAL_DEVICE_CONTEXT", None), "device", "cpu"))


@contextlib.contextmanager
def grader_torch_state() -> Iterator[None]:
    """torch's global settings as the grader runs with them, whatever a notebook cell set (grad mode, default dtype
    and device, deterministic algorithms): correct code keeps its points after `torch.set_grad_enabled(False)`.
    The notebook's own settings are back afterwards."""
    grad, dtype, device = torch.is_grad_enabled(), torch.get_default_dtype(), _default_device()
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    if device.type != "cpu":
        torch.set_default_device(None)
    # Only when a cell switched it on: the setter imports torch._dynamo (a second, once per process) on first use.
    if deterministic:
        torch.use_deterministic_algorithms(False)
    try:
        yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)
        if device.type != "cpu":
            torch.set_default_device(device)
        if deterministic:
            torch.use_deterministic_algorithms(True, warn_only=warn_only)


class _RaisedAfterRecording(Exception):  # noqa: N818 - not an error of its own: it carries the student's
    """The student's exception with what the probe recorded before it (kept_if_raised)."""

    def __init__(self, error: Exception, recorded: Mapping[str, Any]) -> None:
        super().__init__()
        self.error, self.recorded = error, dict(recorded)


@contextlib.contextmanager
def kept_if_raised(**recorded: Any) -> Iterator[None]:
    """Keep `recorded` (a module's starting weights, plain data) beside the error when the student's code raises in
    the block: the diagnosis computes the notes' steps from it and tells which the code reproduced before it raised.
    A ProbeError is the probe's own finding and passes as it is."""
    try:
        yield
    except ProbeError:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised, whatever it is, for run_probe to describe
        raise _RaisedAfterRecording(exc, recorded) from None


_KEPT_IF_RAISED_CODE = kept_if_raised.__wrapped__.__code__  # type: ignore[attr-defined]


def _raised_by_kept_if_raised(raised: BaseException) -> bool:
    """Whether `raised` comes from kept_if_raised itself (the last frame of its traceback is that function's code),
    not from student code that imported the class to hand the probe records of its own making."""
    tb = raised.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is _KEPT_IF_RAISED_CODE


# The CPU generator's seed at the start of every probe call (run_probe). Student code that draws from the global
# generator (layers built in forward, dropout in train mode, torch.rand) reads the same numbers on every run of the
# same submission, whatever the notebook, the grader or an earlier probe drew before; a probe that seeds its own build
# (seeded(init_seed)) forks again inside, so its values are those of its own seed. Not the notes' 123 nor a small case
# seed: a learner's draws never replay the notes' weights.
PROBE_SEED = 271828


def run_probe(probe: Callable[[Mapping[str, Any], Any], Any], namespace: Mapping[str, Any],
              case: Any) -> dict[str, Any]:
    """Run one probe under the grader's torch settings, the CPU generator seeded with PROBE_SEED in a fork of it (the
    notebook's random stream is as it was afterwards: a learner who runs a check between two cells draws the same
    later numbers as one who does not); any exception from the student's code becomes plain data."""
    try:
        with _silenced(), grader_torch_state(), seeded(PROBE_SEED):
            return probe(namespace, case)
    except ProbeError as problem:
        return {
            "error": {"type": "ProbeError", "key": problem.key, "fields": problem.fields, "message": "", "line": ""}
        }
    except _RaisedAfterRecording as raised:
        if not _raised_by_kept_if_raised(raised):  # the student's own raise of the class: an exception like any
            return {"error": describe_exception(raised)}
        return {**raised.recorded, "error": describe_exception(raised.error)}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a student cell is a grade, not a crash
        return {"error": describe_exception(exc)}


# Probe helpers of the exercise folders' probe modules, which the grading child and the student kit both run.


def gradient_flow(function: Callable[[torch.Tensor], Any], x: torch.Tensor) -> tuple[str, dict[str, Any] | None]:
    """Whether gradients flow back through `function` to its input, given a tensor of a graph as a model would:
    "ok", "no_gradient" (the graph stops: .detach(), .data, NumPy, no_grad), "not_finite", "call_raised" (the call
    itself raised, given an input of a graph) or "raised" (backward raised), with the exception (describe_exception)
    for either. A zero gradient can be right (a softmax over one key)."""
    status, error, _gradient = gradient_of(function, x)
    return status, error


def gradient_weights(shape: Iterable[int]) -> torch.Tensor:
    """The random mix of a function's outputs whose gradient gradient_of takes; the judge rebuilds it."""
    shape = tuple(shape)
    return torch.rand(shape, generator=generator(len(shape) + math.prod(shape)), dtype=torch.float64)


def gradient_of(function: Callable[[torch.Tensor], Any],
                x: torch.Tensor) -> tuple[str, dict[str, Any] | None, torch.Tensor | None]:
    """gradient_flow's (status, error) and the gradient itself (a plain copy; None unless "ok"): a judge compares
    it with the true one, so a faked gradient (NumPy numbers with `x - x.detach()` added) is seen."""
    source = x.detach().clone().requires_grad_(True)
    try:
        output = function(source * 1)
    except Exception as exc:  # noqa: BLE001 - the call itself raised (`.numpy()` on a tensor of a graph): its phase
        return "call_raised", describe_exception(exc), None
    try:
        if not isinstance(output, torch.Tensor) or not output.requires_grad:
            return "no_gradient", None, None
        (output * gradient_weights(output.shape).to(output.dtype)).sum().backward()
    except Exception as exc:  # noqa: BLE001 - a function autograd cannot go back through is the finding
        return "raised", describe_exception(exc), None
    if source.grad is None:
        return "no_gradient", None, None
    if not torch.isfinite(source.grad).all():
        return "not_finite", None, None
    return "ok", None, plain(source.grad)


SLOPE_STEP = 1e-3  # of the input's largest size (at least 1): a finite difference float32 keeps to ~1e-4
# float64 keeps a step a thousand times shorter as well: it straddles no kink (a clamp) the input is not within 1e-6 of
SLOPE_STEP_FLOAT64 = 1e-6
SLOPE_TOLERANCE = 0.05  # of the larger slope, plus SLOPE_STEP: rounding, never a step autograd left out


# Whether the probes read the own slopes of a gradient (gradient_is_own_slope, module_own_slopes) now; False inside
# own_slopes_later(), where they are read only for the checks a judge failed, in a second look (with_own_slopes_of).
_OWN_SLOPES_NOW: ContextVar[bool] = ContextVar("attnkit_own_slopes_now", default=True)
# Where the probes write the own slopes, at any depth of a record (a module's under its backward pass's record).
OWN_SLOPE_FIELDS = ("gradient_is_own_slope", "input_own_slope", "own_slopes")


@contextlib.contextmanager
def own_slopes_later() -> Iterator[None]:
    """While open, the probes read no own slope (gradient_is_own_slope answers None, module_gradients reads none):
    a judge reads them only where a gradient is wrong, so a correct submission need not pay for them (issue 59).
    The caller probes its failing checks again outside it and takes their slopes with `with_own_slopes_of`."""
    token = _OWN_SLOPES_NOW.set(False)
    try:
        yield
    finally:
        _OWN_SLOPES_NOW.reset(token)


def with_own_slopes_of(record: Any, again: Any) -> Any:
    """`record` (a probe's data for one case) with the own slopes (OWN_SLOPE_FIELDS) `again`, the same case probed
    once more with them read, wrote at the same place; nothing else of `again` is taken (the judge reads the first
    run's values, as before). A record that is not a dict, or a place `again` lacks, stays as it is."""
    if not isinstance(record, dict) or not isinstance(again, dict):
        return record
    merged = dict(record)
    for key, value in record.items():
        if key in again and isinstance(value, dict):
            merged[key] = with_own_slopes_of(value, again[key])
    for key in OWN_SLOPE_FIELDS:
        if key in again:
            merged[key] = again[key]
    return merged


def own_slopes_only(record: Any) -> dict[str, Any]:
    """The own slopes (OWN_SLOPE_FIELDS) a probe wrote into `record`, at their places (the dicts that lead to them),
    and nothing else: what a grading child sends of its second look (with_own_slopes_of takes them in). {} where
    there are none."""
    if not isinstance(record, dict):
        return {}
    kept: dict[str, Any] = {}
    for key, value in record.items():
        if key in OWN_SLOPE_FIELDS:
            kept[key] = value
        elif isinstance(value, dict) and (inner := own_slopes_only(value)):
            kept[key] = inner
    return kept


def gradient_is_own_slope(function: Callable[[torch.Tensor], Any], x: torch.Tensor, gradient: torch.Tensor,
                          mix: Callable[[torch.Tensor], torch.Tensor] | None = None) -> bool | None:
    """Whether the gradient autograd gave for `function` at x (gradient_of's, for the mix of gradient_weights) is the
    slope of the function's own values there, along one fixed direction (a central finite difference of its own
    output): False proves a step autograd did not record (a constant to it, while the values move); True says
    autograd followed every step, so a gradient unlike the notes' is the function's own (flat where theirs is not:
    a clamp past its bound). None where it cannot be read (a call raised, a non-tensor or non-finite result).
    `mix`: the mix of the outputs the gradient was taken for, where it is not gradient_weights' (a module's probe).
    None, no call made, inside own_slopes_later()."""
    if not _OWN_SLOPES_NOW.get():
        return None
    with torch.no_grad():
        base = x.detach().clone()
        direction = gradient_weights(base.shape).to(base.dtype) * 2 - 1
        finite = base[base.isfinite()] if base.is_floating_point() else base.new_zeros(0)
        step = (SLOPE_STEP_FLOAT64 if base.dtype == torch.float64 else SLOPE_STEP) \
            * max(1.0, float(finite.abs().max()) if finite.numel() else 1.0)
        try:
            ahead, behind = function(base + step * direction), function(base - step * direction)
        except Exception:  # noqa: BLE001 - the slope cannot be read; the gradient proves nothing alone
            return None
        if not isinstance(ahead, torch.Tensor) or not isinstance(behind, torch.Tensor) \
                or ahead.shape != behind.shape:
            return None
        try:
            weights = gradient_weights(ahead.shape) if mix is None else plain(mix(ahead))
            numeric = float(((plain(ahead).double() - plain(behind).double()) * weights.double()).sum()) / (2 * step)
        except Exception:  # noqa: BLE001 - an output the mix does not fit: no slope read
            return None
    recorded = float((gradient.double() * direction.double()).sum())
    if not math.isfinite(numeric) or not math.isfinite(recorded):
        return None
    return abs(numeric - recorded) <= SLOPE_TOLERANCE * max(abs(numeric), abs(recorded)) + SLOPE_STEP


class ModuleGradients(TypedDict):
    """One backward pass through a module (module_gradients): its parameters before the call, by every name (a
    module repeated under two names keeps both), which names are another's parameter object, what the call
    returned, and what reached each parameter and the input."""

    state: dict[str, torch.Tensor]
    aliases: dict[str, str]  # a parameter name -> the first name of the same parameter object
    output: torch.Tensor
    parameters: dict[str, torch.Tensor]  # where a gradient reached the parameter
    input: NotRequired[torch.Tensor]  # where a gradient reached the input
    # module_own_slopes: whether each gradient (a missing one as zeros) is the slope of the module's own outputs,
    # where that could be read; the input's under input_own_slope, a parameter's by its name.
    input_own_slope: NotRequired[bool]
    own_slopes: NotRequired[dict[str, bool]]


def module_gradients(module: nn.Module, x: torch.Tensor, call: Callable[[torch.Tensor], Any],
                     mix: Callable[[torch.Tensor], torch.Tensor],
                     call_on: Callable[[nn.Module], Callable[[torch.Tensor], Any]] | None = None) -> ModuleGradients:
    """`call(input)` on a copy of x in a graph (as a step of a model hands it over, not a leaf), then backward from
    the sum of the output times `mix(output)`, a mix the judge rebuilds from the case: the module's parameters as
    they were before the call (the judge computes the reference's gradients with them) and the gradients that reached
    them and the input. A call or backward that raises is the student's error, as any call of theirs. `call_on(copy)`
    calls a copy of the module as `call` calls it (the module itself by default): module_own_slopes reads on it
    (neither copied nor read inside own_slopes_later())."""
    twin = _copy_of(module) if _OWN_SLOPES_NOW.get() else None
    parameters = list(module.named_parameters(remove_duplicate=False))
    first_name: dict[int, str] = {}
    aliases = {name: first_name.setdefault(id(parameter), name) for name, parameter in parameters}
    state = {name: plain(parameter) for name, parameter in parameters}
    source = x.detach().clone().requires_grad_(True)
    output = call(source * 1)
    record: ModuleGradients = {"state": state, "aliases": {name: first for name, first in aliases.items()
                                                           if first != name},
                               "output": plain(output), "parameters": {}}
    if output.requires_grad:
        (output * mix(output).to(output.dtype)).sum().backward()
    record["parameters"] = {name: plain(p.grad) for name, p in parameters if p.grad is not None}
    if source.grad is not None:
        record["input"] = plain(source.grad)
    if twin is not None:
        module_own_slopes(record, twin, (call_on or _itself)(twin), x, mix)
    return record


def _itself(module: nn.Module) -> Callable[[torch.Tensor], Any]:
    return module


def _copy_of(module: nn.Module) -> nn.Module | None:
    """A deep copy of the module as it is before the call (the slopes are read on it, never on the learner's own
    object); None where it cannot be copied: no slope is read then, and nothing is named from one."""
    try:
        return copy.deepcopy(module)
    except Exception:  # noqa: BLE001 - a module deepcopy refuses: its slopes are not read
        return None


def module_own_slopes(record: ModuleGradients, twin: nn.Module, call: Callable[[torch.Tensor], Any],
                      x: torch.Tensor, mix: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Writes into `record` whether the gradient that reached the input and each parameter (a missing one as zeros)
    is the slope of the module's own outputs (gradient_is_own_slope on `twin`, a copy of the module before the call,
    in the same mode, its parameter moved where the slope is a parameter's): False proves a step of forward computed
    where autograd does not record; True, that autograd followed forward (a gradient unlike the notes' is then the
    module's own: flat where theirs is not). Only what could be read is written."""
    own = gradient_is_own_slope(call, x, record.get("input", torch.zeros_like(x)), mix)
    if own is not None:
        record["input_own_slope"] = own
    slopes: dict[str, bool] = {}
    held = dict(twin.named_parameters(remove_duplicate=False))
    for name, before in record["state"].items():
        parameter = held.get(name)
        if parameter is None or parameter.shape != before.shape:
            continue
        gradient = record["parameters"].get(name, torch.zeros_like(before))
        own = gradient_is_own_slope(_moving(parameter, call, x), before, gradient, mix)
        with torch.no_grad():
            parameter.copy_(before)  # as it was, for the next parameter's slope
        if own is not None:
            slopes[name] = own
    record["own_slopes"] = slopes


def _moving(parameter: nn.Parameter, call: Callable[[torch.Tensor], Any],
            x: torch.Tensor) -> Callable[[torch.Tensor], Any]:
    """The module's output on x as a function of one of its parameters' values (set in place before each call)."""
    def output(values: torch.Tensor) -> Any:
        with torch.no_grad():
            parameter.copy_(values)
        return call(x.detach().clone())
    return output


def informative_queries(mask: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    """(b, num_tokens) True for every query that sees at least one real token (all of them without padding)."""
    if mask is None:
        return torch.ones(like.shape[:2], dtype=torch.bool)
    return mask.cumsum(dim=1) > 0  # causal: query t sees keys 0..t


class InputChange(TypedDict):
    """What a call changed of one tensor it was handed (arguments_changes), as plain data for a record."""

    argument: str  # the name the caller gave it ("x", "attention_mask")
    # "values", "layout" (shape, strides or offset), "metadata" (class, dtype, device or requires_grad) or "written"
    # (written in place with the same values: its version counter moved)
    change: str
    differ: int  # "values": how many of its entries differ after the call (NaN equals NaN); 0 otherwise
    size: int  # how many entries it held before the call
    shape_before: list[int]
    shape_after: list[int]


class _HandedTensor:
    """One tensor as a caller handed it over: what the call may not change of it. Read below the student's code
    (below_student_code): a class swapped in, or a mode left on, cannot answer for the tensor."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.kind = type(tensor)
        with below_student_code(tensor):
            self.values = tensor.detach().clone()
            self.layout = (tuple(tensor.shape), tensor.stride(), tensor.storage_offset())
            self.metadata = (tensor.dtype, tensor.device, tensor.requires_grad)
            self.version = tensor._version

    def change(self, argument: str, tensor: torch.Tensor) -> InputChange | None:
        """What the call changed of `tensor`, or None where it is as it was handed over."""
        with below_student_code(tensor):
            kind, differ = self._kind(tensor)
            if not kind:
                return None
            return {"argument": argument, "change": kind, "differ": differ, "size": self.values.numel(),
                    "shape_before": list(self.layout[0]), "shape_after": [int(size) for size in tensor.shape]}

    def _kind(self, tensor: torch.Tensor) -> tuple[str, int]:
        if type(tensor) is not self.kind:
            return "metadata", 0  # its class swapped for another (whose methods could answer for it)
        if (tuple(tensor.shape), tensor.stride(), tensor.storage_offset()) != self.layout:
            return "layout", 0
        if (tensor.dtype, tensor.device, tensor.requires_grad) != self.metadata:
            return "metadata", 0
        now = tensor.detach()
        same = now == self.values
        if now.is_floating_point() or now.is_complex():
            same |= now.isnan() & self.values.isnan()
        differ = int((~same).sum())
        if differ:
            return "values", differ
        return ("written" if tensor._version != self.version else ""), 0


def arguments_changes(arguments: Mapping[str, torch.Tensor], run: Callable[[], Any]) -> tuple[Any, list[InputChange]]:
    """run(), and what it changed of each tensor it was handed ({name: tensor}, every tensor argument of the call):
    the changed ones in the order given, those left alone not listed. A call may read its arguments, never write them:
    the caller still holds them (a mask used for the next layer, an input used again)."""
    handed = {name: _HandedTensor(tensor) for name, tensor in arguments.items()}
    result = run()
    changes = [change for name, tensor in arguments.items() if (change := handed[name].change(name, tensor))]
    return result, changes


# The kinds of change that edit a tensor's numbers as the caller reads them: other values or another layout. A class,
# dtype or requires_grad changed, or the same values written back, are changes of another kind.
EDITS = ("values", "layout")


def input_changes(x: torch.Tensor, run: Callable[[torch.Tensor], Any]) -> tuple[Any, str]:
    """run(x), and what it changed of x (arguments_changes for a call with one tensor argument): "" (nothing) or the
    change's kind ("values", "layout", "metadata", "written")."""
    result, changes = arguments_changes({"x": x}, lambda: run(x))
    return result, changes[0]["change"] if changes else ""


def takes_attention_mask(forward: Callable[..., Any]) -> bool:
    """Whether forward can be called with attention_mask=...; the book's forward(self, x) cannot."""
    try:
        parameters = inspect.signature(forward).parameters.values()
    except (TypeError, ValueError):  # no signature to read: let the call itself decide
        return True
    return any(p.name == "attention_mask" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def renamed_mask_argument(forward: Callable[..., Any]) -> str:
    """The name forward gives its mask when it takes one under another name than attention_mask (the parameter after
    x: `forward(self, x, padding_mask=None)`), else ""."""
    try:
        parameters = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return ""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return next((p.name for p in parameters[1:] if p.kind in named and p.name != "attention_mask"), "")


def as_count(value: object) -> int:
    """A whole number from int, integral float or one-element tensor; anything else is a ProbeError."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.device.type != "meta":
        value = value.item()
    if isinstance(value, bool):
        pass  # True is an Integral, but not a count
    elif isinstance(value, numbers.Integral):
        return int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        return int(float(value))
    raise ProbeError("parameter_counts.not_a_count", got=type(value).__module__ + "." + type(value).__name__)


# Stand-in modules the probes hand the student's functions.


class ParameterProjections(nn.Module):
    """Stands in for SelfAttention_v1: three raw (d_in, d_out) parameters."""

    def __init__(self, weights: Mapping[str, torch.Tensor]) -> None:
        super().__init__()
        for name in PROJECTIONS:
            setattr(self, name, nn.Parameter(weights[name].clone()))


class LinearProjections(nn.Module):
    """Stands in for SelfAttention_v2: three bias-free nn.Linear layers holding (d_out, d_in) weights."""

    def __init__(self, weights: Mapping[str, torch.Tensor]) -> None:
        super().__init__()
        for name in PROJECTIONS:
            d_out, d_in = weights[name].shape
            with torch.random.fork_rng(devices=[]):  # its init's draws leave the notebook's random stream alone
                layer = nn.Linear(d_in, d_out, bias=False)
            layer.weight = nn.Parameter(weights[name].clone())
            setattr(self, name, layer)


# What a learner's code may print of a stand-in (torch's "Error(s) in loading state_dict for ...", type(m).__name__)
# is the notebook's class it stands in for, never the grader's own name.
ParameterProjections.__name__ = ParameterProjections.__qualname__ = "SelfAttention_v1"
LinearProjections.__name__ = LinearProjections.__qualname__ = "SelfAttention_v2"


def head_outputs(heads: Iterable[Callable[[torch.Tensor], Any]], x: torch.Tensor) -> list[torch.Tensor] | None:
    """Each head's own output: tells a broken CausalAttention from a broken wrapper. Diagnostic only."""
    try:
        return [plain(head(x)) for head in heads]
    except Exception:  # noqa: BLE001 - the wrapper already ran; an odd head only loses the extra hint
        return None
