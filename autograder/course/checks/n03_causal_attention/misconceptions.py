"""Known mistakes first met in notebook 03 (causal mask, masking routes) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("scale_wrong_value",
      "scores divided by the wrong number", "分数除以的数不对",
      "the scores are divided by the square root of the key size of one head, which keeps their spread near 1 "
      "whatever that size; check the expression you divide by, and the order of ** and / in it",
      "分数要除以单个头的 key 维度的平方根，这样无论维度多大，分数的分布范围都保持在 1 左右；请检查你所除的表达式，"
      "以及其中 ** 和 / 的运算顺序"),
    M("input_edited_in_place",
      "the caller's tensor edited in place", "原地修改了调用者的张量",
      "methods ending in _ (masked_fill_, div_, ...) and item assignment write into the tensor they act on: the "
      "caller's tensor changes, and autograd can no longer go back through the softmax that made it; the out-of-place "
      "form returns a new tensor",
      "以 _ 结尾的方法（masked_fill_、div_ 等）和按下标赋值都会写入它们所作用的张量：调用者的张量随之改变，autograd "
      "也无法"
      "再通过生成它的 softmax 反向传播；不带 _ 的写法会返回一个新张量"),
    M("mask_includes_diagonal",
      "the mask also hides the diagonal", "掩码把对角线也遮住了",
      "a token may attend to itself: only the entries strictly above the diagonal are future tokens",
      "token 可以关注它自己：只有严格位于对角线上方的位置才是未来的 token"),
    M("mask_inverted",
      "the mask hides the past instead of the future", "掩码遮住了过去而不是未来",
      "True (or 1) must sit strictly ABOVE the diagonal: those are the future tokens to hide",
      "True（或 1）必须位于对角线严格上方：那些才是要遮住的未来 token"),
    M("mask_after_softmax_no_renorm",
      "future zeroed after the softmax without renormalising", "softmax 之后置零未来位置却没有重新归一化",
      "after multiplying by the lower-triangular matrix, divide each row by its sum; or fill -inf before the softmax",
      "乘以下三角矩阵之后要把每一行除以它的和；或者在 softmax 之前填入 -inf"),
    M("mask_not_truncated",
      "mask not truncated to num_tokens", "掩码没有截断到 num_tokens",
      "inputs can be shorter than context_length: use only the top-left num_tokens × num_tokens block of the stored "
      "mask",
      "输入可以比 context_length 短：只使用所存掩码左上角 num_tokens × num_tokens 的那一块"),
    M("masked_fill_result_dropped",
      "masked_fill's result was thrown away", "masked_fill 的结果被丢弃了",
      "masked_fill returns a new tensor and leaves the one it was called on alone: keep what it returns",
      "masked_fill 返回一个新张量，不改动调用它的那个张量：要保留它的返回值"),
    M("transpose_batched",
      "`.T` on a batched tensor", "对带 batch 维的张量使用了 `.T`",
      "`.T` reverses ALL dimensions; on a batched (b, num_tokens, d) tensor only the last two may be swapped",
      "`.T` 会反转所有维度；对批量张量 (b, num_tokens, d) 只应交换最后两个维度"),
    M("tensor_created_on_cpu",
      "a tensor made inside forward stays on the CPU", "forward 中新建的张量留在了 CPU 上",
      "tensors created in forward (torch.ones, torch.triu, torch.tensor...) need device=x.device, or use the "
      "registered buffer, which moves with the module",
      "在 forward 中新建的张量（torch.ones、torch.triu、torch.tensor……）需要 device=x.device，或者使用会随模块"
      "移动的已注册 buffer"),
)
