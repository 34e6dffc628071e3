"""One cause, one message across an exercise's checks (issue 58 point 3): a relation a departure proves on one check
(the notes' last step held with its named axes in another order) is tried on another failing check's case, applied to
the notes' step there; where it reproduces the learner's result, that check fails for the same reason (folded under
the first row), never "no known mistake" beside it. Where it does not reproduce, nothing is claimed."""

import contextlib
import io

import pytest
import torch

from attnkit import solutions
from autograder.checking.departure import Departure, Fact, relation_reproduced, step
from autograder.course import catalog
from autograder.running import in_notebook
from autograder.running.notebook_runtime import NotebookRuntime, run_checks
from tests.check_helpers import failing_rows

NO_KNOWN = {"en": "no known mistake reproduces", "zh": "没有哪个已知的错误能重现"}
SAME_REASON = {"en": "more checks fail for the same reason", "zh": "项检查因同样的原因未通过"}
DEPARTS = {"en": "where it departs", "zh": "从哪里开始不同"}


# ---------------------------------------------------------------- learner attempts, written for these tests


def merge_heads_features_before_tokens(x):  # each head's (tokens, features) block transposed, heads then stacked
    b, num_heads, num_tokens, head_dim = x.shape
    blocks = [x[:, head].mT for head in range(num_heads)]
    return torch.stack(blocks, dim=1).reshape(b, num_tokens, num_heads * head_dim)


def merge_heads_features_first(x):  # features, heads, tokens: laid out feature by feature
    b, num_heads, num_tokens, head_dim = x.shape
    return x.permute(0, 3, 1, 2).reshape(b, num_tokens, num_heads * head_dim)


def printed(exercise_id, attempt, lang, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, attempt, hint=2)
    return output.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("attempt", [merge_heads_features_before_tokens, merge_heads_features_first])
def test_a_merge_in_another_axis_order_is_one_row_with_its_round_trip_and_no_unknown_mistake(attempt, lang,
                                                                                           monkeypatch):
    """The round trip's input is made by the probe from the very numbers the notes' merged heads are, so its own
    trace proves nothing; the order proven on the notes' check, applied to the notes' merged heads of the round
    trip's case, reproduces the learner's result there: one cause, one row, every other check folded under it."""
    text = printed("merge_heads", attempt, lang, monkeypatch)
    failing = failing_rows(text)
    assert NO_KNOWN[lang] not in text, text
    assert text.count(DEPARTS[lang]) == 1, text
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
    round_trip = next(check for check in catalog.checks_of("merge_heads", include_hidden=False)
                      if "round_trip" in check.id)
    assert round_trip.title[lang][:20] in failing[1], text


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notes_merge_gets_no_departure_and_no_same_cause(lang, monkeypatch):
    text = printed("merge_heads", solutions.merge_heads, lang, monkeypatch)
    assert "✘" not in text and DEPARTS[lang] not in text, text


# ---------------------------------------------------------------- the relation, tried on another case


def merged_steps(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return [step("heads_merged", solutions.merge_heads(x), ordered=True,
                 axes=(("batch", b), ("tokens", num_tokens), ("heads", num_heads), ("features", head_dim)))]


def proven(order):
    """A departure at the notes' merged heads whose result holds them with their named axes in `order`."""
    return Departure((), "heads_merged", facts=(Fact("reordered", {"order": order}, about="output"),),
                     compared=3, last="heads_merged")


X = torch.arange(2 * 2 * 5 * 3, dtype=torch.float32).reshape(2, 2, 5, 3) / 7


def test_the_proven_order_reproduces_the_learner_s_result_on_another_case():
    steps = merged_steps(X)
    assert relation_reproduced(proven(("batch", "heads", "features", "tokens")), steps,
                               merge_heads_features_before_tokens(X))
    assert relation_reproduced(proven(("batch", "features", "heads", "tokens")), steps,
                               merge_heads_features_first(X))


def test_an_order_proven_with_a_batch_of_two_applies_to_a_case_of_one_batch_row():
    single = X[:1]
    assert relation_reproduced(proven(("batch", "heads", "features", "tokens")), merged_steps(single),
                               merge_heads_features_before_tokens(single))


def test_the_notes_result_and_another_order_s_result_are_not_reproduced():
    steps, order = merged_steps(X), ("batch", "heads", "features", "tokens")
    assert not relation_reproduced(proven(order), steps, solutions.merge_heads(X))
    assert not relation_reproduced(proven(order), steps, merge_heads_features_first(X))
    assert not relation_reproduced(proven(order), steps, 2 * merge_heads_features_before_tokens(X))
    assert not relation_reproduced(proven(order), steps, None)


def test_nothing_is_reproduced_without_a_proven_order_or_the_step_s_axes():
    steps = merged_steps(X)
    scaled = Departure((), "heads_merged", facts=(Fact("factor", {"factor": "2"}),), last="heads_merged")
    assert not relation_reproduced(scaled, steps, 2 * solutions.merge_heads(X))
    unnamed = [step("heads_merged", solutions.merge_heads(X), ordered=True)]
    order = ("batch", "heads", "features", "tokens")
    assert not relation_reproduced(proven(order), unnamed, merge_heads_features_before_tokens(X))
    earlier = Departure((), "heads_merged", facts=proven(order).facts, last="out_proj")  # not the returned step
    assert not relation_reproduced(earlier, steps, merge_heads_features_before_tokens(X))


def test_the_case_s_steps_are_read_as_the_kit_stores_them():
    stored = [list(entry) for entry in merged_steps(X)]
    assert relation_reproduced(proven(("batch", "heads", "features", "tokens")), stored,
                               merge_heads_features_before_tokens(X))


SAME_RELATION = {
    "en": "where it departs — the same cause as the departure said above: your result on this case is the notes' heads "
          "merged side by side with its axes in the same other order as there",
    "zh": "从哪里开始不同：与上面所说的不同之处原因相同：你在这个例子上的结果，是笔记中的并排合并后的各个头，"
          "其各维度按与那里相同的另一种顺序排列"}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_round_trip_check_says_it_is_the_cause_said_above(lang):
    """Each check's own diagnosis: the notes' check proves the order, the round trip's departs at the same step, read
    from its own trace now that the probe's source tensor (the notes' merged heads) is no tensor of the learner's
    (tests/test_trace_probe_build.py), and folds under it; a correct merge's checks get neither."""
    exercise = in_notebook.ReferenceExpectations().exercise("merge_heads")
    source = in_notebook.ReferenceExpectations()
    results = run_checks(source, "merge_heads", exercise.namespace((merge_heads_features_before_tokens,)), lang,
                         include_hidden=False, seed=None, diagnose=True)
    by_id = {result.id: result for result in results}
    round_trip = next(result for check_id, result in by_id.items() if "round_trip" in check_id)
    assert round_trip.departure.startswith(DEPARTS[lang]) and round_trip.departure_step == "heads_merged"
    notes = by_id["merge_heads.notes"]
    assert notes.departure.startswith(DEPARTS[lang]) and notes.departure != SAME_RELATION[lang]
    correct = run_checks(source, "merge_heads", exercise.namespace((solutions.merge_heads,)), lang,
                         include_hidden=False, seed=None, diagnose=True)
    assert all(not result.departure and not result.departure_step for result in correct)


# ---------------------------------------------------------------- rung 3 under a departure

DEPARTURE_STATED = {"en": "says at which step of the notes your computation first departs",
                    "zh": "已经说明你的计算从笔记的哪一步开始不同"}


def printed_at(exercise_id, attempt, lang, hint, monkeypatch):
    monkeypatch.setenv("ATTNKIT_LANG", lang)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        NotebookRuntime(in_notebook.ReferenceExpectations()).check(exercise_id, attempt, hint=hint)
    return output.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rung_three_under_a_departure_says_the_departure_is_all_there_is_not_no_known_mistake(lang, monkeypatch):
    """Rung 2 said where the merge departs and how; rung 3 has nothing to add and says so by pointing at that line,
    never "no known mistake reproduces this failure" as if nothing had been found."""
    second = printed_at("merge_heads", merge_heads_features_first, lang, 2, monkeypatch)
    third = printed_at("merge_heads", merge_heads_features_first, lang, 3, monkeypatch)
    assert DEPARTS[lang] in second and DEPARTS[lang] in third, third
    assert DEPARTURE_STATED[lang] in third and NO_KNOWN[lang] not in third, third


# ---------------------------------------------------------------- an earlier step returned, tried on another case


def context_vectors_returning_weights(inputs):  # computes the context vectors, returns the weights before them
    attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)
    _context = attn_weights @ inputs
    return attn_weights


def context_vectors_stopping_at_the_weights(inputs):  # learners_2026_12e i-cv-07: no product with the inputs
    return torch.softmax(inputs @ inputs.T, dim=-1)


def context_steps(inputs):
    scores = inputs @ inputs.T
    weights = torch.softmax(scores, dim=-1)
    return [step("scores", scores), step("weights", weights), step("context_vectors", weights @ inputs)]


RETURNED = Departure(("scores", "weights"), "context_vectors", returned="weights", compared=4, last="context_vectors")
INPUTS = torch.arange(5 * 3, dtype=torch.float64).reshape(5, 3).sin()


def test_a_returned_step_proven_on_one_case_reproduces_the_learner_s_result_on_another():
    assert relation_reproduced(RETURNED, context_steps(INPUTS), context_vectors_returning_weights(INPUTS))
    computed_too = Departure(("scores", "weights", "context_vectors"), None, returned="weights",
                             last="context_vectors")  # every step computed, the weights returned
    assert relation_reproduced(computed_too, context_steps(INPUTS), context_vectors_returning_weights(INPUTS))


def test_a_returned_step_does_not_reproduce_other_results():
    steps = context_steps(INPUTS)
    assert not relation_reproduced(RETURNED, steps, solutions.context_vectors(INPUTS))  # the notes' own result
    assert not relation_reproduced(RETURNED, steps, 2 * context_vectors_returning_weights(INPUTS))
    assert not relation_reproduced(RETURNED, steps, torch.softmax(INPUTS @ INPUTS.T / 2, dim=-1))
    assert not relation_reproduced(RETURNED, steps, None)
    scores = Departure(("scores",), "weights", returned="scores", last="context_vectors")
    assert not relation_reproduced(scores, steps, context_vectors_returning_weights(INPUTS))  # another step proven
    undeclared = [entry for entry in steps if entry[0] != "weights"]
    assert not relation_reproduced(RETURNED, undeclared, context_vectors_returning_weights(INPUTS))


def test_weights_of_one_number_throughout_prove_no_early_return_but_one_token_s_weight_does():
    """Tokens all alike: every weight is 1/n, one number throughout, made many ways: nothing is claimed. One token:
    its (1, 1) weight is the notes' weights on that case, in place of a context vector of 3 features."""
    alike = INPUTS[:1].expand(4, 3).contiguous()
    assert not relation_reproduced(RETURNED, context_steps(alike), context_vectors_returning_weights(alike))
    one = INPUTS[:1]
    assert relation_reproduced(RETURNED, context_steps(one), context_vectors_returning_weights(one))


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_returning_the_weights_is_one_row_with_no_unknown_mistake_beside_it(lang, monkeypatch):
    """learners_2026_12e i-cv-07: the notes' check proves the weights returned; the check on other sizes, whose own
    trace proved nothing, returns the weights of its case too: folded under the first row, not "no known mistake"."""
    text = printed("context_vectors", context_vectors_stopping_at_the_weights, lang, monkeypatch)
    failing = failing_rows(text)
    assert NO_KNOWN[lang] not in text, text
    assert len(failing) == 2 and SAME_REASON[lang] in failing[1], text
