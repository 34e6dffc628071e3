"""The cases checks are run on, typed: plain data the grader computes from the seed and sends to the grading child.

A case says how to build an input and a module (seeds, sizes, dtype names), never a tensor: both the probe and the
judge rebuild the same input from it (autograder.course.probes.inputs). They are TypedDicts (a case is a dict on the
wire and in the student kit's stored vectors); keys a kind may leave out are NotRequired. The student kit's stored
cases add `load_weights` (autograder.course.probes.loading).
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

Namespace = Mapping[str, Any]  # the notebook's objects a check receives, by name


class TensorCase(TypedDict):
    """An input tensor of notebook 01: the notes' sentence, given values, or seeded random values."""

    input: str  # notes_journey | notes_scores | notes_inputs | values | random
    seed: NotRequired[int]
    shape: NotRequired[list[int]]
    scale: NotRequired[float]
    values: NotRequired[list[float]]
    dtype: NotRequired[str]
    dim: NotRequired[int]  # passed to softmax_stable when present


class SelfAttentionCase(TypedDict):
    init_seed: int
    d_in: int
    d_out: int
    dtype: str
    input: NotRequired[str]  # notes_inputs, or random from seed
    seed: NotRequired[int]
    num_tokens: NotRequired[int]
    qkv_bias: NotRequired[bool]  # SelfAttention_v2 only
    load_weights: NotRequired[dict[str, Any]]


class TransferCase(TypedDict):
    d_in: int
    d_out: int
    seed: int
    num_tokens: int
    dtype: str


class MaskCase(TypedDict):
    num_tokens: int


class ScoresCase(TypedDict):
    """Attention scores (or weights) for the masking routes: the notes' or seeded random, on a device or not."""

    input: NotRequired[str]
    seed: NotRequired[int]
    shape: NotRequired[list[int]]
    dtype: NotRequired[str]
    device: NotRequired[str]  # "auto": a GPU when there is one, else the meta device


class CausalCase(TypedDict):
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    qkv_bias: bool
    dtype: str
    input: NotRequired[str]  # notes: the notes' batch and call
    seed: NotRequired[int]
    init_seed: NotRequired[int]
    load_weights: NotRequired[dict[str, Any]]


class MultiHeadCase(TypedDict):
    """The wrapper and MultiHeadAttention: sizes, seed, and for the heads checks which head or how many more."""

    seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    num_heads: int
    qkv_bias: bool
    dtype: str
    input: NotRequired[str]
    attention_mask: NotRequired[list[list[int]]]  # (batch, num_tokens): 1 a real token, 0 padding
    kind: NotRequired[str]  # heads | vectorised (multi_head_attention.heads)
    head: NotRequired[int]
    more_heads: NotRequired[int]
    load_weights: NotRequired[dict[str, Any]]


class TwoDimensionalCase(TypedDict):
    """Book exercise 3.2: the sizes the student's builder is called with."""

    d_in: int
    context_length: int
    dropout: float
    seed: int


class HeadsCase(TypedDict):
    """split_heads / merge_heads: the layout of the input in memory and its sizes."""

    layout: str  # arange | random | transposed | sliced | expanded | attention | split | strided
    seed: int
    batch: int
    num_tokens: int
    num_heads: int
    head_dim: int
    dtype: str


class EquivalenceCase(TypedDict):
    seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_model: int
    num_heads: int
    qkv_bias: bool
    dropout: float
    dtype: str
    d_in: NotRequired[int]  # when it differs from d_model, nn.MultiheadAttention must be refused


class CountCase(TypedDict):
    """A module to count, described block by block (probing.counted_module builds it)."""

    container: NotRequired[str]
    blocks: list[dict[str, Any]]


class ContractCase(TypedDict):
    seed: int
    init_seed: int
    batch: int
    num_tokens: int
    context_length: int
    d_in: int
    d_out: int
    num_heads: int
    qkv_bias: bool | None  # None: the constructor's default
    dtype: str
    p: NotRequired[float]  # modes: the dropout rate
    device: NotRequired[str]
    position: NotRequired[int]  # properties: the token whose future is changed
    loss_seed: NotRequired[int]
    lengths: NotRequired[list[int]]  # state: the num_tokens of successive calls on one module
