"""A notebook handed in under another name is autograded too, so that nbgrader and `attnkit grade` agree.

`nbgrader autograde` converts, for each student, the files `submitted/<student>/<assignment>/<notebook>.ipynb` it
finds: a student who did notebook 04 in `04_multi_head_attention-Copy1.ipynb` and deleted the original, or saved
it as `04_multi_head_attention (1).ipynb`, in a subfolder or a zip, gets 0 from nbgrader ("No submitted file") where
`attnkit grade` grades the file (autograder.grading.intake: which file is which notebook). Two of nbgrader's
settings, in the course's nbgrader_config.py, close the gap:

- `c.Autograde.pre_convert_hook = also_convert_renamed`: nbgrader calls it with the list of the notebooks it is about
  to convert for one student's assignment folder; it adds to that list the path each missing notebook would have
  under its own name, for every notebook of the assignment that `attnkit grade` finds under another name
  (`notebooks_to_convert`, also what grading ahead counts on: autograder.integrations.nbgrader_lookahead);
- `c.Autograde.exporter_class = RenamedNotebookExporter`: nbgrader's own notebook exporter, which reads a submitted
  notebook as attnkit reads one (never through a link, a regular file of 512 MB at most: a FIFO never blocks it, a
  sparse 4 GB file is never read) and such a missing notebook, or one it does not read, as an empty one; attnkit's
  first sanitizing step (autograder.integrations.nbgrader_intake.OwnFilesOnly) then puts in its place the file
  `attnkit grade` grades as that notebook, with a note saying which file it was, or says why there is none.

So `autograded/<student>/<assignment>/<notebook>.ipynb`, the gradebook, formgrader, the feedback and the exports hold
the notebook's grade under its own name. nbgrader still logs "No submitted file" for it (it records 0 first, before
the notebook is graded) and "Skipping unknown notebook" for the file under the other name. A student whose assignment
folder holds no notebook file at all (only a zip, a subfolder, a `.ipynb.txt`) is not autograded by nbgrader ("No
notebooks were matched"): nbgrader never calls the hook for them. Nor, under `--notebook NAME`, a student who handed
NAME in only under another name (nbgrader's glob finds no `NAME.ipynb` for them).

nbgrader does not tell the hook about `--notebook`; the exporter does: nbgrader makes it, with the converter as its
parent, before it calls the hook (BaseConverter.start), and it narrows the course's hook to the notebooks that
`--notebook` names, so that `nbgrader autograde --notebook X` converts X alone and leaves the others as graded before.
Made first, it also starts the sandbox's zygote for a call that grades there
(autograder.integrations.nbgrader_zygote_start.start_zygote_early), before the hook's imports.
"""

import fnmatch
import functools
import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode

__all__ = ["EXPORTER", "HOOK", "RenamedNotebookExporter", "also_convert_renamed", "notebooks_to_convert"]

HOOK = f"{__name__}.also_convert_renamed"
EXPORTER = f"{__name__}.RenamedNotebookExporter"
NOTEBOOK_SUFFIX = ".ipynb"


def notebooks_to_convert(folder: Path, notebooks: Iterable[str], notebook_id: str = "*") -> list[str]:
    """Which of `notebooks` (names without .ipynb) nbgrader autogrades for the submitted assignment folder `folder`
    (submitted/<student>/<assignment>), the hook above included: each one handed in under its own name, and each one
    `attnkit grade` finds under another name; none where the folder holds no notebook file that `notebook_id`
    (nbgrader's `--notebook`, a glob) matches: nbgrader skips it."""
    from autograder.course.assignment import ASSIGNMENT
    from autograder.grading.intake import open_submission

    pattern = os.path.join(glob.escape(str(folder)), f"{notebook_id}{NOTEBOOK_SUFFIX}")  # nbgrader's glob
    listed = {Path(path).name for path in glob.glob(pattern)}
    notebooks = list(notebooks)  # nbgrader's own glob, above: what it converts under the notebooks' own names
    own = [name for name in notebooks if f"{name}{NOTEBOOK_SUFFIX}" in listed]
    if folder.name != ASSIGNMENT or not listed:
        return own
    with open_submission(folder.parent) as submission:
        return [name for name in notebooks
                if name in own or (name in submission.located and submission.located[name].path is not None)]


def also_convert_renamed(assignment: str, student: str, notebooks: list[str], notebook_id: str = "*",
                         **_: Any) -> None:
    """nbgrader's `pre_convert_hook` for Autograde (see the module docstring): `notebooks`, the paths of one student's
    notebooks nbgrader is about to convert, gets the path under its own name of each notebook `attnkit grade` finds
    under another name, among those `notebook_id` matches (nbgrader's `--notebook`, a glob: the exporter passes it).
    `assignment` and `student` are nbgrader's settings ("*" for every student): unused."""
    from autograder.course.exercises import NOTEBOOKS

    if not notebooks:
        return
    folder = Path(notebooks[0]).parent
    present = {Path(path).name for path in notebooks}
    for notebook in notebooks_to_convert(folder, fnmatch.filter(NOTEBOOKS, notebook_id), notebook_id):
        if f"{notebook}{NOTEBOOK_SUFFIX}" not in present:
            notebooks.append(str(folder / f"{notebook}{NOTEBOOK_SUFFIX}"))


class RenamedNotebookExporter(NotebookExporter):
    """nbgrader's notebook exporter for Autograde, which reads a submitted notebook as attnkit reads one
    (autograder.isolation.notebook_plan.read_submitted) and one it does not read (missing under its own name: the
    hook added it; a link, no regular file, too large) as an empty notebook: OwnFilesOnly, the first sanitizing step,
    replaces it with the file `attnkit grade` grades as that notebook, or says why there is none (0 points). The
    notebooks of `autograded/` (nbgrader's own, read for its second pass) are read as nbgrader reads them. Made by
    the converter, it narrows the converter's hook, when it is the course's, to the run's `--notebook`."""

    def __init__(self, **kw: Any) -> None:
        from nbgrader.converters.base import BaseConverter

        super().__init__(**kw)
        converter = self.parent
        if (isinstance(converter, BaseConverter) and converter.coursedir is not None
                and converter.pre_convert_hook is also_convert_renamed):
            converter.pre_convert_hook = functools.partial(also_convert_renamed,
                                                           notebook_id=converter.coursedir.notebook_id)
        if isinstance(converter, BaseConverter):  # before the hook imports torch and the checks in this process
            from autograder.integrations.nbgrader_zygote_start import start_zygote_early

            start_zygote_early(converter)

    def from_filename(self, filename: str, resources: dict[str, Any] | None = None,
                      **kw: Any) -> tuple[NotebookNode, dict[str, Any]]:
        from autograder.isolation.notebook_plan import NotebookProblem, read_submitted

        if not self._submitted(filename):
            return super().from_filename(filename, resources, **kw)
        try:
            data = read_submitted(filename)
        except NotebookProblem:
            notebook = nbformat.v4.new_notebook()
        else:  # what nbgrader's own read would raise on it, it raises
            notebook = nbformat.reads(bytes(data).decode("utf-8"), as_version=4)
        resources = resources if resources is not None else ResourcesDict()
        if not resources.get("metadata"):
            resources["metadata"] = ResourcesDict()
        path, name = os.path.split(filename)
        resources["metadata"]["name"], resources["metadata"]["path"] = os.path.splitext(name)[0], path
        return self.from_notebook_node(notebook, resources, **kw)

    def _submitted(self, filename: str) -> bool:
        """Whether `filename` lies in the course's submitted/ folder (the converter's course directory)."""
        course = getattr(self.parent, "coursedir", None)
        if course is None:
            return False
        submitted = os.path.normpath(course.format_path(course.submitted_directory, ".", "."))
        return os.path.normpath(filename).startswith(submitted + os.sep)
