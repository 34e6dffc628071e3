"""`SanitizeStudentMarkup`: nothing a student wrote runs in the browser of whoever opens the graded notebook.

The course's nbgrader_config.py runs it last in `Autograde.autograde_preprocessors` (so what autograded/ stores, and
formgrader shows, is clean) and in `GenerateFeedback.preprocessors` (so the feedback page is clean even for a
notebook autograded before it was there). Per cell (autograder.integrations.student_markup):

- markdown cells: kept as they are where nbconvert's rendering of them passes the allow-list, otherwise replaced by
  the sanitized rendering under a note; no element may take the id of the page's own (a grade's score input, its
  comment box); an image from outside the notebook's folder becomes a link, and MathJax's commands that write
  attributes or CSS are made inert (a tracking pixel); attachments keep only base64 raster images (an SVG can hold
  script);
- raw cells and `text/html` / `text/markdown` outputs: the same; other output types than text and images are dropped
  (`application/javascript`, widget views, LaTeX), and outputs' metadata with them. nbgrader clears the student's
  outputs before grading and SandboxedExecute writes every output anew, so in practice these are attnkit's own;
  they are checked all the same (a course that grades in the student's kernel, a notebook autograded elsewhere);
- cell metadata the pages print: `tags` (a class attribute) keep only plain names, `jupyter` only booleans, and a
  grade id must be a plain name; the notebook's `widgets` state (the page would load widget scripts for it) and a
  `title` that is not plain text go.
"""

import re
from collections.abc import Callable
from typing import Any

from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List

from autograder.integrations.student_markup import Cleaned, Page, safe_attachments, safe_markdown, safe_raw

__all__ = ["SanitizeStudentMarkup", "THIS", "page_ids", "sanitize_cell", "sanitize_notebook"]

THIS = f"{__name__}.SanitizeStudentMarkup"
PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
PLAIN_TITLE = re.compile(r"[^<>&\"'\x00-\x1f\x7f]{0,200}")
# An SVG output (attnkit's heatmaps) is shown by nbconvert as an <img> data URL, where no script runs.
KEPT_OUTPUT_TYPES = ("text/plain", "image/png", "image/jpeg", "image/gif", "image/svg+xml")
PAGE_IDS = frozenset({"notebook", "notebook-container", "statusmessage", "toc"})
GRADE_ID_SUFFIXES = ("", "-comment", "_extra_credit")
OUTPUT_MARKUP: dict[str, Callable[..., Cleaned]] = {"text/html": safe_raw, "text/markdown": safe_markdown}


class SanitizeStudentMarkup(NbGraderPreprocessor):
    """Make the student's markdown, raw cells, attachments, outputs and metadata safe to render (module docstring)."""

    # Unused here. nbconvert's HTMLExporter (generate_feedback) configures it for every NbConvertBase, and nbgrader's
    # base preprocessor declares it not configurable: declared so, as nbgrader's GetGrades does, the feedback log has
    # no "Config option `display_data_priority` not recognized" warning.
    display_data_priority: List[str] = List(help="Not used by this preprocessor.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict) -> tuple[NotebookNode, ResourcesDict]:
        removed = sanitize_notebook(nb)
        if removed:
            self.log.warning("attnkit: removed from %s what could run or load in a browser: %s",
                             resources.get("nbgrader", {}).get("notebook", "the notebook"), "; ".join(removed))
        return nb, resources


def sanitize_notebook(nb: NotebookNode) -> list[str]:
    """Sanitize `nb` in place; what was removed, one entry per cell or key."""
    removed = _sanitize_notebook_metadata(nb.get("metadata"))
    page = Page(reserved_ids=page_ids(nb))
    for index, cell in enumerate(nb.get("cells", [])):
        removed += [f"cell {index}: {what}" for what in sanitize_cell(cell, page)]
    return removed


def page_ids(nb: NotebookNode) -> frozenset[str]:
    """The ids of formgrader's and the feedback page's own elements: the page's, and each grade's input, comment box
    and extra credit (nbgrader's formgrade and feedback templates)."""
    grade_ids = set()
    for cell in nb.get("cells", []):
        nbgrader = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
        if isinstance(nbgrader, dict) and isinstance(nbgrader.get("grade_id"), str):
            grade_ids.add(nbgrader["grade_id"])
    return frozenset(PAGE_IDS | {f"{grade_id}{suffix}" for grade_id in grade_ids for suffix in GRADE_ID_SUFFIXES})


def sanitize_cell(cell: NotebookNode, page: Page | None = None) -> list[str]:
    page = page or Page()
    removed: list[str] = []
    if "attachments" in cell:
        cell["attachments"], dropped = safe_attachments(cell["attachments"])
        removed += dropped
        if not cell["attachments"]:
            del cell["attachments"]
    source = cell.get("source", "")
    source = source if isinstance(source, str) else "".join(str(line) for line in source)
    kind = cell.get("cell_type")
    if kind == "markdown":
        removed += _store(cell, safe_markdown(source, cell.get("attachments"), page))
    elif kind == "raw":
        removed += _store(cell, safe_raw(source, page))
    elif kind == "code":
        removed += _sanitize_outputs(cell, page)
    removed += _sanitize_cell_metadata(cell.get("metadata"))
    return removed


def _store(cell: NotebookNode, cleaned: Cleaned) -> list[str]:
    cell["source"] = cleaned.source
    return list(cleaned.removed)


def _sanitize_outputs(cell: NotebookNode, page: Page) -> list[str]:
    removed: list[str] = []
    for output in cell.get("outputs", []):
        data = output.get("data")
        if isinstance(data, dict):
            for mimetype in list(data):
                value = data[mimetype]
                value = "".join(value) if isinstance(value, list) else value
                if mimetype in OUTPUT_MARKUP and isinstance(value, str):
                    cleaned = OUTPUT_MARKUP[mimetype](value, page=page)
                    data[mimetype] = cleaned.source
                    removed += cleaned.removed
                elif mimetype not in KEPT_OUTPUT_TYPES or not isinstance(value, str):
                    del data[mimetype]
                    removed.append(f"a {mimetype} output")
        if output.get("metadata"):
            output["metadata"] = {}
    return removed


def _sanitize_cell_metadata(metadata: Any) -> list[str]:
    if not isinstance(metadata, dict):
        return []
    removed = []
    tags = metadata.get("tags")
    if tags is not None:
        plain = [tag for tag in tags if isinstance(tag, str) and PLAIN_NAME.fullmatch(tag)] \
            if isinstance(tags, list) else []
        if len(plain) != (len(tags) if isinstance(tags, list) else -1):
            removed.append("tags that are not plain names")
        metadata["tags"] = plain
    jupyter = metadata.get("jupyter")
    if jupyter is not None:
        kept = {key: value for key, value in jupyter.items() if isinstance(value, bool)} \
            if isinstance(jupyter, dict) else {}
        if kept != jupyter:
            removed.append("jupyter metadata that is not true/false")
        metadata["jupyter"] = kept
    nbgrader = metadata.get("nbgrader")
    if isinstance(nbgrader, dict) and "grade_id" in nbgrader and not (
            isinstance(nbgrader["grade_id"], str) and PLAIN_NAME.fullmatch(nbgrader["grade_id"])):
        nbgrader["grade_id"] = re.sub(r"[^A-Za-z0-9_.-]", "_", str(nbgrader["grade_id"]))[:100] or "_"
        removed.append("a grade id that is not a plain name")
    return removed


def _sanitize_notebook_metadata(metadata: Any) -> list[str]:
    if not isinstance(metadata, dict):
        return []
    removed = []
    if "widgets" in metadata:
        del metadata["widgets"]
        removed.append("widget state")
    title = metadata.get("title")
    if title is not None and not (isinstance(title, str) and PLAIN_TITLE.fullmatch(title)):
        del metadata["title"]
        removed.append("a title that is not plain text")
    return removed
