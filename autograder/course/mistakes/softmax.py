"""Mistakes of one family: softmax over the wrong axis, overflow, normalising without exp, keepdim, global max."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "naive_softmax_overflow",
        exercises=("softmax_stable",),
        evidence=(Evidence.VARIANT,),
        question=("What is the exponential of a score of 1000 in floating point, and what do you get when you "
                  "divide it by itself?",
                  "在浮点数中，分数 1000 的指数是多少？再用它除以它自己，会得到什么？"),
        name=("softmax overflows on large inputs",
              "softmax 在大输入上溢出"),
        hint=("the exponential of a large score overflows to infinity, and infinity over infinity is not a "
              "number; shifting every score of a row by the same amount leaves the softmax unchanged",
              "大分数的指数会上溢成无穷大，无穷大除以无穷大不是一个数；同一行的每个分数都减去同一个数，"
              "softmax 的结果不变"),
        change=("shift the scores by their largest value before taking the exponential, so that the largest "
                "exponential is 1",
                "在取指数之前，先把分数减去其中的最大值，使最大的指数恰好为 1"),
    ),
    mistake(
        "normalised_without_exp",
        exercises=("softmax_naive", "softmax_stable"),
        evidence=(Evidence.VARIANT,),
        question=("What weight does your function give a negative score, and can a weight be negative?",
                  "你的函数给负分数的权重是多少？权重可以是负数吗？"),
        name=("divided by the sum instead of taking the softmax",
              "直接除以总和而不是做 softmax"),
        hint=("softmax exponentiates each score before normalising; dividing the raw scores by their sum breaks "
              "on negative scores",
              "softmax 先对每个分数取指数再归一化；直接用原始分数除以它们的和，遇到负分数就会出错"),
        change=("take the exponential of every score first, then divide each by the sum of those exponentials",
                "先对每个分数取指数，再用每个指数除以这些指数的和"),
    ),
    mistake(
        "softmax_dim_ignored",
        exercises=("softmax_naive", "softmax_stable"),
        evidence=(Evidence.VARIANT,),
        question=("Call your function on a matrix once along each of its two dimensions: does the result change?",
                  "沿矩阵的两个维度分别调用一次你的函数：结果会变吗？"),
        name=("the dim argument is ignored",
              "忽略了 dim 参数"),
        hint=("reduce over the dimension you were given: the maximum and the sum both run along it and keep it, "
              "never along a fixed one",
              "在给定的维度上做归约：最大值和求和都沿这个维度进行并保留它，而不是沿一个固定的维度"),
        change=("take the maximum and the sum along the dimension passed in, not along one you chose",
                "沿传入的那个维度求最大值和总和，而不是沿你自己选定的维度"),
    ),
    mistake(
        "softmax_sum_wrong_axis",
        exercises=("softmax_naive", "softmax_stable"),
        evidence=(Evidence.VARIANT,),
        question=("along which axis should your outputs add up to 1, and along which axis does your sum run?",
                  "你的输出应当沿哪个维度加起来等于 1？你的求和又是沿哪个维度进行的？"),
        name=("the sum runs along another axis than the one to normalise",
              "求和沿着的不是要归一化的那个维度"),
        hint=("softmax makes the entries along one axis add up to 1: the sum that divides them must run along "
              "that same axis, the one the exercise names",
              "softmax 让沿某一个维度的各项之和为 1：作为除数的求和必须沿同一个维度进行，也就是练习指定"
              "的那个维度"),
        change=("make the sum run along the axis the exercise's docstring names, and check that the outputs add "
                "up to 1 along it",
                "让求和沿练习文档字符串中指定的维度进行，并检查输出沿这个维度加起来是否等于 1"),
    ),
    mistake(
        "default_dim_changed",
        exercises=("softmax_stable",),
        evidence=(Evidence.VARIANT,),
        question=("Which dimension does your function use when it is called without one, and which does the given "
                  "signature promise?",
                  "不传维度调用时，你的函数用的是哪个维度？给定的签名约定的又是哪个？"),
        name=("the default of dim was changed",
              "改变了 dim 的默认值"),
        hint=("code that calls the function without naming a dimension counts on the default of the given "
              "signature, the last axis",
              "不指定维度调用这个函数的代码，依赖的是给定签名中的默认值，也就是最后一个维度"),
        change=("restore the default of the given signature and leave the signature as it was",
                "恢复给定签名中的默认值，保持签名原样"),
    ),
    mistake(
        "max_and_sum_axes_differ",
        exercises=("softmax_naive", "softmax_stable"),
        evidence=(Evidence.VARIANT,),
        question=("Along which axis do you take the maximum, and along which the sum?",
                  "你沿哪个维度取最大值，又沿哪个维度求和？"),
        name=("the maximum and the sum taken along different axes",
              "最大值和求和沿着不同的维度进行"),
        # Either half may be the one that departs (the maximum along another axis, or the sum): the advice names
        # the axis both must run along, dim, never the other half's axis (which may be the wrong one).
        hint=("the shift cancels only when every entry of a row is shifted by the same amount: the maximum and the "
              "sum must both run along the axis the function is asked to normalise, dim",
              "只有当同一行中的每一项都减去同一个数时，这个平移才会抵消：最大值和求和都必须沿函数要归一化的那个"
              "维度（dim）进行"),
        change=("take the maximum and the sum both along dim, the dimension the function is asked to normalise",
                "最大值和求和都沿 dim（函数要归一化的那个维度）进行"),
    ),
    mistake(
        "missing_keepdim",
        exercises=("softmax_stable",),
        evidence=(Evidence.VARIANT, Evidence.ERROR),  # its spellings raise on sizes that do not broadcast
        question=("Print the shapes of your maximum and your sum next to the input's: which row does each of "
                  "their entries line up with?",
                  "把最大值和总和的形状与输入的形状放在一起打印：它们的每一项各自与哪一行对齐？"),
        name=("max or sum taken without keeping the reduced axis",
              "求最大值或总和时没有保留被归约的维度"),
        hint=("a reduction drops the axis it runs over unless asked to keep it with size 1; without it, "
              "broadcasting lines each row up with another row's maximum or sum",
              "归约默认会去掉它所跨的维度，除非要求把它保留为长度 1；否则广播会让每一行对上别的行的最大值或总和"),
        change=("ask each reduction to keep the reduced axis, so that each row is shifted by its own maximum and "
                "divided by its own sum",
                "让每一次归约都保留被归约的维度，这样每一行减去、除以的都是它自己的最大值和总和"),
    ),
    mistake(
        "softmax_wrong_dim",
        exercises=("masking_routes", "self_attention_v1", "self_attention_v2",
                   "causal_attention", "multi_head_attention", "padding_mask"),
        evidence=(Evidence.VARIANT,),
        question=("Add up the weights of one query: do they sum to 1? Along which dimension do the keys of one "
                  "query lie?",
                  "把一个 query 的权重加起来：和是 1 吗？一个 query 的各个 key 排在哪个维度"
                  "上？"),
        name=("softmax over the wrong dimension",
              "softmax 的维度不对"),
        hint=("each query's weights over the keys must sum to 1: the softmax runs along one query's row, across "
              "the keys",
              "每个 query 对所有 key 的权重之和应为 1：softmax 沿一个 query 的那一行"
              "、跨所有 key 进行"),
        # The wrong dimension may be the queries', the heads' or the batch's: the change names only the right one.
        change=("take the softmax along the dimension that runs over the keys of one query",
                "沿一个 query 的所有 key 所在的维度做 softmax"),
    ),
    mistake(
        "scores_as_weights",
        exercises=("context_vectors",),
        evidence=(Evidence.VARIANT,),
        question=("Are your weights all positive, and does each query's row sum to 1?",
                  "你的权重都是正数吗？每个 query 那一行的和是 1 吗？"),
        name=("the scores used as weights, without the softmax",
              "直接把分数当成权重，没有做 softmax"),
        hint=("a context vector is a weighted average of the inputs: its weights are positive and sum to 1, which "
              "the raw scores are not until the softmax makes them so",
              "上下文向量是输入的加权平均：权重必须为正且和为 1，原始分数要经过 softmax 才满足这一点"),
        change=("turn the scores into weights with a softmax over each query's row before the weighted sum",
                "在加权求和之前，先对每个 query 那一行的分数做 softmax，把它们变成权重"),
    ),
    mistake(
        "context_normalised_without_exp",
        exercises=("context_vectors",),
        evidence=(Evidence.VARIANT,),
        question=("Are your weights for one query in the same proportions as its scores, and is that what a "
                  "softmax gives?",
                  "一个 query 的权重和它的分数是否成同样的比例？softmax 给出的是这样的结果吗？"),
        name=("the scores divided by their sum instead of a softmax",
              "分数直接除以它们的和，而不是做 softmax"),
        hint=("softmax exponentiates each score before normalising, so a larger score gets a disproportionately "
              "larger weight; dividing the raw scores by their sum only keeps their proportions",
              "softmax 在归一化之前先对每个分数取指数，所以较大的分数会得到不成比例地更大的权重；直接用原"
              "始分数除以它们的和只会保持原来的比例"),
        change=("turn each query's scores into weights with a softmax instead of dividing them by their sum",
                "用 softmax 把每个 query 的分数变成权重，而不是把它们除以它们的和"),
    ),
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
    mistake(
        "context_weights_other_axis",
        exercises=("context_vectors",),
        evidence=(Evidence.VARIANT,),
        question=("Take the weights that make one context vector: do they sum to 1? Which row or column of your "
                  "weights did that context vector use?",
                  "取出构成一个上下文向量的那些权重：它们的和是 1 吗？这个上下文向量用的是你的权重的哪一行还是"
                  "哪一列？"),
        name=("each context vector mixes the inputs with weights normalised along the other dimension",
              "每个上下文向量混合输入时，用的权重是沿另一个维度归一化的"),
        hint=("context vector i is a weighted sum of the inputs with the weights of query i, and those weights sum "
              "to 1 across the keys; a softmax along the queries, or the weight matrix used the other way round, "
              "gives each context vector a column of weights instead of its own row (here both give the same "
              "numbers, because the scores are symmetric)",
              "第 i 个上下文向量是用第 i 个 query 的权重对输入加权求和，而这些权重沿各个 key 加起来等于 1；"
              "沿 query 做 softmax，或者把权重矩阵反过来用，都会让每个上下文向量拿到的是一列权重，而不是它自己"
              "的那一行（这里两者给出的数值相同，因为分数是对称的）"),
        change=("normalise each query's scores across the keys, and let context vector i use row i of the weights",
                "沿各个 key 对每个 query 的分数做归一化，并让第 i 个上下文向量使用权重的第 i 行"),
    ),
)
