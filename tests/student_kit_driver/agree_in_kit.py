"""The students of the kit's agreement test, built the same way on both sides of it, and the kit's side of it.

    python agree_in_kit.py REPO STUDENTS.json OUT.json [VECTORS.json]

writes {label: {lang: {check: [passed, misconception, message]}}} for the [student] records, with the kit's installed
vectors or, for the test's control, VECTORS.json.

A student is a JSON record: the notebook whose code cells (solved from source/, or as handed out in release/) make
its namespace, the exercise, and optionally a mutant (a file of tests/mutants/ and one of its functions or classes)
or a variant (a maker of devtools/student_variants.py and its knobs) standing in for one name. The test
(tests/test_student_kit_torch_range.py) builds the same namespaces with the full kit under the project's torch, the
kit's venv under another release runs this file: only the standard library, torch
and the installed kit are used here, and the project's files are read as text, never imported.
"""

import contextlib
import io
import json
import sys
from pathlib import Path

import torch

MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
LANGS = ("en", "zh")


def _source(cell):
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def notebook_cells(repo, notebook, solved):
    """The release notebook's code cells without their imports of the autograder (the first cell imports torch
    beside it), each solution cell solved from source/ when `solved`."""
    release = json.loads((Path(repo) / "release" / "attention" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    source = json.loads((Path(repo) / "source" / "attention" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    solutions = {cell["metadata"]["nbgrader"]["grade_id"]: "\n".join(
        line for line in _source(cell).splitlines() if line.strip() not in MARKERS)
        for cell in source["cells"] if cell.get("metadata", {}).get("nbgrader", {}).get("solution")}
    cells = []
    for cell in release["cells"]:
        if cell["cell_type"] != "code":
            continue
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        source = solutions[nbgrader["grade_id"]] if solved and nbgrader.get("solution") else _source(cell)
        cells.append("\n".join(line for line in source.splitlines()
                               if not line.startswith(("from autograder", "import autograder"))))
    return cells


def _no_feedback(*arguments, **options):
    """Stands in for the notebooks' check, check_all and grade: the agreement calls the checks itself."""


def run_cells(cells, label):
    """The namespace the cells leave (a stub's NotImplementedError, or a magic's SyntaxError, skips that cell)."""
    namespace = {"__name__": "__main__", "check": _no_feedback, "check_all": _no_feedback, "grade": _no_feedback}
    with torch.random.fork_rng(devices=[]):  # the notebooks seed the global RNG: each namespace from the same state
        torch.manual_seed(0)
        for source in cells:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(Exception):
                exec(compile(source, label, "exec"), namespace)  # noqa: S102 - the course's own notebooks
    return namespace


class Namespaces:
    """Each student's namespace; each notebook's cells run once per side."""

    def __init__(self, repo):
        self.repo = Path(repo)
        self.notebooks = {}
        self.mutant_files = {}
        self.variants = None

    def notebook(self, notebook, solved):
        key = (notebook, solved)
        if key not in self.notebooks:
            self.notebooks[key] = run_cells(notebook_cells(self.repo, notebook, solved), notebook)
        return self.notebooks[key]

    def of(self, student):
        base = self.notebook(student["notebook"], student["solved"])
        namespace = {name: base[name] for name in student["names"] if name in base}
        if student.get("mutant_file"):
            if student["mutant_file"] not in self.mutant_files:
                path = self.repo / student["mutant_file"]
                module = {"__name__": f"mutants_{path.stem}"}
                exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module)  # noqa: S102
                self.mutant_files[student["mutant_file"]] = module
            namespace[student["name"]] = self.mutant_files[student["mutant_file"]][student["mutant"]]
        if student.get("maker"):
            namespace[student["name"]] = self.variant(student)
        return namespace

    def variant(self, student):
        """The class devtools/student_variants.py's maker writes for these knobs (the wrapper's heads are the
        CausalAttention of the solved notebook that defines it, `heads_from`)."""
        if self.variants is None:
            path = self.repo / "devtools" / "student_variants.py"
            # A module in sys.modules: dataclasses look their module up there.
            module = type(sys)("attnkit_student_variants")
            sys.modules[module.__name__] = module
            exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)  # noqa: S102
            self.variants = module
        knobs = getattr(self.variants, student["knobs_class"])(**student["knobs"])
        make = getattr(self.variants, student["maker"])
        if student["maker"] == "wrapper":
            return make(knobs, self.notebook(student["heads_from"], True)["CausalAttention"])
        return make(knobs)


def outcomes(students, namespaces, run, passed):
    """{label: {lang: {check id: [passed, misconception, message]}}}; `run(exercise, namespace, lang)` gives the
    results, `passed` the status that passes."""
    found = {}
    for student in students:
        namespace = namespaces.of(student)
        found[student["label"]] = {lang: {result.id: [result.status == passed, result.misconception, result.message]
                                          for result in run(student["exercise"], namespace, lang)}
                                   for lang in LANGS}
    return found


def main(repo, students_path, out_path, vectors_path=None):
    from autograder.checking.check_types import PASSED
    from autograder.integrations.student_kit.runtime.checking import run_public
    from autograder.integrations.student_kit.runtime.vectors import installed_vectors, read_vectors

    vectors = read_vectors(vectors_path) if vectors_path else installed_vectors()
    students = json.loads(Path(students_path).read_text(encoding="utf-8"))
    found = outcomes(students, Namespaces(repo), lambda exercise, namespace, lang:
                     run_public(exercise, namespace, vectors, lang), PASSED)
    found["__torch__"] = torch.__version__
    Path(out_path).write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
