"""A learner's read of the feedback: realistic wrong attempts, checked in both kits and both languages, rung by rung.

    python -m devtools.learner_read [--lang en|zh] [--kit full|student] [--attempt NAME]

Each attempt is code a learner writes on the way to an exercise (a stub left alone, the bugs learners report).
For each, check(...) runs three times in a fresh kernel's runtime: the first run (rung 1), the next run that
still fails (rung 2) and a run asking for the next rung (rung 3). The transcript is what the learner reads;
issue 34's closing note quotes it.
"""

import argparse
import contextlib
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnkit import solutions
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.in_notebook import ReferenceExpectations
from autograder.running.notebook_runtime import NotebookRuntime


def softmax_stub(x: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError


def softmax_without_max(x: torch.Tensor) -> torch.Tensor:
    """The naive softmax summed over every element instead of each row."""
    return torch.exp(x) / torch.exp(x).sum()


def inverted_mask(num_tokens: int) -> torch.Tensor:
    """tril where triu was meant: hides the past and the token itself."""
    return torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool))


def renormalised_without_keepdim(attn_weights: torch.Tensor) -> torch.Tensor:
    num_tokens = attn_weights.shape[-1]
    masked = attn_weights * torch.tril(torch.ones(num_tokens, num_tokens))
    return masked / masked.sum(dim=-1)


def load_with_reshape(sa_v1: nn.Module, sa_v2: nn.Module) -> nn.Module:
    """reshape where a transpose was meant: the shapes fit, the numbers land in the wrong places."""
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            weight = getattr(sa_v2, name).weight
            getattr(sa_v1, name).copy_(weight.reshape(weight.shape[1], weight.shape[0]))
    return sa_v1


def load_returning_nothing(sa_v1: nn.Module, sa_v2: nn.Module) -> None:
    solutions.load_v2_weights_into_v1(sa_v1, sa_v2)


class CausalAttentionUnsliced(solutions.CausalAttention):
    """The stored mask used whole: right only when num_tokens == context_length."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool(), -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return self.dropout(attn_weights) @ values


class WrapperWithPlainList(nn.Module):
    """Heads in a plain Python list: .to(...) and state_dict never see them."""

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int,
                 qkv_bias: bool = False) -> None:
        super().__init__()
        self.heads = [solutions.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                      for _ in range(num_heads)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([head(x) for head in self.heads], dim=-1)


def split_without_transpose(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def counts_frozen_too(module: nn.Module) -> int:
    return sum(parameter.numel() for parameter in module.parameters()) + sum(b.numel() for b in module.buffers())


@dataclass(frozen=True)
class Attempt:
    name: str
    exercise: str
    objects: Callable[[], tuple[Any, ...]]
    story: str  # what the learner did


ATTEMPTS = (
    Attempt("stub", "softmax_naive", lambda: (softmax_stub,), "ran the check before writing anything"),
    Attempt("softmax_over_everything", "softmax_naive", lambda: (softmax_without_max,),
            "summed over the whole tensor"),
    Attempt("tril_mask", "causal_mask", lambda: (inverted_mask,), "wrote tril for triu"),
    Attempt("route1_keepdim", "masking_routes",
            lambda: (renormalised_without_keepdim, solutions.causal_weights_neg_inf), "forgot keepdim"),
    Attempt("reshape_for_transpose", "transfer_weights", lambda: (load_with_reshape,), "reshape instead of .T"),
    Attempt("returns_nothing", "transfer_weights", lambda: (load_returning_nothing,), "no return"),
    Attempt("mask_not_sliced", "causal_attention", lambda: (CausalAttentionUnsliced,), "mask not cut to num_tokens"),
    Attempt("heads_in_a_list", "mha_wrapper", lambda: (WrapperWithPlainList,), "a Python list of heads"),
    Attempt("split_no_transpose", "split_heads", lambda: (split_without_transpose,), "view straight to heads"),
    Attempt("counts_buffers", "parameter_counts", lambda: (counts_frozen_too,), "counted the mask buffer too"),
)


def runtimes() -> dict[str, Callable[[], NotebookRuntime]]:
    """A fresh kernel's runtime per kit (each with its own hint ladder)."""
    vectors = vectors_from_document(vectors_document())
    return {"full": lambda: NotebookRuntime(ReferenceExpectations()),
            "student": lambda: NotebookRuntime(StoredExpectations(lambda: vectors))}


@contextlib.contextmanager
def language(lang: str) -> Iterator[None]:
    before = os.environ.get("ATTNKIT_LANG")
    os.environ["ATTNKIT_LANG"] = lang
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ATTNKIT_LANG", None)
        else:
            os.environ["ATTNKIT_LANG"] = before


RUNS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("rung 1: first run", {}),
    ("rung 2: the next run that still fails", {}),
    ("rung 3: asked for the next step", {"hint": True}),
)


def transcript(attempt: Attempt, runtime: NotebookRuntime) -> str:
    parts = []
    for label, options in RUNS:
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            runtime.check(attempt.exercise, *attempt.objects(), **options)
        parts.append(f"--- {label}\n{output.getvalue().rstrip()}")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=("en", "zh"), action="append")
    parser.add_argument("--kit", choices=("full", "student"), action="append")
    parser.add_argument("--attempt", action="append", help="an attempt's name (default: all)")
    arguments = parser.parse_args(argv)
    kits = runtimes()
    for lang in arguments.lang or ("en", "zh"):
        for kit in arguments.kit or ("full", "student"):
            for attempt in ATTEMPTS:
                if arguments.attempt and attempt.name not in arguments.attempt:
                    continue
                with language(lang):
                    text = transcript(attempt, kits[kit]())
                print(f"===== {attempt.name} ({attempt.exercise}; {attempt.story}) · {kit} kit · {lang}\n{text}\n")


if __name__ == "__main__":
    main()
