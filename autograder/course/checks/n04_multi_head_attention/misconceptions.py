"""Known mistakes first met in notebook 04 (heads) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("scale_by_d_out",
      "scaled by sqrt(d_out) instead of sqrt(head_dim)", "用 sqrt(d_out) 而不是 sqrt(head_dim) 缩放",
      "each head sees head_dim = d_out // num_heads features: scale by keys.shape[-1] ** 0.5 after the split",
      "每个头只有 head_dim = d_out // num_heads 个特征：拆分之后用 keys.shape[-1] ** 0.5 缩放"),
    M("split_without_transpose",
      "heads split with view but not transposed", "用 view 拆分了头但没有转置",
      "view to (b, num_tokens, num_heads, head_dim), then .transpose(1, 2) to (b, num_heads, num_tokens, head_dim)",
      "先 view 成 (b, num_tokens, num_heads, head_dim)，再 .transpose(1, 2) 得到 (b, num_heads, num_tokens, head_dim)"),
    M("merge_without_transpose",
      "heads merged without transposing back", "合并头时没有转置回来",
      "transpose (b, num_heads, num_tokens, head_dim) back to (b, num_tokens, num_heads, head_dim) before the view",
      "在 view 之前先把 (b, num_heads, num_tokens, head_dim) 转置回 (b, num_tokens, num_heads, head_dim)"),
    M("heads_on_token_axis",
      "heads concatenated along the token axis", "把多个头沿 token 维拼接了",
      "heads sit side by side along the feature axis (dim=-1), never along the tokens (dim=0 or 1)",
      "多个头应沿特征维（dim=-1）并排拼接，而不是沿 token 维（dim=0 或 1）"),
    M("missing_out_proj",
      "out_proj not applied", "没有应用 out_proj",
      "finish with self.out_proj(context_vec) to mix the heads",
      "最后要用 self.out_proj(context_vec) 把各个头的输出混合起来"),
    M("heads_stacked",
      "heads stacked on a new axis", "多个头被堆叠到了新的维度上",
      "torch.stack adds a dimension; torch.cat([...], dim=-1) puts the heads side by side along the features",
      "torch.stack 会新增一个维度；torch.cat([...], dim=-1) 才是沿特征维把各个头并排拼接"),
    M("heads_shared",
      "one head repeated num_heads times", "同一个头被重复了 num_heads 次",
      "[CausalAttention(...)] * num_heads repeats ONE module; build a new head each time: "
      "[CausalAttention(...) for _ in range(num_heads)]",
      "[CausalAttention(...)] * num_heads 重复的是同一个模块；要每次新建一个头："
      "[CausalAttention(...) for _ in range(num_heads)]"),
    M("loop_over_heads",
      "heads computed one by one in a Python loop", "用 Python 循环逐个计算注意力头",
      "split once into (b, num_heads, num_tokens, head_dim): one batched matmul then serves every head",
      "一次性拆分成 (b, num_heads, num_tokens, head_dim)：这样一次批量矩阵乘法就能同时处理所有的头"),
    M("split_wrong_axes",
      "heads split along the wrong axes", "拆分头时用错了维度顺序",
      "head h owns the features h*head_dim ... (h+1)*head_dim - 1: view as (b, num_tokens, num_heads, head_dim), "
      "num_heads before head_dim, then .transpose(1, 2)",
      "第 h 个头拥有第 h*head_dim 到 (h+1)*head_dim - 1 个特征：先 view 成 (b, num_tokens, num_heads, head_dim)"
      "（num_heads 在 head_dim 之前），再 .transpose(1, 2)"),
    M("merge_wrong_axes",
      "heads merged in the wrong feature order", "合并头时特征顺序不对",
      "transpose (b, num_heads, num_tokens, head_dim) to (b, num_tokens, num_heads, head_dim), then reshape: "
      "each head's head_dim features stay together",
      "先把 (b, num_heads, num_tokens, head_dim) 转置成 (b, num_tokens, num_heads, head_dim) 再 reshape："
      "每个头的 head_dim 个特征要挨在一起"),
    M("padding_neg_inf",
      "padded keys filled with -inf", "padding 位置的 key 被填成了 -inf",
      "a query that sees only padding then has a row of -inf and softmax gives NaN; fill padded keys with "
      "torch.finfo(scores.dtype).min, a finite value",
      "只能看到 padding 的查询会得到一整行 -inf，softmax 之后就是 NaN；请用有限值 torch.finfo(scores.dtype).min "
      "填充 padding 位置的 key"),
    M("padding_ignored",
      "attention_mask not applied", "没有应用 attention_mask",
      "fill the scores of padded keys (attention_mask == 0), broadcast as (b, 1, 1, num_tokens), before the softmax",
      "在 softmax 之前填充 padding 位置（attention_mask == 0）的 key 的分数，形状广播为 (b, 1, 1, num_tokens)"),
    M("padding_inverted",
      "attention_mask read the wrong way round", "attention_mask 的含义用反了",
      "1 marks a real token and 0 a padding token: hide the keys where attention_mask == 0",
      "1 表示真实 token，0 表示 padding：要隐藏的是 attention_mask == 0 的 key"),
    M("in_proj_order",
      "query/key/value weights stacked in the wrong order", "query/key/value 权重的堆叠顺序错了",
      "in_proj_weight is torch.cat([W_query.weight, W_key.weight, W_value.weight], dim=0): query rows first, "
      "then key, then value (the same for in_proj_bias)",
      "in_proj_weight 是 torch.cat([W_query.weight, W_key.weight, W_value.weight], dim=0)：先 query，再 key，"
      "最后 value（in_proj_bias 也一样）"),
    M("counts_buffers",
      "buffers counted as parameters", "把 buffer 也算成了参数",
      "count module.parameters() that require grad; the mask is a buffer, not a parameter",
      "只统计 module.parameters() 中 requires_grad 的参数；掩码是 buffer，不是参数"),
    M("counts_frozen",
      "frozen parameters counted", "把冻结的参数也算进去了",
      "count only parameters with p.requires_grad: frozen ones (requires_grad=False) are not trained",
      "只统计 p.requires_grad 为 True 的参数：冻结的参数（requires_grad=False）不参与训练"),
)
