"""softmax_wrong_dim: the change (rung 3) names the axis to use, never an axis the code did not use (issue 58): a
softmax over the heads is not told "not over the queries"."""
import pytest
import torch
from check_helpers import results_by_id
from mutants.multihead import GivenMultiHeadAttention

from attnkit import solutions


class MHASoftmaxOverTheHeads(GivenMultiHeadAttention):  # weights normalised across the heads of one query and key
    def forward(self, x, attention_mask=None):
        b, n, _ = x.shape
        split = [layer(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
                 for layer in (self.W_query, self.W_key, self.W_value)]
        queries, keys, values = split
        scores = (queries @ keys.transpose(2, 3)).masked_fill(self.mask.bool()[:n, :n], -torch.inf)
        weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=1))
        return self.out_proj((weights @ values).transpose(1, 2).contiguous().view(b, n, self.d_out))


@pytest.mark.parametrize(("lang", "keys_axis", "queries_axis"), [
    ("en", "along the dimension that runs over the keys of one query", "over the queries"),
    ("zh", "沿一个 query 的所有 key 所在的维度做 softmax", "query 所在的维度")])
def test_a_softmax_over_the_heads_is_not_told_it_ran_over_the_queries(lang, keys_axis, queries_axis):
    notes = results_by_id("multi_head_attention", {"MultiHeadAttention": MHASoftmaxOverTheHeads},
                          lang=lang)["multi_head_attention.notes"]
    assert notes.misconception == "softmax_wrong_dim", notes  # the name stays: it is true
    ladder = " ".join(notes.ladder(3))
    assert keys_axis in ladder and queries_axis not in ladder, ladder


def test_the_notes_code_gets_no_softmax_change():
    results = results_by_id("multi_head_attention", {"MultiHeadAttention": solutions.MultiHeadAttention})
    assert all(result.misconception != "softmax_wrong_dim" for result in results.values())
