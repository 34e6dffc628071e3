"""One SQLAlchemy engine per gradebook in nbgrader's process, so that its queries are compiled once: `install()`.

nbgrader opens its gradebook (`nbgrader.api.Gradebook`) five or six times per autograded notebook (its converter,
`OverwriteKernelspec`, `OverwriteCells`, `SaveAutoGrades`, `AssignLatePenalties`), and each open calls SQLAlchemy's
`create_engine` anew. SQLAlchemy keeps its compiled statements in the engine, so every query of every open was
compiled again: a cProfile of the sandboxed `nbgrader autograde` of 48 notebooks counted 256 opens and 672 compiles,
the biggest part of nbgrader's own time after nbconvert's validation.

With `install()`, `nbgrader.api`'s `create_engine` gives back the engine it already made for the same URL and
options in this process. Nothing else changes: each `Gradebook` still has its own session and its own connection,
commits when nbgrader commits (each commit on disk when it is made, so a process killed mid-way loses what it lost
before), and its `close()` still disposes of the engine's pool, closing its idle connections: the next open connects
again, to the file the URL names then. Only the compiled statements outlive an open. Other code that calls
SQLAlchemy's `create_engine` itself is not touched.
"""

import functools
from typing import Any

import nbgrader.api
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

__all__ = ["install", "shared_engine"]

# Engines kept at once: one per gradebook a process opens (a course's; the tests' throwaway courses, each its own).
KEPT_ENGINES = 16


@functools.lru_cache(maxsize=KEPT_ENGINES)
def _engine(url: str, options: tuple[tuple[str, Any], ...]) -> Engine:
    return create_engine(url, **dict(options))


def shared_engine(url: Any, **options: Any) -> Engine:
    """`sqlalchemy.create_engine(url, **options)`, made once per URL and options in this process (a URL given as
    text; anything else, or options that cannot be compared, gets a new engine as before)."""
    if not isinstance(url, str):
        return create_engine(url, **options)
    key = tuple(sorted(options.items()))
    try:
        hash(key)
    except TypeError:
        return create_engine(url, **options)
    return _engine(url, key)


def install() -> None:
    """Have nbgrader's `Gradebook` reuse one engine per gradebook in this process; idempotent (nbgrader loads the
    config more than once)."""
    nbgrader.api.create_engine = shared_engine
