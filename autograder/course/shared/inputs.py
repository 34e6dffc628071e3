"""The inputs every notebook's probes and judges rebuild from a case: the notes' embeddings, dtypes, the names of
library attention a from-scratch forward must not call.

Probe side (with every exercise folder's probe.py): plain torch only. Nothing here imports the reference, a judge or the
functional reference `variants`; the process that runs student code imports this package and nothing above it.
"""

from collections.abc import Mapping
from typing import Any

import torch

__all__ = [
    "ATTENTION_FUNCTIONS", "DTYPES", "NOTEBOOK_SIZES", "NOTES_INPUTS", "dtype_of", "notes_batch", "notes_inputs",
    "probe_device_kind",
]

NOTES_INPUTS = (
    (0.43, 0.15, 0.89),  # x(1) "Your"
    (0.55, 0.87, 0.66),  # x(2) "journey"
    (0.57, 0.85, 0.64),  # x(3) "starts"
    (0.22, 0.58, 0.33),  # x(4) "with"
    (0.77, 0.25, 0.10),  # x(5) "one"
    (0.05, 0.80, 0.55),  # x(6) "step"
)


DTYPES = {"float32": torch.float32, "float64": torch.float64}


# Library attention a from-scratch forward must not call (names as FunctionCalls records them: the ATen kernels and
# torch.ops aliases are folded in, torch_recorders.OP_FAMILIES), and ops registered with torch.library
# (torch_recorders.CUSTOM_OP), whose kernels run unrecorded, and switching the recorders off
# (torch_recorders.MODES_OFF).
ATTENTION_FUNCTIONS = frozenset(
    {"scaled_dot_product_attention", "multi_head_attention_forward", "custom_op", "disabled_torch_modes"}
)


# The sizes the notebooks' examples define as variables: 6 tokens of 3 features, d_out 2, a batch of 2, head_dim 1
# (d_out 2 over 2 heads). A module that divides by the root of one of them where the call has other sizes read it
# from the notebook, not from its input.
NOTEBOOK_SIZES = frozenset({1, 2, 3, 6})


def notes_inputs(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The notes' 6×3 embeddings, one row per token."""
    return torch.tensor(NOTES_INPUTS, dtype=dtype)


def dtype_of(case: Mapping[str, Any]) -> torch.dtype:
    return DTYPES[case.get("dtype", "float32")]


def notes_batch() -> torch.Tensor:
    """The notes' embeddings batched twice, (2, 6, 3), as torch.stack((inputs, inputs)) does in §3.5.3."""
    inputs = notes_inputs()
    return torch.stack((inputs, inputs), dim=0)


def probe_device_kind(requested: str = "auto") -> str:
    """A real GPU when there is one, else PyTorch's shape-only meta device (a plain-attribute mask stays behind)."""
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "meta"
