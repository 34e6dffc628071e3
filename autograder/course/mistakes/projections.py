"""Mistakes of one family: the projections: queries and keys swapped, x @ W.weight, weights transferred wrongly."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "query_key_swapped",
        exercises=("self_attention_v1", "self_attention_v2", "causal_attention", "multi_head_attention",
                   "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Which token does row i of your scores belong to: a query or a key?",
                  "你的分数的第 i 行属于哪个 token：query 还是 key？"),
        name=("queries and keys swapped",
              "query 和 key 弄反了"),
        hint=("row i of the scores belongs to query i: each query is compared with every key, not each key with "
              "every query",
              "分数的第 i 行属于第 i 个 query：是每个 query 与所有 key 比较，而不是每个 "
              "key 与所有 query 比较"),
        # Said of the scores, not of a product: swapped operands, a transposed result and an einsum whose output
        # labels are swapped give the same numbers (issue 58: advice true of the code it speaks to).
        change=("compute the scores so that the queries index their rows and the keys their columns: row i holds "
                "query i's dot product with every key",
                "计算分数时让 query 对应行、key 对应列：第 i 行是第 i 个 query 与每个 key 的点积"),
    ),
    mistake(
        "linear_as_matrix",
        exercises=("self_attention_v2", "causal_attention", "mha_wrapper", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT, Evidence.ERROR),
        question=("How is the weight of an nn.Linear laid out, and how is the layer meant to be applied to an "
                  "input?",
                  "nn.Linear 的权重是怎样排列的？这个层应当怎样作用在输入上？"),
        name=("an nn.Linear used as a matrix",
              "把 nn.Linear 当成矩阵用了"),
        hint=("nn.Linear is a layer, applied by calling it on the input; its stored weight is laid out outputs "
              "first, so multiplying by it directly gives the wrong shape or values",
              "nn.Linear 是一个层，要把输入传给它调用才能应用它；它存放的权重按输出在前排列，直接与它相"
              "乘会得到错误的形状或数值"),
        change=("apply each projection layer by calling it on the input",
                "把输入传给每个投影层，通过调用来应用它"),
    ),
    mistake(
        "weights_not_transposed",
        exercises=("transfer_weights",),
        evidence=(Evidence.VARIANT,),
        question=("Which axis of nn.Linear's weight runs over the inputs, and which axis of v1's parameter?",
                  "nn.Linear 权重的哪个维度对应输入？v1 参数的哪个维度对应输入？"),
        name=("nn.Linear weights copied without transposing",
              "复制 nn.Linear 权重时没有转置"),
        hint=("nn.Linear stores its weight outputs first, a v1 parameter inputs first: the same numbers read "
              "along the other axis; a reshape keeps the order of the numbers, so it cannot turn one into the "
              "other",
              "nn.Linear 的权重按输出在前存放，v1 的参数按输入在前存放：是同样的数，只是沿另一个维度"
              "读取；reshape 保持数的顺序不变，所以不能把一个变成另一个"),
        change=("swap the two axes of each weight as you copy it",
                "复制每个权重时交换它的两个维度"),
    ),
    mistake(
        "reshape_not_transpose",
        exercises=("transfer_weights",),
        evidence=(Evidence.VARIANT,),
        question=("take a small matrix that is not square and bring it into the other shape both ways: do the "
                  "first rows of the two results agree?",
                  "取一个不是方阵的小矩阵，用这两种方式把它变成另一个形状：两个结果的第一行一样吗？"),
        name=("weights regrouped with reshape (or view) instead of transposed",
              "用 reshape（或 view）重排了权重，而不是转置"),
        hint=("reshape and view keep the numbers in their memory order and only cut them into rows of a new "
              "length; a transpose swaps rows and columns. The shapes then agree, the values do not",
              "reshape 和 view 保持数在内存中的顺序，只是把它们切成新长度的行；转置则是交换行和列。"
              "于是形状一致，数值却不同"),
        change=("turn each weight of sa_v2 into v1's layout by swapping its rows and columns, not by regrouping "
                "its numbers",
                "把 sa_v2 的每个权重通过交换行和列变成 v1 的布局，而不是重新分组其中的数"),
    ),
    mistake(
        "weights_mixed_up",
        exercises=("transfer_weights",),
        evidence=(Evidence.VARIANT,),
        question=("Which of v2's layers did you copy into each of v1's three parameters?",
                  "你把 v2 的哪个层分别复制到了 v1 的三个参数中？"),
        name=("projection weights copied into the wrong places",
              "投影权重复制到了错误的位置"),
        hint=("each projection has its own role: the query weights make the queries, the key weights the keys, "
              "the value weights the values",
              "每个投影各有其作用：query 权重生成 query，key 权重生成 key，value 权重生"
              "成 value"),
        change=("copy each of v2's projections into v1's parameter of the same name",
                "把 v2 的每个投影复制到 v1 中同名的参数里"),
    ),
    mistake(
        "transpose_batched",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.FACT, Evidence.ERROR),
        question=("Print the keys' shape before and after your transpose: where did the batch axis go?",
                  "在转置前后打印 keys 的形状：batch 维度去了哪里？"),
        name=("a transpose that reverses every axis of a batched tensor",
              "对带 batch 维度的张量用了反转所有维度的转置"),
        hint=("the short transpose reverses ALL dimensions; on a batched tensor only the last two, tokens and "
              "features, may be swapped",
              "简写的转置会反转所有维度；对带 batch 维度的张量，只应交换最后两个维度（token 和特征）"),
        change=("swap only the last two axes of the keys and leave the batch axis first",
                "只交换 keys 的最后两个维度，让 batch 维度留在最前面"),
    ),
    mistake(
        "in_proj_order",
        exercises=("torch_equivalence",),
        evidence=(Evidence.VARIANT,),
        question=("Which of your three projections fills the first rows of in_proj_weight?",
                  "in_proj_weight 最前面的那些行来自你的哪个投影？"),
        name=("query/key/value weights stacked in the wrong order",
              "query/key/value 权重的堆叠顺序错了"),
        hint=("in_proj_weight stacks the three projections along its rows in the order query, key, value (the "
              "same for in_proj_bias)",
              "in_proj_weight 按行依次堆叠 query、key、value 三个投影（"
              "in_proj_bias 同理）"),
        change=("stack the query, key and value weights in that order, and the biases the same way",
                "按 query、key、value 的顺序堆叠权重，偏置也一样"),
    ),
)
