"""What each probe returns, typed: plain data only (tensors, names, counts, exception descriptions).

Probe data crosses a process boundary as a dict (autograder.isolation.wire) and a judge reads it as one, so each
kind is a TypedDict: mypy checks the keys a probe sets against the keys its judge reads. `error` (an exception the
probe did not turn into data) is added by autograder.checking.probing.run_probe and read before any judge runs.
"""

from typing import Any, NotRequired, TypedDict

from torch import Tensor

State = dict[str, Tensor]  # parameters and buffers by qualified name (probing.state_of)
ExceptionRecord = dict[str, Any]  # probing.describe_exception: type, message, line, ...


class SoftmaxRecord(TypedDict, total=False):
    output: Tensor
    calls: list[str]
    input_changed: bool
    default_dim: int | None  # the default of the function's `dim` parameter, None when it has no int default
    gradient: str  # probing.gradient_flow
    input_gradient: Tensor  # probing.gradient_of, when "ok": the judge compares it with softmax's own


class ContextRecord(TypedDict, total=False):
    output: Tensor
    input_changed: bool
    gradient: str  # probing.gradient_flow: "ok", "no_gradient", "not_finite" or "raised"


class ForwardRecord(TypedDict):
    """SelfAttention_v1/v2's output and the weights it was computed with."""

    output: Tensor
    state: State


class CallsRecord(TypedDict):
    calls: list[str]


class TransferRun(TypedDict):
    v1: State
    v2: State
    returned: str  # "sa_v1", "None" or the returned object's type
    replaced: list[str]  # v1's parameters that are no longer the nn.Parameter objects it was built with
    shared: list[str]  # v1's parameters that share memory with one of v2's


class TransferRecord(TypedDict, total=False):
    """A run of load_v2_weights_into_v1, or the exception it raised and the run on a square pair."""

    v1: State
    v2: State
    returned: str
    replaced: list[str]
    shared: list[str]
    raised: ExceptionRecord
    square: TransferRun


class MaskRecord(TypedDict):
    mask: Tensor


class WeightsRecord(TypedDict, total=False):
    weights: Tensor
    input_changed: bool  # the caller's tensor was edited in place
    backward: str  # through the route to its input: "ok", "no_gradient", "not_finite" or "raised"
    backward_error: ExceptionRecord


class RouteDeviceRecord(TypedDict, total=False):
    device: str
    failure: ExceptionRecord
    mixed: list[str]
    shape: list[int]
    output_device: str
    dtype: str


class CausalForwardRecord(TypedDict, total=False):
    output: Tensor
    state: State
    transpose_batched: bool
    forbidden: list[str]
    transpose_crash: bool  # set alone: `.T` on the batched keys crashed the forward pass
    weights_seen: Tensor  # what self.dropout received: the attention weights, when forward applies it there


class WrapperRecord(TypedDict):
    heads_type: str
    head_count: NotRequired[int]
    distinct_heads: NotRequired[int]
    out: NotRequired[Tensor]
    state: NotRequired[State]
    head_outputs: NotRequired[list[Tensor] | None]


class HeadsRecord(TypedDict):
    """split_heads or merge_heads: the result and whether the input was left as it was."""

    out: Tensor
    input_kept: bool
    gradient: str  # probing.gradient_flow


class MultiHeadRecord(TypedDict, total=False):
    out: Tensor
    state: State
    input_kept: bool
    weights_seen: Tensor  # what self.dropout received: the heads' attention weights, when forward applies it there
    merged_seen: Tensor  # what self.out_proj received: the merged heads


class HeadIndependenceRecord(TypedDict):
    before: Tensor
    after: Tensor


class VectorisedRecord(TypedDict):
    matmuls: list[int]
    builtins: list[str]


class EquivalenceRecord(TypedDict, total=False):
    raised: str | None  # d_in != d_out: the name of the exception raised, None for none
    batch_first: bool
    embed_dim: int
    num_heads: int
    dropout: float
    dtype: str
    state: State
    out: Tensor
    shared: list[str]  # its parameters that share memory with our module's


class TwoDimensionalRecord(TypedDict, total=False):
    """What the builder of book exercise 3.2 returned: its class and its heads' sizes."""

    type: str
    head_count: int
    head_in_features: list[int]
    head_out_features: list[int]
    head_dropout: list[float]
    head_context_length: list[int]


class CountRecord(TypedDict):
    count: int


class StructureRecord(TypedDict, total=False):
    parameters: dict[str, list[int]]
    output_type: str
    output_shape: list[int]
    output_dtype: str
    attributes: dict[str, dict[str, Any]]
    identical_heads: list[int]  # stacked heads: the heads (other modules than head 0) that start with its weights


class ModesRecord(TypedDict):
    train: Tensor
    eval: Tensor
    eval_again: Tensor
    no_dropout: Tensor


class StateRecord(TypedDict, total=False):
    """Successive calls on one module against fresh modules, its state around them, and its state_dict reloaded."""

    outputs: list[Tensor | None]  # one per call; None where the call raised
    call_errors: list[ExceptionRecord | None]
    fresh_outputs: list[Tensor]  # each call's input on a freshly built module
    repeated: Tensor  # the first call's input once more, last
    before: State  # parameters and buffers before the first call
    after: State  # and after the calls
    parameter_names: list[str]  # which of its state are parameters (the rest are buffers)
    reload_error: ExceptionRecord
    reloaded: Tensor  # the first call's input on a fresh module that loaded state_dict() after the calls


class ContractDeviceRecord(TypedDict, total=False):
    masks: dict[str, bool]
    buffers: list[str]
    parameters: list[str]
    state_dict: list[str]
    mask_dtypes: dict[str, str]
    device: str
    mask_devices: dict[str, str]
    forward_error: ExceptionRecord
    mixed: list[str]
    output_shape: list[int]
    output_device: str


class PropertiesRecord(TypedDict, total=False):
    output: Tensor
    input_after: Tensor
    future_changed: Tensor
    one_by_one: list[Tensor]
    gradients: dict[str, float | None]
