"""The wide attention input: scores far below -1e4 on which both routes to causality the notes teach stay exact.

A causal fill that is finite but too small (-100, -1e4) shows only where a query's every visible score lies below
the fill, so the scores must reach about -1e4 and beyond. The notes' other route (softmax over every key, multiply
by the lower triangle, renormalise the rows) stays exact only while no key's score lies more than ~700 (float64;
~87 in float32) above the query's best visible one: past that, exp underflows for the visible weights before the
division. Random inputs up to ±1000 break the second condition (the scores spread over 1e5 and more).

So each sequence b is one direction u_b taken with a large magnitude c_b, plus a small per-token offset:
x_bt = c_b (u_b + SPREAD n_bt), |u_b| = 1, n uniform in [-1, 1). The scores are about c_b² (u_b · M u_b) with
M = W_query^T W_key, while a query's scores differ between keys by only about c_b² SPREAD: with c_b² at most
HIGHEST_SQUARED that spread stays within a few hundred, so the renormalising route loses nothing in float64. The
magnitudes climb geometrically from LOWEST_SQUARED (scores about -1e4 where u_b · M u_b is near -0.5) to
HIGHEST_SQUARED (about -1e4 where it is near -0.01), and the directions are random: among BATCH sequences some meet
a direction in which the module's scores are negative and below the fill. The values differ between tokens by about
SPREAD of their size, ten times the comparison's relative tolerance, so future keys let in change the output.

Probe side: plain torch only (the student kit rebuilds the input from the case).
"""

import torch

from autograder.checking.probing import rand

__all__ = ["BATCH", "wide_input"]

BATCH = 64  # sequences: each a chance to meet a direction of negative scores
LOWEST_SQUARED, HIGHEST_SQUARED = 2e4, 1e6  # c_b² of the first and the last sequence
SPREAD = 1e-3  # the tokens' offsets around their sequence's direction, relative to its magnitude


def wide_input(seed: int, batch: int, num_tokens: int, d_in: int, dtype: torch.dtype) -> torch.Tensor:
    """(batch, num_tokens, d_in) in `dtype`, computed in float64 from the seed alone."""
    drawn = rand(seed, batch, num_tokens + 1, d_in, dtype=torch.float64)
    directions, offsets = drawn[:, :1], drawn[:, 1:]
    directions = directions / directions.norm(dim=-1, keepdim=True).clamp_min(1e-3)
    steps = torch.arange(batch, dtype=torch.float64) / max(batch - 1, 1)
    magnitudes = (LOWEST_SQUARED * (HIGHEST_SQUARED / LOWEST_SQUARED) ** steps).sqrt().view(batch, 1, 1)
    return (magnitudes * (directions + SPREAD * offsets)).to(dtype)
