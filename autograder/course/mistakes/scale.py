"""Mistakes of one family: the scores' scale: missing, by the wrong constant, after the softmax, twice."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

SCALED_MODULES = ("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention", "padding_mask")

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "scale_by_d_k", exercises=SCALED_MODULES, evidence=(Evidence.VARIANT,),
        question=("What number do your scores end up divided by, all divisions counted, and how does it compare "
                  "with the square root of the keys' size?",
                  "把所有除法都算上，你的分数最后一共除以了多少？它和 keys 维度的平方根相比如何？"),
        name=("the scores divided by the keys' size itself (or by its square root twice)",
              "分数除以了 keys 的维度本身（或者两次除以它的平方根）"),
        hint=("a dot product of two vectors of d_k random entries spreads like the square root of d_k: dividing by "
              "that root keeps the scores' spread near one; dividing by d_k itself, or by the root twice, flattens "
              "the softmax more and more as the keys grow",
              "两个各有 d_k 个随机分量的向量的点积，其分布宽度与 d_k 的平方根成正比：除以这个平方根能让分数的宽度"
              "保持在 1 左右；除以 d_k 本身，或两次除以平方根，会让 softmax 随着 key 维度增大变得越来越平"),
        change=("divide the scores once, by the square root of the keys' last dimension, and nowhere else",
                "只在一处对分数做一次除法，除以 keys 最后一个维度的平方根"),
    ),
    mistake(
        "scale_by_num_tokens", exercises=SCALED_MODULES, evidence=(Evidence.VARIANT,),
        question=("Which size does the number your scores are divided by come from: the keys' features or the "
                  "tokens?",
                  "你的分数除以的那个数来自哪个尺寸：keys 的特征维度，还是 token 的个数？"),
        name=("the scores divided by the number of tokens (or its root) instead of the keys' size",
              "分数除以了 token 的个数（或其平方根），而不是 keys 的维度"),
        hint=("the scale corrects the spread of one dot product, which grows with the number of features summed "
              "in it, the keys' size; how many tokens there are changes how many scores a row has, not how large "
              "each one is",
              "缩放修正的是单个点积的分布宽度，它随点积中相加的特征个数（也就是 keys 的维度）增长；token 的个数只决定"
              "一行有多少个分数，不影响每个分数的大小"),
        change=("divide the scores by the square root of the keys' last dimension, not of an axis that counts "
                "tokens",
                "让分数除以 keys 最后一个维度的平方根，而不是表示 token 个数的那个维度的大小"),
    ),
)
