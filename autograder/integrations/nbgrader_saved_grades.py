"""nbgrader's SaveAutoGrades with one gradebook commit per notebook, not one per graded cell.

nbgrader's SaveAutoGrades commits the gradebook after each graded cell's score and each answer's comment: with SQLite
on disk, every commit that changed a row waits for the disk (the journal and the database written and synced), about
four of those a notebook of this course, and the sandboxed `nbgrader autograde` saves its grades one notebook after
another in its main thread. `SavedInOneCommit` is nbgrader's preprocessor, its own code for every cell (the same rows
found, the same scores, comments and needs-manual-grade flags), with each of those commits made a flush (the next
cell's queries see the rows as written) and one commit at the end of the notebook. Where a cell raises, what the cells
before it wrote is committed before the error goes on, as nbgrader's own commits had left it; where the gradebook
itself failed, nothing of the notebook is committed (nbgrader's converter reports the notebook as failed either way).
The course's nbgrader_config.py lists it where nbgrader's stood (nbgrader_sandbox).
"""

import contextlib
from collections.abc import Iterator
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades
from sqlalchemy.orm import scoped_session

__all__ = ["REPLACES", "THIS", "SavedInOneCommit"]

THIS = f"{__name__}.SavedInOneCommit"
REPLACES = "nbgrader.preprocessors.SaveAutoGrades"


@contextlib.contextmanager
def commits_flushed(session: scoped_session[Any]) -> Iterator[None]:
    """While open, `session.commit()` flushes instead (the transaction stays open); then commits once: at the end, and
    where the block raises while the session can still commit (what was written before the error is kept)."""
    session.commit = session.flush  # type: ignore[method-assign]  # an instance's attribute, deleted below
    try:
        yield
    except BaseException:
        del session.commit
        if session.is_active:
            session.commit()
        raise
    del session.commit
    session.commit()


class _OneCommit(NbGraderPreprocessor):
    """The cell loop of SaveAutoGrades in one commit: after SaveAutoGrades in SavedInOneCommit's bases, so that its
    `super().preprocess` (nbgrader's loop over the cells, called with its gradebook open) lands here."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        gradebook = self.gradebook  # type: ignore[attr-defined]  # set by SaveAutoGrades.preprocess just before
        with commits_flushed(gradebook.db):
            result: tuple[NotebookNode, dict[str, Any]] = super().preprocess(nb, resources)
        return result


class SavedInOneCommit(SaveAutoGrades, _OneCommit):
    """nbgrader's SaveAutoGrades (the same rows, scores, comments and flags), one commit per notebook."""
