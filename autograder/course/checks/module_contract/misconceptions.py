"""Known mistakes first met in the module contract (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("state_changed_by_forward",
      "forward changes the module's own state", "forward 修改了模块自己的状态",
      "forward runs again and again on one module: it reads the weights and the mask buffer and leaves them as "
      "__init__ built them; anything made for one call (the mask cut to this input's length) is a new local tensor, "
      "and a slice of a buffer is a view of it, so editing the slice in place edits the buffer",
      "同一个模块的 forward 会被反复调用：它读取权重和掩码 buffer，并让它们保持 __init__ 构建时的样子；为某一次调用准"
      "备的"
      "东西（按本次输入长度截取的掩码）是一个新的局部张量，而 buffer 的切片是它的视图，原地修改切片就是修改 buffer"),
    M("heads_identical_init",
      "every head starts from the same weights", "所有的头都从相同的权重开始",
      "each head's layers must draw their own random weights: resetting the random seed before building each head "
      "gives every head the same start",
      "每个头的层都要各自抽取随机权重：在构建每个头之前重新设置随机种子，会让所有头的起点完全相同"),
    M("mask_plain_attribute",
      "mask stored as a plain attribute", "掩码被存成普通属性",
      "use self.register_buffer('mask', ...) so the mask follows .to(device) and is saved in state_dict",
      "使用 self.register_buffer('mask', ...)，掩码才会随 .to(device) 移动并保存在 state_dict 中"),
    M("mask_as_parameter",
      "mask registered as a parameter", "掩码被注册成了参数",
      "an nn.Parameter is trained by the optimizer; use self.register_buffer('mask', ...) for the fixed mask",
      "nn.Parameter 会被优化器训练；固定的掩码应使用 self.register_buffer('mask', ...)"),
    M("mask_not_persistent",
      "mask buffer not saved in state_dict", "掩码 buffer 没有保存在 state_dict 中",
      "register_buffer('mask', ...) without persistent=False: the mask is part of the saved model",
      "使用 register_buffer('mask', ...) 时不要加 persistent=False：掩码是保存的模型的一部分"),
    M("dropout_in_eval",
      "dropout still active in eval mode", "eval 模式下 dropout 仍然生效",
      "use the nn.Dropout module (self.dropout): it is the identity after model.eval()",
      "使用 nn.Dropout 模块（self.dropout）：调用 model.eval() 之后它就是恒等映射"),
    M("dropout_before_softmax",
      "dropout applied before the softmax", "在 softmax 之前应用了 dropout",
      "apply dropout to the attention weights, after the softmax",
      "dropout 应作用在 softmax 之后的注意力权重上"),
    M("dropout_missing",
      "dropout never applied", "没有应用 dropout",
      "apply self.dropout to the attention weights right after the softmax: it drops weights in train() mode only",
      "在 softmax 之后立即对注意力权重应用 self.dropout：它只在 train() 模式下丢弃权重"),
    M("dropout_not_on_weights",
      "dropout applied to something other than the attention weights", "dropout 作用在了注意力权重以外的地方",
      "drop attention weights, not the input, the values or the output: dropout belongs right after the softmax",
      "要丢弃的是注意力权重，而不是输入、value 或输出：dropout 应紧跟在 softmax 之后"),
    M("heads_plain_list",
      "heads kept in a plain Python list", "注意力头放在了普通 Python 列表里",
      "wrap the heads in nn.ModuleList so their weights are registered (parameters(), .to(device), state_dict)",
      "用 nn.ModuleList 包装这些头，它们的权重才会被注册（parameters()、.to(device)、state_dict）"),
    M("qkv_bias_ignored",
      "qkv_bias not followed", "没有遵循 qkv_bias 参数",
      "the query, key and value projections have a bias exactly when qkv_bias=True (out_proj always has one)",
      "当且仅当 qkv_bias=True 时，query、key、value 三个投影才带偏置（out_proj 总是带偏置）"),
)
