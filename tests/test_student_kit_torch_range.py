"""The kit's torch range holds: installed beside another torch release than the build's, by docs/student-kit.md's
notebook line, it keeps that torch and agrees with the full kit; outside the range it refuses to import.

One venv per module under pytest's temporary folder (removed with it): `python -m venv`, then torch 2.14.1 (the
build's is 2.13.0, constraints.txt) and numpy, and IPython at this venv's version to run the notebook line
`%pip install attnkit_student_kit-*.whl`. uv installs them from its cache by hard links (student_kit_env.install):
seconds, where pip unpacked 5.5 GB (a CUDA build) for 2.5 minutes each run; the first run on a machine fills the
cache from the disk's wheels.
"""

import dataclasses
import importlib.metadata
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from student_kit_driver.agree_in_kit import LANGS, Namespaces, outcomes
from student_kit_env import clean_environment, documented_install, install, installed_version

from autograder.checking.check_types import PASSED
from autograder.course.exercises import EXERCISES, EXERCISES_BY_ID
from autograder.integrations.student_kit.build import wheel_name
from autograder.integrations.student_kit.runtime.tensors import decode, encode
from autograder.integrations.student_kit.runtime.torch_range import SUPPORTED, unsupported_message
from autograder.running.runner import run_exercise
from devtools.student_kit_agreement import MUTANT_MODULES, MUTANT_PREFIXES, mutants
from devtools.variant_grid import forward_families, grid, padding_families, self_attention_families, wrapper_families

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "student_kit_driver" / "agree_in_kit.py"
OTHER_TORCH = "2.14.1"  # on this machine's disk for Python 3.11, besides the build's 2.13.0


def test_the_other_release_is_another_release_in_the_range():
    assert torch.__version__.split("+")[0] != OTHER_TORCH  # the project's torch built the vectors
    assert SUPPORTED.admits(torch.__version__) and SUPPORTED.admits(OTHER_TORCH)


@pytest.fixture(scope="module")
def other_torch_kit(tmp_path_factory):
    """(venv python, wheel folder, what the notebook line printed)."""
    root = tmp_path_factory.mktemp("student-kit-other-torch")
    dist = root / "dist"
    # What `make kit-wheel` runs, into the temporary folder instead of the checkout's dist/.
    subprocess.run([sys.executable, "-m", "autograder.integrations.student_kit.build", str(dist)], check=True,
                   cwd=REPO, stdout=subprocess.DEVNULL)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Pinned: torch==2.14.1 lies on this disk; an unpinned torch would be a download of several GB.
    ipython = f"ipython=={importlib.metadata.version('ipython')}"
    install(python, [f"torch=={OTHER_TORCH}", "numpy", ipython], root)
    line = documented_install("ipython")
    completed = subprocess.run([str(venv / "bin" / "ipython"), "--quick", "-c", line], capture_output=True,
                               text=True, env=clean_environment(), cwd=dist)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    yield python, dist, completed.stdout + completed.stderr
    shutil.rmtree(venv, ignore_errors=True)  # 5.5 GB: not left for pytest's retention of temporary folders


def test_notebook_line_installs_the_kit_and_keeps_the_learners_torch(other_torch_kit):
    python, dist, printed = other_torch_kit
    assert (dist / wheel_name()).is_file()
    assert installed_version(python, "attnkit-student-kit") == importlib.metadata.version("attnkit"), printed
    assert installed_version(python, "torch").split("+")[0] == OTHER_TORCH, printed
    installing = [line for line in printed.splitlines() if line.startswith("Installing collected packages")]
    assert installing and "torch" not in installing[0], printed


def variant_records():
    """devtools/variant_grid.py's grid() as records: (exercise, maker, knobs) for each of its variants."""
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


def students(namespaces):
    """The agreement's students (devtools/student_kit_agreement.py), as records agree_in_kit.py reads: the solved
    notebooks, the notebooks as handed out (stubs), every mutant of tests/mutants/ and every variant of the grid."""
    files = {name: f"tests/mutants/{name.rsplit('.', 1)[1]}.py" for name in MUTANT_MODULES}
    all_mutants = [(name, value, files[value.__module__]) for name, value in mutants()]
    found = []
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


def kit_outcomes(python, records, folder, vectors=None):
    """agree_in_kit.py's outcomes in the kit's venv (with its installed vectors, or those of the file `vectors`)."""
    (folder / "students.json").write_text(json.dumps(records))
    extra = [str(vectors)] if vectors else []
    completed = subprocess.run([str(python), str(DRIVER), str(REPO), str(folder / "students.json"),
                                str(folder / "kit.json"), *extra], capture_output=True, text=True,
                               env=clean_environment(), cwd=folder, timeout=1200)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    kit = json.loads((folder / "kit.json").read_text(encoding="utf-8"))
    assert kit.pop("__torch__").split("+")[0] == OTHER_TORCH
    return kit


def disagreements(full_kit, kit):
    """(student, language, check, full kit's outcome, kit's) wherever they differ, a check only one side ran
    included."""
    found = []
    for label, by_lang in full_kit.items():
        for lang, checks in by_lang.items():
            theirs = kit[label][lang]
            found += [(label, lang, check, verdict, theirs.get(check)) for check, verdict in checks.items()
                      if theirs.get(check) != verdict]
            found += [(label, lang, check, None, theirs[check]) for check in set(theirs) - set(checks)]
    return found


def full_kit_outcomes(records, namespaces):
    return outcomes(records, namespaces, lambda exercise, namespace, lang:
                    run_exercise(exercise, namespace, include_hidden=False, lang=lang), PASSED)


def test_kit_under_another_torch_agrees_with_the_full_kit(other_torch_kit, tmp_path):
    python, _, _ = other_torch_kit
    namespaces = Namespaces(REPO)
    records = students(namespaces)
    kinds = {record["label"].split("/")[0] for record in records}
    assert len(records) > 300 and kinds == {"solved", "release", "mutant", "variant"}
    full_kit = full_kit_outcomes(records, namespaces)
    kit = kit_outcomes(python, records, tmp_path)
    compared = sum(len(checks) for by_lang in full_kit.values() for checks in by_lang.values())
    assert compared > 1000 and set(LANGS) == {"en", "zh"}
    found = disagreements(full_kit, kit)
    assert not found, f"{len(found)} of {compared}: {found[:5]}"
    # Both verdicts occur: the comparison is not all passes or all failures.
    verdicts = {verdict[0] for by_lang in full_kit.values() for checks in by_lang.values()
                for verdict in checks.values()}
    assert verdicts == {True, False}


def moved(value):
    """Stored expectations with every float tensor's values moved by 0.01."""
    if isinstance(value, dict) and value.get("__tensor__") in ("float32", "float64"):
        return encode(decode(value) + 0.01)
    if isinstance(value, dict):
        return {key: moved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [moved(item) for item in value]
    return value


def test_the_comparison_sees_a_kit_whose_expectations_moved(other_torch_kit, tmp_path):
    # The control: the same comparison, with one exercise's stored expectations moved, finds its solved student.
    python, dist, _ = other_torch_kit
    data = "autograder/integrations/student_kit/data/"
    with zipfile.ZipFile(dist / wheel_name()) as wheel:
        wheel.extractall(tmp_path, [name for name in wheel.namelist() if name.startswith(data)])
    exercise = "softmax_naive"
    index = tmp_path / data / "vectors.json"
    path = index.parent / json.loads(index.read_text(encoding="utf-8"))["checks"][exercise]
    checks = json.loads(path.read_text(encoding="utf-8"))
    for check in checks:
        check["expected"] = moved(check["expected"])
    path.write_text(json.dumps(checks), encoding="utf-8")
    namespaces = Namespaces(REPO)
    records = [record for record in students(namespaces) if record["label"].startswith("solved/")]
    found = disagreements(full_kit_outcomes(records, namespaces),
                          kit_outcomes(python, records, tmp_path, index))
    assert found and {label for label, *_ in found} == {f"solved/{exercise}"}, found[:5]


def test_a_torch_outside_the_range_stops_the_import_with_both_versions(other_torch_kit, tmp_path):
    # A stand-in torch package earlier on the path: the kit's import reads its version before anything else.
    python, _, _ = other_torch_kit
    for outside in ("2.12.1", "2.15.0+cu130"):
        fake = tmp_path / outside / "torch"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text(f"__version__ = {outside!r}\n")
        completed = subprocess.run([str(python), "-c", "from autograder import check"], capture_output=True,
                                   text=True, env={**clean_environment(), "PYTHONPATH": str(fake.parent)},
                                   cwd=tmp_path)
        assert completed.returncode != 0
        last = completed.stderr.strip().splitlines()
        assert "UnsupportedTorch" in completed.stderr, completed.stderr
        assert unsupported_message(outside).splitlines()[-1] in last[-1], completed.stderr
        assert SUPPORTED.requirement() in completed.stderr and f"torch {outside}" in completed.stderr


@pytest.mark.parametrize(("version", "admitted"), [("2.13.0", True), ("2.14.1+cu128", True), ("2.14.0", True),
                                                   ("2.12.1", False), ("2.15.0", False), ("3.0.0", False),
                                                   ("2.15.0.dev20260101", False), ("unknown", False)])
def test_range_admits_its_releases_whatever_the_local_suffix(version, admitted):
    assert SUPPORTED.admits(version) is admitted


def test_refusal_names_the_range_and_the_installed_version_in_both_languages():
    message = unsupported_message("2.16.0+cu130")
    english, chinese = message.splitlines()
    for text in (english, chinese):
        assert SUPPORTED.requirement() in text and "2.16.0+cu130" in text
    assert "验证" in chinese and "verified" in english


def test_kit_declares_the_range_and_the_wheel_name(tmp_path):
    from autograder.integrations.student_kit.build import kit_files, kit_readme

    pyproject = kit_files()["pyproject.toml"].decode()
    assert f'dependencies = ["{SUPPORTED.requirement()}", "numpy"]' in pyproject
    assert "torch==" not in pyproject
    for language in ("ipython", "console"):  # the kit's README shows docs/student-kit.md's install lines
        assert documented_install(language).strip() in kit_readme()


def test_the_documented_wheel_command_is_the_one_the_fixture_runs():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nkit-wheel:", 1)[1].split("\n\n", 1)[0]
    assert "-m autograder.integrations.student_kit.build dist" in recipe
    assert "make kit-wheel" in (REPO / "docs" / "student-kit.md").read_text(encoding="utf-8")
