"""A learner's read of the feedback: realistic wrong attempts, checked in both kits and both languages, rung by rung.

    python -m devtools.learner_read [--lang en|zh] [--kit full|student] [--attempt NAME]

Each attempt is code a learner writes on the way to an exercise: a stub left alone, or one of the student-style
bugs of tests/mutants/ that learners report.
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

from attnkit import solutions
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running.in_notebook import ReferenceExpectations
from autograder.running.notebook_runtime import NotebookRuntime
from tests.mutants import basics_self_attention as basics
from tests.mutants import causal, multihead


def softmax_stub(x: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError


@dataclass(frozen=True)
class Attempt:
    name: str
    exercise: str
    objects: Callable[[], tuple[Any, ...]]
    story: str  # what the learner did


# The wrong attempts are tests/mutants/' own student-style bugs, the ones learners report: one written per bug.
ATTEMPTS = (
    Attempt("stub", "softmax_naive", lambda: (softmax_stub,), "ran the check before writing anything"),
    Attempt("softmax_over_everything", "softmax_naive", lambda: (basics.softmax_naive_float32,),
            "cast to float32 and summed over the whole tensor"),
    Attempt("tril_mask", "causal_mask", lambda: (causal.causal_mask_tril,), "wrote tril for triu"),
    Attempt("route1_keepdim", "masking_routes",
            lambda: (causal.causal_weights_renormalised_no_keepdim, solutions.causal_weights_neg_inf),
            "forgot keepdim"),
    Attempt("reshape_for_transpose", "transfer_weights", lambda: (basics.load_reshape,), "reshape instead of .T"),
    Attempt("returns_nothing", "transfer_weights", lambda: (basics.load_no_return,), "no return"),
    Attempt("mask_not_sliced", "causal_attention", lambda: (causal.CausalAttention_mask_not_truncated,),
            "mask not cut to num_tokens"),
    Attempt("heads_in_a_list", "mha_wrapper", lambda: (multihead.WrapperPlainList,), "a Python list of heads"),
    Attempt("split_no_transpose", "split_heads", lambda: (multihead.split_heads_view_only,),
            "view straight to heads"),
    Attempt("counts_buffers", "parameter_counts", lambda: (multihead.count_parameters_with_buffers,),
            "counted the mask buffer too"),
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
