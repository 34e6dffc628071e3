"""A course's own points: `attnkit course points DIR [--set ID=N]...` and `attnkit course release DIR`
(docs/instructor/points.md).

A course made by `attnkit course new` keeps its points in `DIR/course_settings.toml`
(autograder.course.course_settings), which its nbgrader_config.py names, so that nbgrader's commands and formgrader's
server grade with them; attnkit's commands on the course choose the same file (`course_settings_of`) before they read
any points. Changing them:

    DIR/course_settings.toml   each `--set ID=N` written into its [points] (or the file as edited by hand)
    DIR/source/attention/      the graded cells' points and the "What is graded" text, written from them
    DIR/release/attention/     `nbgrader generate_assignment attention --force` again, then the student kit's wheel
                               (built with the new points) and its README beside the notebooks, as `course new` left it
    DIR/gradebook.db           each graded cell's points (generate_assignment's), and each manual grade of a cell whose
                               points changed kept in proportion: 3 of 6 becomes 2.5 of 5 (rounded to hundredths); a
                               manual grade of a cell that was worth 0 cannot be scaled and is flagged for review
    DIR/earlier_points.json    the points each changed cell had before (autograder.integrations.nbgrader_points)

Everything is checked before anything is changed (the changes, the file, the course and its gradebook, the kit's
build): a refusal leaves the course as it was. Where a later step fails, the settings file, the config, the source and
release notebooks, the gradebook and the record of earlier points are put back as they were.
"""

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from autograder.course.course_settings import (
    SETTINGS_NAME,
    AppliedPoints,
    CourseSettingsError,
    course_settings_file,
    read_settings,
    settings_path,
    settings_text,
    use_course_settings,
    with_points,
)
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = [
    "CourseRelease", "RescaledGrade", "course_points", "course_settings_of", "grades_source_course_settings",
    "points_in_words", "release_course", "submitted_course_settings",
]

CONFIG = "nbgrader_config.py"
GRADEBOOK = "gradebook.db"  # nbgrader_course.GRADEBOOK, without importing it (and nbformat) for a listing
SUBMITTED = "submitted"  # nbgrader's CourseDirectory.submitted_directory, as `course new` leaves it
CHOSEN_BY_CONFIG = "use_course_settings("  # in a course's nbgrader_config.py (nbgrader_course.course_points_lines)
MANUAL_DIGITS = 2  # a rescaled manual grade is rounded to hundredths of a point


@dataclass(frozen=True)
class RescaledGrade:
    """A manual grade given to a cell whose points changed: kept in proportion, or flagged where it cannot be."""

    student: str
    notebook: str
    cell: str
    before: float
    after: float
    max_before: float
    max_after: float
    flagged: bool  # the cell was worth 0: no proportion; left as it was and marked for review in formgrader

    def __str__(self) -> str:
        what = "flagged for review (the cell was worth 0)" if self.flagged else \
            f"{self.before:g} of {self.max_before:g} -> {self.after:g} of {self.max_after:g}"
        return f"{clean(self.student)}'s {clean(self.notebook)} {clean(self.cell)}: manual grade {what}"


@dataclass(frozen=True)
class CourseRelease:
    """What `release_course` did."""

    root: Path
    settings: Path
    applied: AppliedPoints
    changed: dict[tuple[str, str], tuple[float, float]]  # (notebook, graded cell) -> (points before, after)
    rescaled: tuple[RescaledGrade, ...]
    release: Path
    wheel: Path
    readme: Path


def course_settings_of(root: Path) -> Path | None:
    """The points file of the course folder `root`: its course_settings.toml where the folder holds a course
    (nbgrader_config.py) and that file (or a link by that name, refused when read); None otherwise."""
    root = Path(root).absolute()
    path = course_settings_file(root)
    is_course = (root / CONFIG).is_file() and (path.exists() or path.is_symlink())
    return path if is_course else None


def submitted_course_settings(submitted: Path) -> Path | None:
    """The points file of the course whose `submitted/` folder `submitted` is (`attnkit grade DIR/submitted`); never
    a file in submitted/ itself or beside a notebook, where students' files are."""
    folder = Path(submitted).absolute()
    return course_settings_of(folder.parent) if folder.name == SUBMITTED else None


def grades_source_course_settings(source: Path) -> Path | None:
    """The points file of the course `attnkit export SOURCE` reads: SOURCE the course folder, its gradebook, or an
    `attnkit grade` output folder inside it (`DIR/grades`)."""
    source = Path(source).absolute()
    if source.is_dir() and (source / CONFIG).is_file():
        return course_settings_of(source)
    return course_settings_of(source.parent)


def points_in_words(root: Path) -> str:
    """Which points nbgrader and formgrader grade the course in `root` with, in a line for the instructor."""
    root = Path(root).absolute()
    config = root / CONFIG
    named = config.is_file() and CHOSEN_BY_CONFIG in config.read_text(encoding="utf-8", errors="replace")
    if named and course_settings_of(root) is not None:
        return f"points: the course's own, {clean(course_settings_file(root))} (`attnkit course points {clean(root)}`)"
    return (f"points: this course keeps none of its own; it grades with {clean(settings_path())} (`attnkit course "
            f"release {clean(root)}` gives it its own)")


def course_points(root: Path) -> tuple[Path, AppliedPoints]:
    """The course's settings file and the points it gives, chosen as this process's (refused, naming the problem,
    when the file is wrong or the folder holds no course)."""
    root = Path(root).absolute()
    path = course_settings_of(root)
    if path is None:
        raise Refused(f"course points: {clean(root)} holds no course with points of its own (no {CONFIG} or no "
                      f"{SETTINGS_NAME}); `attnkit course release {clean(root)}` gives a course made before "
                      "attnkit kept them in the course folder its own file")
    use_course_settings(path)
    from autograder.course.registry import course_points as applied

    return path, applied()


def release_course(root: Path, changes: Sequence[str] = (),
                   build_wheel: Callable[[Path], Path] | None = None) -> CourseRelease:
    """The course's points changed by `changes` ("ID=N" each; none: the file as it is) and its release, student
    kit and gradebook made to match (see the module's docstring); Refused, with nothing changed, when it cannot.
    `build_wheel(folder)` writes the kit's wheel there (default: the kit's own build, with this process's points)."""
    root = Path(root).absolute()
    _refuse_a_folder_without_a_course(root)
    wanted = _changes(changes)
    settings = course_settings_file(root)
    staged: Path | None = None
    try:
        text = _current_text(settings)
        if wanted:
            text = with_points(text, wanted, settings)
        descriptor, name = tempfile.mkstemp(prefix=".course_settings-", suffix=".toml", dir=root)
        staged = Path(name)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        # This process's points are the new ones from here on: the source cells' text and the kit are written from
        # them (the registry reads them once, so this is refused where this process read others already).
        use_course_settings(staged)
        from autograder.course import registry

        applied = registry.course_points()  # the file and its changes checked against the course's checks
        registry.declarations()  # read now, while the staged file is there: the catalogue is built from them
        points_before = _graded_cell_points(root)
        with tempfile.TemporaryDirectory(prefix="attnkit-kit-") as kit_folder:
            wheel = _built_wheel(root, build_wheel, Path(kit_folder))
            return _release(root, settings, staged, applied, points_before, wheel)
    except CourseSettingsError as problem:
        raise Refused(f"course points {clean(root)}: {problem}; nothing was changed") from None
    finally:
        if staged is not None:
            staged.unlink(missing_ok=True)


def _release(root: Path, settings: Path, staged: Path, applied: AppliedPoints,
             points_before: dict[tuple[str, str], float], wheel: Path) -> CourseRelease:
    from autograder.course.assignment import ASSIGNMENT
    from autograder.integrations.course_setup import write_kit_readme
    from autograder.integrations.nbgrader_course import NbgraderError, generate_release
    from autograder.integrations.nbgrader_points import record_earlier_points
    from autograder.integrations.source_notebooks import refresh_source_notebooks

    backup = _Backup(root)
    try:
        mode = settings.stat().st_mode & 0o777 if settings.is_file() and not settings.is_symlink() else 0o644
        staged.chmod(mode)
        os.replace(staged, settings)
        _choose_in_config(root, settings)
        refresh_source_notebooks(root / "source" / ASSIGNMENT)
        release = generate_release(root)  # nbgrader's --force: the release folder made anew, without the kit
        shutil.copyfile(wheel, release / wheel.name)
        readme = write_kit_readme(release, wheel.name)
        points_after = _graded_cell_points(root)
        changed = {key: (before, points_after[key]) for key, before in points_before.items()
                   if key in points_after and points_after[key] != before}
        record_earlier_points(root, {key: before for key, (before, _after) in changed.items()})
        rescaled = _rescale_manual_grades(root, changed)
    except (NbgraderError, OSError, CourseSettingsError) as problem:
        backup.restore()
        raise Refused(f"course release {clean(root)}: {clean(problem)}; the course was put back as it was") from None
    except BaseException:
        backup.restore()
        raise
    finally:
        backup.discard()
    return CourseRelease(root, settings, applied, changed, tuple(rescaled), release, release / wheel.name, readme)


def _refuse_a_folder_without_a_course(root: Path) -> None:
    from autograder.course.assignment import ASSIGNMENT

    if not (root / CONFIG).is_file() or not any((root / "source" / ASSIGNMENT).glob("*.ipynb")):
        raise Refused(f"course points: {clean(root)} holds no course ({CONFIG} and source/{ASSIGNMENT}/); make one "
                      "with `attnkit course new DIR`")


def _changes(changes: Sequence[str]) -> dict[str, Fraction]:
    """{id: points} from "ID=N" texts; refused, naming the one that is not."""
    wanted: dict[str, Fraction] = {}
    for change in changes:
        key, equals, value = change.partition("=")
        try:
            number = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            number = None
        if not equals or not key.strip() or number is None:
            raise Refused(f"course points: --set {clean(change)!r} is not ID=POINTS (e.g. --set "
                          "softmax_naive.random=3; `attnkit course points DIR` lists the ids); nothing was changed")
        wanted[key.strip()] = number
    return wanted


def _current_text(settings: Path) -> str:
    """The course's settings file as it is; for a course made before courses kept their own, a new one saying what
    the settings in force say (ATTNKIT_COURSE_SETTINGS, else the checkout's)."""
    from autograder.course.course_settings import course_file_text

    if settings.exists() or settings.is_symlink():
        return course_file_text(settings)  # refused where it is a link, or not the instructor's
    return settings_text(read_settings(settings_path()))


def _choose_in_config(root: Path, settings: Path) -> None:
    """A course made before courses kept their own points: its nbgrader_config.py names the file from now on."""
    from autograder.integrations.nbgrader_course import course_points_lines

    config = root / CONFIG
    text = config.read_text(encoding="utf-8")
    if CHOSEN_BY_CONFIG not in text:
        config.write_text(text.rstrip("\n") + "\n" + "\n".join(course_points_lines(settings)) + "\n",
                          encoding="utf-8")


def _built_wheel(root: Path, build_wheel: Callable[[Path], Path] | None, folder: Path) -> Path:
    from autograder.integrations.course_setup import kit_wheel

    try:
        return (build_wheel or kit_wheel)(folder)
    except OSError as problem:
        raise Refused(f"course points {clean(root)}: {clean(problem)}; nothing was changed") from None


def _graded_cell_points(root: Path) -> dict[tuple[str, str], float]:
    """{(notebook, graded cell): points} of the assignment in the course's gradebook (empty before its first
    release)."""
    if not (root / GRADEBOOK).is_file():
        return {}
    from nbgrader.api import Gradebook, MissingEntry

    from autograder.course.assignment import ASSIGNMENT
    from autograder.integrations.nbgrader_course import COURSE_ID, db_url

    with Gradebook(db_url(root), COURSE_ID) as gradebook:
        try:
            assignment = gradebook.find_assignment(ASSIGNMENT)
        except MissingEntry:
            return {}
        return {(notebook.name, cell.name): float(cell.max_score) for notebook in assignment.notebooks
                for cell in notebook.grade_cells}


def _rescale_manual_grades(root: Path, changed: dict[tuple[str, str], tuple[float, float]]) -> list[RescaledGrade]:
    """Each manual grade of a changed cell kept in proportion to its points (or flagged), in one transaction."""
    if not changed:
        return []
    from nbgrader.api import Gradebook

    from autograder.course.assignment import ASSIGNMENT
    from autograder.integrations.nbgrader_course import COURSE_ID, db_url

    rescaled = []
    with Gradebook(db_url(root), COURSE_ID) as gradebook:
        for submission in gradebook.find_assignment(ASSIGNMENT).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    key = (notebook.name, grade.name)
                    if key not in changed or grade.manual_score is None:
                        continue
                    (max_before, max_after), before = changed[key], float(grade.manual_score)
                    flagged = max_before == 0
                    if flagged:
                        grade.needs_manual_grade = True
                        after = before
                    else:
                        after = round(before * max_after / max_before, MANUAL_DIGITS)
                        grade.manual_score = after
                    rescaled.append(RescaledGrade(submission.student.id, notebook.name, grade.name, before, after,
                                                  max_before, max_after, flagged))
        gradebook.db.commit()
    return rescaled


class _Backup:
    """The files a change of points writes, kept aside (in the course folder: same disk, nothing else reads it) and
    put back where a step fails."""

    def __init__(self, root: Path) -> None:
        from autograder.course.assignment import ASSIGNMENT
        from autograder.integrations.nbgrader_points import EARLIER_POINTS

        self.root = root
        self.folder = Path(tempfile.mkdtemp(prefix=".attnkit-points-backup-", dir=root))
        self.files = [root / SETTINGS_NAME, root / CONFIG, root / GRADEBOOK, root / EARLIER_POINTS,
                      *sorted((root / "source" / ASSIGNMENT).glob("*.ipynb"))]
        self.release = root / "release" / ASSIGNMENT
        self.kept: dict[Path, Path | None] = {}
        for index, path in enumerate(self.files):
            if path.is_file() and not path.is_symlink():
                copy = self.folder / str(index)
                shutil.copy2(path, copy)
                self.kept[path] = copy
            else:
                self.kept[path] = None
        self.release_copy = self.folder / "release"
        if self.release.is_dir():
            shutil.copytree(self.release, self.release_copy, symlinks=True)

    def restore(self) -> None:
        for path, copy in self.kept.items():
            if copy is None:
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                continue
            staging = path.with_name(f".{path.name}.restore")
            shutil.copy2(copy, staging)
            os.replace(staging, path)
        if self.release_copy.is_dir():
            shutil.rmtree(self.release, ignore_errors=True)
            shutil.copytree(self.release_copy, self.release, symlinks=True)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
