"""Mistakes of one family: the scores' scale: missing, by the wrong constant, after the softmax, twice."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

SCALED_MODULES = ("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention", "padding_mask")

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "scaled_without_weights",
        exercises=("context_vectors",),
        evidence=(Evidence.VARIANT,),
        question=("Does this notebook's attention have trainable weights, and where did the division by a square "
                  "root come from?",
                  "这个 notebook 的注意力有可训练的权重吗？除以平方根这一步是从哪里来的？"),
        name=("the scores scaled, though this attention has no weights",
              "这里的注意力没有权重，却对分数做了缩放"),
        hint=("the division by the square root of the size arrives with the trainable query and key weights of "
              "notebook 02; here the weights are the softmax of the plain dot products",
              "除以维度平方根这一步要到 notebook 02 引入可训练的 query、key 权重时才出现；"
              "这里的权重就是普通点积的 softmax"),
        change=("leave the dot products unscaled here: the softmax of the plain scores gives the weights",
                "这里不要缩放点积：直接对原始分数做 softmax 就得到权重"),
    ),
    mistake(
        "missing_scaling",
        exercises=("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention",
                   "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("How large are your scores for a wide key dimension, and how peaked are the weights they give?",
                  "当 key 维度较大时，你的分数有多大？它们得到的权重有多集中？"),
        name=("attention scores not scaled",
              "注意力分数没有缩放"),
        hint=("dividing the scores by the square root of the key dimension keeps their spread near 1; large dot "
              "products otherwise push each row of the softmax towards one-hot",
              "把分数除以 key 维度的平方根，能让分数的分布范围保持在 1 左右；否则较大的点积会让 "
              "softmax 的每一行接近 one-hot"),
        change=("scale the scores down by the square root of the key dimension before the softmax",
                "在 softmax 之前，把分数除以 key 维度的平方根"),
    ),
    mistake(
        "scale_by_d_in",
        exercises=("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention",
                   "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Over how many numbers does each dot product of a query and a key sum?",
                  "query 与 key 的每个点积是对多少个数求和？"),
        name=("scaled by the input's size instead of the keys'",
              "按输入的维度而不是 key 的维度缩放"),
        hint=("the scale belongs to the dimension the dot products sum over (the keys'), not to the input "
              "embedding",
              "缩放因子取决于点积求和所跨的维度（key 的维度），而不是输入嵌入的维度"),
        change=("take the square root of the keys' size, not of the input's",
                "取 key 维度的平方根，而不是输入维度的"),
    ),
    mistake(
        "scale_after_softmax",
        exercises=("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention",
                   "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Do the weights of one query still sum to 1?",
                  "一个 query 的权重之和还是 1 吗？"),
        name=("scaled after the softmax instead of before",
              "在 softmax 之后才缩放"),
        hint=("the scaling acts on the scores, before the softmax: it sets how sharp the weights are; a division "
              "anywhere after the softmax only shrinks what follows it by a constant factor",
              "缩放作用在分数上，在 softmax 之前：它决定权重有多集中；在 softmax 之后的任何地方做除法，"
              "只会把之后的结果按常数倍缩小"),
        change=("divide the scores before the softmax, not what the softmax gives",
                "在 softmax 之前除分数，而不是除 softmax 得到的结果"),
    ),
    mistake(
        "scale_wrong_value",
        exercises=("causal_attention", "multi_head_attention"),
        evidence=(Evidence.VARIANT,),
        question=("What number do your scores get divided by, and what is the square root of the size of each "
                  "key?",
                  "你的分数除以的是哪个数？每个 key 的大小的平方根又是多少？"),
        name=("scores divided by the wrong number",
              "分数除以的数不对"),
        # Said of every scale the fit finds: on one case a product (scores * root) is a division (by 1 / root), so
        # nothing here presumes a division or a precedence slip the learner's code may not make (issue 58).
        hint=("the scores are divided by the square root of the size of each key a query is compared with, which "
              "keeps their spread near 1 whatever that size; the operation that scales your scores, the expression "
              "it uses and the order in which that expression's parts apply decide the number",
              "分数要除以与 query 相比较的每个 key 的大小的平方根，这样无论大小如何，分数的分布范围都"
              "保持在 1 左右；缩放你的分数的运算、它用到的表达式，以及表达式各部分的运算顺序，决定了这个数"),
        change=("scale the scores by a division by the square root of the size of each key, the root taken before "
                "the division",
                "用除法缩放分数：除以每个 key 的大小的平方根，先开平方再做除法"),
    ),
    mistake(
        "size_from_notebook",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT, Evidence.ERROR),
        question=("where does the size you use come from, and would it change if the call got an input of another "
                  "size?",
                  "你用到的这个尺寸是从哪里来的？如果调用时换成另一种尺寸的输入，它会跟着变吗？"),
        name=("a size read from a notebook variable, not from the input",
              "尺寸取自笔记本中的变量，而不是输入本身"),
        hint=("a function or module is called on inputs of every size: each size it uses (the batch, the number "
              "of tokens, the key size that scales the scores) must come from its own inputs or attributes, not "
              "from a variable the notebook defined for its example",
              "函数或模块会被用在各种尺寸的输入上：它用到的每个尺寸（batch 大小、token 数、用来缩放分"
              "数的 key 维度）都必须来自它自己的输入或属性，而不是笔记本为示例定义的变量"),
        change=("read the size from the shape of the tensor at hand (the keys for the scale, the input for the "
                "batch) instead of the notebook's variable",
                "从手头张量的形状中读取尺寸（缩放用 keys 的，batch 用输入的），而不是使用笔记本中的变"
                "量"),
    ),
    mistake(
        "scale_by_d_out",
        exercises=("multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Over how many numbers does one head's dot product of a query and a key sum?",
                  "单个头中 query 与 key 的点积是对多少个数求和？"),
        name=("scaled by the whole output's size instead of one head's",
              "按整个输出的维度而不是单个头的维度缩放"),
        hint=("each head sees only head_dim of the d_out features: the scale belongs to one head's key dimension, "
              "after the split",
              "每个头只看到 d_out 个特征中的 head_dim 个：缩放因子取决于拆分之后单个头的 key"
              " 维度"),
        change=("scale by the square root of one head's size, head_dim, not of d_out",
                "按单个头的维度 head_dim 的平方根缩放，而不是 d_out"),
    ),
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
