"""The course settings file: an instructor's points for checks and exercises, without code.

An nbgrader course made by `attnkit course new` has its own `course_settings.toml`, in the course folder: the
course's `nbgrader_config.py` names it (`use_course_settings`), so nbgrader's commands and formgrader's server read it,
and attnkit's commands on that course choose it the same way before they read any points
(autograder.integrations.course_points). Elsewhere the file is `course_settings.toml` at the checkout's root, or the
one `ATTNKIT_COURSE_SETTINGS` names. autograder.course.registry reads the file in force once per process, the one
place every grader gets its checks from: `attnkit grade`, the sandboxed `nbgrader autograde` (whose cells' points the
release holds, written from the same checks), the Gradescope bundle (which carries the file) and the student kit's
stored points. The file:

    rescale_to = 100                 # optional: scale every check so the total is this (quarter points)
    [points]
    "softmax_naive.random" = 3       # a check's points
    causal_mask = 8                  # an exercise's points, shared among its checks as declared

The total of every graded check must be 100, unless `rescale_to` says otherwise; then every check is scaled by the
same factor and rounded to quarter points by largest remainder, so the total is exactly `rescale_to`. An exercise's
points are shared among its checks the same way. Anything wrong (not TOML, an unknown id, a negative or non-number
value, a total that is not 100) is a `CourseSettingsError` naming the problem: nothing is graded or written.

A student never chooses the file: it is never looked for beside a notebook, in `submitted/` or in the current folder.
A course's file is read only when it is a regular file (not a link) owned by the user who reads it (or root) and
writable by nobody else, in a folder of the same kind.
"""

import dataclasses
import difflib
import errno
import hashlib
import logging
import math
import os
import re
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from autograder.checking.check_types import Check
from autograder.course.declaration import Declaration
from autograder.refusal import Refused
from autograder.safe_text import clean

__all__ = [
    "AppliedPoints", "CourseSettings", "CourseSettingsError", "SETTINGS_ENV", "SETTINGS_NAME", "apply_settings",
    "chosen_course_file", "course_file_text", "course_settings_file", "parse_settings", "read_settings",
    "settings_changed_since_read", "settings_in_force", "settings_path", "settings_text", "use_course_settings",
    "with_points",
]

logger = logging.getLogger(__name__)

SETTINGS_ENV = "ATTNKIT_COURSE_SETTINGS"
SETTINGS_NAME = "course_settings.toml"
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]  # where nbgrader_config.py, source/ and release/ live
TOTAL = Fraction(100)
QUARTER = Fraction(1, 4)  # rounding unit: quarter points are exact in binary floats, so sums stay exact
KNOWN_KEYS = ("rescale_to", "points")
MAX_FILE_BYTES = 1 << 20  # a settings file is a few lines
ID = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*")  # a check's or exercise's id: what a change may name
TABLE_HEADER = re.compile(r"^\s*\[")
POINTS_HEADER = re.compile(r"^\s*\[\s*points\s*\]\s*(#.*)?$")
COURSE_HEADER = """\
# The points of the attnkit course in this folder (docs/instructor/points.md). Every grader of the course reads this
# file: nbgrader and formgrader (this folder's nbgrader_config.py names it), `attnkit grade DIR/submitted`,
# `attnkit export DIR`. `attnkit course points DIR` shows the points; `attnkit course points DIR --set ID=N` changes
# them and regenerates the release (the student kit included); after an edit by hand, `attnkit course release DIR`.
# Every graded check's points add up to 100, unless `rescale_to` is set: then every check is scaled to that total.
"""
EXAMPLE_LINES = ('# "causal_mask.sizes" = 5        # a check, by its id (`attnkit course points DIR` lists them)',
                 "# padding_mask = 6               # an exercise: shared among its checks as declared")
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class CourseSettingsError(Refused):
    """The course settings file cannot be used; the message names the file and what to change."""


@dataclass(frozen=True)
class CourseSettings:
    """What the file asks for: points by check or exercise id, and the total to rescale to (None: keep 100)."""

    path: Path | None  # None: no file, the declared points
    points: Mapping[str, Fraction] = dataclasses.field(default_factory=dict)
    rescale_to: Fraction | None = None


@dataclass(frozen=True)
class AppliedPoints:
    """The declarations with the file's points, and what was done to them, in words (rescaling, rounding)."""

    declarations: tuple[Declaration, ...]
    notes: tuple[str, ...]


@dataclass
class _ProcessPoints:
    """Which file this process's points come from. One per process, because the catalogue's constants
    (autograder.course.exercises, catalog) are built once, from the file the registry reads first."""

    course_file: Path | None = None  # a course's own file, chosen by use_course_settings
    read_from: Path | None = None  # the file the registry read (None: not read yet)
    read_digest: str = ""  # of the bytes read then ("" where there was no file)


_PROCESS = _ProcessPoints()


def course_settings_file(course_root: Path) -> Path:
    """Where a course folder keeps its points."""
    return Path(course_root).absolute() / SETTINGS_NAME


def use_course_settings(path: str | os.PathLike[str]) -> None:
    """This process grades with the points of a course's own settings file, `path` (its course folder's
    course_settings.toml), which then comes before `ATTNKIT_COURSE_SETTINGS` and the checkout's file. Called by the
    course's nbgrader_config.py and by attnkit's commands on a course, before anything reads the points; refused once
    this process has read its points from another file (they cannot change in a running process)."""
    chosen = Path(path).absolute()
    if _PROCESS.read_from is not None and _PROCESS.read_from != chosen:
        raise CourseSettingsError(f"this process graded with the points of {clean(_PROCESS.read_from)} already; the "
                                  f"points of {clean(chosen)} are read by a new process (start it again)")
    _PROCESS.course_file = chosen


def chosen_course_file() -> Path | None:
    """The course's own settings file this process grades with (use_course_settings); None: not a course's."""
    return _PROCESS.course_file


def settings_path() -> Path:
    """The settings file in force: the course's own where one was chosen (use_course_settings), else
    `ATTNKIT_COURSE_SETTINGS` where set, else course_settings.toml at the checkout's root. Never a file found from
    the current directory, where a student's folder may be."""
    if _PROCESS.course_file is not None:
        return _PROCESS.course_file
    named = os.environ.get(SETTINGS_ENV)
    return Path(named) if named else CHECKOUT_ROOT / SETTINGS_NAME


def settings_in_force() -> CourseSettings:
    """The settings of the file in force (settings_path), remembered as this process's: what the registry reads."""
    path = settings_path()
    if _PROCESS.course_file is None:
        settings, data = read_settings(path), _bytes_or_empty(path)
    else:
        named = os.environ.get(SETTINGS_ENV)
        if named and Path(named).absolute() != path and _PROCESS.read_from is None:
            logger.warning("attnkit: %s=%s is not read: the course's own points are in %s", SETTINGS_ENV,
                           clean(named), clean(path))
        data = _course_file_bytes(path)
        settings = parse_settings(data, path)
    _PROCESS.read_from, _PROCESS.read_digest = path, _digest(data)
    return settings


def settings_changed_since_read() -> bool:
    """Whether the file this process read its points from holds other bytes now (a formgrader started before the
    course's points changed)."""
    if _PROCESS.read_from is None:
        return False
    try:
        now = _course_file_bytes(_PROCESS.read_from) if _PROCESS.course_file else _bytes_or_empty(_PROCESS.read_from)
    except CourseSettingsError:
        return True
    return _digest(now) != _PROCESS.read_digest


def course_file_text(path: Path) -> str:
    """The text of a course's settings file, read as every grader of the course reads it (see _course_file_bytes)."""
    try:
        return _course_file_bytes(path).decode("utf-8")
    except UnicodeDecodeError as problem:
        raise CourseSettingsError(f"{clean(path)} is not a TOML file: {problem}") from None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest() if data else ""


def _bytes_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes() if path.is_file() else b""
    except OSError:
        return b""


def _course_file_bytes(path: Path) -> bytes:
    """A course's settings file, read only where nobody but its reader (or root) can have written it: a regular
    file, not through a link, owned by this user or root and not writable by others, in such a folder."""
    shown = clean(path)
    try:
        folder = os.stat(path.parent)
        descriptor = os.open(path, OPEN_FILE)
    except FileNotFoundError:
        raise CourseSettingsError(f"the course's points file {shown} is gone: put it back (`attnkit course points "
                                  "DIR` shows the points once it is there)") from None
    except OSError as error:  # ELOOP: a link
        why = "is a symbolic link" if error.errno == errno.ELOOP else f"cannot be read ({clean(error.strerror)})"
        raise CourseSettingsError(f"the course's points file {shown} {why}: not read") from None
    try:
        status = os.fstat(descriptor)
        for what, found, regular in (("file", status, stat.S_ISREG(status.st_mode)),
                                     ("folder", folder, stat.S_ISDIR(folder.st_mode))):
            if not regular:
                raise CourseSettingsError(f"the course's points file {shown} is not a regular file: not read")
            if found.st_uid not in (os.geteuid(), 0) or found.st_mode & stat.S_IWOTH:
                raise CourseSettingsError(
                    f"the course's points file {shown}: its {what} is owned by another user (uid {found.st_uid}) or "
                    "writable by every user, so anyone could have set the points: not read. Its owner makes it "
                    f"theirs and `chmod o-w` it")
        if status.st_size > MAX_FILE_BYTES:
            raise CourseSettingsError(f"the course's points file {shown} is larger than {MAX_FILE_BYTES:,} bytes")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(descriptor)


def read_settings(path: Path) -> CourseSettings:
    """The file's settings; no file at the default place means the declared points. A file named by
    `ATTNKIT_COURSE_SETTINGS` must exist."""
    if not path.is_file():
        if os.environ.get(SETTINGS_ENV):
            raise CourseSettingsError(f"{SETTINGS_ENV} names {path}, which is not a file")
        return CourseSettings(path=None)
    return parse_settings(path.read_bytes(), path)


def parse_settings(data: bytes, path: Path) -> CourseSettings:
    """The settings `data` holds, the text of the file at `path` (named in every refusal)."""
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as problem:
        raise CourseSettingsError(f"{path} is not a TOML file: {problem}") from None
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise CourseSettingsError(f"{path}: unknown setting(s) {', '.join(map(repr, unknown))}; the settings are "
                                  f"{', '.join(KNOWN_KEYS)}")
    points = table.get("points", {})
    if not isinstance(points, dict):
        raise CourseSettingsError(f"{path}: [points] must be a table of id = points, not {type(points).__name__}")
    rescale = table.get("rescale_to")
    return CourseSettings(
        path=path, points={str(key): _number(path, f"points of {key!r}", value) for key, value in points.items()},
        rescale_to=None if rescale is None else _positive_quarters(path, "rescale_to", rescale))


def _number(path: Path, what: str, value: Any) -> Fraction:
    # bool is an int to Python; TOML's nan and inf are floats: neither is a number of points.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CourseSettingsError(f"{path}: the {what} must be a number, not {value!r}")
    if value < 0:
        raise CourseSettingsError(f"{path}: the {what} must not be negative ({value!r})")
    return Fraction(value)


def _positive_quarters(path: Path, what: str, value: Any) -> Fraction:
    number = _number(path, what, value)
    if number <= 0 or number % QUARTER:
        raise CourseSettingsError(f"{path}: {what} must be a positive multiple of 0.25, not {value!r}")
    return number


def apply_settings(declarations: Sequence[Declaration], settings: CourseSettings) -> AppliedPoints:
    """`declarations` with each graded check's points as `settings` say; refused when an id is unknown, an exercise
    and one of its checks are both set, or the total is not 100 without `rescale_to`."""
    checks = [check for declared in declarations for check in declared.checks]
    if settings.path is None or (not settings.points and settings.rescale_to is None):
        return AppliedPoints(tuple(declarations), ())  # nothing asked: the declared points, whatever their total
    where = settings.path
    exercises = {check.exercise for check in checks}
    check_ids = {check.id for check in checks}
    for key in settings.points:
        if key not in exercises and key not in check_ids:
            close = difflib.get_close_matches(key, sorted(exercises | check_ids), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise CourseSettingsError(f"{where}: {key!r} is neither a check nor an exercise of this course{hint} "
                                      "(`attnkit points` lists them)")
    both = sorted(check.id for check in checks if check.id in settings.points and check.exercise in settings.points)
    if both:
        raise CourseSettingsError(f"{where}: set either an exercise's points or its checks', not both: {both}")
    points = {check.id: Fraction(check.points) for check in checks}
    notes = []
    for exercise_id in sorted(exercises & settings.points.keys()):
        own = [check for check in checks if check.exercise == exercise_id]
        target = settings.points[exercise_id]
        if target % QUARTER:
            raise CourseSettingsError(f"{where}: an exercise's points must be a multiple of 0.25 "
                                      f"({exercise_id} = {float(target):g})")
        points.update(_shared(target, {check.id: points[check.id] for check in own}))
        notes.append(f"{exercise_id}: {_g(target)} points shared among its checks as declared, in quarter points")
    points.update({key: value for key, value in settings.points.items() if key in check_ids})
    total = sum(points.values(), Fraction(0))
    if settings.rescale_to is None and total != TOTAL:
        off = total - TOTAL
        raise CourseSettingsError(f"{where}: the checks' points add up to {_g(total)}, {_g(abs(off))} "
                                  f"{'over' if off > 0 else 'short of'} 100; change them, or add `rescale_to = 100` "
                                  "to scale every check to 100")
    if settings.rescale_to is not None and total != settings.rescale_to:
        if total == 0:
            raise CourseSettingsError(f"{where}: every check is worth 0 points: nothing to rescale")
        points = _shared(settings.rescale_to, points)
        notes.append(f"rescaled from {_g(total)} to {_g(settings.rescale_to)} points: every check x "
                     f"{float(settings.rescale_to / total):.4g}, rounded to quarter points by largest remainder")
    rewritten = tuple(dataclasses.replace(declared, checks=tuple(_with_points(check, points[check.id])
                                                                  for check in declared.checks))
                      for declared in declarations)
    return AppliedPoints(rewritten, tuple(notes))


def _shared(target: Fraction, weights: Mapping[str, Fraction]) -> dict[str, Fraction]:
    """`target` shared in proportion to `weights`, in quarter points, the leftover quarters to the largest
    remainders (first declared first on ties): the parts add up to `target` exactly. Equal weights for all-zero."""
    weight_total = sum(weights.values(), Fraction(0))
    if weight_total == 0:
        weights = {key: Fraction(1) for key in weights}
        weight_total = Fraction(len(weights))
    quarters = {key: target * weight / weight_total / QUARTER for key, weight in weights.items()}
    parts = {key: math.floor(share) for key, share in quarters.items()}
    left = int(target / QUARTER) - sum(parts.values())
    by_remainder = sorted(quarters, key=lambda key: quarters[key] - parts[key], reverse=True)
    for key in by_remainder[:left]:
        parts[key] += 1
    return {key: count * QUARTER for key, count in parts.items()}


def _with_points(check: Check, points: Fraction) -> Check:
    as_number = int(points) if points.denominator == 1 else float(points)
    return check if as_number == check.points else dataclasses.replace(check, points=as_number)


def _g(value: Fraction) -> str:
    return f"{float(value):g}"



def settings_text(settings: CourseSettings, header: str = COURSE_HEADER) -> str:
    """A settings file that says what `settings` say, after `header` (comment lines): what `attnkit course new`
    writes into a course folder, from the settings in force then."""
    lines = [header.rstrip("\n"), ""]
    if settings.rescale_to is not None:
        lines += [f"rescale_to = {_toml_number(settings.rescale_to)}", ""]
    lines.append("[points]")
    lines += [f'"{key}" = {_toml_number(value)}' for key, value in settings.points.items()] or list(EXAMPLE_LINES)
    return "\n".join(lines) + "\n"


def with_points(text: str, changes: Mapping[str, Fraction], path: Path) -> str:
    """The settings file's `text` with each id of `changes` set to its points in its [points] table (the line that
    sets it replaced, else one added at the table's end; every other line, comments included, kept). Refused where
    an id is no id, or where the text is laid out so that the edit would not say exactly that (a dotted key, an
    inline table): then the file is edited by hand."""
    for key, value in changes.items():
        if not ID.fullmatch(key):
            raise CourseSettingsError(f"{clean(key)!r} is not the id of a check or exercise (letters, digits, _ and .; "
                                      "`attnkit course points DIR` lists them)")
        if value < 0:
            raise CourseSettingsError(f"the points of {key!r} must not be negative ({_g(value)})")
    before = parse_settings(text.encode("utf-8"), path)
    lines = text.splitlines()
    header = next((index for index, line in enumerate(lines) if POINTS_HEADER.match(line)), None)
    if header is None:
        lines += ["", "[points]"]
        header = len(lines) - 1
    end = next((index for index in range(header + 1, len(lines)) if TABLE_HEADER.match(lines[index])), len(lines))
    for key, value in changes.items():
        setting = f'"{key}" = {_toml_number(value)}'
        key_line = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*=""")
        found = [index for index in range(header + 1, end) if key_line.match(lines[index])]
        if found:
            lines[found[0]] = setting
            continue
        settings = [index for index in range(header + 1, end) if lines[index].strip()
                    and not lines[index].lstrip().startswith("#")]
        written = [index for index in range(header + 1, end) if lines[index].strip()]
        last = (settings or written or [header])[-1]  # after the table's last setting, else its last comment
        lines.insert(last + 1, setting)
        end += 1
    edited = "\n".join(lines) + "\n"
    try:
        after: CourseSettings | None = parse_settings(edited.encode("utf-8"), path)
    except CourseSettingsError:
        after = None
    if after is None or dict(after.points) != {**before.points, **changes} or after.rescale_to != before.rescale_to:
        raise CourseSettingsError(f"{clean(path)}: its [points] are not laid out one `id = points` line each, so it "
                                  "cannot be changed in place: edit it by hand, then run `attnkit course release DIR`")
    return edited


def _toml_number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else repr(float(value))
