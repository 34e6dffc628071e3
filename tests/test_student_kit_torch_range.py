"""The kit's torch range holds: installed beside the oldest and the newest release of its range, by
docs/student-kit.md's notebook line, it keeps that torch and agrees with the full kit; outside the range it refuses to
import; the range is the one devtools/kit_torch_matrix.py verified, release by release (docs/student-kit.md's table).

Each release's venv is devtools.kit_torch_matrix's, under .kit-venvs/torch-VERSION (gitignored): made once from the
package registries (torch and numpy, then IPython at this venv's version to run the notebook line
`%pip install attnkit_student_kit-*.whl`) and reused by later runs. A release no registry offers here skips its tests,
saying so; one that is offered but does not install fails.
"""

import importlib.metadata
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from student_kit_driver.agree_in_kit import LANGS, Namespaces
from student_kit_env import clean_environment, documented_install, installed_version

from autograder.integrations.student_kit.build import wheel_name
from autograder.integrations.student_kit.runtime.tensors import decode, encode
from autograder.integrations.student_kit.runtime.torch_range import SUPPORTED, unsupported_message
from devtools.kit_torch_matrix import (
    DISAGREEMENT_CAUSES,
    DOC,
    MINOR_RELEASES,
    TorchUnavailable,
    compared_count,
    disagreements,
    docs_table,
    full_kit_outcomes,
    kit_outcomes,
    students,
    torch_venv,
    uv_install,
)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
VERIFIED = [version for version in MINOR_RELEASES if SUPPORTED.admits(version)]
OLDEST, NEWEST = VERIFIED[0], VERIFIED[-1]
ABOVE = f"{SUPPORTED.below[0]}.{SUPPORTED.below[1]}"
# The minor release before the range's lowest: 1.13 was the last of torch 1.
UNDER = "1.13" if SUPPORTED.lowest == (2, 0) else f"{SUPPORTED.lowest[0]}.{SUPPORTED.lowest[1] - 1}"


def test_the_range_is_the_verified_one():
    # Every minor release the wheel admits has a row in the docs' table (devtools/kit_torch_matrix.py --docs) where
    # all its verdicts agree, and MINOR_RELEASES names one release of each minor of the range.
    table_row = r"^\| 3\.11[\d.]* \| (\d+\.\d+\.\d+) \| [^|]+ \| ([^|]+) \|"
    rows = dict(re.findall(table_row, DOC.read_text(encoding="utf-8"), flags=re.MULTILINE))
    for version in VERIFIED:
        counts = re.fullmatch(r"\s*([\d,]+) of ([\d,]+)\s*", rows.get(version, ""))
        assert counts and counts.group(1) == counts.group(2) and int(counts.group(2).replace(",", "")) > 1000, \
            (version, rows.get(version))
    assert {f"{major}.{minor}" for major, minor, *_ in (v.split(".") for v in VERIFIED)} == {
        f"{major}.{minor}" for major in (2,) for minor in range(SUPPORTED.lowest[1], SUPPORTED.below[1])}
    assert torch.__version__.split("+")[0] in VERIFIED  # the project's torch builds the vectors


def test_the_table_says_why_a_release_below_the_range_disagrees():
    # A release whose verdicts differ (its own torch computes the student's code differently) has the reason in its
    # row, and stays outside the range; an agreeing row has only its counts.
    assert DISAGREEMENT_CAUSES and not any(SUPPORTED.admits(f"{minor}.0") for minor in DISAGREEMENT_CAUSES)
    minors = tuple(f"{minor}." for minor in DISAGREEMENT_CAUSES)
    below = next(version for version in MINOR_RELEASES if version.startswith(minors))
    measured = {"torch": "x", "compared": 10, "date": "2026-11-28"}
    table = docs_table({below: {**measured, "agreeing": 8}, OLDEST: {**measured, "agreeing": 10}})
    rows = {line.split(" | ")[1]: line for line in table.splitlines()[2:]}
    assert "8 of 10: " in rows[below] and DISAGREEMENT_CAUSES[below.rsplit(".", 1)[0]] in rows[below]
    assert "| 10 of 10 |" in rows[OLDEST]


def learner_pip_environment():
    """The environment a learner's pip runs in: this machine's pip config caps torch at the releases on its disk
    (a global constraint file), which a learner's pip does not; an empty PIP_CONSTRAINT lifts it."""
    return {**clean_environment(), "PIP_CONSTRAINT": " "}


def registry_offers(version):
    """Whether a package registry reachable from here offers torch==version (pip's own index listing)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch"], capture_output=True,
                            text=True, env=learner_pip_environment(), timeout=300)
    return version in re.split(r"[,\s]+", listed.stdout)


def release_venv(version):
    """devtools.kit_torch_matrix's cached venv of this release, with IPython; skipped only when no registry
    offers the release."""
    try:
        python = torch_venv(version)
    except TorchUnavailable as exc:
        if registry_offers(version):
            pytest.fail(f"torch {version} is offered but did not install: {exc}")
        pytest.skip(f"no package registry reachable from here offers torch {version} (the kit's tests under it need "
                    f"one the first time; later runs reuse .kit-venvs/torch-{version})")
    if not (python.parent / "ipython").is_file():
        uv_install(python, [f"ipython=={importlib.metadata.version('ipython')}"], python.parents[2])
    return python


@pytest.fixture(scope="module", params=[OLDEST, NEWEST])
def release_kit(request, tmp_path_factory):
    """(torch release, venv python, wheel folder, what the notebook line printed): the kit installed by the notebook
    line beside that release."""
    version = request.param
    python = release_venv(version)
    dist = tmp_path_factory.mktemp(f"student-kit-{version}") / "dist"
    # What `make kit-wheel` runs, into the temporary folder instead of the checkout's dist/.
    subprocess.run([sys.executable, "-m", "autograder.integrations.student_kit.build", str(dist)], check=True,
                   cwd=REPO, stdout=subprocess.DEVNULL)
    # The cached venv may hold an earlier run's kit of the same version, which pip would keep.
    subprocess.run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", "attnkit-student-kit"],
                   capture_output=True, env=learner_pip_environment())
    line = documented_install("ipython")
    completed = subprocess.run([str(python.parent / "ipython"), "--quick", "-c", line], capture_output=True,
                               text=True, env=learner_pip_environment(), cwd=dist)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return version, python, dist, completed.stdout + completed.stderr


def test_notebook_line_installs_the_kit_and_keeps_the_learners_torch(release_kit):
    version, python, dist, printed = release_kit
    assert (dist / wheel_name()).is_file()
    assert installed_version(python, "attnkit-student-kit") == importlib.metadata.version("attnkit"), printed
    assert installed_version(python, "torch").split("+")[0] == version, printed
    installing = [line for line in printed.splitlines() if line.startswith("Installing collected packages")]
    assert installing and "torch" not in installing[0], printed


def test_the_releases_torch_converts_numpy_arrays(release_kit):
    # A torch compiled against NumPy 1 (before 2.3) warns at import under NumPy 2 and converts no array: the venv
    # of such a release holds numpy<2 (devtools.kit_torch_matrix.numpy_requirement), as a learner's environment does.
    _, python, _, _ = release_kit
    completed = subprocess.run([str(python), "-W", "error", "-c",
                                "import numpy, torch; assert torch.from_numpy(numpy.ones(2)).sum().item() == 2"],
                               capture_output=True, text=True, env=clean_environment())
    assert completed.returncode == 0, completed.stderr[-2000:]


def test_kit_under_the_release_agrees_with_the_full_kit(release_kit, tmp_path):
    version, python, _, _ = release_kit
    namespaces = Namespaces(REPO)
    records = students(namespaces)
    kinds = {record["label"].split("/")[0] for record in records}
    assert len(records) > 300 and kinds == {"solved", "release", "mutant", "variant"}
    full_kit = full_kit_outcomes(records, namespaces)
    kit_torch, kit = kit_outcomes(python, records, tmp_path)
    assert kit_torch.split("+")[0] == version
    compared = compared_count(full_kit)
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


def test_the_comparison_sees_a_kit_whose_expectations_moved(release_kit, tmp_path):
    # The control: the same comparison, with one exercise's stored expectations moved, finds its solved student.
    _, python, dist, _ = release_kit
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
                          kit_outcomes(python, records, tmp_path, index)[1])
    assert found and {label for label, *_ in found} == {f"solved/{exercise}"}, found[:5]


def test_a_torch_outside_the_range_stops_the_import_with_both_versions(release_kit, tmp_path):
    # A stand-in torch package earlier on the path: the kit's import reads its version before anything else.
    _, python, _, _ = release_kit
    above = SUPPORTED.below
    for outside in (f"{UNDER}.1", f"{above[0]}.{above[1]}.0+cu130"):
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


@pytest.mark.parametrize(("version", "admitted"), [(OLDEST, True), (f"{NEWEST}+cu132", True), (f"{NEWEST}+cpu", True),
                                                   (f"{UNDER}.1", False), (f"{ABOVE}.0", False), ("3.0.0", False),
                                                   (f"{ABOVE}.0.dev20260101", False), ("unknown", False)])
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
