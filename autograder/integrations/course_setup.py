"""`attnkit course new DIR`: an nbgrader course of one's own, ready to hand out (docs/instructor/setup.md).

    DIR/nbgrader_config.py         the repository's settings (the sandbox) copied in, with DIR, its gradebook and the
                                   exchange folder set
    DIR/source/attention/          the instructor's notebooks
    DIR/release/attention/         `nbgrader generate_assignment`'s student version, with the student kit's wheel and
                                   README-student-kit.md (the one-line install, English and Chinese) beside it:
                                   `nbgrader release_assignment` hands all of it out
    DIR/gradebook.db               the assignment, and the roster's students with their names
    DIR/course_settings.toml       the course's points, from the settings in force (autograder.course.course_settings):
                                   every grader of the course reads them; `attnkit course points` changes them
    EXCHANGE (default DIR/exchange)  nbgrader's exchange folder: rwxrwxrwt (nbgrader's documented mode, sticky)

Nothing is overwritten: a DIR that holds a course (its config, gradebook, source, release or submissions) is refused,
and so is a roster that cannot be read whole; when a step fails, what this run created is removed again.
"""

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.integrations.course_roster import DEFAULT_ENCODING, RosterStudent, read_roster
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = ["COURSE_ID", "KIT_README", "NewCourse", "kit_wheel", "new_course", "write_kit_readme"]

# What makes a folder a course: any of these and `course new` refuses it (an instructor's gradebook is never lost).
COURSE_MARKERS = ("nbgrader_config.py", "gradebook.db", "source", "release", "submitted", "autograded",
                  "feedback", "course_settings.toml")
# nbgrader's documented exchange: every user reads, writes and enters it (`chmod ugo+rw`; nbgrader's own release
# makes it 0o777). With the sticky bit too, as /tmp: no student can rename or delete the course's folder in it (and
# put one of their own, with an inbound they can read, in its place); nbgrader compares only the 0o777 bits.
EVERYONE_RWX = 0o777
EXCHANGE_MODE = stat.S_ISVTX | EVERYONE_RWX
KIT_README = "README-student-kit.md"
COURSE_ID = "attnkit"  # nbgrader_course.COURSE_ID, without importing it (and torch) before the refusals

KIT_README_TEXT = """# Instant feedback: the attnkit student kit

`{wheel}` (in this folder) gives the notebooks' `check(...)` cells their feedback in your own environment
(Colab, Kaggle, Jupyter, VS Code). It holds the public checks only; your instructor grades with the full attnkit.
Install it once, in a notebook cell (on Colab or Kaggle, upload the wheel to the working folder first):

    %pip install {wheel}

or in a terminal, in this folder: `python -m pip install {wheel}`. Then run the notebook's cells as usual. Once it
is installed you may delete the wheel from this folder: it is not part of what you hand in.

# 即时反馈：attnkit 学生版工具包

本文件夹中的 `{wheel}` 让 notebook 里的 `check(...)` 单元格在你自己的环境（Colab、Kaggle、Jupyter、VS Code）
中给出反馈。它只包含公开检查；老师用完整版 attnkit 评分。在 notebook 单元格中安装一次（Colab 或 Kaggle：先把
wheel 文件上传到工作目录）：

    %pip install {wheel}

或在终端中、在本文件夹里运行 `python -m pip install {wheel}`。然后照常运行 notebook 的单元格。安装之后可以从本文件夹
删除这个 wheel 文件：它不属于你要提交的内容。
"""


@dataclass(frozen=True)
class NewCourse:
    root: Path
    exchange: Path
    release: Path
    wheel: Path
    readme: Path
    students: tuple[RosterStudent, ...]


def new_course(root: Path, roster: Path | None = None, exchange: Path | None = None,
               build_wheel: Callable[[Path], Path] | None = None, encoding: str = DEFAULT_ENCODING) -> NewCourse:
    """Make the course at `root` (see the module's docstring); Refused when it cannot, with nothing left behind.

    `build_wheel(folder)` writes the student kit's wheel into folder and returns its path (default: the kit's own
    `python -m build`); `encoding` is the roster's."""
    root = Path(root).absolute()
    exchange = Path(exchange).absolute() if exchange is not None else root / "exchange"
    students = tuple(read_roster(Path(roster), encoding)) if roster is not None else ()  # before anything is written
    _refuse_a_course(root)
    _refuse_a_bad_exchange(exchange)
    from autograder.integrations import nbgrader_course  # imports the catalogue and torch: after the refusals

    created = _Created(root, exchange)
    try:
        nbgrader_course.make_course(root, exchange=exchange, self_contained=True)
        release = nbgrader_course.generate_release(root)
        exchange_made = _make_exchange(exchange)
        created.exchange_made = exchange_made
        wheel = (build_wheel or kit_wheel)(release)
        readme = write_kit_readme(release, wheel.name)
        _add_students(root, students)
    except (nbgrader_course.NbgraderError, OSError) as problem:
        created.remove()
        raise Refused(f"course new {clean(root)}: {clean(problem)}") from None
    except BaseException:
        created.remove()
        raise
    return NewCourse(root, exchange, release, wheel, readme, students)


class _Created:
    """What this run made, to remove when a later step fails: a course is whole or absent."""

    def __init__(self, root: Path, exchange: Path) -> None:
        self.root, self.exchange = root, exchange
        self.root_made = not root.exists()
        self.exchange_made = False

    def remove(self) -> None:
        if self.exchange_made and self.exchange.is_dir() and not any(self.exchange.iterdir()):
            self.exchange.rmdir()
        if self.root_made:
            shutil.rmtree(self.root, ignore_errors=True)
            return
        for name in COURSE_MARKERS:  # the folder was there before (holding no course): only what this run put in it
            path = self.root / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists() or path.is_symlink():
                path.unlink()


def _refuse_a_course(root: Path) -> None:
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise Refused(f"course new: {clean(root)} exists and is not a folder")
    held = [name for name in COURSE_MARKERS if (root / name).exists() or (root / name).is_symlink()]
    if held:
        raise Refused(f"course new: {clean(root)} already holds a course ({', '.join(held)}); nothing was changed. "
                      "Give a new or empty folder; to start over, move the old course away first")


def _refuse_a_bad_exchange(exchange: Path) -> None:
    if exchange.is_symlink() or (exchange.exists() and not exchange.is_dir()):
        raise Refused(f"course new: the exchange {clean(exchange)} exists and is not a folder")
    if (exchange / COURSE_ID).exists() or (exchange / COURSE_ID).is_symlink():
        # every attnkit course has the id "attnkit": two on one exchange would share each other's submissions
        raise Refused(f"course new: the exchange {clean(exchange)} already serves a course '{COURSE_ID}' (another "
                      "attnkit course); give this one an exchange of its own with --exchange")
    if exchange.is_dir() and stat.S_IMODE(exchange.stat().st_mode) & EVERYONE_RWX != EVERYONE_RWX \
            and exchange.stat().st_uid != os.geteuid():
        raise Refused(f"course new: the exchange {clean(exchange)} is not readable and writable by every user and "
                      f"is not yours to change; its owner runs `chmod ugo+rwx {clean(exchange)}`")


def _make_exchange(exchange: Path) -> bool:
    """The exchange folder with nbgrader's documented mode; True when this run created it."""
    made = not exchange.exists()
    exchange.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(exchange.stat().st_mode)
    if mode & EXCHANGE_MODE != EXCHANGE_MODE and (made or exchange.stat().st_uid == os.geteuid()):
        exchange.chmod(mode | EXCHANGE_MODE)  # mkdir's mode is cut by the umask
    return made


def write_kit_readme(release: Path, wheel_name: str) -> Path:
    """The kit's bilingual README beside the notebooks of `release`, naming its wheel."""
    readme = release / KIT_README
    readme.write_text(KIT_README_TEXT.format(wheel=wheel_name), encoding="utf-8")
    return readme


def kit_wheel(folder: Path) -> Path:
    """The student kit's wheel, built with this process's points, written into `folder`; OSError when it cannot."""
    from autograder.integrations.student_kit.build import KitBuildError, build_wheel  # imports torch: only here

    try:
        return build_wheel(folder)
    except KitBuildError as problem:
        raise OSError(f"the student kit's wheel: {problem}") from None


def _add_students(root: Path, students: tuple[RosterStudent, ...]) -> None:
    """The roster into the course's gradebook, through nbgrader's Gradebook API (`nbgrader db student import`'s)."""
    if not students:
        return
    from nbgrader.api import Gradebook

    from autograder.integrations import nbgrader_course

    with Gradebook(nbgrader_course.db_url(root), nbgrader_course.COURSE_ID) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student.id, first_name=student.first_name,
                                               last_name=student.last_name, email=student.email)
