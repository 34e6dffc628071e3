"""Known mistakes first met in notebook 02 (self-attention, exercise 3.1) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("copy_without_no_grad",
      "a parameter overwritten in place while autograd records", "在 autograd 记录时原地覆盖了参数",
      "autograd refuses to record an in-place write into a parameter that requires grad: a weight transfer is not "
      "part of training, so it runs inside torch.no_grad()",
      "autograd 拒绝记录对需要梯度的参数的原地写入：权重迁移不是训练的一部分，所以要放在 torch.no_grad() 中进行"),
    M("aliased_not_copied",
      "v2's weights aliased instead of copied", "引用了 v2 的权重而不是复制",
      "nn.Parameter(t) and a transpose .T both reuse t's memory: the two modules then share one set of numbers; "
      "copying the values into v1's own parameters keeps them apart",
      "nn.Parameter(t) 和转置 .T 都复用 t 的内存：两个模块于是共用同一组数；把数值复制进 v1 自己的参数才能让它们互不"
      "影响"),
    M("parameters_replaced",
      "v1's parameters replaced by new ones", "用新参数替换了 v1 的参数",
      "assigning a new nn.Parameter swaps the object that optimizers and hooks already hold; overwriting the values "
      "of the existing parameter (in place, without recording it for autograd) keeps it",
      "赋值一个新的 nn.Parameter 会替换掉优化器和钩子已经持有的那个对象；在原有参数上覆盖数值（原地进行，且不被 autog"
      "rad "
      "记录）才能保留它"),
    M("missing_scaling",
      "attention scores not scaled", "注意力分数没有缩放",
      "divide the scores by the square root of the key dimension before the softmax: large dot products otherwise "
      "push each row towards one-hot",
      "在 softmax 之前把分数除以 key 维度的平方根：否则较大的点积会让每一行接近 one-hot"),
    M("scale_by_d_in",
      "scaled by sqrt(d_in) instead of sqrt(head_dim)", "用 sqrt(d_in) 而不是 sqrt(head_dim) 缩放",
      "the scale belongs to the dimension the dot products sum over (the keys'), not to the input embedding",
      "缩放因子取决于点积求和所跨的维度（key 的维度），而不是输入嵌入的维度"),
    M("query_key_swapped",
      "queries and keys swapped", "query 和 key 弄反了",
      "row i of the scores belongs to query i: each query is compared with every key, not each key with every query",
      "分数的第 i 行属于第 i 个查询：是每个查询与所有 key 比较，而不是每个 key 与所有查询比较"),
    M("linear_as_matrix",
      "an nn.Linear used as a matrix", "把 nn.Linear 当成矩阵用了",
      "nn.Linear is a layer: call it on the input; its .weight is stored as (d_out, d_in), so multiplying by it "
      "directly gives the wrong shape or values",
      "nn.Linear 是一个层：要把输入传给它来调用；它的 .weight 按 (d_out, d_in) 存放，直接与它相乘会得到错误的形状或数"
      "值"),
    M("scale_after_softmax",
      "scaled after the softmax instead of before", "在 softmax 之后才缩放",
      "divide the scores by sqrt(head_dim) before the softmax; dividing the weights afterwards breaks their sum of 1",
      "在 softmax 之前把分数除以 sqrt(head_dim)；softmax 之后再除会让每行权重之和不再是 1"),
    M("weights_not_transposed",
      "nn.Linear weights copied without transposing", "复制 nn.Linear 权重时没有转置",
      "nn.Linear stores weight as (d_out, d_in), a v1 parameter is (d_in, d_out): compare the two shapes before you "
      "copy",
      "nn.Linear 的 weight 形状是 (d_out, d_in)，而 v1 的参数是 (d_in, d_out)：复制之前先比较这两个形状"),
    M("weights_mixed_up",
      "projection weights copied into the wrong places", "投影权重复制到了错误的位置",
      "copy W_query into W_query, W_key into W_key and W_value into W_value",
      "W_query 对应 W_query，W_key 对应 W_key，W_value 对应 W_value"),
)
