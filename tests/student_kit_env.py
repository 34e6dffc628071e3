"""A fresh venv holding the built student kit and nothing of the project (shared by the venv and browser tests)."""

import fcntl
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.integrations.student_kit.build import build_wheel
from devtools.kit_torch_matrix import clean_environment, uv_install

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "student-kit.md"


@dataclass(frozen=True)
class KitVenv:
    python: Path  # the venv's interpreter
    package: Path  # the installed kit's autograder/ folder
    scratch: Path  # a folder outside the checkout to run it from


def documented_install(language):
    """The install line docs/student-kit.md shows in its one ```{language} block that runs pip."""
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    # A console block shows its commands after a "$ " prompt: the command is what follows it.
    lines = [line.removeprefix("$ ") for block in blocks for line in block.splitlines() if "pip install" in line]
    assert len(lines) == 1, f"docs/student-kit.md: {len(lines)} pip lines in ```{language} blocks"
    return lines[0]


def run_documented(command, python, cwd):
    """Run a documented shell line as a learner's terminal does (bash: the wheel's glob expands), with the venv's
    bin/ first on PATH as in an activated venv; its output."""
    environment = {**clean_environment(), "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    completed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=environment, cwd=cwd)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout + completed.stderr


def install(python, requirements, cwd):
    """Install `requirements` into the venv of `python` with uv, which unpacks each wheel once into its cache and
    links it from there: torch in seconds where pip unpacks gigabytes every run (devtools.kit_torch_matrix)."""
    uv_install(python, requirements, cwd)


def installed_version(python, distribution):
    return subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({distribution!r}))"],
                          check=True, capture_output=True, text=True, env=clean_environment()).stdout.strip()


def shared_kit_venv(run_temp, scratch):
    """The kit venv of this test run, made under run_temp by the first process that asks (the others wait on a lock
    and reuse it: a venv with torch costs minutes and gigabytes), with `scratch` as its scratch folder. A build that
    failed leaves no record, so the next asker builds anew in a folder of its own."""
    record = run_temp / "student-kit-venv.json"
    with open(run_temp / "student-kit-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            python, package = make_kit_venv(Path(tempfile.mkdtemp(prefix="student-kit-", dir=run_temp)))
            record.write_text(json.dumps({"python": str(python), "package": str(package)}))
        paths = json.loads(record.read_text())
    return KitVenv(Path(paths["python"]), Path(paths["package"]), scratch)


def make_kit_venv(root):
    """Build the kit's wheel into root/dist (python -m build), create root/venv (no system site-packages), install
    with uv torch 2.13.0 and numpy (constraints.txt pins torch; no matplotlib: the kit draws its pictures as SVG
    text) and ipykernel (the version of this venv, for a Jupyter kernel), then the kit with docs/student-kit.md's
    terminal line, run as written from the wheel's folder: it must keep that torch. (The venv's python, the
    installed kit's autograder/ folder.)"""
    dist = root / "dist"
    build_wheel(dist)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    environment = clean_environment()
    ipykernel = f"ipykernel=={importlib.metadata.version('ipykernel')}"
    install(python, ["-c", str(REPO / "constraints.txt"), "torch==2.13.0", "numpy", ipykernel], root)
    output = run_documented(documented_install("console"), python, dist)
    assert installed_version(python, "torch").split("+")[0] == "2.13.0", output  # 2.13.0+cpu: the disk's build
    package = subprocess.run([str(python), "-c", "import autograder, os; print(os.path.dirname(autograder.__file__))"],
                             check=True, capture_output=True, text=True, env=environment, cwd=root).stdout.strip()
    return python, Path(package)
