"""Mistakes of one family: gradients: copies without no_grad, detached or unused parameters, aliases."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

CONTRACT_MODULES = ("self_attention_v1", "self_attention_v2", "causal_attention", "mha_wrapper",
                    "multi_head_attention")  # the modules whose gradients the module contract reads

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "parameter_unused", exercises=CONTRACT_MODULES, evidence=(Evidence.FACT,),
        question=("Follow the named parameter through your forward: which line uses it?",
                  "沿着 forward 追踪这个参数：哪一行用到了它？"),
        name=("a parameter the module creates but its forward never uses",
              "模块创建了这个参数，但 forward 从来没有用到它"),
        hint=("a parameter learns only through the output: the optimizer moves it along its gradient, and a "
              "parameter the output does not use gets none, so it keeps its initial values while the module "
              "still counts and saves it",
              "参数只能通过输出来学习：优化器沿梯度移动它，而输出没有用到的参数得不到梯度，于是它一直保持初始值，"
              "模块却仍然计数并保存它"),
        change=("compute the output through the layer that holds the parameter (call the layer itself, bias "
                "included), or do not create a parameter the computation does not need",
                "让输出经过持有这个参数的层来计算（直接调用这个层，包括它的偏置），或者不要创建计算用不到的参数"),
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
