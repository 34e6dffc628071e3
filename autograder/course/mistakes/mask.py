"""Mistakes of one family: the causal mask: diagonal, inverted, not truncated, fills, after the softmax."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

CAUSAL_MODULES = ("causal_attention", "multi_head_attention", "padding_mask")  # where the scores get a causal fill

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "mask_includes_diagonal",
        exercises=("causal_mask", "masking_routes", "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT, Evidence.FACT),
        question=("May token 2 look at token 2? What does your mask say on the diagonal?",
                  "token 2 可以看它自己吗？你的掩码在对角线上是什么？"),
        name=("the mask also hides the diagonal",
              "掩码把对角线也遮住了"),
        hint=("a token may attend to itself: only the entries strictly above the diagonal are future tokens",
              "token 可以关注它自己：只有严格位于对角线上方的位置才是未来的 token"),
        change=("hide only the entries strictly above the diagonal and leave the diagonal visible",
                "只遮住严格位于对角线上方的位置，对角线保持可见"),
    ),
    mistake(
        "mask_inverted",
        exercises=("causal_mask", "masking_routes", "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT, Evidence.FACT),
        question=("In your mask, which tokens does the first token see, and which does the last one see?",
                  "在你的掩码中，第一个 token 能看到哪些 token？最后一个 token 呢？"),
        name=("the mask hides the past instead of the future",
              "掩码遮住了过去而不是未来"),
        hint=("the mask marks what a token must not see: the tokens after it, strictly above the diagonal",
              "掩码标出的是一个 token 不能看到的东西：它之后的 token，也就是严格位于对角线上方的位置"),
        change=("mark the other side of the diagonal: the later tokens, not the earlier ones",
                "标记对角线的另一侧：之后的 token，而不是之前的 token"),
    ),
    mistake(
        "mask_not_truncated",
        exercises=("causal_attention", "mha_wrapper", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.ERROR,),
        question=("How large is your stored mask, and how large are this input's scores?",
                  "你存放的掩码有多大？本次输入的分数有多大？"),
        name=("mask not truncated to num_tokens",
              "掩码没有截断到 num_tokens"),
        hint=("inputs can be shorter than context_length: the mask stored for the longest input is larger than "
              "this input's scores, and only its top-left block belongs to this input",
              "输入可以比 context_length 短：按最长输入存放的掩码比本次输入的分数大，只有它左上角"
              "的那一块属于本次输入"),
        change=("use only the block of the stored mask that covers this input's tokens, as a new local tensor",
                "只使用所存掩码中覆盖本次输入 token 的那一块，作为一个新的局部张量"),
    ),
    mistake(
        "row_sums_without_keepdim",
        exercises=("masking_routes",),
        evidence=(Evidence.VARIANT,),
        question=("what shape do the row sums have after the sum, and which axis of the weights does broadcasting "
                  "line them up with?",
                  "求和之后行和是什么形状？广播又会把它们与权重的哪一个维度对齐？"),
        name=("the row sums divide the weights along the wrong axis",
              "权重沿错误的维度除以了行和"),
        # Said of every way to get there (the sums without keepdim, or kept and then transposed): the values are the
        # evidence, not the call that made them (issue 58).
        hint=("broadcasting lines a tensor of row sums up with the weights by its shape: row sums laid out as one "
              "row (a sum that drops the summed axis, or a column of sums turned on its side) meet the LAST axis "
              "of the weights, and each column is then divided by some row's sum",
              "广播按形状把行和与权重对齐：排成一行的行和（求和时去掉了被求和的维度，或者把一列行和转成了一行）"
              "会与权重的最后一个维度对齐，于是每一列都除以了某一行的和"),
        change=("divide by the row sums laid out as a column, one entry per row with the summed axis kept as size 1, "
                "so that each row is divided by its own sum",
                "除以排成一列的行和：每行一个数，被求和的维度保留为长度 1，让每一行除以它自己的和"),
    ),
    mistake(
        "row_sums_wrong_axis",
        exercises=("masking_routes",),
        evidence=(Evidence.VARIANT,),
        question=("Add up one query's weights after your division: do they sum to 1? Along which dimension did "
                  "you add the weights up?",
                  "做完除法之后，把一个 query 的权重加起来：和是 1 吗？你是沿哪个维度把权重加起来的？"),
        name=("the weights divided by sums over the queries instead of over the keys",
              "权重除以的是沿 query 所在维度的和，而不是沿 key 所在维度的和"),
        hint=("renormalising makes each query's remaining weights sum to 1 again: the sum that divides a row runs "
              "across that row's keys, not down a column across the queries",
              "重新归一化是为了让每个 query 剩下的权重之和重新等于 1：用来除一行的和，应当沿这一行的各个 key "
              "求得，而不是沿一列、跨各个 query 求得"),
        change=("take the sums along the dimension of the keys, the last one, keeping it as size 1",
                "沿 key 所在的维度（最后一个维度）求和，并把这个维度保留为长度 1"),
    ),
    mistake(
        "mask_after_softmax_no_renorm",
        exercises=("masking_routes", "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("After the future is zeroed, what does each row of your weights sum to?",
                  "把未来位置置零之后，你的权重每一行之和是多少？"),
        name=("future zeroed after the softmax without renormalising",
              "softmax 之后置零未来位置却没有重新归一化"),
        hint=("zeroing the future after the softmax removes part of each row's weight: the rows no longer sum to "
              "1 until they are renormalised",
              "在 softmax 之后把未来位置置零，会去掉每一行的一部分权重：不重新归一化，各行之和就不再是 "
              "1"),
        change=("divide each masked row by its own sum, or hide the future before the softmax instead",
                "把遮蔽后的每一行除以它自己的和，或者改为在 softmax 之前遮住未来"),
    ),
    mistake(
        "masked_fill_result_dropped",
        exercises=("masking_routes", "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Print the scores just before your softmax: are the future ones filled?",
                  "在 softmax 之前打印分数：未来位置的分数被填入了吗？"),
        name=("the mask has no effect on the scores",
              "掩码对分数没有起作用"),
        hint=("the mask must fill the future scores before the softmax; the out-of-place fill returns a new "
              "tensor and leaves the one it was called on as it was",
              "掩码必须在 softmax 之前填入未来位置的分数；非原地的填入会返回一个新张量，不改动调用它的那"
              "个张量"),
        change=("fill the future scores before the softmax, and go on with the tensor the fill returns",
                "在 softmax 之前填入未来位置的分数，并用填入返回的张量继续计算"),
    ),
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
