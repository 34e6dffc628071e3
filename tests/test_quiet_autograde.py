"""An honest class autogrades without a warning, with a line per student and progress lines (the details with
--log-level=INFO); a student who edits a locked cell is still caught.

The nbgrader runs (about two minutes on 2 cores): a course with the release generated, three honest students who
hand in what a student of the release hands in (the release with the solution cells filled in: its test cells hold no
hidden tests), autograded and given feedback by `nbgrader` as the course is configured; one of them again with
--log-level=INFO; then one student who edits two hidden-test cells and a given cell, autograded on their own. The unit
tests below them need no nbgrader run.
"""

import copy
import logging
import re
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme
from traitlets.config import Application, Config

from autograder.course.exercises import NOTEBOOKS
from autograder.integrations import nbgrader_course, nbgrader_quiet_log
from autograder.integrations.nbgrader_hidden_tests import grade_id_of, is_as_released
from autograder.integrations.nbgrader_progress import Progress, StudentTally
from devtools.class_fixtures import BY_ID, build_notebook

ASSIGNMENT = nbgrader_course.ASSIGNMENT
NB01, NB02, NB03, NB04 = NOTEBOOKS
HONEST = ("solved", "untouched", "mistake")
TAMPER = "tamper"
SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
CHECKSUM_WARNING = re.compile(r"Attribute 'checksum' for cell (\S+) has changed!")
PROGRESS = re.compile(r"attnkit: graded (\d+) of (\d+) notebooks? \((\d+) s\)")
STUDENT_LINE = re.compile(r"attnkit: (\S+): \d+ notebooks? graded in the sandbox, ")
# Lines of a quiet autograde run that are neither a student's nor progress: none for an honest class (a constant:
# nbgrader's start and end, should a release say one)
QUIET_OVERHEAD = 3
# The tamper student's edits: two hidden-test cells (a line added, one character taken away) and a given cell.
EDITS = {
    (NB01, "test_softmax_naive"): lambda source: source + "\nprint('full marks, please')",
    (NB01, "test_softmax_stable"): lambda source: source[:-1],
    (NB01, "given_inputs"): lambda source: source + "\n# mine now",
}


def _grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def handed_in(release, solved):
    """The release notebook with each solution cell as in `solved`, its BEGIN/END SOLUTION lines left out: what a
    student hands in (the test cells as released, hidden tests cleared)."""
    notebook = copy.deepcopy(release)
    answers = {_grade_id(cell): cell.source for cell in solved.cells
               if cell.get("metadata", {}).get("nbgrader", {}).get("solution")}
    for cell in notebook.cells:
        if _grade_id(cell) in answers:
            cell.source = "\n".join(line for line in answers[_grade_id(cell)].split("\n")
                                    if not SOLUTION_MARKER.match(line))
    return notebook


def write_student(folder, notebooks):
    folder.mkdir(parents=True)
    for name, notebook in notebooks.items():
        nbformat.write(notebook, folder / f"{name}.ipynb")
    return folder


@pytest.fixture(scope="module")
def course(repo_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("quiet")
    course = nbgrader_course.make_course(root / "course", repo_root)
    nbgrader_course.generate_release(course)
    release = {name: nbformat.read(course / "release" / ASSIGNMENT / f"{name}.ipynb", as_version=4)
               for name in NOTEBOOKS}
    source = {name: nbformat.read(course / "source" / ASSIGNMENT / f"{name}.ipynb", as_version=4)
              for name in NOTEBOOKS}
    mistake = BY_ID["mistake-mask-diagonal"]  # a wrong causal mask: its feedback shows heatmaps
    students = {
        "solved": {name: handed_in(release[name], source[name]) for name in NOTEBOOKS},
        "untouched": release,
        "mistake": {name: handed_in(release[name], build_notebook(mistake, name, repo_root)) for name in NOTEBOOKS},
    }
    for student, notebooks in students.items():
        nbgrader_course.submit(course, student, write_student(root / student, notebooks))
    return SimpleNamespace(root=course, release=release, source=source, solved=students["solved"])


@pytest.fixture(scope="module")
def honest_run(course):
    autograde_log = nbgrader_course.run_nbgrader(course.root, "autograde", ASSIGNMENT, "--force")
    feedback_log = nbgrader_course.run_nbgrader(course.root, "generate_feedback", ASSIGNMENT, "--force")
    return SimpleNamespace(autograde=autograde_log, feedback=feedback_log)


@pytest.fixture(scope="module")
def detailed_run(course, honest_run):
    """One student autograded again with the log level given: every detail."""
    return nbgrader_course.run_nbgrader(course.root, "autograde", ASSIGNMENT, "--force", "--student=solved",
                                        "--log-level=INFO")


@pytest.fixture(scope="module")
def tamper_run(course, honest_run, tmp_path_factory):
    notebooks = copy.deepcopy(course.solved)
    for (name, grade_id), edit in EDITS.items():
        (cell,) = [cell for cell in notebooks[name].cells if _grade_id(cell) == grade_id]
        cell.source = edit(cell.source)
    nbgrader_course.submit(course.root, TAMPER, write_student(tmp_path_factory.mktemp("tamper") / TAMPER, notebooks))
    return nbgrader_course.run_nbgrader(course.root, "autograde", ASSIGNMENT, "--force", f"--student={TAMPER}")


@pytest.mark.slow
def test_an_honest_class_autogrades_and_gets_feedback_without_a_warning(honest_run):
    for step, log in (("autograde", honest_run.autograde), ("generate_feedback", honest_run.feedback)):
        warned = [line for line in log.splitlines() if "warning" in line.lower()]
        assert not warned, f"nbgrader {step} of an honest class warns:\n" + "\n".join(warned[:20])


@pytest.mark.slow
def test_the_honest_class_is_graded_as_before(course, honest_run):
    totals = {student: sum(scores.values()) for student, scores in nbgrader_course.read_scores(course.root).items()}
    assert totals["solved"] == 100 and totals["untouched"] == 0
    assert 0 < totals["mistake"] < 100


@pytest.mark.slow
def test_the_autograde_log_says_how_far_the_run_is(honest_run):
    lines = [tuple(map(int, match.groups())) for match in PROGRESS.finditer(honest_run.autograde)]
    total = len(HONEST) * len(NOTEBOOKS)
    assert [(done, of) for done, of, _ in lines] == [(done, total) for done in range(1, total + 1)], lines
    seconds = [elapsed for _, _, elapsed in lines]
    assert seconds == sorted(seconds)


@pytest.mark.slow
def test_the_autograde_log_is_a_line_per_student_and_the_progress_lines(honest_run):
    """329 lines for 8 students before (some forty per student: nbgrader's lines for every notebook and attnkit's
    score of each); now each student's line, the progress lines and nothing that grows with the class."""
    lines = honest_run.autograde.splitlines()
    students = [line for line in lines if STUDENT_LINE.search(line)]
    progress = [line for line in lines if PROGRESS.search(line)]
    assert len(lines) <= len(HONEST) + len(progress) + QUIET_OVERHEAD, f"{len(lines)} lines:\n" + "\n".join(lines)
    assert not [line for line in lines if "Sanitizing " in line or " in the sandbox: " in line]
    assert sorted(STUDENT_LINE.search(line).group(1) for line in students) == sorted(HONEST), students
    assert "attnkit: solved: 4 notebooks graded in the sandbox, 100/100" in honest_run.autograde


@pytest.mark.slow
def test_the_details_are_there_with_a_log_level(course, detailed_run):
    """--log-level=INFO: nbgrader's lines for every notebook and attnkit's verdict on each, with the student's line."""
    for name in NOTEBOOKS:
        assert f"Sanitizing {course.root}/submitted/solved/{ASSIGNMENT}/{name}.ipynb" in detailed_run
        assert f"Autograding {course.root}/autograded/solved/{ASSIGNMENT}/{name}.ipynb" in detailed_run
        assert f"attnkit: solved/{name} graded ahead in the sandbox: " in detailed_run
    assert "Creating/updating student with ID 'solved'" in detailed_run
    assert "attnkit: solved: 4 notebooks graded in the sandbox, 100/100" in detailed_run


@pytest.mark.slow
def test_every_picture_of_the_feedback_has_alternative_text(course, honest_run):
    pictures = 0
    for page in sorted((course.root / "feedback").rglob("*.html")):
        for tag in re.findall(r"<img\b[^>]*>", page.read_text(encoding="utf-8")):
            pictures += 1
            alt = re.search(r'\balt="([^"]*)"', tag)
            assert alt and alt.group(1).strip(), f"{page.relative_to(course.root)}: a picture without alt text"
            assert "No description has been provided" not in alt.group(1), "nbconvert's filler, not attnkit's words"
    assert pictures, "the mistake's feedback shows no heatmap: nothing was checked"


@pytest.mark.slow
def test_a_student_who_edits_locked_cells_is_still_caught_and_graded_on_the_originals(course, tamper_run):
    assert sorted(CHECKSUM_WARNING.findall(tamper_run)) == sorted(grade_id for _, grade_id in EDITS)
    for (name, grade_id), _ in EDITS.items():
        graded = nbformat.read(course.root / "autograded" / TAMPER / ASSIGNMENT / f"{name}.ipynb", as_version=4)
        (cell,) = [cell for cell in graded.cells if _grade_id(cell) == grade_id]
        (original,) = [cell for cell in course.source[name].cells if _grade_id(cell) == grade_id]
        assert cell.source == original.source, f"{grade_id}: the edit stayed"
    assert sum(nbgrader_course.read_scores(course.root)[TAMPER].values()) == 100


# --- no nbgrader run ------------------------------------------------------------------------------------------------

HIDDEN = "# Graded.\n### BEGIN HIDDEN TESTS\ngrade('x', x)\n### END HIDDEN TESTS"
RELEASED = "# Graded."
CLEARING = (ClearHiddenTests(), ClearMarkScheme())


def _test_cell(source, *, grade=True):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": grade, "grade_id": "test_x", "locked": True, "points": 1.0,
                                 "solution": False, "task": False, "schema_version": 3}
    return cell


def _source_cell(source, cell_type="code"):
    return SimpleNamespace(source=source, cell_type=cell_type)


@pytest.mark.parametrize(("handed", "expected"), [
    (RELEASED, True),  # as released: the hidden tests go back in
    (RELEASED + " ", False),  # one character more
    (RELEASED[:-1], False),  # one character less
    (HIDDEN, False),  # already the gradebook's: nothing to restore, and nbgrader finds nothing to say
    ("", False),
])
def test_only_a_cell_exactly_as_released_is_restored(handed, expected):
    assert is_as_released(_test_cell(handed), _source_cell(HIDDEN), CLEARING, {}, 0) is expected


def test_a_changed_type_or_grade_flag_or_a_cell_without_hidden_tests_is_left_to_nbgrader():
    markdown = nbformat.v4.new_markdown_cell(RELEASED, metadata=_test_cell(RELEASED).metadata)
    assert not is_as_released(markdown, _source_cell(HIDDEN), CLEARING, {}, 0)
    # no longer a grade cell: nbgrader's ClearHiddenTests refuses a hidden region there, so it was never released
    assert not is_as_released(_test_cell(RELEASED, grade=False), _source_cell(HIDDEN), CLEARING, {}, 0)
    # a given cell: its released version is the gradebook's own
    assert not is_as_released(_test_cell("x = 1"), _source_cell("x = 1"), CLEARING, {}, 0)



def test_the_gradebooks_locked_cells_are_read_once_per_autograde_call(monkeypatch):
    """Every student's copy of a notebook is checked against the same released cells: the gradebook is opened once
    per notebook and autograde call (a call's converter), afresh for the next call (formgrader's next click, after a
    new generate_assignment), and a notebook the gradebook lacks is left to OverwriteCells."""
    from nbgrader.api import MissingEntry
    from traitlets.config import LoggingConfigurable

    from autograder.integrations import nbgrader_hidden_tests
    from autograder.integrations.nbgrader_hidden_tests import RestoreHiddenTests

    opened = []

    class Gradebook:
        def __init__(self, db_url):
            opened.append(db_url)

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

        def find_notebook(self, notebook, assignment):
            if notebook == "missing":
                raise MissingEntry()
            return SimpleNamespace(source_cells=[
                SimpleNamespace(name="test_x", cell_type="code", source=HIDDEN, locked=True),
                SimpleNamespace(name="answer", cell_type="code", source="", locked=False)])

    monkeypatch.setattr(nbgrader_hidden_tests, "Gradebook", Gradebook)

    def autograde_call(notebooks):
        exporter = LoggingConfigurable(parent=LoggingConfigurable())  # made by the call's converter, its parent
        step = RestoreHiddenTests(parent=exporter)
        handed = []
        for notebook in notebooks:
            nb = nbformat.v4.new_notebook(cells=[_test_cell(RELEASED)])
            resources = {"nbgrader": {"db_url": "sqlite:///g.db", "assignment": "attention", "notebook": notebook}}
            handed.append(step.preprocess(nb, resources)[0].cells[0].source)
        return handed

    assert autograde_call(["01", "01", "01", "missing", "missing"]) == [HIDDEN] * 3 + [RELEASED] * 2
    assert len(opened) == 2  # one notebook, one missing: each read once
    assert autograde_call(["01"]) == [HIDDEN] and len(opened) == 3  # the next call reads afresh

def test_a_grade_id_is_read_only_from_metadata_shaped_as_nbgrader_writes_it():
    assert grade_id_of(_test_cell(RELEASED)) == "test_x"
    for metadata in ({"nbgrader": []}, {"nbgrader": {"grade_id": 5}}, {"nbgrader": "test_x"}, {}):
        cell = nbformat.v4.new_code_cell(RELEASED)
        cell["metadata"] = metadata
        assert grade_id_of(cell) == ""
    cell = nbformat.v4.new_code_cell(RELEASED)
    cell["metadata"] = ["nbgrader"]
    assert grade_id_of(cell) == ""


def _clock(times):
    ticks = iter(times)
    return lambda: next(ticks)


def test_a_small_run_logs_every_notebook():
    progress = Progress(3, clock=_clock([0.0, 1.0, 2.5, 4.0]))
    assert [progress.notebook_done() for _ in range(3)] == [
        "graded 1 of 3 notebooks (1 s)", "graded 2 of 3 notebooks (2 s)", "graded 3 of 3 notebooks (4 s)"]


def test_a_large_run_logs_every_twentieth_every_interval_and_the_last():
    total = 400  # 100 students: a line every 20 notebooks, or after 30 s without one
    quick = Progress(total, clock=_clock([float(second) for second in range(total + 1)]))  # a notebook a second
    assert [done for done in range(1, total + 1) if quick.notebook_done()] == list(range(20, total + 1, 20))
    slow = Progress(total, clock=_clock([0.0, 60.0, 120.0, 150.0, 170.0]))
    assert [slow.notebook_done() for _ in range(4)] == [
        "graded 1 of 400 notebooks (60 s)", "graded 2 of 400 notebooks (120 s)", "graded 3 of 400 notebooks (150 s)",
        None]


def test_more_notebooks_than_counted_never_reads_n_of_fewer():
    progress = Progress(1, clock=_clock([0.0, 1.0, 2.0]))
    assert [progress.notebook_done(), progress.notebook_done()] == [
        "graded 1 of 1 notebook (1 s)", "graded 2 of 2 notebooks (2 s)"]


@pytest.fixture
def quiet_factory():
    """nbgrader_quiet_log's factory installed over Python's own, put back as it was after the test (process-wide)."""
    factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(logging.LogRecord)
    nbgrader_quiet_log.install()
    yield
    logging.setLogRecordFactory(factory)
    Application.clear_instance()


def _record(level, module, message, *args, logger=nbgrader_quiet_log.AUTOGRADE_LOGGER):
    return logging.getLogger(logger).makeRecord(logger, level, f"/site-packages/x/{module}.py", 1, message, args, None)


def test_routine_lines_of_an_autograde_run_are_details_and_nothing_else_is(quiet_factory):
    routine = _record(logging.INFO, "autograde", "Sanitizing %s", "submitted/s1/attention/01.ipynb")
    assert (routine.levelno, routine.levelname) == (logging.DEBUG, "DEBUG")
    verdict = _record(logging.INFO, "nbgrader_sandbox", "attnkit: %s/%s %s in the sandbox: %g/%g", "s1", "01",
                      "graded", 3, 18)
    assert verdict.levelno == logging.DEBUG
    kept = [
        _record(logging.INFO, "nbgrader_sandbox", "attnkit: %s", "s1: 4 notebooks graded in the sandbox, 72/100"),
        _record(logging.WARNING, "autograde", "Sanitizing %s", "x"),  # a warning, whatever its words
        _record(logging.WARNING, "overwritecells", "Attribute '%s' for cell %s has changed! (should be: %s, got: %s)",
                "checksum", "given_inputs", "a", "b"),
        _record(logging.ERROR, "base", "Converting notebook %s", "x"),
        _record(logging.INFO, "elsewhere", "Sanitizing %s", "x"),  # the words, from another module
        _record(logging.INFO, "autograde", "Sanitizing %s", "x", logger="traitlets"),  # formgrader's log
    ]
    assert [record.levelno for record in kept] == [logging.INFO, logging.WARNING, logging.WARNING, logging.ERROR,
                                                   logging.INFO, logging.INFO]


@pytest.mark.parametrize("asked", [{"Application": {"log_level": "INFO"}}, {"NbGrader": {"log_level": 20}}])
def test_a_log_level_given_to_the_run_keeps_every_line_as_logged(quiet_factory, asked):
    Application.instance(config=Config(asked))
    assert _record(logging.INFO, "autograde", "Sanitizing %s", "x").levelno == logging.INFO
    Application.clear_instance()
    Application.instance()  # a run given no level: the routine lines are details again
    assert _record(logging.INFO, "autograde", "Sanitizing %s", "x").levelno == logging.DEBUG


def test_install_is_idempotent(quiet_factory):
    factory = logging.getLogRecordFactory()
    nbgrader_quiet_log.install()
    assert logging.getLogRecordFactory() is factory


def test_a_students_line_adds_their_notebooks():
    tally = StudentTally("s1")
    for score, max_score in ((18, 18), (10.5, 18), (0, 25), (39, 39)):
        tally.add(score, max_score)
    assert tally.line() == "s1: 4 notebooks graded in the sandbox, 67.5/100"
    alone = StudentTally("s2")
    alone.add(0, 18)
    assert alone.line() == "s2: 1 notebook graded in the sandbox, 0/18"
