"""Rung 2 where the first rounds left it false or silent (issue 58): counts of shown entries true of the tensor they
name, labels that fit what follows, a wrong parameter count read against the module's own parts.

Every attempt here is written in a learner's style for these tests; each test fails without the change it covers.
"""

import torch
from torch import nn

from autograder.checking.count_difference import (
    SeenCount,
    count_fact,
    count_line,
    explaining_parts,
    refuted_count_facts,
)
from autograder.checking.departure import find_departure, step
from autograder.checking.tensor_trace import TracedTensor
from autograder.course import catalog
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.declaration import (
    count_parts,
    linear,
    mha_block,
)
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks

SEED = in_notebook.DEFAULT_SEED


def departures(exercise_id, namespace, lang="en"):
    """The rung-2 lines check(...) shows for the attempt: one per failing public check that names no mistake."""
    results = run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                         seed=SEED, diagnose=True)
    return [result.departure for result in results if result.departure]


# ---------------------------------------------------------------------------------------------
# 1a. a count of shown entries is true of the tensor it names


class ScoresScaledByEachQuerysNorm(nn.Module):
    """Every head's scores divided by its query's own norm (plus one), then masked with -inf as the notes do: the
    tensor before the mask shows the future, the tensor in the masked scores' place does not."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads, self.head_dim, self.d_out = num_heads, d_out // num_heads, d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, attention_mask=None):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(2, 3)
        scores = scores / (q.norm(dim=-1, keepdim=True) + 1.0)
        scores = scores.masked_fill(self.mask.bool()[:t, :t], -torch.inf)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, t, self.d_out))


def test_entries_hidden_later_by_the_code_are_not_counted_as_shown():
    """The code hides the future itself, one op after the scaling: "shows 60 entries that the notes' masked
    attention scores hide" would describe its tensor before its mask."""
    for lang in ("en", "zh"):
        lines = departures("multi_head_attention", {"MultiHeadAttention": ScoresScaledByEachQuerysNorm}, lang)
        assert lines and all(catalog.MESSAGES["step.masked_scores"][lang] in line for line in lines), lines
        assert not any("entries that the notes" in line or "被遮住" in line for line in lines), lines


def test_a_count_of_shown_entries_is_not_read_against_another_routes_mask():
    """The notes' scaled scores are unmasked on one route and masked on the other (scaled after the mask): a tensor
    that departs at the scaled scores and is never masked is not "showing entries the notes' scaled scores hide"."""
    torch.manual_seed(0)
    scores = torch.randn(4, 4, dtype=torch.float64)
    future = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    masked = scores.masked_fill(future, -torch.inf)
    root = 2 ** 0.5
    steps = [step("scores", scores), step("scaled_scores", scores / root, masked / root),
             step("masked_scores", masked, masked / root, optional=True),
             step("weights", torch.softmax(masked / root, dim=-1))]
    norms = torch.arange(1.0, 5.0, dtype=torch.float64).unsqueeze(-1)
    theirs = scores / norms  # each row by its own number, never masked
    traced = [TracedTensor("mm", scores, ()), TracedTensor("div", theirs, (0,)),
              TracedTensor("_softmax", torch.softmax(theirs, dim=-1), (1,))]
    departure = find_departure(steps, traced, torch.softmax(theirs, dim=-1))
    assert departure.step == "scaled_scores", departure
    assert not any(fact.kind in ("shown", "hidden") for fact in departure.facts), departure.facts


# ---------------------------------------------------------------------------------------------
# 1b. the label fits what follows


def test_no_departure_label_where_nothing_departs():
    for lang, departs in (("en", "where it departs"), ("zh", "从哪里开始不同")):
        assert departs not in catalog.MESSAGES["label.returned"][lang]
        assert departs not in catalog.MESSAGES["label.raised"][lang]


# ---------------------------------------------------------------------------------------------
# 2. a wrong parameter count against the module's own parts


def count_without_out_proj_bias(module):  # every weight, no bias of the output layer
    return sum(p.numel() for name, p in module.named_parameters() if p.requires_grad and name != "out_proj.bias")


def count_with_the_mask(module):  # the causal mask taken for a parameter, where the module has one by that name
    mask = getattr(module, "mask", None)
    return sum(p.numel() for p in module.parameters() if p.requires_grad) + (0 if mask is None else mask.numel())


def count_less_the_mask(module):  # the causal mask taken away, as if parameters() had counted it
    mask = getattr(module, "mask", None)
    return sum(p.numel() for p in module.parameters() if p.requires_grad) - (0 if mask is None else mask.numel())


def count_tensors(module):  # how many parameter tensors, not how many entries
    return len([p for p in module.parameters() if p.requires_grad])


def test_a_count_missing_one_parameter_names_it_and_the_build_it_counts():
    """GPT-2's block without out_proj's bias: 768 fewer, exactly out_proj.bias, and the count of the same block
    built without biases; both languages."""
    for lang in ("en", "zh"):
        lines = departures("parameter_counts", {"count_parameters": count_without_out_proj_bias}, lang)
        assert lines, lines
        first = lines[0]
        if lang == "en":
            assert first.startswith("how your count differs — your count is 2,359,296, 768 fewer than the 2,360,064 "
                                    "trainable parameters of this module"), first
            assert "exactly the entries of the parameter out_proj.bias (768)" in first, first
            assert "the same module built with no bias in any nn.Linear" in first, first
        else:
            assert first.startswith("你的计数差在哪里：") and "out_proj.bias" in first and "少 768 个" in first, first
        assert "where it departs" not in first and "return" not in first  # no code of the answer


def test_a_count_with_the_mask_buffer_names_the_buffer():
    lines = departures("parameter_counts", {"count_parameters": count_with_the_mask})
    assert lines and "1,048,576 more than the 2,360,064" in lines[0], lines
    assert "the buffer mask (1,048,576)" in lines[0], lines


def test_a_count_less_the_mask_buffer_names_the_buffer_taken_away():
    """A shortfall of exactly the buffer's entries: the buffer, never in the total, taken away from it; a shortfall
    that a buffer and a parameter could both make up names neither (issue 58, a learner's attempt)."""
    lines = departures("parameter_counts", {"count_parameters": count_less_the_mask})
    assert lines and "1,048,576 fewer than the 2,360,064" in lines[0], lines
    assert "exactly the entries of the buffer mask (1,048,576), which are not trainable parameters" in lines[0], lines
    assert "your count takes them away" in lines[0], lines
    zh = departures("parameter_counts", {"count_parameters": count_less_the_mask}, "zh")
    assert zh and "buffer mask（1,048,576）" in zh[0] and "减去了它们" in zh[0], zh
    small = count_parts(mha_block(3, 2, 6, False))  # q, k, v weights 6 each, out_proj 4 + 2; mask 36
    assert count_fact(28 - 36, 28, small) == "taken"
    assert count_fact(28 - 6, 28, small) == ""  # six fewer: any one projection
    tied = {**small, "uncounted": [["mask", 6, "buffer"]]}  # a buffer as large as one projection: nothing named
    assert "exactly" not in count_line(22, 28, tied, "en", catalog.MESSAGES)
    assert count_fact(22, 28, tied) == ""


def test_a_count_of_the_parameter_tensors_is_told_so():
    """No part explains the count: the two counts, and that it is how many trainable parameter tensors there are."""
    lines = departures("parameter_counts", {"count_parameters": count_tensors})
    assert lines and lines[0] == ("how your count differs — your count is 5, 2,360,059 fewer than the 2,360,064 "
                                  "trainable parameters of this module; 5 is exactly how many trainable parameter "
                                  "tensors this module has"), lines
    zh = departures("parameter_counts", {"count_parameters": count_tensors}, "zh")
    assert zh and zh[0].endswith("5 恰好是这个模块中可训练参数张量的个数"), zh
    small = count_parts(mha_block(3, 2, 6, False))  # 5 tensors, 28 entries
    assert "tensors" not in count_line(7, 28, small, "en", catalog.MESSAGES)  # another count: nothing said of it
    assert "tensors" not in count_line(0, 28, small, "en", catalog.MESSAGES)


def count_bytes(module):  # the size in memory, not the number of entries
    return sum(p.numel() * p.element_size() for p in module.parameters() if p.requires_grad)


def count_once_per_shape(module):  # "a shared weight shows up once": parameters of one shape taken for one
    by_shape = {tuple(p.shape): p.numel() for p in module.parameters() if p.requires_grad}
    return sum(by_shape.values())


def test_a_count_of_bytes_is_told_the_multiple_and_the_entry_size():
    """Every check's module gives the learner's count as 4 times its own, 4 being the bytes of a float32 entry: one
    fact on every check, one row."""
    lines = departures("parameter_counts", {"count_parameters": count_bytes})
    assert lines and lines[0].endswith("9,440,256 is exactly 4 times the module's 2,360,064, and 4 is the number of "
                                       "bytes one float32 entry takes: a parameter's size in bytes is not its number "
                                       "of entries"), lines
    zh = departures("parameter_counts", {"count_parameters": count_bytes}, "zh")
    assert zh and "的 4 倍" in zh[0] and "float32 元素所占的字节数" in zh[0], zh
    small = count_parts(mha_block(3, 2, 6, False))  # 28 entries of float32
    assert count_fact(4 * 28, 28, small) == "times_bytes:4"
    assert count_fact(3 * 28, 28, small) == "times:3"
    assert count_fact(8 * 28, 28, {**small, "entry_bytes": [["float64", 8]]}) == "times_bytes:8"
    assert count_fact(4 * 28, 28, {**small, "entry_bytes": []}) == "times:4"  # dtypes mixed: no entry size
    assert "bytes" not in count_line(2 * 28, 28, small, "en", catalog.MESSAGES)
    assert "times" not in count_line(28 + 5, 28, small, "en", catalog.MESSAGES)
    failing = [result for result in run_checks(in_notebook.ReferenceExpectations(), "parameter_counts",
                                               {"count_parameters": count_bytes}, "en", include_hidden=False,
                                               seed=SEED, diagnose=True) if result.status != "passed"]
    assert len(failing) > 1 and {result.count_fact for result in failing} == {"times_bytes:4"}, failing


def test_a_multiple_is_not_said_where_parts_a_right_count_leaves_out_make_up_the_extra():
    """12q's qz-pc-10 counted frozen parameters in; on a module whose frozen entries equal its trainable ones, its 56
    was told "exactly 2 times the module's 28", a doubling the code never does. Parts that make up the extra (even
    two ways, so that none is named) leave the multiple unsaid: it may be chance."""
    plain = {"trainable": [["W_value.weight", 14], ["out_proj.weight", 14]],
             "uncounted": [["W_query.weight", 14, "frozen"], ["W_key.weight", 14, "frozen"],
                           ["mask", 14, "buffer"]], "rebuilt": [], "shapes": [], "entry_bytes": []}
    assert count_fact(56, 28, plain) == ""
    assert "times" not in count_line(56, 28, plain, "en", catalog.MESSAGES)
    assert count_fact(56, 28, {**plain, "uncounted": [["mask", 5, "buffer"]]}) == "times:2"  # 5 cannot make 28


def test_an_extra_that_only_parts_of_one_kind_make_up_is_told_their_kind():
    """Two frozen parameters of 14 out of three make up 28 three ways: which ones were counted is not known, that
    they are frozen parameters is; a buffer that could take part in another set leaves the kind unsaid."""
    frozen = {"trainable": [["W_value.weight", 28]], "rebuilt": [], "shapes": [], "entry_bytes": [],
              "uncounted": [["W_query.weight", 14, "frozen"], ["W_key.weight", 14, "frozen"],
                            ["norm.weight", 14, "frozen"], ["mask", 9, "buffer"]]}
    assert count_fact(56, 28, frozen) == "more:frozen"
    line = count_line(56, 28, frozen, "en", catalog.MESSAGES)
    assert line.endswith("the 28 extra are exactly the entries of some of this module's frozen parameters, which are "
                         "not trainable parameters of the module (the frozen parameter W_query.weight (14), the frozen "
                         "parameter W_key.weight (14) and the frozen parameter norm.weight (14)): more than one set of "
                         "them adds up to that number, and no set with any other of its parts does"), line
    assert "冻结的参数" in count_line(56, 28, frozen, "zh", catalog.MESSAGES)
    mixed = {**frozen, "uncounted": [*frozen["uncounted"], ["positions", 14, "buffer"]]}
    assert count_fact(56, 28, mixed) == "" and "some of" not in count_line(56, 28, mixed, "en", catalog.MESSAGES)


def test_a_count_less_all_its_buffers_is_told_so_where_other_sets_make_the_shortfall_too():
    """12r's rz-pc-11 subtracted the buffers: on a module whose buffer's 16 entries frozen parts also add up to, the
    count was told only "16 fewer" while the next check named the buffer. All the buffers is said where no set of
    trainable parameters (left out) makes up the shortfall too."""
    frozen = {"trainable": [["W_key.weight", 20], ["W_key.bias", 5], ["W_value.weight", 3]], "rebuilt": [],
              "shapes": [], "entry_bytes": [],
              "uncounted": [["mask", 16, "buffer"], ["scale", 4, "frozen"], ["W_query.weight", 12, "frozen"]]}
    assert count_fact(12, 28, frozen) == "taken"
    line = count_line(12, 28, frozen, "en", catalog.MESSAGES)
    assert line.endswith("the 16 missing are exactly the entries of all this module's buffers (the buffer mask (16)), "
                         "which are not trainable parameters and so were never in the total: your count takes them "
                         "away from it"), line
    assert "所有 buffer" in count_line(12, 28, frozen, "zh", catalog.MESSAGES)
    assert count_fact(13, 28, frozen) == "" and "buffers" not in count_line(13, 28, frozen, "en", catalog.MESSAGES)
    no_buffers = {**frozen, "uncounted": [["scale", 16, "frozen"]]}
    assert "all this module's buffers" not in count_line(12, 28, no_buffers, "en", catalog.MESSAGES)
    key_left_out = {**frozen, "trainable": [["W_key.weight", 12], ["W_key.bias", 4], ["W_value.weight", 12]]}
    assert count_fact(12, 28, key_left_out) == ""  # W_key's 16 entries left out give 12 as well


def test_a_count_of_one_parameter_per_shape_is_told_so():
    lines = departures("parameter_counts", {"count_parameters": count_once_per_shape})
    assert lines and lines[0].endswith("590,592 is exactly the entries of this module's trainable parameters with only "
                                       "one parameter counted for each shape: 4 of its 5 parameters have the shape of "
                                       "another one, yet each is a parameter of its own"), lines
    zh = departures("parameter_counts", {"count_parameters": count_once_per_shape}, "zh")
    assert zh and "按形状各只算一个" in zh[0] and "5 个参数中有 4 个" in zh[0], zh
    small = count_parts(mha_block(3, 2, 6, False))  # q, k, v (2, 3), out_proj (2, 2) and (2,): 6 + 4 + 2
    assert count_fact(12, 28, small) == "once_per_shape"
    distinct = count_parts(linear(3, 4))  # weight (4, 3) and bias (4,): no two shapes alike, nothing said of shapes
    assert "shape" not in count_line(4, 16, distinct, "en", catalog.MESSAGES)


def test_parts_are_named_only_when_one_set_of_them_makes_up_the_difference():
    assert explaining_parts(768, [589824, 589824, 768]) == (2,)
    assert explaining_parts(589824, [589824, 589824, 768]) is None  # which projection: not known
    assert explaining_parts(7, [3, 4, 3]) is None  # 3 + 4 twice
    assert explaining_parts(10, [3, 4, 3]) == (0, 1, 2)
    assert explaining_parts(11, [3, 4, 3]) is None
    assert explaining_parts(0, [3]) is None
    small = count_parts(mha_block(3, 2, 6, False))
    assert "exactly" not in count_line(0, 28, small, "en", catalog.MESSAGES)  # all of them: the counts say it
    two = count_line(28 + 36 + 1, 28, {**small, "uncounted": [["mask", 36, "buffer"], ["scale", 1, "frozen"]]}, "en",
                     catalog.MESSAGES)
    assert "exactly the entries of the buffer mask (36) and the frozen parameter scale (1)," in two, two
    # The notes' small block: q, k, v weights of 6 entries each, out_proj 4 + 2: six fewer is any one projection.
    parts = count_parts(mha_block(3, 2, 6, False))
    assert "exactly" not in count_line(22, 28, parts, "en", catalog.MESSAGES)
    assert count_line(28, 28, parts, "en", catalog.MESSAGES) == ""


def test_a_build_is_said_only_when_it_alone_gives_the_count():
    parts = count_parts(mha_block(5, 4, 6, True))  # d_in != d_out, biases: a swapped build counts otherwise
    swapped = dict(parts["rebuilt"])["swapped"]
    right = sum(size for _name, size in parts["trainable"])
    assert right == 3 * (5 * 4 + 4) + 4 * 4 + 4 and swapped == 3 * (5 * 4 + 5) + 4 * 4 + 4
    line = count_line(swapped, right, parts, "en", catalog.MESSAGES)
    assert "in_features and out_features swapped in every nn.Linear" in line, line
    # Two builds of one count name neither.
    doubled = {**parts, "rebuilt": [["swapped", 7], ["bias_on", 7]]}
    assert "built with" not in count_line(7, 80, doubled, "en", catalog.MESSAGES)


# ---------------------------------------------------------------------------------------------
# 3. which of the learner's right steps the tensor in the step's place is made from


class ContextFromTheKeys(nn.Module):
    """Weights right, then multiplied with the keys where the values go."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys, queries, _values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ keys


class ContextOfDoubledWeights(nn.Module):
    """The weights doubled by a tensor of its own before the product: the op that makes the context reads a tensor
    that is no step of the notes, so nothing is said of what it is made from."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys, queries, values = x @ self.W_key, x @ self.W_query, x @ self.W_value
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return (weights + torch.eye(weights.shape[0])) @ values


def test_a_tensor_of_other_numbers_is_told_the_right_steps_it_is_made_from():
    en = departures("self_attention_v1", {"SelfAttention_v1": ContextFromTheKeys})
    # The op read only their right steps: which product of them it is (step_relations.alternative_computation).
    # The keys in the values' place leave W_value out of the output: the same cause, said on the same line (the
    # unused parameter folds under it, autograder.running.diagnosing._unused_parameter_folds).
    assert en and ("is the matrix product of the notes' attention weights and the notes' keys, not the notes' context "
                   "vectors; the notes compute their context vectors from W_value, and your output does not depend on "
                   "W_value at all") in en[0], en
    zh = departures("self_attention_v1", {"SelfAttention_v1": ContextFromTheKeys}, "zh")
    assert zh and "是笔记中的注意力权重与笔记中的key的矩阵乘积，而不是笔记中的上下文向量；" in zh[0], zh
    assert "你的输出根本不依赖 W_value" in zh[0], zh


def test_no_provenance_is_said_through_a_tensor_that_is_no_step():
    lines = departures("self_attention_v1", {"SelfAttention_v1": ContextOfDoubledWeights})
    assert lines and not any("computed from" in line for line in lines), lines


def context_of_the_scores(inputs):  # the weights mix the score rows, not the input vectors
    scores = inputs @ inputs.T
    weights = torch.softmax(scores, dim=-1)
    return weights @ scores


def test_a_result_of_another_shape_is_told_the_right_steps_it_is_made_from():
    """No tensor of the context vectors' size is made: the result itself is in their place, made by one product
    of two of the learner's right steps."""
    # Which product of them (step_relations.alternative_computation, issue 58).
    for lang, words in (("en", "is the matrix product of the notes' attention weights and the notes' attention "
                                "scores, not the notes' context vectors"),
                        ("zh", "是笔记中的注意力权重与笔记中的注意力分数的矩阵乘积")):
        lines = departures("context_vectors", {"context_vectors": context_of_the_scores}, lang)
        assert lines and words in lines[0], lines
        assert {"en": "the result your function returns has shape", "zh": "你的函数返回的结果形状是"}[lang] in lines[0]


def huge_count(module):  # a count far past any module's
    return 10**40


def test_a_hostile_count_is_told_as_a_number_and_costs_nothing():
    """A count of 10**40, or below 0: the line says the two numbers; no search of parts runs past its bound."""
    parts = count_parts(mha_block(768, 768, 1024, False))
    assert "10,000,000,000,000,000,000,000,000,000,000,000,000,000" in count_line(10**40, 2360064, parts, "en",
                                                                                catalog.MESSAGES)
    assert "2,360,069 fewer" in count_line(-5, 2360064, parts, "en", catalog.MESSAGES)
    assert explaining_parts(2**17 - 1, [2**bit for bit in range(17)]) is None  # more parts than the bound
    lines = departures("parameter_counts", {"count_parameters": huge_count})
    assert lines and all(line.startswith("how your count differs — your count is 10,000,") for line in lines), lines


class WeightsMixTheInput(nn.Module):
    """No values projected: the weights mix the input itself."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        queries, keys = self.W_query(x), self.W_key(x)
        weights = torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ x


def test_a_result_made_from_a_right_step_and_the_input_is_told_so():
    """The values are never made: past the step where it departs, the result is said to be made from the learner's
    right weights and the input their function was given (the tensor both projections read)."""
    # Which product of them (step_relations.alternative_computation, issue 58).
    for lang, words in (("en", "the result your function returns is the matrix product of the notes' attention "
                                "weights and the input your function was given, not the notes' context vectors"),
                        ("zh", "你的函数返回的结果是笔记中的注意力权重与传给你的函数的输入的矩阵乘积")):
        lines = departures("self_attention_v2", {"SelfAttention_v2": WeightsMixTheInput}, lang)
        assert lines and words in lines[0], lines
        assert catalog.MESSAGES["step.values"][lang] in lines[0]


def count_nonzero_entries(module):
    """Counts the entries that are not zero: a LayerNorm's bias starts at zeros and is missed."""
    return sum(int(torch.count_nonzero(parameter)) for parameter in module.parameters() if parameter.requires_grad)


def test_a_fact_the_learners_other_counts_contradict_is_not_said():
    """Non-zero entries give one parameter per shape on a module whose zero LayerNorm bias has its weight's shape,
    and the right count on the notes' module, where one per shape is far less: the fact is no mechanism of the
    code, so it is unsaid (12v's vz-pc-07)."""
    lines = departures("parameter_counts", {"count_parameters": count_nonzero_entries})
    assert lines and not any("each shape" in line for line in lines), lines
    small = count_parts(mha_block(3, 2, 6, False))
    assert refuted_count_facts([SeenCount(12, 28, small)]) == frozenset()  # one per shape on its only module
    assert refuted_count_facts([SeenCount(12, 28, small), SeenCount(28, 28, small)]) == {"once_per_shape"}
    assert count_fact(12, 28, small, refuted={"once_per_shape"}) == ""
    assert "each shape" not in count_line(12, 28, small, "en", catalog.MESSAGES, refuted={"once_per_shape"})
    assert refuted_count_facts([SeenCount(56, 28, small), SeenCount(50, 25, small)]) == frozenset()  # twice, twice
