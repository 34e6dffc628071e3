"""`RestoreHiddenTests`: an untouched locked cell gets its hidden tests back before nbgrader's tamper check.

`nbgrader generate_assignment` stores each locked cell in the gradebook, with its checksum, *before* it clears the
cell's `### BEGIN HIDDEN TESTS` region (and a task cell's mark scheme) for the release (jupyter/nbgrader#1961). At
autograde, nbgrader's `OverwriteCells` compares every locked cell of the submission with the gradebook's: a test
cell with hidden tests never matches, so every honest student gets one `Attribute 'checksum' for cell test_… has
changed!` warning per such cell, and a real edit of a locked cell is lost among them.

This sanitize step runs just before `OverwriteCells`. For each locked cell whose gradebook source has a hidden-test
or mark-scheme region, it clears that region as generate_assignment did (nbgrader's own `ClearHiddenTests` and
`ClearMarkScheme`, configured as the course configures them); where the submitted cell is exactly that released
version, it puts the gradebook's source back, which is what `OverwriteCells` would write there anyway. Every other
cell is left alone: a locked cell the student edited, by a single character, still differs from the gradebook, and
`OverwriteCells` warns and restores it as before. nbgrader's tamper check is not weakened; only the cells it would
flag for being exactly as handed out are no longer flagged.
"""

import copy
from dataclasses import dataclass

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry, SourceCell
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, NbGraderPreprocessor

__all__ = ["OVERWRITE_CELLS", "THIS", "ReleasedCell", "grade_id_of", "is_as_released"]

THIS = f"{__name__}.RestoreHiddenTests"
OVERWRITE_CELLS = "nbgrader.preprocessors.OverwriteCells"
# The gradebook's locked cells of each notebook, read once per autograde call: kept on that call's converter (the
# exporter's parent), so that formgrader's next click, after a new generate_assignment, reads them afresh.
RELEASED_CELLS = "_attnkit_released_cells"


@dataclass(frozen=True)
class ReleasedCell:
    """What this step reads of a locked cell in the gradebook (nbgrader's SourceCell, kept past its session)."""

    name: str
    cell_type: str
    source: str


class RestoreHiddenTests(NbGraderPreprocessor):
    """Put the hidden tests back into each locked cell handed in exactly as released (see the module docstring)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        nbgrader = resources["nbgrader"]
        by_name = self._locked_cells(str(nbgrader["db_url"]), str(nbgrader["assignment"]), str(nbgrader["notebook"]))
        if by_name is None:  # OverwriteCells says what is wrong with this notebook
            return nb, resources
        clearing = (ClearHiddenTests(parent=self), ClearMarkScheme(parent=self))
        for index, cell in enumerate(nb.cells):
            source_cell = by_name.get(grade_id_of(cell))
            if source_cell is not None and is_as_released(cell, source_cell, clearing, resources, index):
                cell.source = source_cell.source
                self.log.debug("%s: hidden tests of the untouched cell %s restored", nbgrader["notebook"],
                               source_cell.name)
        return nb, resources

    def _locked_cells(self, db_url: str, assignment: str, notebook: str) -> dict[str, ReleasedCell] | None:
        """The notebook's locked cells in the gradebook, by name; None where the gradebook has no such notebook.
        Read once per autograde call (every student's copy of a notebook has the same), each call afresh."""
        converter = getattr(self.parent, "parent", None)
        cache = getattr(converter, RELEASED_CELLS, None)
        if not isinstance(cache, dict):
            cache = {}
            if converter is not None:
                setattr(converter, RELEASED_CELLS, cache)
        key = (db_url, assignment, notebook)
        if key not in cache:
            with Gradebook(db_url) as gradebook:
                try:
                    source_cells = gradebook.find_notebook(notebook, assignment).source_cells
                except MissingEntry:
                    cache[key] = None
                else:
                    cache[key] = {cell.name: ReleasedCell(cell.name, cell.cell_type, cell.source)
                                  for cell in source_cells if cell.locked}
        return cache[key]


def grade_id_of(cell: NotebookNode) -> str:
    """The cell's grade id; "" where it has none, or where its metadata is not what nbgrader writes."""
    metadata = cell.get("metadata")
    nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return grade_id if isinstance(grade_id, str) else ""


def is_as_released(cell: NotebookNode, source_cell: SourceCell | ReleasedCell,
                   clearing: tuple[NbGraderPreprocessor, ...], resources: ResourcesDict, index: int) -> bool:
    """Whether `cell` is what generate_assignment released of the gradebook's `source_cell`, a cell with a hidden
    region: the same type, and its source exactly the gradebook's with the hidden regions cleared."""
    if cell.cell_type != source_cell.cell_type:
        return False
    released = copy.deepcopy(cell)
    released.source = source_cell.source
    try:
        for step in clearing:
            released, _ = step.preprocess_cell(released, resources, index)
    except RuntimeError:  # an unbalanced region, a region outside a grade or task cell: never released as such
        return False
    return bool(released.source != source_cell.source and cell.source == released.source)
