"""Mistakes of one family: heads: split and merge, plain lists, shared heads, head_dim, the output projection."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "heads_identical_init",
        exercises=("mha_wrapper",),
        evidence=(Evidence.FACT,),
        question=("Compare the starting weights of two heads: do they differ?",
                  "比较两个头的初始权重：它们不同吗？"),
        name=("every head starts from the same weights",
              "所有的头都从相同的权重开始"),
        hint=("each head must start from random weights of its own: heads that start equal get equal gradients "
              "and stay copies of one another",
              "每个头都必须从自己的随机权重开始：起点相同的头得到相同的梯度，会一直是彼此的副本"),
        change=("let each head draw its own random starting weights: do not reset the random seed between heads, "
                "and do not copy one head into another",
                "让每个头各自抽取随机的初始权重：不要在构建各个头之间重置随机种子，也不要把一个头复制给另一个头"),
    ),
    mistake(
        "heads_plain_list",
        exercises=("mha_wrapper",),
        evidence=(Evidence.FACT,),
        question=("Does the module's list of parameters include the heads' weights?",
                  "模块的参数列表中包含这些头的权重吗？"),
        name=("heads kept in a plain Python list",
              "注意力头放在了普通 Python 列表里"),
        hint=("a module sees only the submodules it registers: the weights of heads kept in a plain list are not "
              "listed, moved or saved with the module",
              "模块只能看到它注册的子模块：放在普通列表里的头，其权重不会随模块被列出、移动或保存"),
        change=("keep the heads in the module list container PyTorch provides, so that they are registered",
                "用 PyTorch 提供的模块列表容器保存这些头，让它们被注册"),
    ),
    mistake(
        "d_out_is_total",
        exercises=("two_dimensional_wrapper",),
        evidence=(Evidence.FACT,),
        fails_every_case=True,  # a size chosen whatever d_in: every case asks for 2 heads of 1 feature
        question=("How wide is one head's output, and how many of them does the wrapper place side by side?",
                  "单个头的输出有多宽？包装器把多少个这样的输出并排放置？"),
        name=("d_out taken as the size of the whole output",
              "把 d_out 当成了整个输出的大小"),
        hint=("the wrapper gives every head its own d_out features and then places the heads side by side: the "
              "output is wider than any one head",
              "包装器给每个头各自 d_out 个特征，再把各个头并排放置：输出比任何一个头都宽"),
        change=("choose d_out as the width of one head, so that the heads side by side make the width you need",
                "把 d_out 选为单个头的宽度，让并排放置的各个头合起来得到所需的宽度"),
    ),
    mistake(
        "heads_traded_for_width",
        exercises=("two_dimensional_wrapper",),
        evidence=(Evidence.FACT,),
        fails_every_case=True,  # a size chosen whatever d_in: every case asks for 2 heads of 1 feature
        question=("Which argument sets the width of one head, and which the number of heads?",
                  "哪个参数决定单个头的宽度？哪个决定头的个数？"),
        name=("num_heads changed to change the output size",
              "为了改变输出大小而改变了 num_heads"),
        hint=("exercise 3.2 keeps two heads: the width to change is each head's own",
              "练习 3.2 要保留两个头：要改变的是每个头自己的宽度"),
        change=("keep two heads and make each head narrower",
                "保留两个头，让每个头变窄"),
    ),
    mistake(
        "heads_on_token_axis",
        exercises=("mha_wrapper", "merge_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Print your output's shape: which axis grew when the heads were joined?",
                  "打印输出的形状：拼接各个头时，哪个维度变大了？"),
        name=("heads concatenated along the token axis",
              "把多个头沿 token 所在的维度拼接了"),
        hint=("heads sit side by side along the feature axis, never along the tokens",
              "多个头应沿特征维度并排拼接，而不是沿 token 所在的维度"),
        change=("join the heads along the feature axis, the last one",
                "沿特征维度（最后一个维度）拼接各个头"),
    ),
    mistake(
        "missing_out_proj",
        exercises=("multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT, Evidence.FACT),  # its variant reproduces the output; the graph shows it unused
        question=("After the heads are merged, which layer of the module has your forward not used yet?",
                  "合并各个头之后，模块中还有哪个层你的 forward 没有用到？"),
        name=("out_proj not applied",
              "没有应用 out_proj"),
        hint=("the output projection is what mixes the heads: without it each output feature comes from one head "
              "alone",
              "输出投影层的作用是把各个头的信息混合起来：没有它，每个输出特征都只来自一个头"),
        change=("pass the merged heads through the output projection before returning",
                "返回之前，让合并后的各个头经过输出投影层"),
    ),
    mistake(
        "heads_stacked",
        exercises=("mha_wrapper",),
        evidence=(Evidence.VARIANT,),
        question=("How many axes does your output have, and how many should it have?",
                  "你的输出有几个维度？它应当有几个？"),
        name=("heads stacked on a new axis",
              "多个头被堆叠到了新的维度上"),
        hint=("stacking adds a new dimension; the heads belong side by side along the existing feature axis",
              "stack 会新增一个维度；各个头应当沿已有的特征维度并排放置"),
        change=("join the heads along the existing feature axis instead of stacking them on a new one",
                "沿已有的特征维度拼接各个头，而不是把它们堆叠到新的维度上"),
    ),
    mistake(
        "heads_shared",
        exercises=("mha_wrapper",),
        evidence=(Evidence.FACT,),
        question=("Are your heads different modules, or one module seen several times?",
                  "你的各个头是不同的模块，还是同一个模块被看到了多次？"),
        name=("one head repeated num_heads times",
              "同一个头被重复了 num_heads 次"),
        hint=("repeating a list repeats the same object: every head in it is ONE module, with one set of weights",
              "把列表重复多次，重复的是同一个对象：其中的每个头都是同一个模块，共用一组权重"),
        change=("build each head anew, one construction per head",
                "每个头都单独新建一次"),
    ),
    mistake(
        "split_wrong_axes",
        exercises=("split_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Which features of token 0 end up in head 0 after your split: a run of neighbours, or one every "
                  "few features?",
                  "拆分之后，token 0 的哪些特征进了第 0 个头：一段相邻的特征，还是每隔几个取一个？"),
        name=("heads split along the wrong axes",
              "拆分头时用错了维度顺序"),
        hint=("each head owns a run of consecutive features of every token: the view must keep each head's "
              "features together, and only then may the heads axis move",
              "每个头拥有每个 token 的一段连续特征：view 时要让每个头的特征连在一起，然后才能移动头所"
              "在的维度"),
        change=("view the features as heads first and head size second, then move the heads axis",
                "view 时先按头数、再按每个头的大小拆分特征，然后再移动头所在的维度"),
    ),
    mistake(
        "merge_wrong_axes",
        exercises=("merge_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("After your merge, which head do a token's first few features come from?",
                  "合并之后，一个 token 的前几个特征来自哪个头？"),
        name=("heads merged in the wrong feature order",
              "合并头时特征顺序不对"),
        hint=("merging undoes the split: in every token, each head's features stay together, head after head",
              "合并是拆分的逆过程：在每个 token 中，每个头的特征要连在一起，一个头接着一个头"),
        # Not "tokens in front of the heads": a merge with the head size before the heads already has that (issue 58).
        change=("before joining the features, order the axes as tokens, then heads, then each head's size: each "
                "head's features together, head after head",
                "在把特征连起来之前，把维度排成 token、头、每个头的大小的顺序：每个头的特征连在一起，一个头接着一个头"),
    ),
    mistake(
        "split_without_transpose",
        exercises=("split_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("After your split, which axis holds the heads and which the tokens? Which of them does "
                  "attention compare?",
                  "拆分之后，哪个维度是头、哪个是 token？注意力比较的是哪一个？"),
        name=("heads split with view but not transposed",
              "用 view 拆分了头但没有转置"),
        # True of code that views straight as (b, num_heads, num_tokens, head_dim) as of code that views
        # (b, num_tokens, num_heads, head_dim) first: no presumed intermediate view (issue 58).
        hint=("a view or a reshape keeps the numbers in memory order, where each token's features come one after "
              "another: read as (batch, heads, tokens, head size) in one go, a head holds pieces of consecutive "
              "tokens' features, not one block of features of every token; attention runs per head over all tokens",
              "view 或 reshape 保持数值在内存中的顺序，而在内存中每个 token 的特征是一个接一个排列的：一步读成"
              "（batch、头、token、每个头的大小）时，一个头拿到的是相邻几个 token 的特征片段，而不是每个 token "
              "的同一块特征；注意力是按头在所有 token 上计算的"),
        change=("cut each token's features into heads with the tokens still in front (batch, tokens, heads, head "
                "size), then swap the tokens axis and the heads axis",
                "先在 token 维度仍在前面时把每个 token 的特征切成多个头（batch、token、头、每个头的大小），"
                "再交换 token 所在的维度和头所在的维度"),
    ),
    mistake(
        "merge_without_transpose",
        exercises=("merge_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Before your view, which axis comes right after the batch: the heads or the tokens?",
                  "在 view 之前，紧跟 batch 维度的是头所在的维度还是 token 所在的维度？"),
        name=("heads merged without transposing back",
              "合并头时没有转置回来"),
        hint=("merging undoes the split in reverse order: the heads axis must be back next to each head's "
              "features before those are joined",
              "合并要按相反的顺序撤销拆分：在把各个头的特征连起来之前，头所在的维度必须先回到每个头的特征旁边"),
        change=("swap the heads axis and the tokens axis back before the view that joins the heads",
                "在把各个头连起来的 view 之前，先把头所在的维度和 token 所在的维度交换回来"),
    ),
    mistake(
        "loop_over_heads",
        exercises=("multi_head_attention",),
        evidence=(Evidence.FACT,),
        question=("How many matrix products does your forward run for 2 heads, and how many for 8?",
                  "你的 forward 在 2 个头时做了多少次矩阵乘法？8 个头时呢？"),
        name=("heads computed one by one in a Python loop",
              "用 Python 循环逐个计算注意力头"),
        hint=("all heads run the same operations on different slices of the features: with the heads on an axis "
              "of their own, one batched product serves every head",
              "所有的头都是对特征的不同切片做相同的运算：把头放到单独的一个维度上，一次批量乘法就能同时处理所有的"
              "头"),
        change=("split the features into heads once, on an axis of their own, and let each product run over all "
                "heads at once",
                "一次性把特征拆分成多个头，放在单独的维度上，让每次乘法同时处理所有的头"),
    ),
    mistake(
        "head_dim_float",
        exercises=("split_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.ERROR,),
        name=("a head size computed with true division, so it is a float",
              "用真除法算出的头大小是浮点数"),
        hint=("dividing two whole numbers with the ordinary division gives a float even when the division is exact; "
              "a shape is made of whole numbers only, so the view refuses a float size",
              "用普通除法相除两个整数，即使能整除，结果也是浮点数；形状只能由整数组成，所以 view 不接受浮点数的尺寸"),
        question=("print the head size you pass to the view, and its type: is it a whole number?",
                  "打印你传给 view 的头大小及其类型：它是整数吗？"),
        change=("compute the head size with integer (floor) division, so that it stays a whole number",
                "用整数除法（向下取整的除法）计算头大小，让它保持为整数"),
    ),
    mistake(
        "view_after_transpose",
        exercises=("merge_heads", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.ERROR,),
        name=("a view straight after a transpose", "转置之后直接做 view"),
        hint=("a transpose only changes how the tensor's memory is read, not the order the numbers lie in; a view "
              "reads that memory in order, so after swapping two axes the numbers no longer lie in the order the "
              "new shape needs",
              "转置只改变读取内存的方式，不改变数在内存中的排列顺序；view 按顺序读取这块内存，所以交换两个维度之后，"
              "数的排列不再是新形状所需的顺序"),
        question=("after your transpose, does the tensor still lie in memory in the order its new shape reads it?",
                  "转置之后，这个张量在内存中的排列，还和它的新形状读取的顺序一致吗？"),
        change=("lay the transposed tensor out in memory in its new order before the view, or use the operation "
                "that copies the numbers when it has to",
                "在 view 之前先把转置后的张量按新的顺序在内存中排好，或者改用在必要时会复制数据的那个运算"),
    ),
    # Proven by a fact read from the student's own input after the call: other values, another layout, or its version
    # counter moved (written into, even with the same numbers).
    mistake("heads_input_edited_in_place", exercises={"split_heads", "merge_heads"}, evidence={Evidence.FACT},
            name=("the input tensor changed in place",
                  "原地修改了输入张量"),
            hint=("splitting and merging heads only change how the same numbers are read; operations whose names "
                  "end in an underscore, and assignments into the tensor, change the caller's tensor, which the "
                  "code after the call still needs as it was, and which autograd refuses to change when it is a leaf "
                  "that requires grad",
                  "拆分和合并头只改变读取同一组数的方式；名字以下划线结尾的运算以及对张量的赋值会改变调用者的张量，而"
                  "调用之后的代码还需要它保持原样；如果它是需要梯度的叶子张量，autograd 会拒绝修改它"),
            question=("After your function returns, is the tensor you gave it the same as before: its numbers, its "
                      "shape, its strides?",
                      "你的函数返回之后，传给它的张量还和之前一样吗：数值、形状、步长？"),
            change=("use the forms of the operations that return a new view, and leave the input itself untouched",
                    "使用返回新视图的运算写法，不要改动输入本身")),
)
