"""The grader's calls of count_parameters cannot be told from a learner's own (issue 55): the modules it is handed are
built on the CPU by torch's own constructors and initialisers, of classes named as a learner's are, and nothing of
the grader's (the meta device, the stand-ins of autograder.checking.deferred_imports, patched torch.nn.init) is in
place while the student's code runs. A count that is right only under one of those loses points on a public check
and a hidden one, in-process and through `attnkit grade` (and a public one in the student kit); honest counts keep
full marks, those that read the parameters' values included.
"""

import json
import textwrap

import pytest
from adversarial_cases import NB04, Case, replace, write_submission
from check_helpers import results_by_id
from fresh_interpreter import fresh

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations.student_kit.build import vectors_document
from autograder.integrations.student_kit.runtime.checking import run_public
from autograder.integrations.student_kit.runtime.vectors import vectors_from_document
from autograder.isolation.limits import Limits


def cell(body):
    """A learner's cell defining count_parameters(module), `right` its right count; `body` returns from there."""
    return ("import sys, types, torch\n\ndef count_parameters(module):\n"
            "    right = sum(p.numel() for p in module.parameters() if p.requires_grad)\n"
            + textwrap.indent(textwrap.dedent(body), "    "))


# Each count is right under one condition of the grader's and one more than right (17 on nn.Linear(3, 4)) otherwise.
RIGHT_ONLY_WHEN = {
    "on_meta": cell("""
        tensors = [*module.parameters(), *module.buffers()]
        return right if any(t.is_meta for t in tensors) else right + 1
    """),
    "off_the_cpu": cell("""
        devices = {t.device.type for t in (*module.parameters(), *module.buffers())}
        return right if devices - {"cpu"} else right + 1
    """),
    "beside_a_stand_in": cell("""
        names = ("torch._dynamo", "sympy", "torch.fx.experimental.symbolic_shapes")
        stand_in = any(type(sys.modules.get(name, types)) is not types.ModuleType for name in names)
        return right if stand_in else right + 1
    """),
    "while_init_is_patched": cell("""
        names = ("kaiming_uniform_", "uniform_", "normal_", "ones_", "zeros_")
        patched = {getattr(torch.nn.init, name).__module__ for name in names} != {"torch.nn.init"}
        return right if patched else right + 1
    """),
    "on_torchs_own_classes": cell("""
        return right if type(module).__module__.startswith("torch.") else right + 1
    """),
}
# Honest counts that read the parameters' values, as a learner's may: there are none to read on the meta device.
HONEST = {
    "through_numpy": cell("""
        return sum(p.detach().cpu().numpy().size for p in module.parameters() if p.requires_grad)
    """),
    "through_values": cell("""
        return sum(len(p.detach().flatten().tolist()) for p in module.parameters() if p.requires_grad)
    """),
}
POINTS = EXERCISES_BY_ID["parameter_counts"].points


def student(source):
    namespace = {"__name__": "__main__"}
    exec(compile(source, "<notebook cell>", "exec"), namespace)  # noqa: S102 - a learner's cell, written above
    return {"count_parameters": namespace["count_parameters"]}


def assert_loses_in_public_and_hidden(results):
    """results: {check id: (status, score, max score, hidden)}."""
    public = [check_id for check_id, (status, _, most, hidden) in results.items()
              if not hidden and most > 0 and status != PASSED]
    hidden = [check_id for check_id, (status, _, most, is_hidden) in results.items()
              if is_hidden and most > 0 and status != PASSED]
    assert public and hidden, results
    assert sum(score for _, score, _, _ in results.values()) < POINTS


def _in_process(namespace):
    results = {**results_by_id("parameter_counts", namespace, include_hidden=False),
               **results_by_id("parameter_counts", namespace)}
    return {check_id: (r.status, r.score, r.max_score, r.hidden) for check_id, r in results.items()}


@pytest.mark.parametrize("condition", sorted(set(RIGHT_ONLY_WHEN) - {"beside_a_stand_in"}))
def test_a_count_right_only_under_the_graders_conditions_loses_public_and_hidden_points(condition):
    assert_loses_in_public_and_hidden(_in_process(student(RIGHT_ONLY_WHEN[condition])))


@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_count_that_reads_values_keeps_full_marks(name):
    results = _in_process(student(HONEST[name]))
    assert all(status == PASSED for status, *_ in results.values()), results
    assert sum(score for _, score, _, _ in results.values()) == pytest.approx(POINTS)


@pytest.mark.slow
def test_a_count_right_only_beside_a_stand_in_loses_public_and_hidden_points():
    """In a fresh interpreter, as in a new kernel: torch._dynamo, sympy and symbolic_shapes are not imported, so the
    stand-ins would be installed wherever the grader opens them."""
    said = fresh(f"""
        import json
        from autograder.running.runner import run_exercise
        namespace = {{"__name__": "__main__"}}
        exec({RIGHT_ONLY_WHEN["beside_a_stand_in"]!r}, namespace)
        results = {{}}
        for include_hidden in (False, True):
            for r in run_exercise("parameter_counts", {{"count_parameters": namespace["count_parameters"]}},
                                  include_hidden=include_hidden):
                results[r.id] = (r.status, r.score, r.max_score, r.hidden)
        print(json.dumps(results).replace(" ", ""))
    """)
    assert_loses_in_public_and_hidden(json.loads(said[0]))


@pytest.mark.slow
def test_no_function_of_any_exercise_sees_a_stand_in_unless_it_runs_on_the_meta_device():
    """Every exercise's checks (public and hidden) on the reference, in a fresh interpreter, each function the student
    writes wrapped to note what it sees: a stand-in is in sys.modules only around the device checks' calls on meta."""
    said = fresh("""
        import functools, json, sys, types, torch
        from attnkit import solutions
        from autograder.course.exercises import EXERCISES
        from autograder.running.runner import run_exercise
        NAMES = ("torch._dynamo", "sympy", "torch.fx.experimental.symbolic_shapes")
        seen, calls = [], 0

        def on_meta(value):
            if isinstance(value, torch.Tensor):
                return value.is_meta
            if isinstance(value, torch.nn.Module):
                return any(t.is_meta for t in (*value.parameters(), *value.buffers()))
            return False

        def noted(function):
            @functools.wraps(function)
            def call(*args, **kwargs):
                global calls
                calls += 1
                stand_ins = [name for name in NAMES if type(sys.modules.get(name, types)) is not types.ModuleType]
                if stand_ins and not any(on_meta(value) for value in (*args, *kwargs.values())):
                    seen.append([function.__name__, stand_ins])
                return function(*args, **kwargs)
            return call

        for exercise in EXERCISES:
            namespace = {name: getattr(solutions, name) for name in exercise.names}
            namespace = {name: value if isinstance(value, type) else noted(value) for name, value in namespace.items()}
            for include_hidden in (False, True):
                run_exercise(exercise.id, namespace, include_hidden=include_hidden)
        print(calls, json.dumps(seen[:5]).replace(" ", ""))
    """)
    assert int(said[0]) > 100 and said[1] == "[]", said


@pytest.fixture(scope="module")
def kit_vectors():
    return vectors_from_document(vectors_document())


@pytest.mark.slow
@pytest.mark.parametrize("condition", ["on_meta", "off_the_cpu", "on_torchs_own_classes"])
def test_in_the_student_kit_a_count_right_only_under_the_graders_conditions_fails_a_public_check(kit_vectors,
                                                                                                 condition):
    results = run_public("parameter_counts", student(RIGHT_ONLY_WHEN[condition]), kit_vectors, "en")
    assert any(r.status != PASSED and r.max_score > 0 for r in results), results


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
def test_in_the_student_kit_honest_counts_pass_every_public_check(kit_vectors, name):
    assert all(r.status == PASSED for r in run_public("parameter_counts", student(HONEST[name]), kit_vectors, "en"))


# --- through attnkit grade ----------------------------------------------------------------------------------------

LIMITS = Limits(timeout=5.0, memory_mb=768, grace=1.0, budget_factor=5.0)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, repo_root):
    root = tmp_path_factory.mktemp("counting")
    submitted, out = root / "submitted", root / "out"
    source = repo_root / "source" / "attention"
    context = {"repo": str(repo_root), "submitted": str(submitted), "out": str(out)}
    students = {f"right_only_{condition}": code for condition, code in RIGHT_ONLY_WHEN.items()}
    students |= {f"honest_{name}": code for name, code in HONEST.items()}
    for name, code in students.items():
        write_submission(Case(name, NB04, replace("solution_parameter_counts", code)), submitted, source, context)
    solved = submitted / "honest_solved" / "attention"
    solved.mkdir(parents=True)
    (solved / f"{NB04}.ipynb").write_bytes((source / f"{NB04}.ipynb").read_bytes())
    summary = classroom.grade_class(submitted, out, Options(limits=LIMITS))
    return {document["student_id"]: document for document in summary.documents}


def _graded_checks(document):
    notebook = next(notebook for notebook in document["notebooks"] if notebook["notebook"] == NB04)
    return {check["id"]: (check["status"], check["score"], check["max_score"], check["hidden"])
            for check in notebook["checks"] if check["exercise"] == "parameter_counts"}, notebook


@pytest.mark.slow
@pytest.mark.parametrize("condition", sorted(RIGHT_ONLY_WHEN))
def test_through_attnkit_grade_a_count_right_only_under_the_graders_conditions_loses_points(graded, condition):
    checks, notebook = _graded_checks(graded[f"right_only_{condition}"])
    assert_loses_in_public_and_hidden(checks)
    others = [check for check in notebook["checks"] if check["exercise"] != "parameter_counts"]
    assert all(check["status"] == PASSED for check in others)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["honest_solved", *(f"honest_{name}" for name in sorted(HONEST))])
def test_through_attnkit_grade_honest_counts_keep_full_marks(graded, name):
    checks, notebook = _graded_checks(graded[name])
    assert all(status == PASSED for status, *_ in checks.values()), checks
    assert notebook["score"] == notebook["max_score"], [c["message"] for c in notebook["checks"] if c["score"] == 0]
