"""`EarlierReleasePoints`: a graded cell handed in with the points of an earlier release of the course is no tampering.

nbgrader's `OverwriteCells` compares each graded cell's `points` with the gradebook's and warns "Attribute 'points'
for cell test_… has changed!" where they differ, then grades out of the gradebook's points. After the course's points
changed (`attnkit course points`, autograder.integrations.course_points), every student who fetched the earlier
release hands in the earlier points: two such warnings per student for one point moved, in a log where a warning
means something (docs/instructor/grade.md, "The autograde log").

The course command keeps, in `DIR/earlier_points.json`, the points each changed cell had before. This sanitize step
runs just before `OverwriteCells`: a graded cell whose points are not the gradebook's but are one of that cell's
earlier points gets the gradebook's, which is what `OverwriteCells` would write there anyway, and the run says so in
one line. Any other difference (points no release of the course ever had) is left to `OverwriteCells`' warning.
"""

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.integrations.nbgrader_hidden_tests import grade_id_of
from autograder.safe_text import clean

if TYPE_CHECKING:
    from nbgrader.converters.base import BaseConverter

__all__ = ["EARLIER_POINTS", "EarlierReleasePoints", "THIS", "read_earlier_points", "record_earlier_points"]

logger = logging.getLogger(__name__)

THIS = f"{__name__}.EarlierReleasePoints"
EARLIER_POINTS = "earlier_points.json"  # in the course folder, written by the course command only
MAX_FILE_BYTES = 1 << 20
SAID = "_attnkit_earlier_points_said"  # on an autograde call's converter: the run's line was logged
EXPLAINED = ("attnkit: notebooks handed in from a release made before the course's points changed (`attnkit course "
             "points`) hold the earlier points in their graded cells; they are graded out of the course's points "
             "(said once per run; points that no release had still get nbgrader's warning)")


def read_earlier_points(course_root: Path) -> dict[str, dict[str, tuple[float, ...]]]:
    """The course's earlier points, {notebook: {graded cell: the points it had in earlier releases}}; empty where it
    has none, or where the file is not what the course command writes (said in the log: nbgrader then warns as it
    always did)."""
    path = Path(course_root) / EARLIER_POINTS
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    except OSError as error:
        logger.warning("attnkit: %s not read (%s)", clean(path), clean(error.strerror))
        return {}
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    try:
        return _parsed(json.loads(data.decode("utf-8")) if len(data) <= MAX_FILE_BYTES else None)
    except (ValueError, TypeError):
        logger.warning("attnkit: %s is not the course command's record of earlier points: not read", clean(path))
        return {}


def _parsed(document: object) -> dict[str, dict[str, tuple[float, ...]]]:
    if not isinstance(document, dict):
        raise TypeError("not an object")
    earlier: dict[str, dict[str, tuple[float, ...]]] = {}
    for notebook, cells in document.items():
        if not isinstance(cells, dict):
            raise TypeError("not an object")
        for cell, points in cells.items():
            if not isinstance(points, list) or not all(isinstance(value, int | float) and not isinstance(value, bool)
                                                       for value in points):
                raise TypeError("not a list of numbers")
            earlier.setdefault(str(notebook), {})[str(cell)] = tuple(float(value) for value in points)
    return earlier


def record_earlier_points(course_root: Path, changed: Mapping[tuple[str, str], float]) -> None:
    """Add each changed cell's points before the change ({(notebook, cell): points}) to the course's record."""
    if not changed:
        return
    earlier = {notebook: {cell: list(points) for cell, points in cells.items()}
               for notebook, cells in read_earlier_points(course_root).items()}
    for (notebook, cell), points in changed.items():
        known = earlier.setdefault(notebook, {}).setdefault(cell, [])
        if float(points) not in known:
            known.append(float(points))
    path = Path(course_root) / EARLIER_POINTS
    staging = path.with_name(f".{EARLIER_POINTS}.{os.getpid()}")
    staging.write_text(json.dumps(earlier, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(staging, path)


class EarlierReleasePoints(NbGraderPreprocessor):
    """Give each graded cell handed in with an earlier release's points the gradebook's (see the module docstring)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        nbgrader = resources["nbgrader"]
        earlier = read_earlier_points(Path(self._course().root)).get(str(nbgrader["notebook"]), {})
        if not earlier:
            return nb, resources
        with Gradebook(nbgrader["db_url"]) as gradebook:
            try:
                cells = gradebook.find_notebook(nbgrader["notebook"], nbgrader["assignment"]).grade_cells
            except MissingEntry:  # OverwriteCells says what is wrong with this notebook
                return nb, resources
            points_now = {cell.name: float(cell.max_score) for cell in cells}
        given = 0
        for cell in nb.cells:
            grade_id = grade_id_of(cell)
            metadata = cell.metadata.nbgrader if grade_id else {}
            points = metadata.get("points")
            if (grade_id in points_now and metadata.get("grade") is True and isinstance(points, int | float)
                    and not isinstance(points, bool) and float(points) != points_now[grade_id]
                    and float(points) in earlier.get(grade_id, ())):
                metadata["points"] = points_now[grade_id]
                given += 1
        if given:
            self._explain_once()
        return nb, resources

    def _converter(self) -> "BaseConverter | None":
        from nbgrader.converters.base import BaseConverter

        converter = getattr(self.parent, "parent", None)  # this preprocessor's exporter's parent (traitlets' chain)
        return converter if isinstance(converter, BaseConverter) else None

    def _course(self) -> CourseDirectory:
        converter = self._converter()
        return converter.coursedir if converter is not None else CourseDirectory(config=self.config)

    def _explain_once(self) -> None:
        converter = self._converter()
        if converter is not None and getattr(converter, SAID, False):
            return
        self.log.info(EXPLAINED)
        if converter is not None:
            setattr(converter, SAID, True)
