"""A step the learner's code computes slice by slice (a loop over the tokens) is not where it departs (issue 58).

No single tensor of a row-by-row loop holds the notes' scores, but a tensor of the code holds each of their rows:
rung 2 once told such code it "departs from the notes at their first step", which is false of it. These attempts
are written for this test, as learners write loops."""

import torch
from torch import nn

from autograder.checking.feedback import table
from autograder.course import catalog
from autograder.course.exercises import exercise as find_exercise
from autograder.running import in_notebook
from autograder.running.notebook_runtime import run_checks

SEED = in_notebook.DEFAULT_SEED


def checked(exercise_id, namespace, lang="en"):
    return run_checks(in_notebook.ReferenceExpectations(), exercise_id, namespace, lang, include_hidden=False,
                      seed=SEED, diagnose=True)


def context_by_rows_in_float32(inputs):  # right row by row, then handed back in float32
    rows = []
    for query in inputs:
        weights = torch.softmax(inputs @ query, dim=0)
        rows.append((weights[:, None] * inputs).sum(dim=0))
    return torch.stack(rows).float()


def context_by_rows(inputs):  # a right program: the same loop, the input's dtype kept
    rows = []
    for query in inputs:
        weights = torch.softmax(inputs @ query, dim=0)
        rows.append((weights[:, None] * inputs).sum(dim=0))
    return torch.stack(rows)


def context_by_rows_halved(inputs):  # a loop whose rows are wrong: each query's scores halved
    rows = []
    for query in inputs:
        weights = torch.softmax(inputs @ query / 2, dim=0)
        rows.append((weights[:, None] * inputs).sum(dim=0))
    return torch.stack(rows)


class ScoresRowByRowInAFloat32Buffer(nn.Module):  # the scores written row by row into a float32 buffer
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = torch.zeros(x.shape[0], x.shape[0])
        for row in range(x.shape[0]):
            scores[row] = queries[row] @ keys.T
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values


def test_a_loop_that_computes_the_steps_row_by_row_is_not_told_it_departs_at_the_first_step():
    for lang in ("en", "zh"):
        results = checked("context_vectors", {"context_vectors": context_by_rows_in_float32}, lang)
        failing = [result for result in results if result.status != "passed"]
        assert failing, "float32 is not the input's float64"
        assert not any(result.departure for result in failing), [result.departure for result in failing]
    assert all(result.status == "passed" for result in checked("context_vectors", {"context_vectors": context_by_rows}))


def test_a_loop_whose_rows_are_wrong_still_departs_at_the_first_step():
    results = checked("context_vectors", {"context_vectors": context_by_rows_halved})
    shown = [result.departure for result in results if result.departure]
    assert any("your code departs from the notes at their first step, the attention scores" in line
               for line in shown), shown


def test_scores_written_row_by_row_are_held_once_written_then_the_step_the_code_raised_before():
    """Each row written into the buffer (a copy_ into a view of it) is traced as a write: once every row is in, the
    buffer holds the notes' scores (float32 rounding), and the raise comes after the weights."""
    lines = {}
    for lang in ("en", "zh"):
        results = checked("self_attention_v1", {"SelfAttention_v1": ScoresRowByRowInAFloat32Buffer}, lang)
        lines[lang] = [result.departure for result in results if result.departure]
    assert any(
        "your code reproduces the notes' queries, keys, values, attention scores, scaled attention scores, attention "
        "weights; then it raised before any of its tensors held the notes' context vectors" in line
        for line in lines["en"]), lines
    assert not any("has shape" in line or "attention scores:" in line for line in lines["en"]), lines
    told = ("你的代码算出了与笔记相同的query、key、value、注意力分数、缩放后的注意力分数、注意力权重；"
            "之后，在它算出的张量中还没有一个等于笔记中的上下文向量时，就抛出了异常")
    assert any(told in line for line in lines["zh"]), lines


def softmax_entry_by_entry_in_float32(x):  # each exponential its own tensor, the quotients kept in a float32 buffer
    total = 0
    for value in x:
        total = total + torch.exp(value)
    out = torch.zeros(len(x))
    for i in range(len(x)):
        out[i] = torch.exp(x[i]) / total
    return out


def softmax_entry_by_entry_base_two(x):  # the same loop with powers of 2: its entries are not the notes' exponentials
    total = 0
    for value in x:
        total = total + 2 ** value
    return torch.stack([2 ** value / total for value in x])


def test_a_loop_that_computes_a_vector_entry_by_entry_is_not_told_it_departs_at_the_first_step():
    """Each exponential is a tensor of one number: the notes' exponentials are all there, one entry at a time, so the
    code does not depart there (12q's qy-sn-10 was told "none of your tensors holds it"); what fails is the dtype
    its buffer keeps, which rung 1 says."""
    for lang in ("en", "zh"):
        results = checked("softmax_naive", {"softmax_naive": softmax_entry_by_entry_in_float32}, lang)
        failing = [result for result in results if result.status != "passed"]
        assert failing, "float32 is not the input's float64"
        assert not any(result.departure for result in failing), [result.departure for result in failing]
    results = checked("softmax_naive", {"softmax_naive": softmax_entry_by_entry_base_two})
    shown = [result.departure for result in results if result.departure]
    assert any("your code departs from the notes at their first step, the exponentials" in line
               for line in shown), shown


# ------------------------------------------------------------------ a raise told where, never as a departure


def transfer_by_assigning_plain_tensors(sa_v1, sa_v2):  # a transposed tensor is no nn.Parameter: the assignment raises
    for name in ("W_query", "W_key", "W_value"):
        setattr(sa_v1, name, getattr(sa_v2, name).weight.detach().T.clone())
    return sa_v1


def rung_three(exercise_id, namespace, lang):
    results = checked(exercise_id, namespace, lang)
    return table(find_exercise(exercise_id), results, lang, hidden=False, messages=catalog.MESSAGES, rung=3)


def test_a_line_that_says_where_the_code_raised_is_not_called_a_departure_at_the_next_rung():
    for lang in ("en", "zh"):
        text = rung_three("transfer_weights", {"load_v2_weights_into_v1": transfer_by_assigning_plain_tensors}, lang)
        raised = catalog.MESSAGES["label.raised"][lang].split("{")[0]
        assert raised in text, text
        assert catalog.MESSAGES["ladder.raised_stated"][lang] in text, text
        assert catalog.MESSAGES["ladder.departure_stated"][lang] not in text, text
    # A row that says where a computation departs keeps its own line (a control of the same exercise).
    text = rung_three("self_attention_v1", {"SelfAttention_v1": ScoresTimesThree}, "en")
    assert "where it departs" in text and catalog.MESSAGES["ladder.raised_stated"]["en"] not in text, text
    assert catalog.MESSAGES["ladder.departure_stated"]["en"] in text, text


class ScoresTimesThree(nn.Module):  # the scores tripled: a departure at the scaled scores
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries, keys, values = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = queries @ keys.T * 3.0
        return torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values


def context_vectors_flattened(inputs):  # every step right, the result handed back as one long vector
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return (weights @ inputs).reshape(-1)


def test_a_line_that_says_every_step_matches_is_not_called_a_departure_at_the_next_rung():
    for lang in ("en", "zh"):
        text = rung_three("context_vectors", {"context_vectors": context_vectors_flattened}, lang)
        assert catalog.MESSAGES["ladder.result_stated"][lang] in text, text
        assert catalog.MESSAGES["ladder.departure_stated"][lang] not in text, text
    text = rung_three("context_vectors", {"context_vectors": context_vectors_flattened}, "en")
    assert ("your function returns the notes' context vectors number for number, in their order, but in shape (18,) "
            "instead of (6, 3)") in text, text


def context_vectors_viewed(inputs):  # the same, with view: this code does call view
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return (weights @ inputs).view(-1)


def context_vectors_flattened_and_viewed(inputs):  # flatten, then view: both called, only flatten proven a call
    weights = torch.softmax(inputs @ inputs.T, dim=-1)
    return (weights @ inputs).flatten().view(-1)


def test_the_shape_message_names_view_only_where_no_other_call_runs_it():
    def message(function):
        results = checked("context_vectors", {"context_vectors": function})
        return next(result.message for result in results if result.id == "context_vectors.notes")
    assert "The operations your code ran include reshape:" in message(context_vectors_flattened)
    assert "The operations your code ran include view:" in message(context_vectors_viewed)
    # Saying less: view run by flatten cannot be told from view called, so only flatten is named.
    assert "The operations your code ran include flatten:" in message(context_vectors_flattened_and_viewed)


# ------------------------------------------------------------------ dropout left on, proven from the values


class AttentionV1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def weights(self, x):
        queries, keys = x @ self.W_query, x @ self.W_key
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1), x @ self.W_value


class DropoutLeftOn(AttentionV1):  # F.dropout trains by default: a quarter of the weights zeroed, the rest * 4/3
    def forward(self, x):
        weights, values = self.weights(x)
        return torch.nn.functional.dropout(weights, p=0.25) @ values


class SmallWeightsZeroed(AttentionV1):  # zeroes the small weights without rescaling the others: not dropout
    def forward(self, x):
        weights, values = self.weights(x)
        return (weights * (weights > 0.17)) @ values


class Right(AttentionV1):
    def forward(self, x):
        weights, values = self.weights(x)
        return weights @ values


def departure_lines(namespace, lang="en"):
    return [result.departure for result in checked("self_attention_v1", namespace, lang) if result.departure]


def test_dropout_left_on_is_told_from_the_values_of_the_tensor_it_makes():
    torch.manual_seed(0)
    lines = {lang: departure_lines({"SelfAttention_v1": DropoutLeftOn}, lang) for lang in ("en", "zh")}
    assert any("then departs from them at the context vectors" in line and
               "a tensor your code made from your attention weights sets " in line and
               " of their entries to 0 and multiplies the others by 1.33, what dropout does while training" in line
               for line in lines["en"]), lines
    assert any("你的代码由你的注意力权重算出的一个张量把其中" in line
               and "其余的都乘以 1.33，这正是训练时 dropout 所做的" in line for line in lines["zh"]), lines
    # Entries zeroed without the others rescaled, and a right program, are told no dropout.
    assert not any("dropout" in line for line in departure_lines({"SelfAttention_v1": SmallWeightsZeroed}))
    assert all(result.status == "passed" for result in checked("self_attention_v1", {"SelfAttention_v1": Right}))
