"""A notebook's time budget is one number, `Limits.budget`: the supervisor's deadline for the notebook, the notes
that name it, and the kernel's CPU limit on each of its children (`Limits.attempt_cpu_seconds`: the budget and the
named CPU_LIMIT_MARGIN) all come from it, so changing the budget's rule in one place changes it everywhere.

No child is started: the supervisor's `_start` is replaced by one that keeps what it was given and stops the run.
"""

import json
import time
from pathlib import Path

import pytest

from autograder.course.exercises import NOTEBOOKS
from autograder.grading.notebooks import NotebookInput, Options, grade_notebooks
from autograder.isolation import supervisor
from autograder.isolation.limits import CPU_LIMIT_MARGIN, Limits
from autograder.isolation.notebook_plan import NotebookPlan
from autograder.isolation.supervisor import Job, Outcome

# A budget of 5 s (8 s * 0.625); no cgroup, so that the run touches nothing of the machine's before `_start`.
LIMITS = Limits(timeout=8, budget_factor=0.625, workers=1, memory_cgroup=False)


class _Started(Exception):
    """Raised by the stand-in `_start`: the run stops where a child would be forked."""


def test_the_budget_is_the_factor_times_the_timeout_and_the_cpu_limit_adds_the_margin():
    assert LIMITS.budget == 5.0
    assert CPU_LIMIT_MARGIN > 0 and LIMITS.attempt_cpu_seconds == LIMITS.budget + CPU_LIMIT_MARGIN


def test_a_child_s_cpu_limit_and_its_notebook_s_deadline_both_come_from_the_budget(tmp_path, monkeypatch):
    started: list[tuple[supervisor._JobState, supervisor.Confinement]] = []

    def start(state, limits, confinement, *_args, **_kwargs):
        started.append((state, confinement))
        raise _Started

    monkeypatch.setattr(supervisor, "_start", start)
    monkeypatch.setattr(supervisor, "shared_zygote", lambda: None)  # never forks the warm grader
    # Nor a child ahead of its notebook (the first one is asked for before the class's set-up): the budget is read
    # where the notebook's attempt starts, which `start` above stands in for.
    monkeypatch.setattr(supervisor, "_fork", lambda *_args: pytest.fail("no child is forked in this test"))
    limits_without_ahead = Limits(timeout=8, budget_factor=0.625, workers=1, memory_cgroup=False, fork_ahead=False)
    notebook = tmp_path / "one.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                               "outputs": [], "source": "pass"}],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    before = time.monotonic()
    with pytest.raises(_Started):
        grade_notebooks([NotebookInput("one", notebook, NOTEBOOKS[0])], Options(limits=limits_without_ahead))
    after = time.monotonic()

    [(state, confinement)] = started
    assert confinement.cpu_seconds == int(LIMITS.attempt_cpu_seconds)  # the kernel's limit, in whole seconds
    assert before + LIMITS.budget <= state.budget_end <= after + LIMITS.budget


def test_the_notes_name_the_same_budget():
    plan = NotebookPlan(Path("alice/01.ipynb"), NOTEBOOKS[0], (), (), "")
    state = supervisor._JobState(Job("key", plan, 0), Outcome("key", plan), time.monotonic() - 1.0)  # used up
    attempt = supervisor._Attempt(state, pid=-1, fd=-1, workdir="", started=0.0, hello_seen=True)
    assert supervisor._why_not_rerun(attempt, LIMITS) == f"its total time of {LIMITS.budget:g} s was used up"
