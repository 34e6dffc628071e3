"""Mistakes of one family: gradients: copies without no_grad, detached or unused parameters, aliases."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

CONTRACT_MODULES = ("self_attention_v1", "self_attention_v2", "causal_attention", "mha_wrapper",
                    "multi_head_attention")  # the modules whose gradients the module contract reads

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "gradient_cut",
        exercises=("softmax_naive", "softmax_stable", "context_vectors", "masking_routes", "split_heads",
                   "merge_heads"),
        evidence=(Evidence.FACT,),
        question=("Which step of your function hands back numbers that autograd did not record?",
                  "你的函数中哪一步得到的数值没有被 autograd 记录？"),
        name=("the computation leaves autograd's graph",
              "计算脱离了 autograd 的计算图"),
        hint=("training needs a gradient for everything a loss depends on: detaching a tensor, reading its raw "
              "data, going through NumPy, switching gradients off or putting a constant in place of a value computed "
              "from the input each hand back numbers autograd cannot trace back to the input",
              "训练需要损失所依赖的一切都有梯度：分离张量、读取它的原始数据、经过 NumPy、关闭梯度计算或用常数代替"
              "由输入算出的值，得到的数值 autograd 都无法追溯回输入"),
        change=("compute every step with tensor operations on the input itself, without leaving autograd's record",
                "每一步都直接对输入做张量运算，不要离开 autograd 的记录"),
    ),
    mistake(
        "copy_without_no_grad",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("Is autograd recording while your function writes into the parameters, and should it be?",
                  "你的函数写入参数时，autograd 在记录吗？它应该记录吗？"),
        name=("a parameter overwritten in place while autograd records",
              "在 autograd 记录时原地覆盖了参数"),
        hint=("autograd refuses to record an in-place write into a parameter that requires grad: a weight "
              "transfer is not part of training, so autograd must not record it",
              "autograd 拒绝记录对需要梯度的参数的原地写入：权重迁移不是训练的一部分，所以不应让 "
              "autograd 记录它"),
        change=("do the copy inside a block where the recording of gradients is switched off",
                "在关闭梯度记录的代码块中进行复制"),
    ),
    mistake(
        "aliased_not_copied",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("After your function, change one of v2's weights: does v1 change too?",
                  "调用你的函数之后，改动 v2 的一个权重：v1 也跟着变了吗？"),
        name=("v2's weights aliased instead of copied",
              "引用了 v2 的权重而不是复制"),
        hint=("wrapping a tensor as a new parameter, or transposing it, reuses its memory: the two modules then "
              "share one set of numbers; copying the values into v1's own parameters keeps them apart",
              "把一个张量包装成新参数或对它转置，都会复用它的内存：两个模块于是共用同一组数；把数值复制进 v1 "
              "自己的参数，才能让它们互不影响"),
        change=("copy the values into the parameters v1 already has instead of handing v2's tensors to v1",
                "把数值复制进 v1 已有的参数，而不是把 v2 的张量交给 v1"),
    ),
    mistake(
        "parameters_replaced",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("Is v1's parameter after the call the same object as before it?",
                  "调用之后 v1 的参数和调用之前是同一个对象吗？"),
        name=("v1's parameters replaced by new ones",
              "用新参数替换了 v1 的参数"),
        hint=("assigning a new parameter swaps the object that optimizers and hooks already hold; overwriting the "
              "values of the existing parameter keeps it",
              "赋值一个新参数会替换掉优化器和钩子已经持有的那个对象；覆盖原有参数的数值才能保留它"),
        change=("write the new values into v1's existing parameters, in place and unrecorded by autograd, instead "
                "of assigning new ones",
                "把新数值原地写入 v1 已有的参数，并且不让 autograd 记录，而不是赋值新的参数"),
    ),
    mistake(
        "parameters_left_frozen",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("After your function returns, would an optimizer still change v1's parameters?",
                  "函数返回之后，优化器还能改变 v1 的参数吗？"),
        name=("v1's parameters left frozen after the copy",
              "复制之后 v1 的参数仍处于冻结状态"),
        hint=("a parameter that does not require grad gets no gradient, so training leaves it as it is: switching "
              "that flag off is one way to write into it, but the module must be trainable again afterwards",
              "不需要梯度的参数得不到梯度，训练也就不会改变它：关掉这个标志是写入参数的一种办法，但之后模块必须"
              "重新可以训练"),
        change=("let v1's parameters require grad again before your function returns, or write into them in a way "
                "that never switches it off",
                "在函数返回之前让 v1 的参数重新需要梯度，或者换一种根本不需要关掉它的写入方式"),
    ),
    mistake(
        "grad_mode_left_off",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("Once your function has returned, does autograd still record what the rest of the notebook "
                  "computes?",
                  "你的函数返回之后，autograd 还会记录笔记本其余部分的计算吗？"),
        name=("gradients switched off for everything after the call",
              "调用之后所有计算的梯度都被关掉了"),
        hint=("switching gradient recording off is a setting of the whole process, not of one function: left off, "
              "it stops every later forward pass from being recorded, so nothing can be trained; a block that "
              "switches it off only inside itself puts it back by itself",
              "关闭梯度记录是整个进程的设置，而不是某个函数自己的：一直关着，之后的每一次前向计算都不会被记录，"
              "什么也训练不了；只在一个代码块内部关闭梯度的写法，会在块结束时自动恢复"),
        change=("switch recording off only around the copy, so that it is on again when your function returns",
                "只在复制的那几行周围关闭梯度记录，让函数返回时它已经重新打开"),
    ),
    mistake(
        "copy_recorded_into_parameter",
        exercises=("transfer_weights",),
        evidence=(Evidence.FACT,),
        question=("Was autograd recording when your function wrote into v1's parameters?",
                  "你的函数写入 v1 的参数时，autograd 在记录吗？"),
        name=("the copy into v1's parameters recorded by autograd",
              "autograd 记录了写入 v1 参数的复制"),
        hint=("an in-place copy autograd records turns the parameter into the copy's result: it stops being a leaf "
              "of its own, backward sends its gradient on to v2's weight and keeps none for it, so an "
              "optimizer cannot train it; a weight transfer is not part of training",
              "被 autograd 记录下来的原地复制会让参数变成这次复制的结果：它不再是独立的叶子张量，反向传播把它的梯度"
              "继续传给 v2 的权重，而它自己得不到梯度，优化器无法训练它；权重迁移不是训练的一部分"),
        change=("do the copy where autograd does not record, so that each parameter stays a leaf that requires grad",
                "在 autograd 不记录的地方进行复制，让每个参数仍是需要梯度的叶子张量"),
    ),
    mistake(
        "weights_shared_with_source",
        exercises=("torch_equivalence",),
        evidence=(Evidence.FACT,),
        question=("After the call, change a weight of the module you copied from: does the nn.MultiheadAttention "
                  "you built change too?",
                  "调用之后，改动被复制的那个模块的一个权重：你建好的 nn.MultiheadAttention"
                  " 也跟着变了吗？"),
        name=("the new module shares its weights with the one it copies",
              "新模块与被复制的模块共用权重"),
        hint=("wrapping a tensor as a new parameter, or taking a view of it, reuses its memory: the two modules "
              "then share one set of numbers; copying the values into the new module's own parameters keeps them "
              "apart",
              "把一个张量包装成新参数或取它的视图，都会复用它的内存：两个模块于是共用同一组数；把数值复制进新模块"
              "自己的参数，才能让它们互不影响"),
        change=("copy the values into the parameters nn.MultiheadAttention already has instead of handing it the "
                "other module's tensors",
                "把数值复制进 nn.MultiheadAttention 已有的参数，而不是把另一个模块的张量交"
                "给它"),
    ),
    mistake(
        "forward_step_detached", exercises=(*CONTRACT_MODULES, "padding_mask"), evidence=(Evidence.FACT,),
        question=("The output is right: which step of your forward computes numbers that autograd does not record?",
                  "输出是对的：你的 forward 中哪一步算出的数值没有被 autograd 记录？"),
        name=("a step of forward computed outside autograd's graph",
              "forward 中有一步是在 autograd 的计算图之外计算的"),
        hint=("autograd takes a number computed where it does not record (a detached tensor, raw data, a block with "
              "gradients switched off) for a constant: the output keeps its values, but the gradients that reach the "
              "parameters and the input lose that step's part, and training follows them",
              "在 autograd 不记录的地方算出的数值（分离出来的张量、原始数据、关闭了梯度计算的代码块），"
              "autograd 会把它当成常数：输出的数值不变，但传到参数和输入的梯度少了这一步的贡献，"
              "而训练正是沿着这些梯度进行的"),
        change=("compute every step of forward from the input and the parameters with tensor operations, with "
                "gradients on, so that autograd records the whole computation",
                "forward 的每一步都直接由输入和参数通过张量运算得到，并保持梯度开启，让 autograd 记录整个计算"),
    ),
    mistake(
        "parameter_unused", exercises=CONTRACT_MODULES, evidence=(Evidence.FACT,),
        question=("Follow the named parameter through your forward: does anything computed from it reach the "
                  "output?",
                  "沿着 forward 追踪这个参数：由它算出的东西有没有一路传到输出？"),
        # Proven by moving the parameter's values (the output stays as it was): forward may still read it (its
        # shape, a tensor computed from it and left unused), so the name says the output, not forward.
        name=("a parameter the module creates but its output does not depend on",
              "模块创建了这个参数，但输出并不依赖它"),
        hint=("a parameter learns only through the output: the optimizer moves it along its gradient, and a "
              "parameter the output does not depend on gets none, so it keeps its initial values while the module "
              "still counts and saves it",
              "参数只能通过输出来学习：优化器沿梯度移动它，而输出不依赖的参数得不到梯度，于是它一直保持初始值，"
              "模块却仍然计数并保存它"),
        # Named only for the notes' own parameters (the gradients are judged where the module's parameters are the
        # promised ones): dropping the parameter is never the change.
        change=("make forward compute the output from the parameter where the notes use it",
                "让 forward 在笔记用到这个参数的地方由它计算输出"),
    ),
    mistake(
        "parameter_detached", exercises=CONTRACT_MODULES, evidence=(Evidence.FACT,),
        question=("The output changes with the named parameter, yet no gradient reaches it: where does your forward "
                  "leave autograd's record?",
                  "输出会随这个参数变化，但梯度却传不到它：你的 forward 在哪里离开了 autograd 的记录？"),
        name=("a parameter used outside autograd's graph", "参数是在 autograd 的计算图之外被使用的"),
        hint=("the output depends on the parameter's values, but through a detached copy, its raw data, a block "
              "with gradients off or a parameter that does not require them: autograd records no path back to it",
              "输出依赖这个参数的数值，但用的是分离出来的副本、它的原始数据、关闭了梯度的代码块，或者不需要梯度的参数："
              "autograd 没有记录通往它的路径"),
        change=("use the parameter itself in tensor operations inside forward, with gradients on",
                "在 forward 中直接用这个参数本身做张量运算，并保持梯度开启"),
    ),
)
