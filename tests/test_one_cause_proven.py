"""One message per cause across an exercise's checks, folded by a proven cause, never by text alone (issue 58 point 3).

Two causes that read as several rows before: the very raise a mistake's variant reproduced on one check, met again by
other checks (the same type, the same text with its numbers, at the same line), is that mistake there too, not "an
error; nothing shows that the mistake above causes it"; and an output whose shape is the expected one with axes of
size 1 added or dropped at the same end on every check's own input is one fact of the code, one row. Two different
causes in one attempt stay two rows. The attempts below are written here, in a learner's style.
"""

import contextlib
import io

import pytest
import torch

from attnkit import solutions
from autograder.checking.attempt import one_diagnosis
from autograder.checking.check_types import FAILED, Cause, CheckResult
from autograder.checking.feedback import rows
from autograder.course import catalog
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import StoredExpectations
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime
from tests.check_helpers import failing_rows

SAME_REASON = {"en": ("more check", "for the same reason"), "zh": ("另有", "因同样的原因未通过")}
NO_KNOWN = {"en": "no known mistake reproduces", "zh": "没有哪个已知的错误能重现"}
FOLLOW_ON = {lang: catalog.MESSAGES["fold.follow_on"][lang].split("；")[0].split(";")[0] for lang in ("en", "zh")}
RAISED = "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"
MISTAKE = "weights_not_transposed"


# ---------------------------------------------------------------------------------------------
# learner-style attempts, written for these tests


def copied_in_a_loop(sa_v1, sa_v2):
    """v2's layers copied into v1 one name at a time, each weight as nn.Linear stores it (outputs first)."""
    for name in ("W_query", "W_key", "W_value"):
        with torch.no_grad():
            getattr(sa_v1, name).copy_(getattr(sa_v2, name).weight)
    return sa_v1


def loaded_untransposed(sa_v1, sa_v2):
    """v2's state dict loaded into v1 with the layers' names made v1's, each weight as nn.Linear stores it: torch's
    own loader raises on a non-square pair, from no line of the learner's."""
    sa_v1.load_state_dict({name.split(".")[0]: weight for name, weight in sa_v2.state_dict().items()})
    return sa_v1


class LayersAsMatricesQueriesFirst(solutions.SelfAttention_v2):
    """Each layer's weight multiplied as it is stored, the queries computed first (the book computes the keys
    first): x @ W_query.weight raises on the notes' (3, 2) module."""

    def forward(self, x):
        queries = x @ self.W_query.weight
        keys = x @ self.W_key.weight
        values = x @ self.W_value.weight
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


def mask_with_a_batch_axis(num_tokens):
    """The future hidden, with a leading axis of size 1 "so that it broadcasts over a batch"."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)[None]


def merged_then_squeezed(x):
    """The heads merged as the notes do, then squeezed "to tidy up": a batch of one loses its batch axis."""
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim).squeeze(0)


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


def printed(kit, kit_vectors, exercise_id, attempt, lang, monkeypatch, hint=2):
    """What check(...) prints for `attempt` at rung `hint`, live ("live") or from the kit's stored vectors."""
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    expectations = (in_notebook.ReferenceExpectations() if kit == "live"
                    else StoredExpectations(lambda: kit_vectors))
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(expectations).check(exercise_id, attempt, hint=hint)
    return output.getvalue()


def folded_count(row, lang):
    first, rest = SAME_REASON[lang]
    assert first in row and rest in row, row
    return int(row.split(first)[0].split()[-1]) if lang == "en" else int(row.split(first)[1].split()[0])


# ---------------------------------------------------------------------------------------------
# the very raise a variant reproduced, met by other checks


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_the_raise_the_proven_mistake_reproduced_is_that_mistake_on_every_check_it_stops(kit, lang, kit_vectors,
                                                                                         monkeypatch):
    text = printed(kit, kit_vectors, "transfer_weights", copied_in_a_loop, lang, monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2, text
    assert folded_count(failing[1], lang) == 3, text
    assert FOLLOW_ON[lang] not in text and NO_KNOWN[lang] not in text, text
    assert catalog.MISCONCEPTIONS_BY_ID[MISTAKE].name[lang] in text, text


@pytest.mark.slow
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_a_raise_from_torchs_own_loader_is_the_proven_mistake_on_every_check_it_stops(kit, kit_vectors, monkeypatch):
    """The raise comes from inside load_state_dict, at no line of the learner's: the square pair's run, which every
    check's probe makes, proves the missing transpose on each check, not on the first one alone."""
    text = printed(kit, kit_vectors, "transfer_weights", loaded_untransposed, "en", monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2, text
    assert folded_count(failing[1], "en") == 3, text
    assert FOLLOW_ON["en"] not in text and "nothing proves" not in text, text
    assert catalog.MISCONCEPTIONS_BY_ID[MISTAKE].name["en"] in text, text


@pytest.mark.slow
@pytest.mark.parametrize("kit", ["live", "kit"])
def test_a_layer_used_as_a_matrix_raises_as_its_variant_whichever_layer_comes_first(kit, kit_vectors, monkeypatch):
    """The book applies W_key first; a learner may apply W_query first. The raise's operands are then the query
    layer's weight, not the key layer's: the variant applying that layer first reproduces it, so the raise is the
    named mistake on every check, one row."""
    text = printed(kit, kit_vectors, "self_attention_v2", LayersAsMatricesQueriesFirst, "en", monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2, text
    assert catalog.MISCONCEPTIONS_BY_ID["linear_as_matrix"].name["en"] in text, text
    assert "nothing proves" not in text and FOLLOW_ON["en"] not in text and NO_KNOWN["en"] not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notes_transfer_gets_no_failing_row(lang, monkeypatch):
    text = printed("live", None, "transfer_weights", solutions.load_v2_weights_into_v1, lang, monkeypatch)
    assert "✘" not in text, text


def raised(check_id, detail, *, line="", misconception=None, reproduced_by=(), key="error.broadcast_axis"):
    fields = {"type": "RuntimeError", "detail": detail, **({"line": line} if line else {})}
    return CheckResult(check_id, "transfer_weights", 0.0, 1.0, FAILED, misconception, f"{check_id}: raised", False,
                       title=check_id, cause=Cause(misconception, key, tuple(sorted(fields.items()))),
                       reproduced_by=reproduced_by)


def diagnosed(*results):
    return one_diagnosis(list(results), "en", catalog.MESSAGES, catalog.MISCONCEPTIONS_BY_ID)


def test_a_raise_with_the_proven_raises_numbers_and_line_is_named_by_it():
    named = raised("a", RAISED, misconception=MISTAKE, reproduced_by=(MISTAKE,), key="transfer_weights.raised")
    same = raised("b", RAISED, line="w.copy_(v2.weight)")
    result = diagnosed(named, same)[1]
    assert result.misconception == MISTAKE and result.mistake, result
    assert len(rows(diagnosed(named, same))) == 1


@pytest.mark.parametrize("other", [
    raised("b", RAISED.replace("(2)", "(4)"), line="w.copy_(v2.weight)"),  # the same error with other numbers
    raised("b", "shape mismatch: value tensor of shape [2, 3] cannot be broadcast", key="error.shape_mismatch"),
])
def test_a_raise_with_other_numbers_or_text_is_not_named_by_the_proven_raise(other):
    named = raised("a", RAISED, misconception=MISTAKE, reproduced_by=(MISTAKE,), key="transfer_weights.raised")
    assert diagnosed(named, other)[1].misconception is None


def test_the_same_raise_at_another_line_is_not_named_by_the_proven_one():
    named = raised("a", RAISED, line="sa_v1.W_query.copy_(w)", misconception=MISTAKE, reproduced_by=(MISTAKE,))
    other = raised("b", RAISED, line="sa_v1.W_key.copy_(w)")
    assert diagnosed(named, other)[1].misconception is None


def test_a_name_no_variant_reproduced_names_no_other_raise():
    """A name its own check did not reproduce (given by association) proves nothing of the raise it quotes."""
    named = raised("a", RAISED, misconception=MISTAKE, reproduced_by=())
    other = raised("b", RAISED)
    assert diagnosed(named, other)[1].misconception is None


# ---------------------------------------------------------------------------------------------
# axes of size 1 added or dropped at one end, on every check's own input


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "attempt", "folded"), [
    ("causal_mask", mask_with_a_batch_axis, 1), ("merge_heads", merged_then_squeezed, 3)])
def test_an_output_with_the_same_axis_of_size_1_added_or_dropped_on_every_check_is_one_row(
        exercise_id, attempt, folded, lang, monkeypatch):
    text = printed("live", None, exercise_id, attempt, lang, monkeypatch)
    failing = failing_rows(text)
    assert len(failing) == 2, text
    assert folded_count(failing[1], lang) == folded, text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("exercise_id", "attempt"), [
    ("causal_mask", solutions.causal_mask), ("merge_heads", solutions.merge_heads)])
def test_the_notes_shapes_get_no_failing_row(exercise_id, attempt, lang, monkeypatch):
    text = printed("live", None, exercise_id, attempt, lang, monkeypatch)
    assert "✘" not in text, text


def shaped(check_id, got, expected, *, key="shape.same_numbers", departure_step=""):
    fields = (("expected_shape", expected), ("got_shape", got))
    message = f"{check_id}: shape {got}, not {expected}"
    return CheckResult(check_id, "merge_heads", 0.0, 1.0, FAILED, None, message, False, title=check_id,
                       cause=Cause(None, key, fields), departure_step=departure_step)


@pytest.mark.parametrize("other", [
    shaped("b", "(5, 10)", "(1, 5, 10)"),  # the same end, another input's sizes
    shaped("b", "(5, 10)", "(1, 5, 10)", key="shape.wrong"),  # told by a check that compares no numbers
])
def test_the_same_axis_of_size_1_dropped_at_the_same_end_is_one_row(other):
    table = rows([shaped("a", "(3, 4)", "(1, 3, 4)"), other])
    assert len(table) == 1 and table[0].same == [other]


@pytest.mark.parametrize(("first", "other"), [
    (("(3, 4)", "(1, 3, 4)"), ("(1, 5, 10)", "(5, 10)")),  # dropped on one, added on the other
    (("(3, 4)", "(1, 3, 4)"), ("(3, 4)", "(3, 4, 1)")),  # the first axis on one, the last on the other
    (("(3, 4)", "(1, 3, 4)"), ("(4, 3)", "(1, 3, 4)")),  # more than an axis of size 1 changed
    (("(3, 4)", "(1, 1, 3, 4)"), ("(3, 4)", "(1, 3, 4)")),  # two axes on one, one on the other
])
def test_two_different_shape_changes_stay_two_rows(first, other):
    assert len(rows([shaped("a", *first), shaped("b", *other)])) == 2


def test_an_end_that_cannot_be_told_apart_folds_nothing():
    """(1, 1) against (1,): the axis of size 1 may be the first or the last; no edit is read from it."""
    assert len(rows([shaped("a", "(1, 1)", "(1,)"), shaped("b", "(1, 5)", "(5,)", key="shape.wrong")])) == 2


def test_the_same_shape_change_departing_at_two_steps_stays_two_rows():
    assert len(rows([shaped("a", "(1, 3, 4)", "(3, 4)", key="shape.wrong", departure_step="queries"),
                     shaped("b", "(1, 5, 4)", "(5, 4)", key="shape.wrong", departure_step="weights")])) == 2


class InputMadeFloat32(solutions.SelfAttention_v2):
    """The input made float32 "to match the weights": a float64 module then meets two dtypes in its first layer,
    which torch words per op (addmm with a bias, mm without one)."""

    def forward(self, x):
        x = x.float()
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        return torch.softmax(queries @ keys.T / keys.shape[-1] ** 0.5, dim=-1) @ values


@pytest.mark.slow
def test_two_dtypes_meeting_at_one_line_is_one_row_however_torch_words_it(monkeypatch):
    """The float64 checks raise "mat1 and mat2 must have the same dtype" on one check and "expected m1 and m2 to have
    the same dtype" on another, at the same line of the learner's: one symptom, one row."""
    text = printed("live", None, "self_attention_v2", InputMadeFloat32, "en", monkeypatch)
    dtype_rows = [line for line in failing_rows(text) if "tensors of different dtypes meet in one operation" in line]
    assert len(dtype_rows) == 1, text
    assert "nothing proves" not in text and NO_KNOWN["en"] not in text, text
