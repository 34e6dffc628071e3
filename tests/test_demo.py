"""`make demo`'s pieces: the bundled class (devtools/class_fixtures.py) and the demo's verdicts.

The full demo (nbgrader on 11 students, 6 to 20 minutes on 2 cores: docs/instructor/index.md) is not run here.
Instead: every fixture builds valid notebooks; the whole class graded by attnkit gives each submission its declared
outcome (points lost in the intended exercise, the intended misconception named, the other notebooks untouched); and
one mistake goes through real nbgrader, which must give it attnkit's grade notebook by notebook.
"""

import ast
import io

import nbformat
import pytest

from autograder.course.exercises import EXERCISES_BY_ID, NOTEBOOKS
from autograder.grading import classroom
from autograder.grading.notebooks import Options
from autograder.integrations import nbgrader_course
from autograder.isolation.limits import Limits
from autograder.isolation.sandbox import landlock_abi
from devtools import demo
from devtools.class_fixtures import (
    BEGIN,
    BY_ID,
    CLASS,
    END,
    RELEASE,
    REPO_PLACEHOLDER,
    FixtureError,
    build_notebook,
    replace_region,
    validate,
    write_submission,
)

pytestmark = pytest.mark.slow

CHANGED = [submission for submission in CLASS if submission.notebook is not None]
# Through real nbgrader: partial credit (1.5 of 11), the most delicate to agree on; and an edited given cell,
# which both graders restore before running the notebook.
NBGRADER_STUDENTS = ("mistake-mask-plain-attribute", "edited-given-causal-attention")


def _grade_ids(notebook):
    return [cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in notebook.cells]


def _cell(notebook, grade_id):
    return notebook.cells[_grade_ids(notebook).index(grade_id)]


def test_the_class_is_declared_well():
    assert [problem for submission in CLASS for problem in validate(submission)] == []
    assert len(BY_ID) == len(CLASS), "student ids must be unique"
    kinds = [submission.kind for submission in CLASS]
    assert kinds.count("mistake") >= 5 and kinds.count("adversarial") >= 2
    assert {"solved", "untouched"} <= set(kinds)
    for submission in CLASS:
        if submission.kind in ("mistake", "adversarial"):
            assert submission.exercise, submission.student_id
        if submission.kind == "mistake":
            assert submission.honest and submission.misconception, submission.student_id
        if submission.kind == "adversarial":
            assert not submission.honest, submission.student_id


@pytest.mark.parametrize("submission", CHANGED, ids=lambda submission: submission.student_id)
def test_fixture_builds_valid_notebooks_whose_changed_cell_parses(submission, repo_root):
    for name in NOTEBOOKS:
        built = build_notebook(submission, name, repo_root)
        nbformat.validate(built)
        source = nbformat.read(repo_root / "source" / "attention" / f"{name}.ipynb", as_version=4)
        assert _grade_ids(built) == _grade_ids(source)
        changed = [index for index, (ours, theirs) in enumerate(zip(built.cells, source.cells, strict=True))
                   if ours.source != theirs.source]
        if name != submission.notebook:
            assert changed == []
            continue
        cell = _cell(built, submission.cell)
        assert changed == [built.cells.index(cell)]
        ast.parse(cell.source)
        assert REPO_PLACEHOLDER not in cell.source
        # the student's code replaced the solution region, markers included; other regions stay
        before = _cell(source, submission.cell).source.count(BEGIN)
        assert cell.source.count(BEGIN) == cell.source.count(END) == (0 if submission.region is None else before - 1)
        assert submission.code.strip().splitlines()[-1].strip() in cell.source


def test_untouched_is_the_release(repo_root):
    submission = BY_ID["untouched"]
    assert submission.base == RELEASE
    for name in NOTEBOOKS:
        built = build_notebook(submission, name, repo_root)
        release = nbformat.read(repo_root / "release" / "attention" / f"{name}.ipynb", as_version=4)
        assert [cell.source for cell in built.cells] == [cell.source for cell in release.cells]


def test_replace_region_indents_the_code_and_keeps_the_other_regions():
    source = "class A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n        ### END SOLUTION\n\n" \
             "    def g(self):\n        ### BEGIN SOLUTION\n        return 2\n        ### END SOLUTION\n"
    replaced = replace_region(source, 1, "x = 3\n\nreturn x\n")
    assert replaced == "class A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n" \
                       "        ### END SOLUTION\n\n    def g(self):\n        x = 3\n\n        return x"
    ast.parse(replaced)
    with pytest.raises(FixtureError):
        replace_region(source, 2, "pass")


@pytest.fixture(scope="module")
def demo_workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("demo-class")


@pytest.fixture(scope="module")
def graded_class(demo_workdir, repo_root):
    """The whole bundled class graded by attnkit (the demo's --timeout), where the demo puts attnkit's grades."""
    root = demo_workdir
    for submission in CLASS:
        write_submission(submission, root / "submitted" / submission.student_id / "attention", repo_root)
    summary = classroom.grade_class(root / "submitted", demo.Demo(root, repo_root).attnkit_out,
                                Options(limits=Limits(timeout=demo.ATTNKIT_TIMEOUT)))
    return {document["student_id"]: document for document in summary.documents}


def _row(submission, document, nbgrader=None):
    scores = {notebook["notebook"]: notebook["score"] for notebook in document["notebooks"]}
    return demo.Row(submission, scores if nbgrader is None else nbgrader, document)


@pytest.mark.parametrize("submission", CLASS, ids=lambda submission: submission.student_id)
def test_attnkit_gives_each_submission_its_declared_outcome(graded_class, submission):
    document = graded_class[submission.student_id]
    row = _row(submission, document)
    if submission.needs_landlock and not landlock_abi():
        pytest.skip("reading solutions/ is only denied where the kernel has Landlock")
    assert demo.expectation_problems(row) == []
    if submission.total is not None:
        assert document["score"] == submission.total
    if submission.exercise is None:
        return
    exercise = EXERCISES_BY_ID[submission.exercise]
    lost = row.lost()
    assert 0 < lost[exercise.id] <= exercise.points, lost
    if submission.misconception:
        named = [check for notebook in document["notebooks"] for check in notebook["checks"]
                 if check["exercise"] == exercise.id and check["misconception"] == submission.misconception]
        assert named and all(check["status"] != "passed" for check in named)
    for notebook in document["notebooks"]:  # the other three notebooks are the solved ones
        if notebook["notebook"] != submission.notebook:
            assert notebook["score"] == notebook["max_score"], notebook["notebook"]


def test_an_adversarial_submission_that_fools_plain_nbgrader_is_shown_but_does_not_fail_the_demo(graded_class):
    submission = BY_ID["adversarial-allclose-loop"]
    document = graded_class[submission.student_id]
    full_marks = {notebook["notebook"]: notebook["max_score"] for notebook in document["notebooks"]}
    row = _row(submission, document)  # the sandboxed nbgrader gives attnkit's grade
    row.in_kernel = full_marks  # what plain nbgrader gives: its kernel was patched
    assert demo.agreement(row) == demo.OK
    assert demo.in_kernel_column(row) == f"100 {demo.NOT_OK} fooled"
    assert demo.expectation_problems(row, landlock=landlock_abi()) == []
    assert any("limit" in note for note in row.notes())  # the loop was interrupted


def test_a_sandboxed_nbgrader_fooled_by_an_adversarial_submission_fails_the_demo(graded_class):
    submission = BY_ID["adversarial-allclose-loop"]
    document = graded_class[submission.student_id]
    full_marks = {notebook["notebook"]: notebook["max_score"] for notebook in document["notebooks"]}
    row = _row(submission, document, nbgrader=full_marks)
    assert demo.agreement(row) == f"{demo.NOT_OK} DISAGREE"
    assert any("nbgrader (sandboxed)" in problem for problem in demo.expectation_problems(row, landlock_abi()))


def test_an_honest_disagreement_fails_the_demo_and_shows_in_the_table(graded_class):
    submission = BY_ID["mistake-softmax-dim0"]
    document = graded_class[submission.student_id]
    agreeing = _row(submission, document)
    disagreeing = _row(submission, document, nbgrader={**agreeing.nbgrader, NOTEBOOKS[0]: 18.0})
    assert demo.agreement(agreeing) == demo.OK and demo.agreement(disagreeing) == f"{demo.NOT_OK} DISAGREE"
    problems = demo.expectation_problems(disagreeing)
    assert len(problems) == 1 and "disagree" in problems[0] and "01: 18 vs 11" in problems[0]
    agreeing.problems, disagreeing.problems = [], problems
    lines = demo.table([agreeing, disagreeing]).splitlines()
    assert lines[0].split()[:6] == ["student", "attnkit", "nbgrader", "(sandboxed)", "agree", "nbgrader"]
    assert "context_weights_other_axis" in lines[2] and "context_vectors -7" in lines[2]
    assert "DISAGREE" in lines[3] and lines[3].count(demo.NOT_OK) == 2


def test_the_demo_refuses_to_write_inside_the_checkout(repo_root, capsys):
    target = repo_root / "demo-inside-the-checkout"
    assert demo.main(["--keep", str(target)]) == 2
    assert not target.exists()
    assert "inside the checkout" in capsys.readouterr().err


def test_plain_nbgrader_gives_honest_submissions_the_grades_attnkit_gives(graded_class, repo_root, tmp_path):
    """Honest submissions through plain nbgrader, in the student's kernel (the course switched back from the sandbox:
    generate_assignment, autograde): the same grade per notebook."""
    course_root = nbgrader_course.make_course(tmp_path / "course", repo_root, in_kernel=True)
    nbgrader_course.generate_release(course_root)
    for student_id in NBGRADER_STUDENTS:
        nbgrader_course.submit(course_root, student_id,
                      write_submission(BY_ID[student_id], tmp_path / "handed_in" / student_id, repo_root))
    nbgrader_course.autograde(course_root)
    nbgrader_scores = nbgrader_course.read_scores(course_root)
    rows = {student_id: _row(BY_ID[student_id], graded_class[student_id], nbgrader=nbgrader_scores[student_id])
            for student_id in NBGRADER_STUDENTS}
    autograded = course_root / "autograded" / NBGRADER_STUDENTS[0] / "attention" / f"{NOTEBOOKS[2]}.ipynb"
    ran = nbformat.read(autograded, as_version=4)
    # a kernel ran every code cell, the given ones included (the sandbox writes no execution counts there)
    assert all(cell.execution_count for cell in ran.cells if cell.cell_type == "code" and cell.source.strip())
    for row in rows.values():
        assert row.agree(), demo.expectation_problems(row)
    assert rows["mistake-mask-plain-attribute"].attnkit_total < 100
    restored = rows["edited-given-causal-attention"]
    assert restored.attnkit_total == 100 and any("given_causal_attention" in note for note in restored.notes())


def test_the_demo_ends_with_its_phases_times_the_class_report_and_the_next_step(graded_class, demo_workdir, repo_root):
    """The ending of a run, on the class attnkit graded above where the demo grades it: the last two lines name the
    class report (a file that exists) and docs pages that exist."""
    printed = io.StringIO()
    run = demo.Demo(demo_workdir, repo_root, out=printed)
    with run.phase("attnkit grade"):
        pass
    rows = [_row(submission, graded_class[submission.student_id]) for submission in CLASS]
    assert run.ending(rows, 444.0) == []
    lines = printed.getvalue().splitlines()
    report = demo_workdir.resolve() / "attnkit" / "class_report.html"
    assert report.is_file()
    assert lines[-2] == f"class report: {report}"
    assert lines[-1].startswith(f"next: open {report.as_uri()} in a browser")
    for page in demo.NEXT_PAGES:
        assert page in lines[-1] and (repo_root / page).is_file(), page
    assert lines[-3].startswith(f"make demo: {len(CLASS)} students in 444 s; {demo.OK}")
    phases = lines[lines.index("time per phase (measured in this run):") + 1:]
    assert phases[0].split()[1:] == ["s", "attnkit", "grade"]
    assert "444 s  in all (7.4 min) on" in phases[1] and "load average" in phases[1]


def test_the_demo_says_so_when_the_class_report_is_missing(tmp_path, repo_root, graded_class):
    printed = io.StringIO()
    run = demo.Demo(tmp_path, repo_root, out=printed)
    submission = BY_ID["solved"]
    row = _row(submission, graded_class[submission.student_id])
    row.problems = ["nbgrader gave 0, expected 100"]
    assert run.ending([row], 10.0) == ["solved"]
    lines = printed.getvalue().splitlines()
    assert lines[-3].startswith(f"make demo: 1 students in 10 s; {demo.NOT_OK} not as declared: solved")
    assert lines[-2] == f"class report: not written ({tmp_path.resolve() / 'attnkit' / 'class_report.html'} is missing)"
    assert lines[-1].startswith("next: open the feedback pages above in a browser")
