"""The integrations stage's entries, what `attnkit export`, `attnkit report`, `attnkit gradescope build` and `attnkit
student-kit build` call (README, "Public API"). Each imports its integration when called: building the Gradescope
bundle needs neither torch nor the checks."""

from pathlib import Path
from typing import TYPE_CHECKING

from autograder.refusal import Refused

if TYPE_CHECKING:  # the LMS module imports the catalogue, and with it torch
    from collections.abc import Callable, Sequence

    from autograder.integrations.course_points import CourseRelease
    from autograder.integrations.course_setup import NewCourse
    from autograder.integrations.course_students import RemovedStudent
    from autograder.integrations.gradebook_report import GradebookReport
    from autograder.integrations.lms import Export

__all__ = ["build_gradescope_bundle", "build_student_kit", "export_grades", "new_course", "release_course",
           "remove_student", "report_from_gradebook", "serve_formgrader"]


def export_grades(source: Path, roster: Path, out: Path, *, lms: str, id_column: str | None = None,
                  per_exercise: bool = False, column: str | None = None, match: str | None = None,
                  assignment: str | None = None, encoding: str = "utf-8") -> tuple["Export", str | None]:
    """Grades as a Canvas or Moodle gradebook import file (`lms`: "canvas" or "moodle") and FILE.notes.csv beside
    it (`attnkit export`). `source` is an nbgrader course directory (or its gradebook file), whose gradebook is read
    for `assignment` (default: the course's), or an `attnkit grade` output, whose class report gets a link to the
    file. `encoding` is the roster's (UTF-8 by default). Returns what was exported and, when the report could not be
    updated (the file itself is written), why. Raises Refused when it cannot export, or when a roster row cannot be
    matched to one student of a gradebook: nothing is written then."""
    from autograder.course.assignment import ASSIGNMENT
    from autograder.integrations.lms import LmsError, export, read_grade_output
    from autograder.integrations.nbgrader_gradebook import is_course, read_gradebook
    from autograder.outputs.class_report import add_link

    if lms == "moodle" and id_column is None:
        raise Refused("--moodle needs --id-column email, username or idnumber")
    course = is_course(source)
    if assignment is not None and not course:
        raise Refused(f"--assignment reads an nbgrader course's gradebook; {source} is not a course directory "
                      "(an `attnkit grade` output holds one assignment)")
    try:
        grades = read_gradebook(source, assignment or ASSIGNMENT) if course else read_grade_output(source)
        result = export(grades, roster, out, lms=lms, id_column=id_column, per_exercise=per_exercise,
                        column=column, match=match, encoding=encoding)
    except LmsError as problem:
        raise Refused(str(problem)) from None
    if course:
        return result, None
    try:
        add_link(source, f"{lms.capitalize()} import file ({out.name})", result.path)
    except OSError as error:  # the file is written; only the report's link is missing
        return result, f"class_report.html not updated with a link to {result.path}: {error}"
    return result, None


def report_from_gradebook(course: Path, out_dir: Path | None = None,
                          assignment: str | None = None) -> "GradebookReport":
    """The class report of an nbgrader course from its gradebook (`attnkit report`): the totals formgrader, the
    feedback and the exports show, every student of the gradebook a row, the mistakes from attnkit's records in
    autograded/, no grading run; written to COURSE/class_report.html (or `out_dir`). Raises Refused when `course` is
    no course folder or its gradebook cannot be read."""
    from autograder.course.assignment import ASSIGNMENT
    from autograder.integrations.gradebook_report import write_gradebook_report

    return write_gradebook_report(course, out_dir, assignment or ASSIGNMENT)


def build_gradescope_bundle(out_zip: Path, lang: str | None = None) -> list[str]:
    """The Gradescope autograder zip, to upload as the assignment's autograder (`attnkit gradescope build`); the
    names it holds. Raises Refused when it cannot be built."""
    from autograder.integrations.gradescope import BundleError, build_bundle

    try:
        return build_bundle(out_zip, lang=lang)
    except (BundleError, OSError) as problem:
        raise Refused(str(problem)) from None


def build_student_kit(out_dir: Path) -> dict[str, int]:
    """The student kit, an installable package of the public checks as stored vectors without the reference, in
    `out_dir` (`attnkit student-kit build`); {path: size in bytes}. Raises Refused when it cannot be written."""
    from autograder.integrations.student_kit.build import KitBuildError, build

    try:
        return build(out_dir)
    except (KitBuildError, OSError) as problem:
        raise Refused(str(problem)) from None


def new_course(root: Path, roster: Path | None = None, exchange: Path | None = None,
               encoding: str = "utf-8") -> "NewCourse":
    """An nbgrader course of one's own in `root` (`attnkit course new`): the config with the sandbox, the release with
    the student kit beside it, the exchange folder, the roster's students (a CSV in `encoding`) in the gradebook.
    Raises Refused when it cannot, leaving nothing behind."""
    from autograder.integrations.course_setup import new_course as make

    return make(root, roster=roster, exchange=exchange, encoding=encoding)


def remove_student(course: Path, student_id: str) -> "RemovedStudent":
    """Take a student (e.g. the rehearsal's login) out of the course (`attnkit course remove-student`): the gradebook,
    submitted/, autograded/, feedback/ and the exchange's inbound/ and released feedback, all kept in
    DIR/removed/ID-<time>/. Raises Refused for an id nbgrader cannot have made, or no such course or student."""
    from autograder.integrations.course_students import remove_student as remove

    return remove(course, student_id)


def serve_formgrader(course: Path, port: int | None, say: "Callable[[str], None]") -> int:
    """JupyterLab with formgrader for the course, on 127.0.0.1 with a token, until Ctrl-C (`attnkit course
    formgrader`); `say` gets the URL to open. Raises Refused when it cannot start."""
    from autograder.integrations.course_formgrader import serve

    return serve(course, port, say)


def release_course(root: Path, changes: "Sequence[str]" = ()) -> "CourseRelease":
    """The course's points changed by `changes` ("ID=N" each; none: DIR/course_settings.toml as it is) and its
    release, student kit and gradebook made to match them, manual grades kept in proportion (`attnkit course points
    DIR --set ...`, `attnkit course release DIR`). Raises Refused, with nothing changed, when it cannot."""
    from autograder.integrations.course_points import release_course as release

    return release(root, changes)
