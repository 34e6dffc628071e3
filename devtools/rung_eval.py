"""What each rung says to the learners of an evaluation set, and what grading gives them.

    python -m devtools.rung_eval tests/evalsets/learners_2026_11 --out DIR [--attempt ID]... [--no-grade]

A set is a folder of JSON files, one per notebook (`{"notebook": NAME, "attempts": [...]}`), each attempt the whole
answer cell a learner writes for one exercise, with its id, exercise, code, mistake, departing_step and correct
(tests/evalsets/learners_2026_11/README.md). For each attempt:

- the release notebook is built with the attempt in its exercise's answer cells (split by the names each cell's stub
  defines: masking_routes has two) and the reference in every other answer cell;
- its code cells run in a fresh namespace, in order, up to the exercise's check cell (check and graded cells
  skipped, the notebook's imports of the autograder left out, a raising cell noted and passed over, as a learner
  runs on): the objects the check cell passes are then the attempt's;
- check(...) runs three times in a fresh kernel's runtime, hint=1, 2 and 3 (devtools.heldout_eval.learner_read),
  in English and in Chinese: the texts the learner reads (the tables; pictures show only in a kernel), and once
  more for whether every public check passes and which mistakes the failing ones name;
- the built notebook is graded as `attnkit check` grades it (autograder.grading.api.check_notebooks: sandboxed
  children, every check, hidden included): the exercise's score and the mistakes its graded feedback names.

Writes DIR/rungs.csv (every text in full, one row per attempt) and DIR/rungs.md (a table: verdicts, scores, the
names and what rung 2 adds to rung 1); progress goes to stderr. The set is the project's own data, run in this
process like tests/heldout/; the grading runs it sandboxed as it runs any student's notebook. --no-grade skips the
grading (no hidden score), --attempt runs only the attempts named.
"""

import argparse
import ast
import contextlib
import copy
import csv
import io
import json
import linecache
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import nbformat
import torch
from nbformat import NotebookNode

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES_BY_ID
from autograder.grading.api import check_notebooks
from autograder.grading.notebooks import Options
from autograder.outputs.records import reads_as_formula
from autograder.running.runner import DEFAULT_SEED, run_exercise
from autograder.safe_text import clean
from devtools.heldout_eval import RUNGS, learner_read
from tests.heldout import CORRECT, NONE_KNOWN, Attempt

__all__ = [
    "AttemptReading", "Graded", "SetAttempt", "SetError", "answer_cells", "grade_attempts", "load_set", "main",
    "notebook_namespace", "placed_notebook", "read_attempt", "write_csv", "write_markdown",
]

REPO = Path(__file__).resolve().parents[1]
LANGS = ("en", "zh")
FIELDS = {"id": str, "exercise": str, "code": str, "mistake": str, "departing_step": str, "correct": bool}
ID_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")  # an id names a folder of the grading run
RUNG_MARK = re.compile(r"^--- hint=(\d)$", re.MULTILINE)  # how learner_read separates the rungs
TEXT_LIMIT = 100_000  # a rung's table can run past spreadsheet_text's 4,000 characters: kept whole here


class SetError(ValueError):
    """A set file that is not what the README describes: said with the file and the attempt."""


@dataclass(frozen=True)
class SetAttempt:
    id: str
    notebook: str
    exercise: str
    code: str
    mistake: str
    departing_step: str
    correct: bool  # a control: a legitimate answer that must keep full marks


@dataclass(frozen=True)
class Graded:
    score: float
    max_score: float
    names: tuple[str, ...]  # the mistakes the exercise's failing checks name in the graded run


@dataclass(frozen=True)
class AttemptReading:
    attempt: SetAttempt
    public_pass: bool  # every public check of the exercise (previews included) passes
    public_names: tuple[str, ...]  # the mistakes the failing public checks name
    rungs: Mapping[str, tuple[str, ...]]  # lang -> what check(..., hint=1), 2 and 3 print
    cell_errors: tuple[str, ...]  # the notebook's cells that raised on the way to the check cell
    graded: Graded | None  # None: not graded (--no-grade)


def load_set(folder: Path) -> list[SetAttempt]:
    """Every attempt of the set, file by file in name order; SetError for a file or attempt out of shape."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise SetError(f"{folder}: no .json file")
    attempts: list[SetAttempt] = []
    for path in files:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
            raise SetError(f"{path.name}: not readable JSON ({problem})") from problem
        if not isinstance(document, dict) or document.get("notebook") != path.stem:
            raise SetError(f"{path.name}: its \"notebook\" must be {path.stem!r}")
        if not isinstance(document.get("attempts"), list):
            raise SetError(f"{path.name}: \"attempts\" must be a list")
        attempts.extend(_attempt(path, entry) for entry in document["attempts"])
    seen: set[str] = set()
    for attempt in attempts:
        if attempt.id in seen:
            raise SetError(f"attempt id {attempt.id!r} is used twice")
        seen.add(attempt.id)
    return attempts


def _attempt(path: Path, entry: object) -> SetAttempt:
    if not isinstance(entry, dict):
        raise SetError(f"{path.name}: an attempt is not an object")
    label = entry.get("id", "?")
    for field, kind in FIELDS.items():
        if not isinstance(entry.get(field), kind):
            raise SetError(f"{path.name}, attempt {label!r}: {field!r} must be a {kind.__name__}")
    if not ID_FORMAT.fullmatch(entry["id"]):
        raise SetError(f"{path.name}, attempt {label!r}: an id is letters, digits, dashes and underscores")
    exercise = EXERCISES_BY_ID.get(entry["exercise"])
    if exercise is None or exercise.notebook != path.stem:
        raise SetError(f"{path.name}, attempt {label!r}: {entry['exercise']!r} is no exercise of {path.stem}")
    return SetAttempt(entry["id"], path.stem, entry["exercise"], entry["code"], entry["mistake"],
                      entry["departing_step"], entry["correct"])


def _grade_id(cell: NotebookNode) -> str:
    return str(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))


def _is_answer(cell: NotebookNode) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))


def _defined(source: str) -> set[str]:
    """The names a cell's top level defines (its functions and classes)."""
    return {node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def answer_cells(notebook: NotebookNode, exercise: str) -> list[str]:
    """The grade ids of the answer cells whose stubs define the exercise's names, in notebook order."""
    names = set(EXERCISES_BY_ID[exercise].names)
    return [_grade_id(cell) for cell in notebook.cells if _is_answer(cell) and _defined(cell.source) & names]


def _split(code: str, cells: Mapping[str, set[str]]) -> dict[str, str]:
    """The attempt's code cut into its answer cells: a top-level definition goes to the cell whose stub defines that
    name, any other statement (an import, a helper) to the first cell."""
    ids = list(cells)
    parts: dict[str, list[str]] = {grade_id: [] for grade_id in ids}
    lines = code.splitlines()
    for node in ast.parse(code).body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        name = getattr(node, "name", None)
        target = next((grade_id for grade_id in ids if name in cells[grade_id]), ids[0])
        parts[target].append("\n".join(lines[start:node.end_lineno]))
    return {grade_id: "\n\n\n".join(chunks) + "\n" for grade_id, chunks in parts.items()}


def _notebook(kind: str, name: str) -> NotebookNode:
    return nbformat.read(REPO / kind / "attention" / f"{name}.ipynb", as_version=4)


def placed_notebook(attempt: SetAttempt) -> NotebookNode:
    """The release notebook with the attempt in its exercise's answer cells and the reference in every other one."""
    notebook = copy.deepcopy(_notebook("release", attempt.notebook))
    reference = {_grade_id(cell): cell.source for cell in _notebook("source", attempt.notebook).cells
                 if _is_answer(cell)}
    own = {_grade_id(cell): _defined(cell.source) for cell in notebook.cells
           if _grade_id(cell) in answer_cells(notebook, attempt.exercise)}
    placed = _split(attempt.code, own)
    for cell in notebook.cells:
        grade_id = _grade_id(cell)
        if _is_answer(cell):
            cell.source = placed.get(grade_id, reference[grade_id])
    return notebook


def _without_autograder(source: str) -> str:
    # The feedback is read below, in a runtime of this run's own: the cells' own imports of it are left out.
    return "\n".join(line for line in source.splitlines()
                     if not line.lstrip().startswith(("from autograder", "import autograder")))


def notebook_namespace(notebook: NotebookNode, exercise: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The namespace after the notebook's code cells ran in order up to the exercise's check cell (check and graded
    cells skipped), and the cells that raised on the way, as "cell N: Error: message". Each cell's lines are kept in
    linecache, as a kernel keeps them: what the grader quotes of a failing line is what a learner reads."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    errors = []
    with torch.random.fork_rng(devices=[]):  # the notebooks seed the global RNG: this run's state is kept
        for index, cell in enumerate(notebook.cells):
            grade_id = _grade_id(cell)
            if grade_id == f"check_{exercise}":
                break
            if cell.cell_type != "code" or grade_id.startswith(("check_", "test_")):
                continue
            source = _without_autograder(cell.source)
            filename = f"<learner cell {index}>"
            # As a kernel does, the cell's lines are known to linecache: the grader quotes the learner's failing line.
            linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
            except Exception as problem:  # noqa: BLE001 - a learner runs the next cell all the same
                errors.append(f"cell {index}: {type(problem).__name__}: {problem}")
    return namespace, tuple(errors)


def _rungs(attempt: SetAttempt, objects: tuple[Any, ...], lang: str) -> tuple[str, ...]:
    read = learner_read(Attempt(attempt.id, attempt.exercise, objects, CORRECT if attempt.correct else NONE_KNOWN,
                                attempt.mistake), lang)
    texts = RUNG_MARK.split(read)[1:]  # ["1", text, "2", text, "3", text]
    by_rung = {int(texts[i]): texts[i + 1].strip("\n") for i in range(0, len(texts), 2)}
    return tuple(by_rung[rung] for rung in RUNGS)


def read_attempt(attempt: SetAttempt) -> AttemptReading:
    """The public verdict and the three rungs in both languages, the attempt run as its notebook runs it."""
    namespace, errors = notebook_namespace(placed_notebook(attempt), attempt.exercise)
    names = EXERCISES_BY_ID[attempt.exercise].names
    missing = [name for name in names if name not in namespace]
    if missing:
        raise SetError(f"attempt {attempt.id!r}: the notebook defines no {', '.join(missing)} ({'; '.join(errors)})")
    objects = tuple(namespace[name] for name in names)
    public = run_exercise(attempt.exercise, dict(zip(names, objects, strict=True)), seed=DEFAULT_SEED,
                          include_hidden=False, lang="en")
    failing = [result for result in public if result.status != PASSED]
    return AttemptReading(attempt, not failing,
                          tuple(dict.fromkeys(r.misconception for r in failing if r.misconception)),
                          {lang: _rungs(attempt, objects, lang) for lang in LANGS}, errors, None)


def grade_attempts(attempts: Sequence[SetAttempt], workdir: Path, progress: TextIO) -> dict[str, Graded]:
    """Each attempt's placed notebook graded with every check, hidden included: its exercise's score and names."""
    paths = {}
    for attempt in attempts:
        path = workdir / attempt.id / f"{attempt.notebook}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(placed_notebook(attempt), path)
        paths[attempt.id] = path
    graded = {}
    for notebook in dict.fromkeys(attempt.notebook for attempt in attempts):
        group = [attempt for attempt in attempts if attempt.notebook == notebook]
        print(f"grading {len(group)} notebooks of {notebook}", file=progress, flush=True)
        results = check_notebooks([paths[attempt.id] for attempt in group], Options()).results
        for attempt, result in zip(group, results, strict=True):
            checks = [check for check in result.checks if check.exercise == attempt.exercise]
            graded[attempt.id] = Graded(sum(check.score for check in checks), sum(check.max_score for check in checks),
                                        tuple(dict.fromkeys(check.misconception for check in checks
                                                            if check.status != PASSED and check.misconception)))
    return graded


COLUMNS = ("id", "notebook", "exercise", "correct", "mistake", "departing_step", "public_pass", "public_names",
           "graded_score", "graded_max", "graded_names", "cell_errors",
           *(f"rung{rung}_{lang}" for lang in LANGS for rung in RUNGS))


def _csv_text(value: object) -> str:
    """spreadsheet_text's guard (cleaned, quoted when a spreadsheet may read it as a formula), without its cut."""
    text = clean(value, TEXT_LIMIT)
    return "'" + text if reads_as_formula(text) else text


def _row(reading: AttemptReading) -> list[str]:
    attempt, graded = reading.attempt, reading.graded
    texts = [reading.rungs[lang][rung - 1] for lang in LANGS for rung in RUNGS]
    return [_csv_text(value) for value in (
        attempt.id, attempt.notebook, attempt.exercise, attempt.correct, attempt.mistake, attempt.departing_step,
        reading.public_pass, " ".join(reading.public_names),
        "" if graded is None else f"{graded.score:g}", "" if graded is None else f"{graded.max_score:g}",
        "" if graded is None else " ".join(graded.names), " | ".join(reading.cell_errors), *texts)]


def write_csv(readings: Sequence[AttemptReading], path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        writer.writerows(_row(reading) for reading in readings)


def rung_two_adds(reading: AttemptReading, lang: str = "en") -> list[str]:
    """The lines rung 2 prints that rung 1 does not: the reproduced mistake and its concept, or why there is none."""
    first, second, _ = reading.rungs[lang]
    seen = set(first.splitlines())
    return [line.strip() for line in second.splitlines() if line not in seen and not line.lstrip().startswith("»")]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def write_markdown(readings: Sequence[AttemptReading], path: Path, command: str) -> None:
    graded = [r for r in readings if r.graded is not None]
    full = sum(r.graded.score == r.graded.max_score for r in graded if r.graded is not None)
    lines = [
        "# Rungs on an evaluation set",
        "",
        f"`{command}`: {len(readings)} attempts, {sum(r.attempt.correct for r in readings)} controls; "
        f"public checks all pass for {sum(r.public_pass for r in readings)}; "
        f"{len(graded)} graded, {full} at full marks.",
        "",
        "| id | exercise | control | public | graded | named (public; graded) | rung 2 adds (en) |",
        "|---|---|---|---|---|---|---|",
    ]
    for reading in readings:
        score = "" if reading.graded is None else f"{reading.graded.score:g}/{reading.graded.max_score:g}"
        graded_names = () if reading.graded is None else reading.graded.names
        names = ", ".join(reading.public_names) + "; " + ", ".join(graded_names)
        lines.append("| " + " | ".join(_cell(text) for text in (
            reading.attempt.id, reading.attempt.exercise, "yes" if reading.attempt.correct else "",
            "✔" if reading.public_pass else "✘", score, names, "\n".join(rung_two_adds(reading)))) + " |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.rung_eval", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("set", type=Path, help="the set's folder (one JSON file per notebook)")
    parser.add_argument("--out", type=Path, required=True, help="where rungs.csv and rungs.md go")
    parser.add_argument("--attempt", action="append", help="run only this attempt (by id)")
    parser.add_argument("--no-grade", action="store_true", help="skip the grading: no hidden score")
    args = parser.parse_args(argv)
    try:
        attempts = load_set(args.set)
    except SetError as problem:
        parser.error(str(problem))
    if args.attempt:
        unknown = sorted(set(args.attempt) - {attempt.id for attempt in attempts})
        if unknown:
            parser.error(f"no attempt {', '.join(unknown)} in {args.set}")
        attempts = [attempt for attempt in attempts if attempt.id in args.attempt]
    args.out.mkdir(parents=True, exist_ok=True)
    readings = []
    for number, attempt in enumerate(attempts, 1):
        print(f"[{number}/{len(attempts)}] {attempt.exercise} / {attempt.id}", file=sys.stderr, flush=True)
        readings.append(read_attempt(attempt))
    if not args.no_grade:
        with tempfile.TemporaryDirectory(prefix="rung-eval-") as workdir:
            graded = grade_attempts(attempts, Path(workdir), sys.stderr)
        readings = [AttemptReading(r.attempt, r.public_pass, r.public_names, r.rungs, r.cell_errors,
                                   graded[r.attempt.id]) for r in readings]
    command = "python -m devtools.rung_eval " + " ".join(sys.argv[1:] if argv is None else argv)
    write_csv(readings, args.out / "rungs.csv")
    write_markdown(readings, args.out / "rungs.md", command)
    print(f"wrote {args.out / 'rungs.csv'} and {args.out / 'rungs.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
