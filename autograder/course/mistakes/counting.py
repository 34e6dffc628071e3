"""Mistakes of one family: counting parameters: buffers, frozen, shared and children's parameters."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

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
    # Each below is proven by its wrong counter (ex5_parameter_counts.wrong_counters) giving the student's count on
    # the same module.
    mistake("counts_state_dict", exercises={"parameter_counts"}, evidence={Evidence.VARIANT},
            name=("the state_dict's tensors counted",
                  "把 state_dict 中的张量都算进去了"),
            hint=("a state_dict is what gets saved: persistent buffers and frozen parameters are in it, and a shared "
                  "parameter appears under each of its names; the optimizer sees only the parameters that require "
                  "grad, each once",
                  "state_dict 是要保存的内容：持久的 buffer 和冻结的参数都在其中，共享的参数在它的每个名字下"
                  "各出现一次；优化器只看到需要梯度的参数，每个只看到一次"),
            question=("Which tensors does your count walk over, and which of them would an optimizer update?",
                      "你的计数遍历的是哪些张量？其中哪些会被优化器更新？"),
            change=("count over the module's parameters, not over its state_dict, keeping those that require grad",
                    "对模块的参数计数，而不是对它的 state_dict 计数，并只保留需要梯度的参数")),
    mistake("counts_children_only", exercises={"parameter_counts"}, evidence={Evidence.VARIANT},
            name=("only the children's parameters counted",
                  "只统计了子模块的参数"),
            hint=("a module can hold parameters itself (an nn.Parameter attribute, or a layer such as nn.Linear with "
                  "no children at all); walking its children never reaches them",
                  "模块自身也可以持有参数（nn.Parameter 属性，或者像 nn.Linear 这样根本没有子模块的层）；只遍历它的"
                  "子模块永远到不了这些参数"),
            question=("On the module that failed, where is each parameter registered: on the module itself or on "
                      "one of its children? Which of those does your count reach?",
                      "在未通过的模块上，每个参数注册在哪里：模块自身，还是它的某个子模块？你的计数能到达哪些？"),
            change=("count every parameter the module yields, its own included, instead of going through its "
                    "children",
                    "统计模块给出的全部参数（包括它自己的），而不是逐个子模块去找")),
    mistake("counts_nested_twice", exercises={"parameter_counts"}, evidence={Evidence.VARIANT},
            name=("nested parameters counted once per module above them",
                  "嵌套的参数被它上面的每一层模块各算了一次"),
            hint=("parameters() of a module already includes everything below it; summing it over every module of "
                  "modules() counts a deep parameter again at each level above it",
                  "一个模块的 parameters() 已经包含它下面的全部参数；对 modules() 中的每个模块都求一次和，深层的参数"
                  "会在它上面的每一层被重复计数"),
            question=("How many times does your count see a parameter that sits three modules deep?",
                      "一个位于第三层模块中的参数，会被你的计数看到几次？"),
            change=("walk the parameters once, from the module you were given, not from every module inside it",
                    "只从传入的模块出发把参数遍历一次，而不是从它里面的每个模块各遍历一次")),
    mistake("counts_shared_twice", exercises={"parameter_counts"}, evidence={Evidence.VARIANT},
            name=("a shared parameter counted once per place it is registered",
                  "共享的参数在它注册的每个位置各算了一次"),
            hint=("when two layers hold the same tensor (tied weights, or one layer registered twice), the optimizer "
                  "updates one tensor: module.parameters() yields it once, whatever the number of its names",
                  "两个层持有同一个张量时（权重绑定，或同一个层注册了两次），优化器更新的只是一个张量："
                  "module.parameters() 只给出它一次，不管它有几个名字"),
            question=("In the module that failed, is any tensor held by two layers? How many times does your count "
                      "add it?",
                      "在未通过的模块中，有没有一个张量被两个层持有？你的计数把它加了几次？"),
            change=("count each parameter tensor once, as the module's own list of parameters gives them",
                    "每个参数张量只计一次，按模块自己给出的参数列表来数")),
    mistake("counts_linear_only", exercises={"parameter_counts"}, evidence={Evidence.VARIANT},
            name=("only the nn.Linear layers counted",
                  "只统计了 nn.Linear 层"),
            hint=("embeddings, normalisation layers, parameter lists and parameters of a module's own are trained "
                  "too: the count is over parameters, whatever layer holds them",
                  "嵌入层、归一化层、参数列表以及模块自身的参数同样会被训练：计数针对的是参数，与它属于哪种层无关"),
            question=("Which kinds of layer does the module that failed hold, and which of them does your count "
                      "look at?",
                      "未通过的模块含有哪几种层？你的计数看了其中哪些？"),
            change=("count the module's parameters themselves instead of the weights and biases of particular "
                    "layers",
                    "直接统计模块的参数，而不是只数某几类层的权重和偏置")),
)
