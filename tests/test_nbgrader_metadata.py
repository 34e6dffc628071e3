"""The course's CheckCellMetadata (autograder.integrations.nbgrader_metadata) says what nbgrader's says, on the
solved notebooks and on metadata broken in each way the schema or the version check rejects."""

import copy
import logging

import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

from autograder.course.assignment import ASSIGNMENT
from autograder.integrations.nbgrader_metadata import SchemaCheckedOnce


def _verdict(preprocessor, notebook, caplog):
    caplog.clear()
    try:
        preprocessor.preprocess(copy.deepcopy(notebook), {})
    except Exception as error:  # noqa: BLE001 - the error is the verdict compared
        cause = error.__context__
        return (type(error).__name__, str(error), type(cause).__name__, str(cause).splitlines()[:1],
                [record.getMessage().splitlines()[-1] for record in caplog.records])
    return ("valid", [record.getMessage() for record in caplog.records])


def _graded_cell(notebook):
    return next(cell for cell in notebook.cells if cell.metadata.get("nbgrader", {}).get("grade"))


BREAKS = {
    "points as text": lambda meta: meta.update(points="ten"),
    "grade_id missing": lambda meta: meta.pop("grade_id"),
    "grade not a bool": lambda meta: meta.update(grade="yes"),
    "schema too old": lambda meta: meta.update(schema_version=1),
    "schema too new": lambda meta: meta.update(schema_version=99),
    "schema version not a number": lambda meta: meta.update(schema_version="3"),
    "cell type of no kind": lambda meta: meta.update(cell_type=None),
}


@pytest.fixture(scope="module")
def solved(repo_root):
    return [nbformat.read(path, as_version=4) for path in sorted((repo_root / "source" / ASSIGNMENT).glob("*.ipynb"))]


def test_the_schema_check_is_the_course_validators_own():
    from autograder.integrations.nbgrader_metadata import _MetadataValidatorSchemaOnce, _SchemaCheckOnce

    mro = _MetadataValidatorSchemaOnce.__mro__
    assert mro.index(_SchemaCheckOnce) == mro.index(MetadataValidator) + 1  # what the V3 class's super() reaches


def test_solved_notebooks_pass_both(solved, caplog):
    for notebook in solved:
        assert _verdict(SchemaCheckedOnce(), notebook, caplog) == _verdict(CheckCellMetadata(), notebook, caplog)
        assert _verdict(SchemaCheckedOnce(), notebook, caplog)[0] == "valid"


@pytest.mark.parametrize("broken", BREAKS)
def test_broken_metadata_is_refused_with_nbgraders_words(solved, broken, caplog):
    caplog.set_level(logging.ERROR)
    notebook = copy.deepcopy(solved[0])
    BREAKS[broken](_graded_cell(notebook).metadata["nbgrader"])
    ours, nbgraders = _verdict(SchemaCheckedOnce(), notebook, caplog), _verdict(CheckCellMetadata(), notebook, caplog)
    assert ours == nbgraders
    assert ours[0] != "valid"
