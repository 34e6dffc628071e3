"""`attnkit course remove-student DIR ID`: a student taken out of the course, e.g. the rehearsal's login
(docs/instructor/setup.md).

nbgrader's own `nbgrader db student remove ID --force` deletes the student and their grades from the gradebook and
leaves the rest: formgrader still lists a student who has a folder in submitted/ (as "None, None"), and the next
`nbgrader collect` copies their submission back from the exchange's inbound/, which autograde adds to the gradebook
again. This takes the student out of all of them, and keeps what it takes out in DIR/removed/ID-<UTC time>/:

    gradebook.db                        the student and their submissions (nbgrader's Gradebook.remove_student);
                                        what the gradebook held of them first written to gradebook.json there
    submitted/ID, autograded/ID, feedback/ID   moved there
    EXCHANGE/attnkit/inbound/ID+...     what they handed in through the exchange, moved there (inbound/)
    EXCHANGE/attnkit/feedback/HASH.html the feedback released to them (its name computed from feedback/ID's
                                        submission_secret.txt, as `nbgrader release_feedback` names it), moved there

The exchange is the one the course's configuration names (nbgrader's own configuration files, then DIR's). An id
nbgrader cannot use as a folder name (`course_roster.id_problem`) is refused before anything is read. Nothing is
followed through a link: a course folder (submitted/, ...) or an exchange folder that is a link is left alone and
said; an entry of the student's that is a link is moved as the link, never what it points to.
"""

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.integrations.course_roster import id_problem
from autograder.integrations.course_setup import COURSE_ID
from autograder.refusal import Refused
from autograder.safe_text import clean

if TYPE_CHECKING:  # nbgrader's gradebook imports sqlalchemy & co.: only when a student is removed
    from nbgrader.api import Gradebook, Student

__all__ = ["RemovedStudent", "remove_student"]

REMOVED = "removed"  # DIR/removed/: what was taken out, kept
GRADEBOOK = "gradebook.db"  # where `attnkit course new` puts it (nbgrader_course.GRADEBOOK, without its imports)
STUDENT_FOLDERS = ("submitted", "autograded", "feedback")  # nbgrader's CourseDirectory defaults, the course's
CONFIG_NAME = "nbgrader_config"
SQLITE = "sqlite:///"


@dataclass
class RemovedStudent:
    student_id: str
    kept_in: Path  # DIR/removed/ID-<time>/
    submissions: int = 0  # the gradebook's, removed with the student
    in_gradebook: bool = False
    moved: list[str] = field(default_factory=list)  # what was moved into kept_in, as "submitted/ID", "inbound/..."
    notes: list[str] = field(default_factory=list)  # what was left alone, and why


def remove_student(root: Path, student_id: str) -> RemovedStudent:
    """Take `student_id` out of the course in `root` (see the module's docstring); Refused when there is no such
    course or student, or the id is not one nbgrader can have made."""
    problem = id_problem(student_id)
    if problem:
        raise Refused(f"course remove-student: {problem}; nothing was changed (an id nbgrader cannot use as a folder "
                      "name is no student it made: `nbgrader db student list` shows the gradebook's)")
    root = Path(root).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise Refused(f"course remove-student: {clean(root)} holds no course (no nbgrader_config.py)")
    removed = root / REMOVED
    if removed.is_symlink() or (removed.exists() and not removed.is_dir()):
        raise Refused(f"course remove-student: {clean(removed)} is not a folder; nothing was changed")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    result = RemovedStudent(student_id, _fresh_folder(removed, f"{student_id}-{stamp}"))
    course = _course_config(root, result)
    folders = [(name, root / name) for name in STUDENT_FOLDERS]
    released = list(_released_feedback(root / "feedback" / student_id, course.exchange, result))
    inbound = list(_inbound_entries(course.exchange, student_id, result))
    with _gradebook(course.db_url, course.course_id) as gradebook:
        student = _find(gradebook, student_id) if gradebook is not None else None
        if student is None and not inbound and not any(_entry(folder, student_id) for _, folder in folders):
            raise Refused(f"course remove-student: no student {student_id!r} in {clean(root)} (not in the "
                          "gradebook, no folder in submitted/, autograded/ or feedback/, nothing in the exchange's "
                          "inbound/); nothing was changed")
        result.kept_in.mkdir(parents=True)
        if gradebook is not None and student is not None:
            record = _gradebook_record(student)
            (result.kept_in / "gradebook.json").write_text(json.dumps(record, indent=2, default=str) + "\n",
                                                         encoding="utf-8")
            result.submissions = len(record["submissions"])
            gradebook.remove_student(student_id)
            result.in_gradebook = True
    for name, folder in folders:
        _move_in(folder, student_id, result.kept_in / name, f"{name}/{student_id}", result)
    for path in inbound:
        _move_in(path.parent, path.name, result.kept_in / "inbound", f"the exchange's inbound/{path.name}", result)
    for path in released:
        _move_in(path.parent, path.name, result.kept_in / "released_feedback",
                 f"the exchange's feedback/{path.name}", result)
    return result


@contextlib.contextmanager
def _gradebook(url: str, course_id: str) -> Iterator["Gradebook | None"]:
    """nbgrader's Gradebook of the course; None where its SQLite file does not exist (Gradebook would make one)."""
    from nbgrader.api import Gradebook

    if url.startswith(SQLITE) and not Path(url.removeprefix(SQLITE)).is_file():
        yield None
        return
    with Gradebook(url, course_id) as gradebook:
        yield gradebook


def _find(gradebook: "Gradebook", student_id: str) -> "Student | None":
    from nbgrader.api import MissingEntry

    try:
        return gradebook.find_student(student_id)
    except MissingEntry:
        return None


def _gradebook_record(student: "Student") -> dict[str, Any]:
    """What the gradebook holds of the student, their grades and comments included, as nbgrader's dicts give it."""
    submissions = []
    for submission in student.submissions:
        notebooks = [{**notebook.to_dict(), "grades": [grade.to_dict() for grade in notebook.grades],
                      "comments": [comment.to_dict() for comment in notebook.comments]}
                     for notebook in submission.notebooks]
        submissions.append({**submission.to_dict(), "notebooks": notebooks})
    return {"student": student.to_dict(), "submissions": submissions}


def _fresh_folder(parent: Path, name: str) -> Path:
    path, number = parent / name, 1
    while path.exists() or path.is_symlink():
        number += 1
        path = parent / f"{name}-{number}"
    return path


def _entry(folder: Path, name: str) -> bool:
    """Whether `folder` (a real folder, not a link) holds `name` (anything, a link included)."""
    entry = folder / name
    return _real_folder(folder) and (entry.exists() or entry.is_symlink())


def _real_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _move_in(folder: Path, name: str, destination: Path, shown: str, result: RemovedStudent) -> None:
    """`folder/name` moved to `destination/name` (a link moved as the link); a `folder` that is a link left alone."""
    if folder.is_symlink():
        result.notes.append(f"{clean(folder)} is a link: left alone, {clean(name)} in it not looked at")
        return
    if not _entry(folder, name):
        return
    destination.mkdir(parents=True, exist_ok=True)
    try:
        # rename on one file system; else a copy that keeps links as links (shutil.move's), then the original removed
        shutil.move(os.fspath(folder / name), os.fspath(destination / name))
    except OSError as error:
        result.notes.append(f"{clean(shown)} could not be moved ({clean(error.strerror or error)}): left where it is")
        return
    result.moved.append(shown)


@dataclass(frozen=True)
class _Course:
    db_url: str
    course_id: str
    exchange: Path | None  # the course's folder in the exchange (EXCHANGE/COURSE_ID), None when there is none


def _course_config(root: Path, result: RemovedStudent) -> _Course:
    """The gradebook, course id and exchange folder nbgrader uses for a command run in `root`: nbgrader's
    configuration files (the system's, the environment's, the user's), then the course's own, later ones winning."""
    from jupyter_core.paths import jupyter_config_path
    from nbgrader.exchange.default.exchange import Exchange
    from traitlets.config import Config
    from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

    config = Config()
    for folder in [*reversed(jupyter_config_path()), os.fspath(root)]:
        try:
            config.merge(PyFileConfigLoader(f"{CONFIG_NAME}.py", path=folder).load_config())
        except ConfigFileNotFound:
            continue
        except Exception as error:  # noqa: BLE001 - a configuration nbgrader itself could not read
            raise Refused(f"course remove-student: {clean(folder)}/{CONFIG_NAME}.py cannot be read "
                          f"({type(error).__name__}: {clean(error, 200)}); nothing was changed") from None
    directory = config.CourseDirectory
    db_url = str(directory.db_url) if "db_url" in directory else f"{SQLITE}{root / GRADEBOOK}"
    course_id = str(directory.course_id) if "course_id" in directory else COURSE_ID
    exchange_root = config.Exchange.root if "root" in config.Exchange else Exchange.root.default_value
    exchange = Path(exchange_root) / course_id
    if exchange.is_symlink():
        result.notes.append(f"the exchange's course folder {clean(exchange)} is a link: left alone")
        return _Course(db_url, course_id, None)
    return _Course(db_url, course_id, exchange if exchange.is_dir() else None)


def _inbound_entries(exchange_course: Path | None, student_id: str, result: RemovedStudent) -> Iterator[Path]:
    """The student's submissions in the exchange's inbound/: STUDENT+ASSIGNMENT+TIMESTAMP+RANDOM, the student read as
    `nbgrader collect` reads it (the name split from the right)."""
    if exchange_course is None:
        return
    inbound = exchange_course / "inbound"
    if inbound.is_symlink():
        result.notes.append(f"the exchange's {clean(inbound)} is a link: left alone")
        return
    try:
        names = sorted(entry.name for entry in os.scandir(inbound))
    except OSError:
        return  # no inbound/ (nothing handed in), or not ours to read: nothing of the student's to move
    for name in names:
        parts = name.rsplit("+", 3)
        if len(parts) == 4 and parts[0] == student_id:
            yield inbound / name


def _released_feedback(feedback: Path, exchange_course: Path | None, result: RemovedStudent) -> Iterator[Path]:
    """The exchange's copies of feedback/ID/ASSIGNMENT/NOTEBOOK.html, named by `nbgrader release_feedback` after the
    submission's secret and the notebook."""
    from nbgrader.utils import notebook_hash

    if exchange_course is None or not _real_folder(feedback):
        return
    released = exchange_course / "feedback"
    if released.is_symlink():
        result.notes.append(f"the exchange's {clean(released)} is a link: left alone")
        return
    for assignment in sorted(feedback.iterdir()):
        secret_file = assignment / "submission_secret.txt"
        if not _real_folder(assignment) or secret_file.is_symlink() or not secret_file.is_file():
            continue
        secret = secret_file.read_text(encoding="utf-8")
        for page in sorted(assignment.glob("*.html")):
            path = released / f"{notebook_hash(secret=secret, notebook_id=page.stem)}.html"
            if path.exists() or path.is_symlink():
                yield path
