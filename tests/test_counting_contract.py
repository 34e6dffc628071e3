"""Book exercise 3.3's contract (issue 41): count_parameters is checked on every kind of module an optimizer sees, in
public, and a wrong way of counting is named only when its own counter gives the student's counts.

The attempts below are written from the release notebook's text of exercise 04-7 ("the total number of trainable
parameters of any module, the number an optimizer would update; buffers are not parameters"), as a learner would.
"""

import contextlib

import pytest
import torch
from check_helpers import results_by_id
from torch import nn

from attnkit import solutions
from autograder.checking.check_types import PASSED, Evidence
from autograder.course import catalog
from autograder.course.n04_multi_head_attention.ex5_parameter_counts.judge import judge_count, reproduced_mistake
from autograder.running.runner import DEFAULT_SEED, cases_for

# ---------------------------------------------------------------------------------------------
# Learner attempts


def book(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def named_loop(module):
    total = 0
    for _name, parameter in module.named_parameters():
        if parameter.requires_grad:
            total += parameter.nelement()
    return total


def as_tensor(module):
    return torch.tensor([p.numel() for p in module.parameters() if p.requires_grad], dtype=torch.long).sum()


def filtered(module):
    return sum(map(torch.numel, filter(lambda p: p.requires_grad, module.parameters())))


CORRECT = [book, named_loop, as_tensor, filtered]


def children_only(module):
    """"Each layer holds its parameters": walk the layers."""
    return sum(p.numel() for layer in module.children() for p in layer.parameters() if p.requires_grad)


def every_module(module):
    return sum(p.numel() for m in module.modules() for p in m.parameters() if p.requires_grad)


def each_module_own(module):
    return sum(p.numel() for m in module.modules() for p in m.parameters(recurse=False) if p.requires_grad)


def recursive_own(module):
    total = sum(p.numel() for p in module.parameters(recurse=False) if p.requires_grad)
    return total + sum(recursive_own(child) for child in module.children())


def all_names(module):
    return sum(p.numel() for _, p in module.named_parameters(remove_duplicate=False) if p.requires_grad)


def with_buffers(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad) + sum(b.numel() for b in module.buffers())


def state_dict(module):
    return sum(t.numel() for t in module.state_dict().values())


def all_parameters(module):
    return sum(p.numel() for p in module.parameters())


def linear_layers(module):
    total = 0
    for layer in module.modules():
        if isinstance(layer, nn.Linear) and layer.weight.requires_grad:
            total += layer.weight.numel() + (layer.bias.numel() if layer.bias is not None else 0)
    return total


def state_dict_without_mask(module):
    """Buffers left out by name: a buffer called anything but "mask" is counted, and frozen parameters too."""
    return sum(t.numel() for name, t in module.state_dict().items() if "mask" not in name)


def weights_and_biases(module):
    return sum(p.numel() for name, p in module.named_parameters()
               if p.requires_grad and name.split(".")[-1] in ("weight", "bias"))


def stacked(module):
    """Fails on a module without parameters: torch.stack of nothing."""
    return int(torch.stack([torch.tensor(p.numel()) for p in module.parameters() if p.requires_grad]).sum())


# (attempt, the mistake it makes; None: none the table knows)
WRONG = [
    (children_only, "counts_children_only"),
    (every_module, "counts_nested_twice"),
    (each_module_own, "counts_shared_twice"),
    (recursive_own, "counts_shared_twice"),
    (all_names, "counts_shared_twice"),
    (with_buffers, "counts_buffers"),
    (state_dict, "counts_state_dict"),
    (all_parameters, "counts_frozen"),
    (linear_layers, "counts_linear_only"),
    (state_dict_without_mask, None),
    (weights_and_biases, None),
    (stacked, None),
]


def run(student, **kwargs):
    return results_by_id("parameter_counts", {"count_parameters": student}, **kwargs)


@pytest.mark.parametrize("student", CORRECT, ids=lambda f: f.__name__)
def test_right_counts_earn_every_point(student):
    results = run(student)
    assert all(r.status == PASSED and r.misconception is None for r in results.values())


@pytest.mark.parametrize(("student", "mistake"), WRONG, ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_wrong_count_loses_points_on_a_public_check_and_is_named_right(student, mistake):
    public = run(student, include_hidden=False)
    graded_public = {check_id: r for check_id, r in public.items() if not check_id.endswith(".preview")}
    assert any(r.status != PASSED and r.max_score > 0 for r in graded_public.values()), graded_public
    results = {**public, **run(student)}
    names = {r.misconception for r in results.values()} - {None}
    assert names == ({mistake} if mistake else set()), names


@pytest.mark.slow
def test_the_checks_before_the_contract_let_the_held_out_counts_through():
    """The notes' modules alone (the public check before this contract) count these attempts right: only the other
    kinds of module tell them apart."""
    for student in (children_only, each_module_own, all_names, linear_layers, weights_and_biases):
        assert run(student)["parameter_counts.notes"].status == PASSED, student.__name__
        assert run(student, include_hidden=False)["parameter_counts.kinds"].status != PASSED, student.__name__


def test_a_failing_public_count_says_which_module_and_what_came_back():
    message = run(children_only, include_hidden=False)["parameter_counts.kinds"].message
    assert "returned 0 on a single nn.Linear" in message
    zh = run(children_only, include_hidden=False, lang="zh")["parameter_counts.kinds"].message
    assert "单独一个 nn.Linear" in zh and "返回了 0" in zh


def test_every_kind_is_counted_in_public_and_again_at_other_sizes():
    kinds = {case["about"] for case in cases_for(catalog.CHECKS_BY_ID["parameter_counts.kinds"], DEFAULT_SEED)}
    hidden = cases_for(catalog.CHECKS_BY_ID["parameter_counts.modules"], DEFAULT_SEED)
    assert kinds == {"single_layer", "own_parameter", "nested", "frozen", "buffers", "no_parameters",
                     "parameter_list", "shared"}
    assert kinds <= {case["about"] for case in hidden}
    assert not catalog.CHECKS_BY_ID["parameter_counts.kinds"].hidden


def test_a_count_two_mistakes_give_names_neither():
    wrong = [("counts_buffers", [10, 1]), ("counts_state_dict", [10, 1]), ("counts_frozen", [12, 1])]
    assert reproduced_mistake({"count": 10, "witness_counts": [1]}, 8, wrong) is None
    assert reproduced_mistake({"count": 12, "witness_counts": [1]}, 8, wrong) == "counts_frozen"
    # The same count on the module, another on a witness: not that mistake.
    assert reproduced_mistake({"count": 12, "witness_counts": [2]}, 8, wrong) is None


def test_a_name_comes_with_its_evidence():
    case = cases_for(catalog.CHECKS_BY_ID["parameter_counts.kinds"], DEFAULT_SEED)[0]
    expected = {"count": 16, "wrong_counts": [("counts_children_only", [0, 0])]}
    verdict = judge_count({"count": 0, "witness_counts": [0]}, case, expected)
    assert verdict.misconception == "counts_children_only" and verdict.evidence is Evidence.VARIANT
    unproven = judge_count({"count": 3, "witness_counts": [0]}, case, expected)
    assert unproven.misconception is None and unproven.evidence is None


def test_a_count_that_changes_the_module_changes_nothing_graded():
    """A hostile count unfreezes every parameter before counting: each module is built afresh for each call."""
    def unfreeze_then_count(module):
        module.requires_grad_(True)
        return book(module)

    results = run(unfreeze_then_count)
    assert results["parameter_counts.kinds"].status != PASSED
    assert results["parameter_counts.notes"].status == PASSED


def _described(module):
    """Everything a count can read of a module but its device: its kinds, parameters (shared ones once), buffers and
    flags."""
    return ([(name, type(child).__name__) for name, child in module.named_modules()],
            [(name, tuple(p.shape), p.dtype, p.requires_grad) for name, p in module.named_parameters()],
            [(name, tuple(b.shape), b.dtype) for name, b in module.named_buffers()],
            sorted(module.state_dict()))


def _devices(module):
    return {t.device.type for t in (*module.parameters(), *module.buffers())}


@pytest.mark.parametrize("check_id", ["parameter_counts.notes", "parameter_counts.kinds", "parameter_counts.modules"])
def test_the_reference_counts_the_module_the_student_is_handed_built_as_torch_builds_it(check_id):
    """The student's function is handed a CPU build by torch's own constructors and initialisers; the reference counts
    the grader's own build (meta, the initialisers skipped: they hold no values): the same module in everything a
    count reads, on every seed's cases, which torch's own initialisers on meta build too; torch.nn.init is left as it
    was, and so is the notebook's random stream."""
    from torch.nn import init

    from autograder.checking.deferred_imports import torch_imports_deferred
    from autograder.course.n04_multi_head_attention.ex5_parameter_counts import probe

    before = {name: getattr(init, name) for name in probe.INITIALISERS}
    stream = torch.get_rng_state()
    for seed in range(5):
        for case in cases_for(catalog.CHECKS_BY_ID[check_id], seed):
            nodes = [case["module"], *case["witnesses"]]
            for node, handed, counted in zip(nodes, probe.handed_modules(nodes), probe.counted_modules(nodes),
                                             strict=True):
                with torch_imports_deferred():
                    initialised = probe._built(node, "", {}, probe.META)
                assert _described(handed) == _described(counted) == _described(initialised)
                assert _devices(handed) <= {"cpu"} and _devices(counted) <= {"meta"}
                assert solutions.count_parameters(handed) == solutions.count_parameters(counted)
    assert {name: getattr(init, name) for name in probe.INITIALISERS} == before
    assert torch.equal(torch.get_rng_state(), stream)


def test_only_meta_tensors_skip_their_initialisation():
    from autograder.course.n04_multi_head_attention.ex5_parameter_counts import probe

    real = torch.zeros(3, 4)
    with probe._meta_tensors_not_initialised():
        torch.nn.init.ones_(real)  # a student's thread initialising its own tensor meanwhile
        meta = torch.nn.init.normal_(torch.empty(2, device="meta"))
    assert torch.equal(real, torch.ones(3, 4)) and meta.is_meta


# ---------------------------------------------------------------------------------------------
# Witnesses built once per check (issue 59): a learner's count that changes what it is handed, or remembers it, gets
# the records and verdicts it got when every case built its own witnesses.


def freezes_after_counting(module):
    total = book(module)
    module.requires_grad_(False)
    return total


def adds_a_parameter(module):
    total = book(module)
    module.register_parameter("counted", nn.Parameter(torch.zeros(2)))
    return total


def zeroes_what_it_counted(module):
    """Counts the non-zero entries, then clears them through .data (which leaves the version counter alone)."""
    total = sum(int(p.count_nonzero()) for p in module.parameters() if p.requires_grad)
    for p in module.parameters():
        p.data.zero_()
    return total


def marks_parameters(module):
    total = sum(p.numel() for p in module.parameters() if p.requires_grad and not getattr(p, "seen", False))
    for p in module.parameters():
        p.seen = True
    return total


def adds_a_hook(module):
    total = book(module) + len(module._forward_pre_hooks)
    module.register_forward_pre_hook(lambda *args: None)
    return total


def switches_to_eval(module):
    total = book(module) if module.training else 0
    module.eval()
    return total


def sets_gradients(module):
    total = sum(p.numel() for p in module.parameters() if p.requires_grad and p.grad is None)
    for p in module.parameters():
        p.grad = torch.ones_like(p)
    return total


def replaces_its_children(module):
    total = book(module)
    for name, _child in list(module.named_children()):
        setattr(module, name, nn.Identity())
    return total


def renames_its_class(module):
    if type(module).__name__.startswith("Seen"):
        return 0
    total = book(module)
    module.__class__ = type(f"Seen{type(module).__name__}", (type(module),), {})
    return total


def _later_freezes_the_last_one():
    handed = []

    def count(module):
        if handed:
            handed[-1].requires_grad_(False)  # what it was handed before, changed during a later call
        handed.append(module)
        return book(module)

    return count


STATEFUL = [freezes_after_counting, adds_a_parameter, zeroes_what_it_counted, marks_parameters, adds_a_hook,
            switches_to_eval, sets_gradients, replaces_its_children, renames_its_class, _later_freezes_the_last_one]


def _probe_and_judge(student):
    from autograder.running.runner import judge_exercise, probe_exercise

    records = probe_exercise("parameter_counts", {"count_parameters": student}, include_hidden=True)
    results = judge_exercise("parameter_counts", records, lang="en")
    return records, [(r.id, r.status, r.score, r.misconception, r.message) for r in results]


@pytest.mark.parametrize("learner", STATEFUL, ids=lambda f: f.__name__)
def test_a_count_that_changes_or_remembers_its_witnesses_gets_the_records_of_witnesses_built_per_case(
        learner, monkeypatch):
    """Each case's records and the verdicts are those of witnesses built afresh for every case (no check scope:
    shared_builds.built_once builds every time), while a reuse that did not rebuild a changed witness would differ."""
    from autograder.checking import shared_builds
    from autograder.course.shared import plan

    def student():  # a new one for each run: one that remembers starts each run with nothing
        return learner() if learner is _later_freezes_the_last_one else learner

    shared = _probe_and_judge(student())
    with monkeypatch.context() as patched:
        patched.setattr(plan, "one_check", contextlib.nullcontext)
        fresh = _probe_and_judge(student())
    assert shared == fresh
    with monkeypatch.context() as patched:
        patched.setattr(shared_builds.ModuleSnapshot, "unchanged", lambda self, module: True)
        unguarded = _probe_and_judge(student())
    assert unguarded[0] != fresh[0]  # this learner sees a reused witness that was not rebuilt


def test_a_check_builds_its_witnesses_once_when_the_count_changes_nothing(monkeypatch):
    from autograder.course.n04_multi_head_attention.ex5_parameter_counts import probe

    built = []
    original = probe.handed_modules
    monkeypatch.setattr(probe, "handed_modules", lambda nodes: built.append(len(nodes)) or original(nodes))
    records = _probe_and_judge(book)[0]
    cases = sum(len(per_case) for per_case in records.values())
    witnesses = len(records["parameter_counts.kinds"][0]["witness_counts"])
    assert len(built) == cases + len(records) * witnesses  # a module per case, the witnesses once per check
