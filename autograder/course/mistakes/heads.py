"""Mistakes of one family: heads: split and merge, plain lists, shared heads, head_dim, the output projection."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

MISTAKES: tuple[Misconception, ...] = (
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
)
