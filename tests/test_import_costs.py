"""What every process that reads a notebook pays at import: each nbgrader command and each grading run start one.

jsonschema 4.24 and later import rfc3987-syntax when it is installed (the format-nongpl extra that jupyter-events
asks for brings it), and importing that builds about forty lark parsers: nbformat, which imports jsonschema, then
costs seconds of CPU instead of a fraction of one. constraints.txt pins jsonschema 4.23, which neither brings
nor imports it.
"""

import importlib.metadata
import subprocess
import sys

PROBE = "import sys, nbformat, nbgrader.utils; print(sorted({'rfc3987_syntax', 'lark'} & set(sys.modules)))"


def test_reading_a_notebook_builds_no_iri_grammar():
    completed = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]", completed.stdout + completed.stderr


def test_the_pin_that_keeps_it_out_is_the_installed_jsonschema(repo_root):
    lines = (repo_root / "constraints.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    pins = [line for line in lines if line.startswith("jsonschema==")]
    assert pins == [f"jsonschema=={importlib.metadata.version('jsonschema')}\n"]
