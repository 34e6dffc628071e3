"""Mistakes of one family: counting parameters: buffers, frozen, shared and children's parameters."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "counts_buffers",
        exercises=("parameter_counts",),
        evidence=(Evidence.VARIANT,),
        question=("Which tensors of the module does your count include, and which of them does the optimizer "
                  "train?",
                  "你的计数包含了模块的哪些张量？其中哪些会被优化器训练？"),
        name=("buffers counted as parameters",
              "把 buffer 也算成了参数"),
        hint=("a buffer such as the mask is state the module carries, not something it learns: only parameters "
              "that require grad are trained",
              "像掩码这样的 buffer 是模块携带的状态，不是它学习的东西：只有需要梯度的参数才会被训练"),
        change=("count only the module's parameters, not its buffers",
                "只统计模块的参数，不要统计 buffer"),
    ),
    mistake(
        "counts_frozen",
        exercises=("parameter_counts",),
        evidence=(Evidence.VARIANT,),
        question=("Does your count change when some layers are frozen?",
                  "冻结一些层之后，你的计数会变吗？"),
        name=("frozen parameters counted",
              "把冻结的参数也算进去了"),
        hint=("a frozen parameter is still a parameter, but it does not require grad and is not trained",
              "被冻结的参数仍是参数，但它不需要梯度，也不参与训练"),
        change=("count only the parameters that require grad",
                "只统计需要梯度的参数"),
    ),
)
