"""Reference implementations for attnkit: the single source of truth.

Names and signatures follow chapter 3 of "Build a Large Language Model (From
Scratch)" so that code written from the book drops into the student stubs.
"""

from attnkit.solutions.n01_attention_without_weights import (
    attention_scores,
    attention_scores_for_query,
    context_vector_for_query,
    context_vectors,
    softmax_naive,
    softmax_stable,
)
from attnkit.solutions.n02_trainable_self_attention import (
    SelfAttention_v1,
    SelfAttention_v2,
    load_v2_weights_into_v1,
)
from attnkit.solutions.n03_causal_attention import (
    CausalAttention,
    causal_mask,
    causal_weights_neg_inf,
    causal_weights_renormalised,
)
from attnkit.solutions.n04_multi_head_attention import (
    MultiHeadAttention,
    MultiHeadAttentionSingle,
    MultiHeadAttentionWrapper,
    count_parameters,
    merge_heads,
    sdpa_causal,
    split_heads,
    to_torch_multihead,
    two_dimensional_wrapper,
)

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
