"""Mistakes of one family: the padding mask: ignored, the query axis, inverted, fill values."""

from autograder.checking.check_types import Evidence, Misconception
from autograder.course.mistakes.entry import mistake

__all__: list[str] = []

MISTAKES: tuple[Misconception, ...] = (
    mistake(
        "padding_neg_inf",
        exercises=("padding_mask",),
        evidence=(Evidence.FACT,),
        question=("Once the padding is hidden, what is left for a query whose every visible key is padding?",
                  "隐藏 padding 之后，对于能看到的 key 全是 padding 的 query，还剩下什么？"),
        name=("queries that see only padding get NaN",
              "只能看到 padding 的 query 得到了 NaN"),
        hint=("a query whose every visible key is padding has no key left once the padding is hidden completely: "
              "a softmax over a row of minus infinity, or a row renormalised after its every weight was zeroed, "
              "divides 0 by 0; hidden with a finite score that every real score is larger than, such a row stays "
              "finite",
              "能看到的 key 全是 padding 的 query，在 padding 被完全隐藏之后就没有 key 了：对一整行负无穷做 "
              "softmax，或者把权重全被置零的一行重新归一化，都是 0 除以 0；如果用一个比任何真实分数都小的有限分数"
              "来隐藏，这一行就仍然是有限的"),
        change=("hide padded keys with a very negative but finite score before the softmax, so that a query that "
                "sees only padding still gets finite weights",
                "在 softmax 之前用一个绝对值很大的有限负分数来隐藏 padding 位置的 key，让只能看到 padding 的 "
                "query 也得到有限的权重"),
    ),
    mistake(
        "padding_fill_too_high",
        exercises=("padding_mask",),
        evidence=(Evidence.VARIANT,),
        question=("How low can a real score go, and is your fill value lower still?",
                  "真实分数最低能到多少？你的填入值比它还低吗？"),
        name=("padded keys filled with a value real scores can be below",
              "padding 位置填入的值可能高于真实分数"),
        hint=("a padded key must lose against every real key in the softmax: its score has to be lower than any "
              "real score can be, yet finite",
              "在 softmax 中，padding 位置的 key 必须比任何真实 key 都小：它的分数要低"
              "于任何真实分数可能取到的值，同时又是有限值"),
        change=("choose a fill value far below any score real tokens can reach, yet finite",
                "选择一个远低于真实 token 可能取到的任何分数、但仍有限的填入值"),
    ),
    mistake(
        "padding_ignored",
        exercises=("padding_mask",),
        evidence=(Evidence.VARIANT,),
        # Every case of the padding checks pads a key some query sees: a mask left out fails them all, so a case that
        # passes before the first failing one (the one telling it apart, issue 58) refutes the name.
        fails_every_case=True,
        question=("Which axes of the scores does attention_mask line up with, and over which must it be "
                  "broadcast?",
                  "attention_mask 与分数的哪些维度对齐？它必须在哪些维度上广播？"),
        name=("attention_mask not applied",
              "没有应用 attention_mask"),
        hint=("attention_mask says, for each sample, which keys are real; hiding a padded key means filling its "
              "score before the softmax, for every head and every query of that sample",
              "attention_mask 按样本标出哪些 key 是真实的；隐藏 padding 位置的 "
              "key，就是在 softmax 之前为这个样本的每个头、每个 query 填入它的分数"),
        change=("before the softmax, fill the scores of the padded keys, with the mask viewed so that it lines up "
                "with the keys' axis and broadcasts over the heads and the queries",
                "在 softmax 之前填入 padding 位置 key 的分数；先调整掩码的视图，使它与 "
                "key 的维度对齐，并在头和 query 的维度上广播"),
    ),
    mistake(
        "padding_query_axis",
        exercises=("padding_mask",),
        evidence=(Evidence.VARIANT,),
        question=("which axis of the scores stands for the keys, and along which one does your mask change?",
                  "分数的哪一个维度代表 key？你的掩码又是沿哪一个维度变化的？"),
        name=("the padding mask hides query rows instead of key columns",
              "padding 掩码遮住的是 query 的行，而不是 key 的列"),
        hint=("the scores are laid out (batch, head, query, key): a padding token must be hidden as a key, from "
              "every query, so the mask must vary along the keys' axis and broadcast along the queries'",
              "分数的排列是（batch，头，query，key）：padding token 要作为 key 对"
              "所有 query 隐藏，所以掩码要沿 key 所在的维度变化，沿 query 所在的维度广播"),
        change=("reshape the padding mask so that its token axis lines up with the keys' axis of the scores, not "
                "the queries'",
                "调整 padding 掩码的形状，让它的 token 所在的维度对齐分数中 key 所在的维度，"
                "而不是 query 所在的维度"),
    ),
    mistake(
        "padding_inverted",
        exercises=("padding_mask",),
        evidence=(Evidence.VARIANT,),
        question=("In your forward, which keys end up hidden: those attention_mask marks with 1, or those it "
                  "marks with 0?",
                  "在你的 forward 中，最终被隐藏的是 attention_mask 标为 1 的 key"
                  "，还是标为 0 的？"),
        name=("attention_mask read the wrong way round",
              "attention_mask 的含义用反了"),
        hint=("attention_mask marks the real tokens: the keys to hide are those it does not mark",
              "attention_mask 标出的是真实 token：要隐藏的是它没有标出的 key"),
        change=("hide the keys where attention_mask is 0 and keep those where it is 1",
                "隐藏 attention_mask 为 0 的 key，保留为 1 的 key"),
    ),
)
