"""A result that adds again a term its last step already added is told so (issue 58: out_proj's bias added a second
time after calling out_proj got "no known mistake": every step matched, the last one inside the learner's code).

departure._added_again: the result minus the notes' last step is one vector on every row, and that vector is a
tensor the learner's code added in making its last step and added again to make the result.
"""

import torch

from attnkit import solutions
from tests.test_departure_first_step import departures

ADDED_AGAIN = ("every step of your code matches the notes', up to the output projection's output; then it adds to "
               "every row of that output projection's output the same vector again, one your code had already added "
               "in computing the output projection's output")


class OutProjBiasTwice(solutions.MultiHeadAttention):
    """A learner's forward: the module's result, then out_proj's bias added on once more (as a broadcast view)."""

    def forward(self, x, attention_mask=None):
        return super().forward(x, attention_mask).add(self.out_proj.bias.view(1, 1, -1))


class ConstantAdded(solutions.MultiHeadAttention):
    """A vector of its own added: never part of the output projection."""

    def forward(self, x, attention_mask=None):
        result = super().forward(x, attention_mask)
        return result + torch.full_like(self.out_proj.bias, 0.5)


class OutProjBiasDoubled(solutions.MultiHeadAttention):
    """Twice the bias added: a vector the code made after its last step, never one it added in making it."""

    def forward(self, x, attention_mask=None):
        return super().forward(x, attention_mask) + 2 * self.out_proj.bias


def test_a_bias_added_twice_is_said_in_both_languages():
    found = departures("multi_head_attention", {"MultiHeadAttention": OutProjBiasTwice})
    assert found["en"] and all(ADDED_AGAIN in line for line in found["en"]), found["en"]
    said = "你的代码每一步都与笔记相同，直到输出投影的输出；之后它又在这个输出投影的输出的每一行上加了同一个向量"
    assert all(said in line for line in found["zh"]) and found["zh"], found["zh"]


def test_other_vectors_and_a_right_program_do_not_get_it():
    for student in (ConstantAdded, OutProjBiasDoubled, solutions.MultiHeadAttention):
        found = departures("multi_head_attention", {"MultiHeadAttention": student})
        assert not any("again" in line for line in found["en"]), (student.__name__, found["en"])


# ------------------------------------------------------------------ a right step's own term added again, mid-way

ADDED_AGAIN_TO = {"en": "to every row of your queries, your code adds once more a vector it had already added in "
                        "computing them, and goes on from that sum",
                  "zh": "你的代码在你的query的每一行上又加了一个向量，而这个向量在计算它们时已经加过一次"}


class QueryBiasTwice(solutions.SelfAttention_v2):
    """A learner's forward: the layers called, then the query layer's bias added on "in case the layer did not"."""

    def forward(self, x):
        queries = self.W_query(x)
        if self.W_query.bias is not None:
            queries = queries + self.W_query.bias
        keys, values = self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


class QueryShifted(solutions.SelfAttention_v2):
    """A vector of its own added to the queries, never one the layer added."""

    def forward(self, x):
        queries = self.W_query(x) + torch.full((self.W_query.out_features,), 0.5, dtype=x.dtype)
        keys, values = self.W_key(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


def test_a_layers_bias_added_again_to_its_step_is_said_where_the_code_departs():
    """With qkv_bias (the shapes' check), the scores depart: made from the queries plus their bias a second time."""
    found = departures("self_attention_v2", {"SelfAttention_v2": QueryBiasTwice})
    for lang in ("en", "zh"):
        assert found[lang] and any(ADDED_AGAIN_TO[lang] in line for line in found[lang]), found[lang]
    module = QueryBiasTwice(3, 2, qkv_bias=True)
    x = torch.rand(4, 3)
    bias, weight = module.W_query.bias, module.W_query.weight
    assert torch.allclose(module.W_query(x) + bias, x @ weight.T + 2 * bias)


def test_a_vector_the_layer_never_added_does_not_get_it():
    for student in (QueryShifted, solutions.SelfAttention_v2):
        found = departures("self_attention_v2", {"SelfAttention_v2": student})
        assert not any("once more" in line for line in found["en"]), (student.__name__, found["en"])
    assert departures("self_attention_v2", {"SelfAttention_v2": QueryShifted})["en"], "the shift departs somewhere"
