"""Reference implementations for attnkit: the single source of truth.

Names and signatures follow chapter 3 of "Build a Large Language Model (From
Scratch)" so that code written from the book drops into the student stubs.
"""

from attnkit.solutions.basics import (
    attention_scores,
    attention_scores_for_query,
    context_vector_for_query,
    context_vectors,
    softmax_naive,
    softmax_stable,
)
from attnkit.solutions.causal import (
    CausalAttention,
    causal_mask,
    causal_weights_neg_inf,
    causal_weights_renormalised,
)
from attnkit.solutions.multihead import (
    MultiHeadAttention,
    MultiHeadAttentionSingle,
    MultiHeadAttentionWrapper,
    count_parameters,
    merge_heads,
    split_heads,
    two_dimensional_wrapper,
)
from attnkit.solutions.self_attention import (
    SelfAttention_v1,
    SelfAttention_v2,
    load_v2_weights_into_v1,
)
from attnkit.solutions.torch_equivalence import sdpa_causal, to_torch_multihead

__all__ = [
    "CausalAttention",
    "MultiHeadAttention",
    "MultiHeadAttentionSingle",
    "MultiHeadAttentionWrapper",
    "SelfAttention_v1",
    "SelfAttention_v2",
    "attention_scores",
    "attention_scores_for_query",
    "causal_mask",
    "causal_weights_neg_inf",
    "causal_weights_renormalised",
    "context_vector_for_query",
    "context_vectors",
    "count_parameters",
    "load_v2_weights_into_v1",
    "merge_heads",
    "sdpa_causal",
    "softmax_naive",
    "softmax_stable",
    "split_heads",
    "to_torch_multihead",
    "two_dimensional_wrapper",
]
