"""Helpers shared by the checks of every notebook: the notes' inputs, dtypes, recorded calls, the dtype verdict.

Plain torch and the checking machinery only: probes (which run in the student's process) use them as much as judges.
"""

import torch

from autograder.checking.check_types import Verdict
from autograder.checking.probing import FunctionCalls

NOTES_INPUTS = (
    (0.43, 0.15, 0.89),  # x(1) "Your"
    (0.55, 0.87, 0.66),  # x(2) "journey"
    (0.57, 0.85, 0.64),  # x(3) "starts"
    (0.22, 0.58, 0.33),  # x(4) "with"
    (0.77, 0.25, 0.10),  # x(5) "one"
    (0.05, 0.80, 0.55),  # x(6) "step"
)

DTYPES = {"float32": torch.float32, "float64": torch.float64}
PROJECTIONS = ("W_query", "W_key", "W_value")  # the query/key/value layers every attention module of the book has
# Library attention a from-scratch forward must not call (names as FunctionCalls records them).
ATTENTION_FUNCTIONS = frozenset({"scaled_dot_product_attention", "multi_head_attention_forward"})


def notes_inputs(dtype=torch.float32):
    """The notes' 6×3 embeddings, one row per token."""
    return torch.tensor(NOTES_INPUTS, dtype=dtype)


def dtype_of(case):
    return DTYPES[case.get("dtype", "float32")]


def called_functions(function, *args):
    """(result, sorted names of the torch functions the call went through)."""
    with FunctionCalls() as calls:
        result = function(*args)
    return result, sorted(set(calls.names))


def forbidden_calls(names, forbidden):
    return sorted({name for name in names if name.rsplit(".", 1)[-1] in forbidden})


def notes_batch():
    """The notes' embeddings batched twice, (2, 6, 3), as torch.stack((inputs, inputs)) does in §3.5.3."""
    inputs = notes_inputs()
    return torch.stack((inputs, inputs), dim=0)


def dtype_name(dtype):
    """"float32" for torch.float32."""
    return str(dtype).removeprefix("torch.")


def dtype_verdict(prefix, got, expected_dtype):
    """Verdict(True) when `got` has `expected_dtype`; else the message `{prefix}.dtype`, with the fields
    got_dtype and expected_dtype (names such as "float32": messages write "torch.{got_dtype}" to show torch's)."""
    if got.dtype == expected_dtype:
        return Verdict(True)
    return Verdict(False, f"{prefix}.dtype",
                   {"got_dtype": dtype_name(got.dtype), "expected_dtype": dtype_name(expected_dtype)})
