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
        "en": "sa_v1.{name} is not sa_v2.{name}.weight.T",
        "zh": "sa_v1.{name} 不等于 sa_v2.{name}.weight.T",
    },
    "transfer_weights.missing_parameter": {
        "en": "sa_v1 has no parameter {name} after the call: copy into the existing parameters",
        "zh": "调用之后 sa_v1 没有参数 {name}：请复制到已有的参数里",
    },
    "transfer_weights.unchanged": {
        "en": "sa_v1's weights did not change (your function returned {returned}): copy into sa_v1 itself",
        "zh": "sa_v1 的权重没有变化（你的函数返回了 {returned}）：请直接复制到 sa_v1 里",
    },
    "transfer_weights.v2_changed": {
        "en": "sa_v2.{name}.weight changed: read v2's weights, never modify them (t_() transposes in place)",
        "zh": "sa_v2.{name}.weight 被改动了：只能读取 v2 的权重，不要修改（t_() 会原地转置）",
    },
    "transfer_weights.not_returned": {
        "en": "load_v2_weights_into_v1 returned {returned}, not sa_v1: the function must hand back the module it "
              "filled",
        "zh": "load_v2_weights_into_v1 返回的是 {returned}，而不是 sa_v1：这个函数要把它填好的模块返回出来",
    },
    "transfer_weights.raised_untransposed": {
        "en": "raised {type} ({detail}); with d_in == d_out it runs but copies weight without .T",
        "zh": "抛出了 {type}（{detail}）；当 d_in == d_out 时能运行，但复制的是没有转置的 weight",
    },
}

MISCONCEPTIONS = (
    misconception("aliased_not_copied",
      "v2's weights aliased instead of copied", "引用了 v2 的权重而不是复制",
      "nn.Parameter(t) and a transpose .T both reuse t's memory: the two modules then share one set of numbers; "
      "copying the values into v1's own parameters keeps them apart",
      "nn.Parameter(t) 和转置 .T 都复用 t 的内存：两个模块于是共用同一组数；把数值复制进 v1 自己的参数才能让它们互不"
      "影响"),
    misconception("parameters_replaced",
      "v1's parameters replaced by new ones", "用新参数替换了 v1 的参数",
      "assigning a new nn.Parameter swaps the object that optimizers and hooks already hold; overwriting the values "
      "of the existing parameter (in place, without recording it for autograd) keeps it",
      "赋值一个新的 nn.Parameter 会替换掉优化器和钩子已经持有的那个对象；在原有参数上覆盖数值（原地进行，且不被 autog"
      "rad "
      "记录）才能保留它"),
    misconception("weights_not_transposed",
      "nn.Linear weights copied without transposing", "复制 nn.Linear 权重时没有转置",
      "nn.Linear stores weight as (d_out, d_in), a v1 parameter is (d_in, d_out): compare the two shapes before you "
      "copy",
      "nn.Linear 的 weight 形状是 (d_out, d_in)，而 v1 的参数是 (d_in, d_out)：复制之前先比较这两个形状"),
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
      "projection weights copied into the wrong places", "投影权重复制到了错误的位置",
      "copy W_query into W_query, W_key into W_key and W_value into W_value",
      "W_query 对应 W_query，W_key 对应 W_key，W_value 对应 W_value"),
)

DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES, misconceptions=MISCONCEPTIONS)
