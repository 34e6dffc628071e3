"""Drive nbgrader for the attnkit course: throwaway course directories, the committed release, grades.

Every step goes through nbgrader itself (its command line, run with this interpreter, and its
`Gradebook` API); nothing here re-implements a preprocessor.

    course = make_course(tmp)                # source/ copied, nbgrader_config.py, sqlite gradebook
    release = generate_release(course)       # nbgrader generate_assignment attention
    submit(course, "alice", some_notebooks)  # -> submitted/alice/attention/
    autograde(course)                        # nbgrader autograde attention
    read_scores(course)                      # {"alice": {"01_attention_without_weights": 18.0, ...}}

`python -m autograder.integrations.nbgrader_course release` (what `make release` runs) first writes the cells of
`source/attention/` that come from the catalogue (autograder.integrations.source_notebooks: overviews, "What is
graded" cells, the graded cells' points), then regenerates the repository's `release/attention/` from it;
`python -m autograder.integrations.nbgrader_course check-release` fails when either is out of date.
"""

import argparse
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from autograder.course.assignment import ASSIGNMENT
from autograder.integrations.course_roster import id_problem
from autograder.integrations.nbgrader_sandbox import in_kernel_config_lines
from autograder.refusal import Refused

if TYPE_CHECKING:  # nbgrader's gradebook is imported where it is opened: --help stays fast
    from nbgrader.api import Gradebook

__all__ = [
    "ASSIGNMENT", "COURSE_ID", "GRADEBOOK", "NbgraderError", "autograde", "compare_releases", "course_points_lines",
    "db_url", "default_repo_root", "export_grades", "generate_feedback", "generate_release", "main", "make_course",
    "nbgrader_command", "read_cell_scores", "read_scores", "run_nbgrader", "submit",
]

PathLike = str | os.PathLike[str]

logger = logging.getLogger(__name__)

COURSE_ID = "attnkit"
GRADEBOOK = "gradebook.db"
# Lines of nbgrader's output shown when one of its commands fails.
ERROR_TAIL_LINES = 40
EXCEPTION_LINE = re.compile(r"^\s*[\w.]+(Error|Exception): ")
# Never copied into a course nor compared between releases.
IGNORED_NAMES = (".ipynb_checkpoints", "__pycache__", ".DS_Store")


class NbgraderError(RuntimeError):
    """An nbgrader command failed; the message ends with the tail of its output."""


def default_repo_root() -> Path:
    """The attnkit checkout: the parent of this package when it has `source/`, else the current directory."""
    for candidate in (Path(__file__).resolve().parents[2], Path.cwd()):
        if (candidate / "source" / ASSIGNMENT).is_dir():
            return candidate
    raise FileNotFoundError(
        f"cannot find source/{ASSIGNMENT}/ next to the autograder package nor in {Path.cwd()}; "
        "pass the attnkit checkout explicitly"
    )


def _repo(repo_root: PathLike | None) -> Path:
    return Path(repo_root) if repo_root is not None else default_repo_root()


def _ignore(_directory: str, names: list[str]) -> list[str]:
    return [name for name in names if name in IGNORED_NAMES]


def _notebook_names(directory: PathLike) -> list[str]:
    return sorted(path.name for path in Path(directory).glob("*.ipynb"))


def make_course(root: PathLike, repo_root: PathLike | None = None, *, in_kernel: bool = False,
                exchange: PathLike | None = None, self_contained: bool = False) -> Path:
    """Build an nbgrader course directory at `root` (created if missing; must not hold a course yet).

    It gets a copy of the repository's `source/attention/` and an `nbgrader_config.py` that loads the
    repository's own config and adds the course root and a sqlite gradebook inside `root`. The repository's config
    autogrades in attnkit's sandbox; `in_kernel=True` switches this course back to nbgrader's own grading in the
    student's kernel (what `make demo` shows beside it, and what the sandbox prevents). `self_contained=True` copies
    the repository config's text instead of loading it and gives the course points of its own (a course that outlives
    the checkout: `attnkit course new`): `root/course_settings.toml`, written from the settings in force, which the
    config names last (autograder.course.course_settings.use_course_settings). `exchange` sets nbgrader's exchange
    folder.
    """
    root = Path(root).resolve()
    repo = _repo(repo_root).resolve()
    source = repo / "source" / ASSIGNMENT
    if not _notebook_names(source):
        raise FileNotFoundError(f"no notebooks in {source}: nothing to build a course from")
    if (root / "source").exists() or (root / "nbgrader_config.py").exists():
        raise FileExistsError(f"{root} already holds a course; give make_course an empty or new directory")
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, root / "source" / ASSIGNMENT, ignore=_ignore)

    repo_config = repo / "nbgrader_config.py"
    lines = [
        "# Written by autograder.integrations.nbgrader_course.make_course: a throwaway copy of the attnkit course.",
        "c = get_config()  # noqa: F821",
    ]
    if repo_config.is_file() and self_contained:
        lines += [f"# The sandbox and the course's settings, as in {repo_config} when this course was made:",
                  repo_config.read_text(encoding="utf-8").rstrip(),
                  "# This course's own folders:"]
    elif repo_config.is_file():
        lines.append(f"load_subconfig({repo_config.name!r}, path={str(repo)!r})  # noqa: F821")
    if exchange is not None:
        lines.append(f"c.Exchange.root = {str(Path(exchange).resolve())!r}")
    lines += [
        f"c.CourseDirectory.root = {str(root)!r}",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.CourseDirectory.db_url = {db_url(root)!r}",
    ]
    if in_kernel:
        lines += ["# Grading in the student's kernel (nbgrader's default): no sandbox.", *in_kernel_config_lines()]
    if self_contained:
        lines += course_points_lines(_write_course_settings(root))
    lines.append("")
    (root / "nbgrader_config.py").write_text("\n".join(lines), encoding="utf-8")
    return root


def _write_course_settings(root: Path) -> Path:
    """The course's own points file, saying what the settings in force say (refused, naming the problem, when they
    cannot be used)."""
    from autograder.course.course_settings import course_settings_file, read_settings, settings_path, settings_text
    from autograder.course.registry import course_points

    course_points()  # the settings in force, checked against the course's checks
    path = course_settings_file(root)
    path.write_text(settings_text(read_settings(settings_path())), encoding="utf-8")
    return path


def course_points_lines(settings_file: Path) -> list[str]:
    """The lines of a course's nbgrader_config.py that make its points those of `settings_file`, in every process
    that loads the config (nbgrader's commands, formgrader's server). Last in the file: nothing after them is skipped
    should they fail."""
    return ["# This course's points: its own settings file, read before any grading (docs/instructor/points.md).",
            "import autograder.course.course_settings  # noqa: E402",
            f"autograder.course.course_settings.use_course_settings({str(settings_file)!r})"]


def db_url(course_root: PathLike) -> str:
    return "sqlite:///" + str(Path(course_root).resolve() / GRADEBOOK)


def nbgrader_command(course_root: PathLike, *args: str) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of `nbgrader ARGS`, run with this interpreter in the course directory."""
    if not (Path(course_root) / "nbgrader_config.py").is_file():
        raise FileNotFoundError(f"{course_root} is not a course directory (no nbgrader_config.py); see make_course")
    env = dict(os.environ)
    # nbgrader shells out to `alembic`, installed next to this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return [sys.executable, "-m", "nbgrader", *args], env


def _nbgrader(course_root: PathLike, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `nbgrader ARGS` in the course directory with this interpreter; raise NbgraderError on failure."""
    course_root = Path(course_root)
    command, env = nbgrader_command(course_root, *args)
    process = subprocess.run(command, cwd=course_root, env=env, capture_output=True, text=True, check=False)
    if process.returncode != 0:
        output = (process.stdout + process.stderr).rstrip().splitlines()
        # the exception lines of its tracebacks ("ValidationError: Duplicate grade id: ...") say why
        reasons = list(dict.fromkeys(line.strip() for line in output if EXCEPTION_LINE.match(line)))
        reason = "".join(f"\n  {line}" for line in reasons[:5])
        tail = "\n".join(output[-ERROR_TAIL_LINES:])
        raise NbgraderError(
            f"`nbgrader {' '.join(args)}` failed with exit code {process.returncode} in {course_root}."
            f"{' Reason:' if reason else ''}{reason}\n"
            f"Last lines of its output:\n{tail}"
        )
    return process


def run_nbgrader(course_root: PathLike, *args: str) -> str:
    """`nbgrader ARGS` in the course directory, as the course is configured; its log (stdout, then stderr).
    Raises NbgraderError on failure."""
    process = _nbgrader(course_root, *args)
    return process.stdout + process.stderr


def generate_release(course_root: PathLike) -> Path:
    """`nbgrader generate_assignment attention`: the student version, in `release/attention/`."""
    course_root = Path(course_root)
    _nbgrader(course_root, "generate_assignment", ASSIGNMENT, "--force")
    release = course_root / "release" / ASSIGNMENT
    expected = _notebook_names(course_root / "source" / ASSIGNMENT)
    missing = sorted(set(expected) - set(_notebook_names(release)))
    if missing:
        raise NbgraderError(f"nbgrader generate_assignment left no {', '.join(missing)} in {release}")
    return release


def submit(course_root: PathLike, student_id: str, notebooks_dir: PathLike) -> Path:
    """Place a student's notebooks in `submitted/<student_id>/attention/`, replacing an earlier submission.

    `notebooks_dir` must hold every notebook of the assignment; other files in it are not submitted.
    """
    course_root = Path(course_root)
    notebooks_dir = Path(notebooks_dir)
    problem = id_problem(student_id)
    if problem:
        raise ValueError(f"student {problem}")
    if not notebooks_dir.is_dir():
        raise FileNotFoundError(f"submission directory {notebooks_dir} does not exist")
    expected = _notebook_names(course_root / "source" / ASSIGNMENT)
    if not expected:
        raise FileNotFoundError(f"{course_root} has no source/{ASSIGNMENT}/ notebooks; see make_course")
    missing = sorted(set(expected) - set(_notebook_names(notebooks_dir)))
    if missing:
        raise FileNotFoundError(
            f"submission {notebooks_dir} lacks {', '.join(missing)}; the assignment has {', '.join(expected)}"
        )
    for name in expected:
        try:
            nbformat.read(notebooks_dir / name, as_version=4)
        except Exception as error:  # nbformat raises several kinds for a broken file
            raise ValueError(f"{notebooks_dir / name} is not a readable notebook: {error}") from error

    destination = course_root / "submitted" / student_id / ASSIGNMENT
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    for name in expected:
        shutil.copyfile(notebooks_dir / name, destination / name)
    return destination


def _submitted_students(course_root: PathLike) -> list[str]:
    submitted = Path(course_root) / "submitted"
    if not submitted.is_dir():
        return []
    return sorted(path.parent.name for path in submitted.glob(f"*/{ASSIGNMENT}") if path.is_dir())


def autograde(course_root: PathLike, students: Sequence[str] | None = None) -> Path:
    """`nbgrader autograde attention` for the given students (default: every submitted one).

    Returns the `autograded/` directory. A notebook that raises is graded, not an error; an error is
    nbgrader failing to grade (its output tail is in the message) or a notebook it left ungraded.
    """
    course_root = Path(course_root)
    submitted = _submitted_students(course_root)
    if students is None:
        students = submitted
        if not students:
            raise ValueError(f"no submissions in {course_root / 'submitted'}; see submit()")
        _nbgrader(course_root, "autograde", ASSIGNMENT, "--force")
    else:
        students = list(students)
        unknown = sorted(set(students) - set(submitted))
        if unknown:
            raise ValueError(f"no submission from {', '.join(unknown)}; submitted: {', '.join(submitted) or 'none'}")
        for student in students:
            _nbgrader(course_root, "autograde", ASSIGNMENT, "--force", f"--student={student}")

    expected = _notebook_names(course_root / "source" / ASSIGNMENT)
    for student in students:
        graded = _notebook_names(course_root / "autograded" / student / ASSIGNMENT)
        missing = sorted(set(expected) - set(graded))
        if missing:
            raise NbgraderError(f"nbgrader autograde left {student}'s {', '.join(missing)} ungraded")
    return course_root / "autograded"


def generate_feedback(course_root: PathLike) -> Path:
    """`nbgrader generate_feedback attention`: one HTML file per autograded notebook, in `feedback/`."""
    course_root = Path(course_root)
    _nbgrader(course_root, "generate_feedback", ASSIGNMENT, "--force")
    return course_root / "feedback"


def export_grades(course_root: PathLike) -> Path:
    """`nbgrader export`: the gradebook as CSV (one row per student and assignment); returns its path."""
    course_root = Path(course_root)
    destination = course_root / "grades.csv"
    _nbgrader(course_root, "export", f"--to={destination}")
    if not destination.is_file():
        raise NbgraderError(f"nbgrader export wrote no {destination}")
    return destination


def _gradebook(course_root: PathLike) -> "Gradebook":
    from nbgrader.api import Gradebook  # imports sqlalchemy & co.: only when grades are read

    database = Path(course_root) / GRADEBOOK
    if not database.is_file():
        raise FileNotFoundError(f"no gradebook at {database}; run generate_release and autograde first")
    return Gradebook(db_url(course_root), COURSE_ID)


def read_scores(course_root: PathLike) -> dict[str, dict[str, float]]:
    """Autograded scores from the gradebook: {student: {notebook: score}}."""
    with _gradebook(course_root) as gradebook:
        assignment = gradebook.find_assignment(ASSIGNMENT)
        return {
            submission.student.id: {notebook.name: notebook.score for notebook in submission.notebooks}
            for submission in assignment.submissions
        }


def read_cell_scores(course_root: PathLike) -> dict[str, dict[str, dict[str, tuple[float, float]]]]:
    """Per graded cell: {student: {notebook: {grade_id: (score, max_score)}}}."""
    with _gradebook(course_root) as gradebook:
        assignment = gradebook.find_assignment(ASSIGNMENT)
        return {
            submission.student.id: {
                notebook.name: {grade.name: (grade.score, grade.max_score) for grade in notebook.grades}
                for notebook in submission.notebooks
            }
            for submission in assignment.submissions
        }


def _fresh_release(repo_root: PathLike | None, workdir: PathLike) -> Path:
    course = make_course(Path(workdir) / "course", repo_root)
    return generate_release(course)


def _sync_release(repo_root: PathLike | None = None) -> Path:
    """Write `source/attention/`'s cells that come from the catalogue, then regenerate the repository's
    `release/attention/` from it; returns the release."""
    repo = _repo(repo_root)
    from autograder.integrations.source_notebooks import refresh_source_notebooks  # the points: course_settings.toml

    for name in refresh_source_notebooks(repo / "source" / ASSIGNMENT):
        logger.info("updated source/%s/%s from the catalogue", ASSIGNMENT, name)
    destination = repo / "release" / ASSIGNMENT
    with tempfile.TemporaryDirectory(prefix="attnkit-release-") as workdir:
        fresh = _fresh_release(repo, workdir)
        if destination.exists():
            shutil.rmtree(destination)
        shutil.copytree(fresh, destination, ignore=_ignore)
    return destination


def _comparable(notebook_path: PathLike) -> list[tuple[str, str, dict[str, Any]]]:
    """What a release must keep: per cell its type, source and nbgrader metadata (no outputs, ids or counts)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    return [
        (cell.cell_type, cell.source, dict(cell.get("metadata", {}).get("nbgrader", {})))
        for cell in notebook.cells
    ]


def _files(directory: PathLike) -> list[str]:
    folder = Path(directory)
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and not set(path.relative_to(folder).parts) & set(IGNORED_NAMES)
    )


def compare_releases(expected_dir: PathLike, actual_dir: PathLike) -> list[str]:
    """Differences between two release directories, as readable lines (empty when in sync)."""
    expected_dir, actual_dir = Path(expected_dir), Path(actual_dir)
    if not actual_dir.is_dir():
        return [f"{actual_dir} does not exist"]
    expected, actual = _files(expected_dir), _files(actual_dir)
    problems = [f"missing: {name}" for name in expected if name not in actual]
    problems += [f"not generated from source: {name}" for name in actual if name not in expected]
    for name in expected:
        if name not in actual:
            continue
        if not name.endswith(".ipynb"):
            if (expected_dir / name).read_bytes() != (actual_dir / name).read_bytes():
                problems.append(f"differs: {name}")
            continue
        want, have = _comparable(expected_dir / name), _comparable(actual_dir / name)
        if len(want) != len(have):
            problems.append(f"{name}: {len(have)} cells, a fresh release has {len(want)}")
        for index, (fresh_cell, committed_cell) in enumerate(zip(want, have, strict=False)):
            if fresh_cell != committed_cell:
                grade_id = fresh_cell[2].get("grade_id", "")
                label = f" ({grade_id})" if grade_id else ""
                problems.append(f"{name}: cell {index}{label} differs from a fresh release")
    return problems


def _release_differences(repo_root: PathLike | None = None) -> list[str]:
    """How `source/attention/` differs from the catalogue (its overviews, "What is graded" cells and graded cells'
    points) and the committed `release/attention/` from a fresh `nbgrader generate_assignment`."""
    repo = _repo(repo_root)
    from autograder.integrations.source_notebooks import refresh_source_notebooks  # the points: course_settings.toml

    stale = refresh_source_notebooks(repo / "source" / ASSIGNMENT, write=False)
    problems = [f"source/{ASSIGNMENT}/{name}: its overview, \"What is graded\" cells or graded cells' points differ "
                "from the catalogue" for name in stale]
    with tempfile.TemporaryDirectory(prefix="attnkit-release-") as workdir:
        return problems + compare_releases(_fresh_release(repo, workdir), repo / "release" / ASSIGNMENT)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.integrations.nbgrader_course",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("release", "check-release"),
                        help="release: write source/attention/'s catalogue cells and regenerate release/attention/; "
                             "check-release: fail when either is stale")
    parser.add_argument("--repo", type=Path, default=None, help="the attnkit checkout (default: this one)")
    args = parser.parse_args(argv)
    from autograder import logs  # only this command line configures logging, not an import of the module

    logs.configure()
    try:
        if args.command == "release":
            destination = _sync_release(args.repo)
            print(f"regenerated {destination} from source/{ASSIGNMENT}/")
            return 0
        problems = _release_differences(args.repo)
    except (NbgraderError, OSError, ValueError, Refused) as error:  # Refused: a wrong course_settings.toml
        logger.error("error: %s", error)
        return 1
    if problems:
        logger.error("source/%s/ or release/%s/ is out of date (run `make release`):%s", ASSIGNMENT, ASSIGNMENT,
                     "".join(f"\n  {problem}" for problem in problems))
        return 1
    print(f"release/{ASSIGNMENT}/ is in sync with source/{ASSIGNMENT}/, and source/{ASSIGNMENT}/ with the catalogue")
    return 0


if __name__ == "__main__":
    sys.exit(main())
