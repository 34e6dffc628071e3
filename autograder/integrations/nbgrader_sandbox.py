"""`nbgrader autograde` in attnkit's sandbox: `SandboxedExecute` takes the place of nbgrader's `Execute`.

nbgrader's own autograde runs each sanitized notebook in a Jupyter kernel, where the student's code runs first and
the hidden checks and the reference can be imported: a student who patches `torch.allclose` or reads `solutions/`
from disk takes the points (nbgrader #1324, #869, #917). This preprocessor grades the sanitized notebook exactly as
`attnkit grade` does (`autograder.grading.notebooks.grade_notebooks`: the same caps, zygote, confined child,
budgets and judges, the judges here in nbgrader's process, one zygote for the whole `nbgrader autograde` run) and
writes back what nbgrader reads:

- each autograded test cell (grade id `test_<exercise>`): the checks' table on stdout, a heatmap of each failed
  *public* mask or weights check, and an `execute_result` holding the points earned (nbgrader's partial credit);
  never a stderr stream or an `error` output, which nbgrader would read as 0 points;
- each of the student's cells: what it printed (the first 2,000 characters of stdout and stderr together, as one
  stdout stream) and, where it raised, timed out or stopped the child, an `error` output saying so;
- the notebook's metadata: the checks' verdicts (autograder.integrations.nbgrader_record), which `attnkit report`
  reads for the mistakes the checks reproduced.

After each notebook it logs how far the run is, "graded 37 of 120 notebooks (12 s)", at a rate that suits the
class, and after a student's last notebook their line, "s001: 4 notebooks graded in the sandbox, 72/100"
(autograder.integrations.nbgrader_progress); each notebook's own line is a detail (--log-level=INFO:
autograder.integrations.nbgrader_quiet_log).

The course's nbgrader_config.py puts it first in `Autograde.autograde_preprocessors` (`AUTOGRADE_PREPROCESSORS`),
so `nbgrader autograde`, formgrader's Autograde button and the hub course grade here with no other change. Where the
sandbox cannot run, autograde stops with `SandboxUnavailable`, which names the setting that switches back to
grading in the student's kernel: never a silent fallback.
"""

import contextlib
import fnmatch
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Float, Integer, Unicode

from autograder.course.assignment import DEFAULT_SEED
from autograder.course.course_settings import chosen_course_file, settings_path
from autograder.i18n import language
from autograder.integrations import nbgrader_markup, nbgrader_metadata, nbgrader_saved_grades
from autograder.integrations.nbgrader_progress import StudentTally
from autograder.integrations.nbgrader_record import RECORD_KEY, record_of
from autograder.integrations.nbgrader_zygote_start import sandbox_problems as _sandbox_problems
from autograder.isolation import sandbox
from autograder.isolation.limits import Limits
from autograder.isolation.zygote import shared_zygote
from autograder.safe_text import clean

if TYPE_CHECKING:  # torch, the checks and the reference: imported once the zygote is on its way (see __init__)
    from nbgrader.converters.base import BaseConverter

    from autograder.checking.check_types import CheckResult
    from autograder.grading.notebooks import NotebookResult, Options
    from autograder.integrations.nbgrader_lookahead import LookAhead, Run

__all__ = [
    "AUTOGRADE_PREPROCESSORS", "ESSENTIAL_LAYERS", "GradedCell", "NBGRADERS_REPLACED", "SandboxUnavailable",
    "SandboxedExecute", "in_kernel_config_lines", "in_place_of_nbgraders", "sandbox", "test_cell_outputs",
]

logger = logging.getLogger(__name__)

THIS = f"{__name__}.SandboxedExecute"
STUDENT_TALLY = "_attnkit_student_tally"  # the current student's StudentTally, kept on the autograde call's converter
POINTS_TOLERANCE = 1e-9
# nbgrader 0.9's Autograde.autograde_preprocessors after its first entry, Execute.
NBGRADER_AFTER_EXECUTE = [
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# nbgrader's preprocessors the course puts a subclass of its own in place of, each doing the same work:
# CheckCellMetadata with the schema checked once (autograder.integrations.nbgrader_metadata), SaveAutoGrades saving
# in one commit per notebook (autograder.integrations.nbgrader_saved_grades).
NBGRADERS_REPLACED = {nbgrader_metadata.REPLACES: nbgrader_metadata.THIS,
                      nbgrader_saved_grades.REPLACES: nbgrader_saved_grades.THIS}


def in_place_of_nbgraders(preprocessors: list[str]) -> list[str]:
    """A list of nbgrader's preprocessors with the course's subclass wherever one of NBGRADERS_REPLACED stands."""
    return [NBGRADERS_REPLACED.get(entry, entry) for entry in preprocessors]


# nbgrader's list with Execute replaced by ours, the preprocessors of NBGRADERS_REPLACED by the course's, and the
# student's markup made safe to show last, so that what autograded/ stores (and formgrader renders) is clean
# (autograder.integrations.nbgrader_markup).
AUTOGRADE_PREPROCESSORS = [THIS, *in_place_of_nbgraders(NBGRADER_AFTER_EXECUTE), nbgrader_markup.THIS]
IN_KERNEL_SETTING = "c.Autograde.autograde_preprocessors"
# Isolation notes (autograder.isolation.sandbox) that mean student code would run unconfined: the grade is at stake.
ESSENTIAL_LAYERS = ("seccomp", "Landlock unavailable", "Landlock: ")


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here; nbgrader autograde stops rather than run student code unconfined."""

    def __init__(self, why: str) -> None:
        super().__init__(
            f"attnkit cannot grade in its sandbox on this machine: {why}. Nothing was graded in the student's kernel "
            f"instead. To grade there anyway (student code can then read the hidden checks and the reference and "
            f"change its own grade), remove attnkit's {IN_KERNEL_SETTING} line from nbgrader_config.py."
        )


class GradingFailed(RuntimeError):
    """attnkit itself could not grade this notebook (a fault of the grader's, never the student's)."""


@dataclass(frozen=True)
class GradedCell:
    """What one autograded test cell shows: its exercise's results and the points nbgrader records."""

    exercise_id: str
    results: tuple["CheckResult", ...]

    @property
    def score(self) -> float:
        return float(sum(result.score for result in self.results))


class SandboxedExecute(NbGraderPreprocessor):
    """Grade the notebook in attnkit's sandbox and write the verdicts into its cells (see the module docstring)."""

    timeout = Float(Limits.timeout, help="CPU seconds per cell and per exercise's checks (attnkit grade --timeout)."
                    ).tag(config=True)
    memory_mb = Integer(Limits.memory_mb, help="Memory a grading child may use, in MB (attnkit grade --memory)."
                        ).tag(config=True)
    grace = Float(Limits.grace, help="Seconds past the timeout before a step is killed (Limits.grace)."
                  ).tag(config=True)
    wall_factor = Float(Limits.wall_factor, help="A step's wall-clock limit, in timeouts, for code that waits "
                        "(Limits.wall_factor); the timeout itself counts the child's own CPU time.").tag(config=True)
    budget_factor = Float(Limits.budget_factor, help="A notebook's total time, in timeouts (Limits.budget_factor)."
                          ).tag(config=True)
    seed = Integer(DEFAULT_SEED, help="Seed of the hidden checks' cases (attnkit grade --seed).").tag(config=True)
    lang = Unicode("", help="Language of the verdicts: en or zh (default: ATTNKIT_LANG, else en).").tag(config=True)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        if not _sandbox_problems():  # start the zygote's imports now: they overlap the grader's (torch, the checks)
            shared_zygote().spawn()

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        problems = _sandbox_problems()
        if problems:
            raise SandboxUnavailable("; ".join(problems))
        notebook_id = str(resources["nbgrader"]["notebook"])
        path = Path(resources["metadata"]["path"]) / f"{notebook_id}.ipynb"
        # Grade exactly what nbgrader sanitized (its OverwriteCells restored the given cells): the cells written
        # here are the ones whose indices the child reports.
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")  # validated when nbgrader read it
        student = str(resources["nbgrader"]["student"])
        run = self._run(str(resources["nbgrader"]["assignment"]))
        ahead = self._look_ahead(run)
        # Beside the student's files and notebooks as handed in, laid out as grading ahead laid them out; never
        # beside autograded/, whose notebooks depend on how far nbgrader is (nbgrader_lookahead's docstring).
        with contextlib.ExitStack() as stack:
            beside = self._beside(stack, run, student, path)
            result, how = self._graded_ahead(ahead, path, notebook_id, student, beside), "graded ahead"
            if result is None:
                result, how = self._grade(path, notebook_id, beside), "graded"
        self._check(result)
        result.notes[:0] = _intake_notes(nb)
        _restore_deleted_test_cells(nb, resources, sorted(graded_cells(result)))
        _write_verdicts(nb, result, self.lang or language())
        nb.metadata[RECORD_KEY] = record_of(result.checks, self.seed)  # always ours: the student's value is replaced
        # a detail: shown with --log-level=INFO, else made DEBUG (autograder.integrations.nbgrader_quiet_log)
        self.log.info("attnkit: %s/%s %s in the sandbox: %g/%g", student, notebook_id, how, result.score,
                      result.max_score)
        for line in (self._student_done(student, notebook_id, result),
                     ahead.progress.notebook_done() if ahead is not None else None):
            if line:
                self.log.info("attnkit: %s", line)
        return nb, resources

    def _student_done(self, student: str, notebook_id: str, result: "NotebookResult") -> str | None:
        """The student's line once their last notebook of this autograde call is graded (the last of nbgrader's
        list for them: the converter grades a student's notebooks one after the other), else None."""
        converter = self._converter()
        tally = getattr(converter, STUDENT_TALLY, None)
        if not isinstance(tally, StudentTally) or tally.student != student:
            tally = StudentTally(student)
            if converter is not None:
                setattr(converter, STUDENT_TALLY, tally)
        tally.add(result.score, result.max_score)
        theirs = [Path(str(path)).stem for path in (converter.notebooks if converter is not None else ())]
        return tally.line() if notebook_id == (theirs[-1] if theirs else notebook_id) else None

    def _options(self, workers: int) -> "Options":
        from autograder.grading.notebooks import Options

        limits = Limits(timeout=self.timeout, memory_mb=self.memory_mb, workers=workers, grace=self.grace,
                        budget_factor=self.budget_factor, wall_factor=self.wall_factor)
        return Options(limits=limits, seed=self.seed, lang=self.lang or None, blocked=self._blocked())

    def _run(self, assignment: str) -> "Run":
        """This autograde call's run, as its course directory says (autograder.integrations.nbgrader_lookahead)."""
        from autograder.course.exercises import NOTEBOOKS
        from autograder.integrations.nbgrader_intake import instructor_files
        from autograder.integrations.nbgrader_lookahead import Run

        course = self._course()
        root = Path(course.root)
        return Run(root / course.submitted_directory, root / course.autograded_directory, assignment,
                   course.student_id, self._forced(), tuple(fnmatch.filter(NOTEBOOKS, course.notebook_id)),
                   self._options(Limits().workers), tuple(course.ignore),
                   Path(course.format_path(course.source_directory, ".", assignment)),
                   instructor_files(self._converter(), course, assignment), course.notebook_id)

    def _look_ahead(self, run: "Run") -> "LookAhead | None":
        """This autograde call's look-ahead (autograder.integrations.nbgrader_lookahead), started at its first
        notebook; None where there is no call to keep it on or it cannot start (each notebook is graded on the
        spot)."""
        from autograder.integrations.nbgrader_lookahead import look_ahead

        converter = self._converter()
        if converter is None:  # no autograde call to keep results for
            return None
        try:
            return look_ahead(run, converter)
        except Exception:  # noqa: BLE001 - graded on the spot: slower, never wrong
            logger.debug("attnkit: no look-ahead for this autograde call", exc_info=True)
            return None

    @staticmethod
    def _beside(stack: contextlib.ExitStack, run: "Run", student: str, path: Path) -> Path:
        """The folder the notebook at `path` is graded beside (nbgrader_lookahead.staged), removed when `stack`
        closes; GradingFailed where it cannot be laid out (a full disk): nbgrader keeps the submission for a re-run."""
        from autograder.integrations.nbgrader_lookahead import staged

        try:
            return stack.enter_context(staged(run, student))
        except OSError as error:
            raise GradingFailed(f"attnkit could not lay out the files beside {path}: {error}") from error

    @staticmethod
    def _graded_ahead(ahead: "LookAhead | None", path: Path, notebook_id: str, student: str,
                      beside: Path) -> "NotebookResult | None":
        """This notebook's result from the call's look-ahead, if it was graded ahead from the same input; None
        otherwise, and whatever planning this one notebook raises (it is then graded on the spot: one student's file
        never stops the others')."""
        from autograder.isolation.notebook_plan import plan_notebook

        if ahead is None:
            return None
        try:
            return ahead.result_for(student, plan_notebook(path, notebook_id), beside)
        except Exception:  # noqa: BLE001 - graded on the spot, which says what is wrong with the notebook
            logger.debug("attnkit: %s/%s not taken from the look-ahead", student, notebook_id, exc_info=True)
            return None

    def _converter(self) -> "BaseConverter | None":
        """The nbgrader converter running this preprocessor: the parent of its exporter (traitlets' parent chain)."""
        from nbgrader.converters.base import BaseConverter

        converter = getattr(self.parent, "parent", None)
        return converter if isinstance(converter, BaseConverter) else None

    def _course(self) -> CourseDirectory:
        """The run's course directory: the converter's own, which formgrader points at one student and assignment
        without changing the config; from the config when there is no converter."""
        converter = self._converter()
        return converter.coursedir if converter is not None else CourseDirectory(config=self.config)

    def _forced(self) -> bool:
        """Whether this run regrades students graded before (`--force`, and formgrader's button)."""
        converter = self._converter()
        return converter is not None and bool(converter.force)

    def _grade(self, path: Path, notebook_id: str, beside: Path) -> "NotebookResult":
        from autograder.grading.notebooks import NotebookInput, grade_notebooks
        from autograder.integrations.nbgrader_lookahead import GRADING_LOCK

        graded = NotebookInput(notebook_id, path, notebook_id, folder=beside)
        with GRADING_LOCK:
            (result,) = grade_notebooks([graded], self._options(1)).results
        return result

    @staticmethod
    def _check(result: "NotebookResult") -> None:
        """Stop where the child ran unconfined, or where attnkit itself failed (never the student's fault)."""
        from autograder.grading.notebooks import GRADER_ERROR

        missing = [note for note in result.isolation_notes if note.startswith(ESSENTIAL_LAYERS)]
        if missing:
            raise SandboxUnavailable("; ".join(missing))
        if result.status == GRADER_ERROR:  # nbgrader keeps the submission for a re-run
            raise GradingFailed(f"attnkit could not grade {result.path}: {result.reason}")

    def _blocked(self) -> tuple[Path, ...]:
        """The course's other students and its grades: submissions, autograded copies, feedback, the gradebook."""
        course = self._course()
        root = Path(course.root)
        folders = (course.submitted_directory, course.autograded_directory, course.feedback_directory,
                   course.source_directory)
        blocked = [root / folder for folder in folders]
        if course.db_url.startswith("sqlite:///"):
            blocked.append(Path(course.db_url.removeprefix("sqlite:///")))
        return tuple(path for path in blocked if path.exists())


def _intake_notes(nb: NotebookNode) -> list[str]:
    """The notes autograder.integrations.nbgrader_intake left in the notebook's metadata (links not followed...),
    removed from it; text only, cleaned."""
    from autograder.integrations.nbgrader_intake import NOTES_KEY
    from autograder.safe_text import clean

    notes = nb.metadata.pop(NOTES_KEY, [])
    return [clean(note) for note in notes if isinstance(note, str)] if isinstance(notes, list) else []


def _write_verdicts(nb: NotebookNode, result: "NotebookResult", lang: str) -> None:
    """Fill the cells' outputs from attnkit's result: test cells get verdicts and points, student cells errors."""
    graded = graded_cells(result)
    cell_notes = {note for notes in result.cell_notes.values() for note in notes}
    notebook_notes = [note for note in result.notes if note not in cell_notes]
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if is_grade(cell) and not is_solution(cell):  # an autograded test cell
            grade_id = cell.metadata.nbgrader.get("grade_id", "")
            if grade_id not in graded:
                raise GradingFailed(f"cell {index} ({grade_id!r}) is an autograded test cell that attnkit has no "
                                    "checks for: attnkit's sandbox runs the course's checks only")
            _check_points(cell, index, graded[grade_id])
            cell.outputs = test_cell_outputs(graded[grade_id], lang, notebook_notes)
            notebook_notes = []  # said once, in the first test cell
        else:
            printed = result.cell_outputs.get(index)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)] if printed else []
            cell.outputs += [_error_output(note, index) for note in result.cell_notes.get(index, [])]


def _check_points(cell: NotebookNode, index: int, graded: GradedCell) -> None:
    """The cell's points (the gradebook's, from the release) must be the exercise's points in this course's
    settings (autograder.course.course_settings): else nbgrader would record a score out of another total."""
    from autograder.course.exercises import EXERCISES_BY_ID

    given, ours = cell.metadata.nbgrader.get("points"), EXERCISES_BY_ID[graded.exercise_id].points
    if not isinstance(given, int | float) or abs(float(given) - float(ours or 0)) > POINTS_TOLERANCE:
        shown = f"{float(given):g}" if isinstance(given, int | float) else repr(given)
        raise GradingFailed(f"cell {index} ({graded.exercise_id}) is worth {shown} points in the release but "
                            f"{ours:g} in the course settings ({clean(settings_path())}): {_points_advice()}")


def _points_advice() -> str:
    """What makes the release's points and this process's agree again."""
    from autograder.course.course_settings import settings_changed_since_read

    path, course_file = settings_path(), chosen_course_file()
    if settings_changed_since_read():
        return (f"{clean(path)} changed after this process read it; start it again (a formgrader: stop it and start "
                "it again), so that it grades with the points the release has")
    if course_file is not None:
        return (f"run `attnkit course release {clean(course_file.parent)}`, which regenerates the course's release "
                "and its gradebook's points from that file")
    return ("course_settings.toml changed? run `make release`, then `nbgrader generate_assignment attention --force`, "
            "so that the gradebook has them")


def _restore_deleted_test_cells(nb: NotebookNode, resources: ResourcesDict, grade_ids: Sequence[str]) -> None:
    """Append each autograded test cell the student deleted, as the gradebook has it.

    attnkit grades an exercise whose test cell was deleted after the notebook's last cell (the test cell only ever
    called the checks); nbgrader would record no grade for a cell it cannot find. Restored, the cell holds the same
    verdicts and points as `attnkit grade` gives, and says it was restored.
    """
    present = {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in nb.cells}
    missing = [grade_id for grade_id in grade_ids if grade_id not in present]
    if not missing:
        return
    from nbgrader.api import Gradebook

    notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
    with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
        for grade_id in missing:
            source = gradebook.find_source_cell(grade_id, notebook, assignment)
            graded = gradebook.find_graded_cell(grade_id, notebook, assignment)
            cell = nbformat.v4.new_code_cell(source.source)
            cell.metadata["nbgrader"] = {
                "grade": True, "grade_id": grade_id, "locked": True, "points": float(graded.max_score),
                "schema_version": 3, "solution": False, "task": False, "checksum": source.checksum}
            nb.cells.append(cell)
            logger.info("attnkit: %s: the test cell %s was deleted; restored at the end", notebook, grade_id)


def graded_cells(result: "NotebookResult") -> dict[str, GradedCell]:
    """grade id -> the results of the exercise its cell grades, in check order."""
    from autograder.course.exercises import EXERCISES_BY_ID
    from autograder.isolation.notebook_plan import GRADED_CELL_PREFIX

    by_exercise: dict[str, list[CheckResult]] = {}
    for check in result.checks:
        by_exercise.setdefault(check.exercise, []).append(check)
    return {f"{GRADED_CELL_PREFIX}{exercise_id}": GradedCell(exercise_id, tuple(checks))
            for exercise_id, checks in by_exercise.items() if exercise_id in EXERCISES_BY_ID}


def test_cell_outputs(cell: GradedCell, lang: str, notes: Sequence[str] = ()) -> list[NotebookNode]:
    """What `grade(...)` would have printed and returned in the kernel, the failed public masks' heatmaps, and the
    grader's notes on the notebook as a whole (a given cell restored, files not copied...)."""
    from autograder.running.rendering import pictures_of, table

    text = table(cell.exercise_id, list(cell.results), lang, hidden=True) + "\n"
    text += "".join(f"  · {note}\n" for note in notes)
    outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    for result in cell.results:
        if result.hidden:  # a hidden check's values stay secret
            continue
        # SVG, as check(...) shows it: the feedback page (nbconvert) writes it into the HTML, where the browser
        # draws the Chinese labels with its own fonts.
        # Its words, not the check's id, where the picture cannot show (an untrusted notebook, a text export).
        outputs += [nbformat.v4.new_output("display_data",
                                           data={"image/svg+xml": picture.svg, "text/plain": picture.alt})
                    for picture in pictures_of(result, lang)]
    outputs.append(nbformat.v4.new_output("execute_result", data={"text/plain": repr(cell.score)}, execution_count=1))
    return outputs


def _error_output(note: str, index: int) -> NotebookNode:
    """A note of the grader's about this cell ("cell 7: NameError: ...") as the cell's error output."""
    text = note.removeprefix(f"cell {index}: ")
    kind, _, message = text.partition(": ")
    name, value = (kind, message) if kind.isidentifier() else ("attnkit", text)
    return nbformat.v4.new_output("error", ename=name, evalue=value, traceback=[text])


def in_kernel_config_lines() -> list[str]:
    """Lines that switch a course back to nbgrader's own grading in the student's kernel (the demo's third column)."""
    entries = "".join(f"\n    {entry!r}," for entry in ["nbgrader.preprocessors.Execute", *NBGRADER_AFTER_EXECUTE])
    return [f"{IN_KERNEL_SETTING} = [{entries}\n]"]
