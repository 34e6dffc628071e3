"""The table of mistakes (autograder.course.mistakes) and its gate (results.named_mistake), issue 41.

Every entry says where it may be named and what proves it, in texts that fit each exercise it lists; and a name is
shown only when the verdict that carries it has evidence of a kind the entry declares, on an exercise it lists. The
last tests run the variant grid and the mutants through every check and hold every shown name to that rule.
"""

import json
import re
from dataclasses import dataclass

import pytest
import torch

from attnkit import solutions
from autograder.checking import results
from autograder.checking.check_types import FAILED, CheckResult, Evidence, Verdict
from autograder.course import mistakes
from autograder.course.catalog import MESSAGES, MISCONCEPTIONS, MISCONCEPTIONS_BY_ID
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.course.module_contract.declaration import MESSAGES as CONTRACT_MESSAGES
from autograder.course.module_contract.probe import SPECS
from autograder.integrations.student_kit.build import misconception_record
from autograder.integrations.student_kit.runtime.vectors import misconception_from_record
from autograder.running.runner import run_exercise
from devtools import precision

RUNGS = ("question", "name", "hint", "change")
# The exercise whose texts speak of v1 and v2: load_v2_weights_into_v1 (notebook 02's second exercise).
VERSIONED = frozenset({"transfer_weights"})
# Exercises whose learner writes a function, not a module: no module, buffer or forward in their texts.
FUNCTIONS = frozenset({"softmax_naive", "softmax_stable", "context_vectors", "causal_mask", "masking_routes",
                       "split_heads", "merge_heads"})
# Module exercises whose module has no buffer: no buffer in their texts (issue 58).
BUFFERLESS = frozenset({"self_attention_v1", "self_attention_v2", "transfer_weights"})
BUFFER_WORDS = re.compile("buffer", re.I)
VERSION_WORDS = re.compile(r"\bv[12]\b|sa_v[12]", re.I)
MODULE_WORDS = re.compile(r"\bmodules?\b|\bbuffers?\b|\bforward\b|模块|buffer")


def texts(entry):
    """(rung, language, text) of every rung of an entry."""
    return [(rung, lang, text) for rung in RUNGS for lang, text in getattr(entry, rung).items()]


def test_the_catalogue_reads_the_table_and_every_family_is_listed():
    assert MISCONCEPTIONS == mistakes.MISTAKES
    assert set(MISCONCEPTIONS_BY_ID) == {entry.id for entry in mistakes.MISTAKES}
    assert all(family.MISTAKES for family in mistakes.FAMILIES)


@pytest.mark.parametrize("entry", MISCONCEPTIONS, ids=lambda entry: entry.id)
def test_every_entry_declares_exercises_that_exist_and_evidence(entry):
    assert entry.exercises, entry.id
    assert entry.exercises <= set(EXERCISES_BY_ID), sorted(entry.exercises - set(EXERCISES_BY_ID))
    assert entry.evidence and entry.evidence <= set(Evidence), entry.id


@pytest.mark.parametrize("entry", MISCONCEPTIONS, ids=lambda entry: entry.id)
def test_every_rung_is_written_in_both_languages(entry):
    missing = [f"{rung} [{lang}]" for rung in RUNGS for lang in ("en", "zh")
               if not getattr(entry, rung).get(lang, "").strip()]
    assert not missing, f"{entry.id}: {missing}"


@pytest.mark.parametrize("entry", MISCONCEPTIONS, ids=lambda entry: entry.id)
def test_texts_fit_every_exercise_the_entry_lists(entry):
    """No v1/v2 outside the weight transfer; no module, buffer or forward where the learner writes a function; no
    buffer where the module has none; no "given __init__" anywhere (the learners write their constructors)."""
    wrong = []
    for rung, lang, text in texts(entry):
        if VERSION_WORDS.search(text) and entry.exercises - VERSIONED:
            wrong.append(f"{rung} [{lang}] speaks of v1/v2 on {sorted(entry.exercises - VERSIONED)}")
        if MODULE_WORDS.search(text) and entry.exercises & FUNCTIONS:
            wrong.append(f"{rung} [{lang}] speaks of a module on {sorted(entry.exercises & FUNCTIONS)}")
        elif BUFFER_WORDS.search(text) and entry.exercises & BUFFERLESS:
            wrong.append(f"{rung} [{lang}] speaks of a buffer on {sorted(entry.exercises & BUFFERLESS)}")
        if "__init__" in text:
            wrong.append(f"{rung} [{lang}] speaks of a given __init__")
    assert not wrong, f"{entry.id}: {wrong}"


def test_the_text_checks_catch_a_buffer_promised_to_a_module_without_one():
    misfit = mistakes.mistake("misfit", exercises=("self_attention_v2", "causal_attention"),
                              evidence=(Evidence.FACT,), name=("made on the CPU", "建在 CPU 上"),
                              hint=("a tensor made in forward", "forward 中新建的张量"),
                              change=("use the module's registered buffer", "使用模块已注册的 buffer"))
    with pytest.raises(AssertionError, match=r"buffer on \['self_attention_v2'\]"):
        test_texts_fit_every_exercise_the_entry_lists(misfit)


def test_the_text_checks_catch_a_text_that_does_not_fit():
    misfit = mistakes.mistake("misfit", exercises=("masking_routes", "mha_wrapper"), evidence=(Evidence.FACT,),
                              name=("v2's buffer", "v2 的 buffer"), hint=("keep the given __init__", "保留"))
    with pytest.raises(AssertionError, match="v1/v2.*module.*__init__"):
        test_texts_fit_every_exercise_the_entry_lists(misfit)


# ---------------------------------------------------------------------------------------------
# The gate


@dataclass(frozen=True)
class FakeCheck:
    """A check of one exercise whose judge names a mistake with the evidence it is given (None: without any)."""

    evidence: Evidence | None
    named: str = "missing_scaling"
    exercise: str = "self_attention_v1"
    id: str = "self_attention_v1.notes"
    points: float = 1.0
    hidden: bool = False

    def judge(self, record, case, expectations):
        return Verdict(False, "self_attention_v1.wrong_output", misconception=self.named, evidence=self.evidence)


def judged(check):
    """The CheckResult of one case of `check`, with the verdict the judge gave (recorded by `recording`)."""
    return results.judge_cases(check, [{}], [{}], lambda *_: None, "en", MESSAGES, MISCONCEPTIONS_BY_ID)


@pytest.fixture
def recording(monkeypatch):
    """[(verdict, exercise, CheckResult)] of every check_result call while the fixture is active."""
    recorded = []
    original = results.check_result

    def spy(check, status, verdict, lang, messages, misconceptions):
        result = original(check, status, verdict, lang, messages, misconceptions)
        recorded.append((verdict, check.exercise, result))
        return result

    monkeypatch.setattr(results, "check_result", spy)
    return recorded


def unproven(recorded):
    """Every shown name whose verdict does not prove it: what the gate must never let through."""
    return [f"{exercise} {result.id}: {result.misconception} ({refused})" for verdict, exercise, result in recorded
            if result.misconception is not None and (
                verdict.misconception != result.misconception
                or (refused := results.refused_name(verdict, exercise, MISCONCEPTIONS_BY_ID)) is not None)]


def test_a_name_is_shown_with_evidence_of_a_declared_kind_only(recording):
    shown = judged(FakeCheck(Evidence.VARIANT))
    assert shown.status == FAILED and shown.misconception == "missing_scaling" and shown.mistake
    for refused, why in ((FakeCheck(None), "without evidence"), (FakeCheck(Evidence.FACT), "not proven by fact"),
                         (FakeCheck(Evidence.VARIANT, exercise="causal_mask"), "does not apply to"),
                         (FakeCheck(Evidence.VARIANT, named="no_such_mistake"), "not in the table")):
        result = judged(refused)
        assert result.status == FAILED and result.misconception is None, refused
        assert not (result.question or result.mistake or result.hint or result.change)
        verdict = recording[-1][0]
        assert why in results.refused_name(verdict, refused.exercise, MISCONCEPTIONS_BY_ID)
    assert not unproven(recording)


def test_the_audit_fails_where_a_judge_names_without_evidence_and_the_gate_lets_it_through(recording, monkeypatch):
    """The check below, on the gate the skeleton had before the table (any known name shown): it must fail."""
    monkeypatch.setattr(results, "named_mistake", lambda verdict, exercise, known: (
        verdict.misconception if verdict.misconception in known else None))
    result = judged(FakeCheck(None))
    assert result.misconception == "missing_scaling"
    assert unproven(recording) == [
        "self_attention_v1 self_attention_v1.notes: missing_scaling (missing_scaling named without evidence)"]


# Names a verdict may give without evidence: none (names from exceptions are reproduced, Evidence.ERROR). A judge
# that names a mistake without evidence anywhere fails the test below.
NAMED_FROM_ERROR_TEXT: frozenset[tuple[str, str]] = frozenset()


@pytest.fixture(scope="module")
def graded_students():
    """[(verdict, exercise, CheckResult)] of every check of every student of the variant grid and of the labelled
    mutants (devtools.precision), graded as grading runs them."""
    with pytest.MonkeyPatch.context() as patch:
        recorded: list[tuple[Verdict, str, CheckResult]] = []
        original = results.check_result

        def spy(check, status, verdict, lang, messages, misconceptions):
            result = original(check, status, verdict, lang, messages, misconceptions)
            recorded.append((verdict, check.exercise, result))
            return result

        patch.setattr(results, "check_result", spy)
        mutant_students, _unlabelled = precision.mutant_students()
        for student in precision.grid_students() + mutant_students:
            precision.diagnose_student(student)
    return recorded


@pytest.mark.slow
def test_every_name_the_grid_and_the_mutants_are_shown_is_proven(graded_students):
    named = [result for _verdict, _exercise, result in graded_students if result.misconception]
    assert len(named) > 300  # the run reached the checks that name mistakes
    assert not unproven(graded_students), "\n".join(unproven(graded_students))


@pytest.mark.slow
def test_no_judge_names_a_mistake_it_has_no_evidence_for(graded_students):
    refused = {(exercise, verdict.misconception): results.refused_name(verdict, exercise, MISCONCEPTIONS_BY_ID)
               for verdict, exercise, _result in graded_students if verdict.misconception}
    unexpected = sorted(f"{exercise}: {reason}" for (exercise, name), reason in refused.items()
                        if reason is not None and (exercise, name) not in NAMED_FROM_ERROR_TEXT)
    assert not unexpected, "\n".join(unexpected)
    # Every kind of evidence proves some name shown to these students.
    shown = {verdict.evidence for verdict, _exercise, result in graded_students if result.misconception}
    assert shown >= {Evidence.VARIANT, Evidence.FACT, Evidence.ERROR}


def test_the_student_kit_stores_the_table_and_its_gate_shows_the_same_names():
    """The kit's vectors carry each entry's exercises and evidence (student_kit.build.misconception_record), read back
    as the same Misconception; so the kit's gate names what the full kit's names."""
    stored = {entry.id: misconception_from_record(json.loads(json.dumps(misconception_record(entry))))
              for entry in MISCONCEPTIONS}
    assert stored == dict(MISCONCEPTIONS_BY_ID)
    for entry in MISCONCEPTIONS:
        for exercise in sorted(entry.exercises)[:1] + ["causal_mask"]:
            for evidence in (None, *Evidence):
                verdict = Verdict(False, misconception=entry.id, evidence=evidence)
                assert results.named_mistake(verdict, exercise, stored) == results.named_mistake(
                    verdict, exercise, MISCONCEPTIONS_BY_ID)


# ---------------------------------------------------------------------------------------------
# Learners' attempts issue 41 found misnamed, written from the notebooks' instructions


def softmax_stable_max_without_keepdim(x, dim=-1):
    """The max taken without keepdim: on a matrix it lines up with the last axis, whatever dim is."""
    shifted = x - x.max(dim=dim).values
    return torch.exp(shifted) / torch.exp(shifted).sum(dim=dim, keepdim=True)


class CausalAttentionBoolMask(solutions.CausalAttention):
    """Turns its mask buffer into bools in forward, once and for all: no slice is edited."""

    def forward(self, x):
        self.mask = self.mask.bool()
        return super().forward(x)


def names(exercise_id, namespace):
    return {result.id: result for result in run_exercise(exercise_id, namespace, lang="en")
            if result.misconception is not None}


def test_a_max_without_keepdim_is_never_told_that_the_max_and_the_sum_run_along_different_axes():
    named = names("softmax_stable", {"softmax_stable": softmax_stable_max_without_keepdim})
    assert {result.misconception for result in named.values()} == {"missing_keepdim"}, named


def test_a_mask_buffer_rebound_in_forward_is_told_forward_changes_the_state_not_a_slice():
    named = names("causal_attention", {"CausalAttention": CausalAttentionBoolMask})
    assert named["causal_attention.state"].misconception == "state_changed_by_forward"
    ladder = " ".join(named["causal_attention.state"].ladder(3))
    assert "slice" not in ladder and "__init__" not in ladder, ladder


def test_the_contract_speaks_of_no_given_constructor_where_the_learner_writes_one():
    """The contract's messages are said of every module exercise, the wrapper's too, whose constructor the learner
    writes; only self.<size> attributes, checked on MultiHeadAttention alone (its constructor is given), may."""
    given_only = {"contract.attribute"}
    assert [spec.exercise for spec in SPECS if spec.attributes] == ["multi_head_attention"]
    said = [key for key, text in CONTRACT_MESSAGES.items() if "__init__" in text["en"] and key not in given_only]
    assert not said, said
