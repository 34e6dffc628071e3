"""Mistakes of one family: heads: split and merge, plain lists, shared heads, head_dim, the output projection."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

MISTAKES: tuple[Misconception, ...] = (
    # Proven by a fact read from the student's own input after the call: other values, another layout, or its version
    # counter moved (written into, even with the same numbers).
    mistake("heads_input_edited_in_place", exercises={"split_heads", "merge_heads"}, evidence={Evidence.FACT},
            name=("the input tensor changed in place",
                  "原地修改了输入张量"),
            hint=("splitting and merging heads only change how the same numbers are read; operations whose names "
                  "end in an underscore, and assignments into the tensor, change the caller's tensor, which the "
                  "forward pass still needs as it was, and which autograd refuses to change when it is a leaf that "
                  "requires grad",
                  "拆分和合并头只改变读取同一组数的方式；名字以下划线结尾的运算以及对张量的赋值会改变调用者的张量，而"
                  "forward 之后还需要它保持原样；如果它是需要梯度的叶子张量，autograd 会拒绝修改它"),
            question=("After your function returns, is the tensor you gave it the same as before: its numbers, its "
                      "shape, its strides?",
                      "你的函数返回之后，传给它的张量还和之前一样吗：数值、形状、步长？"),
            change=("use the forms of the operations that return a new view, and leave the input itself untouched",
                    "使用返回新视图的运算写法，不要改动输入本身")),
)
