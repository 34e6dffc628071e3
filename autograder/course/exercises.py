"""The course's exercises, declared once: which notebook, which student names, how many points.

`names` are the notebook names a check needs, in the order the notebook passes them:
`check("causal_mask", causal_mask)`.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    id: str
    notebook: str
    names: tuple[str, ...]
    points: int
    title_en: str
    title_zh: str


NOTEBOOKS = (
    "01_attention_without_weights",
    "02_trainable_self_attention",
    "03_causal_attention",
    "04_multi_head_attention",
)

EXERCISES = (
    # 01: attention without trainable weights
    Exercise("softmax_naive", NOTEBOOKS[0], ("softmax_naive",), 5,
             "Naive softmax", "朴素 softmax"),
    Exercise("softmax_stable", NOTEBOOKS[0], ("softmax_stable",), 6,
             "Numerically stable softmax", "数值稳定的 softmax"),
    Exercise("context_vectors", NOTEBOOKS[0], ("context_vectors",), 7,
             "Context vectors for all tokens", "所有 token 的上下文向量"),
    # 02: self-attention with trainable weights
    Exercise("self_attention_v1", NOTEBOOKS[1], ("SelfAttention_v1",), 7,
             "SelfAttention_v1.forward", "SelfAttention_v1.forward"),
    Exercise("self_attention_v2", NOTEBOOKS[1], ("SelfAttention_v2",), 7,
             "SelfAttention_v2.forward", "SelfAttention_v2.forward"),
    Exercise("transfer_weights", NOTEBOOKS[1], ("load_v2_weights_into_v1",), 4,
             "Book exercise 3.1: v2's weights into v1", "书中练习 3.1：把 v2 的权重装进 v1"),
    # 03: causal attention, dropout, buffers
    Exercise("causal_mask", NOTEBOOKS[2], ("causal_mask",), 6,
             "The causal mask", "因果掩码"),
    Exercise("masking_routes", NOTEBOOKS[2], ("causal_weights_renormalised", "causal_weights_neg_inf"), 8,
             "The two masking routes", "两种遮蔽方式"),
    Exercise("causal_attention", NOTEBOOKS[2], ("CausalAttention",), 11,
             "CausalAttention: buffer and forward", "CausalAttention：缓冲区与前向传播"),
    # 04: multi-head attention
    Exercise("mha_wrapper", NOTEBOOKS[3], ("MultiHeadAttentionWrapper",), 5,
             "MultiHeadAttentionWrapper", "MultiHeadAttentionWrapper（堆叠多个单头）"),
    Exercise("split_heads", NOTEBOOKS[3], ("split_heads",), 5,
             "Splitting into heads", "拆分注意力头"),
    Exercise("merge_heads", NOTEBOOKS[3], ("merge_heads",), 5,
             "Merging the heads", "合并注意力头"),
    # The book's forward(x) earns all of multi_head_attention; the padding step (from the notes, not the
    # book) is graded on its own, in the same forward.
    Exercise("multi_head_attention", NOTEBOOKS[3], ("MultiHeadAttention",), 9,
             "MultiHeadAttention.forward", "MultiHeadAttention.forward"),
    Exercise("padding_mask", NOTEBOOKS[3], ("MultiHeadAttention",), 5,
             "Padding mask in MultiHeadAttention.forward", "MultiHeadAttention.forward 中的 padding 掩码"),
    Exercise("torch_equivalence", NOTEBOOKS[3], ("to_torch_multihead",), 6,
             "Our weights inside nn.MultiheadAttention", "把我们的权重放进 nn.MultiheadAttention"),
    Exercise("parameter_counts", NOTEBOOKS[3], ("count_parameters",), 4,
             "Book exercise 3.3: counting parameters", "书中练习 3.3：统计参数量"),
)

EXERCISES_BY_ID = {exercise.id: exercise for exercise in EXERCISES}


def of_notebook(name):
    """The exercises of notebook `name`, in course order (none for a name that is not a notebook)."""
    return tuple(exercise for exercise in EXERCISES if exercise.notebook == name)


def exercise(exercise_id):
    """The exercise with this id; a clear error for a typo in a notebook cell."""
    try:
        return EXERCISES_BY_ID[exercise_id]
    except KeyError:
        known = ", ".join(sorted(EXERCISES_BY_ID))
        raise KeyError(f"unknown exercise {exercise_id!r}; known exercises: {known}") from None
