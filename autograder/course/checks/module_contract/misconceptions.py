"""Known mistakes first met in the module contract, in English and Simplified Chinese.

They sit next to the checks that name them; autograder.course.catalog gathers every package's MISCONCEPTIONS. One is
reported only when a wrong variant of the reference reproduces the student's output
(autograder.checking.compare.diagnose) or the probe saw the mistake itself.
"""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
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
      "drop attention weights, not the input, the values or the output: attn_weights = self.dropout(attn_weights)",
      "要丢弃的是注意力权重，而不是输入、values 或输出：attn_weights = self.dropout(attn_weights)"),
    M("heads_plain_list",
      "heads kept in a plain Python list", "注意力头放在了普通 Python 列表里",
      "wrap the heads in nn.ModuleList so their weights are registered (parameters(), .to(device), state_dict)",
      "用 nn.ModuleList 包装这些头，它们的权重才会被注册（parameters()、.to(device)、state_dict）"),
    M("qkv_bias_ignored",
      "qkv_bias not followed", "没有遵循 qkv_bias 参数",
      "nn.Linear(d_in, d_out, bias=qkv_bias): a bias exactly when qkv_bias=True (out_proj always has one)",
      "nn.Linear(d_in, d_out, bias=qkv_bias)：只有 qkv_bias=True 时才有偏置（out_proj 总是有偏置）"),
)
