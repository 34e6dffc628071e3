"""nbgrader's CheckCellMetadata with its schema checked once per process, not once per graded cell.

nbgrader validates the nbgrader metadata of each cell with `jsonschema.validate(metadata, schema)`, which first
checks the schema itself against its meta-schema: `nbgrader autograde` ran that check twice per graded cell (the
sanitizing and the autograding lists both end with CheckCellMetadata), 1,632 times and about 3.5 s of 20 for 12
students × 4 notebooks. `SchemaCheckedOnce` is nbgrader's preprocessor with the same schema, the same validator
class, the same best-matching error, the same log lines and exception; a cell of another schema version goes to
nbgrader's own code. The course's nbgrader_config.py lists it where nbgrader's stood (nbgrader_intake,
nbgrader_sandbox).
"""

import functools
import traceback
from typing import Any

from jsonschema import exceptions, validators
from nbformat.notebooknode import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

__all__ = ["REPLACES", "THIS", "SchemaCheckedOnce"]

THIS = f"{__name__}.SchemaCheckedOnce"
REPLACES = "nbgrader.preprocessors.CheckCellMetadata"


@functools.cache
def _validator(schema_version: int) -> Any:
    """The jsonschema validator of nbgrader's metadata schema of this version, the schema checked (once)."""
    schema = MetadataValidator().schema if schema_version == MetadataValidator.schema_version else None
    if schema is None:
        raise ValueError(f"no nbgrader metadata schema version {schema_version} here")
    kind = validators.validator_for(schema)
    kind.check_schema(schema)
    return kind(schema)


class _SchemaCheckOnce(BaseMetadataValidator):
    """The base validator's schema check, with the cached validator: placed after MetadataValidator's own class in
    _MetadataValidatorSchemaOnce's bases, so that its `super().validate_cell` (the base's) lands here."""

    def validate_cell(self, cell: NotebookNode) -> None:
        if "nbgrader" not in cell.metadata:
            return
        if cell.metadata["nbgrader"].get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)  # nbgrader's own: too old or too new
            return
        error = exceptions.best_match(_validator(self.schema_version).iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class _MetadataValidatorSchemaOnce(MetadataValidator, _SchemaCheckOnce):
    """nbgrader's validator (its checks after the schema's, and per notebook), the schema checked once."""


class SchemaCheckedOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata (the same checks, log and exception), its schema checked once per process."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        try:
            _MetadataValidatorSchemaOnce().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message)  # noqa: B904 - as nbgrader's own raises it
        return nb, resources
