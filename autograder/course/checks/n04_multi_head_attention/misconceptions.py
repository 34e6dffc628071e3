"""Known mistakes first met in notebook 04 (heads) (see helpers.M)."""

from autograder.course.checks.helpers import M

MISCONCEPTIONS = (
    M("scale_by_d_out",
      "scaled by sqrt(d_out) instead of sqrt(head_dim)", "用 sqrt(d_out) 而不是 sqrt(head_dim) 缩放",
      "each head sees only head_dim of the d_out features: the scale belongs to one head's key dimension, after the "
      "split",
      "每个头只看到 d_out 个特征中的 head_dim 个：缩放因子取决于拆分之后单个头的 key 维度"),
    M("d_out_is_total",
      "d_out taken as the size of the whole output", "把 d_out 当成了整个输出的大小",
      "the wrapper gives every head its own d_out features and then places the heads side by side: the output is "
      "wider than any one head",
      "包装器给每个头各自 d_out 个特征，再把各个头并排放置：输出比任何一个头都宽"),
    M("heads_traded_for_width",
      "num_heads changed to change the output size", "为了改变输出大小而改变了 num_heads",
      "exercise 3.2 keeps two heads: the width to change is each head's own",
      "练习 3.2 要保留两个头：要改变的是每个头自己的宽度"),
    M("split_without_transpose",
      "heads split with view but not transposed", "用 view 拆分了头但没有转置",
      "after the view the tensor is (b, num_tokens, num_heads, head_dim), but each head needs its own (num_tokens, "
      "head_dim) block: (b, num_heads, num_tokens, head_dim)",
      "view 之后张量是 (b, num_tokens, num_heads, head_dim)，但每个头需要自己的 (num_tokens, head_dim) 块：(b, "
      "num_heads, num_tokens, head_dim)"),
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
      "after merging the heads, pass the result through the output projection: it is what mixes the heads",
      "合并各个头之后，还要让结果经过输出投影层：正是它把各个头的信息混合起来"),
    M("heads_stacked",
      "heads stacked on a new axis", "多个头被堆叠到了新的维度上",
      "stacking adds a new dimension; the heads belong side by side along the existing feature axis",
      "stack 会新增一个维度；各个头应当沿已有的特征维并排放置"),
    M("heads_shared",
      "one head repeated num_heads times", "同一个头被重复了 num_heads 次",
      "multiplying a one-element list repeats ONE module num_heads times: every head must be a module of its own, "
      "built anew",
      "把只含一个元素的列表相乘，会把同一个模块重复 num_heads 次：每个头都必须是单独新建的模块"),
    M("loop_over_heads",
      "heads computed one by one in a Python loop", "用 Python 循环逐个计算注意力头",
      "split once into (b, num_heads, num_tokens, head_dim): one batched matmul then serves every head",
      "一次性拆分成 (b, num_heads, num_tokens, head_dim)：这样一次批量矩阵乘法就能同时处理所有的头"),
    M("split_wrong_axes",
      "heads split along the wrong axes", "拆分头时用错了维度顺序",
      "head h owns the features h*head_dim ... (h+1)*head_dim - 1 of every token: the view must keep each head's "
      "features together (num_heads before head_dim), and only then may the heads axis move",
      "第 h 个头拥有每个 token 的第 h*head_dim ... (h+1)*head_dim - 1 个特征：view 时要让每个头的特征连在一起（"
      "num_heads 在 head_dim 之前），然后才能移动头所在的维度"),
    M("merge_wrong_axes",
      "heads merged in the wrong feature order", "合并头时特征顺序不对",
      "transpose (b, num_heads, num_tokens, head_dim) to (b, num_tokens, num_heads, head_dim), then reshape: "
      "each head's head_dim features stay together",
      "先把 (b, num_heads, num_tokens, head_dim) 转置成 (b, num_tokens, num_heads, head_dim) 再 reshape："
      "每个头的 head_dim 个特征要挨在一起"),
    M("padding_neg_inf",
      "padded keys filled with -inf", "padding 位置的 key 被填成了 -inf",
      "a query that sees only padding then has a row of -inf and softmax gives NaN: padded keys need a finite "
      "fill value, one every real score is larger than",
      "只能看到 padding 的查询会得到一整行 -inf，softmax 之后就是 NaN：padding 位置的 key 需要一个有限的填入值，"
      "并且任何真实分数都比它大"),
    M("padding_fill_too_high",
      "padded keys filled with a value real scores can be below", "padding 位置填入的值可能高于真实分数",
      "a padded key must lose against every real key in the softmax: its score has to be lower than any real score "
      "can be, yet finite",
      "在 softmax 中，padding 位置的 key 必须比任何真实 key 都小：它的分数要低于任何真实分数可能取到的值，同时又是有"
      "限值"),
    M("padding_ignored",
      "attention_mask not applied", "没有应用 attention_mask",
      "fill the scores of padded keys (attention_mask == 0), broadcast as (b, 1, 1, num_tokens), before the softmax",
      "在 softmax 之前填入 padding 位置（attention_mask == 0）的 key 的分数，形状广播为 (b, 1, 1, num_tokens)"),
    M("padding_inverted",
      "attention_mask read the wrong way round", "attention_mask 的含义用反了",
      "1 marks a real token and 0 a padding token: hide the keys where attention_mask == 0",
      "1 表示真实 token，0 表示 padding：要隐藏的是 attention_mask == 0 的 key"),
    M("in_proj_order",
      "query/key/value weights stacked in the wrong order", "query/key/value 权重的堆叠顺序错了",
      "in_proj_weight stacks the three projections along its rows in the order query, key, value (the same for "
      "in_proj_bias)",
      "in_proj_weight 按行依次堆叠 query、key、value 三个投影（in_proj_bias 同理）"),
    M("counts_buffers",
      "buffers counted as parameters", "把 buffer 也算成了参数",
      "count module.parameters() that require grad; the mask is a buffer, not a parameter",
      "只统计 module.parameters() 中 requires_grad 的参数；掩码是 buffer，不是参数"),
    M("counts_frozen",
      "frozen parameters counted", "把冻结的参数也算进去了",
      "count only parameters with p.requires_grad: frozen ones (requires_grad=False) are not trained",
      "只统计 p.requires_grad 为 True 的参数：冻结的参数（requires_grad=False）不参与训练"),
)
