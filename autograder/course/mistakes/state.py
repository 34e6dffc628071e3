"""Mistakes of one family: a module's state: buffers, plain attributes, dropout placement and mode, inputs changed."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        # Of the modules with a mask buffer; SelfAttention_v1 and v2 hold parameters only
        # (parameters_changed_by_forward; issue 58).
        "state_changed_by_forward",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("Compare the module's parameters and buffers before and after one call: does the call change "
                  "any of them?",
                  "比较一次调用前后模块的参数和 buffer：这次调用改变了其中哪一个吗？"),
        name=("forward changes the module's own state",
              "forward 修改了模块自己的状态"),
        hint=("forward runs again and again on one module: it reads the parameters and buffers and leaves them as "
              "the constructor made them; whatever one call needs (such as a mask cut to this input's length) is "
              "a new local tensor",
              "同一个模块的 forward 会被反复调用：它读取参数和 buffer，并让它们保持构造函数创建时"
              "的样子；某一次调用需要的东西（例如按本次输入长度截取的掩码）是一个新的局部张量"),
        change=("keep what one call needs in a local variable and leave the module's parameters and buffers "
                "unchanged",
                "把某一次调用需要的东西放在局部变量里，不要改动模块的参数和 buffer"),
    ),
    mistake(
        "parameters_changed_by_forward",
        exercises=("self_attention_v1", "self_attention_v2"),
        evidence=(Evidence.FACT,),
        question=("Compare the module's parameters before and after one call: does the call change, add or remove "
                  "any of them?",
                  "比较一次调用前后模块的参数：这次调用改变、添加或删除了其中哪一个吗？"),
        name=("forward changes the module's own state",
              "forward 修改了模块自己的状态"),
        hint=("forward runs again and again on one module: it reads the parameters and leaves them as the "
              "constructor made them; whatever one call needs is a new local tensor",
              "同一个模块的 forward 会被反复调用：它读取参数，并让它们保持构造函数创建时的样子；"
              "某一次调用需要的东西是一个新的局部张量"),
        change=("keep what one call needs in a local variable and leave the module's parameters unchanged",
                "把某一次调用需要的东西放在局部变量里，不要改动模块的参数"),
    ),
    mistake(
        "mask_plain_attribute",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("After the module is moved to another device, where is your mask, and is it in the module's "
                  "saved state?",
                  "把模块移到另一个设备之后，你的掩码在哪里？它在模块保存的状态中吗？"),
        name=("mask stored as a plain attribute",
              "掩码被存成普通属性"),
        hint=("a module moves, converts and saves only the tensors it knows, its parameters and its registered "
              "buffers: a tensor kept as a plain attribute stays behind on the CPU and is missing from the saved "
              "state",
              "模块只会移动、转换和保存它知道的张量，也就是参数和已注册的 buffer：作为普通属性保存的张量会"
              "留在 CPU 上，也不在保存的状态中"),
        change=("register the mask as a buffer of the module in the constructor instead of assigning it as a "
                "plain attribute",
                "在构造函数中把掩码注册为模块的 buffer，而不是把它赋值为普通属性"),
    ),
    mistake(
        "mask_as_parameter",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("In which of the module's lists does your mask appear: its parameters or its buffers?",
                  "你的掩码出现在模块的哪个列表里：参数还是 buffer？"),
        name=("mask registered as a parameter",
              "掩码被注册成了参数"),
        hint=("a module's parameters are what it offers to be trained (what parameters() lists and an optimizer is "
              "given, even one with requires_grad off); a fixed mask is state the module carries, moves and saves "
              "without offering it for training: a buffer",
              "模块的参数是它交出去训练的东西（parameters() 列出的、交给优化器的，哪怕关闭了 requires_grad）；"
              "固定的掩码是模块携带、移动和保存、但不交出去训练的状态，也就是 buffer"),
        change=("register the mask as a buffer, not as a parameter",
                "把掩码注册为 buffer，而不是参数"),
    ),
    mistake(
        "mask_not_persistent",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("Save the module's state and list what is in it: is the mask there?",
                  "保存模块的状态并列出其中的内容：掩码在里面吗？"),
        name=("mask buffer not saved in state_dict",
              "掩码 buffer 没有保存在 state_dict 中"),
        hint=("a buffer can be left out of the saved state; the mask is part of the model, so a saved and "
              "reloaded module must carry it",
              "buffer 可以不进入保存的状态；掩码是模型的一部分，保存后再载入的模块必须带着它"),
        change=("register the mask as a buffer that is saved with the module, which is the default",
                "按默认方式把掩码注册为 buffer，让它随模块一起保存"),
    ),
    mistake(
        "dropout_in_eval",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("After the module is switched to eval mode, do two calls on the same input give the same "
                  "output?",
                  "把模块切换到 eval 模式之后，对同一输入调用两次，输出相同吗？"),
        name=("dropout still active in eval mode",
              "eval 模式下 dropout 仍然生效"),
        hint=("dropout belongs to training: in eval mode the module drops no weight and gives the same output on "
              "every call",
              "dropout 只属于训练：在 eval 模式下，模块不丢弃任何权重，每次调用的输出都相同"),
        change=("let the dropout follow the module's mode, as the dropout layer built in the constructor does by "
                "itself",
                "让 dropout 跟随模块的模式，就像构造函数中建好的 dropout 层自己会做的那样"),
    ),
    mistake(
        "dropout_before_softmax",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        # Of the weights the mask lets through: the future's are 0 in both modes (issue 58).
        question=("In training mode, does any attention weight that is not 0 in eval mode become exactly 0?",
                  "在训练模式下，有没有哪个在 eval 模式下不为 0 的注意力权重变成了恰好为 0？"),
        name=("dropout applied before the softmax",
              "在 softmax 之前应用了 dropout"),
        hint=("dropout zeroes some attention weights and scales up the rest; before the softmax it only changes "
              "scores, and the softmax then gives every key a weight again",
              "dropout 把一部分注意力权重置零，并放大其余的权重；在 softmax 之前它只改变分数，"
              "softmax 又会给每个 key 一个权重"),
        change=("apply dropout to the attention weights after the softmax, not to the scores",
                "在 softmax 之后对注意力权重应用 dropout，而不是对分数"),
    ),
    mistake(
        "dropout_missing",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("In training mode with a large dropout rate, do your weights change from one call to the next?",
                  "在训练模式下把 dropout 比例设得很大，你的权重在两次调用之间有变化吗？"),
        name=("dropout that drops nothing while training",
              "训练时 dropout 什么也不丢弃"),
        hint=("dropout drops attention weights at random while training, so that no token relies on a single key; "
              "in eval mode it does nothing",
              "dropout 在训练时随机丢弃注意力权重，让任何 token 都不依赖单个 key；在 eval"
              " 模式下它不起作用"),
        # Said of every way to get there (a rate of 0, a dropout never called, one called only in eval mode): a
        # check to make, not a claim about which one the code took (issue 58).
        change=("check each condition on the way to your dropout: in training mode it must run on every call, with "
                "the rate the module is built with, on the attention weights right after the softmax",
                "逐一检查通往 dropout 的每个条件：在训练模式下，每次调用它都必须以模块构建时给定的比例运行，"
                "作用在 softmax 之后的注意力权重上"),
    ),
    mistake(
        "dropout_not_on_weights",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("Which tensor does your dropout act on, and what does each of its numbers stand for?",
                  "你的 dropout 作用在哪个张量上？其中每个数代表什么？"),
        name=("dropout applied to something other than the attention weights",
              "dropout 作用在了注意力权重以外的地方"),
        hint=("attention dropout removes some of the links between tokens: it acts on the attention weights, not "
              "on the input, the values or the output",
              "注意力中的 dropout 去掉的是 token 之间的部分联系：它作用在注意力权重上，而不是输入"
              "、value 或输出上"),
        change=("move the dropout to the attention weights, right after the softmax",
                "把 dropout 移到 softmax 之后，作用在注意力权重上"),
    ),
    mistake(
        "qkv_bias_ignored",
        exercises=("self_attention_v2", "causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("Build the module with qkv_bias on and off: do the query, key and value layers have a bias in "
                  "each case?",
                  "分别打开和关闭 qkv_bias 构建模块：两种情况下 query、key、value 各层有"
                  "偏置吗？"),
        name=("qkv_bias not followed",
              "没有遵循 qkv_bias 参数"),
        hint=("the query, key and value projections have a bias exactly when qkv_bias asks for one",
              "query、key、value 三个投影是否带偏置完全由 qkv_bias 决定"),
        change=("pass qkv_bias on as the bias setting of the three projection layers",
                "把 qkv_bias 作为三个投影层的偏置设置传进去"),
    ),
    mistake(
        # An out_proj built with bias=qkv_bias reads, with qkv_bias off, as this: a fact of the module, whatever the
        # learner meant (qkv_bias_ignored would tell them of query, key and value layers that are right).
        "out_proj_without_bias",
        exercises=("multi_head_attention",),
        evidence=(Evidence.FACT,),
        question=("Build the module with qkv_bias off: which of its linear layers still have a bias, and which "
                  "should?",
                  "关闭 qkv_bias 构建模块：它的哪些线性层仍带偏置？哪些应当带？"),
        name=("out_proj built without its bias",
              "out_proj 没有偏置"),
        hint=("qkv_bias switches only the query, key and value projections; the output projection that mixes the "
              "heads is an ordinary linear layer, with a bias whatever qkv_bias says",
              "qkv_bias 只决定 query、key、value 三个投影层；混合各个头的输出投影层是普通的线性层，"
              "无论 qkv_bias 取什么值都带偏置"),
        change=("build the output projection with a linear layer's default bias, leaving qkv_bias out of it",
                "按线性层的默认设置（带偏置）构建输出投影层，不要把 qkv_bias 传给它"),
    ),
    mistake(
        "input_edited_in_place",
        exercises=("masking_routes", "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.FACT,),
        question=("After the call returns, is the tensor you passed in the same as before the call?",
                  "调用返回之后，传进去的张量还和调用之前一样吗？"),
        name=("the caller's tensor edited in place",
              "原地修改了调用者的张量"),
        hint=("methods whose names end in an underscore, and item assignment, write into the tensor they act on: "
              "the caller's tensor changes under them; the form without the underscore returns a new tensor",
              "名字以下划线结尾的方法和按下标赋值都会写入它们所作用的张量：调用者的张量随之改变；不带下划线的写法"
              "会返回一个新张量"),
        change=("compute into a new tensor with the out-of-place form of each operation",
                "用每个运算的非原地写法，把结果算到一个新张量里"),
    ),
    mistake(
        # Of the modules with a mask buffer only: SelfAttention_v1 and v2 have none to point to
        # (forward_tensor_on_cpu; issue 58).
        "tensor_created_on_cpu",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention"),
        evidence=(Evidence.FACT,),
        question=("When the input is on a GPU, on which device is each tensor your forward creates?",
                  "当输入在 GPU 上时，你的 forward 新建的每个张量位于哪个设备上？"),
        name=("a tensor made inside forward stays on the CPU",
              "forward 中新建的张量留在了 CPU 上"),
        # The dtype too: a buffer the output is written into makes a float64 input's output float32 (the wrapper's
        # variant fails the dtype checks alike, value_variants.WrapperIntoZeros).
        hint=("a tensor created without naming a device is made on the CPU, wherever the input is, and without "
              "naming a dtype in torch's default float32, whatever the input's dtype; a registered buffer moves "
              "with the module",
              "新建张量时不指定设备，它就会建在 CPU 上，不管输入在哪里；不指定 dtype，它就是 torch 默认的 float32，"
              "不管输入是什么 dtype；已注册的 buffer 会随模块移动"),
        change=("create each new tensor on the input's device, or use the module's registered buffer",
                "在输入所在的设备上新建每个张量，或者使用模块已注册的 buffer"),
    ),
    mistake(
        # The same fact said of a module without buffers: a layer built in forward is such a tensor too (its weights
        # are new random tensors on the CPU), and the way out there is the module's own weights, not a device=.
        "forward_tensor_on_cpu",
        exercises=("self_attention_v1", "self_attention_v2"),
        evidence=(Evidence.FACT,),
        question=("When the input is on a GPU, on which device is each tensor your forward creates?",
                  "当输入在 GPU 上时，你的 forward 新建的每个张量位于哪个设备上？"),
        name=("a tensor made inside forward stays on the CPU",
              "forward 中新建的张量留在了 CPU 上"),
        hint=("a tensor created inside forward without naming a device, a new layer's weights included, is made on "
              "the CPU wherever the input is, and moving the module does not move it",
              "在 forward 中新建张量时不指定设备（新建的层的权重也是这样），它就会建在 CPU 上，不管输入在哪里，"
              "移动模块也不会移动它"),
        change=("compute from the input and the module's own weights; any other tensor forward really needs, create "
                "on the input's device",
                "只用输入和模块自己的权重来计算；forward 确实需要的其他张量，在输入所在的设备上新建"),
    ),
    mistake(
        "function_tensor_on_cpu",
        exercises=("masking_routes",),
        evidence=(Evidence.FACT,),
        question=("When the input is on a GPU, on which device is each tensor your function creates?",
                  "当输入在 GPU 上时，你的函数新建的每个张量位于哪个设备上？"),
        name=("a tensor made inside the function stays on the CPU",
              "函数中新建的张量留在了 CPU 上"),
        hint=("a tensor created without naming a device is made on the CPU, wherever the input is",
              "新建张量时不指定设备，它就会建在 CPU 上，不管输入在哪里"),
        change=("create each new tensor, the mask included, on the input's device",
                "在输入所在的设备上新建每个张量，包括掩码"),
    ),
)
