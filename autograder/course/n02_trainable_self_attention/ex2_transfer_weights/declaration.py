"""Checks for book exercise 3.1, load_v2_weights_into_v1(sa_v1, sa_v2) (notebook 02).

The transfer probe uses stand-in modules built from plain torch, so a bug in the student's own classes cannot cost
exercise 3.1 its points. The judge needs no reference: the case's own weights say what v1 must hold.
"""

import random

from autograder.checking.check_types import Check, Exercise
from autograder.course.declaration import Declaration
from autograder.course.n02_trainable_self_attention import NOTEBOOK
from autograder.course.n02_trainable_self_attention.ex2_transfer_weights.judge import (
    judge_transfer,
    judge_transfer_copies,
    judge_transfer_returns,
)
from autograder.course.n02_trainable_self_attention.ex2_transfer_weights.probe import TransferCase, probe_transfer

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("transfer_weights", NOTEBOOK, ("load_v2_weights_into_v1",),
             {"en": "Book exercise 3.1: v2's weights into v1", "zh": "书中练习 3.1：把 v2 的权重装进 v1"}, minutes=15,
             difficulty=2),
)


# No steps are declared (autograder.checking.departure): the function computes nothing, it copies three matrices,
# each transposed, and the judge already compares each of v1's weights with v2's matching layer by name at rung 1.
# Its one step per weight, the transpose, would match v2's matrix itself (the probe builds both modules inside the
# traced call, and a step may match a transpose): only an ordered step could tell them apart, and then the copy the
# learner made is no op the trace keeps (copy_ is a copy of its source), so a right transfer could not be told from
# a wrong one by the trace alone.
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
          title={"en": "the transfer works for other sizes, square ones included, and in float64, where v1's weights "
                       "stay float64",
                 "zh": "权重迁移在其他大小上也正确（包括 d_in == d_out 的情形以及 float64，"
                       "此时 v1 的权重仍是 float64）"}),
    Check(id="transfer_weights.copies", exercise="transfer_weights", points=0.5, hidden=False,
          cases=transfer_cases_notes,
          probe=probe_transfer, judge=judge_transfer_copies,
          title={"en": "after load_v2_weights_into_v1, v1 keeps its own nn.Parameter objects, still trainable, and "
                       "shares no memory with v2: a copy, not an alias",
                 "zh": "调用 load_v2_weights_into_v1 之后，v1 保留自己的 nn.Parameter 对象且仍可训练，并且不与 v2 "
                       "共享内存：是复制，而不是别名"}),
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
    "transfer_weights.grad_left_off": {
        "en": "after your function returns, autograd records nothing any more, anywhere: every computation that "
              "follows (training v1 included) gets no gradient. What did your function switch off, and for how long?",
        "zh": "你的函数返回之后，autograd 在任何地方都不再记录：之后的每一次计算（包括训练 v1）都得不到梯度。"
              "你的函数关掉了什么？关了多久？",
    },
    "transfer_weights.frozen": {
        "en": "sa_v1.{name} no longer requires grad after the call: an optimizer would never change it, so v1 could "
              "not go on learning. What did your copy switch off, and is it still off when your function returns?",
        "zh": "调用之后 sa_v1.{name} 不再需要梯度（requires_grad 为 False）：优化器永远不会改变它，"
              "v1 也就无法继续学习。你的复制关掉了什么？函数返回时它是不是还关着？",
    },
    "transfer_weights.copy_recorded": {
        "en": "after the call sa_v1.{name} is the result of a copy autograd recorded, no longer a leaf of its own: "
              "backward would pass its gradient on to sa_v2's weight and keep none for sa_v1.{name}, so "
              "an optimizer could not train v1. Was autograd recording while your function copied?",
        "zh": "调用之后 sa_v1.{name} 是一次被 autograd 记录下来的复制的结果，不再是独立的叶子张量："
              "反向传播会把它的梯度传给 sa_v2 的权重，而 sa_v1.{name} 自己得不到梯度，优化器无法训练 v1。"
              "你的函数复制时 autograd 是否在记录？",
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
    "transfer_weights.dtype_changed": {
        "en": "sa_v1.{name} holds sa_v2's values as {got}, where sa_v2's weights, and sa_v1's before the call, are "
              "{expected}: the transfer changed the weights' dtype",
        "zh": "sa_v1.{name} 以 {got} 存放 sa_v2 的数值，而 sa_v2 的权重（以及调用之前 sa_v1 的权重）是 {expected}："
              "迁移改变了权重的 dtype",
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
    "transfer_weights.v2_modified": {
        "en": "sa_v2.{name}.weight changed: read v2's weights, never modify them",
        "zh": "sa_v2.{name}.weight 被改动了：只能读取 v2 的权重，不要修改",
    },
    "transfer_weights.unchanged_object": {
        "en": "sa_v1's weights did not change (your function returned a {returned} object, not sa_v1): which object "
              "did your copies go into?",
        "zh": "sa_v1 的权重没有变化（你的函数返回的是一个 {returned} 对象，而不是 sa_v1）：你复制的数写进了哪个对象？",
    },
    "transfer_weights.not_returned_object": {
        "en": "load_v2_weights_into_v1 returned a {returned} object, not sa_v1: the function must hand back the module "
              "it filled",
        "zh": "load_v2_weights_into_v1 返回的是一个 {returned} 对象，而不是 sa_v1：这个函数要把它填好的模块返回出来",
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


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
