"""Known mistakes first met in notebook 01 (softmax, context vectors) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("softmax_wrong_dim",
      "softmax over the wrong dimension", "softmax 的维度不对",
      "each query's weights over the keys must sum to 1: take the softmax over the last dimension (dim=-1)",
      "每个查询对所有 key 的权重之和应为 1：在最后一个维度上做 softmax（dim=-1）"),
    M("naive_softmax_overflow",
      "softmax overflows on large inputs", "softmax 在大输入上溢出",
      "exp(1000) is inf and inf/inf is nan: subtract the maximum before exp (it cancels out)",
      "exp(1000) 是 inf，inf/inf 是 nan：在 exp 之前先减去最大值（结果不变）"),
    M("normalised_without_exp",
      "divided by the sum instead of taking the softmax", "直接除以总和而不是做 softmax",
      "softmax exponentiates each score before normalising; dividing the raw scores by their sum breaks on negative "
      "scores",
      "softmax 先对每个分数取指数再归一化；直接用原始分数除以它们的和，遇到负分数就会出错"),
    M("softmax_dim_ignored",
      "the dim argument is ignored", "忽略了 dim 参数",
      "reduce over the dimension you were given: the maximum and the sum must both run along `dim` and keep that "
      "axis, never along a fixed one",
      "在给定的维度上做归约：最大值和求和都要沿 `dim` 进行并保留该维，而不是沿一个固定的维"),
    M("default_dim_changed",
      "the default of dim was changed", "改变了 dim 的默认值",
      "keep the signature you were given, dim=-1: code that calls the function without dim counts on the last axis",
      "保持给定的函数签名 dim=-1：不传 dim 调用这个函数的代码依赖的是最后一个维度"),
    M("max_and_sum_axes_differ",
      "the maximum and the sum taken along different axes", "最大值和求和沿着不同的维度进行",
      "the shift cancels only when every entry of a row is shifted by the same amount: the maximum must come from "
      "the same axis the sum runs along",
      "只有当同一行中的每一项都减去同一个数时，这个平移才会抵消：最大值必须沿求和的那个维度取"),
    M("scores_as_weights",
      "the scores used as weights, without the softmax", "直接把分数当成权重，没有做 softmax",
      "a context vector is a weighted average of the inputs: its weights are positive and sum to 1, which the raw "
      "scores are not until the softmax makes them so",
      "上下文向量是输入的加权平均：权重必须为正且和为 1，原始分数要经过 softmax 才满足这一点"),
    M("scaled_without_weights",
      "the scores scaled, though this attention has no weights", "这里的注意力没有权重，却对分数做了缩放",
      "the division by the square root of the size arrives with the trainable query and key weights of notebook 02; "
      "here the weights are the softmax of the plain dot products",
      "除以维度平方根这一步要到 notebook 02 引入可训练的 query、key 权重时才出现；这里的权重就是普通点积的 softmax"),
    M("gradient_cut",
      "the computation leaves autograd's graph", "计算脱离了 autograd 的计算图",
      "training needs a gradient for everything a loss depends on: .detach(), .data, .numpy() and torch.no_grad() "
      "each hand back numbers autograd cannot trace back to the input",
      "训练需要损失所依赖的一切都有梯度：.detach()、.data、.numpy() 和 torch.no_grad() 得到的数值，autograd 都无法追"
      "溯回输入"),
    M("missing_keepdim",
      "max or sum taken without keepdim=True", "求 max 或 sum 时没有 keepdim=True",
      "keepdim=True keeps the reduced axis as size 1, so each row is shifted and divided by its own max and sum",
      "keepdim=True 会把被归约的维度保留为长度 1，这样每一行才会减去、除以它自己的最大值和总和"),
)
