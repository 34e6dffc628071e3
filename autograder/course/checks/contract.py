"""The contract every attention module exercise shares: declared once, applied by data.

A `ModuleSpec` says what an exercise's class promises: its constructor, the parameters that constructor
creates (names and shapes, qkv_bias either way), the buffers that hold a causal mask, the input rank, the
output features, whether it is causal and has dropout. Every spec gets the same checks:

  <exercise>.structure   parameters named and shaped as the constructor promises and nothing else trainable
                         (no stray bias when qkv_bias=False, no mask as a parameter); the output is a tensor of
                         the promised shape and the input's dtype
  <exercise>.modes       (modules with dropout) eval() is deterministic and equals the same weights with
                         dropout 0; train() drops attention weights after the softmax at rate p and scales the
                         kept ones by 1/(1-p), judged statistically (never an exact mask)
  <exercise>.device      every mask is a persistent buffer that follows .to(dtype) and .to(device) (a GPU when
                         there is one, else the shape-only meta device); forward runs there and makes no tensor
                         that stays behind on the CPU
  <exercise>.properties  inputs shorter than context_length, batch independence, causality, gradients reach
                         every parameter, the input left as it was

Everything is judged against the student's own module (another call, another mode, another sample), never
against an exact random mask: a mistake in the forward pass costs the value checks, not these.
"""

import functools
import math
from collections.abc import Callable

import torch

from autograder.checking.check_types import Check, Verdict
from autograder.checking.compare import same
from autograder.course.checks.helpers import PROJECTIONS
from autograder.course.checks.variants import attention
from autograder.course.probes.contract import (
    SPECS,
    contract_probe,
    exposing_weights,
    head_count,
    module_input,
    one_hot_tokens,
    promised_attributes,
)

DROPOUT_TOKENS = 24
DROPOUT_BATCH = 16  # 16 · 24·25/2 = 4800 visible weights per head: one standard deviation of the zero share <= 0.0073
RATE_DEVIATIONS = 8  # the share of zeros may stray this many standard deviations from p: it never flakes
NEIGHBOUR_MARGIN = 0.1  # independent dropout: vertical neighbours agree with probability p² + (1 - p)²




# ---------------------------------------------------------------------------------------------
# What a spec promises, for one case












def parameter_shapes(spec, case):
    """{name: shape} of every parameter the constructor promises."""
    d_in, d_out, bias = case["d_in"], case["d_out"], case.get("qkv_bias", False)
    if spec.kind == "v1":
        return {name: (d_in, d_out) for name in PROJECTIONS}
    linears = {}
    for name in PROJECTIONS:
        linears[f"{name}.weight"] = (d_out, d_in)
        if bias:
            linears[f"{name}.bias"] = (d_out,)
    if spec.kind == "wrapper":
        return {f"heads.{i}.{name}": shape for i in range(case["num_heads"]) for name, shape in linears.items()}
    if spec.kind == "multihead":
        linears.update({"out_proj.weight": (d_out, d_out), "out_proj.bias": (d_out,)})
    return linears




def output_shape(spec, case):
    features = case["d_out"] * (case["num_heads"] if spec.kind == "wrapper" else 1)
    if not spec.batched:
        return (case["num_tokens"], features)
    return (case["batch"], case["num_tokens"], features)




def contract_case(spec, rng, *, num_tokens=None, batch=None, qkv_bias=None, dtype="float32"):
    """A case: d_in != d_out and != head_dim, head_dim >= 2, num_tokens below context_length."""
    num_heads = rng.randint(2, 3) if spec.kind in ("wrapper", "multihead") else 1
    head_dim = rng.randint(2, 5)
    d_out = head_dim * num_heads if spec.kind == "multihead" else head_dim
    num_tokens = num_tokens or rng.randint(3, 9)
    return {
        "seed": rng.randrange(2**31 - 100),
        "init_seed": rng.randrange(2**31),
        "batch": batch or rng.randint(2, 3),
        "num_tokens": num_tokens,
        "context_length": num_tokens + rng.randint(1, 5),
        "d_in": rng.choice([d for d in range(2, 10) if d not in (d_out, head_dim)]),
        "d_out": d_out,
        "num_heads": num_heads,
        "qkv_bias": (rng.random() < 0.5) if qkv_bias is None else qkv_bias,
        "dtype": dtype,
    }


# ---------------------------------------------------------------------------------------------
# structure: parameters and output as the constructor promises


def structure_cases(spec, rng):
    # None: qkv_bias left out of the call, as the book's own code does; its default is False.
    biases = (False, True, None) if spec.has_qkv_bias else (False,)
    cases = []
    for bias, dtype in zip(biases, ("float64", "float32", "float32"), strict=False):
        case = contract_case(spec, rng, qkv_bias=bias, dtype=dtype)
        case["qkv_bias"] = bias  # contract_case draws a random one for None
        cases.append(case)
    return cases




def judge_structure(spec, data, case):
    expected = parameter_shapes(spec, case)
    got = {name: tuple(shape) for name, shape in data["parameters"].items()}
    extra = sorted(set(got) - set(expected))
    missing = sorted(set(expected) - set(got))
    if missing and all(unregistered_head(name, got) for name in missing):
        return Verdict(False, "contract.heads_not_registered", misconception="heads_plain_list")
    masks = [name for name in extra if name.split(".")[-1] == "mask"]
    if masks:
        return Verdict(False, "contract.mask_parameter", {"name": masks[0]}, misconception="mask_as_parameter")
    biases = [name for name in extra + missing if name.endswith(".bias")]
    if biases and len(biases) == len(extra) + len(missing):
        if case["qkv_bias"] is None:
            return Verdict(False, "contract.stray_bias_default", {"name": biases[0]})
        key = "contract.stray_bias" if case["qkv_bias"] is False else "contract.missing_bias"
        return Verdict(False, key, {"name": biases[0]}, misconception="qkv_bias_ignored")
    if missing:
        return Verdict(False, "contract.missing_parameter", {"name": missing[0]})
    if extra:
        return Verdict(False, "contract.extra_parameter", {"name": extra[0]})
    for name, shape in expected.items():
        if got[name] != shape:
            return Verdict(False, "contract.parameter_shape", {"name": name, "got": got[name], "expected": shape})
    attributes = data.get("attributes", {})
    for name, (value, formula) in promised_attributes(spec, case).items():
        stored = attributes.get(name, {})
        if stored.get("type") != "int" or stored.get("value") != value:
            return Verdict(False, "contract.attribute", {"name": name, "formula": formula})
    if "output_type" in data:
        return Verdict(False, "error.wrong_type", {"got": data["output_type"]})
    expected_shape = output_shape(spec, case)
    if tuple(data["output_shape"]) != expected_shape:
        return Verdict(False, "shape.wrong",
                       {"got_shape": tuple(data["output_shape"]), "expected_shape": expected_shape})
    if data["output_dtype"] != case["dtype"]:
        return Verdict(False, "contract.dtype", {"got_dtype": data["output_dtype"], "expected_dtype": case["dtype"]})
    return Verdict(True)


# ---------------------------------------------------------------------------------------------
# modes: eval() is deterministic and equals dropout 0; train() drops attention weights, statistically
#
# One-hot tokens (d_in = num_tokens) and, per head, W_query = c·[I; 0], W_key = [I; 0], W_value = [I; 1]: head h's
# output row i is its attention weights over the keys, then their sum. So the output spells out the (dropped)
# weights: dropout on the weights keeps "last feature = sum of the others", dropout anywhere else breaks it.
# c gives every token a higher score with itself: the weights are not uniform, so dropout before the softmax shows.


def modes_cases(spec, rng):
    def case(p):
        num_heads = rng.randint(2, 3) if spec.kind in ("wrapper", "multihead") else 1
        head_dim = DROPOUT_TOKENS + 1
        return {"seed": rng.randrange(2**31), "init_seed": rng.randrange(2**31), "p": p, "batch": DROPOUT_BATCH,
                "num_tokens": DROPOUT_TOKENS, "context_length": DROPOUT_TOKENS + rng.randint(1, 8),
                "d_in": DROPOUT_TOKENS, "num_heads": num_heads, "qkv_bias": False, "dtype": "float32",
                "d_out": head_dim * num_heads if spec.kind == "multihead" else head_dim}

    return [case(0.5), case(rng.choice((0.2, 0.3, 0.4)))]










def judge_modes(spec, data, case):
    tokens, heads = case["num_tokens"], head_count(spec, case)
    expected_shape = (case["batch"], tokens, heads * (tokens + 1))
    for key in ("train", "eval", "eval_again", "no_dropout"):
        if tuple(data[key].shape) != expected_shape:
            return Verdict(False, "shape.wrong",
                           {"got_shape": tuple(data[key].shape), "expected_shape": expected_shape})
    if not same(data["eval_again"], data["eval"], atol=0, rtol=0):
        return Verdict(False, "contract.dropout_in_eval", misconception="dropout_in_eval")
    if not same(data["eval"], data["no_dropout"]):
        return Verdict(False, "contract.eval_differs", {"p": case["p"]}, misconception="dropout_in_eval")
    if not same(data["eval"], exposed_reference(spec, case)):
        # The forward pass itself is wrong on these weights (the value checks say how): where dropout acts cannot be
        # read from its output, only that it acts in training mode.
        if same(data["train"], data["eval"]):
            return Verdict(False, "contract.dropout_inactive", misconception="dropout_missing")
        return Verdict(True)
    for head in range(heads):
        block = slice(head * (tokens + 1), (head + 1) * (tokens + 1))
        problem = train_problem(data["train"][..., block], data["eval"][..., block], case["p"])
        if problem is not None:
            return problem
    return Verdict(True)


def exposed_reference(spec, case):
    """What a correct module outputs in eval mode with the exposing weights: each head's weights, then 1."""
    weights, x = exposing_weights(spec, case), one_hot_tokens(case)
    if spec.kind == "wrapper":
        heads = [attention(x, {name.split(".", 2)[2]: value for name, value in weights.items()
                               if name.startswith(f"heads.{i}.")}) for i in range(case["num_heads"])]
        return torch.cat(heads, dim=-1)
    return attention(x, weights, num_heads=head_count(spec, case))


def train_problem(train, evaluated, p):
    """What is wrong with one head's training-mode output, judged against the same head in eval mode.

    Both are (b, tokens, tokens + 1): the weights over the keys, then their sum (see exposing_weights).
    """
    if same(train, evaluated):
        return Verdict(False, "contract.dropout_inactive", misconception="dropout_missing")
    weights, total = train[..., :-1], train[..., -1]
    evaluated = evaluated[..., :-1]
    valid = ~torch.isnan(evaluated)
    if (torch.isnan(weights) & valid).any():  # nn.Dropout on scores that already hold -inf: -inf · 0 is nan
        return Verdict(False, "contract.dropout_nan", misconception="dropout_before_softmax")
    seen = valid & (evaluated != 0)  # the weights the mask lets through
    if ((weights != 0) & valid & ~seen).any():
        return Verdict(False, "contract.dropout_future")
    zeros = (weights == 0) & seen
    if not zeros.any():
        if same(weights.nansum(dim=-1), evaluated.nansum(dim=-1)):
            # Rows sum as before and nothing was zeroed: the softmax came after the dropout.
            return Verdict(False, "contract.dropout_before_softmax", misconception="dropout_before_softmax")
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights")
    if not same(total, weights.sum(dim=-1), atol=1e-4):
        # The last feature is the sum of the values' ones: it matches the weights only when the weights were dropped.
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights")
    # Dropout on the weights zeroes each (query, key) pair on its own; dropout on the inputs zeroes whole columns,
    # so vertical neighbours (query i and i + 1, same key) agree far more often than independent zeros would, at
    # whatever rate they occur.
    count = int(seen.sum())
    share = float(zeros.sum()) / count
    pairs = seen[:, 1:, :] & seen[:, :-1, :]
    agree = float(((zeros[:, 1:, :] == zeros[:, :-1, :]) & pairs).sum()) / max(int(pairs.sum()), 1)
    if agree > share**2 + (1 - share) ** 2 + NEIGHBOUR_MARGIN:
        return Verdict(False, "contract.dropout_not_on_weights", misconception="dropout_not_on_weights")
    if abs(share - p) > RATE_DEVIATIONS * (p * (1 - p) / count) ** 0.5:
        return Verdict(False, "contract.dropout_rate", {"share": share})
    kept = seen & ~zeros
    if not same(weights[kept], evaluated[kept] / (1 - p)):
        key = "contract.dropout_not_scaled" if same(weights[kept], evaluated[kept]) else "contract.dropout_values"
        return Verdict(False, key)
    return None


# ---------------------------------------------------------------------------------------------
# device: masks are persistent buffers that follow .to(dtype) and .to(device); forward runs on that device


def device_cases(spec, rng):
    return [{**contract_case(spec, rng, qkv_bias=False), "device": "auto"}]








def unregistered_head(name, registered):
    """Whether `name` belongs to a head (heads.<i>.) of which nothing is registered: heads kept in a plain list."""
    parts = name.split(".")
    if parts[0] != "heads" or len(parts) < 3:
        return False
    return not any(other.startswith(f"heads.{parts[1]}.") for other in registered)


def judge_device(spec, data, case):
    device = data["device"]
    for name, present in data["masks"].items():
        if not present:
            return Verdict(False, "contract.mask_missing", {"name": name})
    registered = data["parameters"] + data["buffers"]
    for name in data["masks"]:
        if name in data["parameters"]:
            continue  # a mask registered as a parameter moves with the module: the structure check names it
        if unregistered_head(name, registered):
            return Verdict(False, "contract.heads_not_registered", misconception="heads_plain_list")
        left_behind = data["mask_devices"][name] != device
        still_float32 = data["mask_dtypes"][name] in ("float16", "bfloat16", "float32")
        if name not in data["buffers"] or left_behind or still_float32:
            return Verdict(False, "contract.mask_plain_attribute", {"name": name, "device": device},
                           misconception="mask_plain_attribute")
        if name not in data["state_dict"]:
            return Verdict(False, "contract.mask_not_saved", {"name": name}, misconception="mask_not_persistent")
    error = data.get("forward_error")
    # The meta device has no values: an op that needs them (.item(), printing numbers) fails there only.
    if error is not None and (device != "meta" or "device" in error["message"]):
        return Verdict(False, "contract.forward_failed_on_device",
                       {"device": device, "type": error["type"], "detail": error["message"][:160]},
                       misconception="tensor_created_on_cpu" if "device" in error["message"] else None)
    if data.get("mixed"):
        return Verdict(False, "contract.tensor_on_cpu", {"device": device, "op": data["mixed"][0]},
                       misconception="tensor_created_on_cpu")
    if error is None and (tuple(data.get("output_shape", ())) != output_shape(spec, case)
                          or data.get("output_device") != device):
        return Verdict(False, "contract.output_on_device", {"device": device})
    return Verdict(True)


# ---------------------------------------------------------------------------------------------
# properties: shorter inputs, batch independence, causality, gradients, input left alone


def properties_cases(spec, rng):
    # With qkv_bias where the constructor takes it: a bias that forward ignores gets no gradient, and shows.
    case = contract_case(spec, rng, dtype="float64", qkv_bias=spec.has_qkv_bias)
    case.update(position=rng.randint(0, case["num_tokens"] - 2), loss_seed=rng.randrange(2**31))
    return [case]






def judge_properties(spec, data, case):
    got = data["output"]
    expected_shape = output_shape(spec, case)
    if tuple(got.shape) != expected_shape:
        return Verdict(False, "shape.wrong", {"got_shape": tuple(got.shape), "expected_shape": expected_shape})
    if not torch.equal(data["input_after"], module_input(spec, case)):
        return Verdict(False, "contract.input_modified")
    if spec.batched:
        for index, alone in enumerate(data["one_by_one"]):
            if tuple(alone.shape) != (1, *expected_shape[1:]) or not same(alone[0], got[index]):
                return Verdict(False, "contract.batch_mixed", {"sample": index + 1})
    if spec.causal:
        seen = case["position"] + 1
        if tuple(data["future_changed"].shape) != expected_shape or not same(
                data["future_changed"][:, :seen], got[:, :seen], atol=1e-6, rtol=1e-5):
            return Verdict(False, "contract.future_leaks", {"position": seen})
    gradients = data["gradients"]
    for name in parameter_shapes(spec, case):
        if name.endswith("W_key.bias") or name not in gradients:
            # W_key.bias adds q·b to a whole row of scores: the softmax cancels it, its gradient is 0 by right. A
            # parameter that is not there at all is the structure check's to count.
            continue
        size = gradients.get(name)
        if size is None or size == 0:
            return Verdict(False, "contract.no_gradient", {"name": name})
        if not math.isfinite(size):
            return Verdict(False, "contract.gradient_not_finite", {"name": name})
    return Verdict(True)


# ---------------------------------------------------------------------------------------------
# The checks of a spec, and the specs of the course

# Each property's cases and judge; its probe is autograder.course.probes.contract.CONTRACT_PROBES[name].
CONTRACT = (
    ("structure", structure_cases, judge_structure),
    ("modes", modes_cases, judge_modes),
    ("device", device_cases, judge_device),
    ("properties", properties_cases, judge_properties),
)


def contract_checks(spec):
    """The contract's checks for one spec, hidden, with the points the spec gives each (0: not for this module)."""
    checks = []
    for name, cases, judge in CONTRACT:
        points = spec.points.get(name, 0)
        if points:
            probe = functools.partial(contract_probe, name, spec.exercise)  # by name: see probes.plan
            checks.append(Check(f"{spec.exercise}.{name}", spec.exercise, points, True,
                                _bound(cases, spec), probe, _bound(judge, spec)))
    return tuple(checks)


def _bound(function: Callable, spec):
    bound = functools.partial(function, spec)
    functools.update_wrapper(bound, function)
    return bound


CHECKS = tuple(check for spec in SPECS for check in contract_checks(spec))


def _titles():
    titles = {}
    for spec in SPECS:
        name = spec.class_name
        titles[f"{spec.exercise}.structure.title"] = {
            "en": f"{name}: the parameters and sizes its constructor promises (qkv_bias either way, and False by "
                  "default), an output of the promised shape and dtype",
            "zh": f"{name}：构造函数承诺的参数和尺寸（qkv_bias 取两种值时都对，默认为 False），"
                  "输出的形状和 dtype 符合约定"}
        titles[f"{spec.exercise}.modes.title"] = {
            "en": f"{name}: eval() is deterministic and equals dropout 0; train() drops attention weights after the "
                  "softmax at rate p, scaled by 1/(1-p)",
            "zh": f"{name}：eval() 结果确定且等于 dropout 为 0 时的结果；"
                  "train() 在 softmax 之后按比例 p 丢弃注意力权重，并乘以 1/(1-p)"}
        titles[f"{spec.exercise}.device.title"] = {
            "en": f"{name}: masks are buffers saved in state_dict that follow .to(dtype) and .to(device), and forward "
                  "runs on that device (a GPU, or PyTorch's meta device when there is none)",
            "zh": f"{name}：掩码是保存在 state_dict 中的 buffer，随 .to(dtype) 和 .to(device) 移动，"
                  "前向传播能在该设备上运行（有 GPU 时用 GPU，没有时用 PyTorch 的 meta 设备）"}
        titles[f"{spec.exercise}.properties.title"] = {
            "en": f"{name}: works for inputs shorter than context_length, keeps batch samples apart"
                  + (", is causal" if spec.causal else "") + ", passes gradients to every parameter and leaves "
                  "its input alone",
            "zh": f"{name}：输入短于 context_length 时也正确，batch 中的样本互不影响"
                  + ("，满足因果性" if spec.causal else "") + "，梯度能传到每个参数，并且不修改输入"}
    return titles


MESSAGES = {
    **_titles(),
    "contract.not_a_module": {
        "en": "{name}(...) did not build an nn.Module", "zh": "{name}(...) 没有构造出 nn.Module"},
    "contract.heads_not_registered": {
        "en": "the heads are not registered submodules (a plain list?): their weights and masks do not follow the "
              "module; use nn.ModuleList",
        "zh": "这些头不是注册的子模块（普通列表？）：它们的权重和掩码不会随模块移动；请使用 nn.ModuleList"},
    "contract.missing_parameter": {
        "en": "the module has no parameter {name} of the expected shape: keep the layers of the given __init__",
        "zh": "模块中没有形状正确的参数 {name}：请保留给定 __init__ 中的各层"},
    "contract.extra_parameter": {
        "en": "the module has a parameter {name} its constructor does not promise",
        "zh": "模块中有一个构造函数没有约定的参数 {name}"},
    "contract.stray_bias": {
        "en": "with qkv_bias=False the module still has {name}: pass bias=qkv_bias to nn.Linear",
        "zh": "qkv_bias=False 时模块中仍有 {name}：请把 bias=qkv_bias 传给 nn.Linear"},
    "contract.stray_bias_default": {
        "en": "called without qkv_bias, the module has {name}: the default must stay qkv_bias=False, as in the given "
              "signature",
        "zh": "不传 qkv_bias 时模块中有 {name}：默认值必须保持为给定签名中的 qkv_bias=False"},
    "contract.attribute": {
        "en": "self.{name} does not hold {formula} as an int: keep the attributes the given __init__ sets",
        "zh": "self.{name} 不是整数 {formula}：请保留给定 __init__ 中设置的属性"},
    "contract.missing_bias": {
        "en": "with qkv_bias=True the module has no {name}: pass bias=qkv_bias to nn.Linear",
        "zh": "qkv_bias=True 时模块中没有 {name}：请把 bias=qkv_bias 传给 nn.Linear"},
    "contract.mask_parameter": {
        "en": "`{name}` is a parameter: the optimizer would train it; register it as a buffer",
        "zh": "`{name}` 是一个参数：优化器会训练它；请把它注册为 buffer"},
    "contract.parameter_shape": {
        "en": "{name} has shape {got}, expected {expected}", "zh": "{name} 的形状是 {got}，应当是 {expected}"},
    "contract.dtype": {
        "en": "the output is torch.{got_dtype} but the input was torch.{expected_dtype}: keep the input's dtype",
        "zh": "输出是 torch.{got_dtype}，而输入是 torch.{expected_dtype}：请保持输入的 dtype"},
    "contract.dropout_in_eval": {
        "en": "after model.eval() two calls on the same input give different outputs: dropout is still active",
        "zh": "调用 model.eval() 之后，同一输入的两次调用输出不同：dropout 仍然生效"},
    "contract.eval_differs": {
        "en": "in eval mode, dropout={p} gives another output than dropout=0 with the same weights: dropout must be "
              "the identity after model.eval()",
        "zh": "eval 模式下，使用相同权重时 dropout={p} 与 dropout=0 的输出不同：调用 model.eval() 之后 dropout 必须是"
              "恒等映射"},
    "contract.dropout_nan": {
        "en": "in training mode the output holds nan: dropout multiplied the -inf scores by 0; apply it to the "
              "weights after the softmax",
        "zh": "训练模式下输出中出现 nan：dropout 把 -inf 分数乘以了 0；请在 softmax 之后对权重应用 dropout"},
    "contract.dropout_inactive": {
        "en": "in training mode nothing is ever dropped: apply self.dropout to the attention weights",
        "zh": "训练模式下没有任何东西被丢弃：请对注意力权重应用 self.dropout"},
    "contract.dropout_future": {
        "en": "in training mode a token gives weight to a later token: dropout must not undo the mask",
        "zh": "训练模式下有 token 给了在它之后的 token 权重：dropout 不能破坏掩码"},
    "contract.dropout_before_softmax": {
        "en": "in training mode the weights change but no weight is zero and every row still sums to 1",
        "zh": "训练模式下权重变了，但没有一个权重为 0，而且每一行之和仍是 1"},
    "contract.dropout_not_on_weights": {
        "en": "in training mode the output is not the attention weights with some of them dropped: apply "
              "self.dropout to attn_weights, not to the input, the values or the output",
        "zh": "训练模式下的输出不是部分权重被丢弃后的注意力权重：请对 attn_weights 应用 self.dropout，"
              "而不是输入、values 或输出"},
    "contract.dropout_rate": {
        "en": "in training mode {share:.0%} of the visible attention weights are zero, far from the dropout rate p",
        "zh": "训练模式下 {share:.0%} 的可见注意力权重为 0，与 dropout 比例 p 相差太远"},
    "contract.dropout_not_scaled": {
        "en": "the kept attention weights are not scaled by 1/(1-p): use nn.Dropout, which does it for you",
        "zh": "保留下来的注意力权重没有乘以 1/(1-p)：请使用 nn.Dropout，它会自动完成缩放"},
    "contract.dropout_values": {
        "en": "in training mode the kept attention weights are neither the eval-mode weights nor those scaled "
              "by 1/(1-p)",
        "zh": "训练模式下保留下来的注意力权重既不是 eval 模式的权重，也不是它们乘以 1/(1-p) 的结果"},
    "contract.mask_missing": {
        "en": "the module has no tensor `{name}`: add self.register_buffer('mask', ...) to __init__",
        "zh": "模块没有张量 `{name}`：请在 __init__ 中加上 self.register_buffer('mask', ...)"},
    "contract.mask_plain_attribute": {
        "en": "`{name}` is not a registered buffer: after module.to('{device}') or .to(torch.float64) it stays "
              "behind; use self.register_buffer",
        "zh": "`{name}` 不是注册的 buffer：执行 module.to('{device}') 或 .to(torch.float64) 之后它留在原处；"
              "请使用 self.register_buffer"},
    "contract.mask_not_saved": {
        "en": "`{name}` is missing from state_dict(): drop persistent=False from register_buffer",
        "zh": "state_dict() 中没有 `{name}`：去掉 register_buffer 的 persistent=False"},
    "contract.forward_failed_on_device": {
        "en": "after module.to('{device}') the forward pass fails ({type}: {detail}); tensors made inside forward "
              "stay on the CPU: use the buffer or device=x.device",
        "zh": "执行 module.to('{device}') 之后前向传播失败（{type}：{detail}）；在 forward 中新建的张量留在 CPU 上："
              "请使用 buffer 或 device=x.device"},
    "contract.tensor_on_cpu": {
        "en": "after module.to('{device}') forward still combines a tensor on the CPU with the others ({op}): "
              "create tensors with device=x.device, or use the registered buffer",
        "zh": "执行 module.to('{device}') 之后 forward 仍把 CPU 上的张量与其他张量一起运算（{op}）："
              "请用 device=x.device 新建张量，或使用已注册的 buffer"},
    "contract.output_on_device": {
        "en": "after module.to('{device}') the output has the wrong shape or is not on {device}",
        "zh": "执行 module.to('{device}') 之后输出的形状不对，或者不在 {device} 上"},
    "contract.input_modified": {
        "en": "the forward pass modified its input x in place; leave x unchanged",
        "zh": "前向传播原地修改了输入 x；请不要改动 x"},
    "contract.batch_mixed": {
        "en": "sample {sample} of the batch gets another output when it is run alone: samples must not see each "
              "other (softmax over the keys, dim=-1, never over the batch)",
        "zh": "batch 中第 {sample} 个样本单独运行时输出不同：样本之间不能互相影响（softmax 要在 key 上做，dim=-1，"
              "而不是在 batch 维上）"},
    "contract.future_leaks": {
        "en": "changing tokens after position {position} changed the outputs up to position {position}: the future "
              "leaks in",
        "zh": "修改位置 {position} 之后的 token 改变了位置 {position} 及之前的输出：未来的信息泄漏进来了"},
    "contract.no_gradient": {
        "en": "no gradient reaches {name}: compute the output from it with tensor operations (no .detach(), .data, "
              "torch.no_grad() or copies)",
        "zh": "梯度没有传到 {name}：输出必须通过张量运算由它计算得到"
              "（不要用 .detach()、.data、torch.no_grad() 或复制）"},
    "contract.gradient_not_finite": {
        "en": "the gradient of {name} is nan or inf", "zh": "{name} 的梯度是 nan 或 inf"},
}
