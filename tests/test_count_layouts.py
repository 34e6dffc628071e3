"""Rung 2 counts entries of the learner's tensor against the notes' step (shown, hidden, zeroed, NaN) only where each
entry has a known place in the step: the step's shape, up to axes of size 1 and adjacent axes joined or split (issue
58, "a fact said of the learner's code from a proof that reads another thing"). Scores held with the tokens before
the batch, whose values differ from the notes', have no proven layout: counting through a reshape counted entries of
other places ("shows 3 entries the notes hide" where one was). The learner's run here is written for this test:
masked scores made in a (tokens, batch, tokens) layout that leave one future entry shown.
"""

import torch

from autograder.checking.departure import departure_line, find_departure
from autograder.checking.departure import step as declared
from autograder.checking.tensor_trace import INPUT, TracedTensor
from autograder.course.messages import MESSAGES

SHOWN = {"en": "shows {} entries that the notes' masked attention scores hide",
         "zh": "有 {} 个元素在笔记中的填入掩码后的注意力分数里是被遮住的"}


def case():
    torch.manual_seed(0)
    queries = torch.randn(2, 3, 4, dtype=torch.float64)
    scores = queries @ queries.transpose(1, 2) + torch.randn(2, 3, 3, dtype=torch.float64)
    masked = scores.masked_fill(torch.triu(torch.ones(3, 3, dtype=torch.bool), 1), -torch.inf)
    return queries, scores, masked, [declared("scores", scores), declared("masked_scores", masked)]


def lines(traced, output):
    departure = find_departure(case()[3], traced, output)
    return departure, {lang: departure_line(departure, lang, MESSAGES) for lang in ("en", "zh")}


def test_a_tensor_in_another_arrangement_of_axes_is_said_by_its_shape_not_by_counts_in_both_languages():
    queries, scores, masked, _steps = case()
    tokens_first = masked.permute(1, 0, 2).clone()
    tokens_first[0, 0, 2] = scores[0, 0, 2]  # one future entry shown, in the learner's own layout
    traced = [TracedTensor(INPUT, queries, ()), TracedTensor("add", scores.permute(1, 0, 2).contiguous(), (0,)),
              TracedTensor("masked_fill", tokens_first, (1,))]
    departure, text = lines(traced, tokens_first)
    assert departure.step == "masked_scores"
    assert [fact.kind for fact in departure.facts][:1] == ["shape"], departure.facts
    assert "has shape (3, 2, 3), the notes' masked attention scores (2, 3, 3)" in text["en"], text
    assert "形状是 (3, 2, 3)，而笔记中的填入掩码后的注意力分数形状是 (2, 3, 3)" in text["zh"], text
    for lang in ("en", "zh"):
        assert all(SHOWN[lang].format(count) not in text[lang] for count in range(2, 10)), text


def test_the_same_mistake_in_the_notes_layout_keeps_its_count_in_both_languages():
    queries, scores, masked, _steps = case()
    one_shown = masked.clone()
    one_shown[0, 0, 2] = scores[0, 0, 2]
    traced = [TracedTensor(INPUT, queries, ()), TracedTensor("add", scores.clone(), (0,)),
              TracedTensor("masked_fill", one_shown, (1,))]
    departure, text = lines(traced, one_shown)
    assert [fact.kind for fact in departure.facts][:1] == ["shown"], departure.facts
    assert SHOWN["en"].format(1) in text["en"] and SHOWN["zh"].format(1) in text["zh"], text
