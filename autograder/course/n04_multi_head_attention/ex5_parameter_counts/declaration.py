"""Checks for book exercise 3.3, count_parameters(module) (notebook 04): the parameters an optimizer updates, on every
kind of module it sees: parameters of the module itself and of its children, nested, shared, frozen, in torch's
containers, beside buffers. Each case is plain data for a module (probe.ModuleNode); the reference counts it, and so
does each wrong counter (wrong_counters), whose count names a mistake only where it is the student's.
"""

import json
import random
from collections.abc import Callable, Collection
from typing import Any

from attnkit import solutions
from autograder.checking.check_types import Check, Exercise
from autograder.checking.count_difference import COUNT_PARTS
from autograder.checking.expectations import Expectations, case_alone
from autograder.checking.probing import PROJECTIONS
from autograder.course.declaration import Declaration
from autograder.course.n04_multi_head_attention import NOTEBOOK
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.judge import judge_count
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.probe import (
    CountCase,
    CountRecord,
    ModuleNode,
    counted_module,
    counted_modules,
    probe_count,
)
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.wrong_counters import wrong_counts

__all__ = ["DECLARATION"]

EXERCISES = (
    Exercise("parameter_counts", NOTEBOOK, ("count_parameters",),
             {"en": "Book exercise 3.3: counting parameters", "zh": "书中练习 3.3：统计参数量"}, minutes=10,
             difficulty=1),
)


# No steps are declared (autograder.checking.departure): a count is one integer, not a tensor the notes compute
# step by step; what tells a wrong count from the right one is which parameters it counted (buffers, frozen ones,
# shared ones twice), and the wrong counters (wrong_counters.py) name that from the number itself. Rung 2 reads the
# module's parts instead (count_parts, autograder.checking.count_difference).

# ---------------------------------------------------------------------------------------------
# The modules counted: plain data (probe.ModuleNode). The probe hands the student's function each one built on the CPU
# as a learner builds it; the reference and the wrong counters count the grader's own build (probe.counted_modules).


def linear(d_in: int, d_out: int, bias: bool = True, frozen: bool = False) -> ModuleNode:
    return {"kind": "linear", "d_in": d_in, "d_out": d_out, "bias": bias, "frozen": frozen}


def mha_block(d_in: int, d_out: int, context_length: int, qkv_bias: bool, frozen: Collection[str] = (),
              out_proj: bool = True) -> ModuleNode:
    """A MultiHeadAttention-shaped block (a CausalAttention-shaped one without out_proj): its mask a buffer."""
    layers = [*PROJECTIONS, "out_proj"] if out_proj else list(PROJECTIONS)
    children = [[name, linear(d_in if name != "out_proj" else d_out, d_out, qkv_bias or name == "out_proj",
                              name in frozen)] for name in layers]
    return {"kind": "module", "class": "MultiHeadAttention" if out_proj else "CausalAttention",
            "buffers": [["mask", [context_length, context_length], True]],
            "children": [*children, ["dropout", {"kind": "dropout"}]]}


def single_layer(d: int, k: int) -> ModuleNode:
    return linear(d, k)


def own_parameter(d: int, k: int) -> ModuleNode:
    return {"kind": "module", "class": "ScaledNorm", "parameters": [["scale", [k], False]],
            "children": [["norm", {"kind": "layer_norm", "size": d}]]}


def nested(d: int, k: int) -> ModuleNode:
    def block() -> ModuleNode:
        feed_forward = {"kind": "module_list", "items": [linear(d, k), {"kind": "dropout"}, linear(k, d)]}
        return {"kind": "module", "class": "Block",
                "children": [["norm", {"kind": "layer_norm", "size": d}], ["ff", feed_forward]]}
    blocks = {"kind": "module_dict", "items": [["first", block()], ["second", block()]]}
    return {"kind": "module", "children": [["embed", {"kind": "embedding", "num": k + 3, "dim": d}],
                                           ["blocks", blocks]]}


def shared(d: int, k: int) -> ModuleNode:
    # GPT-2 ties its output layer's weight to the token embedding; here one layer is also registered twice.
    model = {"kind": "module", "class": "TiedModel", "children": [
        ["embed", {"kind": "embedding", "num": k, "dim": d}],
        ["encoder", linear(d, d)],
        ["decoder", {"kind": "module", "class": "Decoder", "parameters": [["weight", "=model.embed.weight", False]]}],
        ["encoder_again", {"kind": "same", "path": "model.encoder"}],
    ], "buffers": [["positions", [k + 1], True]]}
    return {"kind": "module", "children": [["model", model]]}


def frozen(d: int, k: int) -> ModuleNode:
    return {"kind": "module", "class": "Attention", "parameters": [["scale", [k], True]],
            "buffers": [["mask", [k, k], True]],
            "children": [["W_query", linear(d, k, frozen=True)], ["W_key", linear(d, k)],
                         ["W_value", linear(d, k, bias=False)],
                         ["norm", {"kind": "layer_norm", "size": k, "frozen": True}]]}


def buffers(d: int, k: int) -> ModuleNode:
    inner = {"kind": "module", "class": "Normalizer", "buffers": [["running_mean", [k], True]],
             "children": [["norm", {"kind": "layer_norm", "size": k}]]}
    return {"kind": "module", "buffers": [["causal", [k + 2, k + 2], True], ["positions", [d + 5], False]],
            "children": [["proj", linear(d, k)], ["inner", inner]]}


def no_parameters(d: int, k: int) -> ModuleNode:
    return {"kind": "module", "class": "Masking", "buffers": [["mask", [k, k], False], ["counter", [d], True]],
            "children": [["dropout", {"kind": "dropout"}]]}


def parameter_list(d: int, k: int) -> ModuleNode:
    return {"kind": "module", "children": [["weights", {"kind": "parameter_list", "shapes": [[d, k], [k], [k, 2]]}],
                                           ["head", linear(k, d)]]}


# In this order, the first module a wrong counter miscounts tells its mistake from every other's (the first failing
# case decides a check, and two mistakes giving one count name neither).
KINDS = {"single_layer": single_layer, "own_parameter": own_parameter, "nested": nested, "frozen": frozen,
         "buffers": buffers, "no_parameters": no_parameters, "parameter_list": parameter_list, "shared": shared}


def count_case(about: str, module: ModuleNode) -> CountCase:
    """A case; its witnesses are every kind at the public sizes."""
    return {"about": about, "module": module, "witnesses": [kind(3, 4) for kind in KINDS.values()]}


def count_cases_notes(rng: random.Random) -> list[CountCase]:
    return [
        count_case("mha", mha_block(768, 768, 1024, False)),  # exercise 3.3: GPT-2's 12 heads, 768 features
        count_case("mha", mha_block(3, 2, 6, False)),  # the notes' MultiHeadAttention(3, 2, 6, 0.0, 2)
    ]


def count_cases_kinds(rng: random.Random) -> list[CountCase]:
    """Every kind of module, small fixed sizes: what the text promises, shown by a public check."""
    return [count_case(about, kind(3, 4)) for about, kind in KINDS.items()]


def count_cases_modules(rng: random.Random) -> list[CountCase]:
    """The same kinds at other sizes, and attention modules with biases, heads in a ModuleList and frozen layers."""
    d_in, d_out = rng.randint(8, 96), 4 * rng.randint(2, 24)
    heads = [mha_block(d_in, d_out, rng.randint(16, 128), False, out_proj=False) for _ in range(rng.randint(2, 4))]
    wrapper = {"kind": "module", "class": "MultiHeadAttentionWrapper",
               "children": [["heads", {"kind": "module_list", "items": heads}]]}
    return [
        count_case("mha", mha_block(d_in, d_out, rng.randint(64, 512), True)),
        count_case("mha_wrapper", wrapper),  # described as what it is: heads in a ModuleList, no out_proj
        count_case("mha_frozen", mha_block(d_in, d_out, rng.randint(16, 128), rng.random() < 0.5,
                                           frozen=("W_query", "W_key"))),
        *(count_case(about, kind(rng.randint(5, 40), rng.randint(5, 40))) for about, kind in KINDS.items()),
    ]


# Other constructor arguments a count may have been made for (autograder.checking.count_difference): each a change of
# every nn.Linear of the module (`count.rebuilt.<change>`), or of the query, key and value projections alone.
# The projections' own change first: where it builds the same module as a change of every layer, it is the one said.
REBUILDS: dict[str, Callable[[str, ModuleNode], ModuleNode]] = {
    "projections_bias_on": lambda name, node: {**node, "bias": True} if name in PROJECTIONS else node,
    "projections_bias_off": lambda name, node: {**node, "bias": False} if name in PROJECTIONS else node,
    "bias_on": lambda _name, node: {**node, "bias": True},
    "bias_off": lambda _name, node: {**node, "bias": False},
    "swapped": lambda _name, node: {**node, "d_in": node["d_out"], "d_out": node["d_in"]},
}


def _rebuilt(node: ModuleNode, change: Callable[[str, ModuleNode], ModuleNode], name: str = "") -> ModuleNode:
    """The node with `change` applied to each nn.Linear in it (by the name it is registered under)."""
    if node["kind"] == "linear":
        return change(name, node)
    rebuilt = dict(node)
    if "children" in node:
        rebuilt["children"] = [[child, _rebuilt(item, change, child)] for child, item in node["children"]]
    if node["kind"] == "module_list":
        rebuilt["items"] = [_rebuilt(item, change, str(index)) for index, item in enumerate(node["items"])]
    if node["kind"] == "module_dict":
        rebuilt["items"] = [[key, _rebuilt(item, change, key)] for key, item in node["items"]]
    return rebuilt


def count_parts(node: ModuleNode) -> dict[str, list[list[Any]]]:
    """COUNT_PARTS of the module the node describes: its trainable parameters by name and size; what a right count
    leaves out (buffers, frozen parameters, a parameter's second name); the trainable counts of its other builds
    (REBUILDS) that differ from its own; the trainable parameters' shapes, and their dtype and bytes per entry where
    they share one dtype."""
    module = counted_module(node)
    once = dict(module.named_parameters())
    right = solutions.count_parameters(module)
    uncounted = [[name, buffer.numel(), "buffer"] for name, buffer in module.named_buffers()]
    uncounted += [[name, value.numel(), "frozen"] for name, value in once.items() if not value.requires_grad]
    uncounted += [[name, value.numel(), "repeated"] for name, value in module.named_parameters(remove_duplicate=False)
                  if name not in once]
    built = {json.dumps(node, sort_keys=True)}
    rebuilt = []
    for change, edit in REBUILDS.items():
        other = _rebuilt(node, edit)
        if json.dumps(other, sort_keys=True) in built:
            continue  # the module itself, or a build an earlier change made: one build, said once
        built.add(json.dumps(other, sort_keys=True))
        count = solutions.count_parameters(counted_module(other))
        if count != right:
            rebuilt.append([change, count])
    trainable = [(name, value) for name, value in once.items() if value.requires_grad]
    dtypes = {str(value.dtype).removeprefix("torch.") for _name, value in trainable}
    return {"trainable": [[name, value.numel()] for name, value in trainable],
            "uncounted": uncounted, "rebuilt": rebuilt,
            "shapes": [[name, list(value.shape)] for name, value in trainable],
            # The bytes one entry takes, where every trainable parameter has one dtype: a count of bytes is that
            # many times the count of entries.
            "entry_bytes": [[dtypes.pop(), trainable[0][1].element_size()]] if len(dtypes) == 1 else []}


@case_alone
def expect_count(record: CountRecord, case: CountCase) -> Expectations:
    return Expectations.computed(
        count=lambda: solutions.count_parameters(counted_module(case["module"])),
        wrong_counts=lambda: wrong_counts(counted_modules([case["module"], *case["witnesses"]])),
        **{COUNT_PARTS: lambda: count_parts(case["module"])},
    )


CHECKS = (
    Check(id="parameter_counts.notes", exercise="parameter_counts", points=1.5, hidden=False,
          cases=count_cases_notes, probe=probe_count, judge=judge_count, expect=expect_count,
          title={"en": "count_parameters counts trainable parameters, never buffers, on MultiHeadAttention(768, 768, "
                       "1024, 0.0, 12) and the notes' small one",
                 "zh": "count_parameters 只统计可训练参数、不计 buffer：作用于 MultiHeadAttention(768, 768, 1024, 0.0, "
                       "12) 和笔记中的小模块"}),
    Check(id="parameter_counts.kinds", exercise="parameter_counts", points=1.5, hidden=False,
          cases=count_cases_kinds, probe=probe_count, judge=judge_count, expect=expect_count,
          title={"en": "count_parameters on every kind of module: a single layer, a parameter registered on the "
                       "module itself, nested modules, a shared parameter counted once, frozen parameters left out, "
                       "buffers left out, a module without parameters, an nn.ParameterList",
                 "zh": "count_parameters 适用于各种模块：单个层、直接注册在模块自身上的参数、嵌套的模块、共享的参数只计"
                       "一次、不计冻结的参数、不计 buffer、没有参数的模块、nn.ParameterList"}),
    Check(id="parameter_counts.modules", exercise="parameter_counts", points=1, hidden=True,
          cases=count_cases_modules, probe=probe_count, judge=judge_count, expect=expect_count,
          title={"en": "count_parameters on the same kinds of module at other sizes, and on attention modules "
                       "(biases, heads in a ModuleList, frozen layers)",
                 "zh": "count_parameters 作用于其他尺寸的同类模块，以及注意力模块（偏置、ModuleList 中的多个头、"
                       "冻结的层）"}),
)


# What each kind of module is, for the message of a wrong count: the student can build the same module and count it.
MODULES = {
    "mha": ("a MultiHeadAttention-shaped module (its projections, out_proj, dropout and the mask buffer)",
            "形如 MultiHeadAttention 的模块（各个投影、out_proj、dropout 和作为 buffer 的掩码）"),
    # The attention modules that are not a plain MultiHeadAttention, each said as the module it is (issue 58).
    "mha_wrapper": ("a MultiHeadAttentionWrapper-shaped module (its heads in an nn.ModuleList, each with its own "
                    "projections, dropout and mask buffer; no out_proj)",
                    "形如 MultiHeadAttentionWrapper 的模块（多个头放在一个 nn.ModuleList 中，每个头有自己的投影、"
                    "dropout 和作为 buffer 的掩码；没有 out_proj）"),
    "mha_frozen": ("a MultiHeadAttention-shaped module whose W_query and W_key are frozen (they do not require "
                   "grad), beside out_proj, dropout and the mask buffer",
                   "形如 MultiHeadAttention 的模块，其中 W_query 和 W_key 被冻结（不需要梯度），另有 out_proj、dropout "
                   "和作为 buffer 的掩码"),
    "single_layer": ("a single nn.Linear: a module whose parameters are its own, with no children",
                     "单独一个 nn.Linear（参数都属于它自己，没有子模块）"),
    "own_parameter": ("a module with an nn.Parameter attribute of its own (scale) beside a child nn.LayerNorm",
                      "自身带有一个 nn.Parameter 属性（scale）、另有一个 nn.LayerNorm 子模块的模块"),
    "nested": ("nested modules: an nn.Embedding and an nn.ModuleDict of blocks, each holding an nn.LayerNorm and "
               "an nn.ModuleList of two nn.Linear layers and a dropout",
               "嵌套的模块（一个 nn.Embedding，和一个由若干块组成的 nn.ModuleDict，每块含一个 nn.LayerNorm，以及由两个 "
               "nn.Linear 和一个 dropout 组成的 nn.ModuleList）"),
    "shared": ("a module that shares parameters: a decoder whose weight is the embedding's own tensor (tied "
               "weights, as GPT-2's output layer), one nn.Linear registered under two names, and a buffer",
               "共享参数的模块（decoder 的权重就是嵌入层的那个张量，即权重绑定，就像 GPT-2 的输出层；一个 nn.Linear "
               "以两个名字注册；还有一个 buffer）"),
    "frozen": ("a module with frozen parameters, which do not require grad (W_query, the LayerNorm and its own "
               "scale), beside a mask buffer",
               "带有冻结参数（不需要梯度）的模块（W_query、LayerNorm 和它自身的 scale 被冻结），另有一个作为 buffer "
               "的掩码"),
    "buffers": ("a module with buffers named otherwise than the causal mask, persistent and not, on itself and in "
                "a child",
                "带有 buffer 的模块（名字与因果掩码的不同，有持久的也有非持久的，在它自身上也在子模块中）"),
    "no_parameters": ("a module without parameters: only buffers and a dropout",
                      "没有参数的模块（只有 buffer 和一个 dropout）"),
    "parameter_list": ("a module holding an nn.ParameterList beside an nn.Linear",
                       "含有一个 nn.ParameterList 和一个 nn.Linear 的模块"),
}


def wrong_count_messages() -> dict[str, dict[str, str]]:
    """parameter_counts.wrong.<kind>, with the student's count, and its .hidden twin, without it."""
    messages = {}
    for about, (en, zh) in MODULES.items():
        messages[f"parameter_counts.wrong.{about}"] = {
            "en": f"count_parameters returned {{got:,}} on {en}, which is not its number of trainable parameters: "
                  "build the same module and compare with your own prediction",
            "zh": f"对于{zh}，count_parameters 返回了 {{got:,}}，这不是它的可训练参数个数：请自己搭出同样的模块，"
                  "与你的预测对照",
        }
        messages[f"parameter_counts.wrong.{about}.hidden"] = {
            "en": f"the count is wrong on {en}, at other sizes",
            "zh": f"换了尺寸之后，对{zh}的计数不对",
        }
    return messages


MESSAGES = {
    # Shown by check(...) once every public check of the exercise passes: the why, after the student's own answer.
    "parameter_counts.explanation": {
        "en": "Why it works: module.parameters() yields every registered parameter once (a layer shared by two "
              "modules counts once), numel() is a tensor's number of entries, and requires_grad=False marks a frozen "
              "one; buffers such as the mask are state, never parameters. GPT-2's MultiHeadAttention(768, 768, 1024, "
              "0.0, 12): three 768 × 768 projections without bias (1,769,472) plus out_proj with its bias (768 × 768 "
              "+ 768 = 590,592) make 2,360,064; the 1024 × 1024 mask adds nothing.",
        "zh": "为什么这样是对的：module.parameters() 会把每个注册的参数恰好给出一次（两个模块共享的层只算一次），"
              "numel() 是张量的元素个数，requires_grad=False 表示参数被冻结；掩码这样的 buffer 是状态，从来不是参数。"
              "GPT-2 规模的 MultiHeadAttention(768, 768, 1024, 0.0, 12)：三个不带偏置的 768 × 768 投影（1,769,472）"
              "加上带偏置的 out_proj（768 × 768 + 768 = 590,592），共 2,360,064；1024 × 1024 的掩码不计入。"},
    **wrong_count_messages(),
    "parameter_counts.not_a_count": {
        "en": "returned {got}, expected a whole number",
        "zh": "返回了 {got}，应当返回一个整数",
    },
}


DECLARATION = Declaration(exercises=EXERCISES, checks=CHECKS, messages=MESSAGES)
