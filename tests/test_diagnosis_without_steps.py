"""A check whose steps are computed with the learner's own weights, when those weights have shapes no step can be
computed with (12o's oy-v2-05: layers built as nn.Linear(d_out, d_in), then used as matrices): check(...) prints its
table, in the kit and the live runtime, at every rung, and never raises from the diagnosis."""


import pytest
import torch
from torch import nn

from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from tests.test_one_cause_proven import printed


class LayersBuiltBackwards(nn.Module):  # weights of shape (d_in, d_out), so that x @ weight fits
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_out, d_in, bias=qkv_bias)
        self.W_key = nn.Linear(d_out, d_in, bias=qkv_bias)
        self.W_value = nn.Linear(d_out, d_in, bias=qkv_bias)

    def forward(self, x):
        queries, keys, values = x @ self.W_query.weight, x @ self.W_key.weight, x @ self.W_value.weight
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


@pytest.mark.parametrize("hint", [1, 2, 3])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_weights_no_step_can_be_computed_with_fail_the_checks_without_a_crash(kit, hint, kit_vectors, monkeypatch):
    text = printed(kit, kit_vectors, "self_attention_v2", LayersBuiltBackwards, "en", monkeypatch, hint=hint)
    assert "✘" in text and "Traceback" not in text, text
