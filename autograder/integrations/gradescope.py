"""Gradescope autograder bundle: `build_bundle(out_zip)` behind `attnkit gradescope build`, and `run()`, what it runs.

The zip follows Gradescope's autograder specification: at its root

  setup.sh          run once, as root, when Gradescope builds the image: a Python >= 3.11 venv in
                    $ROOT/venv, torch pinned as in constraints.txt from the CPU wheel index, then
                    attnkit itself (editable, from the bundled source) with constraints.txt
  run_autograder    run per submission: `python -m autograder.integrations.gradescope` from $ROOT/source, which grades
                    the notebooks in $ROOT/submission, found (autograder.grading.intake) and graded as `attnkit
                    grade` finds and grades them, and writes
                    $ROOT/results/results.json
  pyproject.toml, setup.py, constraints.txt, README.md, autograder/ (hidden checks included), solutions/ (the
                    reference, installed as attnkit.solutions)

Gradescope unpacks the zip into /autograder/source and copies run_autograder to /autograder. The bundle
is the instructor's, private to Gradescope; the hidden checks and the reference stay in
/autograder/source, which the sandbox keeps student code from reading (the package is installed
editable so that no readable copy of them lands in site-packages).

Environment (all optional): ATTNKIT_AUTOGRADER_ROOT (default /autograder: source/, submission/, results/
beneath it), ATTNKIT_PYTHON (run_autograder's interpreter, default $ROOT/venv/bin/python), ATTNKIT_LANG,
ATTNKIT_TORCH_INDEX (setup.sh: the index torch comes from, default PyTorch's CPU wheel index).
"""

import hashlib
import json
import os
import re
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # types only: the grader's modules are imported where they are used
    from autograder.grading.intake import Located, Submission
    from autograder.grading.notebooks import NotebookResult, Options
    from autograder.outputs.documents import GradescopeResults, StudentDocument

__all__ = ["BundleError", "build_bundle", "run", "torch_pin"]

ROOT_ENV = "ATTNKIT_AUTOGRADER_ROOT"
DEFAULT_ROOT = "/autograder"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
MIN_PYTHON = (3, 11)
BUNDLED_FILES = ("pyproject.toml", "setup.py", "constraints.txt", "README.md")  # README.md: pyproject's `readme`
# The grader and the reference (autograder.isolation.protected names it), and release/: the given cells that
# grading restores, as nbgrader does (autograder.isolation.notebook_plan). Never the checkout's private folders.
BUNDLED_PACKAGES = ("autograder", "solutions", "release")
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".zip")
EXECUTABLE, REGULAR = 0o100755, 0o100644
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed: the same source gives the same zip
STUDENT_ID = "submission"


class BundleError(Exception):
    """The bundle cannot be built (no source checkout, torch not pinned...)."""


# --- attnkit gradescope build ----------------------------------------------------------------------

def build_bundle(out_zip: str | os.PathLike[str], repo: str | os.PathLike[str] | None = None,
                 lang: str | None = None) -> list[str]:
    """Write the autograder zip to `out_zip` (atomically); returns the names it holds, in order."""
    from autograder.outputs.records import atomic_target

    repo = Path(repo) if repo else Path(__file__).resolve().parents[2]
    out_zip = Path(out_zip).resolve()
    for name in BUNDLED_FILES + BUNDLED_PACKAGES:
        if not (repo / name).exists():
            raise BundleError(f"{repo / name} is missing: build the bundle from an attnkit source checkout")
    if lang not in (None, "en", "zh"):
        raise BundleError(f"--lang must be en or zh, not {lang!r}")
    _check_protected_layout(repo)
    entries = [
        ("setup.sh", _setup_script(torch_pin(repo / "constraints.txt")).encode(), EXECUTABLE),
        ("run_autograder", _run_script(lang).encode(), EXECUTABLE),
        *((name, (repo / name).read_bytes(), REGULAR) for name in BUNDLED_FILES),
        *_course_settings(),
        *((path.relative_to(repo).as_posix(), path.read_bytes(), REGULAR)
          for package in BUNDLED_PACKAGES for path in _package_files(repo / package)),
    ]
    with atomic_target(out_zip) as temporary, zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.create_system = 3  # Unix: unzip applies the mode bits below (run_autograder's x bit)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, data)
    return [name for name, _, _ in entries]


def _course_settings() -> list[tuple[str, bytes, int]]:
    """The course settings file in force (autograder.course.course_settings), at the bundle's root where the
    installed package reads it: Gradescope gives the points `attnkit grade` and the release give."""
    from autograder.course.course_settings import SETTINGS_NAME, settings_path
    from autograder.course.registry import course_points

    course_points()  # refused here, naming the problem, rather than on Gradescope
    path = settings_path()
    return [(SETTINGS_NAME, path.read_bytes(), REGULAR)] if path.is_file() else []


def _check_protected_layout(repo: Path) -> None:
    """The zip must carry the reference and the checks (grading needs them) and none of the private folders."""
    from autograder.isolation.protected import CHECKOUT_FOLDERS, check_locations, reference_locations

    bundled = [(repo / name).resolve() for name in BUNDLED_PACKAGES]
    if set(BUNDLED_PACKAGES) & set(CHECKOUT_FOLDERS):
        raise BundleError(f"the bundle's folders {BUNDLED_PACKAGES} do not match autograder.isolation.protected")
    for what, locations in (("the reference", reference_locations()), ("the checks", check_locations())):
        for location in locations:
            if (repo.resolve() in location.parents
                    and not any(location == folder or folder in location.parents for folder in bundled)):
                raise BundleError(f"{what} ({location}) lies outside the bundled folders {BUNDLED_PACKAGES}")


def _package_files(package_dir: str | os.PathLike[str]) -> list[Path]:
    """Every file of a package, minus caches, dotfiles and stray archives; sorted."""
    files: list[Path] = []
    for folder, subfolders, names in os.walk(package_dir):
        subfolders[:] = sorted(name for name in subfolders
                               if not name.startswith(".") and name != "__pycache__" and not name.endswith(".egg-info"))
        files.extend(Path(folder) / name for name in names
                     if not name.startswith(".") and not name.endswith(SKIPPED_SUFFIXES)
                     and (Path(folder) / name).is_file())
    return sorted(files)


def torch_pin(constraints: str | os.PathLike[str]) -> str:
    """The exact torch version constraints.txt pins (`torch==X`); an open range is refused."""
    for line in Path(constraints).read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        match = re.fullmatch(r"torch\s*==\s*([0-9][0-9A-Za-z.+!-]*)", requirement)
        if match:
            return match.group(1)
        if re.match(r"torch\b", requirement):
            raise BundleError(f"{constraints}: torch must be pinned exactly (torch==X.Y.Z), not {requirement!r}")
    raise BundleError(f"{constraints} does not pin torch (torch==X.Y.Z)")


def _setup_script(torch_version: str) -> str:
    minimum = ".".join(map(str, MIN_PYTHON))
    return f"""#!/usr/bin/env bash
# attnkit autograder setup: Gradescope runs this once, as root, when it builds the autograder image.
# A Python >= {minimum} venv in $ROOT/venv, torch=={torch_version} (CPU build), attnkit from the bundled source.
set -euo pipefail
ROOT="${{{ROOT_ENV}:-{DEFAULT_ROOT}}}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"
TORCH_INDEX="${{ATTNKIT_TORCH_INDEX:-{TORCH_INDEX}}}"
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1

new_enough() {{ "$1" -c 'import sys; sys.exit(sys.version_info < {MIN_PYTHON!r})' 2>/dev/null; }}
PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 && new_enough "$candidate"; then PYTHON="$candidate"; break; fi
done
if [ -z "$PYTHON" ]; then  # e.g. Ubuntu 22.04 ships 3.10: its universe has python3.11
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PYTHON=python3.11
fi
VERSION="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV"; then  # Debian/Ubuntu keep ensurepip in python3.X-venv
  apt-get update
  apt-get install -y --no-install-recommends "python$VERSION-venv"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --upgrade pip
# torch first, pinned, from the CPU wheel index (PyPI's Linux wheel would pull CUDA, gigabytes).
"$VENV/bin/python" -m pip install --index-url "$TORCH_INDEX" "torch=={torch_version}"
# attnkit and its other dependencies; editable, so the hidden checks and the reference stay in $SOURCE,
# where the sandbox keeps student code out (a site-packages copy would be readable).
"$VENV/bin/python" -m pip install -c "$SOURCE/constraints.txt" -e "$SOURCE"
"$VENV/bin/python" -c 'import torch, autograder.integrations.gradescope
print("attnkit ready: torch", torch.__version__)'
"""


def _run_script(lang: str | None = None) -> str:
    language = f'export ATTNKIT_LANG="${{ATTNKIT_LANG:-{lang}}}"\n' if lang else ""
    return f"""#!/usr/bin/env bash
# attnkit: grade one Gradescope submission (the student's .ipynb files in $ROOT/submission) into
# $ROOT/results/results.json. Gradescope runs this per submission, from /autograder.
set -eu
ROOT="${{{ROOT_ENV}:-{DEFAULT_ROOT}}}"
PYTHON="${{ATTNKIT_PYTHON:-$ROOT/venv/bin/python}}"
export {ROOT_ENV}="$ROOT" MPLBACKEND=Agg
{language}cd "$ROOT/source"  # the bundled attnkit comes first on sys.path
exec "$PYTHON" -m autograder.integrations.gradescope
"""


# --- run_autograder: grade $ROOT/submission --------------------------------------------------------

MESSAGES = {
    "total": {"en": "attnkit: {score} / {max_score} points", "zh": "attnkit：{score} / {max_score} 分"},
    "graded": {"en": "{notebook}: {score} / {max_score}", "zh": "{notebook}：{score} / {max_score}"},
    "not_graded": {"en": "{notebook}: 0 / {max_score}, not graded: {reason}",
                   "zh": "{notebook}：0 / {max_score}，未评分：{reason}"},
    "missing": {"en": "not submitted: no {notebook}.ipynb in your submission",
                "zh": "未提交：你的提交中没有 {notebook}.ipynb"},
    "no_notebooks": {
        "en": "No notebook (.ipynb) was found in your submission, so nothing could be graded. Upload the "
              "notebooks of the attention assignment ({names}) and submit again.",
        "zh": "你的提交中没有找到 notebook（.ipynb），因此无法评分。"
              "请上传 attention 作业的 notebook（{names}）后重新提交。"},
    "found_instead": {"en": "Your submission contains: {files}", "zh": "你的提交包含：{files}"},
    "not_used": {"en": "Not graded (not a notebook of this assignment, or a second copy): {files}",
                 "zh": "未评分（不是本作业的 notebook，或是重复的副本）：{files}"},
    "note": {"en": "  · {note}", "zh": "  · {note}"},
}


def run(root: str | os.PathLike[str] | None = None, options: "Options | None" = None) -> "GradescopeResults":
    """Grade the submission in `root` (default $ATTNKIT_AUTOGRADER_ROOT or /autograder); write and return results."""
    from autograder.grading.intake import open_submission

    root = Path(root or os.environ.get(ROOT_ENV) or DEFAULT_ROOT)
    (root / "results" / "results.json").unlink(missing_ok=True)  # never leave an earlier run's results behind
    # The same resolver as `attnkit grade`: the same folder gets the same notebooks graded, links never followed.
    with tempfile.TemporaryDirectory(prefix="attnkit-zips-") as scratch, \
            open_submission(root / "submission", scratch_parent=scratch) as submission:
        return _run(root, submission, Path(scratch), options)


def _run(root: Path, submission: "Submission", scratch: Path, options: "Options | None") -> "GradescopeResults":
    import autograder
    from autograder.course.assignment import ASSIGNMENT
    from autograder.course.exercises import NOTEBOOKS
    from autograder.grading.notebooks import MISSING, NotebookInput, Options, grade_notebooks, unanswered_result
    from autograder.i18n import language
    from autograder.isolation.limits import Limits
    from autograder.isolation.notebook_plan import NotebookProblem, submitted_sha256
    from autograder.outputs import records

    started = time.monotonic()
    results_path = root / "results" / "results.json"
    options = options or Options(Limits())
    options = Options(options.limits, options.seed, options.lang,
                      (*options.blocked, submission.folder, results_path.parent, scratch))
    lang = options.lang or language()

    found = {name: located for name, located in submission.located.items() if located.path is not None}
    inputs = [NotebookInput(name, cast(Path, located.path), name, located.notes) for name, located in found.items()]
    grading = grade_notebooks(inputs, options) if inputs else None
    by_name = {result.key: result for result in grading.results} if grading else {}
    results: list[NotebookResult] = []
    for name in NOTEBOOKS:
        located = submission.located[name]
        # Nothing there at all: the plain message; links, zips or several copies: the resolver's reason.
        reason = located.reason if located.candidates or submission.notes else \
            _say("missing", lang, notebook=name)
        results.append(by_name.get(name) or unanswered_result(name, name, submission.folder / f"{name}.ipynb",
                                                              MISSING, reason, lang))
    digest = hashlib.sha256()
    for name, located in sorted(found.items()):
        # the hash grading took of what it read; a notebook it could not plan has none, so read that one here
        sha256 = by_name[name].sha256
        if not sha256:
            try:
                sha256 = submitted_sha256(cast(Path, located.path))  # `found`: located notebooks only
            except NotebookProblem as problem:
                sha256 = str(problem)
        digest.update(f"{name}={sha256}|".encode())
    document = records.student_document(STUDENT_ID, ASSIGNMENT, digest.hexdigest(), options.seed, results)
    gradescope = records.gradescope_results(document, lang)
    gradescope["output"] = _summary(document, found, submission, lang)
    seconds = time.monotonic() - started
    gradescope["execution_time"] = round(seconds)  # whole seconds, as Gradescope documents it
    records.write_atomically(results_path, json.dumps(gradescope, indent=2, ensure_ascii=False) + "\n")

    print(f"attnkit {Path(autograder.__file__).resolve().parent}: graded {len(found)} notebook(s) in "
          f"{seconds:.1f} s -> {results_path}")
    print(gradescope["output"])
    for note in grading.isolation_notes if grading else ():
        print(f"attnkit: isolation: {note}")
    return gradescope


def _summary(document: "StudentDocument", found: Mapping[str, "Located"], submission: "Submission",
             lang: str) -> str:
    from autograder.outputs.records import format_number as number

    lines = [_say("total", lang, score=number(document["score"]), max_score=number(document["max_score"]))]
    if not found:
        from autograder.course.exercises import NOTEBOOKS

        lines.append(_say("no_notebooks", lang, names=", ".join(f"{name}.ipynb" for name in NOTEBOOKS)))
    for notebook in document["notebooks"]:
        values = {"notebook": notebook["notebook"], "score": number(notebook["score"]),
                  "max_score": number(notebook["max_score"])}
        if notebook["status"] == "graded":
            lines.append(_say("graded", lang, **values))
        else:
            lines.append(_say("not_graded", lang, reason=notebook["reason"], **values))
        lines.extend(_say("note", lang, note=note) for note in notebook["notes"])
    if submission.unused:
        lines.append(_say("not_used", lang, files=", ".join(submission.unused)))
    others = [shown for shown in submission.files if shown not in submission.unused]
    if not found and others:
        shown = others[:10]
        lines.append(_say("found_instead", lang, files=", ".join(shown) + (", ..." if len(others) > 10 else "")))
    return "\n".join(lines)


def _say(key: str, lang: str, **fields: object) -> str:
    from autograder.i18n import render

    return render(MESSAGES, key, lang, fields)


def main() -> int:
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
