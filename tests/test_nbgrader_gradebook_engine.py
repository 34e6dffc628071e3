"""One engine per gradebook in nbgrader's process (autograder.integrations.nbgrader_gradebook_engine): the second open
of a gradebook compiles none of the queries the first compiled, and each open still commits to disk, connects to the
file its URL names and closes its own connection."""

import shutil
import sqlite3
from pathlib import Path

import nbgrader.api
import pytest
import sqlalchemy
from nbgrader.api import Gradebook
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.engine.default import CACHE_MISS
from traitlets.config.loader import PyFileConfigLoader

from autograder.integrations import nbgrader_gradebook_engine
from autograder.integrations.nbgrader_gradebook_engine import shared_engine

REPO_ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT, NOTEBOOK, STUDENT = "attention", "01_attention_without_weights", "s001"


@pytest.fixture
def installed(monkeypatch):
    """install() for this test only: nbgrader.api's own create_engine is put back afterwards."""
    monkeypatch.setattr(nbgrader.api, "create_engine", nbgrader.api.create_engine)
    nbgrader_gradebook_engine.install()


def _url(path):
    return f"sqlite:///{path}"


@pytest.fixture(scope="module")
def gradebook_file(tmp_path_factory):
    """A gradebook of one assignment, notebook, graded cell and student, written once (each commit syncs the disk)."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(_url(path)) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        gradebook.add_grade_cell("test_scores", NOTEBOOK, ASSIGNMENT, max_score=3.0, cell_type="code")
        gradebook.add_student(STUDENT)
    return path


@pytest.fixture
def path(gradebook_file, tmp_path):
    """This test's own copy of the gradebook."""
    return Path(shutil.copy(gradebook_file, tmp_path / "gradebook.db"))


def _compiles_while(action):
    """How many statements SQLAlchemy compiled (not taken from an engine's cache) while `action` ran."""
    compiled = []

    def note(_connection, _cursor, statement, _parameters, context, _executemany):
        if context is not None and context.cache_hit == CACHE_MISS:  # compiled now, then kept in the engine's cache
            compiled.append(statement)

    event.listen(Engine, "before_cursor_execute", note)
    try:
        action()
    finally:
        event.remove(Engine, "before_cursor_execute", note)
    return len(compiled)


def _find_grade_cell(path):
    with Gradebook(_url(path), "attnkit") as gradebook:
        assert gradebook.find_grade_cell("test_scores", NOTEBOOK, ASSIGNMENT).max_score == 3.0


def test_a_gradebook_opened_again_reuses_its_engine_and_compiles_nothing_again(path, tmp_path, installed):
    _find_grade_cell(path)  # the first open of these queries: compiled here
    assert _compiles_while(lambda: _find_grade_cell(path)) == 0
    with Gradebook(_url(path)) as first, Gradebook(_url(path)) as second:
        assert first.engine is second.engine
    with Gradebook(_url(shutil.copy(path, tmp_path / "other.db"))) as other:
        assert other.engine is not first.engine  # another gradebook, another engine


def test_without_it_every_open_compiles_its_queries_again(path, monkeypatch):
    """nbgrader's own behaviour, which install() changes: a new engine, and every query compiled again. nbgrader.api's
    own create_engine is SQLAlchemy's, put back for this test: install() is process-wide, and another test of this
    worker may have loaded the course's config."""
    monkeypatch.setattr(nbgrader.api, "create_engine", sqlalchemy.create_engine)
    _find_grade_cell(path)
    assert _compiles_while(lambda: _find_grade_cell(path)) > 0


def test_each_commit_is_on_disk_when_made_and_each_open_has_its_own_connection(path, installed):
    with Gradebook(_url(path)) as outer:
        with Gradebook(_url(path)) as inner:
            inner.add_student("s002", first_name="Ada")
            # committed: another process's connection (a kill of this one right now) sees the row
            assert sqlite3.connect(path).execute("select first_name from student where id='s002'").fetchall() == [
                ("Ada",)]
        # the inner close disposed of the shared engine's pool: the outer open's own connection still works
        assert outer.find_student("s002").first_name == "Ada"
        outer.add_student("s003")
    assert sqlite3.connect(path).execute("select count(*) from student").fetchone() == (3,)


def test_an_open_after_the_file_is_replaced_reads_the_new_file(path, gradebook_file, installed):
    with Gradebook(_url(path)) as gradebook:
        gradebook.add_student("s002")
    shutil.copy(gradebook_file, path)  # the file the URL names is now the gradebook before s002
    with Gradebook(_url(path)) as gradebook:  # no connection to the file before was kept
        assert [student.id for student in gradebook.students] == [STUDENT]


def test_urls_other_than_text_and_unhashable_options_get_an_engine_of_their_own(tmp_path):
    url = _url(tmp_path / "gradebook.db")
    assert shared_engine(url, echo=False) is shared_engine(url, echo=False)
    assert shared_engine(url, echo=False) is not shared_engine(url, echo=True)
    options = {"connect_args": {"timeout": 5}}  # a dict: not comparable as a key
    assert shared_engine(url, **options) is not shared_engine(url, **options)


def test_the_course_config_installs_it(monkeypatch):
    monkeypatch.setattr(nbgrader.api, "create_engine", nbgrader.api.create_engine)
    PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()
    assert nbgrader.api.create_engine is shared_engine
