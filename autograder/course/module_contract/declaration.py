"""The module contract's checks for every spec of the course (autograder.course.module_contract.probe.SPECS), hidden,
and their messages. The contract declares no exercise of its own: its checks come after the notebooks'.
"""

import functools
import random
from collections.abc import Callable, Mapping
from typing import Any, cast

import torch
from torch import Tensor

from autograder.checking.check_types import Check
from autograder.checking.expectations import FAILING_ALIKE, RAISED, WEIGHTS, Expectations, case_alone, reads_record
from autograder.checking.probing import PROJECTIONS
from autograder.course import variants
from autograder.course.declaration import Declaration
from autograder.course.error_variants import exercise_errors
from autograder.course.module_contract.cases import (
    device_cases,
    modes_cases,
    properties_cases,
    state_cases,
    structure_cases,
)
from autograder.course.module_contract.judge import contract_judge, parameter_shapes
from autograder.course.module_contract.probe import (
    SPECS,
    SPECS_BY_EXERCISE,
    ContractCase,
    ContractRecord,
    ModuleSpec,
    PropertiesRecord,
    contract_mix,
    contract_probe,
    exposing_weights,
    module_input,
    one_hot_tokens,
)
from autograder.course.value_variants import failing_alike, faithful
from autograder.course.variants import attention

__all__ = ["DECLARATION", "MESSAGES", "expect_contract", "exposed_reference"]

# Each property's cases; its probe is probe.CONTRACT_PROBES[name], its judge judge.CONTRACT_JUDGES[name].
ContractCases = Callable[[ModuleSpec, random.Random], list[ContractCase]]
CONTRACT: tuple[tuple[str, ContractCases], ...] = (
    ("structure", structure_cases),
    ("modes", modes_cases),
    ("device", device_cases),
    ("properties", properties_cases),
    ("state", state_cases),
)


def exposed_reference(spec: ModuleSpec, case: ContractCase) -> Tensor:
    """What a correct module outputs in eval mode with the exposing weights: each head's weights, then 1."""
    weights, x = exposing_weights(spec, case), one_hot_tokens(case)
    outputs = []
    for prefix, count in spec.heads.groups(case):
        own = {name[len(prefix):]: value for name, value in weights.items() if name.startswith(prefix)}
        outputs.append(attention(x, own, num_heads=count))
    return torch.cat(outputs, dim=-1)


def linear_layout(spec: ModuleSpec, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """The module's parameters as nn.Linear layers hold them ({layer}.weight is (d_out, d_in)): a raw (d_in, d_out)
    projection used as x @ W becomes {name}.weight, transposed."""
    return {(f"{name}.weight" if spec.raw_projections and name in PROJECTIONS else name):
            (value.T if spec.raw_projections and name in PROJECTIONS else value) for name, value in state.items()}


def reference_gradients(spec: ModuleSpec, record: PropertiesRecord, case: ContractCase) -> dict[str, Any] | None:
    """variants.reference_gradients with the module's own parameters, read before its call, on the probe's input and
    mix, both rebuilt from the case; None where the parameters are not the promised ones (the structure check's to
    count)."""
    backward = record["backward"]
    state = backward["state"]
    promised = parameter_shapes(spec, case)
    if any(name not in state or tuple(state[name].shape) != shape for name, shape in promised.items()):
        return None

    def forward(x: Tensor, parameters: Mapping[str, Tensor]) -> Tensor:
        weights = linear_layout(spec, parameters)
        outputs = []
        for prefix, count in spec.heads.groups(case):
            own = {name[len(prefix):]: value for name, value in weights.items() if name.startswith(prefix)}
            outputs.append(attention(x, own, num_heads=count, causal=spec.causal))
        return torch.cat(outputs, dim=-1)

    own_state = {name: state[name] for name in promised}
    aliases = {name: first for name, first in backward["aliases"].items() if name in promised and first in promised}
    return variants.reference_gradients(forward, own_state, aliases, module_input(spec, case),
                                        functools.partial(contract_mix, case))


def expect_contract(property_name: str, exercise_id: str, record: ContractRecord, case: ContractCase) -> Expectations:
    """The modes read what the module outputs in eval mode on the exposing weights; the properties the reference's
    gradients with the module's own weights (the student kit stores them and loads them into the student's module:
    WEIGHTS). After a crash, every property reads the errors of the exercise's raising variants, run by the same
    probe on the case; where the properties fail, the verdicts of its value variants, run by the same probe and
    judge (a softmax over the queries lets the future in as the learner's code does)."""
    probe = functools.partial(contract_probe, property_name, exercise_id)
    sources: dict[str, Callable[[], Any]] = {RAISED: exercise_errors(exercise_id, probe, case)}
    if faithful(exercise_id, property_name):
        sources[FAILING_ALIKE] = failing_alike(
            exercise_id, probe, functools.partial(contract_judge, property_name, exercise_id),
            functools.partial(expect_contract, property_name, exercise_id), case)
    spec = SPECS_BY_EXERCISE[exercise_id]
    if property_name == "properties":
        properties = cast(PropertiesRecord, record)
        return Expectations.computed(**{WEIGHTS: lambda: linear_layout(spec, properties["backward"]["state"])},
                                     gradients=lambda: reference_gradients(spec, properties, case), **sources)
    if property_name != "modes":
        return Expectations.computed(**sources)
    return Expectations.computed(exposed=lambda: exposed_reference(spec, case), **sources)


def contract_checks(spec: ModuleSpec) -> tuple[Check, ...]:
    """The contract's checks for one spec, hidden, with the points the spec gives each (0: not for this module)."""
    checks = []
    for name, cases in CONTRACT:
        points = spec.points.get(name, 0)
        if points:
            # Probe and judge by name (plain arguments): the grading child and the student kit are told them so.
            checks.append(Check(
                id=f"{spec.exercise}.{name}", exercise=spec.exercise, points=points, hidden=True,
                title=TITLES[name](spec),
                cases=_bound(cases, spec), probe=functools.partial(contract_probe, name, spec.exercise),
                judge=functools.partial(contract_judge, name, spec.exercise),
                expect=_expect(name, spec),
            ))
    return tuple(checks)


def _expect(name: str, spec: ModuleSpec) -> Callable[[ContractRecord, ContractCase], Expectations]:
    """expect_contract for one property: only the properties' read the student's record (the weights and input its
    backward pass started from)."""
    expect = functools.partial(expect_contract, name, spec.exercise)
    return reads_record("backward")(expect) if name == "properties" else case_alone(expect)


def _bound(function: ContractCases, spec: ModuleSpec) -> Callable[[random.Random], list[ContractCase]]:
    bound = functools.partial(function, spec)
    functools.update_wrapper(bound, function)
    return bound


def _joined(parts: list[str], lang: str) -> str:
    """'a, b and c' in English, 'a，b，并且 c' in Chinese."""
    if len(parts) == 1:
        return parts[0]
    comma, last = (", ", " and ") if lang == "en" else ("，", "，并且")
    return comma.join(parts[:-1]) + last + parts[-1]


def _structure_title(spec: ModuleSpec) -> dict[str, str]:
    en, zh = ["the parameters its constructor promises"], ["构造函数约定的参数"]
    if spec.has_qkv_bias:
        en[0] += " (with qkv_bias on or off, off by default)"
        zh[0] += "（qkv_bias 打开或关闭时都对，默认关闭）"
    if spec.heads.stacked:
        en.append("registered heads that start from weights of their own")
        zh.append("各个头注册为子模块，并从各自不同的权重开始")
    if spec.out_proj:
        en.append("an out_proj with a bias")
        zh.append("带偏置的 out_proj")
    if spec.attributes:
        sizes = "/".join(f"self.{name}" for name in spec.attributes)
        en.append(f"the size attributes {sizes}")
        zh.append(f"尺寸属性 {sizes}")
    en.append("an output of the promised shape and dtype")
    zh.append("输出的形状和 dtype 符合约定")
    return {"en": f"{spec.class_name}: {_joined(en, 'en')} (module contract)",
            "zh": f"{spec.class_name}：{_joined(zh, 'zh')}（模块约定）"}


def _device_title(spec: ModuleSpec) -> dict[str, str]:
    name = spec.class_name
    if spec.causal:
        return {"en": f"{name}: its mask is a buffer, moved and saved with the module, and forward runs on another "
                      "device (module contract)",
                "zh": f"{name}：掩码是随模块移动和保存的 buffer，forward 能在其他设备上运行（模块约定）"}
    # Forward runs on another device only, in float32: the dtypes are the structure check's (float64 and float32
    # rows), so no dtype is promised here (issue 58).
    return {"en": f"{name}: forward runs on another device once the module is moved there (module contract)",
            "zh": f"{name}：模块移到其他设备之后，forward 仍能在那里运行（模块约定）"}


def _properties_title(spec: ModuleSpec) -> dict[str, str]:
    if "context_length" in spec.arguments:
        en, zh = ["works for inputs shorter than context_length"], ["输入短于 context_length 时也正确"]
    else:
        en, zh = ["works for any number of tokens"], ["任意 token 数都正确"]
    if spec.batched:
        en.append("keeps batch samples apart")
        zh.append("batch 中的样本互不影响")
    if spec.causal:
        en.append("is causal")
        zh.append("满足因果性")
    en += ["passes the right gradients back to every parameter and to its input", "leaves its input alone"]
    zh += ["把正确的梯度传回每个参数和输入", "不修改输入"]
    return {"en": f"{spec.class_name}: {_joined(en, 'en')} (module contract)",
            "zh": f"{spec.class_name}：{_joined(zh, 'zh')}（模块约定）"}


def _modes_title(spec: ModuleSpec) -> dict[str, str]:
    return {"en": f"{spec.class_name}: dropout in training mode only, on the attention weights (module contract)",
            "zh": f"{spec.class_name}：dropout 只在训练模式下作用于注意力权重（模块约定）"}


def _state_title(spec: ModuleSpec) -> dict[str, str]:
    return {"en": f"{spec.class_name}: forward only reads the module: calls on inputs of different lengths give what "
                  "a fresh module gives, and its state_dict reloads (module contract)",
            "zh": f"{spec.class_name}：forward 只读取模块：对不同长度的输入反复调用，结果与新建模块相同，"
                  "state_dict 能重新载入（模块约定）"}


TITLES = {"structure": _structure_title, "modes": _modes_title, "device": _device_title,
          "properties": _properties_title, "state": _state_title}

CHECKS = tuple(check for spec in SPECS for check in contract_checks(spec))


MESSAGES = {
    "contract.not_a_module": {
        "en": "{name}(...) did not build an nn.Module", "zh": "{name}(...) 没有构造出 nn.Module"},
    "contract.heads_not_registered": {
        "en": "the heads are not registered submodules (a plain list?): their weights and masks do not follow the "
              "module. Which containers does PyTorch look inside for submodules?",
        "zh": "这些头不是注册的子模块（普通列表？）：它们的权重和掩码不会随模块移动。PyTorch 会在哪些容器里寻找子模"
              "块？"},
    "contract.heads_named_otherwise": {
        "en": "the heads' parameters are registered, but under names such as {name}, where heads.0, heads.1, ... "
              "are promised: which container keeps its submodules numbered from 0?",
        "zh": "这些头的参数已经注册了，但名字是 {name} 这样的，而约定的是 heads.0、heads.1……：哪种容器会把子模块"
              "从 0 开始编号？"},
    "contract.heads_count": {
        "en": "self.heads holds {got} head(s), expected num_heads = {expected}",
        "zh": "self.heads 中有 {got} 个头，应当有 num_heads = {expected} 个"},
    "contract.missing_parameter": {
        # Said of every module exercise, the wrapper's too, whose constructor the learner writes: no "given __init__".
        # Not "builds other layers": the right layers kept where the module does not register them read the same
        # (issue 58).
        "en": "the module has no parameter {name} of the expected shape: the layers the exercise names are not all "
              "registered in it with the expected shapes",
        "zh": "模块中没有形状正确的参数 {name}：练习要求的层没有全部以正确的形状注册在模块中"},
    "contract.out_proj_without_bias": {
        "en": "the module has every parameter it promises but out_proj.bias: which of its layers should have a bias "
              "whatever qkv_bias says?",
        "zh": "模块中有约定的全部参数，只缺 out_proj.bias：无论 qkv_bias 取什么值，哪个层都应当带偏置？"},
    "contract.extra_parameter": {
        "en": "the module has a parameter {name} its constructor does not promise",
        "zh": "模块中有一个构造函数没有约定的参数 {name}"},
    "contract.stray_bias": {
        "en": "with qkv_bias off the module still has {name}: the query, key and value layers take their bias "
              "from qkv_bias",
        "zh": "qkv_bias 关闭时模块中仍有 {name}：query、key、value 各层是否带偏置应由 qkv_bias 决定",
    },
    "contract.stray_bias_default": {
        "en": "called without qkv_bias, the module has {name}: keep the default of the given signature, no bias",
        "zh": "不传 qkv_bias 时模块中有 {name}：请保持给定签名中的默认值，即不带偏置",
    },
    "contract.attribute": {
        "en": "self.{name} does not hold {formula} as an int: keep the attributes the given __init__ sets",
        "zh": "self.{name} 不是整数 {formula}：请保留给定 __init__ 中设置的属性"},
    "contract.missing_bias": {
        "en": "with qkv_bias on the module has no {name}: the query, key and value layers take their bias from "
              "qkv_bias",
        "zh": "qkv_bias 打开时模块中没有 {name}：query、key、value 各层是否带偏置应由 qkv_bias 决定",
    },
    "contract.mask_parameter": {
        "en": "`{name}` is registered as a parameter: it is listed in the module's parameters(), what an optimizer "
              "is given to train, and counted with them. Is a mask something to train?",
        "zh": "`{name}` 被注册成了参数：它出现在模块的 parameters() 中（优化器拿去训练的就是这些），也和它们一起被"
              "计数。掩码是需要训练的东西吗？"},
    "contract.parameter_shape": {
        "en": "{name} has shape {got}, expected {expected}", "zh": "{name} 的形状是 {got}，应当是 {expected}"},
    "contract.dtype": {
        "en": "the output is torch.{got_dtype} but the input was torch.{expected_dtype}: keep the input's dtype",
        "zh": "输出是 torch.{got_dtype}，而输入是 torch.{expected_dtype}：请保持输入的 dtype"},
    "contract.dropout_in_eval": {
        "en": "after model.eval() two calls on the same input give different outputs: dropout is still active",
        "zh": "调用 model.eval() 之后，同一输入的两次调用输出不同：dropout 仍然生效"},
    "contract.eval_differs": {
        "en": "in eval mode, dropout {p} gives another output than no dropout with the same weights: dropout must "
              "do nothing after model.eval()",
        "zh": "eval 模式下，使用相同权重时 dropout 为 {p} 与没有 dropout 的输出不同：调用 model.eval() 之后 dropou"
              "t 必须不起作用",
    },
    "contract.dropout_nan": {
        "en": "in training mode the output holds nan: dropout multiplied the -inf scores by 0. Which tensor does "
              "your dropout act on, the one before the softmax or the one after it?",
        "zh": "训练模式下输出中出现 nan：dropout 把 -inf 分数乘以了 0。你的 dropout 作用在哪个张量上：softmax "
              "之前的那个，还是之后的那个？"},
    "contract.dropout_layer_rate": {
        "en": "built with dropout {expected}, the module holds a dropout layer with rate {got}: which argument "
              "does each layer get its rate from?",
        "zh": "模块是用 dropout {expected} 构建的，却含有一个比例为 {got} 的 dropout 层："
              "每一层的比例是从哪个参数得到的？",
    },
    "contract.dropout_inactive": {
        "en": "in training mode nothing is ever dropped: the module's dropout never reaches the attention weights",
        "zh": "训练模式下没有任何东西被丢弃：模块的 dropout 从未作用在注意力权重上",
    },
    "contract.dropout_future": {
        "en": "in training mode a token gives weight to a later token: dropout must not undo the mask",
        "zh": "训练模式下有 token 给了在它之后的 token 权重：dropout 不能破坏掩码"},
    "contract.dropout_before_softmax": {
        # Of the weights the judge reads: those not 0 in eval mode (the mask's future is 0 in both; issue 58).
        "en": "in training mode the weights change, but none of those that are not 0 in eval mode becomes 0, and "
              "every row still sums to 1",
        "zh": "训练模式下权重变了，但在 eval 模式下不为 0 的权重没有一个变成 0，而且每一行之和仍是 1"},
    "contract.dropout_not_on_weights": {
        "en": "in training mode the output is not the attention weights with some of them dropped: dropout acts "
              "on the attention weights, not on the input, the values or the output",
        "zh": "训练模式下的输出不是部分权重被丢弃后的注意力权重：dropout 作用在注意力权重上，而不是输入、value 或"
              "输出上",
    },
    "contract.dropout_rate": {
        "en": "in training mode {share:.0%} of the visible attention weights are zero, far from the dropout rate p",
        "zh": "训练模式下 {share:.0%} 的可见注意力权重为 0，与 dropout 比例 p 相差太远"},
    "contract.dropout_not_scaled": {
        "en": "the kept attention weights are not scaled up to make up for the dropped ones: nn.Dropout does that "
              "for you",
        "zh": "保留下来的注意力权重没有放大来弥补被丢弃的那些：nn.Dropout 会自动完成这一步",
    },
    "contract.dropout_values": {
        "en": "in training mode the kept attention weights are neither the eval-mode weights nor those weights "
              "scaled up by dropout",
        "zh": "训练模式下保留下来的注意力权重既不是 eval 模式的权重，也不是这些权重经 dropout 放大后的结果",
    },
    "contract.mask_missing": {
        "en": "the module has no tensor `{name}`: the constructor registers the mask as a buffer under that name",
        "zh": "模块没有张量 `{name}`：构造函数要以这个名字把掩码注册为 buffer",
    },
    "contract.mask_plain_attribute": {
        "en": "`{name}` is not a registered buffer: when the module moves to {device} or changes dtype it stays "
              "behind",
        "zh": "`{name}` 不是注册的 buffer：模块移到 {device} 或转换 dtype 时，它留在原处",
    },
    "contract.mask_not_saved": {
        "en": "`{name}` is missing from the module's saved state: the mask buffer is registered as one that is "
              "not saved",
        "zh": "模块保存的状态中没有 `{name}`：掩码 buffer 被注册成了不保存的 buffer",
    },
    "contract.forward_failed_on_device": {
        "en": "after the module moved to {device} the forward pass fails ({type}: {detail}); tensors made inside "
              "forward stay on the CPU. Where does each tensor your forward uses come from, and on which device is it "
              "made?",
        "zh": "模块移到 {device} 之后前向传播失败（{type}：{detail}）；在 forward 中新建的张量留在 CPU 上。你的 "
              "forward 用到的每个张量从哪里来？它是在哪个设备上创建的？",
    },
    "contract.forward_failed_on_device_unplaced": {
        "en": "after the module moved to {device} the forward pass fails ({type}: {detail}). Where does each tensor "
              "your forward uses come from, and on which device is it?",
        "zh": "模块移到 {device} 之后前向传播失败（{type}：{detail}）。你的 forward 用到的每个张量从哪里来？它在哪个"
              "设备上？",
    },
    "contract.tensor_on_cpu": {
        "en": "after the module moved to {device} forward still combines a tensor on the CPU with the others ({op}): "
              "where does each tensor your forward uses come from, and on which device is it made?",
        "zh": "模块移到 {device} 之后 forward 仍把 CPU 上的张量与其他张量一起运算（{op}）：你的 forward 用到的每个张"
              "量从哪里来？它是在哪个设备上创建的？",
    },
    "contract.tensor_kept_on_cpu": {
        "en": "after the module moved to {device} forward still combines a tensor on the CPU with the others ({op}): "
              "a tensor the module keeps as a plain attribute, from before this call. A plain attribute is neither a "
              "parameter nor a buffer, so moving the module does not move it. Which tensors does your module keep "
              "outside its parameters and buffers, and why?",
        "zh": "模块移到 {device} 之后 forward 仍把 CPU 上的张量与其他张量一起运算（{op}）：这是模块在这次调用之前就以"
              "普通属性保存的张量。普通属性既不是参数也不是 buffer，移动模块不会移动它。你的模块在参数和 buffer 之外"
              "还保存了哪些张量？为什么？",
    },
    "contract.moved_to_cpu": {
        "en": "after the module moved to {device} forward copies one of its tensors back to the CPU, so its work no "
              "longer stays on the module's device: on which device should every tensor of forward stay?",
        "zh": "模块移到 {device} 之后，forward 把它的某个张量复制回 CPU，于是它的计算不再留在模块所在的设备上："
              "forward 的每个张量应当留在哪个设备上？",
    },
    "contract.output_on_device": {
        "en": "after the module moved to {device} the output is not on {device}: which device should the output "
              "of a module be on?",
        "zh": "模块移到 {device} 之后输出不在 {device} 上：模块的输出应当在哪个设备上？",
    },
    "contract.output_shape_on_device": {
        "en": "after the module moved to {device} the output has shape {got_shape}, expected {expected_shape}",
        "zh": "模块移到 {device} 之后输出的形状为 {got_shape}，期望 {expected_shape}",
    },
    "contract.output_shape_on_device.hidden": {
        "en": "after the module moved to {device} the output has the wrong shape",
        "zh": "模块移到 {device} 之后输出的形状不对",
    },
    "contract.input_modified": {
        "en": "the forward pass modified its input x in place; leave x unchanged",
        "zh": "前向传播原地修改了输入 x；请不要改动 x"},
    "contract.batch_mixed": {
        "en": "sample x[{sample}] of the batch gets another output when it is run alone: samples must not see "
              "each other (the softmax runs over the keys, never over the batch)",
        "zh": "batch 中的样本 x[{sample}] 单独运行时输出不同：样本之间不能互相影响（softmax 在 key 上做，而不是在 "
              "batch 维度上）",
    },
    "contract.sample_reshaped_alone": {
        "en": "sample x[{sample}] of the batch, run alone as a batch of one, comes back with shape {got_shape}, not "
              "{expected_shape}: the same numbers as in the whole batch's output, under another shape",
        "zh": "batch 中的样本 x[{sample}] 作为只有一个样本的 batch 单独运行时，返回的形状是 {got_shape}，而不是 "
              "{expected_shape}：数值与整个 batch 输出中的相同，只是形状不同",
    },
    "contract.future_leaks": {
        "en": "changing the tokens after position {position} changed the outputs at positions 0 to {position}: the "
              "future leaks in",
        "zh": "修改位置 {position} 之后的 token 改变了位置 0 到 {position} 的输出：未来的信息泄漏进来了"},
    "contract.no_gradient": {
        "en": "no gradient reaches {name}: compute the output from it with tensor operations, without detaching, "
              "copying or switching gradients off",
        "zh": "梯度没有传到 {name}：输出必须通过张量运算由它计算得到，不要分离、复制或关闭梯度计算",
    },
    "contract.no_gradient_downstream": {
        "en": "no gradient reaches {name}, though your forward uses it inside autograd's graph: a tensor computed "
              "from it leaves the graph on its way to the output (a detached or copied tensor, or one computed with "
              "gradients off)",
        "zh": "梯度没有传到 {name}，尽管你的 forward 是在 autograd 的计算图之内使用它的：由它计算出的某个张量在通往"
              "输出的路上离开了计算图（被分离或复制的张量，或在关闭梯度时算出的张量）",
    },
    "contract.parameter_unused": {
        "en": "no gradient reaches {name}, and moving its values leaves the output as it was: the output does not "
              "depend on it at all",
        "zh": "梯度没有传到 {name}，而且改变它的数值后输出完全不变：输出根本不依赖它"},
    "contract.heads_repeated": {
        "en": "self.heads[{head}] is the very module self.heads[{earlier}] is, not a head of its own: the heads share "
              "one set of weights, so they are one head counted several times",
        "zh": "self.heads[{head}] 与 self.heads[{earlier}] 是同一个模块，而不是单独的头：这些头共用一组权重，"
              "其实是同一个头被数了好几次"},
    "contract.heads_identical": {
        "en": "self.heads[{head}] starts with exactly the weights of self.heads[0]: identical heads get identical "
              "gradients and stay identical, so the extra heads learn nothing new",
        "zh": "self.heads[{head}] 的初始权重与 self.heads[0] 完全相同：相同的头得到相同的梯度，会一直保持相同，"
              "多出来的头学不到任何新东西"},
    "contract.state_reshaped": {
        "en": "forward changed the module's own {name}: its shape went from {before} to {after}; forward may read "
              "the module's parameters and buffers, never replace or edit them",
        "zh": "forward 修改了模块自己的 {name}：它的形状从 {before} 变成了 {after}；forward 只能读取模块的参数和 buff"
              "er，"
              "不能替换或修改它们"},
    "contract.parameter_rewritten": {
        "en": "forward changed the values of the module's own parameter {name}: forward may read the module's "
              "parameters, never edit them (only the optimizer's step does, between calls)",
        "zh": "forward 修改了模块自己的参数 {name} 的数值：forward 只能读取模块的参数，不能修改它们"
              "（只有优化器的 step 在两次调用之间修改它们）"},
    "contract.state_retyped": {
        "en": "forward changed the module's own {name}: its dtype went from {before} to {after}; forward may read "
              "the module's parameters and buffers, never replace or edit them",
        "zh": "forward 修改了模块自己的 {name}：它的 dtype 从 {before} 变成了 {after}；forward 只能读取模块的参数和 "
              "buffer，不能替换或修改它们"},
    "contract.state_rewritten": {
        "en": "forward changed the values of the module's own {name}: forward may read the module's parameters and "
              "buffers, never replace or edit them",
        "zh": "forward 修改了模块自己的 {name} 的数值：forward 只能读取模块的参数和 buffer，不能替换或修改它们"},
    "contract.state_removed": {
        "en": "after a forward pass the module no longer has {name}",
        "zh": "执行一次前向传播之后，模块中不再有 {name}"},
    "contract.state_added": {
        "en": "a forward pass added {name} to the module's parameters or buffers",
        "zh": "前向传播往模块的参数或 buffer 中添加了 {name}"},
    "contract.later_call_failed": {
        "en": "after a call on {first_tokens} tokens, a call of the same module on {tokens} tokens raised {type}; a "
              "fresh module takes it",
        "zh": "同一个模块先处理了 {first_tokens} 个 token，之后再处理 {tokens} 个 token 时抛出了 {type}；新建的模块可以"
              "处理它"},
    "contract.later_call_differs": {
        "en": "after a call on {first_tokens} tokens, a call of the same module on {tokens} tokens gives another "
              "output than a fresh module on the same input",
        "zh": "同一个模块先处理了 {first_tokens} 个 token，之后处理 {tokens} 个 token 的输出与新建模块对同一输入的输出"
              "不同"},
    "contract.repeat_differs": {
        "en": "in eval mode the same input of {tokens} tokens, given twice to one module, gives two different outputs",
        "zh": "eval 模式下，把同一个 {tokens} 个 token 的输入两次交给同一个模块，得到的输出不同"},
    "contract.state_dict_reload": {
        "en": "the module's state_dict() after a few calls no longer loads into a fresh module ({type}: {detail})",
        "zh": "调用几次之后，模块的 state_dict() 无法再载入新建的模块（{type}：{detail}）"},
    "contract.state_dict_differs": {
        "en": "a fresh module that loaded this module's state_dict() gives another output on the same input",
        "zh": "载入了这个模块 state_dict() 的新建模块，对同一输入给出了不同的输出"},
    "contract.gradient_not_finite": {
        "en": "the gradient of {name} is nan or inf", "zh": "{name} 的梯度是 nan 或 inf"},
}


DECLARATION = Declaration(checks=CHECKS, messages=MESSAGES)
