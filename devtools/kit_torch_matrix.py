"""The student kit under each torch minor release: `python -m devtools.kit_torch_matrix [VERSION ...] [--docs]`.

For each torch release (default: MINOR_RELEASES, the newest patch of every minor from the oldest the release
notebooks' APIs allow to the newest), a venv under .kit-venvs/torch-VERSION (gitignored; kept and reused) gets that
torch and numpy from the package registries (uv, linked from a cache that is removed after each install: the venv
keeps its own files), then a kit built with CANDIDATES as its range (so that it loads under every candidate). The
agreement test's students (the solved notebooks, the notebooks as handed out, every mutant of tests/mutants/ and every
variant of the variant grid) run through the kit in that venv and through the full kit here, under the project's torch;
the verdicts are compared check by check. Each release's counts are kept in .kit-venvs/matrix.json; --docs writes them
as docs/student-kit.md's table. --drop removes each venv once measured, except the ones named by --keep.

The wheel's range (autograder/integrations/student_kit/runtime/torch_range.py SUPPORTED) is then set to the releases
that agreed. tests/test_student_kit_torch_range.py runs the same comparison on the oldest and the newest of them.
"""

import argparse
import dataclasses
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.integrations.student_kit.build import build_wheel
from autograder.integrations.student_kit.runtime.torch_range import TorchRange
from autograder.running.runner import run_exercise
from devtools.student_kit_agreement import MUTANT_MODULES, MUTANT_PREFIXES, mutants
from devtools.variant_grid import forward_families, grid, padding_families, self_attention_families, wrapper_families
from tests.student_kit_driver.agree_in_kit import Namespaces, outcomes

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "student_kit_driver" / "agree_in_kit.py"
VENVS = REPO / ".kit-venvs"  # gitignored: one venv a torch release, reused by the next run and by make test
RESULTS = VENVS / "matrix.json"
DOC = REPO / "docs" / "student-kit.md"
TABLE_START, TABLE_END = "<!-- kit-torch-matrix: start -->", "<!-- kit-torch-matrix: end -->"
# The newest patch of each minor release with a CPython 3.11 wheel, oldest first. 2.0 is the oldest the release
# notebooks' APIs allow: notebook 04 calls F.scaled_dot_product_attention(..., is_causal=True), new in 2.0 (the rest
# they call, nn.MultiheadAttention(batch_first=True), torch.inf, is older).
MINOR_RELEASES = ("2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0",
                  "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")
CANDIDATES = TorchRange(lowest=(2, 0), below=(2, 16))  # the range of the kit the matrix measures
# Releases before this one were compiled against NumPy 1: under NumPy 2 their `import torch` warns "A module that was
# compiled using NumPy 1.x cannot be run in NumPy 2" and every array conversion fails. Their venvs get numpy<2, as a
# learner's environment that holds such a torch does.
NUMPY_2_FROM = (2, 3)
MARKER = ".attnkit-torch"  # in a venv whose torch installed completely: the release it holds
# Why a measured minor disagrees (docs/student-kit.md explains): its row says so. Each is below the range.
_NAN_SDPA = "its scaled_dot_product_attention gives NaN where every key is masked (2.5 on: zeros)"
_HALF_BMM = ("and it has no float16 bmm on the CPU, which the kit's merge_heads probe uses to make its input "
             "(not mended: the range ends above it anyway)")
_ERROR_TEXTS = ("some of its error texts (mixed dtypes, a float in a size) differ from 2.13's, so those messages and "
                "reproduced mistakes differ (not normalised: below the range)")
DISAGREEMENT_CAUSES = {"2.0": f"{_NAN_SDPA}, {_ERROR_TEXTS}, {_HALF_BMM}", "2.1": f"{_NAN_SDPA}, {_HALF_BMM}",
                       "2.2": _NAN_SDPA, "2.3": _NAN_SDPA, "2.4": _NAN_SDPA}


@dataclasses.dataclass(frozen=True)
class Verdicts:
    """One release's comparison: how many check outcomes were compared, how many agree, the first disagreements."""

    torch: str  # the kit venv's torch.__version__
    compared: int
    agreeing: int
    first_disagreements: list[Any]
    date: str

    @property
    def agrees(self) -> bool:
        return self.compared > 0 and self.agreeing == self.compared


def pip_sources() -> list[str]:
    """pip's configured index, extra indexes and find-links (`pip config list`, files and PIP_* variables alike) as
    the same options of uv (which reads no pip.conf)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], check=True, capture_output=True,
                            text=True, env=clean_environment()).stdout
    options = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}
    pairs = []
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        option = options.get(key.rsplit(".", 1)[-1])
        if option:
            pairs += [(option, location) for location in value.strip("'\"").split()]
    return [part for pair in dict.fromkeys(pairs) for part in pair]  # each once, in pip's order


def clean_environment() -> dict[str, str]:
    """os.environ without what could point an interpreter at the project (PYTHONPATH, an active venv)."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def uv_install(python: Path, requirements: Sequence[str], cwd: Path, cache: Path | None = None) -> None:
    """Install `requirements` into the venv of `python` with uv (the dev extra's), hard-linked from its cache
    (`cache`, else uv's own); bytecode compiled as pip does."""
    uv = Path(sys.executable).parent / "uv"
    command = [str(uv), "pip", "install", "--quiet", "--python", str(python), "--link-mode", "hardlink",
               "--compile-bytecode", "--index-strategy", "unsafe-best-match", *pip_sources(), *requirements]
    environment = clean_environment() | ({"UV_CACHE_DIR": str(cache)} if cache else {})
    completed = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=cwd)
    if completed.returncode != 0:
        raise TorchUnavailable(f"uv could not install {' '.join(requirements)}:\n{completed.stderr[-3000:]}")


class TorchUnavailable(RuntimeError):
    """A venv's packages could not be installed (no registry reachable, or the release is not offered)."""


def numpy_requirement(version: str) -> str:
    """The numpy a venv of torch==version gets: numpy<2 for a torch compiled against NumPy 1 (NUMPY_2_FROM)."""
    release = tuple(int(part) for part in version.split("+")[0].split(".")[:2])
    return "numpy" if release >= NUMPY_2_FROM else "numpy<2"


def torch_venv(version: str, venv: Path | None = None) -> Path:
    """The python of a venv holding torch==version and numpy_requirement(version): VENVS/torch-VERSION unless `venv`,
    made once and reused while its MARKER names that release. uv's cache for the install is a temporary folder beside
    it, removed after: the venv keeps its files (hard links), the cache does not keep a second copy."""
    venv = venv or VENVS / f"torch-{version}"
    python = venv / "bin" / "python"
    marker = venv / MARKER
    if marker.is_file() and marker.read_text(encoding="utf-8").strip() == version and python.is_file():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    cache = Path(tempfile.mkdtemp(prefix=".uv-cache-", dir=venv.parent))
    try:
        uv_install(python, [f"torch=={version}", numpy_requirement(version)], venv.parent, cache)
    except TorchUnavailable:
        shutil.rmtree(venv, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    marker.write_text(version + "\n", encoding="utf-8")
    return python


def kit_venv(version: str, venv: Path, wheel: Path) -> Path:
    """torch_venv(version, venv) with `wheel` installed (its dependencies are the venv's already)."""
    python = torch_venv(version, venv)
    uv_install(python, ["--no-deps", "--reinstall", str(wheel)], venv.parent)
    return python


def variant_records() -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """devtools/variant_grid.py's grid() as records: (exercise, label, maker, knobs class, knobs) for each variant."""
    makers = [("self_attention_v1", "self_attention_v1", self_attention_families(False)),
              ("self_attention_v2", "self_attention_v2", self_attention_families(True)),
              ("causal_attention", "causal_attention", forward_families(multi_head=False)),
              ("multi_head_attention", "multi_head_attention", forward_families(multi_head=True)),
              ("padding_mask", "multi_head_attention", padding_families()),
              ("mha_wrapper", "wrapper", wrapper_families())]
    found = []
    for exercise, maker, families in makers:
        for family, name, knobs, _ in families:
            if exercise == "self_attention_v1" and knobs.bias != "qkv_bias":
                continue  # as grid(): v1 has no bias knob
            found.append((exercise, f"variant/{exercise}/{family}/{name}", maker, type(knobs).__name__,
                          dataclasses.asdict(knobs)))
    assert len(found) == len(grid())
    return found


def students(namespaces: Namespaces) -> list[dict[str, Any]]:
    """The agreement's students (devtools/student_kit_agreement.py), as records agree_in_kit.py reads: the solved
    notebooks, the notebooks as handed out (stubs), every mutant of tests/mutants/ and every variant of the grid."""
    files = {name: f"tests/mutants/{name.rsplit('.', 1)[1]}.py" for name in MUTANT_MODULES}
    all_mutants = [(name, value, files[value.__module__]) for name, value in mutants()]
    found: list[dict[str, Any]] = []
    for exercise in EXERCISES:
        common = {"exercise": exercise.id, "notebook": exercise.notebook, "names": list(exercise.names)}
        found.append({**common, "label": f"solved/{exercise.id}", "solved": True})
        handed_out = namespaces.notebook(exercise.notebook, solved=False)
        if all(name in handed_out for name in exercise.names):
            found.append({**common, "label": f"release/{exercise.id}", "solved": False})
        for name in exercise.names:
            prefix = MUTANT_PREFIXES.get(name, name)
            found += [{**common, "label": f"mutant/{mutant_name}", "solved": True, "name": name,
                       "mutant": mutant_name, "mutant_file": path}
                      for mutant_name, _, path in all_mutants if mutant_name.startswith(prefix)]
    heads_from = next(exercise.notebook for exercise in EXERCISES if "CausalAttention" in exercise.names)
    for exercise_id, label, maker, knobs_class, knobs in variant_records():
        exercise = EXERCISES_BY_ID[exercise_id]
        found.append({"exercise": exercise_id, "notebook": exercise.notebook, "names": list(exercise.names),
                      "label": label, "solved": True, "name": exercise.names[0], "maker": maker,
                      "knobs_class": knobs_class, "knobs": knobs, "heads_from": heads_from})
    return found


Outcomes = dict[str, Any]  # {label: {lang: {check id: [passed, misconception, message]}}}


def full_kit_outcomes(records: list[dict[str, Any]], namespaces: Namespaces) -> Outcomes:
    run: Callable[[str, Any, str], Any] = lambda exercise, namespace, lang: run_exercise(  # noqa: E731
        exercise, namespace, include_hidden=False, lang=lang)
    return outcomes(records, namespaces, run, PASSED)


def kit_outcomes(python: Path, records: list[dict[str, Any]], folder: Path,
                 vectors: Path | None = None) -> tuple[str, Outcomes]:
    """(the venv's torch.__version__, agree_in_kit.py's outcomes in the kit's venv, with its installed vectors or
    those of the file `vectors`)."""
    (folder / "students.json").write_text(json.dumps(records))
    extra = [str(vectors)] if vectors else []
    completed = subprocess.run([str(python), str(DRIVER), str(REPO), str(folder / "students.json"),
                                str(folder / "kit.json"), *extra], capture_output=True, text=True,
                               env=clean_environment(), cwd=folder, timeout=1800)
    if completed.returncode != 0:
        raise RuntimeError(f"the kit's side failed under {python}:\n{(completed.stdout + completed.stderr)[-4000:]}")
    kit = json.loads((folder / "kit.json").read_text(encoding="utf-8"))
    return kit.pop("__torch__"), kit


def disagreements(full_kit: Outcomes, kit: Outcomes) -> list[tuple[Any, ...]]:
    """(student, language, check, full kit's outcome, kit's) wherever they differ, a check only one side ran
    included."""
    found: list[tuple[Any, ...]] = []
    for label, by_lang in full_kit.items():
        for lang, checks in by_lang.items():
            theirs = kit.get(label, {}).get(lang, {})
            found += [(label, lang, check, verdict, theirs.get(check)) for check, verdict in checks.items()
                      if theirs.get(check) != verdict]
            found += [(label, lang, check, None, theirs[check]) for check in set(theirs) - set(checks)]
    return found


def compared_count(full_kit: Outcomes) -> int:
    return sum(len(checks) for by_lang in full_kit.values() for checks in by_lang.values())


def measure(python: Path, records: list[dict[str, Any]], full_kit: Outcomes, folder: Path) -> Verdicts:
    version, kit = kit_outcomes(python, records, folder)
    found = disagreements(full_kit, kit)
    compared = compared_count(full_kit)
    return Verdicts(torch=version, compared=compared, agreeing=compared - len(found), first_disagreements=found[:20],
                    date=datetime.date.today().isoformat())


def read_results() -> dict[str, dict[str, Any]]:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.is_file() else {}


def docs_table(results: dict[str, dict[str, Any]]) -> str:
    """The markdown table of every measured release, oldest first."""
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    lines = ["| Python | torch | build | verdicts agreeing with the full kit | measured |",
             "| --- | --- | --- | --- | --- |"]
    for version in sorted(results, key=key):
        result = results[version]
        local = result["torch"].partition("+")[2] or "-"
        verdict = (f"{result['agreeing']:,} of {result['compared']:,}" if result.get("compared")
                   else f"not measured: {result.get('error', '?')}")
        cause = DISAGREEMENT_CAUSES.get(".".join(version.split(".")[:2]))
        if cause and result.get("agreeing") != result.get("compared"):
            verdict += f": {cause}"
        lines.append(f"| {result.get('python', '3.11')} | {version} | {local} | {verdict} | {result['date']} |")
    return "\n".join(lines)


def write_docs_table(results: dict[str, dict[str, Any]]) -> None:
    text = DOC.read_text(encoding="utf-8")
    before, start, rest = text.partition(TABLE_START)
    _, end, after = rest.partition(TABLE_END)
    if not start or not end:
        raise SystemExit(f"{DOC}: no {TABLE_START} ... {TABLE_END} block to write the table into")
    DOC.write_text(f"{before}{TABLE_START}\n{docs_table(results)}\n{TABLE_END}{after}", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=list(MINOR_RELEASES), help="torch releases (default: all)")
    parser.add_argument("--docs", action="store_true", help="write .kit-venvs/matrix.json's table into the docs")
    parser.add_argument("--drop", action="store_true", help="remove each venv once measured (except --keep's)")
    parser.add_argument("--keep", nargs="*", default=[], help="venvs --drop keeps (the test's oldest and newest)")
    args = parser.parse_args(argv)
    VENVS.mkdir(exist_ok=True)
    results = read_results()
    with tempfile.TemporaryDirectory(prefix="matrix-", dir=VENVS) as scratch:
        folder = Path(scratch)
        wheel = build_wheel(folder / "dist", supported=CANDIDATES) if args.versions else None
        namespaces = Namespaces(REPO)
        records = students(namespaces) if args.versions else []
        full_kit = full_kit_outcomes(records, namespaces) if args.versions else {}
        for version in args.versions:
            assert wheel is not None
            python_version = platform.python_version()
            try:
                python = kit_venv(version, VENVS / f"torch-{version}", wheel)
                verdicts = measure(python, records, full_kit, folder)
                results[version] = {**dataclasses.asdict(verdicts), "python": python_version}
            except (TorchUnavailable, RuntimeError) as exc:
                results[version] = {"torch": version, "error": str(exc).splitlines()[-1][:200],
                                    "date": datetime.date.today().isoformat(), "python": python_version}
            results = {**read_results(), version: results[version]}  # another run may have written meanwhile
            RESULTS.write_text(json.dumps(results, indent=1), encoding="utf-8")
            print(version, json.dumps(results[version])[:400], flush=True)
            if args.drop and version not in args.keep:
                shutil.rmtree(VENVS / f"torch-{version}", ignore_errors=True)
    if args.docs:
        write_docs_table(results)
    print(docs_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
