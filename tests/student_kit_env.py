"""A fresh venv holding the built student kit and nothing of the project (shared by the venv and browser tests)."""

import importlib.metadata
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.integrations.student_kit.build import build

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class KitVenv:
    python: Path  # the venv's interpreter
    package: Path  # the installed kit's autograder/ folder
    scratch: Path  # a folder outside the checkout to run it from


def clean_environment():
    """os.environ without what could point an interpreter at the project (PYTHONPATH, an active venv)."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def make_kit_venv(root):
    """Build the kit into root/kit, create root/venv (no system site-packages), install torch and numpy
    (constraints.txt pins torch; no matplotlib: the kit draws its pictures as SVG text) and ipykernel (the version of
    this venv, for a Jupyter kernel), then the kit."""
    build(root / "kit")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    environment = clean_environment()
    ipykernel = f"ipykernel=={importlib.metadata.version('ipykernel')}"
    subprocess.run([*pip, "-c", str(REPO / "constraints.txt"), "torch==2.13.0", "numpy", ipykernel],
                   check=True, env=environment, cwd=root)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", str(root / "kit")], check=True, env=environment,
                   cwd=root)
    package = subprocess.run([str(python), "-c", "import autograder, os; print(os.path.dirname(autograder.__file__))"],
                             check=True, capture_output=True, text=True, env=environment, cwd=root).stdout.strip()
    scratch = root / "scratch"
    scratch.mkdir()
    return KitVenv(python, Path(package), scratch)
