"""A parameter the output never uses and the value check's departure are one cause, one message (issue 58 point 3).

A copy-pasted projection (the values computed with the keys' weights) or a dropped bias makes two checks fail: a value
check whose computation departs from the notes at the step the parameter makes, and the module contract's gradient
check, which proves the parameter unused (moving its values leaves the output as it was). The two fold into one row
only where values prove the link on the value check's own case: moving that parameter's values in the learner's
module moves the notes' departing step (autograder.running.diagnosing._unused_parameter_step; steps the learner's
code reproduced before it may move too: a tensor computed from the parameter, then left out of the output). A
departure at a step the parameter does not make stays a row of its own. The attempts below are written here, in a
learner's style.
"""

import contextlib
import io

import pytest
import torch
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import FAILED, Cause, CheckResult
from autograder.checking.departure import Departure
from autograder.checking.feedback import rows
from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.diagnosing import _unused_parameter_step
from autograder.running.notebook_runtime import NotebookRuntime
from tests.check_helpers import failing_rows

SAME_REASON = {"en": ("more check", "for the same reason"), "zh": ("另有", "因同样的原因未通过")}


def link(step, name, lang):
    template = catalog.MESSAGES["departure.parameter_unused"][lang]
    return template.format(step=catalog.MESSAGES[f"step.{step}"][lang], name=name)


# ---------------------------------------------------------------------------------------------
# learner-style attempts, written for these tests


class ValuesThroughTheKeyLayer(nn.Module):
    """Three layers made, the keys' line copied for the values and its layer's name left unchanged."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_key(x)
        att = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        return att @ v


class QueriesWithoutTheirBias(nn.Module):
    """The query layer's weight used by hand, its bias forgotten; the other layers called."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = x @ self.W_query.weight.T
        k, v = self.W_key(x), self.W_value(x)
        att = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        return att @ v


class ScoresAgainstTheValues(nn.Module):
    """The keys computed, then the values typed where the keys go in the scores: the keys are left unused."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = torch.softmax(q @ v.T / k.shape[-1] ** 0.5, dim=-1)
        return att @ v


class DoubledQueriesAndValuesThroughTheKeys(nn.Module):
    """Two causes: the queries made from the doubled input "for a sharper softmax", and the values through the keys'
    layer."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q = self.W_query(2 * x)
        k = self.W_key(x)
        att = torch.softmax(q @ k.T / k.shape[-1] ** 0.5, dim=-1)
        return att @ self.W_key(x)


def printed(module_class, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("self_attention_v2", module_class, hint=2)
    return output.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("attempt", "step", "name"), [
    (ValuesThroughTheKeyLayer, "values", "W_value.weight"),
    (QueriesWithoutTheirBias, "queries", "W_query.bias"),
    (ScoresAgainstTheValues, "scores", "W_key.weight"),
])
def test_the_unused_parameter_is_said_on_the_departing_row_and_its_contract_check_folds_under_it(
        attempt, step, name, lang, monkeypatch):
    text = printed(attempt, lang, monkeypatch)
    assert link(step, name, lang) in text, text
    failing = failing_rows(text)
    assert all(SAME_REASON[lang][1] in row for row in failing[1:]), text
    contract_words = catalog.MESSAGES["contract.parameter_unused"][lang].format(name=name)
    assert contract_words not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_departure_at_a_step_the_parameter_does_not_make_stays_its_own_row(lang, monkeypatch):
    text = printed(DoubledQueriesAndValuesThroughTheKeys, lang, monkeypatch)
    assert catalog.MESSAGES["contract.parameter_unused"][lang].format(name="W_value.weight") in text, text
    assert link("queries", "W_value.weight", lang) not in text, text
    assert link("values", "W_value.weight", lang) not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notes_module_gets_no_failing_row_and_no_link(lang, monkeypatch):
    text = printed(solutions.SelfAttention_v2, lang, monkeypatch)
    assert "✘" not in text and link("values", "W_value.weight", lang) not in text, text


def result(check_id, *, misconception=None, key="value.differs", departure_step="", cause_of_step=""):
    return CheckResult(check_id, "self_attention_v2", 0.0, 1.0, FAILED, misconception, check_id, False,
                       title=check_id, cause=Cause(misconception, key, (("name", "W_value.weight"),)),
                       departure_step=departure_step, cause_of_step=cause_of_step)


def test_a_contract_failure_proven_the_cause_of_the_departing_step_folds_under_its_row():
    shown = result("values", departure_step="values")
    contract = result("contract", misconception="parameter_unused", key="contract.parameter_unused",
                      cause_of_step="values")
    table = rows([shown, contract])
    assert len(table) == 1 and table[0].same == [contract]


@pytest.mark.parametrize("contract", [
    result("contract", misconception="parameter_unused", key="contract.parameter_unused"),  # no link proven
    result("contract", misconception="parameter_unused", key="contract.parameter_unused", cause_of_step="keys"),
])
def test_a_contract_failure_without_a_proven_link_to_that_step_stays_its_own_row(contract):
    assert len(rows([result("values", departure_step="values"), contract])) == 2


# ---------------------------------------------------------------------------------------------
# counts that are the same fact of each check's own module; the same tensor argument changed by one call


def one_per_trainable_tensor(module):
    """Counts the trainable tensors rather than their entries."""
    return sum(1 for parameter in module.parameters() if parameter.requires_grad)


def only_computed_tensors(module):
    """Counts the entries of parameters that came out of an operation: a module's own parameters never do."""
    return sum(parameter.numel() for parameter in module.parameters() if parameter.grad_fn is not None)


def printed_counts(attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check("parameter_counts", attempt, hint=2)
    return output.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("attempt", [one_per_trainable_tensor, only_computed_tensors])
def test_a_count_that_is_the_same_fact_on_every_module_is_one_row(attempt, lang, monkeypatch):
    text = printed_counts(attempt, lang, monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2 and SAME_REASON[lang][1] in failing[1] and SAME_REASON[lang][1] not in failing[0], text


@pytest.mark.slow
def test_the_notes_count_gets_no_failing_row(monkeypatch):
    assert "✘" not in printed_counts(solutions.count_parameters, "en", monkeypatch)


def counted(check_id, got, fact):
    return CheckResult(check_id, "parameter_counts", 0.0, 1.0, FAILED, None, f"count_parameters returned {got}",
                       False, title=check_id, cause=Cause(None, "count.wrong", (("got", str(got)),)), count_fact=fact)


def test_counts_with_different_facts_or_none_proven_stay_rows_of_their_own():
    assert len(rows([counted("a", 5, "tensors"), counted("b", 0, "none")])) == 2
    assert len(rows([counted("a", 5, ""), counted("b", 8, "")])) == 2
    assert len(rows([counted("a", 5, "tensors"), counted("b", 8, "tensors")])) == 1


def changed(check_id, part, differ, size, shape):
    fields = {"caller": "to_torch_multihead", "argument": "mha", "part": part, "differ": differ, "size": size,
              "shape_before": shape, "shape_after": shape}
    message = f"your to_torch_multihead changed the mha: {differ} of the {size} entries of its {part} differ"
    return CheckResult(check_id, "torch_equivalence", 0.0, 1.0, FAILED, None, message, False, title=check_id,
                       cause=Cause(None, "argument.part_values_changed",
                                   tuple(sorted((name, str(value)) for name, value in fields.items()))))


def test_the_same_tensor_argument_changed_on_each_checks_sizes_is_one_row():
    table = rows([changed("a", "out_proj.weight", 16, 16, (4, 4)), changed("b", "out_proj.weight", 100, 100, (10, 10))])
    assert len(table) == 1


def test_another_tensor_argument_changed_stays_a_row_of_its_own():
    assert len(rows([changed("a", "out_proj.weight", 16, 16, (4, 4)),
                     changed("b", "in_proj_weight", 48, 48, (12, 4))])) == 2


class _StateCheck:
    """A check whose steps are computed from the record's state (queries from W_query, values from W_value), or that
    cannot compute them on a moved state (`refuses`)."""

    def __init__(self, refuses=False):
        self.refuses = refuses
        self.probe = None

    def cases(self):
        return [{"x": torch.eye(2)}]

    def expectations(self, index, record, case):
        state = record["state"]
        if self.refuses and not torch.equal(state["W_value"], torch.ones(2, 2)):
            raise IndexError("the learner's state holds no such entry")
        x = case["x"]
        queries = x @ state["W_query"]
        return {"steps": [("queries", [queries]), ("values", [x @ state["W_value"]]),
                          ("scores", [queries @ queries.T])]}


@pytest.mark.parametrize(("refuses", "name", "step", "linked"), [
    (False, "W_value", "values", True),
    (False, "W_query", "values", False),  # the departing step does not move with it (the matched queries do)
    (False, "W_value", "queries", False),  # the departing step does not move with it
    (False, "W_query", "scores", True),  # the matched queries move with it too: computed, then left unused
    (True, "W_value", "values", False),  # nothing computable on the moved state: nothing proven, nothing raised
])
def test_the_link_from_a_parameter_to_a_step_is_proven_by_moving_its_values(refuses, name, step, linked):
    record = {"state": {"W_query": torch.ones(2, 2), "W_value": torch.ones(2, 2)}}
    failing = CheckResult("v", "self_attention_v1", 0.0, 1.0, FAILED, None, "v", False, failed_case=0)
    matched = {"values": ("queries",), "scores": ("queries", "values"), "queries": ()}[step]
    departure = Departure(matched=matched, step=step)
    assert _unused_parameter_step(failing, _StateCheck(refuses), [record], departure, name) is linked


def test_the_student_kits_stored_moves_are_read_only_for_a_tensor_of_the_stored_name_and_shape():
    """The kit has no reference to move: its build stores, per module case, which steps each state tensor moves
    (autograder.checking.parameter_moves.stored_table) for the weights it loads. What it reads back is stored data,
    answered only for the learner's tensor of that name and shape; anything else proves nothing."""
    from autograder.checking.parameter_moves import ParameterMoves, stored_parameter_moves

    table = {"W_key.weight": {"shape": [2, 3], "declared": ["queries", "keys"], "moved": ["keys"]}}
    record = {"state": {"W_key.weight": torch.zeros(2, 3)}}
    assert stored_parameter_moves(table, record, "W_key.weight") == ParameterMoves(
        frozenset({"queries", "keys"}), frozenset({"keys"}))
    assert stored_parameter_moves(table, {"state": {"W_key.weight": torch.zeros(3, 2)}}, "W_key.weight") is None
    assert stored_parameter_moves(table, record, "W_value.weight") is None
    for hostile in (None, [], {"W_key.weight": "keys"}, {"W_key.weight": {"shape": [2, 3], "moved": "keys"}}):
        assert stored_parameter_moves(hostile, record, "W_key.weight") is None


def test_the_kit_build_stores_the_moves_the_full_kit_computes_on_the_same_weights():
    """What the build stores for a public module case is what moving the parameter in the reference's state gives:
    the queries' weight moves the queries and every step after them, never the keys."""
    from autograder.checking.parameter_moves import STEPS_MOVED, parameter_moves
    from autograder.checking.probing import run_probe
    from autograder.course.kit_recording import record_case
    from autograder.running.runner import cases_for

    names = {"SelfAttention_v2": solutions.SelfAttention_v2}
    stored_any = False
    for check in catalog.checks_of("self_attention_v2", include_hidden=False):
        case = cases_for(check, 123)[0]
        expected = record_case(check, case, tuple(names)).expected
        if STEPS_MOVED not in expected:
            continue
        stored_any = True
        data = run_probe(check.probe, names, case)
        computed = parameter_moves(lambda record, check=check, case=case: check.expect(record, case), data,
                                   "W_query.weight")
        assert computed is not None and "queries" in computed.moved and "keys" not in computed.moved
        assert expected[STEPS_MOVED]["W_query.weight"]["moved"] == sorted(computed.moved)
    assert stored_any
