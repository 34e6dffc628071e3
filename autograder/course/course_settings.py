"""The course settings file: an instructor's points for checks and exercises, without code.

`course_settings.toml` at the checkout's root (or the file `ATTNKIT_COURSE_SETTINGS` names) is read by
autograder.course.registry, the one place every grader gets its checks from: `attnkit grade`, the sandboxed
`nbgrader autograde` (whose cells' points `make release` writes from the same checks), the Gradescope bundle (which
carries the file) and the student kit's stored points. The file:

    rescale_to = 100                 # optional: scale every check so the total is this (quarter points)
    [points]
    "softmax_naive.random" = 3       # a check's points
    causal_mask = 8                  # an exercise's points, shared among its checks as declared

The total of every graded check must be 100, unless `rescale_to` says otherwise; then every check is scaled by the
same factor and rounded to quarter points by largest remainder, so the total is exactly `rescale_to`. An exercise's
points are shared among its checks the same way. Anything wrong (not TOML, an unknown id, a negative or non-number
value, a total that is not 100) is a `CourseSettingsError` naming the problem: nothing is graded or written.
"""

import dataclasses
import difflib
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from autograder.checking.check_types import Check
from autograder.course.declaration import Declaration
from autograder.refusal import Refused

__all__ = [
    "AppliedPoints", "CourseSettingsError", "SETTINGS_ENV", "SETTINGS_NAME", "apply_settings", "read_settings",
    "settings_path",
]

SETTINGS_ENV = "ATTNKIT_COURSE_SETTINGS"
SETTINGS_NAME = "course_settings.toml"
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]  # where nbgrader_config.py, source/ and release/ live
TOTAL = Fraction(100)
QUARTER = Fraction(1, 4)  # rounding unit: quarter points are exact in binary floats, so sums stay exact
KNOWN_KEYS = ("rescale_to", "points")


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


def settings_path() -> Path:
    """The settings file of this course: `ATTNKIT_COURSE_SETTINGS` where set, else course_settings.toml at the
    checkout's root. Never a file found from the current directory, where a student's folder may be."""
    named = os.environ.get(SETTINGS_ENV)
    return Path(named) if named else CHECKOUT_ROOT / SETTINGS_NAME


def read_settings(path: Path) -> CourseSettings:
    """The file's settings; no file at the default place means the declared points. A file named by
    `ATTNKIT_COURSE_SETTINGS` must exist."""
    if not path.is_file():
        if os.environ.get(SETTINGS_ENV):
            raise CourseSettingsError(f"{SETTINGS_ENV} names {path}, which is not a file")
        return CourseSettings(path=None)
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
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

