"""devtools.verdict_changes: the verdicts of another revision's checks against this checkout's, on the same students."""

import contextlib
import io

import pytest

from devtools import verdict_changes
from devtools.verdict_changes import Verdict

BEFORE_ISSUE_45 = "4d17600"  # main before the wide case stopped docking the notes' renormalising route


def test_changes_lists_every_verdict_that_differs_and_no_other():
    right, wrong = Verdict(True, None, 3.0), Verdict(False, "split_without_transpose", 0.0)
    unnamed = Verdict(False, None, 0.0)
    before = {"a [x]": {"x.random": wrong, "x.notes": right}, "b [x]": {"x.random": unnamed}}
    after = {"a [x]": {"x.random": right, "x.notes": right}, "b [x]": {"x.random": wrong, "x.new": right}}
    assert verdict_changes.changes(before, after) == {
        "x.random": ["a [x]: ✘ 0, named split_without_transpose -> ✔ 3",
                     "b [x]: ✘ 0 -> ✘ 0, named split_without_transpose"],
        "x.new": ["b [x]: absent -> ✔ 3"],
    }
    assert verdict_changes.changes(after, after) == {}


@pytest.mark.slow
def test_against_main_before_issue_45_the_renormalising_route_is_the_only_causal_attention_change():
    """Run for real: the old checks come from git, in a process of their own."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        assert verdict_changes.main(["--against", BEFORE_ISSUE_45, "--exercise", "causal_attention"]) == 0
    text = output.getvalue()
    renormalised = "variant/causal_attention/mask/zeroed after the softmax, renormalised (the notes' route)"
    assert f"{renormalised} [causal_attention]: ✘ 0 -> ✔ 3" in text
    # Issue 58: the right output with the row sums taken with gradients off passed the properties check, which asked
    # only that some gradient reach each parameter; now the gradients must be the reference's.
    normaliser_no_grad = "mutant/CausalAttention_normaliser_no_grad [causal_attention]: ✔"
    assert f"{normaliser_no_grad} 1 -> ✘ 0, named forward_step_detached" in text
    # Since then issue 41 changed names only (reproduced, or none where nothing proves one): every other verdict
    # keeps its score.
    changed = [line.strip() for line in text.splitlines() if " -> " in line]
    scores_changed = [line for line in changed
                      if line.split(": ", 1)[1].split(" -> ")[0].split(",")[0]
                      != line.split(" -> ")[1].split(",")[0]]
    assert scores_changed and all(renormalised in line or line.startswith(normaliser_no_grad)
                                  for line in scores_changed), scores_changed
