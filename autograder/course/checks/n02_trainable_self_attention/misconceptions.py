"""Known mistakes first met in notebook 02 (self-attention, exercise 3.1) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("missing_scaling",
      "attention scores not scaled", "注意力分数没有缩放",
      "divide the scores by sqrt(head_dim) (keys.shape[-1] ** 0.5) before the softmax",
      "在 softmax 之前把分数除以 sqrt(head_dim)（即 keys.shape[-1] ** 0.5）"),
    M("scale_by_d_in",
      "scaled by sqrt(d_in) instead of sqrt(head_dim)", "用 sqrt(d_in) 而不是 sqrt(head_dim) 缩放",
      "the scale belongs to the key dimension, not the input embedding: use keys.shape[-1] ** 0.5",
      "缩放因子取决于 key 的维度而不是输入嵌入维度：使用 keys.shape[-1] ** 0.5"),
    M("query_key_swapped",
      "queries and keys swapped", "query 和 key 弄反了",
      "scores are queries @ keys.transpose(...): row i belongs to query i",
      "分数是 queries @ keys.transpose(...)：第 i 行属于第 i 个查询"),
    M("linear_as_matrix",
      "an nn.Linear used as a matrix", "把 nn.Linear 当成矩阵用了",
      "nn.Linear is a layer: call it, self.W_key(x); its .weight is (d_out, d_in), so x @ W.weight is wrong",
      "nn.Linear 是一个层：要调用它，self.W_key(x)；它的 .weight 形状是 (d_out, d_in)，所以 x @ W.weight 是错的"),
    M("scale_after_softmax",
      "scaled after the softmax instead of before", "在 softmax 之后才缩放",
      "divide the scores by sqrt(head_dim) before the softmax; dividing the weights afterwards breaks their sum of 1",
      "在 softmax 之前把分数除以 sqrt(head_dim)；softmax 之后再除会让每行权重之和不再是 1"),
    M("weights_not_transposed",
      "nn.Linear weights copied without transposing", "复制 nn.Linear 权重时没有转置",
      "nn.Linear stores weight as (d_out, d_in); a v1 parameter is (d_in, d_out): copy weight.T",
      "nn.Linear 的 weight 形状是 (d_out, d_in)，而 v1 的参数是 (d_in, d_out)：要复制 weight.T"),
    M("weights_mixed_up",
      "projection weights copied into the wrong places", "投影权重复制到了错误的位置",
      "copy W_query into W_query, W_key into W_key and W_value into W_value",
      "W_query 对应 W_query，W_key 对应 W_key，W_value 对应 W_value"),
)
