"""Checks for book exercise 3.1, load_v2_weights_into_v1(sa_v1, sa_v2) (notebook 02).

The transfer probe uses stand-in modules built from plain torch, so a bug in the student's own classes cannot cost
exercise 3.1 its points. The judge needs no reference: the case's own weights say what v1 must hold.
"""

import random

from autograder.checking.check_types import Check, Exercise
from autograder.course.declaration import Declaration, misconception
from autograder.course.n02_trainable_self_attention import NOTEBOOK
from autograder.course.n02_trainable_self_attention.ex2_transfer_weights.judge import (
    judge_transfer,
    judge_transfer_copies,
    judge_transfer_returns,
)
from autograder.course.n02_trainable_self_attention.ex2_transfer_weights.probe import TransferCase, probe_transfer

EXERCISES = (
    Exercise("transfer_weights", NOTEBOOK, ("load_v2_weights_into_v1",),
             {"en": "Book exercise 3.1: v2's weights into v1", "zh": "书中练习 3.1：把 v2 的权重装进 v1"}, minutes=15,
             difficulty=2),
)


def transfer_cases_notes(rng: random.Random) -> list[TransferCase]:
    return [{"d_in": 3, "d_out": 2, "seed": 789, "num_tokens": 6, "dtype": "float32"}]


def transfer_cases_shapes(rng: random.Random) -> list[TransferCase]:
    d, small, large = rng.randint(2, 6), rng.randint(2, 4), rng.randint(5, 8)
    # Non-square first: there weight regrouped by reshape is told from weight copied as it is (on a square pair
    # both are the same numbers).
    cases = [(large, small, "float32"), (d, d, "float32"), (small, large, "float64")]
    return [{"d_in": d_in, "d_out": d_out, "seed": rng.randrange(2**31), "num_tokens": rng.randint(2, 20),
             "dtype": dtype} for d_in, d_out, dtype in cases]


CHECKS = (
    Check(id="transfer_weights.notes", exercise="transfer_weights", points=1.5, hidden=False,
          cases=transfer_cases_notes, probe=probe_transfer, judge=judge_transfer,
          title={"en": "after load_v2_weights_into_v1, v1 (d_in=3, d_out=2) holds v2's weights and computes the same",
                 "zh": "调用 load_v2_weights_into_v1 之后，v1（d_in=3，d_out=2）持有 v2 的权重并给出相同结果"}),
    Check(id="transfer_weights.shapes", exercise="transfer_weights", points=1.5, hidden=True,
          cases=transfer_cases_shapes, probe=probe_transfer, judge=judge_transfer,
          title={"en": "the transfer works for other sizes, square ones included, and in float64",
                 "zh": "权重迁移在其他大小上也正确（包括 d_in == d_out 的情形以及 float64）"}),
    Check(id="transfer_weights.copies", exercise="transfer_weights", points=0.5, hidden=False,
          cases=transfer_cases_notes,
          probe=probe_transfer, judge=judge_transfer_copies,
          title={"en": "after load_v2_weights_into_v1, v1 keeps its own nn.Parameter objects and shares no memory "
                       "with v2: a copy, not an alias",
                 "zh": "调用 load_v2_weights_into_v1 之后，v1 保留自己的 nn.Parameter 对象，并且不与 v2 共享内存："
                       "是复制，而不是别名"}),
    Check(id="transfer_weights.returns", exercise="transfer_weights", points=0.5, hidden=False,
          cases=transfer_cases_notes, probe=probe_transfer, judge=judge_transfer_returns,
          title={"en": "load_v2_weights_into_v1 returns sa_v1, the module it filled",
                 "zh": "load_v2_weights_into_v1 返回 sa_v1，也就是它填好的那个模块"}),
)


MESSAGES = {
    "transfer_weights.shares_memory": {
        "en": "sa_v1.{name} shares its memory with one of sa_v2's weights: training either module would change the "
              "other",
        "zh": "sa_v1.{name} 与 sa_v2 的某个权重共享内存：训练其中任何一个模块都会改变另一个",
    },
    "transfer_weights.parameters_replaced": {
        "en": "sa_v1.{name} is a new nn.Parameter: an optimizer made for sa_v1 before the call still holds the old "
              "one and would no longer train this module",
        "zh": "sa_v1.{name} 是一个新的 nn.Parameter：调用之前为 sa_v1 创建的优化器仍持有旧参数，再也训练不到这个模块",
    },
    "transfer_weights.wrong_weight": {
        "en": "sa_v1.{name} does not hold the values of sa_v2's matching layer, laid out as v1 uses them",
        "zh": "sa_v1.{name} 没有按 v1 的排列方式存放 sa_v2 对应层的数值",
    },
    "transfer_weights.missing_parameter": {
        "en": "sa_v1 has no parameter {name} after the call: did your function write into the parameters sa_v1 "
              "already has, or put something else in their place?",
        "zh": "调用之后 sa_v1 没有参数 {name}：你的函数是把数写进了 sa_v1 已有的参数，还是用别的东西替换了它们？",
    },
    "transfer_weights.unchanged": {
        "en": "sa_v1's weights did not change (your function returned {returned}): which object did your copies go "
              "into?",
        "zh": "sa_v1 的权重没有变化（你的函数返回了 {returned}）：你复制的数写进了哪个对象？",
    },
    "transfer_weights.v2_changed": {
        "en": "sa_v2.{name}.weight changed: read v2's weights, never modify them (an in-place transpose modifies "
              "them)",
        "zh": "sa_v2.{name}.weight 被改动了：只能读取 v2 的权重，不要修改（原地转置会修改它们）",
    },
    "transfer_weights.not_returned": {
        "en": "load_v2_weights_into_v1 returned {returned}, not sa_v1: the function must hand back the module it "
              "filled",
        "zh": "load_v2_weights_into_v1 返回的是 {returned}，而不是 sa_v1：这个函数要把它填好的模块返回出来",
    },
    "transfer_weights.raised_untransposed": {
        "en": "raised {type} ({detail}); when the input and output sizes are equal, the same code runs but copies "
              "each weight untransposed",
        "zh": "抛出了 {type}（{detail}）；当输入和输出大小相等时，同样的代码能运行，但复制的是没有转置的权重",
    },
}

MISCONCEPTIONS = (
    misconception("aliased_not_copied",
      "v2's weights aliased instead of copied",
      "引用了 v2 的权重而不是复制",
      "wrapping a tensor as a new parameter, or transposing it, reuses its memory: the two modules then share one "
      "set of numbers; copying the values into v1's own parameters keeps them apart",
      "把一个张量包装成新参数或对它转置，都会复用它的内存：两个模块于是共用同一组数；把数值复制进 v1 自己的参数，"
      "才能让它们互不影响",
      question=("After your function, change one of v2's weights: does v1 change too?",
                "调用你的函数之后，改动 v2 的一个权重：v1 也跟着变了吗？"),
      change=("copy the values into the parameters v1 already has instead of handing v2's tensors to v1",
              "把数值复制进 v1 已有的参数，而不是把 v2 的张量交给 v1")),
    misconception("parameters_replaced",
      "v1's parameters replaced by new ones",
      "用新参数替换了 v1 的参数",
      "assigning a new parameter swaps the object that optimizers and hooks already hold; overwriting the values "
      "of the existing parameter keeps it",
      "赋值一个新参数会替换掉优化器和钩子已经持有的那个对象；覆盖原有参数的数值才能保留它",
      question=("Is v1's parameter after the call the same object as before it?",
                "调用之后 v1 的参数和调用之前是同一个对象吗？"),
      change=("write the new values into v1's existing parameters, in place and unrecorded by autograd, instead "
              "of assigning new ones",
              "把新数值原地写入 v1 已有的参数，并且不让 autograd 记录，而不是赋值新的参数")),
    misconception("weights_not_transposed",
      "nn.Linear weights copied without transposing",
      "复制 nn.Linear 权重时没有转置",
      "nn.Linear stores its weight outputs first, a v1 parameter inputs first: the same numbers read along the "
      "other axis; a reshape keeps the order of the numbers, so it cannot turn one into the other",
      "nn.Linear 的权重按输出在前存放，v1 的参数按输入在前存放：是同样的数，只是沿另一个维度读取；reshape 保持数的"
      "顺序不变，所以不能把一个变成另一个",
      question=("Which axis of nn.Linear's weight runs over the inputs, and which axis of v1's parameter?",
                "nn.Linear 权重的哪个维度对应输入？v1 参数的哪个维度对应输入？"),
      change=("swap the two axes of each weight as you copy it, rather than reshaping it",
              "复制每个权重时交换它的两个维度，而不是对它 reshape")),
    misconception("reshape_not_transpose",
      "weights regrouped with reshape (or view) instead of transposed", "用 reshape（或 view）重排了权重，而不是转置",
      "reshape and view keep the numbers in their memory order and only cut them into rows of a new length; a "
      "transpose swaps rows and columns. The shapes then agree, the values do not",
      "reshape 和 view 保持数在内存中的顺序，只是把它们切成新长度的行；转置则是交换行和列。于是形状一致，数值却不同",
      question=("take a small matrix that is not square and bring it into the other shape both ways: do the first "
                "rows of the two results agree?",
                "取一个不是方阵的小矩阵，用这两种方式把它变成另一个形状：两个结果的第一行一样吗？"),
      change=("turn each weight of sa_v2 into v1's layout by swapping its rows and columns, not by regrouping its "
              "numbers",
              "把 sa_v2 的每个权重通过交换行和列变成 v1 的布局，而不是重新分组其中的数")),
    misconception("weights_mixed_up",
      "projection weights copied into the wrong places",
      "投影权重复制到了错误的位置",
      "each projection has its own role: the query weights make the queries, the key weights the keys, the value "
      "weights the values",
      "每个投影各有其作用：query 权重生成 query，key 权重生成 key，value 权重生成 value",
      question=("Which of v2's layers did you copy into each of v1's three parameters?",
                "你把 v2 的哪个层分别复制到了 v1 的三个参数中？"),
      change=("copy each of v2's projections into v1's parameter of the same name",
              "把 v2 的每个投影复制到 v1 中同名的参数里")),
)

DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES, misconceptions=MISCONCEPTIONS)
