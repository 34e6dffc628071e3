"""parameter_counts: a wrong count is said on the module that was counted, described as that module is built
(issue 58): a wrapper of heads in an nn.ModuleList is not called a MultiHeadAttention with out_proj."""
from check_helpers import results_by_id

from attnkit import solutions
from autograder.course.exercises import EXERCISES_BY_ID

PROJECTION_NAMES = ("W_query", "W_key", "W_value", "out_proj")


def count_named_projections_only(module):  # the module's own projection attributes: a wrapper's heads are missed
    return sum(p.numel() for name in PROJECTION_NAMES if hasattr(module, name)
               for p in getattr(module, name).parameters() if p.requires_grad)


def count_frozen_too(module):  # every parameter, frozen or not
    return sum(p.numel() for p in module.parameters())


def messages(student, lang="en"):
    namespace = {EXERCISES_BY_ID["parameter_counts"].names[0]: student}
    results = results_by_id("parameter_counts", namespace, lang=lang)
    return {check_id: result.full_message for check_id, result in results.items()}


def test_a_wrong_count_on_the_wrapper_describes_the_wrapper():
    en = messages(count_named_projections_only)["parameter_counts.modules"]
    assert "MultiHeadAttentionWrapper-shaped module (its heads in an nn.ModuleList" in en, en
    assert "no out_proj" in en and "MultiHeadAttention-shaped module (its projections, out_proj" not in en, en
    zh = messages(count_named_projections_only, "zh")["parameter_counts.modules"]
    assert "形如 MultiHeadAttentionWrapper 的模块（多个头放在一个 nn.ModuleList 中" in zh, zh


def test_a_wrong_count_on_frozen_projections_says_they_are_frozen():
    en = messages(count_frozen_too)["parameter_counts.modules"]
    assert "MultiHeadAttention-shaped module whose W_query and W_key are frozen (they do not require grad)" in en, en
    assert "MultiHeadAttentionWrapper" not in en, en


def test_a_right_count_gets_no_wrong_count_sentence():
    for message in messages(solutions.count_parameters).values():
        assert "MultiHeadAttentionWrapper-shaped" not in message and "are frozen" not in message
