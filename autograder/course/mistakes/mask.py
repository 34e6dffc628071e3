"""Mistakes of one family: the causal mask: diagonal, inverted, not truncated, fills, after the softmax."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

CAUSAL_MODULES = ("causal_attention", "multi_head_attention", "padding_mask")  # where the scores get a causal fill

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "mask_fill_zero", exercises=CAUSAL_MODULES, evidence=(Evidence.VARIANT,),
        question=("Which weight does the softmax give a score of 0, next to the scores a query really has?",
                  "和一个 query 真实的分数相比，softmax 会给分数 0 多大的权重？"),
        name=("the future scores filled with 0", "未来位置的分数被填成了 0"),
        hint=("the softmax hides a key only when its score is minus infinity: its exponential is then exactly 0; a "
              "score of 0 is an ordinary score, and its key gets as much weight as any real score near 0",
              "只有当分数是负无穷时，softmax 才会真正遮住这个 key：它的指数恰好为 0；分数 0 只是一个普通的分数，"
              "它的 key 和真实分数接近 0 的 key 分到一样多的权重"),
        change=("fill the hidden scores with minus infinity before the softmax, so that their weights come out "
                "exactly zero",
                "在 softmax 之前把被遮住的分数填成负无穷，这样它们的权重恰好为零"),
    ),
    mistake(
        "mask_fill_not_low_enough", exercises=CAUSAL_MODULES, evidence=(Evidence.VARIANT,),
        question=("Can a real score be lower than the number you fill the future with, and what weight does the "
                  "future get then?",
                  "真实的分数会不会比你给未来位置填的数还低？那时未来位置会分到多大的权重？"),
        name=("the future scores filled with a number that real scores can fall below",
              "未来位置的分数被填成了一个真实分数可能比它还低的数"),
        hint=("a finite fill hides a key only while every real score of its row is far above it: scores have no "
              "lower bound, and a row whose real scores are all very negative gives the future keys most of its "
              "weight",
              "有限的填入值只有在同一行的真实分数都远高于它时才能遮住 key：分数没有下限，如果一行的真实分数都非常"
              "负，未来位置的 key 反而会分到大部分权重"),
        change=("fill the hidden scores with minus infinity (or the lowest number the dtype holds), a value no real "
                "score can fall below",
                "把被遮住的分数填成负无穷（或该 dtype 能表示的最小值），任何真实分数都不可能比它更低"),
    ),
)
