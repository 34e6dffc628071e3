"""What the checks of several notebook 04 exercises share: the notes' attention case, random attention cases,
reading the student's projections back, the dtype message.
"""

import random

from torch import Tensor

from autograder.course.n04_multi_head_attention.ex1_wrapper.probe import MHA_LAYERS, MultiHeadCase
from autograder.course.shared.inputs import DTYPES
from autograder.course.shared.records import State

__all__ = ["NOTES_ATTENTION_CASE", "dtype_message", "projection_weights", "random_attention_case"]

# The notes' experiment: torch.manual_seed(123); d_in, d_out = 3, 2; context_length = 6; num_heads = 2.
NOTES_ATTENTION_CASE: MultiHeadCase = {
    "input": "notes",
    "seed": 123,
    "batch": 2,
    "num_tokens": 6,
    "context_length": 6,
    "d_in": 3,
    "d_out": 2,
    "num_heads": 2,
    "qkv_bias": False,
    "dtype": "float32",
}


def random_attention_case(rng: random.Random, *, num_heads: int | None = None, num_tokens: int | None = None,
                          batch: int | None = None, dtype: str | None = None,
                          qkv_bias: bool | None = None) -> MultiHeadCase:
    """A hidden attention case: head_dim >= 2 (1 would hide a missing scale), d_in != d_out, num_tokens < context."""
    num_heads = num_heads or rng.randint(2, 4)
    head_dim = rng.randint(2, 5)
    d_out = num_heads * head_dim
    num_tokens = num_tokens or rng.randint(4, 10)
    return {
        "seed": rng.randrange(2**31 - 100),
        "batch": batch or rng.randint(1, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(1, 5),
        # d_in differs from d_out and head_dim, so each wrong scale gives its own output.
        "d_in": rng.choice([d for d in range(2, 10) if d not in (d_out, head_dim)]),
        "d_out": d_out,
        "num_heads": num_heads,
        "qkv_bias": (rng.random() < 0.5) if qkv_bias is None else qkv_bias,
        "dtype": dtype or rng.choice(tuple(DTYPES)),
    }


def projection_weights(state: State, prefix: str = "") -> dict[str, Tensor]:
    """The W_query/W_key/W_value/out_proj tensors under `prefix`, named as variants.attention expects."""
    names = (f"{layer}.{kind}" for layer in MHA_LAYERS for kind in ("weight", "bias"))
    return {name: state[prefix + name] for name in names if prefix + name in state}


def dtype_message(exercise_id: str) -> dict[str, dict[str, str]]:
    """{<exercise>.dtype: the bilingual message for an output whose dtype is not the input's}."""
    return {
        f"{exercise_id}.dtype": {
            "en": "the output is torch.{got_dtype} but the input was torch.{expected_dtype}: keep the input's dtype, "
                  "with no conversion and no copy into a new tensor of another dtype",
            "zh": "输出是 torch.{got_dtype}，而输入是 torch.{expected_dtype}：请保持输入的 dtype，不要转换类型，"
                  "也不要复制成另一种 dtype 的新张量",
        }
    }
