"""Mistakes of one family: softmax over the wrong axis, overflow, normalising without exp, keepdim, global max."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "softmax_global_max", exercises=("softmax_stable",), evidence=(Evidence.VARIANT,),
        question=("In a row whose values are all far below the largest value of the whole tensor, what do the "
                  "exponentials become after your shift?",
                  "如果某一行的数值都远低于整个张量的最大值，经过你的平移之后，这一行的指数会变成什么？"),
        name=("the maximum taken over the whole tensor instead of along the softmax's dimension",
              "最大值是在整个张量上取的，而不是沿 softmax 的那个维度取的"),
        hint=("shifting cancels in each row, so any shift is right on paper; but one shift for every row brings the "
              "largest row to 0 and pushes a row of much smaller values so low that all its exponentials underflow "
              "to 0, and 0 divided by 0 is not a number",
              "平移在每一行内都会抵消，所以理论上减去任何数都对；但所有行共用一个平移量时，最大的那一行被移到 0，而数值"
              "小得多的行会被推得很低，它的指数全部下溢成 0，0 除以 0 不是一个数"),
        change=("take the maximum along the same dimension as the sum, keeping that dimension, so that each row is "
                "shifted by its own largest value",
                "沿求和的那个维度取最大值并保留这个维度，让每一行减去的都是它自己的最大值"),
    ),
)
